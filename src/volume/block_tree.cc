#include "volume/block_tree.h"

#include <algorithm>

#include "format/indirect_block.h"

namespace arcstore::volume {

using format::BlockPointer;
using format::BlockType;

namespace {

BlockPointer HoleAt(uint32_t level) {
  BlockPointer bp;
  bp.type = BlockType::kHole;
  bp.level = static_cast<uint8_t>(level);
  return bp;
}

}  // namespace

Status BlockSource::ReadBlockInto(const BlockPointer& bp, std::span<uint8_t> out) {
  ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> data, ReadBlock(bp));
  if (data.size() != out.size()) {
    return Status::Corruption("block " + bp.ToString() + " holds " + std::to_string(data.size()) +
                              " bytes, expected " + std::to_string(out.size()));
  }
  std::copy(data.begin(), data.end(), out.begin());
  return Status::Ok();
}

BlockTree::BlockTree(const TreeShape& shape, const BlockPointer& root, BlockSource* source)
    : shape_(shape), source_(source), root_(root) {}

BlockPointer BlockTree::PointerInParent(uint32_t level, uint64_t id) {
  if (level == shape_.depth) return root_;
  auto it = nodes_.find(Key(level + 1, id >> shape_.shift));
  return it->second.ptrs[id & ((uint64_t{1} << shape_.shift) - 1)];
}

Result<BlockTree::Node*> BlockTree::Load(uint32_t level, uint64_t id) {
  auto it = nodes_.find(Key(level, id));
  if (it != nodes_.end()) return &it->second;
  if (level < shape_.depth) {
    ARC_ASSIGN_OR_RETURN(Node * parent, Load(level + 1, id >> shape_.shift));
    (void)parent;
  }
  const uint64_t fanout = uint64_t{1} << shape_.shift;
  BlockPointer self = PointerInParent(level, id);
  Node node;
  node.self = self;
  node.ptrs.assign(fanout, HoleAt(level - 1));
  if (!self.IsHole()) {
    ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, source_->ReadBlock(self));
    Result<format::IndirectBlock> block = format::DecodeIndirectBlock(bytes);
    if (!block.ok()) return block.status().WithContext("indirect block " + self.ToString());
    if (block->level != level || block->block_id != id || block->volume_guid != shape_.volume_guid ||
        block->indirect_shift != shape_.shift || block->pointers.size() > fanout) {
      return Status::Corruption("indirect block " + self.ToString() + " claims level " +
                                std::to_string(block->level) + " id " +
                                std::to_string(block->block_id) + ", expected level " +
                                std::to_string(level) + " id " + std::to_string(id));
    }
    std::copy(block->pointers.begin(), block->pointers.end(), node.ptrs.begin());
  }
  return &nodes_.emplace(Key(level, id), std::move(node)).first->second;
}

Result<BlockPointer> BlockTree::Get(uint64_t record) {
  if (record >= shape_.records) {
    return Status::OutOfRange("record " + std::to_string(record) + " past the volume's " +
                              std::to_string(shape_.records));
  }
  MutexLock l(&mu_);
  if (shape_.depth == 0) return root_;
  ARC_ASSIGN_OR_RETURN(Node * n, Load(1, record >> shape_.shift));
  return n->ptrs[record & ((uint64_t{1} << shape_.shift) - 1)];
}

Result<BlockPointer> BlockTree::Set(uint64_t record, const BlockPointer& bp) {
  if (record >= shape_.records) {
    return Status::OutOfRange("record " + std::to_string(record) + " past the volume's " +
                              std::to_string(shape_.records));
  }
  MutexLock l(&mu_);
  if (shape_.depth == 0) {
    BlockPointer old = root_;
    root_ = bp;
    return old;
  }
  ARC_ASSIGN_OR_RETURN(Node * n, Load(1, record >> shape_.shift));
  BlockPointer& slot = n->ptrs[record & ((uint64_t{1} << shape_.shift) - 1)];
  BlockPointer old = slot;
  slot = bp;
  // Dirty the path to the root (every ancestor is loaded: Load loaded it).
  uint64_t id = record >> shape_.shift;
  for (uint32_t level = 1; level <= shape_.depth; level++, id >>= shape_.shift) {
    nodes_.find(Key(level, id))->second.dirty = true;
  }
  return old;
}

