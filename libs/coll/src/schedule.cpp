#include "ftmpi/coll/schedule.hpp"

#include <cstring>
#include <utility>

#include "builder.hpp"

namespace ftmpi::coll {

using base::Status;
using detail::Action;

Status Schedule::fail(Status status) {
  state_ = State::failed;
  status_ = std::move(status);
  return status_;
}

Status Schedule::start_round() {
  state_ = State::running;
  waiting_ = cursor_;
  std::size_t i = cursor_;
  for (; i < actions_.size() && actions_[i].type != Action::Type::end_round; ++i) {
    Action& a = actions_[i];
    switch (a.type) {
      case Action::Type::send: {
        auto id = transport_->isend(a.from, a.size, a.peer, tag_);
        if (!id) return fail(id.status());
        a.request = *id;
        break;
      }
      case Action::Type::recv: {
        auto id = transport_->irecv(a.to, a.size, a.peer, tag_);
        if (!id) return fail(id.status());
        a.request = *id;
        break;
      }
      case Action::Type::copy: std::memmove(a.to, a.from, a.size); break;
      case Action::Type::reduce: reduction_->apply(a.from, a.to, a.size); break;
      case Action::Type::end_round: break;
    }
  }
  round_end_ = i;
  return {};
}

Status Schedule::next_round() {
  cursor_ = round_end_ + 1;
  if (cursor_ >= actions_.size()) {
    state_ = State::done;
    return {};
  }
  return start_round();
}

base::Result<bool> Schedule::test() {
  if (state_ == State::failed) return status_;
  if (state_ == State::done) return true;
  if (state_ == State::ready) {
    if (Status s = start_round(); !s) return s;
  }
  if (Status s = transport_->progress(); !s) return fail(std::move(s));
  while (state_ == State::running) {
    for (; waiting_ < round_end_; ++waiting_) {
      Action& a = actions_[waiting_];
      if (a.type != Action::Type::send && a.type != Action::Type::recv) continue;
      auto complete = transport_->test(a.request);
      if (!complete) return fail(complete.status());
      if (!*complete) return false;
    }
    if (Status s = next_round(); !s) return s;
  }
  return state_ == State::done;
}

Status Schedule::wait() {
  if (state_ == State::ready) {
    if (Status s = start_round(); !s) return s;
  }
  while (state_ == State::running) {
    for (; waiting_ < round_end_; ++waiting_) {
      Action& a = actions_[waiting_];
      if (a.type != Action::Type::send && a.type != Action::Type::recv) continue;
      if (Status s = transport_->wait(a.request); !s) return fail(std::move(s));
    }
    if (Status s = next_round(); !s) return s;
  }
  return status_;
}

std::size_t Schedule::communication_rounds() const noexcept {
  std::size_t rounds = 0;
  bool communicates = false;
  for (const Action& a : actions_) {
    if (a.type == Action::Type::send || a.type == Action::Type::recv) communicates = true;
    if (a.type == Action::Type::end_round) {
      rounds += communicates ? 1 : 0;
      communicates = false;
    }
  }
  return rounds + (communicates ? 1 : 0);
}

std::size_t Schedule::messages_sent() const noexcept {
  std::size_t sends = 0;
  for (const Action& a : actions_) sends += a.type == Action::Type::send ? 1 : 0;
  return sends;
}

namespace detail {

ScheduleBuilder::ScheduleBuilder(Transport& transport, int tag, const Reduction* reduction)
    : rank_(transport.rank()), size_(transport.size()) {
  schedule_.transport_ = &transport;
  schedule_.tag_ = tag;
  schedule_.actions_.reserve(16);  // most small collectives fit: one allocation
  if (reduction != nullptr) schedule_.reduction_ = *reduction;
}

void ScheduleBuilder::push(Action::Type type, int peer, const void* from, void* to, std::size_t size) {
  Action a;
  a.type = type;
  a.peer = peer;
  a.from = static_cast<const std::byte*>(from);
  a.to = static_cast<std::byte*>(to);
  a.size = size;
  schedule_.actions_.push_back(a);
}

void ScheduleBuilder::send(const void* data, std::size_t bytes, int peer) {
  if (bytes != 0) push(Action::Type::send, peer, data, nullptr, bytes);
}
void ScheduleBuilder::recv(void* data, std::size_t bytes, int peer) {
  if (bytes != 0) push(Action::Type::recv, peer, nullptr, data, bytes);
}
void ScheduleBuilder::send_empty(int peer) { push(Action::Type::send, peer, nullptr, nullptr, 0); }
void ScheduleBuilder::recv_empty(int peer) { push(Action::Type::recv, peer, nullptr, nullptr, 0); }

void ScheduleBuilder::copy(const void* from, void* to, std::size_t bytes) {
  if (bytes != 0 && from != to) push(Action::Type::copy, -1, from, to, bytes);
}
void ScheduleBuilder::reduce(const void* in, void* inout, std::size_t count) {
  if (count != 0) push(Action::Type::reduce, -1, in, inout, count);
}

void ScheduleBuilder::end_round() {
  auto& actions = schedule_.actions_;
  if (!actions.empty() && actions.back().type != Action::Type::end_round) {
    push(Action::Type::end_round, -1, nullptr, nullptr, 0);
  }
}

std::byte* ScheduleBuilder::scratch(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  schedule_.scratch_.push_back(std::make_unique_for_overwrite<std::byte[]>(bytes));
  return schedule_.scratch_.back().get();
}

Schedule ScheduleBuilder::finish() && {
  auto& actions = schedule_.actions_;
  if (!actions.empty() && actions.back().type == Action::Type::end_round) actions.pop_back();
  if (actions.empty()) schedule_.state_ = Schedule::State::done;
  return std::move(schedule_);
}

}  // namespace detail
}  // namespace ftmpi::coll
