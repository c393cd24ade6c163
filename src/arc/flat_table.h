// FlatTable and FixedPool: the index and the node store of the page-granular
// policies that replay traces (`arcstore sim`'s simulators and Duet), kept
// apart from the engine's ARC, which has its own hash table and locks.
//
// FlatTable is an open-addressing hash table from 64-bit keys to pointers.

// Linear probing over a power-of-two array of {key, value} slots, Fibonacci
// hashing, deletion by backward shift (no tombstones), no allocation after
// construction: the capacity is fixed by the most entries the caller will
// ever hold (the simulated cache bounds it: at most 2c pages are tracked),
// at a load factor of at most 2/3.
//
// FixedPool hands out nodes from one array allocated up front and takes them
// back, so a policy never allocates per request. A node comes out
// value-initialised.
//
// Thread-safety: none. A FlatTable owns nothing that the values point to; a
// FixedPool owns its nodes.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/check.h"

namespace arcstore::arc {

template <typename V>
class FlatTable {
 public:
  explicit FlatTable(uint64_t max_entries) {
    uint64_t cap = std::bit_ceil(std::max<uint64_t>(16, max_entries + max_entries / 2 + 1));
    shift_ = 64 - std::countr_zero(cap);
    mask_ = cap - 1;
    slots_ = std::make_unique<Slot[]>(cap);
    max_entries_ = max_entries;
  }

  V* Find(uint64_t key) const {
    for (uint64_t i = Home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == nullptr) return nullptr;
      if (s.key == key) return s.value;
    }
  }

  // `key` must not be present.
  void Insert(uint64_t key, V* value) {
    ARC_DCHECK(value != nullptr);
    ARC_DCHECK_LT(size_, max_entries_);
    uint64_t i = Home(key);
    while (slots_[i].value != nullptr) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value};
    size_++;
  }

  // `key` must be present.
  void Erase(uint64_t key) {
    uint64_t i = Home(key);
    while (slots_[i].key != key || slots_[i].value == nullptr) i = (i + 1) & mask_;
    EraseSlot(i);
  }

  // The entry whose value is `value`, its key's Home() being `home` (a caller
  // that keeps the home beside its value erases without the key). Present.
  void EraseValue(uint64_t home, const V* value) {
    uint64_t i = home;
    while (slots_[i].value != value) i = (i + 1) & mask_;
    EraseSlot(i);
  }

  // Whether `value` is in the probe run that starts at `home` (checks).
  bool Contains(uint64_t home, const V* value) const {
    for (uint64_t i = home; slots_[i].value != nullptr; i = (i + 1) & mask_) {
      if (slots_[i].value == value) return true;
    }
    return false;
  }

  // Where the probe for `key` starts, in [0, capacity).
  uint64_t Home(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ULL) >> shift_; }
  uint64_t capacity() const { return mask_ + 1; }
  uint64_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = 0;
    V* value = nullptr;
  };
  // Backward shift: pull later members of the probe run into the hole at `i`
  // when their home position does not lie cyclically in (hole, their slot].
  void EraseSlot(uint64_t i) {
    for (uint64_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].value == nullptr) break;
      const uint64_t home = Home(slots_[j].key);
      const bool stays = (j > i) ? (home > i && home <= j) : (home > i || home <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    size_--;
  }

  std::unique_ptr<Slot[]> slots_;
  uint64_t mask_ = 0;
  int shift_ = 0;
  uint64_t size_ = 0;
  uint64_t max_entries_ = 0;
};

template <typename T>
class FixedPool {
 public:
  explicit FixedPool(uint64_t max_nodes)
      : nodes_(std::make_unique<T[]>(max_nodes)), max_(max_nodes) {
    free_.reserve(max_nodes);
  }
  FixedPool(const FixedPool&) = delete;
  FixedPool& operator=(const FixedPool&) = delete;

  T* Get() {
    if (!free_.empty()) {
      T* n = free_.back();
      free_.pop_back();
      return n;
    }
    ARC_CHECK_LT(used_, max_);
    return &nodes_[used_++];
  }
  void Put(T* n) {
    *n = T{};
    free_.push_back(n);
  }
  uint64_t in_use() const { return used_ - free_.size(); }
  // Every node handed out so far, in use or back in the pool (tests walk them).
  const T* begin() const { return nodes_.get(); }
  const T* end() const { return nodes_.get() + used_; }

 private:
  std::unique_ptr<T[]> nodes_;
  uint64_t max_;
  uint64_t used_ = 0;
  std::vector<T*> free_;
};

}  // namespace arcstore::arc
