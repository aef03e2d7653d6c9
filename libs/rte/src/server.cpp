#include "ftmpi/rte/server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "ftmpi/base/log.hpp"
#include "sys.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

// Unauthenticated connections are bounded (the ranks still expected, plus this), so that a flood of idle
// connections cannot exhaust ftrun's descriptors. At the bound the oldest one goes, told `busy`, and the
// newcomer stays: a rank sends its hello at once and is authenticated at the next poll, while idle
// connections age out, so a flood can delay a rank (which tries again) but not shut it out.
constexpr std::size_t kSparePendingConnections = 64;
constexpr std::size_t kReadChunk = 64 * 1024;

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
// Spelled out: clang 14 does not deduce an aggregate's template arguments (C++20's P1816) by itself.
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

RankEvent event(RankEvent::Kind kind, std::uint32_t rank) { return RankEvent{kind, rank, 0, 0, {}, 0, false}; }

std::string who(const std::string& peer, std::optional<std::uint32_t> rank) {
  return rank ? "rank " + std::to_string(*rank) + " (" + peer + ")" : peer;
}

}  // namespace

Result<Server> Server::listen(const ServerConfig& config) {
  if (config.size == 0 || config.size > kMaxJobSize) {
    return Status(Errc::invalid_argument, "a job has 1 to " + std::to_string(kMaxJobSize) + " ranks");
  }
  if (config.listen_addresses.empty()) return Status(Errc::invalid_argument, "ftrun needs an address to listen on");
  Server server;
  server.port_ = config.port;
  for (const std::string& listen_address : config.listen_addresses) {
    auto fd = sys::listen_tcp(listen_address, server.port_);
    if (!fd) return fd.status();
    auto address = sys::local_address(fd->get());
    if (!address) return address.status();
    auto where = sys::split_host_port(*address);
    if (!where) return where.status();
    server.port_ = where->port;  // the first picks it when 0, the others take the same
    server.listeners_.push_back(std::move(*fd));
    server.addresses_.push_back(std::move(*address));
  }
  server.size_ = config.size;
  server.secret_ = config.secret;
  server.auth_timeout_ = config.auth_timeout;
  server.ranks_.resize(config.size);
  return server;
}

void Server::prepare_poll(std::vector<pollfd>& fds, Clock::time_point& deadline) {
  polled_.clear();
  for (const UniqueFd& listener : listeners_) fds.push_back({listener.get(), POLLIN, 0});
  for (const auto& c : connections_) {
    fds.push_back({c->fd.get(), static_cast<short>(c->out.empty() ? POLLIN : POLLIN | POLLOUT), 0});
    polled_.push_back(c.get());
    if (!c->rank) deadline = std::min(deadline, c->auth_deadline);
  }
  for (const PeerCheckState& check : peer_checks_) deadline = std::min(deadline, check.deadline);
}

void Server::dispatch(std::span<const pollfd> fds, Clock::time_point now) {
  const std::size_t listening = std::min(listeners_.size(), fds.size());
  const std::size_t n = std::min(polled_.size(), fds.size() - listening);
  for (std::size_t i = 0; i < n; ++i) {
    Connection& c = *polled_[i];
    const short revents = fds[listening + i].revents;
    if (!c.closed && (revents & (POLLIN | POLLHUP | POLLERR))) read_from(c);
    if (!c.closed && (revents & POLLOUT)) write_to(c);
  }
  for (std::size_t i = 0; i < listening; ++i) {
    if (fds[i].revents & POLLIN) accept_all(listeners_[i].get(), now);
  }
  for (const auto& c : connections_) {
    if (!c->closed && !c->rank && now >= c->auth_deadline) {
      reject(*c, "did not authenticate in time", true);
    }
  }
  expire_peer_checks(now);
  polled_.clear();
  std::erase_if(connections_, [](const auto& c) { return c->closed; });
}

Status Server::poll_once(std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  auto deadline = Clock::now() + timeout;
  prepare_poll(fds, deadline);
  if (::poll(fds.data(), fds.size(), sys::poll_timeout_ms(deadline, Clock::now())) < 0 && errno != EINTR) {
    return sys::errno_status(Errc::internal, "poll");
  }
  dispatch(fds, Clock::now());
  return {};
}

