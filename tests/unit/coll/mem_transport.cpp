#include "mem_transport.hpp"

#include <cstring>
#include <exception>
#include <thread>

namespace ftmpi::coll::test {

using base::Errc;
using base::Result;
using base::Status;

class MemWorld::RankTransport final : public Transport {
 public:
  RankTransport(MemWorld& world, int rank) : world_(world), rank_(rank) {}

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return world_.size(); }

  Result<RequestId> isend(const void* data, std::size_t bytes, int dest, int tag) override {
    std::lock_guard lock(world_.mutex_);
    if (world_.aborted_) return Status(Errc::internal, "aborted: another rank failed");
    if (dest < 0 || dest >= size() || tag < 0) {
      return Status(Errc::invalid_argument, "isend to rank " + std::to_string(dest) + " tag " + std::to_string(tag));
    }
    Mailbox& mine = world_.mailboxes_[static_cast<std::size_t>(rank_)];
    const RequestId id = mine.next_request++;
    mine.requests[id] = {};
    ++world_.sent_;
    Message message;
    message.bytes = bytes;
    message.sender = rank_;
    message.send_request = id;
    const bool buffered = bytes <= world_.eager_max_;
    if (buffered) {
      const auto* p = static_cast<const std::byte*>(data);
      message.copy.assign(p, p + bytes);
    } else {
      message.borrowed = static_cast<const std::byte*>(data);
    }
    Mailbox& theirs = world_.mailboxes_[static_cast<std::size_t>(dest)];
    auto& waiting = theirs.posted[{rank_, tag}];
    if (!waiting.empty()) {
      PostedReceive receive = waiting.front();
      waiting.pop_front();
      world_.deliver(dest, message, receive);
    } else {
      theirs.unexpected[{rank_, tag}].push_back(std::move(message));
    }
    if (buffered) world_.complete(rank_, id, {});
    return id;
  }

  Result<RequestId> irecv(void* data, std::size_t bytes, int source, int tag) override {
    std::lock_guard lock(world_.mutex_);
    // After an abort, ranks leave with sends in flight whose buffers die: match nothing more.
    if (world_.aborted_) return Status(Errc::internal, "aborted: another rank failed");
    if (source < 0 || source >= size() || tag < 0) {
      return Status(Errc::invalid_argument, "irecv from rank " + std::to_string(source) + " tag " + std::to_string(tag));
    }
    Mailbox& mine = world_.mailboxes_[static_cast<std::size_t>(rank_)];
    const RequestId id = mine.next_request++;
    mine.requests[id] = {};
    PostedReceive receive{static_cast<std::byte*>(data), bytes, id};
    auto& arrived = mine.unexpected[{source, tag}];
    if (!arrived.empty()) {
      Message message = std::move(arrived.front());
      arrived.pop_front();
      world_.deliver(rank_, message, receive);
    } else {
      mine.posted[{source, tag}].push_back(receive);
    }
    return id;
  }

  Result<bool> test(RequestId request) override {
    std::lock_guard lock(world_.mutex_);
    return take_if_done(request);
  }

  Status wait(RequestId request) override {
    std::unique_lock lock(world_.mutex_);
    for (;;) {
      auto done = take_if_done(request);
      if (!done) return done.status();
      if (*done) return {};
      if (world_.aborted_) return Status(Errc::internal, "aborted: another rank failed");
      const std::uint64_t seen = world_.changes_;
      if (!world_.changed_.wait_for(lock, world_.patience_,
                                    [&] { return world_.changes_ != seen || world_.aborted_; })) {
        return Status(Errc::internal, "rank " + std::to_string(rank_) + " waited " +
                                          std::to_string(world_.patience_.count()) +
                                          " ms for a request with nothing happening: deadlock");
      }
    }
  }

  Status progress() override { return {}; }

