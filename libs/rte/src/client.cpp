#include "ftmpi/rte/client.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>
#include <utility>

#include "ftmpi/rte/params.hpp"
#include "sys.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

}  // namespace

ClientOptions ClientOptions::from(const base::ParamSet& params) {
  ClientOptions options;
  options.connect_timeout = params.get_duration(kConnectTimeout);
  return options;
}

Result<Client> Client::from_environment(char** envp, const ClientOptions& options) {
  auto job = job_from_environment(envp);
  if (!job) return job.status();
  if (!job->has_value()) return singleton();
  return connect(**job, options);
}

Result<Client> Client::singleton() {
  auto job = singleton_job();
  if (!job) return job.status();
  Client client(std::move(*job), UniqueFd(), std::chrono::nanoseconds(0));
  client.table_.resize(1);
  return client;
}

Result<Client> Client::connect(const JobInfo& job, const ClientOptions& options) {
  if (job.size == 0 || job.size > kMaxJobSize || job.rank >= job.size || job.launcher_address.empty()) {
    return Status(Errc::invalid_argument, "rank " + std::to_string(job.rank) + " of " +
                                              std::to_string(job.size) + " with launcher '" +
                                              job.launcher_address + "' is not a valid job");
  }
  auto addresses = parse_launcher_addresses(job.launcher_address);
  if (!addresses) {
    return Status(Errc::invalid_argument, "ftrun's address list '" + job.launcher_address +
                                              "' is malformed: " + addresses.status().message());
  }
  const auto deadline = sys::Clock::now() + options.connect_timeout;
  // ftrun answers `busy` when a flood of unauthenticated connections makes it close the oldest: this rank
  // tries again, with back-off, until its deadline.
  std::chrono::milliseconds pause = sys::kFirstRetryPause;
  std::uint32_t busy = 0;
  for (;;) {
    auto fd = sys::connect_any(*addresses, options.attempt_timeout, deadline);
    if (!fd) {
      return Status(fd.code(), "cannot reach ftrun at " + job.launcher_address + " within rte.connect_timeout (" +
                                   sys::seconds_text(options.connect_timeout) + "): " + fd.status().message() +
                                   (busy > 0 ? " (it was busy " + std::to_string(busy) + " times before)" : ""));
    }
    const std::string peer = sys::peer_address(fd->get());
    Client client(job, std::move(*fd), options.connect_timeout);
    client.table_.resize(job.size);
    Hello hello{kProtocolVersion, job.rank, static_cast<std::uint32_t>(::getpid()), job.identity.secret};
    if (Status s = client.send(hello); !s) return s;
    auto reply = client.receive(deadline);
    if (reply && std::holds_alternative<Busy>(*reply)) {
      ++busy;
      if (sys::Clock::now() >= deadline) {
        return Status(Errc::peer_unreachable,
                      "ftrun at " + peer + " was busy " + std::to_string(busy) +
                          " times within rte.connect_timeout (" + sys::seconds_text(options.connect_timeout) +
                          "): too many unauthenticated connections to its port (a flood of connections?)");
      }
      sys::back_off(pause, deadline);
      continue;
    }
    if (!reply) {
      if (reply.code() == Errc::peer_unreachable) {
        return Status(Errc::peer_unreachable,
                      "ftrun at " + peer + " refused rank " + std::to_string(job.rank) +
                          " (does FTMPI_RTE_SECRET belong to this job?): " + reply.status().message());
      }
      return reply.status();
    }
    if (Status s = client.welcomed(*reply); !s) return s;
    return client;
  }
}

Status Client::welcomed(const Message& reply) {
  auto* welcome = std::get_if<Welcome>(&reply);
  if (welcome == nullptr) {
    return Status(Errc::malformed, "ftrun answered a hello with " + std::string(to_string(type_of(reply))));
  }
  if (welcome->size != job_.size) {
    return Status(Errc::invalid_argument, "ftrun runs a job of " + std::to_string(welcome->size) +
                                              " ranks but FTMPI_SIZE is " + std::to_string(job_.size));
  }
  return {};
}

Status Client::put(std::string_view key, std::string_view value) {
  if (Status s = usable("put"); !s) return s;
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return Status(Errc::invalid_argument,
                  "key length " + std::to_string(key.size()) + " outside 1.." + std::to_string(kMaxKeyBytes));
  }
  if (value.size() > kMaxValueBytes) {
    return Status(Errc::invalid_argument, "value for key '" + std::string(key) + "' is longer than " +
                                              std::to_string(kMaxValueBytes) + " bytes");
  }
  const std::size_t cost = key.size() + value.size() + kKvEntryOverhead;
  auto old = published_.find(key);
  const std::size_t old_cost = old == published_.end() ? 0 : key.size() + old->second + kKvEntryOverhead;
  if (kv_bytes_ - old_cost + cost > kMaxRankKvBytes) {
    return Status(Errc::resource_exhausted, "put of key '" + std::string(key) + "' exceeds the budget of " +
                                                std::to_string(kMaxRankKvBytes) + " bytes per rank");
  }
  if (is_singleton()) {
    pending_.insert_or_assign(std::string(key), std::string(value));
  } else if (Status s = send(Put{std::string(key), std::string(value)}); !s) {
    return s;
  }
  kv_bytes_ = kv_bytes_ - old_cost + cost;
  published_.insert_or_assign(std::string(key), value.size());
  return {};
}

