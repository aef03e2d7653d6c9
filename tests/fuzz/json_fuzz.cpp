// libFuzzer target for the JSON parser (json_value.hpp); json_corpus_replay runs the same function over the
// corpus.
//
// Any bytes: parse_json either refuses them with an invalid_argument that says "JSON: ...", or gives a value
// that, written back through JsonWriter, parses again to the same content and writes to the same text (a
// second write is a fixed point). A violation aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_rule.hpp"
#include "ftmpi/base/json_value.hpp"

namespace {

using namespace ftmpi::base;

[[noreturn]] void violated(const char* rule, std::string_view detail) { ftmpi::fuzz::violated("json_fuzz", rule, detail); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = parse_json(text);
  if (!parsed) {
    const Status status = parsed.status();
    if (status.code() != Errc::invalid_argument || !status.message().starts_with("JSON: ") ||
        status.message().find(" at offset ") == std::string::npos) {
      violated("a refusal of the wrong kind", status.to_string());
    }
    return 0;
  }
  const std::string written = to_json(*parsed);
  const auto again = parse_json(written);
  if (!again) violated("what the writer wrote does not parse", again.status().to_string() + " in " + written);
  if (!(*again == *parsed)) violated("what the writer wrote parses to other content", written);
  if (to_json(*again) != written) violated("writing again gives other text", written);
  return 0;
}