std::vector<RankEvent> Server::take_events() { return std::exchange(events_, {}); }

bool Server::fence_needs(std::uint32_t rank) const noexcept {
  return fence_entered_ > 0 && ranks_[rank].fences < fence_epoch_;
}

void Server::accept_all(int listener, Clock::time_point now) {
  for (;;) {
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN)
        base::logger().error("cannot accept a rank's connection: {}", std::strerror(errno));
      return;
    }
    sys::set_nodelay(fd);
    adopt(UniqueFd(fd), sys::peer_address(fd), now);
  }
}

void Server::adopt(UniqueFd fd, std::string peer, Clock::time_point now) {
  auto c = std::make_unique<Connection>();
  c->fd = std::move(fd);
  c->peer = std::move(peer);
  c->auth_deadline = now + auth_timeout_;
  const auto unauthenticated = [](const auto& p) { return !p->rank && !p->closed; };
  const auto pending =
      static_cast<std::size_t>(std::count_if(connections_.begin(), connections_.end(), unauthenticated));
  std::size_t expected = 0;
  for (const RankState& r : ranks_) expected += r.joined ? 0 : 1;
  if (pending >= expected + kSparePendingConnections) {
    // The oldest, connections_ being in accept order.
    auto oldest = std::find_if(connections_.begin(), connections_.end(), unauthenticated);
    if (oldest != connections_.end()) evict(**oldest);
  }
  connections_.push_back(std::move(c));
}

void Server::read_from(Connection& c) {
  char buffer[kReadChunk];
  for (;;) {
    ssize_t n = ::recv(c.fd.get(), buffer, sizeof buffer, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      base::logger().info("connection from {} failed: {}", who(c.peer, c.rank), std::strerror(errno));
      close(c);
      return;
    }
    if (n == 0) {
      if (c.reader.buffered() > 0) {
        base::logger().warn("{} closed its connection in the middle of a frame", who(c.peer, c.rank));
      }
      close(c);
      return;
    }
    c.reader.append(std::span<const char>(buffer, static_cast<std::size_t>(n)));
    for (;;) {
      auto message = c.reader.next();
      if (!message) {
        reject(c, message.status().to_string(), !c.rank);
        return;
      }
      if (!message->has_value()) break;
      if (!handle(c, std::move(**message))) return;
    }
  }
}

void Server::write_to(Connection& c) {
  while (!c.out.empty()) {
    const std::string& front = *c.out.front();
    ssize_t n = ::send(c.fd.get(), front.data() + c.out_offset, front.size() - c.out_offset, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      base::logger().info("cannot write to {}: {}", who(c.peer, c.rank), std::strerror(errno));
      close(c);
      return;
    }
    c.out_offset += static_cast<std::size_t>(n);
    if (c.out_offset == front.size()) {
      c.out.pop_front();
      c.out_offset = 0;
    }
  }
}

void Server::send(Connection& c, std::shared_ptr<const std::string> frame) {
  c.out.push_back(std::move(frame));
  write_to(c);
}

