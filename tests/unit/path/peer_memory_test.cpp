#include <boost/test/unit_test.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "ftmpi/path/peer_memory.hpp"
#include "test_support.hpp"

using namespace ftmpi;
using namespace ftmpi::path;
using ftmpi::path::test::run_children;

namespace {

std::byte expected_byte(std::size_t i) { return static_cast<std::byte>((i * 131) ^ (i >> 9)); }

bool mentions(const base::Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(peer_memory)

BOOST_AUTO_TEST_CASE(child_reads_what_the_parent_wrote_after_fork) {
  // The parent writes the pattern after fork(), so the child's own copy-on-write copy still holds zeros
  // and only a read of the parent's memory can see it. Odd length and offset exercise unaligned ends.
  constexpr std::size_t kLen = (3 << 20) + 4093;
  std::vector<std::byte> buffer(kLen + 64);
  std::byte* data = buffer.data() + 5;
  int go[2];
  BOOST_REQUIRE(::pipe(go) == 0);
  const pid_t parent = ::getpid();
  const auto failures = run_children(
      1,
      [&](int) -> std::string {
        ::close(go[1]);
        char token = 0;
        if (::read(go[0], &token, 1) != 1) return "no go signal from the parent";
        std::vector<std::byte> copy(kLen);
        auto read = read_peer_memory(parent, reinterpret_cast<std::uintptr_t>(data), copy.data(), kLen);
        if (!read) return read.status().to_string();
        if (*read != kLen) return "read " + std::to_string(*read) + " bytes";
        for (std::size_t i = 0; i < kLen; ++i) {
          if (copy[i] != expected_byte(i)) return "byte " + std::to_string(i) + " differs";
        }
        return "";
      },
      [&] {
        ::close(go[0]);
        for (std::size_t i = 0; i < kLen; ++i) data[i] = expected_byte(i);
        const char token = 1;
        BOOST_TEST(::write(go[1], &token, 1) == 1);
        ::close(go[1]);
      });
  BOOST_TEST(failures.empty());
  for (const std::string& failure : failures) BOOST_ERROR(failure);
  BOOST_TEST(ftmpi::path::test::no_children_left());
}

BOOST_AUTO_TEST_CASE(probe_succeeds_against_a_live_peer_and_fails_at_a_wrong_address) {
  const pid_t parent = ::getpid();
  const auto failures = run_children(1, [&](int) -> std::string {
        // Same binary, same address after fork: the parent's probe word is where ours is.
        if (base::Status s = probe_single_copy(parent, single_copy_probe_address()); !s) return s.to_string();
        std::uint64_t unrelated = 0;
        if (probe_single_copy(parent, reinterpret_cast<std::uintptr_t>(&unrelated)).is_ok()) {
          return "probe at a wrong address succeeded";
        }
        return "";
      });
  BOOST_TEST(failures.empty());
  for (const std::string& failure : failures) BOOST_ERROR(failure);
  BOOST_TEST(ftmpi::path::test::no_children_left());
}

BOOST_AUTO_TEST_CASE(scattered_read_fills_many_blocks_in_order) {
  // More blocks than one system call takes (1,024), of uneven sizes, some empty, with gaps between them
  // that must stay untouched: a receive into a derived datatype's pieces.
  constexpr std::size_t kBlocks = 3000;
  std::vector<std::size_t> sizes(kBlocks);
  std::size_t total = 0;
  for (std::size_t i = 0; i < kBlocks; ++i) total += sizes[i] = (i * 7919) % 41;  // 0 to 40 bytes
  std::vector<std::byte> source(total);
  for (std::size_t i = 0; i < total; ++i) source[i] = expected_byte(i);
  std::vector<std::byte> local(total + 3 * kBlocks, std::byte{0xEE});
  std::vector<::iovec> blocks;
  std::size_t at = 0;
  for (std::size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back({local.data() + at, sizes[i]});
    at += sizes[i] + 3;
  }
  auto read = read_peer_memory_scattered(::getpid(), reinterpret_cast<std::uintptr_t>(source.data()), blocks);
  BOOST_REQUIRE_MESSAGE(read.is_ok(), read.status().to_string());
  BOOST_TEST(*read == total);
  std::size_t from = 0;
  at = 0;
  bool same = true;
  for (std::size_t i = 0; i < kBlocks; ++i) {
    for (std::size_t k = 0; k < sizes[i]; ++k) same = same && local[at + k] == source[from + k];
    for (std::size_t k = 0; k < 3; ++k) same = same && local[at + sizes[i] + k] == std::byte{0xEE};
    from += sizes[i];
    at += sizes[i] + 3;
  }
  BOOST_TEST(same);
}

// Several remote blocks into several local ones in one call, in order, whatever their sizes; the call
// stops at a remote block it cannot copy and says how far it got, and fails only when nothing moved.
BOOST_AUTO_TEST_CASE(a_gathering_read_moves_remote_blocks_into_local_ones_in_order) {
  constexpr std::size_t kLen = 3 * 65536 + 777;
  std::vector<std::byte> source(kLen);
  for (std::size_t i = 0; i < kLen; ++i) source[i] = expected_byte(i);
  // Remote: three blocks out of order in `source` (the third message first); local: three other sizes.
  const auto at = [&](std::size_t offset) { return static_cast<void*>(source.data() + offset); };
  const std::array<::iovec, 3> remote{{{at(2 * 65536), 65536 + 777}, {at(0), 65536}, {at(65536), 65536}}};
  std::vector<std::byte> local(kLen + 8, std::byte{0xEE});
  const std::array<::iovec, 3> into{{{local.data(), 1000}, {local.data() + 1000, 100'000},
                                     {local.data() + 101'000, kLen - 101'000}}};
  auto read = read_peer_memory_gather(::getpid(), remote, into);
  BOOST_REQUIRE_MESSAGE(read.is_ok(), read.status().to_string());
  BOOST_TEST(*read == kLen);
  bool same = true;
  std::size_t out = 0;
  for (const ::iovec& block : remote) {
    const auto* from = static_cast<const std::byte*>(block.iov_base);
    for (std::size_t k = 0; k < block.iov_len; ++k) same = same && local[out + k] == from[k];
    out += block.iov_len;
  }
  BOOST_TEST(same);
  BOOST_TEST((local[kLen] == std::byte{0xEE}));  // nothing past the local blocks

  // A remote block that is not mapped, after one that is: the first one's bytes, and no error.
  const std::array<::iovec, 2> then_unmapped{{{at(0), 4096}, {reinterpret_cast<void*>(16), 4096}}};
  const std::array<::iovec, 1> into_one{{{local.data(), 8192}}};
  auto partial = read_peer_memory_gather(::getpid(), then_unmapped, into_one);
  BOOST_REQUIRE_MESSAGE(partial.is_ok(), partial.status().to_string());
  BOOST_TEST(*partial == 4096u);
  // The unmapped one first: nothing moved, and why.
  const std::array<::iovec, 1> unmapped{{{reinterpret_cast<void*>(16), 4096}}};
  auto none = read_peer_memory_gather(::getpid(), unmapped, into_one);
  BOOST_TEST((none.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(none.status(), "bad address"));
  auto nobody = read_peer_memory_gather(INT_MAX, remote, into);
  BOOST_TEST((nobody.code() == base::Errc::peer_unreachable));
  // More blocks than one call takes: refused, not cut silently.
  std::vector<::iovec> many(kMaxGatherBlocks + 1, ::iovec{at(0), 1});
  std::vector<::iovec> many_into(kMaxGatherBlocks + 1, ::iovec{local.data(), 1});
  auto too_many = read_peer_memory_gather(::getpid(), many, many_into);
  BOOST_TEST((too_many.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(too_many.status(), "too many"));
}

// The split copy's other half: a child writes into its parent's memory (process_vm_writev); the
// parent's own pages, not the child's copy-on-write copies, must hold the pattern afterwards.
BOOST_AUTO_TEST_CASE(child_writes_into_the_parents_memory) {
  constexpr std::size_t kLen = (1 << 20) + 4093;
  std::vector<std::byte> buffer(kLen + 64, std::byte{0xEE});
  std::byte* data = buffer.data() + 5;
  const pid_t parent = ::getpid();
  const auto failures = run_children(
      1,
      [&](int) -> std::string {
        std::vector<std::byte> pattern(kLen);
        for (std::size_t i = 0; i < kLen; ++i) pattern[i] = expected_byte(i);
        auto written = write_peer_memory(parent, reinterpret_cast<std::uintptr_t>(data), pattern.data(), kLen);
        if (!written) return written.status().to_string();
        if (*written != kLen) return "wrote " + std::to_string(*written) + " bytes";
        return "";
      },
      [] {});
  BOOST_TEST(failures.empty());
  for (const std::string& failure : failures) BOOST_ERROR(failure);
  bool same = true;
  for (std::size_t i = 0; i < kLen; ++i) same = same && data[i] == expected_byte(i);
  BOOST_TEST(same);
  BOOST_TEST((buffer[4] == std::byte{0xEE} && data[kLen] == std::byte{0xEE}));  // nothing outside it

  std::vector<std::byte> local(64, std::byte{1});
  auto unmapped = write_peer_memory(::getpid(), 16, local.data(), local.size());
  BOOST_TEST((unmapped.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(unmapped.status(), "writing 64 bytes"));
  auto nobody = write_peer_memory(INT_MAX, reinterpret_cast<std::uintptr_t>(buffer.data()), local.data(), 8);
  BOOST_TEST((nobody.code() == base::Errc::peer_unreachable));
}

BOOST_AUTO_TEST_CASE(bad_addresses_and_missing_processes_fail_clearly) {
  std::vector<std::byte> local(4096);
  auto unmapped = read_peer_memory(::getpid(), 16, local.data(), local.size());
  BOOST_TEST((unmapped.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(unmapped.status(), "bad address"));

  // A range that runs off the end of a mapping: a partial read, then the fault.
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* pages = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  BOOST_REQUIRE(pages != MAP_FAILED);
  BOOST_REQUIRE(::munmap(static_cast<std::byte*>(pages) + page, page) == 0);
  std::vector<std::byte> two_pages(2 * page);
  auto tail = read_peer_memory(::getpid(), reinterpret_cast<std::uintptr_t>(pages), two_pages.data(), 2 * page);
  BOOST_TEST((tail.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(tail.status(), "(" + std::to_string(page) + " bytes moved before it)"), tail.status().message());
  ::munmap(pages, page);

  std::vector<std::byte> source(100, std::byte{7});

  auto nobody = read_peer_memory(INT_MAX, reinterpret_cast<std::uintptr_t>(source.data()), local.data(), 8);
  BOOST_TEST((nobody.code() == base::Errc::peer_unreachable));
  BOOST_TEST(mentions(nobody.status(), "no such process"));

  auto nothing = read_peer_memory(INT_MAX, 0, local.data(), 0);
  BOOST_TEST((nothing.is_ok() && *nothing == 0u));
}

BOOST_AUTO_TEST_SUITE_END()
