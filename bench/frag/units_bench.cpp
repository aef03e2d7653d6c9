// The CPU units a CRC32C can run on, and what each allows: the carry-less multiply (VPCLMULQDQ, which the
// folding kernels, ISA-L's included, are bound by) and the crc32 instruction (the sse4.2 engine's lanes).
// For each: instructions retired per cycle with enough independent chains to fill the unit, the latency of
// one chain, and the CRC32C bytes a cycle that rate allows (a 64x64-bit product folds 8 bytes; crc32 takes
// 8). Cycles are counted by a dependent chain of adds (one cycle each on every x86-64), so the clock is the
// one the core runs at here, turbo and all; GB/s are that clock times the bytes a cycle.
// A row with both units' instructions in one loop shows whether they share a port.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "ftmpi/bench/harness.hpp"
#include "sections.hpp"

namespace ftmpi::bench {
namespace {

#if defined(__x86_64__)

// Each body runs `n` iterations of one asm block; the blocks write only the registers they name.
void adds(std::uint64_t n) {
  std::uint64_t x = 0;
  for (std::uint64_t i = 0; i < n; ++i) asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
  keep(x);
}

#define FTMPI_CLMUL12(R)                                                                                   \
  "vpclmulqdq $0, %%" R "15, %%" R "0, %%" R "0\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "1, %%" R "1\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "2, %%" R "2\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "3, %%" R "3\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "4, %%" R "4\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "5, %%" R "5\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "6, %%" R "6\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "7, %%" R "7\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "8, %%" R "8\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "9, %%" R "9\n\t"                                                     \
  "vpclmulqdq $0, %%" R "15, %%" R "10, %%" R "10\n\t"                                                   \
  "vpclmulqdq $0, %%" R "15, %%" R "11, %%" R "11\n\t"
#define FTMPI_VECTORS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11"

// The VEX form, as the others: AVX is needed for it even at 128 bits.
[[gnu::target("avx,pclmul")]] void clmul_xmm(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) asm volatile(FTMPI_CLMUL12("xmm")::: FTMPI_VECTORS);
}
[[gnu::target("avx2,vpclmulqdq")]] void clmul_ymm(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) asm volatile(FTMPI_CLMUL12("ymm")::: FTMPI_VECTORS);
  asm volatile("vzeroupper");
}
[[gnu::target("avx512f,vpclmulqdq")]] void clmul_zmm(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) asm volatile(FTMPI_CLMUL12("zmm")::: FTMPI_VECTORS);
  asm volatile("vzeroupper");
}
[[gnu::target("avx512f,vpclmulqdq")]] void clmul_zmm_chain(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) asm volatile("vpclmulqdq $0, %%zmm15, %%zmm0, %%zmm0" ::: "xmm0");
  asm volatile("vzeroupper");
}

#define FTMPI_CRC8                                                                                         \
  "crc32q %%r8, %%r9\n\tcrc32q %%r8, %%r10\n\tcrc32q %%r8, %%r11\n\tcrc32q %%r8, %%r12\n\t"               \
  "crc32q %%r8, %%r13\n\tcrc32q %%r8, %%r14\n\tcrc32q %%r8, %%r15\n\tcrc32q %%r8, %%rbx\n\t"
#define FTMPI_GPRS "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rbx"

[[gnu::target("sse4.2")]] void crc32_lanes(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) asm volatile(FTMPI_CRC8::: FTMPI_GPRS);
}
[[gnu::target("sse4.2")]] void crc32_chain(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) asm volatile("crc32q %%r8, %%r9" ::: "r9");
}
// 12 zmm carry-less multiplies (24 cycles at half a one a cycle) beside 24 crc32s.
[[gnu::target("avx512f,vpclmulqdq,sse4.2")]] void both_units(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i)
    asm volatile(FTMPI_CLMUL12("zmm") FTMPI_CRC8 FTMPI_CRC8 FTMPI_CRC8::: FTMPI_VECTORS, FTMPI_GPRS);
  asm volatile("vzeroupper");
}

double ns_per_iteration(void (*body)(std::uint64_t)) { return measure(body, 1.0).ns_per_op; }

#endif

}  // namespace

void run_units_bench() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const double ns_per_cycle = ns_per_iteration(adds) / 4.0;
  const double ghz = 1.0 / ns_per_cycle;
  Table table({"instruction", "chains", "per cycle", "latency (cycles)", "CRC32C bytes a cycle", "GB/s at this clock"});
  const auto row = [&](const char* name, void (*lanes)(std::uint64_t), int chains, double bytes_each,
                       void (*chain)(std::uint64_t)) {
    const double per_cycle = chains * ns_per_cycle / ns_per_iteration(lanes);
    const std::string latency = chain != nullptr ? fixed(ns_per_iteration(chain) / ns_per_cycle, 1) : "";
    table.add_row({name, std::to_string(chains), fixed(per_cycle, 2), latency, fixed(per_cycle * bytes_each, 1),
                   fixed(per_cycle * bytes_each * ghz, 1)});
  };
  const bool clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx");
  const bool vclmul = clmul && __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx2");
  const bool zmm = vclmul && __builtin_cpu_supports("avx512f");
  const bool crc = __builtin_cpu_supports("sse4.2");
  if (clmul) row("VPCLMULQDQ xmm (one 64x64 product)", clmul_xmm, 12, 8.0 * 1, nullptr);
  if (vclmul) row("VPCLMULQDQ ymm (two)", clmul_ymm, 12, 8.0 * 2, nullptr);
  if (zmm) row("VPCLMULQDQ zmm (four)", clmul_zmm, 12, 8.0 * 4, clmul_zmm_chain);
  if (crc) row("CRC32 r64", crc32_lanes, 8, 8.0, crc32_chain);
  std::printf("## The CRC units (clock %.2f GHz, from a dependent chain of adds)\n\n", ghz);
  table.print();
  if (zmm && crc) {
    // Alone, 12 multiplies take 24 cycles at half one a cycle and 24 crc32s 12 at two; together in one loop.
    const double cycles = ns_per_iteration(both_units) / ns_per_cycle;
    const double clmul_alone = ns_per_iteration(clmul_zmm) / ns_per_cycle;
    const double crc_alone = 3 * ns_per_iteration(crc32_lanes) / ns_per_cycle;
    std::printf("\n12 VPCLMULQDQ zmm and 24 CRC32 in one loop: %.1f cycles an iteration (%.1f and %.1f alone)\n",
                cycles, clmul_alone, crc_alone);
  }
  std::printf("\n");
#else
  std::printf("## The CRC units: x86-64 only\n\n");
#endif
}

}  // namespace ftmpi::bench
