// Labels and uberblock rings on a (memory or fault-injecting) device.
#include <gtest/gtest.h>

#include <set>

#include "base/random.h"
#include "format/label_io.h"
#include "format/test_samples.h"
#include "io/memory_device.h"
#include "testing/io/fault_device.h"

namespace arcstore::format {
namespace {

constexpr uint64_t kPoolGuid = 0xfeedface12345678ull;

struct Pool {
  Pool() {
    device = std::move(*io::MemoryDevice::Create({.name = "mem0", .size_bytes = (8 << 20) + 4096}));
    layout = *ComputeLayout(device->size_bytes(), 4096);
    header = samples::Label();
    header.device_size_bytes = layout.end_bytes;
  }
  Uberblock At(uint64_t txg) {
    Uberblock ub = samples::UberblockSample();
    ub.txg = txg;
    ub.root.birth_txg = ub.space_log.birth_txg = txg;
    return ub;
  }
  std::unique_ptr<io::MemoryDevice> device;
  DeviceLayout layout;
  LabelHeader header;
};

TEST(LabelIo, WriteThenReadBothLabels) {
  Pool p;
  ASSERT_TRUE(WriteLabels(*p.device, p.header).ok());
  std::vector<std::string> warnings;
  auto h = ReadLabel(*p.device, &warnings);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(h->position, LabelPosition::kFront);
  EXPECT_EQ(h->pool_guid, p.header.pool_guid);
  EXPECT_EQ(h->config, p.header.config);
  LabelHeader wrong = p.header;
  wrong.device_size_bytes = 64ull << 20;
  EXPECT_FALSE(WriteLabels(*p.device, wrong).ok());
}

TEST(LabelIo, RewriteChangesTheConfigAndKeepsTheRings) {
  Pool p;
  ASSERT_TRUE(WriteLabels(*p.device, p.header).ok());
  ASSERT_TRUE(WriteUberblock(*p.device, p.layout, p.At(7)).ok());
  LabelHeader next = p.header;
  next.config.Set("cache.0", "/dev/fast0");
  next.config.Set(std::string(kConfigGenerationKey), "1");
  ASSERT_TRUE(RewriteLabelHeaders(*p.device, next).ok());
  std::vector<std::string> warnings;
  auto h = ReadLabel(*p.device, &warnings);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(h->config.Get("cache.0"), "/dev/fast0");
  EXPECT_EQ(ConfigGeneration(h->config), 1u);
  auto scan = ScanUberblocks(*p.device, p.layout, p.header.pool_guid);
  ASSERT_TRUE(scan.ok());
  ASSERT_EQ(scan->valid.size(), 1u);  // the rings are as they were
  EXPECT_EQ(scan->valid[0].txg, 7u);
}

TEST(LabelIo, ARewriteCutShortReadsTheNewerConfig) {
  for (bool front_newer : {true, false}) {
    Pool p;
    LabelHeader old_h = p.header;
    old_h.config.Set(std::string(kConfigGenerationKey), "4");
    ASSERT_TRUE(WriteLabels(*p.device, old_h).ok());
    LabelHeader new_h = old_h;
    new_h.config.Set("cache.0", "/dev/fast0");
    new_h.config.Set(std::string(kConfigGenerationKey), "5");
    // One header written, the other not (either order: a crash).
    LabelHeader front_h = front_newer ? new_h : old_h;
    front_h.position = LabelPosition::kFront;
    auto front = EncodeLabelHeader(front_h);
    LabelHeader back_h = front_newer ? old_h : new_h;
    back_h.position = LabelPosition::kBack;
    auto back = EncodeLabelHeader(back_h);
    ASSERT_TRUE(front.ok() && back.ok());
    ASSERT_TRUE(io::WriteSync(*p.device, p.layout.front_header, *front).ok());
    ASSERT_TRUE(io::WriteSync(*p.device, p.layout.back_header, *back).ok());
    std::vector<std::string> warnings;
    auto h = ReadLabel(*p.device, &warnings);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(ConfigGeneration(h->config), 5u);
    EXPECT_EQ(h->config.Get("cache.0"), "/dev/fast0");
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("generations"), std::string::npos) << warnings[0];
  }
}

TEST(LabelIo, LabelsThatDifferOtherwiseStillDisagree) {
  Pool p;
  ASSERT_TRUE(WriteLabels(*p.device, p.header).ok());
  // The same generation with another config: not a rewrite cut short.
  LabelHeader other = p.header;
  other.config.Set("cache.0", "/dev/fast0");
  other.position = LabelPosition::kBack;
  auto back = EncodeLabelHeader(other);
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(io::WriteSync(*p.device, p.layout.back_header, *back).ok());
  EXPECT_EQ(ReadLabel(*p.device, nullptr).status().code(), StatusCode::kCorruption);
  // Newer generation but another guid: never taken.
  other.config.Set(std::string(kConfigGenerationKey), "9");
  other.device_guid ^= 1;
  back = EncodeLabelHeader(other);
  ASSERT_TRUE(io::WriteSync(*p.device, p.layout.back_header, *back).ok());
  EXPECT_EQ(ReadLabel(*p.device, nullptr).status().code(), StatusCode::kCorruption);
}

TEST(LabelIo, EitherLabelAloneSufficesAndDamageIsReported) {
  for (uint64_t damaged : {uint64_t{0}, BackHeaderOffset((8 << 20) + 4096)}) {
    Pool p;
    ASSERT_TRUE(WriteLabels(*p.device, p.header).ok());
    std::vector<uint8_t> junk(4096, 0x5a);
    ASSERT_TRUE(io::WriteSync(*p.device, damaged, junk).ok());
    std::vector<std::string> warnings;
    auto h = ReadLabel(*p.device, &warnings);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(h->position, damaged == 0 ? LabelPosition::kBack : LabelPosition::kFront);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(damaged == 0 ? "front label" : "back label"), std::string::npos);
  }
  Pool p;
  auto none = ReadLabel(*p.device, nullptr);  // never labelled
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kCorruption);
  EXPECT_NE(none.status().message().find("no usable label"), std::string::npos);
}

