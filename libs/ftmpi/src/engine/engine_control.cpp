// Control requests from tools (ftpath), served from the progress loop: statistics, and rails taken out
// of service and put back by the operator (rte/control.hpp; docs/control-protocol.md).
//
// Disabling a rail for a peer moves its unacknowledged frames to the other rails exactly as a failure
// does (rebind_frames), and the rail is not probed while disabled. Enabling it makes it down and probed
// at once; its first answer puts it back into the striping. Disabling a peer's last working rail is
// refused, for every peer of the request at once: either all of them change or none.
#include <algorithm>
#include <cctype>

#include "engine_core.hpp"
#include "ftmpi/base/json.hpp"

namespace ftmpi::engine {
namespace {

// The words of a path's name that an operator may use for it: "udp eth1 10.0.0.1" -> eth1, 10.0.0.1
// (the kind word alone names every rail of that kind, so it names none here).
std::vector<std::string_view> rail_words(std::string_view name) {
  std::vector<std::string_view> words;
  bool first = true;
  while (!name.empty()) {
    const std::size_t space = name.find(' ');
    const std::string_view word = name.substr(0, space);
    if (!word.empty() && !first) words.push_back(word);
    first = false;
    name = space == std::string_view::npos ? std::string_view{} : name.substr(space + 1);
  }
  return words;
}

}  // namespace

void EngineCore::serve_control() {
  std::vector<rte::Control> controls = env_.take_control();
  if (env_.take_peer_statuses) {
    for (const rte::PeerStatus& status : env_.take_peer_statuses()) {
      if (status.peer >= peers_.size()) continue;
      const PeerGuard peer_lock(*this, status.peer);
      peers_[status.peer].rails.peer_checked(status.polling);
    }
  }
  for (rte::Control& control : controls) {
    base::Result<std::string> answer = answer_control(control.request);
    if (answer) {
      env_.reply_control(control.id, true, std::move(*answer));
      continue;
    }
    // Why not, with a code a tool can act on (docs/control-protocol.md, "The answer").
    const base::Errc code = answer.code();
    base::JsonWriter w;
    w.begin_object().field("error", answer.status().message());
    w.field("code", code == base::Errc::not_found     ? "unknown_rail"
                    : code == base::Errc::unsupported ? "refused"
                                                      : "bad_request");
    w.end_object();
    env_.reply_control(control.id, false, std::move(w).text());
  }
}

base::Result<std::string> EngineCore::answer_control(std::string_view line) {
  const AllPeersGuard peer_locks(*this);  // rails of every peer change at once, or none
  auto request = rte::parse_control_request(line);
  if (!request) return request.status();
  switch (request->op) {
    case rte::ControlOp::stats: return report_json(stats());
    case rte::ControlOp::ping: return std::string("{}");  // answering is the whole answer: this rank polls
    case rte::ControlOp::disable:
    case rte::ControlOp::enable: return set_rail_service(*request);
    case rte::ControlOp::inject: return inject_fault(*request);
    case rte::ControlOp::clear: return clear_faults(*request);
    case rte::ControlOp::faults: return faults_json();
    case rte::ControlOp::events: return events_json(request->after);
    case rte::ControlOp::record: {
      if (config_.flight_write == EngineConfig::FlightWrite::never || config_.flight_file.empty()) {
        return base::Status(base::Errc::unsupported, "this rank keeps no flight recorder file (engine.flight.write=never)");
      }
      record_traffic(Clock::now());
      const std::string file = write_flight_file("the job is being terminated");
      if (file.empty()) return base::Status(base::Errc::io_error, "cannot write the flight recorder");
      base::JsonWriter w;
      w.begin_object().field("rank", id_.rank).field("file", file).end_object();
      return std::move(w).text();
    }
  }
  return base::Status(base::Errc::invalid_argument, "unknown operation");
}

base::Result<std::uint32_t> EngineCore::find_rail(std::string_view rail) const {
  if (!rail.empty() && std::all_of(rail.begin(), rail.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    const std::size_t index = std::stoul(std::string(rail.substr(0, 9)));
    if (rail.size() <= 9 && index < paths_.size()) return static_cast<std::uint32_t>(index);
  }
  std::vector<std::uint32_t> named;
  std::string all;
  for (std::uint32_t i = 0; i < paths_.size(); ++i) {
    const std::string& name = paths_[i]->info().name;
    all += (all.empty() ? "" : ", ") + std::to_string(i) + " (" + name + ")";
    const auto words = rail_words(name);
    if (std::find(words.begin(), words.end(), rail) != words.end()) named.push_back(i);
  }
  if (named.size() == 1) return named.front();
  if (named.empty()) {
    return base::Status(base::Errc::not_found, "no rail '" + std::string(rail) + "' (rails: " + all + ")");
  }
  std::string which;
  for (std::uint32_t i : named) which += (which.empty() ? "" : ", ") + std::to_string(i);
  return base::Status(base::Errc::not_found, "rail '" + std::string(rail) + "' names rails " + which +
                                                        "; give its index or its address (rails: " + all + ")");
}

base::Result<std::string> EngineCore::set_rail_service(const rte::ControlRequest& request) {
  auto found = find_rail(request.rail);
  if (!found) return found.status();
  const std::uint32_t path = *found;
  const bool disable = request.op == rte::ControlOp::disable;
  // The routes the request changes: the named peers reached over this path.
  std::vector<std::pair<Peer*, std::uint32_t>> targets;
  std::string last_rail_of;
  for (Peer& peer : peers_) {
    if (peer.rank == id_.rank || !request.names_peer(peer.rank)) continue;
    if (path >= peer.route_of_path.size() || peer.route_of_path[path] < 0) continue;
    const auto rail = static_cast<std::uint32_t>(peer.route_of_path[path]);
    targets.emplace_back(&peer, rail);
    if (!disable || peer.rails[rail].state == RailState::disabled) continue;
    if (peer.rails.last_in_service(rail)) last_rail_of += (last_rail_of.empty() ? "" : ", ") + std::to_string(peer.rank);
  }
  const std::string& name = paths_[path]->info().name;
  if (targets.empty()) {
    return base::Status(base::Errc::not_found, "rail " + std::to_string(path) + " (" + name +
                                                   ") reaches none of the peers named");
  }
  if (!last_rail_of.empty()) {
    return base::Status(base::Errc::unsupported,
                        "refused: rail " + std::to_string(path) + " (" + name +
                            ") is the last working rail to rank " + last_rail_of + "; nothing was disabled");
  }
  base::JsonWriter w;
  w.begin_object().field("rank", id_.rank).field("index", path).field("name", name);
  w.key("changed").begin_array();
  std::vector<std::pair<Peer*, std::uint32_t>> unchanged;
  for (auto [peer, rail] : targets) {
    const RailState state = peer->rails[rail].state;
    const bool applies = disable ? state != RailState::disabled : state == RailState::disabled;
    if (!applies) {
      unchanged.emplace_back(peer, rail);
      continue;
    }
    if (disable) {
      peer->rails.disable(rail, "disabled by the operator");
    } else {
      peer->rails.enable(rail, "enabled by the operator");
    }
    w.begin_object().field("peer", peer->rank).field("state", to_string(peer->rails[rail].state)).end_object();
  }
  w.end_array().key("unchanged").begin_array();
  for (auto [peer, rail] : unchanged) {
    w.begin_object().field("peer", peer->rank).field("state", to_string(peer->rails[rail].state)).end_object();
  }
  w.end_array().end_object();
  return std::move(w).text();
}

}  // namespace ftmpi::engine
