// Integer handles (mpi.h): the top byte names the kind of object, the low bits index that kind's table.
// A handle of another kind, or an index past the table, finds nothing, so mixing up arguments of the
// same C type (all handles are int) is caught instead of misread.
#pragma once

#include <cstdint>
#include <deque>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

namespace ftmpi::mpi {

enum class HandleKind : std::uint8_t {
  comm = 0x44,
  group = 0x48,
  datatype = 0x4c,
  info = 0x50,
  errhandler = 0x54,
  op = 0x58,
  win = 0x5c,
  keyval = 0x64,
  message = 0x68,
  file = 0x6c,
};

constexpr int make_handle(HandleKind kind, std::uint32_t index) noexcept {
  return static_cast<int>((static_cast<std::uint32_t>(kind) << 24) | index);
}

// The table index `handle` names if it is a handle of `kind`.
constexpr std::optional<std::uint32_t> handle_index(int handle, HandleKind kind) noexcept {
  const auto bits = static_cast<std::uint32_t>(handle);
  if ((bits >> 24) != static_cast<std::uint32_t>(kind)) return std::nullopt;
  return bits & 0x00ffffffu;
}

// The object a handle names in its kind's table, or null when it names none.
template <HandleKind Kind, typename Table>
auto find_handle(Table& table, int handle) noexcept -> decltype(std::data(table)) {
  const auto index = handle_index(handle, Kind);
  return index && *index < std::size(table) ? std::data(table) + *index : nullptr;
}

// A table of objects that programs create and free (groups, datatypes, ops, info objects, keyvals):
// handles of one kind, slots never move (a deque), and a freed slot is given out again. T has a
// `bool live` member; index 0 is never given out, so that the null handle (0) finds nothing.
template <HandleKind Kind, typename T>
class HandleTable {
 public:
  HandleTable() { grow(); }

  // Takes `object` into a slot (fresh or freed) and returns its handle.
  int add(T&& object) {
    object.live = true;
    std::uint32_t index = 0;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
      slots_[index] = std::move(object);
    } else {
      index = static_cast<std::uint32_t>(slots_.size());
      grow();
      slots_.back() = std::move(object);
    }
    return make_handle(Kind, index);
  }
  // Puts `object` at `index` (a predefined handle); the slots below it must exist.
  void put(std::uint32_t index, T&& object) {
    object.live = true;
    while (slots_.size() <= index) grow();
    slots_[index] = std::move(object);
  }
  // Keeps indices below `count` out of add(): room for predefined handles put() later, or never.
  void reserve(std::uint32_t count) {
    while (slots_.size() < count) grow();
  }
  T* find(int handle) noexcept {
    const auto index = handle_index(handle, Kind);
    if (!index || *index == 0 || *index >= by_index_.size()) return nullptr;
    T* object = by_index_[*index];
    return object->live ? object : nullptr;
  }
  // Frees the slot `handle` names (which must be live).
  void remove(int handle) {
    const std::uint32_t index = *handle_index(handle, Kind);
    slots_[index] = T{};
    free_.push_back(index);
  }

 private:
  void grow() { by_index_.push_back(&slots_.emplace_back()); }

  std::deque<T> slots_;
  // &slots_[i]: every MPI call looks its objects up, and indexing a deque costs several times a vector's.
  std::vector<T*> by_index_;
  std::vector<std::uint32_t> free_;
};

}  // namespace ftmpi::mpi