uint64_t BlockTree::Fill(const Node& n) const {
  uint64_t fill = 0;
  for (const BlockPointer& p : n.ptrs) fill += p.fill;
  return fill;
}

Result<BlockPointer> BlockTree::Sync(uint64_t txg, BlockSink* sink) {
  MutexLock l(&mu_);
  const uint64_t mask = (uint64_t{1} << shape_.shift) - 1;
  for (uint32_t level = 1; level <= shape_.depth; level++) {
    std::vector<uint64_t> ids;
    for (const auto& [key, node] : nodes_) {
      if ((key >> 56) == level && node.dirty) ids.push_back(key & ((uint64_t{1} << 56) - 1));
    }
    std::sort(ids.begin(), ids.end());  // neighbours on disk, in order
    for (uint64_t id : ids) {
      Node& node = nodes_.find(Key(level, id))->second;
      bool all_holes = std::all_of(node.ptrs.begin(), node.ptrs.end(),
                                   [](const BlockPointer& p) { return p.type == BlockType::kHole; });
      BlockPointer fresh = HoleAt(level);
      if (!all_holes) {
        format::IndirectBlock block;
        block.level = static_cast<uint8_t>(level);
        block.indirect_shift = static_cast<uint8_t>(shape_.shift);
        block.birth_txg = txg;
        block.volume_guid = shape_.volume_guid;
        block.block_id = id;
        size_t used = node.ptrs.size();
        while (used > 0 && node.ptrs[used - 1].type == BlockType::kHole) used--;
        block.pointers.assign(node.ptrs.begin(), node.ptrs.begin() + static_cast<long>(used));
        ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, format::EncodeIndirectBlock(block));
        BlockPointer base;
        base.type = BlockType::kIndirect;
        base.level = static_cast<uint8_t>(level);
        base.compression = format::Compression::kLz4;
        base.fill = Fill(node);
        ARC_ASSIGN_OR_RETURN(fresh, sink->WriteBlock(base, bytes));
      }
      if (node.self.OwnsSpace()) ARC_RETURN_IF_ERROR(sink->FreeBlock(node.self));
      node.self = fresh;
      node.dirty = false;
      if (level == shape_.depth) {
        root_ = fresh;
      } else {
        nodes_.find(Key(level + 1, id >> shape_.shift))->second.ptrs[id & mask] = fresh;
      }
    }
  }
  return root_;
}

BlockPointer BlockTree::root() {
  MutexLock l(&mu_);
  return root_;
}

size_t BlockTree::loaded_blocks() {
  MutexLock l(&mu_);
  return nodes_.size();
}

Status BlockTree::Walk(
    const std::function<Status(uint64_t record_or_block, const BlockPointer&)>& fn) {
  MutexLock l(&mu_);
  if (shape_.depth == 0) return fn(0, root_);
  ARC_RETURN_IF_ERROR(fn(0, root_));
  if (root_.IsHole()) return Status::Ok();
  // Depth-first over loaded-or-loadable nodes, top level first.
  std::vector<std::pair<uint32_t, uint64_t>> stack = {{shape_.depth, 0}};
  while (!stack.empty()) {
    auto [level, id] = stack.back();
    stack.pop_back();
    ARC_ASSIGN_OR_RETURN(Node * n, Load(level, id));
    for (uint64_t i = 0; i < n->ptrs.size(); i++) {
      const BlockPointer& p = n->ptrs[i];
      const uint64_t child = (id << shape_.shift) | i;
      if (p.type == BlockType::kHole && level > 1) continue;
      if (level == 1 && child >= shape_.records) break;
      ARC_RETURN_IF_ERROR(fn(child, p));
      if (level > 1 && !p.IsHole()) stack.push_back({level - 1, child});
    }
  }
  return Status::Ok();
}

}  // namespace arcstore::volume
