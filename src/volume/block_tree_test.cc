#include "volume/block_tree.h"

#include <gtest/gtest.h>

#include <map>

#include "format/indirect_block.h"

namespace arcstore::volume {
namespace {

using format::BlockPointer;
using format::BlockType;

// Blocks kept in a map by location; every write goes to a new location.
class FakeStore final : public BlockSource, public BlockSink {
 public:
  Result<std::vector<uint8_t>> ReadBlock(const BlockPointer& bp) override {
    auto it = blocks_.find(bp.offset_units);
    if (it == blocks_.end()) return Status::IOError("no block at " + std::to_string(bp.offset_units));
    reads++;
    return it->second;
  }
  Result<BlockPointer> WriteBlock(const BlockPointer& base,
                                  std::span<const uint8_t> logical) override {
    BlockPointer bp = format::PointerTo(base, 0, next_++, logical, static_cast<uint32_t>(logical.size()));
    bp.birth_txg = txg;
    bp.compression = format::Compression::kOff;
    blocks_[bp.offset_units] = std::vector<uint8_t>(logical.begin(), logical.end());
    return bp;
  }
  Status FreeBlock(const BlockPointer& bp) override {
    if (!bp.OwnsSpace()) return Status::Ok();
    if (blocks_.erase(bp.offset_units) != 1) return Status::Corruption("double free");
    freed++;
    return Status::Ok();
  }
  BlockPointer Data(uint64_t tag) {
    BlockPointer bp;
    bp.type = BlockType::kData;
    bp.fill = 1;
    bp.birth_txg = txg;
    bp.offset_units = 1'000'000 + tag;  // data lives elsewhere; not in the map
    bp.physical_bytes = bp.logical_bytes = 4096;
    return bp;
  }
  uint64_t txg = 1;
  int reads = 0, freed = 0;
  std::map<uint64_t, std::vector<uint8_t>> blocks_;

 private:
  uint64_t next_ = 1;
};

TEST(BlockTreeTest, GrowsCopiesOnWriteAndReloads) {
  FakeStore store;
  TreeShape shape{42, 5000, format::TreeDepthFor(5000, 4), 4};  // fan-out 16
  ASSERT_EQ(shape.depth, 4u);                                    // 16^3 < 5000 <= 16^4
  BlockPointer root;
  root.level = static_cast<uint8_t>(shape.depth);
  BlockTree tree(shape, root, &store);
  EXPECT_EQ(tree.Get(4999)->type, BlockType::kHole);
  EXPECT_EQ(tree.Get(5000).status().code(), StatusCode::kOutOfRange);

  store.txg = 2;
  for (uint64_t r : {0u, 1u, 17u, 4999u}) {
    BlockPointer old = *tree.Set(r, store.Data(r));
    EXPECT_TRUE(old.IsHole());
  }
  BlockPointer r2 = *tree.Sync(2, &store);
  EXPECT_EQ(r2.level, shape.depth);
  EXPECT_EQ(r2.fill, 4u);
  // 0, 1 share one L1; 17 another; 4999 another: 3 L1 + 2 L2 + 2 L3 + 1 L4.
  EXPECT_EQ(store.blocks_.size(), 8u);

  store.txg = 3;
  ASSERT_TRUE(tree.Set(17, store.Data(1017)).ok());
  BlockPointer r3 = *tree.Sync(3, &store);
  EXPECT_NE(r3.offset_units, r2.offset_units) << "copy-on-write: a new root";
  EXPECT_EQ(store.freed, 4) << "the old path (L1..L4) is freed";
  EXPECT_EQ(store.blocks_.size(), 8u);

  // A fresh tree over the same root sees the same pointers, loading lazily.
  BlockTree again(shape, r3, &store);
  EXPECT_EQ(again.Get(17)->offset_units, 1'000'000u + 1017);
  EXPECT_EQ(again.Get(4999)->offset_units, 1'000'000u + 4999);
  EXPECT_TRUE(again.Get(100)->IsHole());
  int visited = 0;
  ASSERT_TRUE(again.Walk([&](uint64_t, const BlockPointer& bp) {
    visited += bp.type == BlockType::kData;
    return Status::Ok();
  }).ok());
  EXPECT_EQ(visited, 4);
}

TEST(BlockTreeTest, AllHoleBlocksBecomeHoles) {
  FakeStore store;
  TreeShape shape{1, 256, 2, 4};
  BlockPointer root;
  root.level = 2;
  BlockTree tree(shape, root, &store);
  store.txg = 2;
  ASSERT_TRUE(tree.Set(200, store.Data(1)).ok());
  ASSERT_TRUE(tree.Sync(2, &store).ok());
  EXPECT_EQ(store.blocks_.size(), 2u);
  store.txg = 3;
  BlockPointer hole;
  hole.birth_txg = 3;
  ASSERT_TRUE(tree.Set(200, hole).ok());
  BlockPointer r = *tree.Sync(3, &store);
  EXPECT_TRUE(r.IsHole());
  EXPECT_TRUE(store.blocks_.empty()) << "every indirect block was freed";
}

TEST(BlockTreeTest, MisplacedIndirectBlockIsCorruption) {
  FakeStore store;
  TreeShape shape{7, 256, 2, 4};
  BlockPointer root;
  root.level = 2;
  BlockTree tree(shape, root, &store);
  store.txg = 2;
  ASSERT_TRUE(tree.Set(0, store.Data(1)).ok());
  BlockPointer r = *tree.Sync(2, &store);
  TreeShape other = shape;
  other.volume_guid = 8;  // the same blocks, read as another volume's
  BlockTree wrong(other, r, &store);
  Result<BlockPointer> got = wrong.Get(0);
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << got.status().ToString();
}

}  // namespace
}  // namespace arcstore::volume
