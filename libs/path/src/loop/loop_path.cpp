#include "ftmpi/path/loop.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace ftmpi::path {

LoopNetwork::LoopNetwork(std::size_t ranks, LoopOptions options)
    : size_(ranks),
      options_(options),
      queues_(std::make_unique<Queue[]>(ranks)),
      waiting_(std::make_unique<std::uint32_t[]>(ranks)) {}

LoopPath::LoopPath(LoopNetwork& network, Rank me) : network_(network), me_(me) {
  // Set-up, not the data path: a wrong rank is a bug in the test that builds the network.
  if (me >= network.size()) {
    throw std::out_of_range("loop rank " + std::to_string(me) + " on a network of " +
                            std::to_string(network.size()) + " ranks");
  }
  info_.kind = PathKind::loop;
  info_.name = "loop " + std::to_string(me);
  info_.max_frame = network.options().mtu;
  info_.reliable = network.options().reliable;
  info_.single_copy_read = network.options().single_copy_read;
  info_.gathers = network.options().gathers;
  info_.bandwidth_hint = 1e9;  // nominal; nothing in engine tests depends on it
}

std::uint32_t* LoopPath::waiting_word() noexcept {
  return network_.options().shares_waiting ? &network_.waiting_[me_] : nullptr;
}

std::optional<bool> LoopPath::peer_waiting(Rank peer) const noexcept {
  if (!network_.options().shares_waiting || peer >= network_.size()) return std::nullopt;
  return std::atomic_ref<std::uint32_t>(network_.waiting_[peer]).load(std::memory_order_relaxed) != 0;
}

base::Status LoopPath::send(Rank peer, FrameWriter& frame) noexcept {
  if (peer >= network_.size()) {
    return {base::Errc::invalid_argument, "rank " + std::to_string(peer) + " is not on this loop network of " +
                                              std::to_string(network_.size()) + " ranks"};
  }
  const std::size_t size = frame.frame_size();
  if (size > info_.max_frame) {
    return {base::Errc::out_of_range, "frame of " + std::to_string(size) + " bytes exceeds the loop MTU of " +
                                          std::to_string(info_.max_frame)};
  }
  // Written outside the lock: the writer may be slow (it checksums), and the copy is ours alone.
  std::vector<std::byte> bytes(size);
  frame.write(bytes);
  LoopNetwork::Queue& queue = network_.queues_[peer];
  std::lock_guard lock(queue.mutex);
  queue.frames.push_back(std::move(bytes));
  return {};
}

std::size_t LoopPath::poll(FrameSink& sink, std::size_t budget) noexcept {
  std::size_t handed = 0;
  while (handed < budget) {
    if (inbox_.empty()) {
      LoopNetwork::Queue& queue = network_.queues_[me_];
      std::lock_guard lock(queue.mutex);
      inbox_.swap(queue.frames);
    }
    if (inbox_.empty()) break;
    sink.on_frame(inbox_.front());
    inbox_.pop_front();
    ++handed;
  }
  return handed;
}

}  // namespace ftmpi::path