bool Server::handle(Connection& c, Message message) {
  if (!c.rank) {
    // Before authentication the reader admits nothing but a hello.
    return handle_hello(c, std::get<Hello>(message));
  }
  const std::uint32_t rank = *c.rank;
  RankState& state = ranks_[rank];
  return std::visit(
      Overloaded{
          [&](Put& put) {
            const std::size_t cost = put.key.size() + put.value.size() + kKvEntryOverhead;
            auto old = state.kv.find(put.key);
            const std::size_t old_cost =
                old == state.kv.end() ? 0 : put.key.size() + old->second.size() + kKvEntryOverhead;
            if (state.kv_bytes - old_cost + cost > kMaxRankKvBytes) {
              reject(c,
                     "put of key '" + put.key + "' exceeds the rank's budget of " +
                         std::to_string(kMaxRankKvBytes) + " bytes",
                     false);
              return false;
            }
            state.kv_bytes = state.kv_bytes - old_cost + cost;
            state.put_since_fence.insert(put.key);
            state.kv.insert_or_assign(std::move(put.key), std::move(put.value));
            return true;
          },
          [&](const Fence& fence) { return handle_fence(c, rank, fence.epoch); },
          [&](Abort& abort) {
            send(c, std::make_shared<const std::string>(encode(AbortAck{})));
            RankEvent e = event(RankEvent::Kind::aborted, rank);
            e.code = abort.code;
            e.message = std::move(abort.message);
            events_.push_back(std::move(e));
            return !c.closed;
          },
          [&](const Finalize&) {
            state.finalized = true;
            c.reader.allow({});  // nothing may follow
            send(c, std::make_shared<const std::string>(encode(FinalizeAck{})));
            events_.push_back(event(RankEvent::Kind::finalized, rank));
            return !c.closed;
          },
          [&](const PeerCheck& check) {
            if (check.peer >= size_) {
              reject(c, "peer_check of rank " + std::to_string(check.peer) + " in a job of " + std::to_string(size_),
                     false);
              return false;
            }
            start_peer_check(rank, check.peer, Clock::now());
            return !c.closed;
          },
          [&](ControlReply& reply) {
            if ((reply.id & kPeerCheckIdBit) != 0) {
              // The ping of a peer check: this rank polls. An id we no longer wait for (late) is dropped.
              auto it = std::find_if(peer_checks_.begin(), peer_checks_.end(),
                                     [&](const PeerCheckState& p) { return p.id == reply.id && p.peer == rank; });
              if (it != peer_checks_.end()) {
                const PeerCheckState check = *it;
                peer_checks_.erase(it);
                answer_peer_check(check.asker, check.peer, reply.ok);
              }
              return true;
            }
            RankEvent e = event(RankEvent::Kind::control_reply, rank);
            e.control_id = reply.id;
            e.ok = reply.ok;
            e.message = std::move(reply.text);
            events_.push_back(std::move(e));
            return true;
          },
          [&](const auto& other) {
            // The reader admits only the frames above; anything else is a bug here, not in the rank.
            reject(c, "internal error: unexpected " + std::string(to_string(type_of(Message(other)))), false);
            return false;
          },
      },
      message);
}

void Server::start_peer_check(std::uint32_t asker, std::uint32_t peer, Clock::time_point now) {
  next_peer_check_ = (next_peer_check_ + 1) & ~kPeerCheckIdBit;
  const std::uint32_t id = kPeerCheckIdBit | next_peer_check_;
  if (!send_control(peer, id, "ftmpi-control 1 ping")) {
    answer_peer_check(asker, peer, false);  // not connected (yet, or any more): it polls nothing here
    return;
  }
  peer_checks_.push_back({id, asker, peer, now + kPeerCheckWindow});
}

void Server::answer_peer_check(std::uint32_t asker, std::uint32_t peer, bool polling) {
  if (Connection* c = connection_of(asker)) send(*c, std::make_shared<const std::string>(encode(PeerStatus{peer, polling})));
}

Server::Connection* Server::connection_of(std::uint32_t rank) noexcept {
  for (const auto& c : connections_) {
    if (!c->closed && c->rank == rank) return c.get();
  }
  return nullptr;
}

void Server::expire_peer_checks(Clock::time_point now) {
  for (std::size_t i = 0; i < peer_checks_.size();) {
    if (now < peer_checks_[i].deadline) {
      ++i;
      continue;
    }
    const PeerCheckState check = peer_checks_[i];
    peer_checks_.erase(peer_checks_.begin() + static_cast<std::ptrdiff_t>(i));
    answer_peer_check(check.asker, check.peer, false);  // no answer in the window: it computes
  }
}

bool Server::send_control(std::uint32_t rank, std::uint32_t id, std::string_view request) {
  if (rank >= size_ || !ranks_[rank].connected || ranks_[rank].finalized) return false;
  if (request.size() > kMaxControlRequestBytes) return false;  // the rank would take it as malformed
  Connection* c = connection_of(rank);
  if (c == nullptr) return false;
  send(*c, std::make_shared<const std::string>(encode(Control{id, std::string(request)})));
  return !c->closed;
}

