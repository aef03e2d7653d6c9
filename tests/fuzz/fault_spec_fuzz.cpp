// libFuzzer target for the fault-SPEC language (path/fault.hpp), which ftrun --fault, --fault-plan and
// (next) ftinject take from operators; fault_spec_corpus_replay runs the same function over the corpus.
//
// Any text as a plan: refused with a message naming its origin ("fuzz line N: "), or specs each of whose
// canonical text parses back to the same spec. A violation aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_rule.hpp"
#include "ftmpi/path/fault.hpp"

namespace {

[[noreturn]] void violated(const char* rule, std::string_view detail) { ftmpi::fuzz::violated("fault_spec_fuzz", rule, detail); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto plan = ftmpi::path::parse_fault_plan(text, "fuzz");
  if (!plan) {
    if (!plan.status().message().starts_with("fuzz line ")) {
      violated("a refusal that does not say where", plan.status().message());
    }
    return 0;
  }
  for (const ftmpi::path::FaultSpec& spec : *plan) {
    const std::string canonical = ftmpi::path::to_string(spec);
    const auto again = ftmpi::path::parse_fault_spec(canonical);
    if (!again) violated("the canonical text does not parse", again.status().message() + " in " + canonical);
    if (!(*again == spec)) violated("the canonical text parses to another spec", canonical);
  }
  return 0;
}
