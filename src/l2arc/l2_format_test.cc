// The cache device's format and index on their own: layouts, label and
// slot header round trips and the damage each must catch, and the index
// against a plain map.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "base/random.h"
#include "l2arc/l2_format.h"
#include "l2arc/l2_index.h"

namespace arcstore::l2arc {
namespace {

TEST(L2FormatTest, LayoutOfSlotsAndHeaderAreas) {
  const L2Layout a = *ComputeLayout(256 << 10, 4096, 64ull << 20);
  EXPECT_EQ(a.label_bytes, 4096u);
  EXPECT_EQ(a.entries_per_slot, 64u);
  EXPECT_EQ(a.header_area_bytes, 4096u);  // 64 + 64 * 32 rounded up
  EXPECT_EQ(a.slot_stride_bytes, (256u << 10) + 4096);
  EXPECT_EQ(a.slot_count, ((64ull << 20) - 4096) / a.slot_stride_bytes);
  EXPECT_EQ(a.DataOffset(2), 4096 + 2 * a.slot_stride_bytes + 4096);

  const L2Layout b = *ComputeLayout(1 << 20, 512, 64ull << 20);
  EXPECT_EQ(b.label_bytes, 4096u);
  EXPECT_EQ(b.entries_per_slot, 256u);
  EXPECT_EQ(b.header_area_bytes, 8704u);  // 64 + 256 * 32 rounded up to 512

  const L2Layout c = *ComputeLayout(256 << 10, 16384, 64ull << 20);
  EXPECT_EQ(c.label_bytes, 16384u);

  EXPECT_FALSE(ComputeLayout(256 << 10, 4096, 4 * ((256 << 10) + 4096)).ok());
  EXPECT_TRUE(ComputeLayout(256 << 10, 4096, 4096 + 4 * ((256 << 10) + 4096)).ok());
  EXPECT_FALSE(ComputeLayout((256 << 10) + 512, 4096, 64ull << 20).ok());
}

L2Label SampleLabel() {
  L2Label l;
  l.pool_guid = 0x1111;
  l.cache_guid = 0x2222;
  l.slot_data_bytes = 1 << 20;
  l.slot_count = 77;
  l.slot_stride_bytes = (1 << 20) + 12288;
  l.epoch = 9;
  l.bounds = {{7, 100}, {8, 120}};
  return l;
}

TEST(L2FormatTest, LabelRoundTripAndDamage) {
  std::vector<uint8_t> block(4096);
  const L2Label l = SampleLabel();
  EncodeLabel(l, block);
  Result<L2Label> back = DecodeLabel(block);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->pool_guid, l.pool_guid);
  EXPECT_EQ(back->cache_guid, l.cache_guid);
  EXPECT_EQ(back->slot_data_bytes, l.slot_data_bytes);
  EXPECT_EQ(back->slot_count, l.slot_count);
  EXPECT_EQ(back->slot_stride_bytes, l.slot_stride_bytes);
  EXPECT_EQ(back->epoch, l.epoch);
  EXPECT_EQ(back->bounds, l.bounds);
  // Every byte the label uses is covered.
  for (size_t at : {size_t{0}, size_t{9}, size_t{20}, size_t{40}, size_t{60}, size_t{66},
                    size_t{80}, size_t{111}}) {
    std::vector<uint8_t> bad = block;
    bad[at] ^= 4;
    EXPECT_EQ(DecodeLabel(bad).status().code(), StatusCode::kCorruption) << at;
  }
  EXPECT_EQ(DecodeLabel(std::vector<uint8_t>(4096)).status().code(), StatusCode::kCorruption);
}

TEST(L2FormatTest, SlotHeaderRoundTripAndDamage) {
  const L2Layout layout = *ComputeLayout(256 << 10, 4096, 64ull << 20);
  L2SlotHeader h;
  h.pool_guid = 1;
  h.cache_guid = 2;
  h.sequence = 33;
  h.data_bytes = 3 * 4096;
  h.epoch = 4;
  h.entries = {{{10, 1}, 0, 4096, 0xAA}, {{11, 2}, 4096, 512, 0xBB}, {{12, 3}, 8192, 4096, 0xCC}};
  std::vector<uint8_t> area(layout.header_area_bytes);
  EncodeSlotHeader(h, area);
  HeaderFault fault = HeaderFault::kBlank;
  Result<L2SlotHeader> back = DecodeSlotHeader(area, layout, &fault);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(fault, HeaderFault::kNone);
  EXPECT_EQ(back->sequence, 33u);
  EXPECT_EQ(back->epoch, 4u);
  EXPECT_EQ(back->data_bytes, h.data_bytes);
  ASSERT_EQ(back->entries.size(), 3u);
  EXPECT_EQ(back->entries[1].key, (L2Key{11, 2}));
  EXPECT_EQ(back->entries[1].offset, 4096u);
  EXPECT_EQ(back->entries[1].bytes, 512u);
  EXPECT_EQ(back->entries[2].checksum, 0xCCu);

  for (size_t at : {size_t{9}, size_t{30}, size_t{50}, size_t{64 + 3}, size_t{64 + 2 * 32 + 31}}) {
    std::vector<uint8_t> bad = area;
    bad[at] ^= 1;
    EXPECT_FALSE(DecodeSlotHeader(bad, layout, &fault).ok()) << at;
    EXPECT_EQ(fault, HeaderFault::kDamaged) << at;
  }
  EXPECT_FALSE(
      DecodeSlotHeader(std::vector<uint8_t>(layout.header_area_bytes), layout, &fault).ok());
  EXPECT_EQ(fault, HeaderFault::kBlank);

  // Well checksummed but out of bounds: an entry past the data, one not
  // block-aligned.
  L2SlotHeader past = h;
  past.entries[2].offset = 12288;
  EncodeSlotHeader(past, area);
  EXPECT_FALSE(DecodeSlotHeader(area, layout, &fault).ok());
  EXPECT_EQ(fault, HeaderFault::kDamaged);
  L2SlotHeader unaligned = h;
  unaligned.entries[1].offset = 512;
  EncodeSlotHeader(unaligned, area);
  EXPECT_FALSE(DecodeSlotHeader(area, layout, &fault).ok());
  EXPECT_EQ(fault, HeaderFault::kDamaged);
}

TEST(L2IndexTest, MatchesAMapThroughInsertsErasesAndSlotOverwrites) {
  SeededRandom r = SeededRandom::FromEnvironment("l2arc index");
  constexpr uint32_t kSlots = 16;
  L2Index index(kSlots, 1 << 20);
  std::map<std::pair<uint64_t, uint64_t>, std::pair<uint32_t, uint32_t>> model;  // -> slot, offset
  auto check = [&] {
    ASSERT_EQ(index.size(), model.size());
    std::vector<uint32_t> per_slot(kSlots);
    for (const auto& [k, v] : model) {
      const uint32_t node = index.Find({k.first, k.second});
      ASSERT_NE(node, kNoNode);
      EXPECT_EQ(index.location(node).slot, v.first);
      EXPECT_EQ(index.location(node).offset, v.second);
      if (v.first < kSlots) per_slot[v.first]++;
    }
    for (uint32_t s = 0; s < kSlots; s++) EXPECT_EQ(index.slot_entries(s), per_slot[s]);
  };
  for (int round = 0; round < 20000; round++) {
    const L2Key key{r.Uniform(3000), r.Uniform(4)};
    const auto k = std::make_pair(key.where, key.birth);
    const uint64_t op = r.Uniform(100);
    if (op < 60) {
      if (model.count(k) != 0) continue;
      // Some entries unchained (waiting for their write), then placed.
      const uint32_t slot = r.OneIn(5) ? kNoNode - 2 : static_cast<uint32_t>(r.Uniform(kSlots));
      const auto offset = static_cast<uint32_t>(round);
      const uint32_t node = index.Insert(key, {slot, offset, 512, 7});
      ASSERT_NE(node, kNoNode);
      model[k] = {slot, offset};
      if (slot >= kSlots && r.OneIn(2)) {
        const auto to = static_cast<uint32_t>(r.Uniform(kSlots));
        index.Place(node, to);
        model[k].first = to;
      }
    } else if (op < 95) {
      const uint32_t node = index.Find(key);
      ASSERT_EQ(node != kNoNode, model.count(k) != 0);
      if (node != kNoNode) {
        index.Erase(node);
        model.erase(k);
      }
    } else {
      const auto slot = static_cast<uint32_t>(r.Uniform(kSlots));
      uint64_t bytes = 0;
      const uint64_t erased = index.EraseSlot(slot, &bytes);
      uint64_t want = 0;
      for (auto it = model.begin(); it != model.end();) {
        if (it->second.first == slot) {
          it = model.erase(it);
          want++;
        } else {
          ++it;
        }
      }
      EXPECT_EQ(erased, want);
      EXPECT_EQ(bytes, want * 512);
    }
    if (round % 1000 == 0) check();
  }
  check();
}

TEST(L2IndexTest, FreedNodesAreReusedAndTheLimitHolds) {
  L2Index index(4, 10000);
  for (uint32_t i = 0; i < 10000; i++) ASSERT_NE(index.Insert({i, 1}, {i % 4, 0, 512, 0}), kNoNode);
  EXPECT_EQ(index.Insert({20000, 1}, {0, 0, 512, 0}), kNoNode);
  const uint64_t memory = index.memory_bytes();
  for (uint32_t s = 0; s < 4; s++) {
    uint64_t bytes = 0;
    EXPECT_EQ(index.EraseSlot(s, &bytes), 2500u);
  }
  EXPECT_EQ(index.size(), 0u);
  for (uint32_t i = 0; i < 10000; i++) {
    ASSERT_NE(index.Insert({i + 50000, 2}, {i % 4, 0, 512, 0}), kNoNode);
  }
  EXPECT_EQ(index.memory_bytes(), memory);
  EXPECT_EQ(index.Find({3, 1}), kNoNode);
  EXPECT_NE(index.Find({50003, 2}), kNoNode);
}

}  // namespace
}  // namespace arcstore::l2arc
