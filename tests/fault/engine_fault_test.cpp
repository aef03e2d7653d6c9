// The engine under faults, N ranks in one process (docs/architecture.md, "Tests"): every rank's rails are
// loop networks (or real UDP sockets on loopback) wrapped in FaultPath with a seeded plan. Every test checks
// that every byte arrived once, intact, in MPI order, and that the engine's counters saw what the plan did.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_core.hpp"
#include "ftmpi/frag/wire.hpp"
#include "ftmpi/path/fault.hpp"
#include "ftmpi/path/loop.hpp"
#include "ftmpi/path/udp.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi;
using namespace ftmpi::engine;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kJobKey = 0xfa17'0000'1234'5678ULL;

// What the engine's abort does in these tests: unwinds to the test (the engine never returns from it).
}  // namespace

namespace ftmpi::engine {
std::ostream& operator<<(std::ostream& out, RailState state) { return out << to_string(state); }
}  // namespace ftmpi::engine

namespace {

struct JobAborted {
  int code;
  std::string message;
};

struct RailSpec {
  std::size_t mtu = 4096;
  std::string faults;  // a fault plan for this rail, applied by every rank
};

struct World {
  std::vector<std::unique_ptr<path::LoopNetwork>> networks;  // one per rail
  std::vector<std::unique_ptr<EngineCore>> ranks;
  std::vector<std::vector<path::FaultPath*>> faults;  // [rank][rail]

  World(std::uint32_t n, EngineConfig config, const std::vector<RailSpec>& rails, std::uint64_t seed) {
    std::vector<std::vector<std::unique_ptr<path::Path>>> inner(n);
    for (const RailSpec& rail : rails) {
      networks.push_back(std::make_unique<path::LoopNetwork>(n, path::LoopOptions{rail.mtu, false}));
      for (std::uint32_t r = 0; r < n; ++r) inner[r].push_back(std::make_unique<path::LoopPath>(*networks.back(), r));
    }
    build(std::move(inner), config, rails, seed);
  }

  // Over paths the caller made, inner[rank][rail] (rails[k].mtu unused).
  World(std::vector<std::vector<std::unique_ptr<path::Path>>> inner, EngineConfig config,
        const std::vector<RailSpec>& rails, std::uint64_t seed) {
    build(std::move(inner), config, rails, seed);
  }

  void build(std::vector<std::vector<std::unique_ptr<path::Path>>> inner, EngineConfig config,
             const std::vector<RailSpec>& rails, std::uint64_t seed) {
    const auto n = static_cast<std::uint32_t>(inner.size());
    for (std::uint32_t r = 0; r < n; ++r) {
      std::vector<std::unique_ptr<path::Path>> paths;
      faults.emplace_back();
      for (std::size_t k = 0; k < rails.size(); ++k) {
        auto plan = path::parse_fault_plan(rails[k].faults);
        BOOST_REQUIRE_MESSAGE(plan, plan.status().to_string());
        for (auto& spec : *plan) spec.seed = seed + k;  // the printed seed replays the run
        path::FaultOptions options;
        options.stream = r;
        auto wrapped = std::make_unique<path::FaultPath>(std::move(inner[r][k]), std::move(*plan), options);
        faults.back().push_back(wrapped.get());
        paths.push_back(std::move(wrapped));
      }
      Environment env;
      env.abort = [](int code, std::string_view message) { throw JobAborted{code, std::string(message)}; };
      ranks.push_back(std::make_unique<EngineCore>(Identity{r, n, kJobKey}, config, std::move(paths), env));
    }
  }

  CommView world(std::uint32_t r) const { return CommView{0, static_cast<int>(r), static_cast<int>(ranks.size()), {}}; }

  // Steps every rank until done() holds; a generous wall-clock bound turns a hang into a failure.
  void run_until(const std::function<bool()>& done, std::chrono::seconds limit = 60s) {
    const auto deadline = Clock::now() + limit;
    while (!done()) {
      BOOST_REQUIRE_MESSAGE(Clock::now() < deadline, "no completion within " << limit.count() << " s");
      for (auto& r : ranks) r->progress();
    }
  }

  // Every fault plan off, on every rank and rail.
  void heal() {
    for (auto& rank : faults) {
      for (auto* f : rank) f->set_specs({});
    }
  }

  // Until nothing is left to resend anywhere.
  void drain() {
    run_until([&] {
      for (auto& r : ranks) {
        for (std::uint32_t p = 0; p < ranks.size(); ++p) {
          if (!r->peer(p).retained.empty()) return false;
        }
      }
      return true;
    });
  }

  std::uint64_t injected_corruptions() const {
    std::uint64_t n = 0;
    for (const auto& rank : faults) {
      for (const auto* f : rank) n += f->counters().corrupted;
    }
    return n;
  }
  std::uint64_t detected_corruptions() const {
    std::uint64_t n = 0;
    for (const auto& r : ranks) n += r->counters().dropped_malformed + r->counters().dropped_bad_payload;
    return n;
  }
};

// n ranks over real UDP sockets, one rail on 127.0.0.1 with frames of 63 KiB, receiving bulk payloads
// into place or not; `udp` gets each rank's UdpPath, for its counters.
std::vector<std::vector<std::unique_ptr<path::Path>>> udp_paths(std::uint32_t n, path::UdpPlace place,
                                                                 std::vector<path::UdpPath*>& udp) {
  auto rails = path::resolve_rails("127.0.0.1");
  BOOST_REQUIRE_MESSAGE(rails, rails.status().to_string());
  path::UdpOptions options{63 * 1024, 4 << 20, 8 << 20, n};
  options.place = place;
  std::vector<std::vector<std::unique_ptr<path::Path>>> inner(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    auto made = path::UdpPath::create(rails->at(0), options);
    BOOST_REQUIRE_MESSAGE(made, made.status().to_string());
    udp.push_back(made->get());
    inner[r].push_back(std::move(*made));
  }
  for (path::UdpPath* from : udp) {
    for (std::uint32_t r = 0; r < n; ++r) BOOST_REQUIRE(from->add_peer(r, udp[r]->local_endpoint()).is_ok());
  }
  return inner;
}

// A loop rail that receives the way UDP's long socket does when placing (FrameSink::place, the payload
// written into the span it returns, then on_frame_parts) for every frame, and that attacks what
// placement may overwrite: after each frame it offers a copy of it with its payload corrupted, as a late
// retransmission corrupted on the way would arrive. Where the engine accepted the first copy, that stale
// copy must be declined (its bytes were received); if it were placed, it would overwrite them.
class PlacingLoopPath final : public path::Path {
 public:
  PlacingLoopPath(path::LoopNetwork& network, path::Rank rank, std::uint64_t seed)
      : inner_(network, rank), adapter_(seed) {}
  const path::PathInfo& info() const noexcept override { return inner_.info(); }
  bool reaches(path::Rank peer) const noexcept override { return inner_.reaches(peer); }
  base::Status send(path::Rank peer, path::FrameWriter& frame) noexcept override { return inner_.send(peer, frame); }
  std::size_t poll(path::FrameSink& sink, std::size_t budget) noexcept override {
    adapter_.sink = &sink;
    return inner_.poll(adapter_, budget);
  }
  bool has_queued_frames() const noexcept override { return inner_.has_queued_frames(); }

