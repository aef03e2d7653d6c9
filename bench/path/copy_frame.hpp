// A frame copied from a buffer by the path's writer, as the engine writes a user buffer's bytes.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>

#include "ftmpi/path/path.hpp"

namespace ftmpi::bench {

class CopyFrame final : public path::FrameWriter {
 public:
  CopyFrame(const std::byte* source, std::size_t size) : source_(source), size_(size) {}
  std::size_t frame_size() const noexcept override { return size_; }
  void write(std::span<std::byte> room) noexcept override { std::memcpy(room.data(), source_, size_); }

 private:
  const std::byte* source_;
  std::size_t size_;
};

}  // namespace ftmpi::bench
