// L2Index: where each cached block is, in a few dozen bytes a block.
//
// The cache may hold many millions of blocks, so its index is compact:
//
//   nodes   chunks of kChunkNodes Nodes (40 bytes each: key, data checksum,
//           slot, offset in the slot's data area, bytes, next in the same
//           slot); free nodes are chained through `next`
//   table   open addressing over node id + 1 (0 = empty), 4 bytes a cell,
//           linear probing, load at most 3/4, doubled when full, deletion by
//           backward shift (arc/flat_table.h's EmptySlot), no tombstones
//   heads   per ring slot, the first node of the slot's chain and the
//           count of its entries, so that overwriting a slot removes exactly
//           its entries
//
// A node whose slot is not below slot_count() is on no chain: the cache
// uses such values for blocks copied into a slot buffer but not yet
// written (l2_cache.cc). Removing one entry of a slot walks that slot's
// chain, at most entries_per_slot nodes.
//
// memory_bytes() is every byte the index allocated: node chunks, the table
// and the per-slot heads.
//
// Thread-safety: none; the cache holds its mutex around every call.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "l2arc/l2_format.h"

namespace arcstore::l2arc {

inline constexpr uint32_t kNoNode = UINT32_MAX;

struct L2Location {
  uint32_t slot = 0;
  uint32_t offset = 0;  // in the slot's data area
  uint32_t bytes = 0;
  uint64_t checksum = 0;
};

class L2Index {
 public:
  static constexpr uint32_t kChunkNodes = 1024;
  static constexpr uint64_t kInitialCells = 1024;

  // `max_nodes` bounds the entries (< kNoNode).
  L2Index(uint32_t slot_count, uint64_t max_nodes);
  L2Index(const L2Index&) = delete;
  L2Index& operator=(const L2Index&) = delete;

  // The node holding `key`, or kNoNode.
  uint32_t Find(const L2Key& key) const;
  L2Location location(uint32_t node) const;
  // Adds `key` (not present) at `loc`, chained when loc.slot < slot_count().
  // kNoNode when max_nodes entries are held already.
  uint32_t Insert(const L2Key& key, const L2Location& loc);
  // Moves an unchained node onto the chain of `slot`.
  void Place(uint32_t node, uint32_t slot);
  // Removes one node, unchaining it when it is on a chain.
  void Erase(uint32_t node);
  // Removes every entry of `slot`; returns how many, and their bytes.
  uint64_t EraseSlot(uint32_t slot, uint64_t* bytes);

  uint32_t slot_entries(uint32_t slot) const { return heads_[slot].count; }
  uint32_t slot_count() const { return static_cast<uint32_t>(heads_.size()); }
  uint64_t size() const { return size_; }
  uint64_t memory_bytes() const;

 private:
  struct Node {
    L2Key key;
    uint64_t checksum = 0;
    uint32_t slot = 0;
    uint32_t offset = 0;
    uint32_t bytes = 0;
    uint32_t next = kNoNode;
  };
  static_assert(sizeof(Node) == 40);
  struct Head {
    uint32_t first = kNoNode;
    uint32_t count = 0;
  };

  Node& At(uint32_t id) { return chunks_[id / kChunkNodes][id % kChunkNodes]; }
  const Node& At(uint32_t id) const { return chunks_[id / kChunkNodes][id % kChunkNodes]; }
  uint64_t Home(const L2Key& key) const;
  uint32_t NewNode();
  void Grow();
  void Unchain(uint32_t node);
  void EraseCell(uint32_t node);

  std::vector<std::unique_ptr<Node[]>> chunks_;
  uint64_t nodes_made_ = 0;
  uint32_t free_ = kNoNode;
  const uint64_t max_nodes_;
  std::vector<uint32_t> cells_;  // node id + 1, 0 = empty
  int shift_ = 0;
  uint64_t size_ = 0;
  std::vector<Head> heads_;
};

}  // namespace arcstore::l2arc
