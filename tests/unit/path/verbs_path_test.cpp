// The verbs UD path over the emulated device: two ranks in one process, each with its own context.
#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/registry.hpp"
#include "verbs/emulated_device.hpp"
#include "verbs/verbs_path.hpp"

using namespace ftmpi::path;
using namespace ftmpi::path::verbs;
using ftmpi::base::Errc;

namespace {

constexpr std::uint32_t kQkey = 0x1234567;

VerbsOptions options(std::size_t recv_buffers = 64, std::size_t send_buffers = 32) {
  VerbsOptions o;
  o.device = "emulated";
  o.recv_buffers = recv_buffers;
  o.send_buffers = send_buffers;
  o.send_qps = 4;
  o.qkey = kQkey;
  o.peers = 2;
  return o;
}

std::unique_ptr<VerbsPath> open_path(const VerbsOptions& o, EmulatedConfig config = {}) {
  configure_emulated_verbs(config);
  auto path = VerbsPath::open(emulated_verbs(), o);
  BOOST_REQUIRE_MESSAGE(path.is_ok(), path.status().to_string());
  return std::move(*path);
}

// Ranks 0 and 1, each knowing the other and itself.
struct Pair {
  std::unique_ptr<VerbsPath> a;
  std::unique_ptr<VerbsPath> b;
  explicit Pair(const VerbsOptions& o = options(), EmulatedConfig ca = {}, EmulatedConfig cb = {})
      : a(open_path(o, ca)), b(open_path(o, cb)) {
    for (VerbsPath* p : {a.get(), b.get()}) {
      BOOST_REQUIRE(p->add_peer(0, a->address()).is_ok());
      BOOST_REQUIRE(p->add_peer(1, b->address()).is_ok());
    }
  }
};

class Bytes final : public FrameWriter {
 public:
  explicit Bytes(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  std::size_t frame_size() const noexcept override { return bytes_.size(); }
  void write(std::span<std::byte> room) noexcept override { std::memcpy(room.data(), bytes_.data(), bytes_.size()); }

 private:
  std::vector<std::byte> bytes_;
};

std::vector<std::byte> frame_of(std::size_t size, int salt) {
  std::vector<std::byte> f(size);
  for (std::size_t i = 0; i < size; ++i) f[i] = static_cast<std::byte>(i * 7 + static_cast<std::size_t>(salt));
  return f;
}

struct Collect final : public FrameSink {
  std::vector<std::vector<std::byte>> frames;
  void on_frame(std::span<const std::byte> frame) noexcept override { frames.emplace_back(frame.begin(), frame.end()); }
};

// Polls both until `want` frames reached `sink` at b, or a bounded number of rounds without progress.
void pump(Pair& p, Collect& sink, std::size_t want) {
  Collect ignore;
  std::size_t idle = 0;
  while (sink.frames.size() < want && idle < 100000) {
    const std::size_t before = sink.frames.size();
    p.a->poll(ignore, 64);
    p.b->poll(sink, 64);
    idle = sink.frames.size() == before ? idle + 1 : 0;
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verbs_path)

// Frames of every size in bursts the receive pool holds (a burst larger than the pool would lose
// datagrams, as UD does: the test below), byte for byte and in order.
BOOST_AUTO_TEST_CASE(frames_cross_byte_for_byte_in_order) {
  Pair p;
  BOOST_TEST(p.a->info().max_frame == 4096u - kGrhSize);
  BOOST_TEST(p.a->reaches(1));
  BOOST_TEST(p.a->info().name == "verbs emu0:1 127.0.0.1");
  const std::size_t sizes[] = {1, 48, 240, 1000, 4056, 3000, 17};
  Collect sink;
  for (int round = 0; round < 20; ++round) {
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      Bytes f(frame_of(sizes[i], round * 10 + static_cast<int>(i)));
      BOOST_REQUIRE(p.a->send(1, f).is_ok());
    }
    pump(p, sink, static_cast<std::size_t>(round + 1) * std::size(sizes));
  }
  BOOST_REQUIRE(sink.frames.size() == 20 * std::size(sizes));
  std::size_t k = 0;
  for (int round = 0; round < 20; ++round) {
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      BOOST_TEST((sink.frames[k++] == frame_of(sizes[i], round * 10 + static_cast<int>(i))));
    }
  }
  BOOST_TEST(p.a->counters().frames_sent == 20 * std::size(sizes));
}

BOOST_AUTO_TEST_CASE(a_frame_above_the_mtu_is_refused) {
  Pair p;
  Bytes f(frame_of(4096, 1));
  BOOST_TEST((p.a->send(1, f).code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(addresses_round_trip_and_bad_ones_are_refused) {
  Pair p;
  auto parsed = VerbsAddress::parse(p.a->address());
  BOOST_REQUIRE(parsed.is_ok());
  BOOST_TEST(parsed->to_string() == p.a->address());
  BOOST_TEST(parsed->recv_buffers == 64u);
  // The peer's pool of 64 shared among the job's 2 ranks.
  BOOST_TEST(p.a->frames_in_flight_limit(1) == 32u);
  const std::string good = p.a->address();
  for (const std::string& bad :
       {std::string(""), std::string("-"), good + ":1", good.substr(1), std::string(32, 'g') + ":0:5:1234567:4056:64",
        std::string(32, '0') + ":0:0:1234567:4056:64", std::string(32, '0') + ":0:5:1234567:4056:0",
        std::string(32, '0') + ":0:5:1234567:4056", std::string(32, '0') + ":0:5:1234567:99999:64",
        std::string(32, '0') + ":70000:5:1234567:4056:64"}) {
    BOOST_TEST(!VerbsAddress::parse(bad).is_ok(), "accepted '" << bad << "'");
    BOOST_TEST(!p.a->add_peer(1, bad).is_ok());
  }
  // Another job's QKey: refused.
  VerbsAddress other = *parsed;
  other.qkey = kQkey + 1;
  BOOST_TEST((p.a->add_peer(1, other.to_string()).code() == Errc::invalid_argument));
  BOOST_TEST((p.a->add_peer(7, good).code() == Errc::invalid_argument));
}

// Two send buffers for 50 frames: each is reused once its send completes (the emulated device completes
// a send when it is posted, so nothing waits in the path here), in order.
BOOST_AUTO_TEST_CASE(send_buffers_are_reused_as_sends_complete) {
  Pair p(options(256, 2));
  for (int i = 0; i < 50; ++i) {
    Bytes f(frame_of(100 + static_cast<std::size_t>(i), i));
    BOOST_REQUIRE(p.a->send(1, f).is_ok());
  }
  Collect sink;
  pump(p, sink, 50);
  BOOST_REQUIRE(sink.frames.size() == 50u);
  for (int i = 0; i < 50; ++i) BOOST_TEST((sink.frames[static_cast<std::size_t>(i)] == frame_of(100 + static_cast<std::size_t>(i), i)));
  BOOST_TEST(!p.a->has_queued_frames());
}

// A sender that outruns the receive pool loses datagrams (UD drops what finds no posted receive); once
// the receiver polls, its buffers are posted again and later frames arrive.
BOOST_AUTO_TEST_CASE(an_exhausted_receive_pool_drops_then_recovers) {
  Pair p(options(4, 64));
  for (int i = 0; i < 20; ++i) {
    Bytes f(frame_of(64, i));
    BOOST_REQUIRE(p.a->send(1, f).is_ok());
  }
  Collect sink;
  pump(p, sink, 20);
  BOOST_TEST(sink.frames.size() >= 4u);
  BOOST_TEST(sink.frames.size() < 20u);
  const std::size_t got = sink.frames.size();
  Bytes late(frame_of(64, 99));
  BOOST_REQUIRE(p.a->send(1, late).is_ok());
  pump(p, sink, got + 1);
  BOOST_REQUIRE(sink.frames.size() == got + 1);
  BOOST_TEST((sink.frames.back() == frame_of(64, 99)));
}

BOOST_AUTO_TEST_CASE(a_port_down_at_start_is_said) {
  EmulatedConfig down;
  down.port_down = true;
  configure_emulated_verbs(down);
  auto path = VerbsPath::open(emulated_verbs(), options());
  BOOST_REQUIRE(!path.is_ok());
  BOOST_TEST(path.status().message().find("not active") != std::string::npos, path.status().message());
  configure_emulated_verbs({});
}

// Sends a frame to rank 1 every round, polling between, until a send is refused (or 1000 rounds pass):
// what a port gone down does to the rail.
ftmpi::base::Status send_until_refused(Pair& p) {
  Collect ignore;
  ftmpi::base::Status last;
  for (int round = 0; round < 1000 && last.is_ok(); ++round) {
    p.a->poll(ignore, 64);
    Bytes f(frame_of(64, round));
    last = p.a->send(1, f);
  }
  return last;
}

// The port goes down after 3 sends: the next sends complete in error, and the rail reports rail_down.
BOOST_AUTO_TEST_CASE(a_port_that_goes_down_breaks_the_rail) {
  EmulatedConfig failing;
  failing.port_down_after_sends = 3;
  Pair p(options(), failing, {});
  for (int i = 0; i < 6; ++i) {
    Bytes f(frame_of(64, i));
    (void)p.a->send(1, f);
  }
  const ftmpi::base::Status last = send_until_refused(p);
  BOOST_TEST((last.code() == Errc::rail_down));
  BOOST_TEST(last.message().find("verbs") != std::string::npos, last.message());
}

// A port that went down (sends completing in error) and comes back: the rail works again, as the
// engine's probes would find (failback).
BOOST_AUTO_TEST_CASE(a_port_that_comes_back_brings_the_rail_back) {
  EmulatedConfig failing;
  failing.port_down_after_sends = 3;
  Pair p(options(), failing, {});
  ftmpi::base::Status last = send_until_refused(p);
  BOOST_REQUIRE((last.code() == Errc::rail_down));
  Collect ignore;
  BOOST_REQUIRE(set_emulated_port_state(p.a->context(), true));
  for (int round = 0; round < 1000 && !last.is_ok(); ++round) {
    p.a->poll(ignore, 64);
    Bytes f(frame_of(77, 5));
    last = p.a->send(1, f);
  }
  BOOST_REQUIRE_MESSAGE(last.is_ok(), last.to_string());
  Collect sink;
  std::size_t idle = 0;
  while (idle < 100000 && (sink.frames.empty() || sink.frames.back() != frame_of(77, 5))) {
    const std::size_t before = sink.frames.size();
    p.a->poll(ignore, 64);
    p.b->poll(sink, 64);
    idle = sink.frames.size() == before ? idle + 1 : 0;
  }
  BOOST_REQUIRE(!sink.frames.empty());
  BOOST_TEST((sink.frames.back() == frame_of(77, 5)));
}

BOOST_AUTO_TEST_CASE(no_device_is_said) {
  int count = 0;
  ibv_device** list = real_verbs().get_device_list(&count);
  if (list != nullptr) real_verbs().free_device_list(list);
  if (count > 0) return;  // a machine with an adapter: nothing to check here
  VerbsOptions o = options();
  o.device = "";
  auto path = VerbsPath::open(real_verbs(), o);
  BOOST_REQUIRE(!path.is_ok());
  BOOST_TEST(path.status().message().find("no verbs device") != std::string::npos, path.status().message());
}

BOOST_AUTO_TEST_SUITE_END()

// Through the registered driver: a peer's address that cannot be used is said and that peer is left to
// the job's other paths (connect does not fail the start-up); a good one is reached.
BOOST_AUTO_TEST_CASE(the_driver_leaves_out_a_peer_whose_address_is_bad) {
  ftmpi::base::ParamSet params;
  BOOST_REQUIRE(params.add_table(path_params()).is_ok());
  BOOST_REQUIRE(params.set("path.verbs.device", "emulated").is_ok());
  const Driver* driver = find_driver("verbs");
  BOOST_REQUIRE(driver != nullptr);
  JobView view;
  view.rank = 0;
  view.size = 3;
  view.local = {0, 1, 2};
  view.shm_prefix = "ftmpi-test-verbs-driver-";
  view.params = &params;
  auto opened = driver->open(view);
  BOOST_REQUIRE(opened.is_ok());
  Endpoint& endpoint = **opened;
  const std::string mine = endpoint.address();
  BOOST_TEST(VerbsAddress::parse(mine).is_ok(), mine);
  BOOST_TEST(endpoint.connect(0, mine).is_ok());
  BOOST_TEST(endpoint.connect(1, "not an address").is_ok());
  BOOST_TEST(endpoint.connect(2, "-").is_ok());
  auto paths = endpoint.take_paths();
  BOOST_REQUIRE(paths.size() == 1u);
  BOOST_REQUIRE(paths[0] != nullptr);
  BOOST_TEST(paths[0]->reaches(0));
  BOOST_TEST(!paths[0]->reaches(1));
  BOOST_TEST(!paths[0]->reaches(2));
}
