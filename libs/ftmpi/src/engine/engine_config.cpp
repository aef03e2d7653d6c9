// The engine's settings (EngineConfig): read from its parameter rows (ftmpi/params/engine_params.hpp,
// where the defaults live) and checked together.
#include "engine_core.hpp"
#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/params/engine_params.hpp"

namespace ftmpi::engine {

base::Result<EngineConfig> EngineConfig::from(const base::ParamSet& params) {
  EngineConfig c;
  const std::string reliability = params.get_string(kReliability);
  c.reliability = reliability == "force" ? Reliability::force
                  : reliability == "off" ? Reliability::off
                                         : Reliability::automatic;
  auto checksum = frag::parse_checksum_kind(params.get_string(kChecksum));
  if (!checksum) return checksum.status();
  c.checksum = *checksum;
  c.payload_mac = params.get_string(kIntegrity) == "mac";
  c.shm_eager_limit = params.get_size(kShmEagerLimit);
  c.net_eager_limit = params.get_size(kNetEagerLimit);
  c.eager_credit = params.get_size(kEagerCredit);
  // Twice the largest eager message's cost: below that a sender could wait for a grant that never comes
  // (eager_credit.hpp).
  const std::uint64_t least_credit =
      2 * EagerCredit::eager_cost(std::max<std::uint64_t>(c.shm_eager_limit, c.net_eager_limit));
  if (c.eager_credit < least_credit) {
    return base::Status(base::Errc::invalid_argument,
                        "engine.eager_credit must be at least " + std::to_string(least_credit) +
                            " bytes: twice the largest eager message (engine.shm.eager_limit, engine.net.eager_limit) "
                            "and its record");
  }
  c.single_copy_min = params.get_size(kShmSingleCopyMin);
  c.single_copy_max = params.get_size(kShmSingleCopyMax);
  c.split_copy_min = params.get_size(kShmSplitCopyMin);
  c.gather_max = params.get_size(kShmGatherMax);
  c.retain_by_reference = params.get_bool(kRetainByReference);
  c.retain_after_send = params.get_bool(kRetainAfterSend);
  c.retransmit_min = params.get_duration(kRetransmitMin);
  c.retransmit_max = params.get_duration(kRetransmitMax);
  if (c.retransmit_min.count() <= 0 || c.retransmit_max < c.retransmit_min) {
    return base::Status(base::Errc::invalid_argument,
                        "engine.retransmit.max must be at least engine.retransmit.min, which must be > 0");
  }
  const std::int64_t ack_every = params.get_integer(kAckEvery);
  if (ack_every < 1) return base::Status(base::Errc::invalid_argument, "engine.ack.every must be >= 1");
  c.ack_every = static_cast<std::uint32_t>(ack_every);
  c.ack_delay = params.get_duration(kAckDelay);
  const std::int64_t spin = params.get_integer(kSpinRounds);
  if (spin < 0) return base::Status(base::Errc::invalid_argument, "engine.progress.spin must be >= 0");
  c.spin_rounds = static_cast<std::uint64_t>(spin);
  c.ahead_window = match::matcher_config(params, 1).ahead_window;
  c.window = params.get_size(kWindow);
  if (c.window == 0) return base::Status(base::Errc::invalid_argument, "engine.window must be > 0");
  const std::int64_t window_frames = params.get_integer(kWindowFrames);
  if (window_frames < 1) return base::Status(base::Errc::invalid_argument, "engine.window_frames must be >= 1");
  c.window_frames = static_cast<std::size_t>(window_frames);
  c.rail_down_after = params.get_duration(kRailDownAfter);
  c.peer_timeout = params.get_duration(kPeerTimeout);
  c.probe_min = params.get_duration(kProbeMin);
  c.probe_max = params.get_duration(kProbeMax);
  const std::int64_t flight_events = params.get_integer(kFlightEvents);
  if (flight_events < 0 || flight_events > 1'000'000) {
    return base::Status(base::Errc::invalid_argument, "engine.flight.events must be from 0 to 1000000");
  }
  c.flight_events = static_cast<std::size_t>(flight_events);
  c.test_overlap_tag = params.get_integer(kTestOverlapTag);
  c.test_poll_tag = params.get_integer(kTestPollTag);
  c.flight_interval = params.get_duration(kFlightInterval);
  if (c.flight_interval.count() <= 0) {
    return base::Status(base::Errc::invalid_argument, "engine.flight.interval must be > 0");
  }
  const std::string flight_write = params.get_string(kFlightWrite);
  if (flight_write == "never") {
    c.flight_write = EngineConfig::FlightWrite::never;
  } else if (flight_write == "abnormal") {
    c.flight_write = EngineConfig::FlightWrite::abnormal;
  } else if (flight_write == "always") {
    c.flight_write = EngineConfig::FlightWrite::always;
  } else {
    return base::Status(base::Errc::invalid_argument,
                        "engine.flight.write: '" + flight_write + "' is not abnormal, always or never");
  }
  auto report = parse_report_format(params.get_string(kReport));
  if (!report) return report.status();
  c.report = *report;
  if (c.probe_min.count() <= 0 || c.probe_max < c.probe_min) {
    return base::Status(base::Errc::invalid_argument,
                        "engine.rail.probe_max must be at least engine.rail.probe_min, which must be > 0");
  }
  return c;
}

EngineConfig EngineConfig::defaults() {
  base::ParamSet params;
  for (auto table : ftmpi::params::all_param_tables()) (void)params.add_table(table);
  return from(params).value();
}

}  // namespace ftmpi::engine
