// The second-level cache on a memory device: round trips, the feed budget,
// the ring's wrap, damaged and unreadable copies, rebuild at open (and what
// it must not bring back), the index's memory, options, and readers,
// offerers and the writer racing.
#include "l2arc/l2_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "base/random.h"
#include "base/thread_annotations.h"
#include "io/aligned_buffer.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "testing/io/fault_device.h"
#include "testing/manual_clock.h"

namespace arcstore::l2arc {
namespace {

constexpr uint64_t kPool = 0x5151'0001;
constexpr uint64_t kSlotBytes = 256 << 10;
constexpr uint64_t kIntervalNs = 1000ull * 1000 * 1000;

// The bytes of block `key`, `bytes` long: the same for the same key.
std::vector<uint8_t> BlockOf(const L2Key& key, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  SeededRandom r(key.where * 1'000'003 + key.birth);
  r.Fill(out.data(), out.size());
  return out;
}

L2CacheOptions Small() {
  L2CacheOptions o;
  o.slot_bytes = kSlotBytes;
  o.write_max_bytes = 1ull << 30;
  o.write_boost_bytes = 0;
  o.max_block_bytes = 64 << 10;
  return o;
}

// A device of exactly `slots` slots of Small()'s geometry on 4 KiB blocks.
uint64_t DeviceBytesFor(uint64_t slots) {
  const L2Layout l = *ComputeLayout(kSlotBytes, 4096, 64ull << 20);
  return l.label_bytes + slots * l.slot_stride_bytes;
}

std::unique_ptr<io::MemoryDevice> NewDevice(uint64_t bytes, uint32_t block = 4096) {
  io::MemoryDeviceOptions o;
  o.name = "l2mem";
  o.size_bytes = bytes;
  o.logical_block_size = block;
  return std::move(*io::MemoryDevice::Create(o));
}

class L2CacheTest : public ::testing::Test {
 protected:
  L2CacheEnv Env(io::Device* device, uint64_t committed_txg = 1000, uint64_t pool = kPool) {
    L2CacheEnv env;
    env.device = device;
    env.clock = &clock_;
    env.registry = &registry_;
    env.pool_guid = pool;
    env.committed_txg = committed_txg;
    env.name = "cache test";
    return env;
  }
  std::unique_ptr<L2Cache> MustOpen(const L2CacheOptions& o, const L2CacheEnv& env) {
    Result<std::unique_ptr<L2Cache>> c = L2Cache::Open(o, env);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }
  int64_t Stat(std::string_view name) { return registry_.TakeSnapshot().Get("l2arc", name, -1); }
  bool OfferKey(L2Cache* c, const L2Key& key, size_t bytes = 4096) {
    const std::vector<uint8_t> data = BlockOf(key, bytes);
    return c->Offer(key, data, false, false);
  }
  // Reads `key` and checks its bytes; the status otherwise.
  Status ReadAndCheck(L2Cache* c, const L2Key& key, size_t bytes = 4096) {
    std::vector<uint8_t> out(bytes);
    Status s = c->Read(key, out);
    if (s.ok() && out != BlockOf(key, bytes)) return Status::Internal("wrong bytes");
    return s;
  }