TEST(LabelIo, RingScanFindsTheNewestAndWrapsAround) {
  Pool p;
  ASSERT_TRUE(WriteLabels(*p.device, p.header).ok());
  for (uint64_t txg = 1; txg <= 300; ++txg) {
    ASSERT_TRUE(WriteUberblock(*p.device, p.layout, p.At(txg)).ok());
  }
  auto scan = ScanUberblocks(*p.device, p.layout, kPoolGuid);
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->problems.empty());
  ASSERT_EQ(scan->valid.size(), kUberblockSlots);
  EXPECT_EQ(scan->valid.front().txg, 300u);
  EXPECT_EQ(scan->valid.back().txg, 300u - 127);
  EXPECT_EQ(scan->valid.front(), p.At(300));
}

TEST(LabelIo, ADamagedNewestCopyFallsBackToTheOtherRingOrTheOlderTxg) {
  Pool p;
  ASSERT_TRUE(WriteLabels(*p.device, p.header).ok());
  for (uint64_t txg = 1; txg <= 10; ++txg) {
    ASSERT_TRUE(WriteUberblock(*p.device, p.layout, p.At(txg)).ok());
  }
  std::vector<uint8_t> junk(4096, 0);
  junk[100] = 1;
  // Front copy of txg 10 damaged: the back copy still gives txg 10.
  ASSERT_TRUE(io::WriteSync(*p.device, p.layout.SlotOffset(LabelPosition::kFront, 10), junk).ok());
  auto scan = ScanUberblocks(*p.device, p.layout, kPoolGuid);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->valid.front().txg, 10u);
  ASSERT_EQ(scan->problems.size(), 1u);
  EXPECT_NE(scan->problems[0].find("front ring slot 10"), std::string::npos) << scan->problems[0];
  // Both copies damaged: txg 9 is the newest, and both damages are reported.
  ASSERT_TRUE(io::WriteSync(*p.device, p.layout.SlotOffset(LabelPosition::kBack, 10), junk).ok());
  scan = ScanUberblocks(*p.device, p.layout, kPoolGuid);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->valid.front().txg, 9u);
  EXPECT_EQ(scan->problems.size(), 2u);
}

TEST(LabelIo, ForeignAndMisplacedUberblocksAreRejected) {
  Pool p;
  ASSERT_TRUE(WriteLabels(*p.device, p.header).ok());
  Uberblock foreign = p.At(5);
  foreign.pool_guid = 99;
  ASSERT_TRUE(WriteUberblock(*p.device, p.layout, foreign).ok());
  std::vector<uint8_t> slot = EncodeUberblock(p.At(6));
  slot.resize(4096, 0);
  ASSERT_TRUE(io::WriteSync(*p.device, p.layout.SlotOffset(LabelPosition::kFront, 7), slot).ok());
  auto scan = ScanUberblocks(*p.device, p.layout, kPoolGuid);
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->valid.empty());
  EXPECT_EQ(scan->problems.size(), 3u);  // foreign x2, misplaced x1
}