  std::uint64_t placed() const noexcept { return adapter_.placed; }
  std::uint64_t stale_offered() const noexcept { return adapter_.stale_offered; }
  std::uint64_t stale_placed() const noexcept { return adapter_.stale_placed; }

 private:
  struct Adapter final : path::FrameSink {
    explicit Adapter(std::uint64_t seed) : random(seed) {}
    void on_frame(std::span<const std::byte> frame) noexcept override {
      deliver(frame);
      const std::size_t head = sink->place_header_size();
      if (head == 0 || frame.size() <= head) return;
      std::vector<std::byte> stale(frame.begin(), frame.end());
      stale[head + random() % (stale.size() - head)] ^= std::byte{0x5a};
      ++stale_offered;
      stale_placed += deliver(stale) ? 1 : 0;
    }
    bool deliver(std::span<const std::byte> frame) noexcept {
      const std::size_t head = sink->place_header_size();
      if (head != 0 && frame.size() > head) {
        const std::span<std::byte> into = sink->place(frame.first(head), frame.size());
        if (into.size() == frame.size() - head) {
          std::memcpy(into.data(), frame.data() + head, into.size());
          ++placed;
          sink->on_frame_parts(frame.first(head), into);
          return true;
        }
      }
      sink->on_frame(frame);
      return false;
    }
    path::FrameSink* sink = nullptr;
    std::mt19937_64 random;
    std::uint64_t placed = 0;
    std::uint64_t stale_offered = 0;
    std::uint64_t stale_placed = 0;
  };
  path::LoopPath inner_;
  Adapter adapter_;
};

// Short timers, so that a test sees many timeouts, failovers and failbacks in little time.
EngineConfig fault_config() {
  EngineConfig c = EngineConfig::defaults();
  c.retransmit_min = 500us;
  c.retransmit_max = 20ms;
  c.ack_delay = 50us;
  c.rail_down_after = 30ms;
  c.probe_min = 5ms;
  c.probe_max = 50ms;
  return c;
}

std::vector<std::byte> pattern(std::size_t n, std::uint64_t salt) {
  std::vector<std::byte> v(n);
  std::uint64_t x = salt * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  return v;
}

// Messages of these sizes from `from` to `to`, all with one tag, receives posted first: MPI order means
// message i lands in receive i. Checks every byte, then that the receiver delivered exactly the byte
// sequence the sender used (nothing lost, nothing twice). `midway` runs once the receiver has a quarter
// of the bytes (a rail dies mid-message).
void exchange_and_verify(World& w, std::uint32_t from, std::uint32_t to, const std::vector<std::size_t>& sizes,
                         const std::function<void()>& midway = {}) {
  std::vector<std::vector<std::byte>> sent, got;
  std::vector<Request*> sends, recvs;
  std::size_t total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    sent.push_back(pattern(sizes[i], i + 1 + 1000 * from));
    got.emplace_back(sizes[i], std::byte{0xEE});
    total += sizes[i];
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    recvs.push_back(w.ranks[to]->irecv(w.world(to), got[i].data(), got[i].size(), static_cast<int>(from), 7));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    sends.push_back(w.ranks[from]->isend(w.world(from), sent[i].data(), sent[i].size(), static_cast<int>(to), 7,
                                         SendMode::standard));
  }
  auto all_done = [&] {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (!w.ranks[from]->is_complete(sends[i], nullptr) || !w.ranks[to]->is_complete(recvs[i], nullptr)) {
        return false;
      }
    }
    return true;
  };
  if (midway) {
    w.run_until([&] { return all_done() || w.ranks[to]->peer(from).in.lids() > total / 4; });
    midway();
  }
  w.run_until(all_done);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Completion c;
    BOOST_REQUIRE(w.ranks[to]->is_complete(recvs[i], &c));
    BOOST_TEST(c.source == static_cast<int>(from));
    BOOST_TEST(c.bytes == sizes[i]);
    BOOST_TEST(!c.truncated);
    BOOST_TEST((got[i] == sent[i]), "message " << i << " (" << sizes[i] << " bytes) differs");
    w.ranks[from]->release(sends[i]);
    w.ranks[to]->release(recvs[i]);
  }
  w.drain();
  BOOST_TEST(w.ranks[to]->peer(from).in.lids() == w.ranks[from]->peer(to).out.next_byte() - 1);
  BOOST_TEST(w.ranks[to]->peer(from).in.lirs() == w.ranks[from]->peer(to).out.next_byte() - 1);
}

std::vector<std::size_t> random_sizes(std::mt19937_64& rng, int count, std::size_t max) {
  std::vector<std::size_t> sizes;
  for (int i = 0; i < count; ++i) sizes.push_back(std::uniform_int_distribution<std::size_t>(0, max)(rng));
  return sizes;
}

