// Tests of fault injection: every kind, every trigger, replay from the seed.
#include <gtest/gtest.h>

#include "base/random.h"
#include "io/memory_device.h"
#include "testing/io/fault_device.h"

namespace arcstore::io {
namespace {

constexpr uint64_t kBlock = 4096;

struct Fixture {
  explicit Fixture(uint64_t seed = 42) {
    mem = std::move(*MemoryDevice::Create({.name = "mem0", .size_bytes = 1 << 20}));
    fault = std::make_unique<FaultDevice>(mem.get(), seed);
  }
  std::unique_ptr<MemoryDevice> mem;
  std::unique_ptr<FaultDevice> fault;
};

std::vector<uint8_t> Fill(size_t n, uint8_t v) { return std::vector<uint8_t>(n, v); }

size_t BitsDiffering(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += __builtin_popcount(a[i] ^ b[i]);
  return n;
}

TEST(FaultRule, ValidateRefusesOpsTheKindCannotHave) {
  EXPECT_FALSE((FaultRule{.kind = FaultKind::kFlipOnRead, .ops = kFaultOnWrite}).Validate().ok());
  EXPECT_FALSE((FaultRule{.kind = FaultKind::kTornWrite, .ops = kFaultOnRead}).Validate().ok());
  EXPECT_FALSE((FaultRule{.kind = FaultKind::kIoError, .ops = 0}).Validate().ok());
  EXPECT_FALSE((FaultRule{.fire_count = 0}).Validate().ok());
  EXPECT_TRUE((FaultRule{.kind = FaultKind::kIoError, .ops = kFaultOnFlush}).Validate().ok());
}

TEST(FaultDevice, NthWriteFailsOnceWithEioAndWritesNothing) {
  Fixture f;
  auto id =
      f.fault->AddRule({.kind = FaultKind::kIoError, .ops = kFaultOnWrite, .skip_matches = 2});
  ASSERT_TRUE(id.ok());
  std::vector<uint8_t> data = Fill(kBlock, 0xab);
  for (int i = 0; i < 5; ++i) {
    Status s = WriteSync(*f.fault, i * kBlock, data);
    if (i == 2) {
      EXPECT_EQ(s.code(), StatusCode::kIOError);
      EXPECT_NE(s.message().find("device mem0: write offset 8192 length 4096"), std::string::npos);
    } else {
      EXPECT_TRUE(s.ok()) << i;
    }
  }
  std::vector<uint8_t> out(kBlock);
  ASSERT_TRUE(ReadSync(*f.mem, 2 * kBlock, out).ok());
  EXPECT_EQ(out, Fill(kBlock, 0));
  EXPECT_EQ(f.fault->FiredCount(*id), 1u);
  ASSERT_EQ(f.fault->Events().size(), 1u);
  EXPECT_EQ(f.fault->Events()[0].offset, 2 * kBlock);
}

TEST(FaultDevice, RangeRuleFiresForeverOnlyInsideTheRange) {
  Fixture f;
  auto id = f.fault->AddRule({.kind = FaultKind::kIoError,
                              .ops = kFaultOnRead,
                              .range_offset = 10 * kBlock,
                              .range_length = 2 * kBlock,
                              .fire_count = kForever});
  ASSERT_TRUE(id.ok());
  std::vector<uint8_t> out(kBlock);
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(ReadSync(*f.fault, 9 * kBlock, out).ok());
    EXPECT_EQ(ReadSync(*f.fault, 10 * kBlock, out).code(), StatusCode::kIOError);
    EXPECT_EQ(ReadSync(*f.fault, 11 * kBlock, out).code(), StatusCode::kIOError);
    EXPECT_TRUE(ReadSync(*f.fault, 12 * kBlock, out).ok());
  }
  std::vector<uint8_t> wide(4 * kBlock);
  EXPECT_EQ(ReadSync(*f.fault, 8 * kBlock, wide).code(), StatusCode::kIOError);  // overlaps
  EXPECT_TRUE(WriteSync(*f.fault, 10 * kBlock, out).ok());  // writes not in ops
  EXPECT_EQ(f.fault->FiredCount(*id), 7u);
  f.fault->RemoveRule(*id);
  EXPECT_TRUE(ReadSync(*f.fault, 10 * kBlock, out).ok());
}

TEST(FaultDevice, NoSpaceAndFlushErrors) {
  Fixture f;
  ASSERT_TRUE(f.fault->AddRule({.kind = FaultKind::kNoSpace, .ops = kFaultOnWrite}).ok());
  ASSERT_TRUE(f.fault->AddRule({.kind = FaultKind::kIoError, .ops = kFaultOnFlush}).ok());
  std::vector<uint8_t> data = Fill(kBlock, 1);
  EXPECT_EQ(WriteSync(*f.fault, 0, data).code(), StatusCode::kNoSpace);
  EXPECT_TRUE(WriteSync(*f.fault, 0, data).ok());  // once
  Status s = FlushSync(*f.fault);
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_NE(s.message().find("device mem0: flush"), std::string::npos);
  EXPECT_TRUE(FlushSync(*f.fault).ok());
}

TEST(FaultDevice, FlipOnReadFlipsExactlyOneBitOfTheCallersData) {
  Fixture f;
  std::vector<uint8_t> data = Fill(2 * kBlock, 0x5a);
  ASSERT_TRUE(WriteSync(*f.mem, 0, data).ok());
  ASSERT_TRUE(f.fault->AddRule({.kind = FaultKind::kFlipOnRead, .ops = kFaultOnRead}).ok());
  std::vector<uint8_t> out(2 * kBlock);
  ASSERT_TRUE(ReadSync(*f.fault, 0, out).ok());
  EXPECT_EQ(BitsDiffering(out, data), 1u);
  uint64_t bit = f.fault->Events().at(0).detail;
  EXPECT_NE(out[bit / 8], data[bit / 8]);
  ASSERT_TRUE(ReadSync(*f.fault, 0, out).ok());
  EXPECT_EQ(out, data);  // the media were never changed
}

TEST(FaultDevice, FlipOnWriteChangesTheMediaNotTheCallersBuffer) {
  Fixture f;
  ASSERT_TRUE(f.fault->AddRule({.kind = FaultKind::kFlipOnWrite, .ops = kFaultOnWrite}).ok());
  std::vector<uint8_t> data = Fill(kBlock, 0x33), copy = data;
  ASSERT_TRUE(WriteSync(*f.fault, kBlock, data).ok());
  EXPECT_EQ(data, copy);
  std::vector<uint8_t> out(kBlock);
  ASSERT_TRUE(ReadSync(*f.mem, kBlock, out).ok());
  EXPECT_EQ(BitsDiffering(out, data), 1u);
}

TEST(FaultDevice, TornWriteKeepsAProperSubsetOfWholeSectors) {
  Fixture f;
  ASSERT_TRUE(
      f.fault
          ->AddRule({.kind = FaultKind::kTornWrite, .ops = kFaultOnWrite, .fire_count = kForever})
          .ok());
  for (int round = 0; round < 20; ++round) {
    std::vector<uint8_t> zero = Fill(8 * kBlock, 0), data = Fill(8 * kBlock, 0xee);
    ASSERT_TRUE(WriteSync(*f.mem, 0, zero).ok());
    ASSERT_TRUE(WriteSync(*f.fault, 0, data).ok());  // reports success
    std::vector<uint8_t> out(8 * kBlock);
    ASSERT_TRUE(ReadSync(*f.mem, 0, out).ok());
    uint64_t kept = 0;
    for (int s = 0; s < 8; ++s) {
      bool all_new = std::all_of(out.begin() + s * kBlock, out.begin() + (s + 1) * kBlock,
                                 [](uint8_t b) { return b == 0xee; });
      bool all_old = std::all_of(out.begin() + s * kBlock, out.begin() + (s + 1) * kBlock,
                                 [](uint8_t b) { return b == 0; });
      ASSERT_TRUE(all_new || all_old) << "sector " << s << " is mixed";
      kept += all_new;
    }
    EXPECT_LT(kept, 8u);
    EXPECT_EQ(kept, f.fault->Events().back().detail);
  }
}

TEST(FaultDevice, ShortWriteWritesAPrefixOfSectorsThenFails) {
  Fixture f;
  ASSERT_TRUE(
      f.fault
          ->AddRule({.kind = FaultKind::kShortWrite, .ops = kFaultOnWrite, .fire_count = kForever})
          .ok());
  for (int round = 0; round < 20; ++round) {
    std::vector<uint8_t> zero = Fill(8 * kBlock, 0), data = Fill(8 * kBlock, 0x5a);
    ASSERT_TRUE(WriteSync(*f.mem, 0, zero).ok());
    Status s = WriteSync(*f.fault, 0, data);
    ASSERT_EQ(s.code(), StatusCode::kIOError) << s.ToString();
    EXPECT_NE(s.message().find("short write"), std::string::npos) << s.ToString();
    std::vector<uint8_t> out(8 * kBlock);
    ASSERT_TRUE(ReadSync(*f.mem, 0, out).ok());
    const uint64_t kept = f.fault->Events().back().detail;
    ASSERT_LT(kept, 8u);
    for (uint64_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i], i < kept * kBlock ? 0x5a : 0) << "byte " << i << " with " << kept
                                                      << " sectors kept";
    }
  }
}

