// The host-agent link's frames (agent_protocol.hpp): what ftrun accepts from whatever connects to its
// agent listener, and what the agent accepts from ftrun.
#include "ftmpi/rte/agent_protocol.hpp"

#include <boost/test/unit_test.hpp>
#include <string>

#include "ftmpi/rte/protocol.hpp"

using namespace ftmpi::rte;
using ftmpi::base::Errc;

namespace {

std::string header(std::uint32_t length, std::uint8_t type) {
  std::string h;
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  h.push_back(static_cast<char>(type));
  return h;
}

// One whole frame read back with every type allowed.
AgentMessage round_trip(const AgentMessage& m) {
  AgentFrameReader reader(kEveryAgentMsgType);
  reader.append(encode(m));
  auto next = reader.next();
  BOOST_REQUIRE(next.is_ok());
  BOOST_REQUIRE(next->has_value());
  BOOST_TEST(reader.buffered() == 0u);
  return std::move(**next);
}

// Why `bytes` is refused by a reader allowing `allowed`; fails the test if it is not.
std::string refusal(std::span<const AgentMsgType> allowed, const std::string& bytes) {
  AgentFrameReader reader(allowed);
  reader.append(bytes);
  auto next = reader.next();
  BOOST_REQUIRE(!next.is_ok());
  BOOST_TEST((next.code() == Errc::malformed));
  return next.status().message();
}

Secret secret_of(std::uint8_t seed) {
  Secret s{};
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint8_t>(seed + i);
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(agent_protocol)

BOOST_AUTO_TEST_CASE(every_message_round_trips) {
  const auto hello = std::get<AgentHello>(round_trip(AgentHello{kAgentProtocolVersion, secret_of(3), "node-2"}));
  BOOST_TEST(hello.host == "node-2");
  BOOST_TEST((hello.secret == secret_of(3)));
  BOOST_TEST(std::get<ConnOpen>(round_trip(ConnOpen{7})).conn == 7u);
  const std::string binary("a\0b\xff", 4);
  const auto data = std::get<ConnData>(round_trip(ConnData{9, binary}));
  BOOST_TEST(data.conn == 9u);
  BOOST_TEST(data.bytes == binary);
  BOOST_TEST(std::get<ConnClose>(round_trip(ConnClose{9})).conn == 9u);
  const auto out = std::get<Output>(round_trip(Output{3, OutputStream::err, "line\n"}));
  BOOST_TEST(out.rank == 3u);
  BOOST_TEST((out.stream == OutputStream::err));
  BOOST_TEST(out.bytes == "line\n");
  BOOST_TEST(std::get<Output>(round_trip(Output{3, OutputStream::out, {}})).bytes.empty());  // EOF
  BOOST_TEST(std::get<RankStarted>(round_trip(RankStarted{2, 4242})).pid == 4242u);
  BOOST_TEST(std::get<RankExited>(round_trip(RankExited{2, -1})).status == -1);
  BOOST_TEST(std::get<StdinAck>(round_trip(StdinAck{65536})).bytes == 65536u);
  const auto launch = std::get<Launch>(
      round_trip(Launch{{"/bin/prog", "arg 1", ""}, {{2, {"FTMPI_RANK=2", "FTMPI_SIZE=4"}}, {3, {}}}}));
  BOOST_TEST((launch.argv == std::vector<std::string>{"/bin/prog", "arg 1", ""}));
  BOOST_REQUIRE(launch.ranks.size() == 2u);
  BOOST_TEST(launch.ranks[0].rank == 2u);
  BOOST_TEST((launch.ranks[0].environment == std::vector<std::string>{"FTMPI_RANK=2", "FTMPI_SIZE=4"}));
  BOOST_TEST(launch.ranks[1].environment.empty());
  BOOST_TEST(std::get<StdinData>(round_trip(StdinData{"input"})).bytes == "input");
  BOOST_TEST(std::get<SignalRank>(round_trip(SignalRank{5, 15})).signo == 15);
}

BOOST_AUTO_TEST_CASE(a_frame_arriving_byte_by_byte_is_read_once_whole) {
  const std::string frame = encode(Launch{{"/bin/true"}, {{0, {"FTMPI_RANK=0"}}}});
  AgentFrameReader reader(kLauncherToAgent);
  for (std::size_t i = 0; i + 1 < frame.size(); ++i) {
    reader.append(std::string_view(frame).substr(i, 1));
    auto next = reader.next();
    BOOST_REQUIRE(next.is_ok());
    BOOST_REQUIRE(!next->has_value());
  }
  reader.append(std::string_view(frame).substr(frame.size() - 1));
  auto next = reader.next();
  BOOST_REQUIRE(next.is_ok());
  BOOST_REQUIRE(next->has_value());
  BOOST_TEST(std::get<Launch>(**next).argv.front() == "/bin/true");
}

// A rank cannot pass for an agent, nor an agent for a rank: their hellos are not each other's types.
BOOST_AUTO_TEST_CASE(a_ranks_hello_is_no_agents_hello_and_the_reverse) {
  const std::string rank_hello = encode(Hello{kProtocolVersion, 0, 1, secret_of(1)});
  BOOST_TEST(refusal(kAgentHello, rank_hello) == "unknown frame type 1");
  FrameReader rank_reader(kRankHello);
  rank_reader.append(encode(AgentHello{kAgentProtocolVersion, secret_of(1), "node"}));
  auto refused = rank_reader.next();
  BOOST_REQUIRE(!refused.is_ok());
  BOOST_TEST(refused.status().message() == "unknown frame type 64");
}

BOOST_AUTO_TEST_CASE(only_a_hello_comes_first_and_each_side_takes_only_its_own_frames) {
  BOOST_TEST(refusal(kAgentHello, encode(ConnOpen{1})) == "unexpected conn_open frame");
  BOOST_TEST(refusal(kAgentToLauncher, encode(AgentHello{kAgentProtocolVersion, secret_of(1), "n"})) ==
             "unexpected agent_hello frame");
  BOOST_TEST(refusal(kAgentToLauncher, encode(SignalRank{0, 9})) == "unexpected signal frame");
  BOOST_TEST(refusal(kLauncherToAgent, encode(RankExited{0, 0})) == "unexpected rank_exited frame");
}

// The header alone refuses a length beyond the type's bound: nothing of the body is waited for.
BOOST_AUTO_TEST_CASE(an_oversized_frame_is_refused_from_its_header) {
  const std::string message = refusal(kAgentHello, header(100000, 64));
  BOOST_TEST(message.find("exceeds the bound") != std::string::npos, message);
  BOOST_TEST(refusal(kAgentToLauncher, header(4 + kMaxRelayChunk + 1, 66)).find("exceeds the bound") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(truncated_or_inconsistent_bodies_are_malformed) {
  // A hello whose host name is longer than its body.
  std::string hello = encode(AgentHello{kAgentProtocolVersion, secret_of(1), "node"});
  hello[0] = static_cast<char>(hello[0] - 2);
  hello.resize(hello.size() - 2);
  BOOST_TEST(refusal(kAgentHello, hello) == "agent_hello: truncated host name");
  // An empty host name.
  std::string nameless = header(2 + 32 + 2, 64) + std::string(2 + 32 + 2, '\0');
  nameless[5] = 1;
  BOOST_TEST(refusal(kAgentHello, nameless) == "agent_hello: host name length out of range");
  // Output on a third stream; conn_data without bytes; trailing bytes; a launch claiming more strings
  // than its body could hold.
  BOOST_TEST(refusal(kAgentToLauncher, header(5, 68) + std::string("\0\0\0\0\3", 5)) ==
             "output: stream 3 is not 1 or 2");
  BOOST_TEST(refusal(kAgentToLauncher, header(4, 66) + std::string(4, '\0')) == "conn_data: no bytes");
  std::string trailing = encode(AgentHello{kAgentProtocolVersion, secret_of(1), "n"}) + "x";
  trailing[0] = static_cast<char>(trailing[0] + 1);
  BOOST_TEST(refusal(kAgentHello, trailing) == "agent_hello: trailing bytes");
  BOOST_TEST(refusal(kLauncherToAgent, header(4, 80) + std::string("\xff\xff\xff\x7f", 4)) ==
             "launch: truncated or inconsistent");
  BOOST_TEST(refusal(kLauncherToAgent, header(4, 80) + std::string(4, '\0')) ==
             "launch: truncated or inconsistent");  // no program
}

// A frame cut short stays buffered: the reader asks for more, and the owner sees bytes left at EOF.
BOOST_AUTO_TEST_CASE(a_truncated_frame_waits_and_is_seen_at_eof) {
  const std::string frame = encode(AgentHello{kAgentProtocolVersion, secret_of(1), "node"});
  AgentFrameReader reader(kAgentHello);
  reader.append(std::string_view(frame).substr(0, frame.size() - 1));
  auto next = reader.next();
  BOOST_REQUIRE(next.is_ok());
  BOOST_TEST(!next->has_value());
  BOOST_TEST(reader.buffered() == frame.size() - 1);
}

BOOST_AUTO_TEST_SUITE_END()