 private:
  // Under the world's mutex.
  Result<bool> take_if_done(RequestId request) {
    auto& requests = world_.mailboxes_[static_cast<std::size_t>(rank_)].requests;
    auto it = requests.find(request);
    if (it == requests.end()) {
      return Status(Errc::invalid_argument, "rank " + std::to_string(rank_) + ": unknown request " +
                                                std::to_string(request));
    }
    if (!it->second.done) return false;
    Status status = it->second.status;
    requests.erase(it);
    if (!status) return status;
    return true;
  }

  MemWorld& world_;
  int rank_;
};

MemWorld::MemWorld(int size, std::size_t eager_max, std::chrono::milliseconds patience)
    : mailboxes_(static_cast<std::size_t>(size)), eager_max_(eager_max), patience_(patience) {
  for (int r = 0; r < size; ++r) transports_.push_back(std::make_unique<RankTransport>(*this, r));
}

MemWorld::~MemWorld() = default;

Transport& MemWorld::transport(int rank) { return *transports_[static_cast<std::size_t>(rank)]; }

void MemWorld::deliver(int receiver, Message& message, const PostedReceive& receive) {
  Status status;
  if (message.bytes != receive.bytes) {
    status = Status(Errc::malformed, "rank " + std::to_string(receiver) + " received " +
                                         std::to_string(message.bytes) + " bytes from rank " +
                                         std::to_string(message.sender) + " for a receive of " +
                                         std::to_string(receive.bytes));
  } else if (message.bytes != 0) {
    std::memcpy(receive.data, message.borrowed != nullptr ? message.borrowed : message.copy.data(),
                message.bytes);
  }
  complete(receiver, receive.request, status);
  if (message.borrowed != nullptr) complete(message.sender, message.send_request, {});
}

void MemWorld::complete(int rank, RequestId request, Status status) {
  auto& state = mailboxes_[static_cast<std::size_t>(rank)].requests[request];
  state.done = true;
  state.status = std::move(status);
  ++changes_;
  changed_.notify_all();
}

std::uint64_t MemWorld::changes() const {
  std::lock_guard lock(mutex_);
  return changes_;
}

bool MemWorld::await_change(std::uint64_t seen) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, patience_, [&] { return changes_ != seen || aborted_; }) && !aborted_;
}

void MemWorld::abort() {
  std::lock_guard lock(mutex_);
  aborted_ = true;
  changed_.notify_all();
}

bool MemWorld::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

std::uint64_t MemWorld::messages_sent() const {
  std::lock_guard lock(mutex_);
  return sent_;
}

std::string MemWorld::leftovers() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (std::size_t r = 0; r < mailboxes_.size(); ++r) {
    const Mailbox& box = mailboxes_[r];
    for (const auto& [key, queue] : box.unexpected) {
      if (!queue.empty()) {
        out += "rank " + std::to_string(r) + ": " + std::to_string(queue.size()) +
               " unreceived message(s) from rank " + std::to_string(key.first) + " tag " +
               std::to_string(key.second) + "; ";
      }
    }
    for (const auto& [key, queue] : box.posted) {
      if (!queue.empty()) {
        out += "rank " + std::to_string(r) + ": " + std::to_string(queue.size()) +
               " unmatched receive(s) from rank " + std::to_string(key.first) + " tag " +
               std::to_string(key.second) + "; ";
      }
    }
    if (!box.requests.empty()) {
      out += "rank " + std::to_string(r) + ": " + std::to_string(box.requests.size()) + " unreleased request(s); ";
    }
  }
  return out;
}

std::vector<std::string> run_ranks(MemWorld& world, const RankBody& body) {
  const int n = world.size();
  std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto& mine = failures[static_cast<std::size_t>(r)];
      try {
        body(r, world.transport(r), mine);
      } catch (const std::exception& e) {
        mine.push_back(std::string("exception: ") + e.what());
      }
      if (!mine.empty()) world.abort();
    });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> all;
  for (int r = 0; r < n; ++r) {
    for (const auto& f : failures[static_cast<std::size_t>(r)]) all.push_back("rank " + std::to_string(r) + ": " + f);
  }
  return all;
}

}  // namespace ftmpi::coll::test
