// libFuzzer target for the launcher protocol's frame reader (rte/protocol.hpp), which ftrun runs on
// whatever connects to its port before authentication, and ranks on what ftrun sends;
// rte_frames_corpus_replay runs the same function over the corpus.
//
// Any bytes, read as a stream with every frame type allowed: each message that comes out re-encodes to
// exactly the bytes it was read from, and the reader either needs more bytes or refuses (malformed, or a
// hello of another protocol version). A violation aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_rule.hpp"
#include "ftmpi/rte/agent_protocol.hpp"
#include "ftmpi/rte/protocol.hpp"

using namespace ftmpi::rte;

namespace {

constexpr auto& kEveryType = kEveryMsgType;

[[noreturn]] void violated(const char* rule, std::string_view detail) { ftmpi::fuzz::violated("rte_frames_fuzz", rule, detail); }

// The host-agent link: every message re-encodes to the bytes it came from.
void agent_frames(std::string_view bytes) {
  AgentFrameReader reader(kEveryAgentMsgType);
  reader.append(bytes);
  std::size_t consumed = 0;
  for (;;) {
    auto next = reader.next();
    if (!next) {
      if (next.code() != ftmpi::base::Errc::malformed) violated("an agent frame refused but not malformed", next.status().message());
      return;
    }
    if (!next->has_value()) break;
    const std::string again = encode(**next);
    if (bytes.substr(consumed, again.size()) != again) violated("an agent message re-encodes to other bytes", again);
    consumed += again.size();
  }
  if (consumed + reader.buffered() != bytes.size()) violated("agent bytes lost between messages", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  agent_frames(bytes);
  FrameReader reader(kEveryType);
  reader.append(bytes);
  std::size_t consumed = 0;
  for (;;) {
    auto next = reader.next();
    if (!next) {
      if (next.code() != ftmpi::base::Errc::malformed && next.code() != ftmpi::base::Errc::unsupported_version) {
        violated("a refusal that is neither malformed nor another version", next.status().message());
      }
      return 0;
    }
    if (!next->has_value()) break;
    const std::string again = encode(**next);
    if (bytes.substr(consumed, again.size()) != again) violated("a message re-encodes to other bytes", again);
    consumed += again.size();
  }
  if (consumed + reader.buffered() != bytes.size()) violated("bytes lost between messages", "");
  return 0;
}
