// FlatTable: an open-addressing hash table from 64-bit keys to pointers, for
// the simulator's hot loop.
//
// Linear probing over a power-of-two array of {key, value} slots, Fibonacci
// hashing, deletion by backward shift (no tombstones), no allocation after
// construction: the capacity is fixed by the most entries the caller will
// ever hold (the simulated cache bounds it: at most 2c pages are tracked),
// at a load factor of at most 2/3.
//
// Thread-safety: none. Owns nothing that the values point to.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>

#include "base/check.h"

namespace arcstore::sim {

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
    // Backward shift: pull later members of the probe run into the hole when
    // their home position does not lie cyclically in (hole, their slot].
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

  uint64_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = 0;
    V* value = nullptr;
  };
  uint64_t Home(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ULL) >> shift_; }

  std::unique_ptr<Slot[]> slots_;
  uint64_t mask_ = 0;
  int shift_ = 0;
  uint64_t size_ = 0;
  uint64_t max_entries_ = 0;
};

}  // namespace arcstore::sim