Status Client::fence() {
  if (Status s = fence_begin(); !s) return s;
  if (is_singleton()) return complete_fence(FenceDone{fences_ + 1, {}});
  // Other ranks may take arbitrarily long to reach the fence: wait without a deadline, asleep in poll().
  auto reply = receive(sys::Clock::time_point::max());
  if (!reply) return reply.status();
  return complete_fence(std::move(*reply));
}

Status Client::fence_begin() {
  if (Status s = usable("fence"); !s) return s;
  if (fence_pending_) return Status(Errc::invalid_argument, "fence begun while another is pending");
  if (!is_singleton()) {
    if (Status s = send(Fence{fences_ + 1}); !s) return s;
  }
  fence_pending_ = true;
  return {};
}

Result<bool> Client::fence_test() {
  if (!fence_pending_) return Status(Errc::invalid_argument, "fence_test without fence_begin");
  if (is_singleton()) {
    if (Status s = complete_fence(FenceDone{fences_ + 1, {}}); !s) return s;
    return true;
  }
  auto reply = try_receive(sys::Clock::now());
  if (!reply) return reply.status();
  if (!reply->has_value()) return false;
  if (Status s = complete_fence(std::move(**reply)); !s) return s;
  return true;
}

Status Client::complete_fence(Message reply) {
  fence_pending_ = false;
  const std::uint32_t epoch = fences_ + 1;
  auto* done = std::get_if<FenceDone>(&reply);
  if (done == nullptr || done->epoch != epoch) {
    return Status(Errc::malformed, "ftrun answered fence " + std::to_string(epoch) + " with " +
                                       std::string(to_string(type_of(reply))));
  }
  if (is_singleton()) {
    for (auto& [key, value] : pending_) table_[0].insert_or_assign(key, std::move(value));
    pending_.clear();
    fences_ = epoch;
    return {};
  }
  // fence_done carries what was put since the fence before (every rank saw that one): merged, the
  // table is every value put before this fence.
  for (const KvEntry& e : done->entries) {
    if (e.rank >= job_.size) return Status(Errc::malformed, "fence_done names rank " + std::to_string(e.rank));
  }
  for (KvEntry& e : done->entries) table_[e.rank].insert_or_assign(std::move(e.key), std::move(e.value));
  fences_ = epoch;
  return {};
}

Result<std::string> Client::get(std::uint32_t rank, std::string_view key) const {
  if (rank >= job_.size) {
    return Status(Errc::out_of_range,
                  "rank " + std::to_string(rank) + " is not in a job of " + std::to_string(job_.size));
  }
  auto it = table_[rank].find(key);
  if (it == table_[rank].end()) {
    return Status(Errc::not_found, "rank " + std::to_string(rank) + " put no key '" + std::string(key) +
                                       "' before the last fence");
  }
  return it->second;
}

void Client::abort(int code, std::string_view message) {
  // What the rank printed before aborting should reach the user; ftrun forwards it until the rank exits.
  std::fflush(nullptr);
  if (!is_singleton() && socket_) {
    Abort abort{code, std::string(message.substr(0, kMaxAbortMessageBytes))};
    // Wait for the acknowledgement, so that ftrun reports the abort rather than only our exit status.
    if (send(abort)) (void)receive(sys::Clock::now() + timeout_);
  }
  const int status = code & 0xff;
  ::_exit(status == 0 ? 1 : status);
}

Status Client::finalize() {
  if (Status s = usable("finalize"); !s) return s;
  finalized_ = true;
  if (is_singleton()) return {};
  if (Status s = send(Finalize{}); !s) return s;
  auto reply = receive(sys::Clock::now() + timeout_);
  if (!reply) return reply.status();
  if (!std::holds_alternative<FinalizeAck>(*reply)) {
    return Status(Errc::malformed, "ftrun answered finalize with " + std::string(to_string(type_of(*reply))));
  }
  stop_watching();
  socket_.reset();
  return {};
}

Status Client::send(const Message& message) {
  if (Status s = sys::send_all(socket_.get(), encode(message)); !s) {
    return Status(Errc::peer_unreachable, "lost the connection to ftrun: " + s.message());
  }
  return {};
}

Result<Message> Client::receive(sys::Clock::time_point deadline) {
  auto message = try_receive(deadline);
  if (!message) return message.status();
  if (!message->has_value()) {
    return Status(Errc::peer_unreachable,
                  "ftrun did not answer within rte.connect_timeout (" + sys::seconds_text(timeout_) + ")");
  }
  return std::move(**message);
}