TEST(FaultDevice, CountsEveryValidRequestByOp) {
  Fixture f;
  ASSERT_TRUE(f.fault->AddRule({.kind = FaultKind::kIoError, .ops = kFaultOnRead}).ok());
  std::vector<uint8_t> data = Fill(kBlock, 3), out(kBlock);
  ASSERT_TRUE(WriteSync(*f.fault, 0, data).ok());
  ASSERT_TRUE(WriteSync(*f.fault, kBlock, data).ok());
  EXPECT_FALSE(ReadSync(*f.fault, 0, out).ok());  // faulted, still counted
  ASSERT_TRUE(ReadSync(*f.fault, 0, out).ok());
  ASSERT_TRUE(FlushSync(*f.fault).ok());
  ASSERT_TRUE(DiscardSync(*f.fault, 0, kBlock).ok());
  EXPECT_FALSE(WriteSync(*f.fault, 1, data).ok());  // misaligned: refused, not counted
  RequestCounts c = f.fault->Counts();
  EXPECT_EQ(c.writes, 2u);
  EXPECT_EQ(c.reads, 2u);
  EXPECT_EQ(c.flushes, 1u);
  EXPECT_EQ(c.discards, 1u);
  EXPECT_EQ(c.total(), 6u);
}

TEST(FaultDevice, DroppedWriteReportsSuccessAndWritesNothing) {
  Fixture f;
  ASSERT_TRUE(f.fault->AddRule({.kind = FaultKind::kDropWrite, .ops = kFaultOnWrite}).ok());
  std::vector<uint8_t> data = Fill(kBlock, 7), out(kBlock);
  ASSERT_TRUE(WriteSync(*f.fault, 0, data).ok());
  ASSERT_TRUE(ReadSync(*f.fault, 0, out).ok());
  EXPECT_EQ(out, Fill(kBlock, 0));
  ASSERT_TRUE(WriteSync(*f.fault, 0, data).ok());
  ASSERT_TRUE(ReadSync(*f.fault, 0, out).ok());
  EXPECT_EQ(out, data);
}