  testing::ManualClock clock_;
  stats::Registry registry_;
};

TEST_F(L2CacheTest, RoundTrip) {
  auto dev = NewDevice(8 << 20);
  auto c = MustOpen(Small(), Env(dev.get()));
  const size_t sizes[] = {512, 4096, 8192, 1536, 65536};
  uint64_t data_bytes = 0;
  for (uint64_t i = 0; i < 5; i++) {
    ASSERT_TRUE(OfferKey(c.get(), {i, 7}, sizes[i]));
    data_bytes += sizes[i];
  }
  ASSERT_TRUE(c->Flush().ok());
  for (uint64_t i = 0; i < 5; i++) {
    EXPECT_TRUE(c->Contains({i, 7}));
    EXPECT_TRUE(ReadAndCheck(c.get(), {i, 7}, sizes[i]).ok()) << i;
    // Into aligned memory: read by the device straight into it when whole
    // blocks.
    io::AlignedBuffer aligned(sizes[i], 4096);
    ASSERT_TRUE(c->Read({i, 7}, aligned.span()).ok());
    EXPECT_TRUE(
        std::equal(aligned.data(), aligned.data() + sizes[i], BlockOf({i, 7}, sizes[i]).data()));
  }
  const L2Cache::Sizes s = c->sizes();
  EXPECT_EQ(s.entries, 5u);
  EXPECT_EQ(s.data_bytes, data_bytes);
  EXPECT_EQ(s.device_bytes,
            c->layout().header_area_bytes + uint64_t{4096} * 2 + 8192 + 4096 + 65536);
  EXPECT_EQ(Stat("hits"), 10);
  EXPECT_EQ(Stat("feeds"), 5);
  EXPECT_EQ(Stat("slots_written"), 1);
  EXPECT_EQ(Stat("size"), static_cast<int64_t>(data_bytes));
  // Offered again: already cached.
  EXPECT_FALSE(OfferKey(c.get(), {0, 7}, 512));
}

TEST_F(L2CacheTest, MissIsNotFoundAndWrongSizeIsInvalid) {
  auto dev = NewDevice(8 << 20);
  auto c = MustOpen(Small(), Env(dev.get()));
  std::vector<uint8_t> out(4096);
  EXPECT_EQ(c->Read({1, 1}, out).code(), StatusCode::kNotFound);
  EXPECT_EQ(Stat("misses"), 1);
  ASSERT_TRUE(OfferKey(c.get(), {1, 1}));
  ASSERT_TRUE(c->Flush().ok());
  std::vector<uint8_t> small(512);
  EXPECT_EQ(c->Read({1, 1}, small).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(c->Contains({1, 1}));
  EXPECT_EQ(c->Read({1, 2}, out).code(), StatusCode::kNotFound);
}

TEST_F(L2CacheTest, CopiesWaitingForTheirWriteAreServed) {
  auto dev = NewDevice(8 << 20);
  auto c = MustOpen(Small(), Env(dev.get()));
  ASSERT_TRUE(OfferKey(c.get(), {9, 9}));
  EXPECT_TRUE(c->Contains({9, 9}));
  EXPECT_TRUE(ReadAndCheck(c.get(), {9, 9}).ok());
  ASSERT_TRUE(c->Flush().ok());
  EXPECT_TRUE(ReadAndCheck(c.get(), {9, 9}).ok());
}

TEST_F(L2CacheTest, RefusesBadSizesAndPrefetchedOnly) {
  auto dev = NewDevice(8 << 20);
  auto c = MustOpen(Small(), Env(dev.get()));
  std::vector<uint8_t> odd(1000), tiny(256), huge(128 << 10), ok(4096);
  EXPECT_FALSE(c->Offer({1, 1}, odd, false, false));
  EXPECT_FALSE(c->Offer({1, 1}, tiny, false, false));
  EXPECT_FALSE(c->Offer({1, 1}, huge, false, false));
  EXPECT_FALSE(c->Offer({1, 1}, ok, false, /*prefetched=*/true));
  EXPECT_EQ(Stat("feed_refused_other"), 4);
  EXPECT_TRUE(c->Offer({1, 1}, ok, /*metadata=*/true, false));
  L2CacheOptions o = Small();
  o.cache_prefetched = true;
  c.reset();
  auto d = MustOpen(o, Env(dev.get()));
  d->WaitRebuilt();
  EXPECT_TRUE(d->Offer({2, 1}, ok, false, true));
}

TEST_F(L2CacheTest, FeedBudgetPerInterval) {
  auto dev = NewDevice(8 << 20);
  L2CacheOptions o = Small();
  o.write_max_bytes = 64 << 10;
  auto c = MustOpen(o, Env(dev.get()));
  uint64_t k = 0;
  for (int i = 0; i < 16; i++) ASSERT_TRUE(OfferKey(c.get(), {k++, 1})) << i;
  EXPECT_FALSE(OfferKey(c.get(), {k, 1}));
  EXPECT_EQ(Stat("feed_refused_budget"), 1);
  clock_.AdvanceNs(kIntervalNs / 2);
  EXPECT_FALSE(OfferKey(c.get(), {k, 1}));
  clock_.AdvanceNs(kIntervalNs / 2);
  for (int i = 0; i < 16; i++) ASSERT_TRUE(OfferKey(c.get(), {k++, 1})) << i;
  EXPECT_FALSE(OfferKey(c.get(), {k, 1}));
  EXPECT_EQ(Stat("feeds"), 32);
  // The interval's end sealed the first interval's slot.
  ASSERT_TRUE(c->Flush().ok());
  EXPECT_EQ(Stat("slots_written"), 2);
}

TEST_F(L2CacheTest, BoostWhileColdOnly) {
  auto dev = NewDevice(DeviceBytesFor(4));
  L2CacheOptions o = Small();
  o.write_max_bytes = 64 << 10;
  o.write_boost_bytes = 64 << 10;
  auto c = MustOpen(o, Env(dev.get()));
  ASSERT_EQ(c->layout().slot_count, 4u);
  uint64_t k = 0;
  for (int i = 0; i < 32; i++) ASSERT_TRUE(OfferKey(c.get(), {k++, 1})) << i;
  EXPECT_FALSE(OfferKey(c.get(), {k, 1}));
  // Four slot writes wrap the ring: the cache is warm.
  ASSERT_TRUE(c->Flush().ok());
  for (int s = 0; s < 3; s++) {
    clock_.AdvanceNs(kIntervalNs);
    ASSERT_TRUE(OfferKey(c.get(), {k++, 1}));
    ASSERT_TRUE(c->Flush().ok());
  }
  EXPECT_EQ(Stat("slots_written"), 4);
  clock_.AdvanceNs(kIntervalNs);
  for (int i = 0; i < 16; i++) ASSERT_TRUE(OfferKey(c.get(), {k++, 1})) << i;
  EXPECT_FALSE(OfferKey(c.get(), {k, 1}));
}

TEST_F(L2CacheTest, RingWrapDropsTheOverwrittenSlotOnly) {
  auto dev = NewDevice(DeviceBytesFor(4));
  auto c = MustOpen(Small(), Env(dev.get()));
  for (uint64_t s = 0; s < 4; s++) {
    for (uint64_t j = 0; j < 3; j++) ASSERT_TRUE(OfferKey(c.get(), {s * 100 + j, 1}));
    ASSERT_TRUE(c->Flush().ok());
  }
  EXPECT_EQ(c->sizes().entries, 12u);
  ASSERT_TRUE(OfferKey(c.get(), {400, 1}));
  ASSERT_TRUE(c->Flush().ok());
  for (uint64_t j = 0; j < 3; j++) {
    EXPECT_FALSE(c->Contains({j, 1}));
    EXPECT_EQ(ReadAndCheck(c.get(), {j, 1}).code(), StatusCode::kNotFound);
  }
  for (uint64_t s = 1; s < 4; s++) {
    for (uint64_t j = 0; j < 3; j++) EXPECT_TRUE(ReadAndCheck(c.get(), {s * 100 + j, 1}).ok());
  }
  EXPECT_TRUE(ReadAndCheck(c.get(), {400, 1}).ok());
  EXPECT_EQ(Stat("evicted_entries"), 3);
  const L2Cache::Sizes sz = c->sizes();
  EXPECT_EQ(sz.entries, 10u);
  EXPECT_EQ(sz.data_bytes, 10u * 4096);
  EXPECT_EQ(sz.device_bytes, 3 * (c->layout().header_area_bytes + uint64_t{3} * 4096) +
                                 c->layout().header_area_bytes + 4096);
}

// Holds every read at or past `from_offset` while closed, before it
// reaches the device, so that a test can overwrite a slot under a read in
// flight, or hold the rebuild.
class ReadGate final : public io::ForwardingDevice {
 public:
  explicit ReadGate(io::Device* d, uint64_t from_offset = 0)
      : ForwardingDevice(d), from_offset_(from_offset) {}
  void Submit(io::IoRequest r) override {
    if (r.op == io::IoOp::kRead && r.offset >= from_offset_) {
      MutexLock l(&mu_);
      if (closed_) {
        held_++;
        cv_.SignalAll();
        while (closed_) cv_.Wait(&mu_);
      }
    }
    inner()->Submit(std::move(r));
  }
  void Close() {
    MutexLock l(&mu_);
    closed_ = true;
  }
  void WaitHeld(int n) {
    MutexLock l(&mu_);
    while (held_ < n) cv_.Wait(&mu_);
  }
  void Open() {
    MutexLock l(&mu_);
    closed_ = false;
    cv_.SignalAll();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  const uint64_t from_offset_;
  bool closed_ ARC_GUARDED_BY(mu_) = false;
  int held_ ARC_GUARDED_BY(mu_) = 0;
};

TEST_F(L2CacheTest, ReadRacingAnOverwriteOfItsSlotIsAMiss) {
  auto dev = NewDevice(DeviceBytesFor(4));
  ReadGate gate(dev.get());
  auto c = MustOpen(Small(), Env(&gate));
  for (uint64_t s = 0; s < 4; s++) {
    ASSERT_TRUE(OfferKey(c.get(), {s, 1}));
    ASSERT_TRUE(c->Flush().ok());
  }
  gate.Close();
  Status read;
  std::thread reader([&] { read = ReadAndCheck(c.get(), {0, 1}); });
  gate.WaitHeld(1);
  // Slot 0 again, another block at the same place in it.
  ASSERT_TRUE(OfferKey(c.get(), {77, 1}));
  ASSERT_TRUE(c->Flush().ok());
  EXPECT_FALSE(c->Contains({0, 1}));
  gate.Open();
  reader.join();
  EXPECT_EQ(read.code(), StatusCode::kNotFound) << read.ToString();
  EXPECT_EQ(Stat("checksum_errors"), 0);
  EXPECT_EQ(Stat("misses"), 1);
  EXPECT_TRUE(ReadAndCheck(c.get(), {77, 1}).ok());
}

TEST_F(L2CacheTest, FullSlotsAreSealedAndTheBusyWriterRefuses) {
  auto dev = NewDevice(8 << 20);
  io::FaultDevice slow(dev.get(), 1);  // no rules: a plain pass-through
  auto c = MustOpen(Small(), Env(&slow));
  const uint32_t per_slot = c->layout().entries_per_slot;
  // Many slots' worth: every one that fills goes to the writer.
  uint64_t accepted = 0;
  for (uint64_t i = 0; i < uint64_t{per_slot} * 20; i++)
    accepted += OfferKey(c.get(), {i, 1}) ? 1 : 0;
  ASSERT_TRUE(c->Flush().ok());
  EXPECT_EQ(static_cast<int64_t>(accepted), Stat("feeds"));
  EXPECT_EQ(accepted + static_cast<uint64_t>(Stat("feed_refused_busy")), per_slot * 20);
  EXPECT_EQ(c->sizes().entries, accepted);
  EXPECT_GE(Stat("slots_written"), static_cast<int64_t>(accepted / per_slot));
}

// Finds `needle` in the device and flips its first byte there.
void DamageCopy(io::MemoryDevice* dev, const std::vector<uint8_t>& needle) {
  const std::vector<uint8_t> image = dev->Contents();
  auto at = std::search(image.begin(), image.end(), needle.begin(), needle.end());
  ASSERT_NE(at, image.end());
  const uint64_t offset = static_cast<uint64_t>(at - image.begin());
  const uint64_t block = offset / 4096 * 4096;
  const auto from = image.begin() + static_cast<std::ptrdiff_t>(block);
  std::vector<uint8_t> b(from, from + 4096);
  b[offset - block] ^= 0x40;
  ASSERT_TRUE(io::WriteSync(*dev, block, b).ok());
}

TEST_F(L2CacheTest, DamagedCopyIsAChecksumErrorOnceThenAMiss) {
  auto dev = NewDevice(8 << 20);
  auto c = MustOpen(Small(), Env(dev.get()));
  for (uint64_t k = 5; k <= 7; k++) ASSERT_TRUE(OfferKey(c.get(), {k, 3}));
  ASSERT_TRUE(c->Flush().ok());
  DamageCopy(dev.get(), BlockOf({5, 3}, 4096));
  DamageCopy(dev.get(), BlockOf({6, 3}, 4096));
  // One read through a buffer of the cache's, one straight into the caller's.
  EXPECT_EQ(ReadAndCheck(c.get(), {5, 3}).code(), StatusCode::kCorruption);
  io::AlignedBuffer aligned(4096, 4096);
  EXPECT_EQ(c->Read({6, 3}, aligned.span()).code(), StatusCode::kCorruption);
  EXPECT_EQ(Stat("checksum_errors"), 2);
  EXPECT_FALSE(c->Contains({5, 3}));
  EXPECT_FALSE(c->Contains({6, 3}));
  EXPECT_EQ(ReadAndCheck(c.get(), {5, 3}).code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadAndCheck(c.get(), {6, 3}).code(), StatusCode::kNotFound);
  EXPECT_TRUE(ReadAndCheck(c.get(), {7, 3}).ok());
  EXPECT_EQ(c->sizes().entries, 1u);
  EXPECT_EQ(c->sizes().data_bytes, 4096u);
}

TEST_F(L2CacheTest, ReadErrorDropsTheEntry) {
  auto dev = NewDevice(8 << 20);
  io::FaultDevice faulty(dev.get(), 2);
  auto c = MustOpen(Small(), Env(&faulty));
  ASSERT_TRUE(OfferKey(c.get(), {5, 3}));
  ASSERT_TRUE(c->Flush().ok());
  ASSERT_TRUE(faulty.AddRule({.kind = io::FaultKind::kIoError, .ops = io::kFaultOnRead}).ok());
  EXPECT_EQ(ReadAndCheck(c.get(), {5, 3}).code(), StatusCode::kIOError);
  EXPECT_EQ(Stat("io_errors"), 1);
  EXPECT_FALSE(c->Contains({5, 3}));
  EXPECT_EQ(ReadAndCheck(c.get(), {5, 3}).code(), StatusCode::kNotFound);
  EXPECT_EQ(c->sizes().device_bytes, 0u);
}

TEST_F(L2CacheTest, WriteErrorDropsTheSlotAndFlushSaysSo) {
  auto dev = NewDevice(8 << 20);
  io::FaultDevice faulty(dev.get(), 3);
  auto c = MustOpen(Small(), Env(&faulty));
  ASSERT_TRUE(faulty.AddRule({.kind = io::FaultKind::kIoError, .ops = io::kFaultOnWrite}).ok());
  ASSERT_TRUE(OfferKey(c.get(), {5, 3}));
  EXPECT_EQ(c->Flush().code(), StatusCode::kIOError);
  EXPECT_FALSE(c->Contains({5, 3}));
  EXPECT_EQ(Stat("io_errors"), 1);
  EXPECT_EQ(c->sizes().data_bytes, 0u);
  // The next slot goes where the failed one was to go, and works.
  ASSERT_TRUE(OfferKey(c.get(), {5, 3}));
  EXPECT_TRUE(c->Flush().ok());
  EXPECT_TRUE(ReadAndCheck(c.get(), {5, 3}).ok());
}

TEST_F(L2CacheTest, LabelWriteErrorFailsOpen) {
  auto dev = NewDevice(8 << 20);
  io::FaultDevice faulty(dev.get(), 4);
  ASSERT_TRUE(faulty.AddRule({.kind = io::FaultKind::kIoError, .ops = io::kFaultOnWrite}).ok());
  Result<std::unique_ptr<L2Cache>> c = L2Cache::Open(Small(), Env(&faulty));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kIOError);
}

TEST_F(L2CacheTest, TooSmallDeviceFailsOpen) {
  auto dev = NewDevice(DeviceBytesFor(4) - 4096);
  Result<std::unique_ptr<L2Cache>> c = L2Cache::Open(Small(), Env(dev.get()));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("fewer than 4"), std::string::npos) << c.status().ToString();
}

TEST_F(L2CacheTest, RebuildRestoresEntries) {
  auto dev = NewDevice(8 << 20);
  uint64_t guid = 0;
  const uint64_t n = 200;  // several slots
  {
    auto c = MustOpen(Small(), Env(dev.get()));
    guid = c->cache_guid();
    for (uint64_t i = 0; i < n; i++) {
      ASSERT_TRUE(OfferKey(c.get(), {i, 1 + i % 50}));
      if (i % 50 == 49) ASSERT_TRUE(c->Flush().ok());
    }
    ASSERT_TRUE(c->Flush().ok());
  }
  auto c = MustOpen(Small(), Env(dev.get(), 1000));
  c->WaitRebuilt();
  EXPECT_EQ(c->cache_guid(), guid);
  EXPECT_EQ(c->sizes().entries, n);
  EXPECT_EQ(Stat("rebuild_entries"), static_cast<int64_t>(n));
  for (uint64_t i = 0; i < n; i++) EXPECT_TRUE(ReadAndCheck(c.get(), {i, 1 + i % 50}).ok()) << i;
  // New slots follow the rebuilt ones and survive another reopen.
  ASSERT_TRUE(OfferKey(c.get(), {999, 1}));
  ASSERT_TRUE(c->Flush().ok());
  c.reset();
  c = MustOpen(Small(), Env(dev.get(), 1000));
  c->WaitRebuilt();
  EXPECT_EQ(c->sizes().entries, n + 1);
  EXPECT_TRUE(ReadAndCheck(c.get(), {999, 1}).ok());
  EXPECT_TRUE(ReadAndCheck(c.get(), {0, 1}).ok());
}

TEST_F(L2CacheTest, OffersWaitForTheRebuildAndReadsDoNot) {
  auto dev = NewDevice(DeviceBytesFor(4));
  {
    auto c = MustOpen(Small(), Env(dev.get()));
    for (uint64_t s = 0; s < 2; s++) {
      ASSERT_TRUE(OfferKey(c.get(), {s, 1}));
      ASSERT_TRUE(c->Flush().ok());
    }
  }
  // The label is read at Open; the rebuild's reads of slot 1 on are held.
  const L2Layout layout = *ComputeLayout(kSlotBytes, 4096, dev->size_bytes());
  ReadGate gate(dev.get(), layout.SlotOffset(1));
  gate.Close();
  auto c = MustOpen(Small(), Env(&gate));
  gate.WaitHeld(1);
  EXPECT_FALSE(OfferKey(c.get(), {9, 1}));
  EXPECT_EQ(Stat("feed_refused_other"), 1);
  // Slot 0 is in; its blocks are served while the rebuild goes on.
  EXPECT_TRUE(ReadAndCheck(c.get(), {0, 1}).ok());
  EXPECT_FALSE(c->Contains({1, 1}));
  gate.Open();
  c->WaitRebuilt();
  EXPECT_TRUE(ReadAndCheck(c.get(), {0, 1}).ok());
  EXPECT_TRUE(ReadAndCheck(c.get(), {1, 1}).ok());
  EXPECT_TRUE(OfferKey(c.get(), {9, 1}));
}

TEST_F(L2CacheTest, RebuildKeepsTheNewestCopyOfAKey) {
  auto dev = NewDevice(DeviceBytesFor(4));
  {
    auto c = MustOpen(Small(), Env(dev.get()));
    ASSERT_TRUE(OfferKey(c.get(), {10, 1}));
    ASSERT_TRUE(c->Flush().ok());
    ASSERT_TRUE(OfferKey(c.get(), {1, 1}));
    ASSERT_TRUE(c->Flush().ok());
    // Slot 1's copy is damaged and dropped by a read; the block is cached
    // again once the ring has wrapped, in slot 0: a newer slot at a lower
    // place, which the rebuild reads first.
    DamageCopy(dev.get(), BlockOf({1, 1}, 4096));
    EXPECT_EQ(ReadAndCheck(c.get(), {1, 1}).code(), StatusCode::kCorruption);
    for (uint64_t k : {20, 30, 1}) {
      ASSERT_TRUE(OfferKey(c.get(), {k, 1}));
      ASSERT_TRUE(c->Flush().ok());
    }
    EXPECT_FALSE(c->Contains({10, 1}));
  }
  auto c = MustOpen(Small(), Env(dev.get()));
  c->WaitRebuilt();
  EXPECT_EQ(c->sizes().entries, 3u);
  EXPECT_TRUE(ReadAndCheck(c.get(), {1, 1}).ok());
  EXPECT_EQ(Stat("rebuild_entries"), 3);
  // The head follows the newest slot (0): the next write goes to slot 1,
  // which holds no entry now.
  ASSERT_TRUE(OfferKey(c.get(), {40, 1}));
  ASSERT_TRUE(c->Flush().ok());
  EXPECT_EQ(Stat("evicted_entries"), 0);
  EXPECT_TRUE(ReadAndCheck(c.get(), {20, 1}).ok());
  EXPECT_TRUE(ReadAndCheck(c.get(), {1, 1}).ok());
}

TEST_F(L2CacheTest, RebuildDropsBirthsAfterTheCommittedTxgForGood) {
  auto dev = NewDevice(8 << 20);
  {
    auto c = MustOpen(Small(), Env(dev.get(), 4));
    ASSERT_TRUE(OfferKey(c.get(), {1, 5}));
    ASSERT_TRUE(OfferKey(c.get(), {2, 7}));
    ASSERT_TRUE(OfferKey(c.get(), {3, 10}));
    ASSERT_TRUE(c->Flush().ok());
  }
  {
    auto c = MustOpen(Small(), Env(dev.get(), 7));
    c->WaitRebuilt();
    EXPECT_TRUE(c->Contains({1, 5}));
    EXPECT_TRUE(c->Contains({2, 7}));
    EXPECT_FALSE(c->Contains({3, 10}));
    EXPECT_EQ(Stat("rebuild_entries"), 2);
    EXPECT_EQ(Stat("rebuild_dropped"), 1);
  }
  // The pool has since committed a txg 10 of its own: the old copy born in
  // the txg 10 that never committed must stay gone.
  auto c = MustOpen(Small(), Env(dev.get(), 20));
  c->WaitRebuilt();
  EXPECT_FALSE(c->Contains({3, 10}));
  EXPECT_TRUE(ReadAndCheck(c.get(), {1, 5}).ok());
}

TEST_F(L2CacheTest, SlotsOfEpochsTheLabelNoLongerBoundsAreDropped) {
  auto dev = NewDevice(8 << 20);
  {
    auto c = MustOpen(Small(), Env(dev.get()));
    ASSERT_TRUE(OfferKey(c.get(), {1, 1}));
    ASSERT_TRUE(c->Flush().ok());
  }
  // Opens 2 .. kMaxEpochBounds + 1 still know epoch 1; the next one does not.
  for (uint64_t open = 2; open <= kMaxEpochBounds + 1; open++) {
    auto c = MustOpen(Small(), Env(dev.get()));
    c->WaitRebuilt();
    ASSERT_TRUE(c->Contains({1, 1})) << open;
  }
  auto c = MustOpen(Small(), Env(dev.get()));
  c->WaitRebuilt();
  EXPECT_FALSE(c->Contains({1, 1}));
  EXPECT_EQ(Stat("rebuild_dropped"), 1);
}

// A slot write torn by a crash never serves wrong bytes after the reopen:
// each of its blocks is a hit with the right bytes, a miss, or a checksum
// error; the slot written before it is whole.
TEST_F(L2CacheTest, TornSlotWriteNeverServesWrongBytes) {
  for (uint64_t seed = 1; seed <= 8; seed++) {
    auto dev = NewDevice(8 << 20);
    io::FaultDevice faulty(dev.get(), seed);
    {
      auto c = MustOpen(Small(), Env(&faulty));
      for (uint64_t j = 0; j < 8; j++) ASSERT_TRUE(OfferKey(c.get(), {j, 1}));
      ASSERT_TRUE(c->Flush().ok());
      const io::FaultKind kind =
          seed % 2 == 0 ? io::FaultKind::kTornWrite : io::FaultKind::kDropWrite;
      ASSERT_TRUE(faulty.AddRule({.kind = kind, .ops = io::kFaultOnWrite}).ok());
      for (uint64_t j = 100; j < 108; j++) ASSERT_TRUE(OfferKey(c.get(), {j, 1}, 8192));
      ASSERT_TRUE(c->Flush().ok());  // the device says it was written
    }
    auto c = MustOpen(Small(), Env(&faulty));
    c->WaitRebuilt();
    for (uint64_t j = 0; j < 8; j++) EXPECT_TRUE(ReadAndCheck(c.get(), {j, 1}).ok()) << seed;
    for (uint64_t j = 100; j < 108; j++) {
      const Status st = ReadAndCheck(c.get(), {j, 1}, 8192);
      EXPECT_TRUE(st.ok() || st.code() == StatusCode::kNotFound ||
                  st.code() == StatusCode::kCorruption)
          << seed << " " << st.ToString();
    }
  }
}

TEST_F(L2CacheTest, AnotherPoolsDeviceIsFormattedFresh) {
  auto dev = NewDevice(8 << 20);
  uint64_t guid = 0;
  {
    auto c = MustOpen(Small(), Env(dev.get()));
    guid = c->cache_guid();
    ASSERT_TRUE(OfferKey(c.get(), {1, 1}));
    ASSERT_TRUE(c->Flush().ok());
  }
  {
    auto c = MustOpen(Small(), Env(dev.get(), 1000, kPool + 1));
    c->WaitRebuilt();
    EXPECT_NE(c->cache_guid(), guid);
    EXPECT_EQ(c->sizes().entries, 0u);
    EXPECT_FALSE(c->Contains({1, 1}));
    EXPECT_TRUE(OfferKey(c.get(), {2, 1}));
  }
  // And back: the label is the other pool's now, so nothing of before.
  auto c = MustOpen(Small(), Env(dev.get()));
  c->WaitRebuilt();
  EXPECT_EQ(c->sizes().entries, 0u);
}

TEST_F(L2CacheTest, RebuildOffAndOtherSlotSizeFormatFresh) {
  auto dev = NewDevice(8 << 20);
  {
    auto c = MustOpen(Small(), Env(dev.get()));
    ASSERT_TRUE(OfferKey(c.get(), {1, 1}));
    ASSERT_TRUE(c->Flush().ok());
  }
  L2CacheOptions o = Small();
  o.rebuild = false;
  {
    auto c = MustOpen(o, Env(dev.get()));
    c->WaitRebuilt();
    EXPECT_EQ(c->sizes().entries, 0u);
  }
  {
    auto c = MustOpen(Small(), Env(dev.get()));
    c->WaitRebuilt();
    EXPECT_EQ(c->sizes().entries, 0u);  // the slot's cache guid is the old one
    ASSERT_TRUE(OfferKey(c.get(), {2, 1}));
    ASSERT_TRUE(c->Flush().ok());
  }
  o = Small();
  o.slot_bytes = 512 << 10;
  auto c = MustOpen(o, Env(dev.get()));
  c->WaitRebuilt();
  EXPECT_EQ(c->sizes().entries, 0u);
}

TEST_F(L2CacheTest, DamagedSlotHeaderIsSkipped) {
  auto dev = NewDevice(8 << 20);
  L2Layout layout;
  {
    auto c = MustOpen(Small(), Env(dev.get()));
    layout = c->layout();
    for (uint64_t s = 0; s < 3; s++) {
      for (uint64_t j = 0; j < 3; j++) ASSERT_TRUE(OfferKey(c.get(), {s * 100 + j, 1}));
      ASSERT_TRUE(c->Flush().ok());
    }
  }
  // A byte of slot 1's second entry.
  std::vector<uint8_t> block(4096);
  ASSERT_TRUE(io::ReadSync(*dev, layout.SlotOffset(1), block).ok());
  block[kSlotHeaderFixedBytes + kEntryBytes + 3] ^= 1;
  ASSERT_TRUE(io::WriteSync(*dev, layout.SlotOffset(1), block).ok());
  auto c = MustOpen(Small(), Env(dev.get()));
  c->WaitRebuilt();
  EXPECT_EQ(Stat("rebuild_bad_slots"), 1);
  EXPECT_EQ(c->sizes().entries, 6u);
  for (uint64_t j = 0; j < 3; j++) {
    EXPECT_FALSE(c->Contains({100 + j, 1}));
    EXPECT_TRUE(ReadAndCheck(c.get(), {j, 1}).ok());
    EXPECT_TRUE(ReadAndCheck(c.get(), {200 + j, 1}).ok());
  }
  // The ring goes on after the newest valid slot.
  ASSERT_TRUE(OfferKey(c.get(), {300, 1}));
  ASSERT_TRUE(c->Flush().ok());
  EXPECT_TRUE(ReadAndCheck(c.get(), {200, 1}).ok());
  EXPECT_EQ(Stat("evicted_entries"), 0);
}

TEST_F(L2CacheTest, IndexMemoryPerBlockIsAtMost64Bytes) {
  auto dev = NewDevice(128 << 20, 512);
  auto c = MustOpen(Small(), Env(dev.get()));
  const uint64_t per_slot = c->layout().entries_per_slot;
  const uint64_t want = c->layout().slot_count * per_slot;
  for (uint64_t i = 0; i < want; i++) {
    ASSERT_TRUE(OfferKey(c.get(), {i * 512, 3}, 512)) << i;
    if (i % per_slot == per_slot - 1) ASSERT_TRUE(c->Flush().ok());
  }
  ASSERT_TRUE(c->Flush().ok());
  const L2Cache::Sizes s = c->sizes();
  ASSERT_EQ(s.entries, want);
  ASSERT_GT(s.entries, 30000u);
  const double per_entry = static_cast<double>(s.header_bytes) / static_cast<double>(s.entries);
  EXPECT_LE(per_entry, 64.0);
  EXPECT_GE(per_entry, 40.0);  // a node each, at least: the count is real
  EXPECT_EQ(Stat("hdr_size"), static_cast<int64_t>(s.header_bytes));
  EXPECT_EQ(Stat("entries"), static_cast<int64_t>(want));
}

TEST(L2CacheOptionsTest, ValidateNamesEachBadField) {
  EXPECT_TRUE(L2CacheOptions{}.Validate().ok());
  struct Case {
    const char* field;
    void (*spoil)(L2CacheOptions*);
  };
  const Case cases[] = {
      {"slot_bytes", [](L2CacheOptions* o) { o->slot_bytes = 128 << 10; }},
      {"slot_bytes", [](L2CacheOptions* o) { o->slot_bytes = 32 << 20; }},
      {"slot_bytes", [](L2CacheOptions* o) { o->slot_bytes = (1 << 20) + 100; }},
      {"write_max_bytes", [](L2CacheOptions* o) { o->write_max_bytes = 1024; }},
      {"write_max_bytes", [](L2CacheOptions* o) { o->write_max_bytes = 4ull << 30; }},
      {"write_boost_bytes", [](L2CacheOptions* o) { o->write_boost_bytes = 4ull << 30; }},
      {"feed_interval_ms", [](L2CacheOptions* o) { o->feed_interval_ms = 5; }},
      {"feed_interval_ms", [](L2CacheOptions* o) { o->feed_interval_ms = 120000; }},
      {"max_block_bytes", [](L2CacheOptions* o) { o->max_block_bytes = 256; }},
      {"max_block_bytes", [](L2CacheOptions* o) { o->max_block_bytes = 32 << 20; }},
      {"max_block_bytes",
       [](L2CacheOptions* o) {
         o->slot_bytes = 256 << 10;
         o->max_block_bytes = 512 << 10;
       }},
  };
  for (const Case& c : cases) {
    L2CacheOptions o;
    c.spoil(&o);
    const Status s = o.Validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(s.message().find(c.field), std::string::npos) << s.ToString();
  }
}

TEST_F(L2CacheTest, OpenChecksTheEnvAndTheDeviceBlock) {
  auto dev = NewDevice(8 << 20, 8192);
  L2CacheOptions o = Small();
  o.slot_bytes = (256 << 10) + 4096;  // not a multiple of the device's block
  EXPECT_EQ(L2Cache::Open(o, Env(dev.get())).status().code(), StatusCode::kInvalidArgument);
  L2CacheEnv env = Env(dev.get());
  env.pool_guid = 0;
  EXPECT_EQ(L2Cache::Open(Small(), env).status().code(), StatusCode::kInvalidArgument);
  env = Env(nullptr);
  EXPECT_EQ(L2Cache::Open(Small(), env).status().code(), StatusCode::kInvalidArgument);
  env = Env(dev.get());
  env.clock = nullptr;
  EXPECT_EQ(L2Cache::Open(Small(), env).status().code(), StatusCode::kInvalidArgument);
  env = Env(dev.get());
  env.stats_module = "";
  EXPECT_EQ(L2Cache::Open(Small(), env).status().code(), StatusCode::kInvalidArgument);
  env = Env(dev.get());
  env.registry = nullptr;  // stats in a registry of the cache's own
  auto c = MustOpen(Small(), env);
  ASSERT_TRUE(OfferKey(c.get(), {1, 1}));
  EXPECT_TRUE(c->Flush().ok());
}

TEST_F(L2CacheTest, TwoCachesShareARegistryUnderModulesOfTheirOwn) {
  auto a = NewDevice(8 << 20);
  auto b = NewDevice(8 << 20);
  auto first = MustOpen(Small(), Env(a.get()));
  L2CacheEnv env = Env(b.get());
  env.stats_module = "l2arc.b";
  auto second = MustOpen(Small(), env);
  ASSERT_TRUE(OfferKey(second.get(), {1, 1}));
  ASSERT_TRUE(second->Flush().ok());
  EXPECT_EQ(Stat("feeds"), 0);
  EXPECT_EQ(registry_.TakeSnapshot().Get("l2arc.b", "feeds", -1), 1);
  second.reset();
  EXPECT_EQ(registry_.TakeSnapshot().Get("l2arc.b", "feeds", -1), -1);
  EXPECT_EQ(Stat("feeds"), 0);
}

// Offerers, readers, a flusher and the writer on a small ring that wraps
// all the time. Every read is a hit with the right bytes or a miss; never
// an error, never wrong bytes.
TEST_F(L2CacheTest, ReadersOfferersAndTheWriterRace) {
  auto dev = NewDevice(DeviceBytesFor(6));
  auto c = MustOpen(Small(), Env(dev.get()));
  SeededRandom seeds = SeededRandom::FromEnvironment("l2arc race");
  const uint64_t keys = 2000;
  const uint64_t rounds = ScaledIterations(20000);
  std::atomic<bool> failed{false};
  std::atomic<int> offerers_left{2};
  auto size_of = [](uint64_t k) { return size_t{512} << (k % 5); };
  // Offers the writer is too busy for are refused, so on a loaded machine
  // `rounds` may not fill the ring: the offerers go on (up to a bound)
  // until it has come round at least once.
  auto more = [&](uint64_t i) {
    if (i < rounds) return true;
    return i < 50 * rounds && (i % 256 != 0 || Stat("evicted_entries") == 0);
  };
  std::vector<std::thread> threads;
  threads.reserve(5);
  for (int t = 0; t < 2; t++) {
    threads.emplace_back([&, r = seeds.Fork()]() mutable {
      for (uint64_t i = 0; more(i); i++) {
        const uint64_t k = r.Uniform(keys);
        const std::vector<uint8_t> data = BlockOf({k, 1}, size_of(k));
        c->Offer({k, 1}, data, false, false);
      }
      offerers_left--;
    });
  }
  for (int t = 0; t < 2; t++) {
    threads.emplace_back([&, r = seeds.Fork()]() mutable {
      while (offerers_left.load() > 0 && !failed.load()) {
        const uint64_t k = r.Uniform(keys);
        const Status s = ReadAndCheck(c.get(), {k, 1}, size_of(k));
        if (!s.ok() && s.code() != StatusCode::kNotFound) {
          ADD_FAILURE() << s.ToString();
          failed = true;
        }
      }
    });
  }
  threads.emplace_back([&] {
    while (offerers_left.load() > 0) {
      const Status s = c->Flush();
      if (!s.ok()) {
        ADD_FAILURE() << s.ToString();
        failed = true;
      }
    }
  });
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(c->Flush().ok());
  EXPECT_GT(Stat("hits"), 0);
  EXPECT_GT(Stat("evicted_entries"), 0);
  EXPECT_EQ(Stat("checksum_errors"), 0);
  EXPECT_EQ(Stat("io_errors"), 0);
  // What is left reads back whole.
  uint64_t present = 0;
  for (uint64_t k = 0; k < keys; k++) {
    if (!c->Contains({k, 1})) continue;
    present++;
    EXPECT_TRUE(ReadAndCheck(c.get(), {k, 1}, size_of(k)).ok()) << k;
  }
  EXPECT_EQ(present, c->sizes().entries);
}

}  // namespace
}  // namespace arcstore::l2arc
