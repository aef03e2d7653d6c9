// engine.progress.thread: a thread that makes progress while the application computes, so that ACKs,
// CTSs and retransmissions keep flowing between MPI calls. It wraps any engine; every call into the
// engine then takes one lock, which is the price of the option (off by default).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "engine.hpp"

namespace ftmpi::engine {

class ThreadedEngine final : public Engine {
 public:
  ThreadedEngine(std::unique_ptr<Engine> inner, std::chrono::nanoseconds idle_sleep);
  ~ThreadedEngine() override;

  int world_rank() const noexcept override { return inner_->world_rank(); }
  int world_size() const noexcept override { return inner_->world_size(); }
  std::uint64_t job_id() const noexcept override { return inner_->job_id(); }
  std::uint32_t world_context() const noexcept override { return inner_->world_context(); }
  std::uint32_t self_context() const noexcept override { return inner_->self_context(); }

  Request* isend(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                 SendMode mode) override;
  Request* irecv(const CommView& comm, void* buf, std::size_t capacity, int source, int tag) override;
  Request* isend_pieces(const CommView& comm, const void* base, const frag::PiecesLayout& layout, int dest, int tag,
                        SendMode mode) override;
  Request* irecv_pieces(const CommView& comm, void* base, const frag::PiecesLayout& layout, int source,
                        int tag) override;
  bool send_eager(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                  SendMode mode) override;
  bool is_complete(const Request* request, Completion* out) const noexcept override;
  bool take_completion(Request* request, Completion* out) override;
  void cancel(Request* request) override;
  void release(Request* request) override;
  bool iprobe(const CommView& comm, int source, int tag, Completion* out) override;
  MatchedMessage* improbe(const CommView& comm, int source, int tag, Completion* out) override;
  Request* mrecv(const CommView& comm, MatchedMessage* message, void* buf, std::size_t capacity) override;
  Request* mrecv_pieces(const CommView& comm, MatchedMessage* message, void* base,
                        const frag::PiecesLayout& layout) override;
  std::string lost_reason(int world_rank) const override;
  bool progress() override;
  std::uint64_t spin_rounds() const noexcept override { return inner_->spin_rounds(); }
  EngineCounters counters_snapshot() const override;
  void set_background_work(std::function<bool(Engine&)> work) override;
  base::Status finalize() override;
  [[noreturn]] void abort(int code, std::string_view message) override;

 protected:
  // The progress thread is working for us: a waiting caller only gives up its core.
  void idle(std::uint64_t idle_rounds) noexcept override;

 public:
  void waiting(bool) noexcept override {}  // the progress thread waits all along (constructor)

 private:
  void run();
  void stop();

  std::unique_ptr<Engine> inner_;
  std::chrono::nanoseconds idle_sleep_;
  mutable std::mutex mutex_;
  std::function<bool(Engine&)> background_work_;  // under mutex_
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ftmpi::engine