TEST(FaultDevice, FirstAddedRuleWinsAndEachCountsItsOwnMatches) {
  Fixture f;
  auto a = f.fault->AddRule({.kind = FaultKind::kNoSpace, .ops = kFaultOnWrite, .skip_matches = 1});
  auto b = f.fault->AddRule({.kind = FaultKind::kIoError, .ops = kFaultOnWrite, .skip_matches = 1});
  std::vector<uint8_t> data = Fill(kBlock, 1);
  EXPECT_TRUE(WriteSync(*f.fault, 0, data).ok());
  EXPECT_EQ(WriteSync(*f.fault, 0, data).code(), StatusCode::kNoSpace);
  EXPECT_EQ(WriteSync(*f.fault, 0, data).code(), StatusCode::kIOError);
  EXPECT_TRUE(WriteSync(*f.fault, 0, data).ok());
  EXPECT_EQ(f.fault->FiredCount(*a), 1u);
  EXPECT_EQ(f.fault->FiredCount(*b), 1u);
}

TEST(FaultDevice, SameSeedReplaysTheSameFaults) {
  SeededRandom random = SeededRandom::FromEnvironment("FaultDevice.SameSeedReplays");
  uint64_t seed = random.Next();
  std::vector<uint64_t> details[2];
  for (int run = 0; run < 2; ++run) {
    Fixture f(seed);
    ASSERT_TRUE(
        f.fault
            ->AddRule(
                {.kind = FaultKind::kFlipOnWrite, .ops = kFaultOnWrite, .fire_count = kForever})
            .ok());
    std::vector<uint8_t> data = Fill(4 * kBlock, 0);
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(WriteSync(*f.fault, 0, data).ok());
    for (const FaultEvent& e : f.fault->Events()) details[run].push_back(e.detail);
  }
  EXPECT_EQ(details[0], details[1]);
  EXPECT_EQ(details[0].size(), 50u);
}

}  // namespace
}  // namespace arcstore::io