bool Server::handle_hello(Connection& c, const Hello& hello) {
  if (!secrets_equal(hello.secret, secret_)) {
    reject(c, "wrong secret", true);
    return false;
  }
  if (hello.rank >= size_) {
    reject(c,
           "claims rank " + std::to_string(hello.rank) + " of a job of " + std::to_string(size_) + " ranks",
           false);
    return false;
  }
  RankState& state = ranks_[hello.rank];
  if (state.joined) {
    reject(c, "rank " + std::to_string(hello.rank) + " connected a second time", false);
    return false;
  }
  c.rank = hello.rank;
  c.reader.allow(kRankToLauncher);
  state.joined = true;
  state.connected = true;
  base::logger().debug("rank {} (pid {}) connected from {}", hello.rank, hello.pid, c.peer);
  RankEvent connected = event(RankEvent::Kind::connected, hello.rank);
  connected.pid = hello.pid;
  events_.push_back(std::move(connected));
  send(c, std::make_shared<const std::string>(encode(Welcome{size_})));
  return !c.closed;
}

bool Server::handle_fence(Connection& c, std::uint32_t rank, std::uint32_t epoch) {
  RankState& state = ranks_[rank];
  if (epoch != state.fences + 1 || epoch != fence_epoch_) {
    reject(c, "fence epoch " + std::to_string(epoch) + " where " + std::to_string(fence_epoch_) + " was due",
           false);
    return false;
  }
  state.fences = epoch;
  ++fence_entered_;
  events_.push_back(event(RankEvent::Kind::fence_entered, rank));
  if (fence_entered_ == size_) complete_fence();
  return !c.closed;
}

void Server::complete_fence() {
  FenceDone done{fence_epoch_, {}};
  // Only what was put since the last fence: every rank has the rest already (a fence completes only
  // when every rank entered it, and each enters every fence). The finalize fence carries nothing.
  for (std::uint32_t r = 0; r < size_; ++r) {
    for (const std::string& key : ranks_[r].put_since_fence) done.entries.push_back({r, key, ranks_[r].kv.at(key)});
    ranks_[r].put_since_fence.clear();
  }
  // One encoded table shared by every connection's queue: N copies of an N-sized table would be N^2.
  auto frame = std::make_shared<const std::string>(encode(done));
  base::logger().debug("fence {} complete: {} entries, {} bytes to each rank", fence_epoch_,
                       done.entries.size(), frame->size());
  ++fence_epoch_;
  fence_entered_ = 0;
  for (const auto& c : connections_) {
    if (!c->closed && c->rank) send(*c, frame);
  }
}

void Server::evict(Connection& c) {
  ++evicted_;
  if (evicted_ == 1 || evicted_ % 1000 == 0) {
    base::logger().warn("too many unauthenticated connections: closed the oldest, from {} ({} so far)", c.peer,
                        evicted_);
  }
  // Best effort, on a fresh connection whose send buffer is empty: a rank told `busy` tries again.
  const std::string busy = encode(Message(Busy{}));
  (void)::send(c.fd.get(), busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  close(c);
}

void Server::reject(Connection& c, std::string_view why, bool auth_failure) {
  if (auth_failure) {
    ++auth_failures_;
    base::logger().warn("rejected connection from {}: {} ({} authentication failures so far)", c.peer, why,
                        auth_failures_);
  } else {
    ++protocol_errors_;
    base::logger().warn("closing connection of {}: {}", who(c.peer, c.rank), why);
  }
  close(c);
}

void Server::close(Connection& c) {
  if (c.closed) return;
  c.closed = true;
  c.fd.reset();
  c.out.clear();
  if (c.rank) {
    ranks_[*c.rank].connected = false;
    events_.push_back(event(RankEvent::Kind::disconnected, *c.rank));
  }
}

}  // namespace ftmpi::rte
