// CheckCacheDevice: what fsck says of a cache device — its written slots,
// blocks and bad copies; a blank device and another pool's cache; damaged
// headers — without writing anything.
#include "l2arc/l2_check.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/random.h"
#include "io/memory_device.h"
#include "l2arc/l2_cache.h"
#include "l2arc/l2_format.h"
#include "testing/manual_clock.h"

namespace arcstore::l2arc {
namespace {

constexpr uint64_t kPool = 0x77aa'0001;
constexpr uint64_t kSlotBytes = 256 << 10;

std::unique_ptr<io::MemoryDevice> NewDevice() {
  io::MemoryDeviceOptions o;
  o.name = "l2check";
  o.size_bytes = 8ull << 20;
  return std::move(*io::MemoryDevice::Create(o));
}

// Writes `blocks` 4 KiB blocks to a cache of pool kPool on `dev`.
void Fill(io::Device* dev, int blocks) {
  testing::ManualClock clock;
  L2CacheOptions o;
  o.slot_bytes = kSlotBytes;
  o.write_max_bytes = 1ull << 30;
  o.max_block_bytes = 64 << 10;
  L2CacheEnv env;
  env.device = dev;
  env.clock = &clock;
  env.pool_guid = kPool;
  env.committed_txg = 100;
  auto c = L2Cache::Open(o, env);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<uint8_t> data(4096);
  for (int i = 0; i < blocks; i++) {
    SeededRandom(i).Fill(data.data(), data.size());
    ASSERT_TRUE((*c)->Offer(L2Key{static_cast<uint64_t>(i) * 8, 50}, data, false, false));
  }
  ASSERT_TRUE((*c)->Flush().ok());
}

TEST(CacheDeviceCheck, CountsWrittenSlotsBlocksAndBadCopies) {
  auto dev = NewDevice();
  Fill(dev.get(), 150);  // 64 blocks of 4 KiB a slot: 3 slots
  auto c = CheckCacheDevice(*dev, kPool);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->ours) << c->label_note;
  EXPECT_EQ(c->slots_written, 3u);
  EXPECT_EQ(c->blocks, 150u);
  EXPECT_EQ(c->block_bytes, 150u * 4096);
  EXPECT_EQ(c->bad_copies, 0u);
  EXPECT_EQ(c->slots_damaged, 0u);
  EXPECT_EQ(c->slots_written + c->slots_blank, c->slots);
  EXPECT_NE(DescribeCheck(*c).find("150 blocks"), std::string::npos) << DescribeCheck(*c);

  // One slot's data overwritten: its copies are bad; another's header
  // damaged: it is not counted as written.
  const L2Layout layout = *ComputeLayout(kSlotBytes, 4096, dev->size_bytes());
  std::vector<uint8_t> junk(kSlotBytes, 0x5a);
  ASSERT_TRUE(io::WriteSync(*dev, layout.DataOffset(0), junk).ok());
  std::vector<uint8_t> header(4096);
  ASSERT_TRUE(io::ReadSync(*dev, layout.SlotOffset(1), header).ok());
  header[100] ^= 0xff;
  ASSERT_TRUE(io::WriteSync(*dev, layout.SlotOffset(1), header).ok());
  c = CheckCacheDevice(*dev, kPool);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->slots_written, 2u);
  EXPECT_EQ(c->slots_damaged, 1u);
  EXPECT_EQ(c->bad_copies, 64u);  // slot 0's
  EXPECT_EQ(c->blocks, 150u - 64u);
}

TEST(CacheDeviceCheck, BlankAndForeignDevicesAreNotOursAndSaySo) {
  auto blank = NewDevice();
  auto c = CheckCacheDevice(*blank, kPool);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->ours);
  EXPECT_NE(DescribeCheck(*c).find("no cache label"), std::string::npos) << DescribeCheck(*c);
  auto other = NewDevice();
  Fill(other.get(), 10);
  c = CheckCacheDevice(*other, kPool + 1);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->ours);
  EXPECT_NE(DescribeCheck(*c).find("another pool"), std::string::npos) << DescribeCheck(*c);
}

}  // namespace
}  // namespace arcstore::l2arc
