// The engine's core (engine_core.hpp): construction (every peer's routes, from the paths it was given),
// requests, the progress loop, finalize and abort. The rest is in parts: its settings
// (engine_config.cpp), sending (engine_send.cpp), receiving and matching (engine_receive.cpp, and
// engine_place.cpp for receiving into place), reliability (engine_reliability.cpp), each peer's rails
// (rail_set.cpp), statistics (stats.cpp), control requests (engine_control.cpp).
#include "engine_core.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "ftmpi/base/log.hpp"
#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/params/engine_params.hpp"

namespace ftmpi::engine {
// Writes a frame the engine still holds in full (a retransmission).
void StoredFrame::write(std::span<std::byte> room) noexcept {
  std::memcpy(room.data(), bytes_.data(), bytes_.size());
  if (!payload_.empty()) std::memcpy(room.data() + bytes_.size(), payload_.data(), payload_.size());
}

std::span<const std::byte> StoredFrame::write_header(std::span<std::byte> room) noexcept {
  std::memcpy(room.data(), bytes_.data(), bytes_.size());
  return payload_;
}

int CommView::comm_rank_in_list(int world_rank) const noexcept {
  auto it = std::find(world_ranks.begin(), world_ranks.end(), world_rank);
  return it == world_ranks.end() ? -1 : static_cast<int>(it - world_ranks.begin());
}

// ---------------------------------------------------------------------------------------------------
// Threads (engine_core.hpp)

void EngineCore::EngineGuard::lock(const EngineCore& engine) noexcept {
  if (holds_engine_lock_) return;
  engine.engine_lock_waiters_.fetch_add(1, std::memory_order_relaxed);
  engine.engine_lock_.lock();
  engine.engine_lock_waiters_.fetch_sub(1, std::memory_order_relaxed);
  holds_engine_lock_ = true;
  engine_ = &engine;
}

void EngineCore::EngineGuard::unlock() noexcept {
  holds_engine_lock_ = false;
  engine_->engine_lock_.unlock();
}

// The thread-locals are read only in a multi-threaded process: in a shared library each read is a call
// (__tls_get_addr), which a single-threaded send would otherwise pay.
void EngineCore::PeerGuard::lock(const EngineCore& engine, std::uint32_t rank) noexcept {
  outer_ = held_peer_;
  if (outer_ == rank || outer_ == kAllPeers) return;
  mutex_ = &engine.peer_locks_[rank];
  mutex_->lock();
  held_peer_ = rank;
}

void EngineCore::PeerGuard::unlock() noexcept {
  held_peer_ = outer_;
  mutex_->unlock();
}

EngineCore::AllPeersGuard::AllPeersGuard(const EngineCore& engine) noexcept {
  if (!base::multi_threaded() || held_peer_ == kAllPeers) return;
  // One may be held already: a send that failed for good writes the flight recorder (with the
  // statistics) before the job ends.
  outer_ = held_peer_;
  for (std::uint32_t r = 0; r < engine.id_.size; ++r) {
    if (r != outer_) engine.peer_locks_[r].lock();
  }
  held_peer_ = kAllPeers;
  engine_ = &engine;
}

EngineCore::AllPeersGuard::~AllPeersGuard() {
  if (engine_ == nullptr) return;
  held_peer_ = outer_;
  for (std::uint32_t r = 0; r < engine_->id_.size; ++r) {
    if (r != outer_) engine_->peer_locks_[r].unlock();
  }
}

void EngineCore::record_flight(FlightEvent event) {
  const std::lock_guard lock(flight_lock_);
  flight_.record(std::move(event));
}

EngineCore::EngineCore(Identity identity, EngineConfig config,
                       std::vector<std::unique_ptr<path::Path>> paths, Environment environment)
    : peer_locks_(std::make_unique<base::OptionalMutex[]>(identity.size)),
      id_(identity),
      config_(config),
      paths_(std::move(paths)),
      env_(std::move(environment)),
      matcher_(match::Matcher::create({identity.size, config.ahead_window}).value()),
      flight_(config.flight_events) {
  rails_context_.timing = {config_.retransmit_min, config_.retransmit_max, config_.rail_down_after,
                           config_.peer_timeout,   config_.probe_min,      config_.probe_max};
  rails_context_.actions = this;
  rails_context_.totals = &counters_;
  peers_.reserve(id_.size);
  for (auto& p : paths_) {
    if (waiting_word_ == nullptr) waiting_word_ = p->waiting_word();
  }
  std::size_t max_payload = 0;
  for (std::uint32_t r = 0; r < id_.size; ++r) {
    Peer& peer = peers_.emplace_back(r, &rails_context_);
    peer.credit = EagerCredit(config_.eager_credit);
    for (std::uint32_t i = 0; i < paths_.size(); ++i) {
      path::Path* p = paths_[i].get();
      if (!p->reaches(r)) continue;
      const path::PathInfo& info = p->info();
      Route route;
      route.path = p;
      route.name = info.name;
      route.path_index = i;
      route.max_payload = p->max_frame_to(r) - frag::kHeaderSize;
      route.window_frames = std::max<std::size_t>(1, std::min(config_.window_frames, p->frames_in_flight_limit(r)));
      route.eager_limit =
          info.host_local ? config_.shm_eager_limit : std::max(route.max_payload, config_.net_eager_limit);
      route.single_copy = info.single_copy_read && config_.single_copy_min > 0;
      peer.reliable_routes = peer.reliable_routes && info.reliable;
      // A host-local path (shared memory) alone when there is one: it is the fastest way to a peer on
      // this host, and a network rail beside it would only be used by failover, which it never needs.
      if (info.host_local) peer.rails.clear();
      if (!peer.rails.empty() && peer.rails[0].path->info().host_local) continue;
      peer.rails.add(std::move(route));
    }
    peer.route_of_path.assign(paths_.size(), -1);
    // A rail's frame can make its eager limit larger than the configured one; at most half the credit
    // (with the record) keeps a grant always coming (eager_credit.hpp).
    peer.eager_limit = peer.rails.empty() ? 0 : config_.eager_credit / 2 - EagerCredit::kPerMessage;
    peer.rts_payload = peer.rails.empty() ? 0 : SIZE_MAX;
    for (std::uint32_t k = 0; k < peer.rails.size(); ++k) {
      const Route& route = peer.rails[k];
      peer.route_of_path[route.path_index] = static_cast<std::int32_t>(k);
      peer.eager_limit = std::min(peer.eager_limit, route.eager_limit);
      peer.rts_payload = std::min(peer.rts_payload, route.max_payload);
      max_payload = std::max(max_payload, route.max_payload);
      max_eager_ = std::max(max_eager_, route.eager_limit);
    }
    peer.single_copy = peer.rails.size() == 1 && peer.rails[0].single_copy;
    peer.tracking = config_.reliability == Reliability::force ||
                    (config_.reliability == Reliability::automatic && !peer.reliable_routes);
    any_tracking_ = any_tracking_ || peer.tracking;
  }
  for (const auto& p : paths_) {
    if (auto* shm = dynamic_cast<path::ShmPath*>(p.get())) shm_ = shm;
    header_checked_.push_back(!p->info().reliable || config_.reliability == Reliability::force ? 1 : 0);
    sends_in_place_.push_back(p->info().gathers && config_.retain_after_send ? 1 : 0);
  }
  for (Peer& peer : peers_) {
    peer.short_frames = !peer.tracking && peer.rails.size() == 1 && header_checked_[peer.rails[0].path_index] == 0;
  }
  fault_layers_.assign(paths_.size(), nullptr);
  path_refused_.assign(paths_.size(), 0);
  flight_sampled_.resize(peers_.size());
  for (Peer& peer : peers_) flight_sampled_[peer.rank].resize(peer.rails.size());
  last_flight_sample_ = Clock::now();
  expect_bulk(false);  // no receive waits for bulk data yet
  limits_.job_key = id_.job_key;
  limits_.world_size = id_.size;
  limits_.my_rank = id_.rank;
  limits_.max_payload = static_cast<std::uint32_t>(max_payload);
  limits_.key = id_.frame_key;
  limits_.payload_mac = config_.payload_mac;
  limits_.payload_key = frag::derive_payload_key(id_.frame_key);
  integrity_warnings();
}

EngineCore::~EngineCore() = default;

// Switching integrity off on a network path is allowed (to measure what it costs) but never silent.
void EngineCore::integrity_warnings() {
  std::string network;
  for (const auto& p : paths_) {
    if (!p->info().reliable) network += (network.empty() ? "" : ", ") + p->info().name;
  }
  if (network.empty()) return;
  if (config_.reliability == Reliability::off) {
    warnings_.push_back("engine.reliability=off on network paths (" + network +
                        "): lost, duplicated or corrupted frames are neither detected nor repaired");
  } else if (config_.checksum == frag::ChecksumKind::none) {
    warnings_.push_back("engine.checksum=none on network paths (" + network +
                        "): corrupted payloads reach the application undetected");
  }
  if (id_.rank == 0) {
    for (const std::string& w : warnings_) base::logger().warn("{}", w);
  }
}

void EngineCore::set_peer_pid(std::uint32_t peer, std::int64_t pid) { peers_.at(peer).pid = pid; }

// ---------------------------------------------------------------------------------------------------
// Requests and progress

bool EngineCore::is_complete(const Request* r, Completion* out) const noexcept {
  if (!r->complete) return false;
  if (out != nullptr) *out = r->completion;
  return true;
}

bool EngineCore::take_completion(Request* r, Completion* out) {
  if (!r->complete) return false;
  *out = r->completion;
  release(r);
  return true;
}

void EngineCore::cancel(Request* r) {
  const EngineGuard engine_lock(*this);
  if (r->complete) return;
  if (r->kind == RequestKind::send) {
    const PeerGuard peer_lock(*this, r->peer);
    cancel_send(*r);
    return;
  }
  if (r->message != nullptr) return;
  if (matcher_.cancel_receive(reinterpret_cast<match::ReceiveHandle>(r))) {
    r->completion = Completion{};
    r->completion.cancelled = true;
    complete(r);
  }
}

template <bool kThreads>
void EngineCore::release(Request* r) {
  const EngineLock<kThreads> engine_lock(*this);
  if (r->complete) {
    requests_.free<kThreads>(r);
  } else {
    r->released = true;
    if (r->kind == RequestKind::send && r->frames_lent != 0) take_back_lent_frames(*r);
  }
}

void EngineCore::free_released(Request* request) { requests_.free(request); }
void EngineCore::take_back_lent_frames(Request& r) {
  const PeerGuard peer_lock(*this, r.peer);
  for (RetainedFrame& f : peers_[r.peer].retained) {
    if (f.lender != &r) continue;
    FrameBytes whole;
    whole.resize(f.frame_size());
    StoredFrame(f.bytes, f.payload, f.bulk).write(whole);
    recycle(f.bytes);
    f.bytes = std::move(whole);
    f.payload = {};
    f.lender = nullptr;
  }
  r.frames_lent = 0;
  if (r.send_state == SendState::awaiting_acks) complete(&r);  // released: its slot goes back
}

// Out of line, so that the single-threaded instantiation, inlined below, keeps its small stack frame.
void EngineCore::release_threaded(Request* r) { release<true>(r); }

void EngineCore::release(Request* r) {
  if (base::multi_threaded()) [[unlikely]] {
    release_threaded(r);
    return;
  }
  release<false>(r);
}

void EngineCore::waiting(bool now) noexcept {
  if (waiting_word_ == nullptr) return;
  const std::atomic_ref<std::uint32_t> word(*waiting_word_);
  if (base::multi_threaded()) {
    // Threads begin and end waits in any order: a count, which reads 0 only once none waits.
    if (now) {
      word.fetch_add(1, std::memory_order_relaxed);
    } else {
      word.fetch_sub(1, std::memory_order_relaxed);
    }
  } else {
    word.store(now ? 1 : 0, std::memory_order_relaxed);
  }
}

void EngineCore::idle(std::uint64_t idle_rounds) noexcept {
  if (idle_rounds < config_.spin_rounds) {
    __builtin_ia32_pause();
  } else {
    ::sched_yield();  // oversubscribed hosts: let the rank we wait for run
  }
}

base::Status EngineCore::finalize() {
  const EngineGuard engine_lock(*this);
  // 1. Everything this rank sent is safe at its peer: streams pushed out, nothing left queued in a path,
  //    and every sequenced frame received (verified and held in the peer's memory; whether the program
  //    there received the message is its own business, and a send nobody receives must not hang us).
  //    Frames not received yet are resent as usual, and their copies make the peer ACK again.
  auto all_sent_safe = [&] {
    if (!streaming_.empty()) return false;
    for (auto& p : paths_) {
      if (p->has_queued_frames()) return false;
    }
    for (const Peer& peer : peers_) {
      const PeerGuard peer_lock(*this, peer.rank);
      for (std::size_t i = peer.received_prefix; i < peer.retained.size(); ++i) {
        if (!peer.retained[i].received) return false;
      }
    }
    return true;
  };
  progress_until(all_sent_safe);
  // 2. Every rank got there: a fence through the launcher, whose TCP channel cannot lose the last word
  //    (two ranks agreeing over a lossy path cannot both know the other is done, so one would leave while
  //    the other still waits for its message or ACK). Progress continues meanwhile: a peer still in step 1
  //    needs our ACKs. Once the fence completes nobody needs anything from anybody, and the paths go.
  base::Status fenced;
  if (env_.fence_begin && (fenced = env_.fence_begin())) {
    progress_until([&] {
      auto tested = env_.fence_test();
      if (!tested) fenced = tested.status();
      return !tested || *tested;
    });
  }
  if (config_.report == ReportFormat::text) std::fprintf(stderr, "%s", report_text(stats()).c_str());
  if (config_.report == ReportFormat::json) std::fprintf(stderr, "ftmpi stats: %s\n", report_json(stats()).c_str());
  if (config_.flight_write == EngineConfig::FlightWrite::always) {
    record_traffic(Clock::now());  // the last interval's traffic
    write_flight_file("finalize");
  }
  if (!fenced) return fenced;
  return env_.finalize ? env_.finalize() : base::Status{};
}

void EngineCore::abort(int code, std::string_view message) {
  if (config_.flight_write != EngineConfig::FlightWrite::never) {
    const std::string file = write_flight_file(message.empty() ? "MPI_Abort" : message);
    if (!file.empty()) std::fprintf(stderr, "ftmpi: rank %u: flight recorder written to %s\n", id_.rank, file.c_str());
  }
  if (env_.abort) env_.abort(code, message);
  base::logger().critical("{}", message);
  std::_Exit(code == 0 ? 1 : code);
}

}  // namespace ftmpi::engine