struct Client::ControlWatcher {
  int socket = -1;
  UniqueFd stop_fd;  // an eventfd: written to end the thread
  std::atomic<bool> pending{false};
  std::atomic<bool> stopping{false};
  std::thread thread;

  void run() {
    for (;;) {
      pollfd fds[2] = {{socket, POLLIN, 0}, {stop_fd.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (stopping.load() || fds[1].revents != 0) return;
      pending.store(true);
      // A broken connection stays readable: say so once (take_control reports nothing), then stop.
      if ((fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) return;
      // stop() sets stopping before it lowers pending: seen here, or the wait below is woken.
      if (stopping.load()) return;
      pending.wait(true);  // until the engine took what arrived, or we are stopped
      if (stopping.load()) return;
    }
  }

  // Ends the thread (idempotent); the flag stays readable, and false.
  void stop() {
    stopping.store(true);
    const std::uint64_t one = 1;
    if (::write(stop_fd.get(), &one, sizeof one) < 0) {
      // An eventfd write fails only when its counter is full: the thread is being woken already.
    }
    pending.store(false);
    pending.notify_all();
    if (thread.joinable()) thread.join();
  }
};

Status Client::watch_control() {
  if (is_singleton() || !socket_ || watcher_) return {};
  auto* watcher = new ControlWatcher();
  watcher_ = std::unique_ptr<ControlWatcher, void (*)(ControlWatcher*)>(watcher, [](ControlWatcher* w) {
    w->stop();
    delete w;
  });
  watcher->socket = socket_.get();
  watcher->stop_fd = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!watcher->stop_fd) {
    watcher_.reset();
    return sys::errno_status(Errc::internal, "eventfd");
  }
  watcher->thread = std::thread([watcher] { watcher->run(); });
  return {};
}

const std::atomic<bool>* Client::control_pending() const noexcept {
  return watcher_ ? &watcher_->pending : nullptr;
}

void Client::stop_watching() {
  if (watcher_) watcher_->stop();  // the object (and control_pending()) lives as long as the Client
}

std::vector<Control> Client::take_control() {
  if (watcher_) {
    watcher_->pending.store(false);
    watcher_->pending.notify_all();
  }
  if (is_singleton() || !socket_) return {};
  if (!held_) {
    // A reply that arrives meanwhile (fence_done while a fence is pending) waits in held_ for its reader.
    // An error here is the connection's: the next fence or finalize reports it.
    auto message = try_receive(sys::Clock::now());
    if (message && message->has_value()) held_ = std::move(**message);
  }
  return std::exchange(controls_, {});
}

Status Client::reply_control(std::uint32_t id, bool ok, std::string text) {
  if (is_singleton() || !socket_) return {};
  if (text.size() > kMaxControlReplyBytes) {
    ok = false;
    text = "the reply (" + std::to_string(text.size()) + " bytes) exceeds the control protocol's bound";
  }
  return send(ControlReply{id, ok, std::move(text)});
}

bool Client::check_peer(std::uint32_t peer) {
  if (is_singleton() || !socket_ || finalized_ || peer >= job_.size) return false;
  return send(PeerCheck{peer}).is_ok();
}

std::vector<PeerStatus> Client::take_peer_statuses() { return std::exchange(peer_statuses_, {}); }

Result<std::optional<Message>> Client::try_receive(sys::Clock::time_point deadline) {
  if (held_) return std::optional<Message>(std::exchange(held_, std::nullopt));
  for (;;) {
    auto message = reader_.next();
    if (!message) return Status(message.code(), "from ftrun: " + message.status().message());
    if (message->has_value()) {
      // Control requests come at any time; the engine takes them from its progress loop.
      if (auto* control = std::get_if<Control>(&**message)) {
        controls_.push_back(std::move(*control));
        // Read here by a fence or finalize, it may never make the socket readable for the watcher.
        if (watcher_) watcher_->pending.store(true);
        continue;
      }
      if (auto* status = std::get_if<PeerStatus>(&**message)) {
        peer_statuses_.push_back(*status);
        if (watcher_) watcher_->pending.store(true);
        continue;
      }
      return std::move(*message);
    }
    pollfd p{socket_.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, sys::poll_timeout_ms(deadline, sys::Clock::now()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return sys::errno_status(Errc::internal, "poll");
    }
    if (ready == 0) return std::optional<Message>();
    char buffer[64 * 1024];
    ssize_t n = ::recv(socket_.get(), buffer, sizeof buffer, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys::errno_status(Errc::peer_unreachable, "lost the connection to ftrun");
    }
    if (n == 0) return Status(Errc::peer_unreachable, "ftrun closed the connection");
    reader_.append(std::span<const char>(buffer, static_cast<std::size_t>(n)));
  }
}

Status Client::usable(std::string_view operation) const {
  if (finalized_) {
    return Status(Errc::invalid_argument, std::string(operation) + " after finalize");
  }
  return {};
}

}  // namespace ftmpi::rte
