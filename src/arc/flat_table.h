// FlatTable, FixedPool and FlatIndex: the indexes and the node store of the
// page-granular policies that replay traces (`arcstore sim`'s simulators and
// Duet), kept apart from the engine's ARC, which has its own hash table and
// locks.
//
// FlatTable is an open-addressing hash table from 64-bit keys to pointers:
// linear probing over a power-of-two array of {key, value} slots, Fibonacci
// hashing, deletion by backward shift (no tombstones), no allocation after
// construction: the capacity is fixed by the most entries the caller will
// ever hold (the simulated cache bounds it: at most 2c pages are tracked),
// at a load factor of at most 2/3.
//
// FixedPool hands out nodes from one array allocated up front and takes them
// back, so a policy never allocates per request. A node comes out
// value-initialised.
//
// FlatIndex is a FlatTable for the nodes of one FixedPool that hold their
// own keys, with slots half the size (below).
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

inline constexpr uint64_t kNoHome = UINT64_MAX;

// Empties slot `i` of a linear-probing array of mask + 1 slots by backward
// shift: later members of the probe run move into the hole when their home
// does not lie cyclically in (hole, their slot]. home_of(slot) is a slot's
// home, or kNoHome for an empty slot.
template <typename Slot, typename HomeOf>
void EmptySlot(Slot* slots, uint64_t mask, uint64_t i, HomeOf home_of) {
  for (uint64_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    const uint64_t home = home_of(slots[j]);
    if (home == kNoHome) break;
    const bool stays = (j > i) ? (home > i && home <= j) : (home > i || home <= j);
    if (!stays) {
      slots[i] = slots[j];
      i = j;
    }
  }
  slots[i] = Slot{};
}

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

  uint64_t size() const { return size_; }

 private:
  uint64_t Home(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ULL) >> shift_; }
  struct Slot {
    uint64_t key = 0;
    V* value = nullptr;
  };
  void EraseSlot(uint64_t i) {
    EmptySlot(slots_.get(), mask_, i,
              [&](const Slot& s) { return s.value == nullptr ? kNoHome : Home(s.key); });
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
    ARC_CHECK_LT(max_nodes, uint64_t{UINT32_MAX});  // IndexOf() + 1 fits 32 bits
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
  // A node's place in the array, and back: [0, max_nodes).
  uint32_t IndexOf(const T* n) const { return static_cast<uint32_t>(n - nodes_.get()); }
  T* At(uint32_t i) const { return &nodes_[i]; }
  // The array every node lives in (lists link nodes by their place in it).
  T* data() const { return nodes_.get(); }
  // Every node handed out so far, in use or back in the pool (tests walk them).
  const T* begin() const { return nodes_.get(); }
  const T* end() const { return nodes_.get() + used_; }

 private:
  std::unique_ptr<T[]> nodes_;
  uint64_t max_;
  uint64_t used_ = 0;
  std::vector<T*> free_;
};

// FlatIndex: the index of the nodes of a FixedPool<T>, T having a 64-bit
// `key()`, in 8 bytes a slot (half of FlatTable's): the node's place in the
// pool and a 32-bit tag, the upper half of the key's hash. The tag's top
// bits are the home slot (the same as FlatTable's), so a backward shift
// reads no node; a lookup reads a node only when the tag matches.
template <typename T>
class FlatIndex {
 public:
  FlatIndex(uint64_t max_entries, const FixedPool<T>* pool) : pool_(pool) {
    const uint64_t cap = std::bit_ceil(std::max<uint64_t>(16, max_entries + max_entries / 2 + 1));
    ARC_CHECK_LE(cap, uint64_t{1} << 32);
    tag_shift_ = 32 - std::countr_zero(cap);
    mask_ = cap - 1;
    slots_ = std::make_unique<Slot[]>(cap);
    max_entries_ = max_entries;
  }

  T* Find(uint64_t key) const {
    const uint32_t tag = Tag(key);
    for (uint64_t i = Home(tag);; i = (i + 1) & mask_) {
      const Slot s = slots_[i];
      if (s.node == 0) return nullptr;
      if (s.tag == tag && pool_->At(s.node - 1)->key() == key) return pool_->At(s.node - 1);
    }
  }

  // Starts loading the line of `key`'s home slot, where a Find, Insert or
  // Erase of it begins.
  void Prefetch(uint64_t key) const { __builtin_prefetch(&slots_[Home(Tag(key))]); }

  // `n` (its key set) must not be present.
  void Insert(const T* n) {
    ARC_DCHECK_LT(size_, max_entries_);
    const uint32_t tag = Tag(n->key());
    uint64_t i = Home(tag);
    while (slots_[i].node != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{tag, pool_->IndexOf(n) + 1};
    size_++;
  }

  // `n` must be present, under its key.
  void Erase(const T* n) {
    const uint32_t node = pool_->IndexOf(n) + 1;
    uint64_t i = Home(Tag(n->key()));
    while (slots_[i].node != node) i = (i + 1) & mask_;
    EmptySlot(slots_.get(), mask_, i,
              [&](const Slot& s) { return s.node == 0 ? kNoHome : Home(s.tag); });
    size_--;
  }

  uint64_t size() const { return size_; }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t node = 0;  // the pool index + 1; 0 = empty
  };
  static uint32_t Tag(uint64_t key) {
    return static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ULL) >> 32);
  }
  uint64_t Home(uint32_t tag) const { return tag >> tag_shift_; }

  const FixedPool<T>* pool_;
  std::unique_ptr<Slot[]> slots_;
  uint64_t mask_ = 0;
  int tag_shift_ = 0;
  uint64_t size_ = 0;
  uint64_t max_entries_ = 0;
};

}  // namespace arcstore::arc
