// The progress thread (threaded_engine.hpp): one lock around every engine call, and the loop that polls
// while the application computes.
#include "threaded_engine.hpp"

#include <sched.h>

#include <cstdlib>

namespace ftmpi::engine {

// The thread polls as long as it runs: peers may count on this process answering (Engine::waiting),
// whatever its other threads do.
ThreadedEngine::ThreadedEngine(std::unique_ptr<Engine> inner, std::chrono::nanoseconds idle_sleep)
    : inner_((inner->waiting(true), std::move(inner))), idle_sleep_(idle_sleep), thread_([this] { run(); }) {}

ThreadedEngine::~ThreadedEngine() { stop(); }

void ThreadedEngine::stop() {
  stopping_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

// Polls as long as there is work, then sleeps a little: a computing application should keep its core.
void ThreadedEngine::run() {
  while (!stopping_.load(std::memory_order_relaxed)) {
    bool did = false;
    {
      std::lock_guard lock(mutex_);
      did = inner_->progress();
      if (background_work_ && background_work_(*inner_)) did = true;
    }
    if (!did) std::this_thread::sleep_for(idle_sleep_);
  }
}

Request* ThreadedEngine::isend(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                               SendMode mode) {
  std::lock_guard lock(mutex_);
  return inner_->isend(comm, buf, bytes, dest, tag, mode);
}

void ThreadedEngine::set_background_work(std::function<bool(Engine&)> work) {
  std::lock_guard lock(mutex_);
  background_work_ = std::move(work);
}

bool ThreadedEngine::send_eager(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                                SendMode mode) {
  std::lock_guard lock(mutex_);
  return inner_->send_eager(comm, buf, bytes, dest, tag, mode);
}

Request* ThreadedEngine::irecv(const CommView& comm, void* buf, std::size_t capacity, int source, int tag) {
  std::lock_guard lock(mutex_);
  return inner_->irecv(comm, buf, capacity, source, tag);
}

Request* ThreadedEngine::isend_pieces(const CommView& comm, const void* base, const frag::PiecesLayout& layout,
                                      int dest, int tag, SendMode mode) {
  std::lock_guard lock(mutex_);
  return inner_->isend_pieces(comm, base, layout, dest, tag, mode);
}

Request* ThreadedEngine::irecv_pieces(const CommView& comm, void* base, const frag::PiecesLayout& layout,
                                      int source, int tag) {
  std::lock_guard lock(mutex_);
  return inner_->irecv_pieces(comm, base, layout, source, tag);
}

bool ThreadedEngine::is_complete(const Request* request, Completion* out) const noexcept {
  std::lock_guard lock(mutex_);
  return inner_->is_complete(request, out);
}

bool ThreadedEngine::take_completion(Request* request, Completion* out) {
  std::lock_guard lock(mutex_);
  return inner_->take_completion(request, out);
}

EngineCounters ThreadedEngine::counters_snapshot() const {
  std::lock_guard lock(mutex_);
  return inner_->counters_snapshot();
}

void ThreadedEngine::cancel(Request* request) {
  std::lock_guard lock(mutex_);
  inner_->cancel(request);
}

void ThreadedEngine::release(Request* request) {
  std::lock_guard lock(mutex_);
  inner_->release(request);
}

bool ThreadedEngine::iprobe(const CommView& comm, int source, int tag, Completion* out) {
  std::lock_guard lock(mutex_);
  return inner_->iprobe(comm, source, tag, out);
}

MatchedMessage* ThreadedEngine::improbe(const CommView& comm, int source, int tag, Completion* out) {
  std::lock_guard lock(mutex_);
  return inner_->improbe(comm, source, tag, out);
}

Request* ThreadedEngine::mrecv(const CommView& comm, MatchedMessage* message, void* buf, std::size_t capacity) {
  std::lock_guard lock(mutex_);
  return inner_->mrecv(comm, message, buf, capacity);
}

Request* ThreadedEngine::mrecv_pieces(const CommView& comm, MatchedMessage* message, void* base,
                                      const frag::PiecesLayout& layout) {
  std::lock_guard lock(mutex_);
  return inner_->mrecv_pieces(comm, message, base, layout);
}

std::string ThreadedEngine::lost_reason(int world_rank) const {
  std::lock_guard lock(mutex_);
  return inner_->lost_reason(world_rank);
}

bool ThreadedEngine::progress() {
  std::lock_guard lock(mutex_);
  return inner_->progress();
}

void ThreadedEngine::idle(std::uint64_t) noexcept { ::sched_yield(); }

// The thread stops first: finalize makes its own progress, and the paths go away after it.
base::Status ThreadedEngine::finalize() {
  stop();
  return inner_->finalize();
}

// Under the lock: the abort talks to ftrun over the connection the progress thread also writes to (a
// peer check) and reads from (control requests); the thread never comes back to the engine after it.
void ThreadedEngine::abort(int code, std::string_view message) {
  std::lock_guard lock(mutex_);
  inner_->abort(code, message);
  std::abort();  // unreachable: a virtual [[noreturn]] call does not tell the compiler so
}

}  // namespace ftmpi::engine
