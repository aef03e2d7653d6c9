// Faults added to a running job and the flight recorder (ftinject; docs/ftinject.md): control requests
// inject, clear, faults and events, served from the progress loop like the others (engine_control.cpp),
// the traffic notes and the flight recorder's file.
//
// Each network rail has a fault layer from the start (start.cpp); inject adds a SPEC to the layers of the
// rails it names, clear empties them. A fault is refused where it would reach the application: a path
// with no fault layer (shared memory, unless reliability is forced on it), corruption without a payload
// checksum, and anything but delay with reliability off. Counts in `faults` are since the first
// injection at run time (or since the start when there was none): what this rank's layers injected into
// frames it sent, what it detected in frames it received (refused as malformed or corrupt), and what it
// resent.
#include <cstdio>

#include "engine_core.hpp"
#include "ftmpi/base/compress.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/base/json.hpp"

namespace ftmpi::engine {
namespace {

void write_fault_counters(base::JsonWriter& w, const path::FaultCounters& now, const path::FaultCounters& then) {
  w.begin_object()
      .field("frames_seen", now.frames_seen - then.frames_seen)
      .field("dropped", now.dropped - then.dropped)
      .field("corrupted", now.corrupted - then.corrupted)
      .field("duplicated", now.duplicated - then.duplicated)
      .field("reordered", now.reordered - then.reordered)
      .field("delayed", now.delayed - then.delayed)
      .field("blackholed", now.blackholed - then.blackholed)
      .end_object();
}

std::string_view spec_state_name(path::FaultPath::SpecState state) {
  switch (state) {
    case path::FaultPath::SpecState::waiting: return "waiting";
    case path::FaultPath::SpecState::active: return "active";
    case path::FaultPath::SpecState::ended: return "ended";
  }
  return "?";
}

}  // namespace

void EngineCore::set_fault_layers(std::vector<path::FaultPath*> layers) {
  layers.resize(paths_.size(), nullptr);
  fault_layers_ = std::move(layers);
}

EngineCore::PathBaseline EngineCore::path_totals(std::uint32_t path) const {
  PathBaseline totals;
  if (fault_layers_[path] != nullptr) totals.faults = fault_layers_[path]->counters();
  totals.refused = path_refused_[path];
  for (const Peer& peer : peers_) {
    for (const Route& route : peer.rails) {
      if (route.path_index != path) continue;
      totals.retransmits += route.counters.retransmits;
      totals.timeouts += route.counters.timeouts;
    }
  }
  return totals;
}

base::Result<std::vector<std::uint32_t>> EngineCore::fault_targets(std::string_view rail,
                                                                   const path::FaultSpec* spec) const {
  std::vector<std::uint32_t> targets;
  if (!rail.empty()) {
    auto found = find_rail(rail);
    if (!found) return found.status();
    targets.push_back(*found);
  } else {
    for (std::uint32_t i = 0; i < paths_.size(); ++i) {
      if (fault_layers_[i] != nullptr) targets.push_back(i);
    }
    if (targets.empty()) {
      return base::Status(base::Errc::unsupported,
                          "refused: this rank reaches its peers by shared memory only, which carries no checksum "
                          "and no retransmission unless the job runs with engine.reliability=force: a fault there "
                          "would reach the application; nothing was injected");
    }
  }
  for (std::uint32_t t : targets) {
    const std::string what = "rail " + std::to_string(t) + " (" + paths_[t]->info().name + ")";
    if (fault_layers_[t] == nullptr) {
      return base::Status(base::Errc::unsupported,
                          "refused: " + what + " is shared memory, which carries no checksum and no retransmission "
                          "unless the job runs with engine.reliability=force: a fault there would reach the "
                          "application; nothing was injected");
    }
    if (spec == nullptr) continue;
    const bool harms = spec->drop > 0 || spec->corrupt > 0 || spec->dup > 0 || spec->reorder > 0 || spec->blackhole;
    if (config_.reliability == Reliability::off && harms) {
      return base::Status(base::Errc::unsupported,
                          "refused: the job runs with engine.reliability=off, so nothing detects or repairs a lost, "
                          "duplicated, reordered or corrupted frame on " + what +
                              ": the fault would reach the application; nothing was injected");
    }
    if (spec->corrupt > 0 && config_.checksum == frag::ChecksumKind::none && !config_.payload_mac) {
      return base::Status(base::Errc::unsupported,
                          "refused: the job runs with engine.checksum=none, so a corrupted payload on " + what +
                              " reaches the application undetected; nothing was injected");
    }
  }
  return targets;
}

base::Result<std::string> EngineCore::inject_fault(const rte::ControlRequest& request) {
  auto spec = path::parse_fault_spec(request.spec);
  if (!spec) return spec.status();
  std::string rail = request.rail;
  if (!spec->rail.empty()) {
    if (!rail.empty() && rail != spec->rail) {
      return base::Status(base::Errc::invalid_argument, "the request names rail '" + rail + "' and its SPEC rail '" +
                                                            spec->rail + "'; give one");
    }
    rail = spec->rail;
  }
  auto targets = fault_targets(rail, &*spec);
  if (!targets) return targets.status();
  if (!injected_since_) {  // the drill's counts start here
    injected_since_ = std::chrono::system_clock::now();
    baseline_.clear();
    for (std::uint32_t i = 0; i < paths_.size(); ++i) baseline_.push_back(path_totals(i));
  }
  path::FaultSpec installed = *spec;
  installed.rail.clear();  // a layer's specs are already its own
  base::JsonWriter w;
  w.begin_object().field("rank", id_.rank).field("spec", path::to_string(*spec)).key("rails").begin_array();
  for (std::uint32_t t : *targets) {
    fault_layers_[t]->add_specs({installed});
    w.begin_object().field("index", t).field("name", paths_[t]->info().name).end_object();
  }
  w.end_array().end_object();
  FlightEvent event;
  event.at = std::chrono::system_clock::now();
  event.kind = FlightKind::inject;
  event.rail = rail.empty() ? kEveryRail : targets->front();
  event.text = path::to_string(installed);
  record_flight(std::move(event));
  base::logger().info("fault injected by the operator: {} on {}", path::to_string(*spec),
                      rail.empty() ? std::string("every rail") : "rail " + std::to_string(targets->front()));
  return std::move(w).text();
}

// Clearing harms nothing: a path without a fault layer (shared memory) has nothing to clear, and says so
// with an empty list rather than a refusal; only an unknown rail is an error.
base::Result<std::string> EngineCore::clear_faults(const rte::ControlRequest& request) {
  std::vector<std::uint32_t> targets;
  if (!request.rail.empty()) {
    auto found = find_rail(request.rail);
    if (!found) return found.status();
    targets.push_back(*found);
  } else {
    for (std::uint32_t i = 0; i < paths_.size(); ++i) targets.push_back(i);
  }
  std::erase_if(targets, [&](std::uint32_t t) { return fault_layers_[t] == nullptr; });
  base::JsonWriter w;
  w.begin_object().field("rank", id_.rank).key("cleared").begin_array();
  for (std::uint32_t t : targets) {
    const std::size_t specs = fault_layers_[t]->specs().size();
    fault_layers_[t]->set_specs({});
    w.begin_object().field("index", t).field("name", paths_[t]->info().name).field("specs", std::uint64_t{specs});
    w.end_object();
  }
  w.end_array().end_object();
  FlightEvent event;
  event.at = std::chrono::system_clock::now();
  event.kind = FlightKind::clear;
  event.rail = request.rail.empty() || targets.empty() ? kEveryRail : targets.front();
  record_flight(std::move(event));
  return std::move(w).text();
}

std::string EngineCore::faults_json() const {
  base::JsonWriter w;
  w.begin_object().field("rank", id_.rank);
  if (injected_since_) {
    w.field("since", iso8601(*injected_since_));
  } else {
    w.key("since").null();
  }
  w.key("rails").begin_array();
  for (std::uint32_t i = 0; i < paths_.size(); ++i) {
    const path::FaultPath* layer = fault_layers_[i];
    const PathBaseline now = path_totals(i);
    const PathBaseline then = i < baseline_.size() ? baseline_[i] : PathBaseline{};
    w.begin_object().field("index", i).field("name", paths_[i]->info().name).field("injectable", layer != nullptr);
    w.key("faults").begin_array();
    if (layer != nullptr) {
      for (std::size_t k = 0; k < layer->specs().size(); ++k) {
        const path::FaultPath::SpecState state = layer->spec_state(k);
        if (state == path::FaultPath::SpecState::ended) continue;
        w.begin_object().field("spec", path::to_string(layer->specs()[k])).field("state", spec_state_name(state));
        w.end_object();
      }
    }
    w.end_array().key("injected");
    write_fault_counters(w, now.faults, then.faults);
    w.field("detected", now.refused - then.refused)
        .field("retransmits", now.retransmits - then.retransmits)
        .field("timeouts", now.timeouts - then.timeouts)
        .end_object();
  }
  w.end_array().end_object();
  return std::move(w).text();
}

std::string EngineCore::events_json(std::uint64_t after) const {
  // A reply stays well inside the control plane's bound; the tool asks again from the last it got.
  constexpr std::size_t kMaxEventsPerReply = 2000;
  const std::lock_guard flight_lock(flight_lock_);
  std::vector<const FlightEvent*> events = flight_.after(after);
  const bool more = events.size() > kMaxEventsPerReply;
  if (more) events.resize(kMaxEventsPerReply);
  base::JsonWriter w;
  w.begin_object()
      .field("rank", id_.rank)
      .field("last", flight_.last_seq())
      .field("capacity", std::uint64_t{flight_.capacity()})
      .field("more", more);
  w.key("events").begin_array();
  for (const FlightEvent* e : events) w.raw(flight_json(*e));
  w.end_array().end_object();
  return std::move(w).text();
}

void EngineCore::rail_changed(std::uint32_t peer, std::uint32_t rail, const RailChange& change) {
  FlightEvent event;
  event.at = change.at;
  event.kind = FlightKind::rail_state;
  event.peer = peer;
  event.rail = peers_[peer].rails[rail].path_index;  // called with the peer's lock held
  event.text = std::string(to_string(change.state));
  event.reason = change.reason;
  record_flight(std::move(event));
}

void EngineCore::record_traffic(Clock::time_point now) {
  const auto interval = now - last_flight_sample_;
  last_flight_sample_ = now;
  if (flight_.capacity() == 0) return;
  const auto wall = std::chrono::system_clock::now();
  for (const Peer& peer : peers_) {
    const PeerGuard peer_lock(*this, peer.rank);
    std::vector<RailCounters>& sampled = flight_sampled_[peer.rank];
    for (std::uint32_t k = 0; k < peer.rails.size() && k < sampled.size(); ++k) {
      const RailCounters& c = peer.rails[k].counters;
      RailCounters& last = sampled[k];
      if (c.bytes_sent == last.bytes_sent && c.bytes_received == last.bytes_received &&
          c.retransmits == last.retransmits && c.timeouts == last.timeouts &&
          c.checksum_failures == last.checksum_failures) {
        continue;
      }
      FlightEvent event;
      event.at = wall;
      event.kind = FlightKind::traffic;
      event.peer = peer.rank;
      event.rail = peer.rails[k].path_index;
      event.interval = interval;
      event.bytes_sent = c.bytes_sent - last.bytes_sent;
      event.bytes_received = c.bytes_received - last.bytes_received;
      event.retransmits = c.retransmits - last.retransmits;
      event.timeouts = c.timeouts - last.timeouts;
      event.checksum_failures = c.checksum_failures - last.checksum_failures;
      record_flight(std::move(event));
      last = c;
    }
  }
}

std::string EngineCore::write_flight_file(std::string_view why) {
  if (config_.flight_file.empty()) return {};
  base::JsonWriter w;
  w.begin_object().field("rank", id_.rank).field("size", id_.size).field("why", why);
  w.field("written", iso8601(std::chrono::system_clock::now()));
  w.key("stats").raw(report_json(stats()));
  w.key("events").begin_array();
  const std::lock_guard flight_lock(flight_lock_);
  for (const FlightEvent* e : flight_.after(0)) w.raw(flight_json(*e));
  w.end_array().end_object();
  if (base::Status s = base::write_file(config_.flight_file, base::zstd_compress(std::move(w).text())); !s) {
    std::fprintf(stderr, "ftmpi: rank %u: cannot write the flight recorder: %s\n", id_.rank, s.message().c_str());
    return {};
  }
  return config_.flight_file;
}

}  // namespace ftmpi::engine
