// BlockTree: the in-memory view of one volume's tree of block pointers.
//
// A volume of N records has a tree of `depth` indirect levels with fan-out
// F = 2^shift (format/indirect_block.h). The tree maps a record id to the
// block pointer of its newest committed-or-syncing version:
//
//   root (level depth) -> indirect (level depth-1) -> ... -> level 1 -> records
//
// Indirect blocks are loaded on first use through a BlockSource and then
// stay in memory (their size is 1/2048 of the data they describe at the
// default shift and a 128 KiB record; see volume_impl.cc for the budget).
// The sync thread replaces record pointers with Set() and, at the end of
// the txg, writes every dirty indirect block bottom-up (copy-on-write: to
// new space, freeing the old) through a BlockSink, giving the new root.
//
// Thread-safety: thread-safe; one internal mutex. Loads do device reads
// with it held (each indirect block is loaded once).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/thread_annotations.h"
#include "format/block_pointer.h"

namespace arcstore::volume {

// Reads a block's logical bytes (verified and decompressed).
class BlockSource {
 public:
  virtual ~BlockSource() = default;
  virtual Result<std::vector<uint8_t>> ReadBlock(const format::BlockPointer& bp) = 0;
  // Reads the logical bytes of `bp` into `out` (exactly bp.logical_bytes).
  // On an error `out` may hold any bytes (a block that failed its checksum
  // may have been read into it): callers read into memory nobody else sees
  // until the read succeeds.
  virtual Status ReadBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out);
  // ReadBlockInto for a prefetch (nobody waits for it yet), which a source
  // may schedule behind demand reads; by default the same.
  virtual Status PrefetchBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) {
    return ReadBlockInto(bp, out);
  }
};

// Writes a new block (allocating space) and frees old ones, for a txg.
class BlockSink {
 public:
  virtual ~BlockSink() = default;
  // Stores `logical` as a new block; `base` gives type, level, compression
  // and fill; the result points at it (birth = the sink's txg).
  virtual Result<format::BlockPointer> WriteBlock(const format::BlockPointer& base,
                                                  std::span<const uint8_t> logical) = 0;
  // The block `bp` is no longer referenced by this txg's tree.
  virtual Status FreeBlock(const format::BlockPointer& bp) = 0;
};

struct TreeShape {
  uint64_t volume_guid = 0;
  uint64_t records = 0;
  uint32_t depth = 0;  // indirect levels
  uint32_t shift = 10;
};

class BlockTree {
 public:
  BlockTree(const TreeShape& shape, const format::BlockPointer& root, BlockSource* source);

  // The pointer of `record` (a hole when never written). Corruption or
  // IOError when an indirect block on the path cannot be read.
  Result<format::BlockPointer> Get(uint64_t record);
  // Replaces the pointer of `record` (sync thread). Returns the pointer it
  // replaced, which the caller frees.
  Result<format::BlockPointer> Set(uint64_t record, const format::BlockPointer& bp);
  // Writes the dirty indirect blocks of this txg bottom-up through `sink`
  // and returns the new root pointer.
  Result<format::BlockPointer> Sync(uint64_t txg, BlockSink* sink);
  format::BlockPointer root();
  const TreeShape& shape() const { return shape_; }
  // Indirect blocks in memory, and how many are dirty.
  size_t loaded_blocks();
  // Visits every indirect block pointer and record pointer reachable from
  // the root, loading what is needed (fsck). Stops at the first error.
  Status Walk(const std::function<Status(uint64_t record_or_block, const format::BlockPointer&)>& fn);

 private:
  struct Node {
    std::vector<format::BlockPointer> ptrs;  // F entries
    format::BlockPointer self;               // where it is on disk (or a hole)
    bool dirty = false;
  };
  // Key of a node: level in the top byte, block id below.
  static uint64_t Key(uint32_t level, uint64_t id) { return (uint64_t{level} << 56) | id; }
  Result<Node*> Load(uint32_t level, uint64_t id) ARC_REQUIRES(mu_);
  format::BlockPointer PointerInParent(uint32_t level, uint64_t id) ARC_REQUIRES(mu_);
  uint64_t Fill(const Node& n) const;

  const TreeShape shape_;
  BlockSource* const source_;
  Mutex mu_;
  format::BlockPointer root_ ARC_GUARDED_BY(mu_);
  std::unordered_map<uint64_t, Node> nodes_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::volume
