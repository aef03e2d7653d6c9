// libFuzzer target for the control request decoder (rte/control.hpp), which runs in ftrun on whatever a
// local process writes to a job's socket, and again in every rank; control_corpus_replay runs the same
// function over the corpus.
//
// Any bytes: parse_control_request refuses them with a message starting "control request: ", or gives a
// request whose canonical line parses back to the same request. A violation aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_rule.hpp"
#include "ftmpi/rte/control.hpp"

namespace {

[[noreturn]] void violated(const char* rule, std::string_view detail) { ftmpi::fuzz::violated("control_fuzz", rule, detail); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  const auto request = ftmpi::rte::parse_control_request(line);
  if (!request) {
    if (!request.status().message().starts_with("control request: ")) {
      violated("a refusal that does not say what it refuses", request.status().message());
    }
    return 0;
  }
  const std::string canonical = ftmpi::rte::to_string(*request);
  const auto again = ftmpi::rte::parse_control_request(canonical);
  if (!again) violated("the canonical line does not parse", again.status().message() + " in " + canonical);
  if (!(*again == *request)) violated("the canonical line parses to another request", canonical);
  return 0;
}
