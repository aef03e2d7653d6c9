// Printing the engine's statistics snapshot (stats.hpp); EngineCore::stats() fills it (engine_reliability.cpp).
#include "stats.hpp"

#include <cstdio>
#include <ctime>

#include "ftmpi/base/json.hpp"
#include "ftmpi/base/params.hpp"

namespace ftmpi::engine {
namespace {

std::uint64_t us(std::chrono::nanoseconds d) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

// Every counter with its stable name, in report order; `visit(name, value)`.
template <typename Visit>
void each_counter(const EngineCounters& c, Visit&& visit) {
  visit("frames_sent", c.frames_sent);
  visit("frames_received", c.frames_received);
  visit("dropped_malformed", c.dropped_malformed);
  visit("dropped_wrong_job", c.dropped_wrong_job);
  visit("dropped_bad_payload", c.dropped_bad_payload);
  visit("dropped_ahead", c.dropped_ahead);
  visit("refused_single_copy", c.refused_single_copy);
  visit("duplicates", c.duplicates);
  visit("retransmits", c.retransmits);
  visit("acks_sent", c.acks_sent);
  visit("nacks_sent", c.nacks_sent);
  visit("nacks_ignored", c.nacks_ignored);
  visit("credit_rendezvous", c.credit_rendezvous);
  visit("credits_sent", c.credits_sent);
  visit("rails_down", c.rails_down);
  visit("rails_up", c.rails_up);
  visit("peers_lost", c.peers_lost);
  visit("single_copy_fallbacks", c.single_copy_fallbacks);
  visit("single_copies_gathered", c.single_copies_gathered);
  visit("split_copies", c.split_copies);
  visit("split_copy_rereads", c.split_copy_rereads);
  visit("frames_by_reference", c.frames_by_reference);
  visit("frames_copied_after_send", c.frames_copied_after_send);
  visit("sends_cancelled", c.sends_cancelled);
  visit("messages_withdrawn", c.messages_withdrawn);
  visit("longest_answered_silence_us", c.longest_answered_silence_us);
  visit("bytes_sent", c.bytes_sent);
  visit("bytes_received", c.bytes_received);
}

template <typename Visit>
void each_counter(const RailCounters& k, Visit&& visit) {
  visit("frames_sent", k.frames_sent);
  visit("bytes_sent", k.bytes_sent);
  visit("frames_received", k.frames_received);
  visit("bytes_received", k.bytes_received);
  visit("retransmits", k.retransmits);
  visit("timeouts", k.timeouts);
  visit("rebound", k.rebound);
  visit("checksum_failures", k.checksum_failures);
  visit("duplicates", k.duplicates);
  visit("refused_sends", k.refused_sends);
  visit("probes_sent", k.probes_sent);
  visit("probe_replies", k.probe_replies);
  visit("state_changes", k.state_changes);
}

}  // namespace

std::string_view to_string(RailState state) noexcept {
  switch (state) {
    case RailState::up: return "up";
    case RailState::suspect: return "suspect";
    case RailState::down: return "down";
    case RailState::disabled: return "disabled";
  }
  return "?";
}

base::Result<ReportFormat> parse_report_format(std::string_view text) {
  if (text == "json") return ReportFormat::json;
  // Every boolean spelling, as when this parameter was a boolean.
  if (auto on = base::parse_bool(text)) return *on ? ReportFormat::text : ReportFormat::none;
  return base::Status(base::Errc::invalid_argument,
                      "engine.report: '" + std::string(text) + "' is not one of false, true, json");
}

std::string iso8601(std::chrono::system_clock::time_point at) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(ms % 1000));
  return std::string(buf, n) + millis;
}

std::string report_text(const EngineStats& stats) {
  const std::string me = "rank=" + std::to_string(stats.rank);
  std::string out;
  for (const std::string& warning : stats.warnings) out += "ftmpi warning: " + me + " " + warning + "\n";
  out += "ftmpi counters: engine " + me;
  each_counter(stats.totals, [&](std::string_view name, std::uint64_t v) {
    out += " " + std::string(name) + "=" + std::to_string(v);
  });
  out += "\n";
  for (const RailStats& r : stats.rails) {
    out += "ftmpi counters: rail " + me + " peer=" + std::to_string(r.peer) + " rail=" + std::to_string(r.index) +
           " name='" + r.name + "' state=" + std::string(to_string(r.state));
    each_counter(r.counters, [&](std::string_view name, std::uint64_t v) {
      out += " " + std::string(name) + "=" + std::to_string(v);
    });
    out += " srtt_us=" + std::to_string(us(r.srtt)) + " rto_us=" + std::to_string(us(r.rto)) + "\n";
  }
  for (const PathStats& p : stats.paths) {
    for (const path::PathCounterGroup& g : p.groups) {
      out += "ftmpi counters: " + std::string(g.kind) + " " + me + " rail=" + std::to_string(p.index) + " name='" +
             g.name + "'";
      for (const path::PathCounter& c : g.counters) out += " " + std::string(c.name) + "=" + std::to_string(c.value);
      out += "\n";
    }
  }
  return out;
}

std::string report_json(const EngineStats& stats) {
  base::JsonWriter w;
  w.begin_object().field("rank", stats.rank).field("size", stats.size);
  w.key("warnings").begin_array();
  for (const std::string& warning : stats.warnings) w.value(warning);
  w.end_array();
  w.key("totals").begin_object();
  each_counter(stats.totals, [&](std::string_view name, std::uint64_t v) { w.field(name, v); });
  w.end_object();
  w.key("rails").begin_array();
  for (const RailStats& r : stats.rails) {
    w.begin_object()
        .field("peer", r.peer)
        .field("index", r.index)
        .field("name", r.name)
        .field("state", to_string(r.state))
        .field("state_for_ms", us(r.state_for) / 1000)
        .field("rtt_us", us(r.srtt))
        .field("rto_us", us(r.rto));
    each_counter(r.counters, [&](std::string_view name, std::uint64_t v) { w.field(name, v); });
    w.key("changes").begin_array();
    for (const RailChange& c : r.changes) {
      w.begin_object().field("at", iso8601(c.at)).field("state", to_string(c.state)).field("reason", c.reason);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  w.key("paths").begin_array();
  for (const PathStats& p : stats.paths) {
    w.begin_object().field("index", p.index).field("name", p.name).key("groups").begin_array();
    for (const path::PathCounterGroup& g : p.groups) {
      w.begin_object().field("kind", g.kind).field("name", g.name).key("counters").begin_object();
      for (const path::PathCounter& c : g.counters) w.field(c.name, c.value);
      w.end_object().end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  return std::move(w).text();
}

}  // namespace ftmpi::engine
