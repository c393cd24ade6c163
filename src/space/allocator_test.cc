#include "space/allocator.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "base/random.h"
#include "base/units.h"

namespace arcstore::space {
namespace {

SpaceOptions Opts(uint64_t size = 64 * kMiB, uint64_t reserve = 0) {
  SpaceOptions o;
  o.start_bytes = 1 * kMiB;
  o.end_bytes = 1 * kMiB + size;
  o.reserve_bytes = reserve;
  return o;
}

void CheckInvariants(const SpaceAllocator& a) {
  SpaceUsage u = a.Usage();
  ASSERT_EQ(u.free_bytes + u.allocated_bytes + u.deferred_bytes, u.total_bytes);
  ASSERT_LE(u.largest_free_bytes, u.free_bytes);
}

TEST(SpaceAllocatorTest, ConsecutiveAllocationsAreContiguous) {
  SpaceAllocator a(Opts());
  Extent prev = *a.Allocate(128 * kKiB, AllocClass::kData, 5);
  for (int i = 0; i < 100; i++) {
    Extent e = *a.Allocate(4096 + i * 100, AllocClass::kData, 5);
    EXPECT_EQ(e.offset_bytes, prev.end_bytes()) << "allocation " << i;
    EXPECT_EQ(e.length_bytes % 4096, 0u);
    prev = e;
  }
  CheckInvariants(a);
}

TEST(SpaceAllocatorTest, FreesWaitTwoTxgs) {
  SpaceAllocator a(Opts(1 * kMiB));
  Extent e = *a.Allocate(1 * kMiB, AllocClass::kData, 10);
  a.SyncDone(10);
  EXPECT_EQ(a.Allocate(4096, AllocClass::kData, 11).status().code(), StatusCode::kNoSpace);
  ASSERT_TRUE(a.Free(e, 11).ok());
  EXPECT_EQ(a.Usage().deferred_bytes, 1 * kMiB);
  a.SyncDone(11);
  a.SyncDone(12);
  EXPECT_EQ(a.Allocate(4096, AllocClass::kData, 13).status().code(), StatusCode::kNoSpace)
      << "freed in 11: still referenced by txg 10, a rollback target until 13 syncs";
  a.SyncDone(13);
  EXPECT_TRUE(a.Allocate(4096, AllocClass::kData, 14).ok());
  CheckInvariants(a);
}

TEST(SpaceAllocatorTest, FreeInTheAllocatingTxgIsImmediate) {
  SpaceAllocator a(Opts(1 * kMiB));
  Extent e = *a.Allocate(1 * kMiB, AllocClass::kData, 7);
  ASSERT_TRUE(a.Free(e, 7).ok());
  EXPECT_EQ(a.Usage().free_bytes, 1 * kMiB);
  EXPECT_EQ(a.Usage().free_extents, 1u);  // coalesced back
}

TEST(SpaceAllocatorTest, ReserveIsForMetadataOnly) {
  SpaceAllocator a(Opts(8 * kMiB, 1 * kMiB));
  ASSERT_TRUE(a.Allocate(7 * kMiB, AllocClass::kData, 1).ok());
  Result<Extent> r = a.Allocate(4096, AllocClass::kData, 1);
  ASSERT_EQ(r.status().code(), StatusCode::kNoSpace);
  EXPECT_NE(r.status().message().find("reserved for metadata"), std::string::npos);
  EXPECT_TRUE(a.Allocate(512 * kKiB, AllocClass::kMetadata, 1).ok());
}

TEST(SpaceAllocatorTest, BadFreesAreCorruptionNotCrashes) {
  SpaceAllocator a(Opts());
  Extent e = *a.Allocate(8192, AllocClass::kData, 1);
  EXPECT_EQ(a.Free(Extent{e.offset_bytes, 4096}, 2).code(), StatusCode::kCorruption);
  ASSERT_TRUE(a.Free(e, 2).ok());
  Status twice = a.Free(e, 3);
  EXPECT_EQ(twice.code(), StatusCode::kCorruption);
  EXPECT_NE(twice.message().find("double free"), std::string::npos);
  EXPECT_EQ(a.Free(Extent{0, 4096}, 3).code(), StatusCode::kCorruption);  // before start
  EXPECT_EQ(a.Free(Extent{1 * kMiB + 1, 4096}, 3).code(), StatusCode::kCorruption);
}

TEST(SpaceAllocatorTest, OptionsAreValidated) {
  SpaceOptions o = Opts();
  o.unit_bytes = 3000;
  EXPECT_NE(o.Validate().message().find("unit_bytes"), std::string::npos);
  o = Opts();
  o.defer_txgs = 1;
  EXPECT_NE(o.Validate().message().find("defer_txgs"), std::string::npos);
  o.unsafe_allow_short_defer = true;
  EXPECT_TRUE(o.Validate().ok());
  o = Opts();
  o.end_bytes = o.start_bytes;
  EXPECT_FALSE(o.Validate().ok());
}

// A random sequence of allocations, frees and syncs, checked against a model;
// then the log (and its condensed form) must rebuild the same state.
TEST(SpaceAllocatorTest, RandomOperationsMatchModelAndReload) {
  SeededRandom rnd = SeededRandom::FromEnvironment("SpaceAllocatorTest");
  SpaceOptions o = Opts(16 * kMiB, 1 * kMiB);
  SpaceAllocator a(o);
  std::vector<SpaceRecord> log;
  std::vector<Extent> live;
  std::set<uint64_t> live_offsets;
  uint64_t txg = 1;
  const uint64_t steps = ScaledIterations(20000);
  for (uint64_t i = 0; i < steps; i++) {
    uint64_t op = rnd.Uniform(10);
    if (op < 5) {
      Result<Extent> e = a.Allocate(rnd.Range(1, 256 * kKiB),
                                    rnd.OneIn(4) ? AllocClass::kMetadata : AllocClass::kData, txg);
      if (e.ok()) {
        ASSERT_TRUE(live_offsets.insert(e->offset_bytes).second) << "handed out twice";
        for (const Extent& l : live) {
          ASSERT_TRUE(e->end_bytes() <= l.offset_bytes || l.end_bytes() <= e->offset_bytes)
              << "overlap";
        }
        live.push_back(*e);
      } else {
        ASSERT_EQ(e.status().code(), StatusCode::kNoSpace);
      }
    } else if (op < 9 && !live.empty()) {
      size_t k = rnd.Uniform(live.size());
      ASSERT_TRUE(a.Free(live[k], txg).ok());
      live_offsets.erase(live[k].offset_bytes);
      live[k] = live.back();
      live.pop_back();
    } else {
      for (const SpaceRecord& r : a.TakeRecords()) log.push_back(r);
      a.SyncDone(txg);
      txg++;
    }
    CheckInvariants(a);
  }
  for (const SpaceRecord& r : a.TakeRecords()) log.push_back(r);
  a.SyncDone(txg);

  Result<SpaceAllocator> from_log = SpaceAllocator::Load(o, log, txg);
  ASSERT_TRUE(from_log.ok()) << from_log.status().ToString();
  Result<SpaceAllocator> from_condensed = SpaceAllocator::Load(o, a.CondensedRecords(txg), txg);
  ASSERT_TRUE(from_condensed.ok()) << from_condensed.status().ToString();
  for (const SpaceAllocator* b : {&*from_log, &*from_condensed}) {
    SpaceUsage x = a.Usage(), y = b->Usage();
    EXPECT_EQ(x.allocated_bytes, y.allocated_bytes);
    EXPECT_EQ(x.free_bytes, y.free_bytes);
    EXPECT_EQ(x.deferred_bytes, y.deferred_bytes);
    EXPECT_EQ(x.free_extents, y.free_extents);
    for (const Extent& l : live) EXPECT_TRUE(b->IsAllocated(l));
  }
}

TEST(SpaceAllocatorTest, LoadRejectsInconsistentLogs) {
  SpaceOptions o = Opts();
  Extent e{2 * kMiB, 8192};
  std::vector<SpaceRecord> twice = {{SpaceRecord::Kind::kAlloc, 1, e},
                                    {SpaceRecord::Kind::kAlloc, 2, e}};
  Result<SpaceAllocator> r = SpaceAllocator::Load(o, twice, 5);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("space log record 1"), std::string::npos);
  std::vector<SpaceRecord> future = {{SpaceRecord::Kind::kAlloc, 9, e}};
  EXPECT_EQ(SpaceAllocator::Load(o, future, 5).status().code(), StatusCode::kCorruption);
  std::vector<SpaceRecord> stray_free = {{SpaceRecord::Kind::kFree, 1, e}};
  EXPECT_EQ(SpaceAllocator::Load(o, stray_free, 5).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace arcstore::space
