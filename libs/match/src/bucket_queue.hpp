// A queue whose entries are threaded on several FIFO buckets at once (see the design comment in
// ftmpi/match/matcher.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "flat_map.hpp"

namespace ftmpi::match::detail {

// Names one FIFO bucket: a context and a (source, tag) pair in which either may be a wildcard value.
struct BucketKey {
  std::uint32_t context = 0;
  std::int32_t source = 0;
  std::int32_t tag = 0;
  friend bool operator==(const BucketKey&, const BucketKey&) = default;
};

struct BucketKeyHash {
  std::uint64_t operator()(const BucketKey& key) const noexcept {
    std::uint64_t source_and_tag =
        (std::uint64_t{static_cast<std::uint32_t>(key.source)} << 32) | static_cast<std::uint32_t>(key.tag);
    return source_and_tag ^ (std::uint64_t{key.context} * 0xc2b2ae3d27d4eb4fULL);
  }
};

inline constexpr std::uint32_t kNoEntry = std::numeric_limits<std::uint32_t>::max();

// A queue of Payloads in which every entry sits on `Views` FIFO buckets at once, one per view, each
// bucket named by a BucketKey. The bucket keys of different views never coincide (the caller's keys
// differ in which fields are wildcards), so all views share one map. Push, erase and front are O(1)
// expected.
//
// A bucket that empties stays, because the next message usually refills it (same source and tag,
// iteration after iteration), which saves removing and re-adding it per message. Once empty buckets
// outnumber the rest (and a floor), one sweep removes them all, so memory stays proportional to the
// entries and the sweep costs O(1) amortized over the erases that emptied them.
template <typename Payload, std::size_t Views>
class BucketQueue {
 public:
  using Keys = std::array<BucketKey, Views>;

  // Appends to the tail of each view's bucket; returns the entry's id, valid until it is erased.
  std::uint32_t push_back(const Payload& payload, const Keys& keys) {
    std::uint32_t id = allocate(entries_, free_entries_);
    Entry& entry = entries_[id];
    entry.payload = payload;
    for (std::size_t view = 0; view < Views; ++view) {
      std::uint32_t bucket_id = bucket_for(keys[view]);
      Bucket& bucket = buckets_[bucket_id];
      entry.buckets[view] = bucket_id;
      entry.links[view] = Link{bucket.tail, kNoEntry};
      if (bucket.tail == kNoEntry) {
        bucket.head = id;
        if (bucket.emptied) {
          bucket.emptied = false;
          --emptied_;
        }
      } else {
        entries_[bucket.tail].links[view].next = id;
      }
      bucket.tail = id;
    }
    ++size_;
    return id;
  }

  // The oldest entry in the bucket named `key`, or kNoEntry.
  std::uint32_t front(const BucketKey& key) const noexcept {
    const std::uint32_t bucket_id = find_bucket(key);
    return bucket_id == kNoEntry ? kNoEntry : buckets_[bucket_id].head;
  }

  // The entry after `id` in its bucket of view `view`, or kNoEntry.
  std::uint32_t next(std::uint32_t id, std::size_t view) const noexcept { return entries_[id].links[view].next; }

  const Payload& payload(std::uint32_t id) const noexcept { return entries_[id].payload; }

  void erase(std::uint32_t id) {
    Entry& entry = entries_[id];
    for (std::size_t view = 0; view < Views; ++view) {
      Link link = entry.links[view];
      Bucket& bucket = buckets_[entry.buckets[view]];
      if (link.prev == kNoEntry) {
        bucket.head = link.next;
      } else {
        entries_[link.prev].links[view].next = link.next;
      }
      if (link.next == kNoEntry) {
        bucket.tail = link.prev;
      } else {
        entries_[link.next].links[view].prev = link.prev;
      }
      if (bucket.head == kNoEntry) {
        bucket.emptied = true;
        ++emptied_;
      }
    }
    free_entries_.push_back(id);
    --size_;
    if (emptied_ > kSweepFloor && emptied_ > bucket_ids_.size() / 2) sweep_emptied_buckets();
  }

  std::size_t size() const noexcept { return size_; }

 private:
  struct Bucket {
    std::uint32_t head = kNoEntry;
    std::uint32_t tail = kNoEntry;
    bool emptied = false;  // counted in emptied_
  };
  struct Link {
    std::uint32_t prev = kNoEntry;
    std::uint32_t next = kNoEntry;
  };
  struct Entry {
    Payload payload{};
    std::array<Link, Views> links{};
    std::array<std::uint32_t, Views> buckets{};  // ids into buckets_
  };

  // Empty buckets kept regardless of how few others there are: the working set of a typical program.
  static constexpr std::size_t kSweepFloor = 256;

  // The bucket named `key`, or kNoEntry. Remembers the last one found: a program that receives the same
  // (source, tag) over and over, the common case, then skips the hash.
  std::uint32_t find_bucket(const BucketKey& key) const noexcept {
    if (last_bucket_ != kNoEntry && last_key_ == key) return last_bucket_;
    const std::uint32_t* found = bucket_ids_.find(key);
    if (found == nullptr) return kNoEntry;
    last_key_ = key;
    last_bucket_ = *found;
    return *found;
  }

  std::uint32_t bucket_for(const BucketKey& key) {
    if (const std::uint32_t found = find_bucket(key); found != kNoEntry) return found;
    std::uint32_t bucket_id = allocate(buckets_, free_buckets_);
    buckets_[bucket_id] = Bucket{};
    bucket_ids_.insert(key, bucket_id);
    return bucket_id;
  }

  void sweep_emptied_buckets() {
    last_bucket_ = kNoEntry;  // the sweep may free it
    bucket_ids_.erase_if([this](const BucketKey&, std::uint32_t bucket_id) {
      if (!buckets_[bucket_id].emptied) return false;
      free_buckets_.push_back(bucket_id);
      return true;
    });
    emptied_ = 0;
  }

  // Ids index vectors that only grow, so they stay valid when a vector reallocates; freed slots are
  // reused newest first, while their cache lines are still warm.
  template <typename T>
  static std::uint32_t allocate(std::vector<T>& slots, std::vector<std::uint32_t>& free) {
    if (!free.empty()) {
      std::uint32_t id = free.back();
      free.pop_back();
      return id;
    }
    slots.emplace_back();
    return static_cast<std::uint32_t>(slots.size() - 1);
  }

  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_entries_;
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_buckets_;
  FlatMap<BucketKey, std::uint32_t, BucketKeyHash> bucket_ids_;
  std::size_t emptied_ = 0;  // buckets with no entry, left in place until the next sweep
  mutable BucketKey last_key_{};
  mutable std::uint32_t last_bucket_ = kNoEntry;  // find_bucket's memory; kNoEntry when none
  std::size_t size_ = 0;
};

}  // namespace ftmpi::match::detail