// Both directions at once, so ACKs ride on data and both streams suffer the faults.
void exchange_both_ways(World& w, std::uint64_t seed, int count, std::size_t max) {
  std::mt19937_64 rng(seed);
  exchange_and_verify(w, 0, 1, random_sizes(rng, count, max));
  exchange_and_verify(w, 1, 0, random_sizes(rng, count, max));
}

// Rank 1 posts a receive from rank 0 with `tag` for each message of `sent` (already sent), waits for
// them all and checks every byte.
void receive_and_verify(World& w, const std::vector<std::vector<std::byte>>& sent, int tag) {
  std::vector<std::vector<std::byte>> got;
  std::vector<Request*> recvs;
  for (const auto& m : sent) {
    got.emplace_back(m.size());
    recvs.push_back(w.ranks[1]->irecv(w.world(1), got.back().data(), got.back().size(), 0, tag));
  }
  w.run_until([&] {
    for (Request* r : recvs) {
      if (!w.ranks[1]->is_complete(r, nullptr)) return false;
    }
    return true;
  });
  for (std::size_t i = 0; i < got.size(); ++i) BOOST_TEST((got[i] == sent[i]), "message " << i << " differs");
  for (Request* r : recvs) w.ranks[1]->release(r);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engine_faults)

BOOST_AUTO_TEST_CASE(every_byte_arrives_once_in_order_at_1_10_and_30_percent_loss) {
  for (const char* drop : {"0.01", "0.1", "0.3"}) {
    const std::uint64_t seed = test::seed_for(std::string("loss ") + drop);
    BOOST_TEST_CONTEXT("drop=" << drop << " seed " << seed) {
      // ~2,000 frames each way: even at 1% loss, a run without a single loss is a 1-in-10^8 event.
      World w(2, fault_config(), {{4096, std::string("drop=") + drop}}, seed);
      exchange_both_ways(w, seed, 60, 120'000);
      BOOST_TEST(w.ranks[0]->counters().retransmits > 0u);
      BOOST_TEST(w.ranks[0]->counters().frames_by_reference > 0u);  // resent from the send buffers
      std::uint64_t dropped = w.faults[0][0]->counters().dropped + w.faults[1][0]->counters().dropped;
      BOOST_TEST(dropped > 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_corruption_at_1_and_10_percent_is_detected_and_repaired) {
  for (const char* corrupt : {"0.01", "0.1"}) {
    const std::uint64_t seed = test::seed_for(std::string("corruption ") + corrupt);
    BOOST_TEST_CONTEXT("corrupt=" << corrupt << " seed " << seed) {
      World w(2, fault_config(), {{4096, std::string("corrupt=") + corrupt}}, seed);
      exchange_both_ways(w, seed, 60, 120'000);
      // The last message can complete while a corrupt copy (a resend whose ACK was on its way) is still
      // in the network: no new faults, nothing left to resend, then every injected corruption must turn
      // up (counted at once, it failed once in a full ctest run: 270 detected of 271).
      w.heal();
      w.drain();
      w.run_until([&] { return w.detected_corruptions() >= w.injected_corruptions(); }, 10s);
      BOOST_TEST(w.injected_corruptions() > 0u);
      // A corrupted header fails its checksum (malformed), a corrupted payload its own: each is caught
      // exactly once.
      BOOST_TEST(w.detected_corruptions() == w.injected_corruptions());
    }
  }
}

BOOST_AUTO_TEST_CASE(duplicates_are_dropped_and_counted) {
  const std::uint64_t seed = test::seed_for("duplication");
  BOOST_TEST_CONTEXT("seed " << seed) {
    World w(2, fault_config(), {{4096, "dup=0.3"}}, seed);
    exchange_both_ways(w, seed, 30, 40'000);
    const std::uint64_t duplicated = w.faults[0][0]->counters().duplicated + w.faults[1][0]->counters().duplicated;
    BOOST_TEST(duplicated > 0u);
    // Duplicates of sequenced frames are counted; ACKs and probes carry no sequence and are idempotent.
    BOOST_TEST(w.ranks[0]->counters().duplicates + w.ranks[1]->counters().duplicates > 0u);
    BOOST_TEST(w.ranks[0]->counters().duplicates + w.ranks[1]->counters().duplicates <= duplicated);
  }
}

// Bulk payloads received by the kernel straight into the receive buffer (path.udp.place): corrupt copies
// land there too, before anyone checked them, and duplicates arrive after their bytes were delivered.
// Every byte must still come out right, every corruption be caught, and no received byte be overwritten.
BOOST_AUTO_TEST_CASE(over_udp_payloads_received_into_place_survive_corruption_and_duplication) {
  for (const path::UdpPlace place : {path::UdpPlace::on, path::UdpPlace::off}) {
    const bool placing = place == path::UdpPlace::on;
    const std::uint64_t seed = test::seed_for(placing ? "udp place on" : "udp place off");
    BOOST_TEST_CONTEXT("path.udp.place=" << (placing ? "on" : "off") << " seed " << seed) {
      std::vector<path::UdpPath*> udp;
      World w(udp_paths(2, place, udp), fault_config(), {{0, "corrupt=0.05,dup=0.05"}}, seed);
      std::mt19937_64 rng(seed);
      // Rendezvous messages (above the 63 KiB eager limit) of many frames, one of 6 MB, both ways.
      std::vector<std::size_t> sizes = random_sizes(rng, 8, 1'500'000);
      for (std::size_t& size : sizes) size += 70'000;
      sizes.push_back(6'000'000);
      exchange_and_verify(w, 0, 1, sizes);
      exchange_and_verify(w, 1, 0, random_sizes(rng, 6, 2'000'000));
      // The last message can complete while corrupt copies (duplicates, late resends) are still in the
      // sockets: no new faults, nothing left to resend, then every injected corruption must turn up.
      w.heal();
      w.drain();
      w.run_until([&] { return w.detected_corruptions() >= w.injected_corruptions(); }, 10s);
      const std::uint64_t placed = udp[0]->counters().long_socket.frames_placed +
                                   udp[1]->counters().long_socket.frames_placed;
      BOOST_TEST_MESSAGE("placed " << placed << " frames; corruptions injected " << w.injected_corruptions()
                                   << ", detected " << w.detected_corruptions());
      if (placing) {
        BOOST_TEST(placed > 200u);
      } else {
        BOOST_TEST(placed == 0u);
      }
      BOOST_TEST(w.injected_corruptions() > 0u);
      BOOST_TEST(w.ranks[0]->counters().dropped_bad_payload + w.ranks[1]->counters().dropped_bad_payload > 0u);
      BOOST_TEST(w.detected_corruptions() == w.injected_corruptions());
      BOOST_TEST(w.faults[0][0]->counters().duplicated + w.faults[1][0]->counters().duplicated > 0u);
      BOOST_TEST(w.ranks[0]->counters().duplicates + w.ranks[1]->counters().duplicates > 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(placement_never_overwrites_received_bytes_with_a_stale_corrupt_copy) {
  const std::uint64_t seed = test::seed_for("placement stale copies");
  BOOST_TEST_CONTEXT("seed " << seed) {
    path::LoopNetwork network(2, path::LoopOptions{4096, false});
    std::vector<std::vector<std::unique_ptr<path::Path>>> inner(2);
    std::vector<PlacingLoopPath*> placing;
    for (std::uint32_t r = 0; r < 2; ++r) {
      auto made = std::make_unique<PlacingLoopPath>(network, r, seed + 100 + r);
      placing.push_back(made.get());
      inner[r].push_back(std::move(made));
    }
    World w(std::move(inner), fault_config(), {{0, "corrupt=0.05,dup=0.05,reorder=0.05"}}, seed);
    std::mt19937_64 rng(seed);
    exchange_and_verify(w, 0, 1, random_sizes(rng, 16, 1'000'000));
    exchange_and_verify(w, 1, 0, random_sizes(rng, 16, 1'000'000));
    const std::uint64_t placed = placing[0]->placed() + placing[1]->placed();
    const std::uint64_t stale = placing[0]->stale_offered() + placing[1]->stale_offered();
    const std::uint64_t stale_placed = placing[0]->stale_placed() + placing[1]->stale_placed();
    BOOST_TEST_MESSAGE("placed " << placed << " frames (" << stale_placed << " of them stale copies of a frame "
                                 << "refused); stale corrupt copies offered " << stale);
    BOOST_TEST(placed > 2000u);
    // A stale copy is placed only where its first copy was refused (corrupt): its bytes never arrived.
    BOOST_TEST(stale_placed < stale / 10);
    // Every stale copy, placed or not, failed its checksum (or its header's) and was counted.
    const std::uint64_t detected = w.detected_corruptions();
    BOOST_TEST(detected >= stale);
  }
}

BOOST_AUTO_TEST_CASE(heavy_reordering_loses_nothing_and_keeps_mpi_order) {
  const std::uint64_t seed = test::seed_for("reordering");
  BOOST_TEST_CONTEXT("seed " << seed) {
    World w(3, fault_config(), {{4096, "reorder=0.5"}, {2048, "reorder=0.5,delay=200us"}}, seed);
    std::mt19937_64 rng(seed);
    exchange_and_verify(w, 0, 2, random_sizes(rng, 40, 30'000));
    exchange_and_verify(w, 1, 2, random_sizes(rng, 40, 30'000));
    std::uint64_t reordered = 0;
    for (auto& rank : w.faults) {
      for (auto* f : rank) reordered += f->counters().reordered;
    }
    BOOST_TEST(reordered > 0u);
  }
}

BOOST_AUTO_TEST_CASE(a_message_stripes_over_every_rail) {
  const std::uint64_t seed = test::seed_for("striping");
  EngineConfig config = fault_config();
  config.retransmit_min = config.retransmit_max = 30s;  // nothing is lost: no timer may move frames
  World w(2, config, {{4096, ""}, {4096, ""}}, seed);
  exchange_and_verify(w, 0, 1, {2'000'000});
  const Peer& p = w.ranks[0]->peer(1);
  BOOST_REQUIRE(p.rails.size() == 2u);
  // Equal rails: neither carries less than a third of the frames.
  const double a = static_cast<double>(p.rails[0].counters.frames_sent);
  const double b = static_cast<double>(p.rails[1].counters.frames_sent);
  BOOST_TEST(a > (a + b) / 3);
  BOOST_TEST(b > (a + b) / 3);
}

BOOST_AUTO_TEST_CASE(a_rail_that_dies_mid_message_fails_over_and_fails_back) {
  const std::uint64_t seed = test::seed_for("rail dies mid-message");
  BOOST_TEST_CONTEXT("seed " << seed) {
    // Rail 1 has the smaller frames: its frames need no re-cut, rail 0's (dying) must be cut again.
    World w(2, fault_config(), {{8192, "drop=0.01"}, {2048, "drop=0.01"}}, seed);
    exchange_and_verify(w, 0, 1, {3'000'000, 100, 500'000}, [&] {
      for (auto& rank : w.faults) rank[0]->set_specs({path::parse_fault_spec("blackhole").value()});
    });
    // Its frames moved to rail 1 at their first timeout. Rail 0 goes down once it stayed silent while
    // rail 1 kept answering, which takes traffic: keep some flowing until then.
    const Peer& p = w.ranks[0]->peer(1);
    const auto deadline = Clock::now() + 30s;
    while (p.rails[0].state != RailState::down) {
      BOOST_REQUIRE_MESSAGE(Clock::now() < deadline, "rail 0 is still " << p.rails[0].state);
      exchange_and_verify(w, 0, 1, {20'000});
    }
    BOOST_TEST(w.ranks[0]->counters().rails_down >= 1u);
    BOOST_TEST(p.rails[0].counters.rebound + p.rails[0].counters.timeouts > 0u);
    BOOST_TEST(w.ranks[0]->counters().frames_by_reference > 0u);  // streams kept by reference, rebound from there
    // The rail answers again: probes find it and it carries traffic again.
    w.heal();
    w.run_until([&] { return w.ranks[0]->peer(1).rails[0].state == RailState::up; });
    BOOST_TEST(w.ranks[0]->counters().rails_up >= 1u);
    const std::uint64_t before = p.rails[0].counters.frames_sent;
    exchange_and_verify(w, 0, 1, {1'000'000});
    BOOST_TEST(p.rails[0].counters.frames_sent > before);

    // The statistics snapshot tells the same story: rail 0 to rank 1 is up, and its recent changes
    // show it going down and coming back, each with its reason; its fault layer counted the blackhole.
    const EngineStats stats = w.ranks[0]->stats();
    BOOST_TEST(stats.rank == 0u);
    BOOST_TEST(stats.totals.rails_down == w.ranks[0]->counters().rails_down);
    const auto rail0 = std::find_if(stats.rails.begin(), stats.rails.end(),
                                    [](const RailStats& r) { return r.peer == 1 && r.index == 0; });
    BOOST_REQUIRE(rail0 != stats.rails.end());
    // In service as the engine has it: up, or suspect if a slow machine let a timer expire since.
    BOOST_TEST(rail0->state == p.rails[0].state);
    BOOST_TEST(!out_of_service(rail0->state), rail0->state);
    BOOST_TEST(rail0->counters.frames_sent == p.rails[0].counters.frames_sent);
    const auto went_down = std::find_if(rail0->changes.begin(), rail0->changes.end(),
                                        [](const RailChange& c) { return c.state == RailState::down; });
    BOOST_REQUIRE(went_down != rail0->changes.end());
    BOOST_TEST(went_down->reason.find("no answer for") != std::string::npos, went_down->reason);
    const auto back_up = std::find_if(went_down, rail0->changes.end(),
                                      [](const RailChange& c) { return c.state == RailState::up; });
    BOOST_REQUIRE(back_up != rail0->changes.end());
    BOOST_TEST(back_up->reason == "a probe was answered");
    BOOST_TEST((back_up->at >= went_down->at));
    std::uint64_t blackholed = 0;
    for (const PathStats& path : stats.paths) {
      for (const path::PathCounterGroup& g : path.groups) {
        for (const path::PathCounter& c : g.counters) {
          if (path.index == 0 && g.kind == "faults" && c.name == "blackholed") blackholed = c.value;
        }
      }
    }
    BOOST_TEST(blackholed > 0u);
  }
}

rte::ControlRequest rail_request(rte::ControlOp op, std::string rail, std::vector<std::uint32_t> peers = {}) {
  rte::ControlRequest r;
  r.op = op;
  r.rail = std::move(rail);
  r.peers = std::move(peers);
  return r;
}

// ftpath disable / enable as the engine carries them out (engine_control.cpp).
BOOST_AUTO_TEST_CASE(a_disabled_rail_carries_nothing_and_comes_back_when_enabled) {
  const std::uint64_t seed = test::seed_for("rail disabled and enabled");
  BOOST_TEST_CONTEXT("seed " << seed) {
    World w(2, fault_config(), {{8192, "drop=0.01"}, {8192, "drop=0.01"}}, seed);
    // Disabled mid-message on both ranks: its frames in flight move to rail 0, nothing lost or doubled.
    exchange_and_verify(w, 0, 1, {3'000'000}, [&] {
      for (auto& rank : w.ranks) {
        auto answer = rank->set_rail_service(rail_request(rte::ControlOp::disable, "1"));
        BOOST_TEST_REQUIRE(answer.is_ok(), answer.status().to_string());
        BOOST_TEST(answer->find(R"("changed":[{"peer":)") != std::string::npos, *answer);
      }
    });
    std::uint64_t rail1_sent[2];
    for (std::uint32_t r = 0; r < 2; ++r) {
      const Route& rail1 = w.ranks[r]->peer(1 - r).rails[1];
      BOOST_TEST(rail1.state == RailState::disabled);
      rail1_sent[r] = rail1.counters.frames_sent;
    }
    exchange_and_verify(w, 0, 1, {2'000'000, 100});
    exchange_and_verify(w, 1, 0, {500'000});
    for (std::uint32_t r = 0; r < 2; ++r) {
      BOOST_TEST(w.ranks[r]->peer(1 - r).rails[1].counters.frames_sent == rail1_sent[r], "rank " << r);
    }
    // The last rail in service may not be disabled; nothing changes then. (Its state is not always `up`:
    // with 1% of its frames dropped, a timeout may have left it suspect, or a slow machine's silence down,
    // and its probes answered later. The refusal must leave it as it was, and never disabled.)
    const RailState rail0_before = w.ranks[0]->peer(1).rails[0].state;
    auto refused = w.ranks[0]->set_rail_service(rail_request(rte::ControlOp::disable, "0"));
    BOOST_REQUIRE(!refused.is_ok());
    BOOST_TEST(refused.status().message().find("last working rail to rank 1; nothing was disabled") != std::string::npos,
               refused.status().message());
    BOOST_TEST(w.ranks[0]->peer(1).rails[0].state == rail0_before);
    BOOST_TEST(w.ranks[0]->peer(1).rails[0].state != RailState::disabled);
    // Disabling again changes nothing and says so.
    auto again = w.ranks[0]->set_rail_service(rail_request(rte::ControlOp::disable, "1"));
    BOOST_TEST_REQUIRE(again.is_ok());
    BOOST_TEST(again->find(R"("unchanged":[{"peer":1,"state":"disabled"}])") != std::string::npos, *again);
    // Enabled: probed, up, and striped over again; an enable is no failback.
    const std::uint64_t failbacks = w.ranks[0]->counters().rails_up;
    for (auto& rank : w.ranks) BOOST_TEST_REQUIRE(rank->set_rail_service(rail_request(rte::ControlOp::enable, "1")).is_ok());
    w.run_until([&] {
      return w.ranks[0]->peer(1).rails[1].state == RailState::up && w.ranks[1]->peer(0).rails[1].state == RailState::up;
    });
    BOOST_TEST(w.ranks[0]->counters().rails_up == failbacks);
    exchange_and_verify(w, 0, 1, {2'000'000});
    BOOST_TEST(w.ranks[0]->peer(1).rails[1].counters.frames_sent > rail1_sent[0]);
    // Unknown rails and peers the rail does not reach are refused with the reason.
    auto unknown = w.ranks[0]->set_rail_service(rail_request(rte::ControlOp::disable, "7"));
    BOOST_TEST(unknown.status().message().starts_with("no rail '7' (rails: 0 ("), unknown.status().message());
    auto nobody = w.ranks[0]->set_rail_service(rail_request(rte::ControlOp::disable, "1", {0}));
    BOOST_TEST(nobody.status().message().find("reaches none of the peers named") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(when_the_last_rail_in_service_fails_the_peer_is_lost_naming_the_disabled_rail) {
  const std::uint64_t seed = test::seed_for("last rail in service dies");
  EngineConfig config = fault_config();
  config.peer_timeout = 300ms;  // the last rail in service is declared down after this much silence
  World w(2, config, {{8192, ""}, {8192, ""}}, seed);
  exchange_and_verify(w, 0, 1, {100'000});
  for (auto& rank : w.ranks) BOOST_TEST_REQUIRE(rank->set_rail_service(rail_request(rte::ControlOp::disable, "1")).is_ok());
  for (auto& rank : w.faults) rank[0]->set_specs({path::parse_fault_spec("blackhole").value()});
  auto data = pattern(200'000, 9);
  std::vector<std::byte> got(data.size());
  w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 1);
  Request* send = w.ranks[0]->isend(w.world(0), data.data(), data.size(), 1, 1, SendMode::standard);
  Completion c;
  w.run_until([&] { return w.ranks[0]->is_complete(send, &c); }, 20s);
  BOOST_TEST(c.lost_peer == 1);  // the send failed: its peer is lost (MPIX_ERR_PROC_FAILED above)
  const std::string message = w.ranks[0]->lost_reason(1);
  BOOST_TEST(message.find("no rail left to rank") != std::string::npos, message);
  BOOST_TEST(message.find("disabled for") != std::string::npos, message);
  BOOST_TEST(message.find("until ftpath enable") != std::string::npos, message);
}

// A path whose sends the operating system refuses with a rail-severity error (what UdpPath returns for
// ENETUNREACH or EPERM): every send while `broken`, and else every `refuse_every`-th one (0: none).
class Refusing final : public path::Path {
 public:
  explicit Refusing(std::unique_ptr<path::Path> inner) : inner_(std::move(inner)) {}
  const path::PathInfo& info() const noexcept override { return inner_->info(); }
  bool reaches(path::Rank peer) const noexcept override { return inner_->reaches(peer); }
  base::Status send(path::Rank peer, path::FrameWriter& frame) noexcept override {
    ++sends;
    if (broken || (refuse_every != 0 && sends % refuse_every == 0)) {
      ++refused;
      return base::Status(base::Errc::rail_down, "sendto: Operation not permitted");
    }
    return inner_->send(peer, frame);
  }
  std::size_t poll(path::FrameSink& sink, std::size_t budget) noexcept override { return inner_->poll(sink, budget); }
  bool has_queued_frames() const noexcept override { return inner_->has_queued_frames(); }
  bool broken = false;
  std::uint64_t refuse_every = 0;
  std::uint64_t sends = 0;
  std::uint64_t refused = 0;

 private:
  std::unique_ptr<path::Path> inner_;
};

// Two ranks over two in-process rails, rail 0 of each wrapped in Refusing (rail 1 too with `both`:
// breakable[2 * rank + rail] then).
struct RefusingWorld {
  explicit RefusingWorld(const EngineConfig& config, bool both = false) {
    for (std::uint32_t r = 0; r < 2; ++r) {
      std::vector<std::unique_ptr<path::Path>> paths;
      auto refusing = std::make_unique<Refusing>(std::make_unique<path::LoopPath>(rail0, r));
      breakable.push_back(refusing.get());
      paths.push_back(std::move(refusing));
      if (both) {
        auto second = std::make_unique<Refusing>(std::make_unique<path::LoopPath>(rail1, r));
        breakable.push_back(second.get());
        paths.push_back(std::move(second));
      } else {
        paths.push_back(std::make_unique<path::LoopPath>(rail1, r));
      }
      Environment env;
      env.abort = [](int code, std::string_view message) { throw JobAborted{code, std::string(message)}; };
      ranks.push_back(std::make_unique<EngineCore>(Identity{r, 2, kJobKey}, config, std::move(paths), env));
    }
  }
  // Sends `data` from rank 0 to rank 1 and checks it arrived whole.
  void transfer(const std::vector<std::byte>& data, int tag) {
    std::vector<std::byte> got(data.size());
    CommView w0{0, 0, 2, {}}, w1{0, 1, 2, {}};
    Request* r = ranks[1]->irecv(w1, got.data(), got.size(), 0, tag);
    Request* s = ranks[0]->isend(w0, data.data(), data.size(), 1, tag, SendMode::standard);
    const auto start = Clock::now();
    while (!ranks[0]->is_complete(s, nullptr) || !ranks[1]->is_complete(r, nullptr)) {
      BOOST_REQUIRE(Clock::now() - start < 10s);
      for (auto& e : ranks) e->progress();
    }
    BOOST_TEST((got == data));
  }
  path::LoopNetwork rail0{2, {4096, false}}, rail1{2, {4096, false}};
  std::vector<std::unique_ptr<EngineCore>> ranks;
  std::vector<Refusing*> breakable;
};

BOOST_AUTO_TEST_CASE(an_operating_system_error_takes_a_rail_down_at_once) {
  // A rail whose every send is refused (a link down) is down without waiting for timeouts.
  EngineConfig config = fault_config();
  config.rail_down_after = 10s;  // silence alone would take far longer than this test
  RefusingWorld w(config);
  for (auto* b : w.breakable) b->broken = true;
  w.transfer(pattern(1'000'000, 5), 1);
  BOOST_TEST(w.ranks[0]->peer(1).rails[0].state == RailState::down);
  BOOST_TEST(w.ranks[0]->peer(1).rails[0].counters.timeouts == 0u);  // no timer was needed
  // The send and the two probes after it were refused: three in a row take a rail down.
  BOOST_TEST(w.ranks[0]->peer(1).rails[0].counters.refused_sends >= 3u);
  const RailChange& last = w.ranks[0]->peer(1).rails[0].changes.back();
  BOOST_TEST(last.state == RailState::down);
  BOOST_TEST(last.reason.find("Operation not permitted") != std::string::npos, last.reason);
}

// Every rail refuses every send (the host's links went down) while a stream, eager sends and a receive
// are under way: the last refusal loses the peer from inside a send, with the engine still walking the
// peer's frames and streams. Its state is torn down afterwards, from the progress loop, and every
// operation fails cleanly (this used to free what the send was using, under ASan's eyes now).
BOOST_AUTO_TEST_CASE(losing_a_peer_from_inside_a_refused_send_fails_its_operations_cleanly) {
  EngineConfig config = fault_config();
  config.rail_down_after = 10s;  // refusals, not silence, take the rails down
  RefusingWorld w(config, /*both=*/true);
  w.transfer(pattern(100'000, 3), 1);  // healthy first
  for (auto* b : w.breakable) b->broken = true;
  CommView w0{0, 0, 2, {}};
  const auto big = pattern(1'000'000, 4), small = pattern(100, 5);
  std::vector<std::byte> into(1000);
  std::vector<Request*> ops;
  ops.push_back(w.ranks[0]->isend(w0, big.data(), big.size(), 1, 2, SendMode::standard));
  ops.push_back(w.ranks[0]->isend(w0, small.data(), small.size(), 1, 3, SendMode::synchronous));
  ops.push_back(w.ranks[0]->irecv(w0, into.data(), into.size(), 1, 4));
  const auto start = Clock::now();
  const auto all_done = [&] {
    return std::all_of(ops.begin(), ops.end(), [&](Request* q) { return w.ranks[0]->is_complete(q, nullptr); });
  };
  while (!all_done()) {
    BOOST_REQUIRE(Clock::now() - start < 10s);
    for (auto& e : w.ranks) e->progress();
  }
  for (Request* q : ops) {
    Completion c;
    BOOST_REQUIRE(w.ranks[0]->is_complete(q, &c));
    BOOST_TEST(c.lost_peer == 1);
    w.ranks[0]->release(q);
  }
  const Peer& peer = w.ranks[0]->peer(1);
  BOOST_TEST(peer.retained.empty());
  BOOST_TEST(w.ranks[0]->counters().peers_lost == 1u);
  BOOST_TEST(w.ranks[0]->lost_reason(1).find("Operation not permitted") != std::string::npos,
             w.ranks[0]->lost_reason(1));
  // Later sends fail at once, and progress goes on without touching the lost peer.
  Request* again = w.ranks[0]->isend(w0, big.data(), big.size(), 1, 5, SendMode::standard);
  Completion c;
  BOOST_TEST_REQUIRE(w.ranks[0]->is_complete(again, &c));
  BOOST_TEST(c.lost_peer == 1);
  w.ranks[0]->release(again);
  for (int i = 0; i < 100; ++i) w.ranks[0]->progress();
}

// The same in the middle of a stream: the rails refuse once the receiver's CTS has come, so the peer is
// lost from inside the loop that pushes the stream out.
BOOST_AUTO_TEST_CASE(losing_a_peer_in_the_middle_of_a_stream_fails_it_cleanly) {
  EngineConfig config = fault_config();
  config.rail_down_after = 10s;
  config.window = 64 * 1024;  // the stream waits for ACKs, so it is still going when the rails break
  RefusingWorld w(config, /*both=*/true);
  CommView w0{0, 0, 2, {}}, w1{0, 1, 2, {}};
  const auto big = pattern(4'000'000, 6);
  std::vector<std::byte> got(big.size());
  Request* r = w.ranks[1]->irecv(w1, got.data(), got.size(), 0, 1);
  Request* s = w.ranks[0]->isend(w0, big.data(), big.size(), 1, 1, SendMode::standard);
  const auto start = Clock::now();
  while (s->send_state != SendState::streaming) {
    BOOST_REQUIRE(Clock::now() - start < 10s);
    for (auto& e : w.ranks) e->progress();
  }
  BOOST_REQUIRE(!w.ranks[0]->is_complete(s, nullptr));
  w.breakable[0]->broken = w.breakable[1]->broken = true;  // rank 0's two rails
  Completion c;
  while (!w.ranks[0]->is_complete(s, &c)) {
    BOOST_REQUIRE(Clock::now() - start < 20s);
    for (auto& e : w.ranks) e->progress();
  }
  BOOST_TEST(c.lost_peer == 1);
  BOOST_TEST(w.ranks[0]->peer(1).retained.empty());
  w.ranks[0]->release(s);
  w.ranks[1]->cancel(r);
  for (int i = 0; i < 100; ++i) w.ranks[0]->progress();
}

BOOST_AUTO_TEST_CASE(a_rail_that_refuses_some_sends_is_not_taken_down) {
  // A firewall rule that drops a share of packets refuses exactly those (EPERM). Each refused frame goes
  // out again on the other rail, the rail turns suspect and a probe brings it back; it never goes down
  // (it used to, at every refusal: hundreds of down/up flaps in the nft-loss drill).
  EngineConfig config = fault_config();
  config.rail_down_after = 10s;  // only refusals could take it down here
  RefusingWorld w(config);
  for (auto* b : w.breakable) b->refuse_every = 20;
  // Until each side has had a good number of its sends refused (a suspect rail carries no data until a
  // probe brings it back, so this takes some rounds).
  for (int round = 0; w.breakable[0]->refused < 20 || w.breakable[1]->refused < 20; ++round) {
    BOOST_REQUIRE(round < 5000);
    w.transfer(pattern(100'000, 20 + round), 10 + round % 1000);
  }
  for (std::uint32_t r = 0; r < 2; ++r) {
    const Route& rail0 = w.ranks[r]->peer(1 - r).rails[0];
    BOOST_TEST_CONTEXT("rank " << r) {
      BOOST_TEST(w.ranks[r]->counters().rails_down == 0u);
      BOOST_TEST(rail0.state != RailState::down);
      BOOST_TEST(rail0.counters.state_changes >= 2u);  // suspect, then up again
      BOOST_TEST(rail0.counters.probe_replies > 0u);
    }
  }
  // It came back to carry data after each refusal: far more frames than probes went through it.
  const std::uint64_t probes = w.ranks[0]->peer(1).rails[0].counters.probes_sent;
  BOOST_TEST(w.breakable[0]->sends - probes > 10 * w.breakable[0]->refused);
}

BOOST_AUTO_TEST_CASE(the_last_rail_dying_loses_the_peer_naming_it_and_every_rail) {
  const std::uint64_t seed = test::seed_for("last rail dies");
  EngineConfig config = fault_config();
  config.peer_timeout = 300ms;
  World w(2, config, {{4096, ""}, {4096, ""}}, seed);
  exchange_and_verify(w, 0, 1, {100'000});  // healthy first
  for (auto& rank : w.faults) {
    for (auto* f : rank) f->set_specs({path::parse_fault_spec("blackhole").value()});
  }
  auto data = pattern(200'000, 9);
  std::vector<std::byte> got(data.size());
  w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 1);
  Request* send = w.ranks[0]->isend(w.world(0), data.data(), data.size(), 1, 1, SendMode::standard);
  Completion c;
  w.run_until([&] { return w.ranks[0]->is_complete(send, &c); }, 20s);
  BOOST_TEST(c.lost_peer == 1);
  const std::string message = w.ranks[0]->lost_reason(1);
  BOOST_TEST_MESSAGE("why rank 1 is lost: " << message);
  BOOST_TEST(message.find("no rail left to rank") != std::string::npos);
  BOOST_TEST(message.find("loop") != std::string::npos);
  BOOST_TEST(message.find("down") != std::string::npos);
}

// A receiver busy computing must not be flooded (issue 4). Two cases, one rail, nothing lost:
// it polls (other MPI calls) but posts no receive for a while: its ACKs say it holds the frames (LIRS),
// so the sender resends nothing, however long it waits; it does not poll at all: nothing is ACKed, and
// the copies come at the backed-off rate (each attempt doubles the timeout up to engine.retransmit.max),
// not once per engine.retransmit.min.
BOOST_AUTO_TEST_CASE(a_receiver_that_polls_but_posts_no_receive_gets_no_copies) {
  const std::uint64_t seed = test::seed_for("busy receiver polling");
  BOOST_TEST_CONTEXT("seed " << seed) {
    World w(2, fault_config(), {{4096, ""}}, seed);
    std::vector<std::vector<std::byte>> sent;
    std::vector<Request*> sends;
    for (int i = 0; i < 20; ++i) {
      sent.push_back(pattern(2000, 50 + static_cast<std::uint64_t>(i)));
      sends.push_back(w.ranks[0]->isend(w.world(0), sent.back().data(), sent.back().size(), 1, 3, SendMode::standard));
    }
    // Until rank 1's ACKs cover every frame (LIRS), a timer may fire for good reason (this thread can
    // be descheduled for longer than engine.retransmit.min on a loaded machine); from then on, nothing
    // may be resent.
    const auto& to_rank1 = w.ranks[0]->peer(1);
    w.run_until([&] { return to_rank1.acked_lirs + 1 == to_rank1.out.next_byte(); });
    const std::uint64_t resent_before = w.ranks[0]->counters().retransmits;
    // Both ranks progress for 800 ms, forty times engine.retransmit.max here; rank 1 has no receive
    // posted, so nothing is delivered and LIDS stays behind while LIRS covers every frame.
    const auto until = Clock::now() + 800ms;
    while (Clock::now() < until) {
      for (auto& r : w.ranks) r->progress();
    }
    BOOST_TEST(!to_rank1.retained.empty());  // kept: not delivered yet
    BOOST_TEST(w.ranks[0]->counters().retransmits == resent_before);
    receive_and_verify(w, sent, 3);
    w.drain();
    BOOST_TEST(w.ranks[0]->counters().retransmits == resent_before);
    for (Request* r : sends) w.ranks[0]->release(r);
  }
}

BOOST_AUTO_TEST_CASE(a_receiver_that_does_not_poll_gets_copies_only_at_the_backed_off_rate) {
  const std::uint64_t seed = test::seed_for("busy receiver not polling");
  BOOST_TEST_CONTEXT("seed " << seed) {
    const EngineConfig config = fault_config();  // timeouts from 500 us, doubling up to 20 ms
    World w(2, config, {{4096, ""}}, seed);
    constexpr int kFrames = 5;
    std::vector<std::vector<std::byte>> sent;
    std::vector<Request*> sends;
    for (int i = 0; i < kFrames; ++i) {
      sent.push_back(pattern(1000, 70 + static_cast<std::uint64_t>(i)));
      sends.push_back(w.ranks[0]->isend(w.world(0), sent.back().data(), sent.back().size(), 1, 4, SendMode::standard));
    }
    // Only the sender runs, for 300 ms.
    constexpr auto kBusy = 300ms;
    const auto until = Clock::now() + kBusy;
    while (Clock::now() < until) w.ranks[0]->progress();
    // Per frame: the doubling timeouts until the cap (500 us x 2^6 > 20 ms: at most 6 of them), then one
    // per cap, plus one for the rounding at each end. Resending at the floor would be 600 per frame.
    const std::uint64_t doublings = 6;
    const auto per_cap = static_cast<std::uint64_t>(kBusy / config.retransmit_max);
    const std::uint64_t bound = kFrames * (doublings + per_cap + 2);
    const std::uint64_t resent = w.ranks[0]->counters().retransmits;
    BOOST_TEST(resent > 0u);  // it did time out: the receiver said nothing
    BOOST_TEST(resent <= bound, resent << " copies in " << kBusy.count() << " ms, at most " << bound << " expected");
    // The receiver comes back: everything arrives once, intact (duplicates dropped).
    receive_and_verify(w, sent, 4);
    w.drain();
    BOOST_TEST(w.ranks[1]->peer(0).in.lids() == w.ranks[0]->peer(1).out.next_byte() - 1);
    for (Request* r : sends) w.ranks[0]->release(r);
  }
}

BOOST_AUTO_TEST_SUITE_END()
