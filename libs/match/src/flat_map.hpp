// A small open-addressing hash map for the matcher's hot path.
//
// std::unordered_map costs a node allocation per insertion and an integer division (prime bucket
// count) per lookup; a match does half a dozen lookups, which made the map most of the matcher's time.
// This one keeps keys and values inline in one power-of-two array, probes linearly from a multiplicative
// hash, and deletes by shifting successors back (no tombstones, so probe chains never rot). The load
// factor stays at or below 1/2, so a miss ends after a slot or two.
//
// Pointers returned by find() and insert() are valid until the next insert, erase or erase_if.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ftmpi::match::detail {

// Spreads a 64-bit key over the high bits, which pick the slot. Receive handles are often pointers
// (low bits zero) and sequence numbers are consecutive; both come out well spread.
inline std::uint64_t spread(std::uint64_t x) noexcept {
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 32;
  return x * 0x9e3779b97f4a7c15ULL;
}

// Hash: a callable mapping Key to std::uint64_t, passed through spread() here.
template <typename Key, typename Value, typename Hash>
class FlatMap {
 public:
  FlatMap() { reset(kMinCapacity); }

  std::size_t size() const noexcept { return size_; }

  Value* find(const Key& key) noexcept {
    std::size_t i = slot_of(key);
    return i == kAbsent ? nullptr : &slots_[i].value;
  }
  const Value* find(const Key& key) const noexcept {
    std::size_t i = slot_of(key);
    return i == kAbsent ? nullptr : &slots_[i].value;
  }

  // Inserts key -> value; the key must be absent.
  Value& insert(const Key& key, const Value& value) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    std::size_t i = home(key);
    while (slots_[i].used) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value, true};
    ++size_;
    return slots_[i].value;
  }

  // Removes key, if present.
  void erase(const Key& key) noexcept {
    std::size_t hole = slot_of(key);
    if (hole == kAbsent) return;
    // Backward shift: pull each later member of the probe run into the hole unless that would move it
    // before its home slot.
    for (std::size_t next = (hole + 1) & mask_; slots_[next].used; next = (next + 1) & mask_) {
      std::size_t want = home(slots_[next].key);
      bool stays = hole <= next ? (hole < want && want <= next) : (hole < want || want <= next);
      if (stays) continue;
      slots_[hole] = slots_[next];
      hole = next;
    }
    slots_[hole].used = false;
    --size_;
  }

  // Removes every entry for which remove(key, value) is true (called once per entry), and shrinks the
  // array to fit what is left.
  template <typename Predicate>
  void erase_if(Predicate remove) {
    std::vector<Slot> kept;
    for (const Slot& slot : slots_) {
      if (slot.used && !remove(slot.key, slot.value)) kept.push_back(slot);
    }
    reset(std::max(kMinCapacity, std::bit_ceil(2 * kept.size() + 1)));
    for (const Slot& slot : kept) insert(slot.key, slot.value);
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };

  static constexpr std::size_t kMinCapacity = 16;
  static constexpr std::size_t kAbsent = ~std::size_t{0};

  std::size_t slot_of(const Key& key) const noexcept {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (!slots_[i].used) return kAbsent;
      if (slots_[i].key == key) return i;
    }
  }

  std::size_t home(const Key& key) const noexcept {
    return static_cast<std::size_t>(spread(Hash{}(key)) >> shift_);
  }

  void reset(std::size_t capacity) {
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
    size_ = 0;
  }

  void rehash(std::size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    reset(capacity);
    for (const Slot& slot : old) {
      if (slot.used) insert(slot.key, slot.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace ftmpi::match::detail