TEST(LabelIo, RandomDamageNeverYieldsAnUberblockThatWasNotWritten) {
  SeededRandom random = SeededRandom::FromEnvironment("LabelIo.RandomDamage");
  Pool p;
  ASSERT_TRUE(WriteLabels(*p.device, p.header).ok());
  const uint64_t newest = 200;
  for (uint64_t txg = 1; txg <= newest; ++txg) {
    ASSERT_TRUE(WriteUberblock(*p.device, p.layout, p.At(txg)).ok());
  }
  std::vector<uint8_t> clean = p.device->Contents();
  for (uint64_t round = 0; round < ScaledIterations(200); ++round) {
    auto dev = std::move(*io::MemoryDevice::FromImage({.name = "img"}, clean));
    // Flip 1 to 8 random bits in the first 512 bytes of random slots.
    std::set<uint64_t> damaged;  // slots hit in either ring
    std::set<uint64_t> hit;      // (ring, slot) pairs, each hit once
    for (uint64_t k = random.Range(1, 8); k > 0; --k) {
      auto pos = random.OneIn(2) ? LabelPosition::kFront : LabelPosition::kBack;
      uint32_t slot = static_cast<uint32_t>(random.Uniform(kUberblockSlots));
      uint64_t at = p.layout.SlotOffset(pos, slot);
      if (!hit.insert(at).second) continue;
      std::vector<uint8_t> block(4096);
      ASSERT_TRUE(io::ReadSync(*dev, at, block).ok());
      block[random.Uniform(kUberblockBytes)] ^= static_cast<uint8_t>(1u << random.Uniform(8));
      ASSERT_TRUE(io::WriteSync(*dev, at, block).ok());
      damaged.insert(slot);
    }
    auto scan = ScanUberblocks(*dev, p.layout, kPoolGuid);
    ASSERT_TRUE(scan.ok());
    for (const Uberblock& ub : scan->valid) ASSERT_EQ(ub, p.At(ub.txg)) << "round " << round;
    ASSERT_FALSE(scan->valid.empty());
    // Every txg whose slot was not hit in either ring is still found.
    std::set<uint64_t> found;
    for (const Uberblock& ub : scan->valid) found.insert(ub.txg);
    for (uint64_t txg = newest - kUberblockSlots + 1; txg <= newest; ++txg) {
      if (!damaged.count(txg % kUberblockSlots)) ASSERT_TRUE(found.count(txg)) << txg;
    }
    ASSERT_FALSE(scan->problems.empty());
  }
}

TEST(LabelIo, TornUberblockWriteLeavesThePreviousTxg) {
  Pool p;
  auto mem = std::move(*io::MemoryDevice::Create(
      {.name = "mem512", .size_bytes = (8 << 20), .logical_block_size = 512}));
  DeviceLayout layout = *ComputeLayout(mem->size_bytes(), 4096);
  LabelHeader header = p.header;
  header.device_size_bytes = layout.end_bytes;
  io::FaultDevice fault(mem.get(), 11);
  ASSERT_TRUE(WriteLabels(fault, header).ok());
  ASSERT_TRUE(WriteUberblock(fault, layout, p.At(1)).ok());
  ASSERT_TRUE(WriteUberblock(fault, layout, p.At(2)).ok());
  // Txg 130 reuses slot 2 (130 mod 128); both of its writes tear.
  ASSERT_TRUE(
      fault.AddRule({.kind = io::FaultKind::kTornWrite, .ops = io::kFaultOnWrite, .fire_count = 2})
          .ok());
  ASSERT_TRUE(WriteUberblock(fault, layout, p.At(130)).ok());
  auto scan = ScanUberblocks(fault, layout, kPoolGuid);
  ASSERT_TRUE(scan.ok());
  ASSERT_FALSE(scan->valid.empty());
  // A torn slot holds either old or new sectors: never a mix that decodes.
  uint64_t newest = scan->valid.front().txg;
  EXPECT_TRUE(newest == 1 || newest == 2 || newest == 130) << newest;
  for (const Uberblock& ub : scan->valid) {
    EXPECT_TRUE(ub == p.At(ub.txg)) << "txg " << ub.txg << " decoded but differs";
  }
}

}  // namespace
}  // namespace arcstore::format
