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
  ASSERT_LE(u.large_free_bytes, u.free_bytes);
  if (u.largest_free_bytes >= a.options().large_extent_bytes) {
    ASSERT_GE(u.large_free_bytes, u.largest_free_bytes);
  } else {
    ASSERT_EQ(u.large_free_bytes, 0u);
  }
}

constexpr uint64_t kRecord = 128 * kKiB;

// An aged layout: the whole space allocated in records of 128 KiB in txg 1,
// then the records whose index `free_it` picks freed in txg 2, and the frees
// aged so that they are allocatable. The cursor is at the end of the space.
template <typename Pick>
void Age(SpaceAllocator& a, Pick free_it) {
  const SpaceOptions& o = a.options();
  std::vector<Extent> records;
  for (uint64_t at = o.start_bytes; at < o.end_bytes; at += kRecord) {
    Result<Extent> e = a.Allocate(kRecord, AllocClass::kMetadata, 1);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_EQ(e->offset_bytes, at);
    records.push_back(*e);
  }
  a.SyncDone(1);
  for (uint64_t i = 0; i < records.size(); i++) {
    if (free_it(i)) ASSERT_TRUE(a.Free(records[i], 2).ok());
  }
  for (uint64_t t = 2; t <= 4; t++) a.SyncDone(t);
  ASSERT_EQ(a.Usage().deferred_bytes, 0u);
  CheckInvariants(a);
}

// `n` records allocated in txg `txg`: their extents.
std::vector<Extent> AllocateRecords(SpaceAllocator& a, int n, uint64_t txg) {
  std::vector<Extent> out;
  for (int i = 0; i < n; i++) {
    Result<Extent> e = a.Allocate(kRecord, AllocClass::kData, txg);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (e.ok()) out.push_back(*e);
  }
  return out;
}

void ExpectSideBySide(const std::vector<Extent>& es, uint64_t first_offset) {
  ASSERT_FALSE(es.empty());
  EXPECT_EQ(es[0].offset_bytes, first_offset);
  for (size_t i = 1; i < es.size(); i++) {
    EXPECT_EQ(es[i].offset_bytes, es[i - 1].end_bytes()) << "allocation " << i;
  }
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

// The aged pool of issue 5: every other record freed leaves 128 KiB holes;
// one run of 2 MiB was freed too. A txg's records go to the run, side by
// side, not into the holes (plain next fit or best fit took the holes, one
// record per I/O).
TEST(SpaceAllocatorTest, RecordsSkipSmallHolesForALargeExtent) {
  SpaceAllocator a(Opts(16 * kMiB));
  const uint64_t run_first = 100, run_records = 16;  // 2 MiB from record 100
  Age(a, [&](uint64_t i) {
    return (i < 64 && i % 2 == 1) || (i >= run_first && i < run_first + run_records);
  });
  EXPECT_EQ(a.Usage().large_free_bytes, 2 * kMiB);
  std::vector<Extent> got = AllocateRecords(a, 16, 5);
  ExpectSideBySide(got, a.options().start_bytes + run_first * kRecord);
  EXPECT_EQ(a.Usage().hole_allocations, 0u);
  EXPECT_EQ(a.Usage().large_free_bytes, 0u);
  CheckInvariants(a);
}

// The run at the cursor continues while its extent has room, even when
// what is left of it is smaller than a large extent.
TEST(SpaceAllocatorTest, TheRunAtTheCursorContinuesToTheEndOfItsExtent) {
  SpaceAllocator a(Opts(16 * kMiB));
  // Free runs of 1.25 MiB (10 records) at records 10 and 50, holes elsewhere.
  Age(a, [](uint64_t i) { return (i >= 10 && i < 20) || (i >= 50 && i < 60) || i % 4 == 3; });
  std::vector<Extent> got = AllocateRecords(a, 20, 5);
  const uint64_t start = a.options().start_bytes;
  ExpectSideBySide(std::vector<Extent>(got.begin(), got.begin() + 10), start + 10 * kRecord);
  ExpectSideBySide(std::vector<Extent>(got.begin() + 10, got.end()), start + 50 * kRecord);
  EXPECT_EQ(a.Usage().hole_allocations, 0u);
}

// Past the last large extent, allocation wraps round to the first one,
// skipping holes after the cursor.
TEST(SpaceAllocatorTest, AllocationWrapsRoundToTheFirstLargeExtent) {
  SpaceAllocator a(Opts(16 * kMiB));
  // Runs of 1 MiB at records 8 and 64; holes at every 3rd record from 80 on.
  Age(a, [](uint64_t i) {
    return (i >= 8 && i < 16) || (i >= 64 && i < 72) || (i >= 80 && i % 3 == 0);
  });
  const uint64_t start = a.options().start_bytes;
  // The cursor is at the end of the space: the first run, then the second.
  ExpectSideBySide(AllocateRecords(a, 8, 5), start + 8 * kRecord);
  ExpectSideBySide(AllocateRecords(a, 8, 5), start + 64 * kRecord);
  EXPECT_EQ(a.Usage().hole_allocations, 0u);
  // No large extent is left: the holes are used (space is short), and
  // counted.
  EXPECT_EQ(a.Usage().large_free_bytes, 0u);
  std::vector<Extent> holes = AllocateRecords(a, 3, 5);
  ASSERT_EQ(holes.size(), 3u);
  for (const Extent& e : holes) {
    EXPECT_EQ((e.offset_bytes - start) / kRecord % 3, 0u) << e.offset_bytes;
    EXPECT_GE(e.offset_bytes, start + 80 * kRecord);
  }
  EXPECT_EQ(a.Usage().hole_allocations, 3u);
  CheckInvariants(a);
}

// With no large extent, the smallest hole with room is taken: a 256 KiB
// hole is kept for a request that needs it.
TEST(SpaceAllocatorTest, HolesAreTakenByBestFit) {
  SpaceAllocator a(Opts(4 * kMiB));
  // A 256 KiB hole at records 2-3, 128 KiB holes at 10 and 20.
  Age(a, [](uint64_t i) { return i == 2 || i == 3 || i == 10 || i == 20; });
  const uint64_t start = a.options().start_bytes;
  Extent small = *a.Allocate(kRecord, AllocClass::kData, 5);
  EXPECT_TRUE(small.offset_bytes == start + 10 * kRecord ||
              small.offset_bytes == start + 20 * kRecord)
      << small.offset_bytes;
  Extent two = *a.Allocate(2 * kRecord, AllocClass::kData, 5);
  EXPECT_EQ(two.offset_bytes, start + 2 * kRecord);
  EXPECT_EQ(a.Usage().hole_allocations, 2u);
}

// A request longer than a large extent takes the best fit among the
// extents long enough, wherever the cursor is.
TEST(SpaceAllocatorTest, RequestsLongerThanALargeExtentTakeTheBestFit) {
  SpaceAllocator a(Opts(16 * kMiB));
  // Free: 4 MiB at record 8, 2 MiB at record 80, 1 MiB at record 110.
  Age(a, [](uint64_t i) {
    return (i >= 8 && i < 40) || (i >= 80 && i < 96) || (i >= 110 && i < 118);
  });
  const uint64_t start = a.options().start_bytes;
  Extent e = *a.Allocate(2 * kMiB, AllocClass::kData, 5);
  EXPECT_EQ(e.offset_bytes, start + 80 * kRecord);
  e = *a.Allocate(3 * kMiB, AllocClass::kData, 5);
  EXPECT_EQ(e.offset_bytes, start + 8 * kRecord);
  EXPECT_EQ(a.Usage().hole_allocations, 0u);
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

// Once large extents hold less than the reserve, data fills the holes and
// leaves the large extents to metadata, whose blocks must be contiguous.
TEST(SpaceAllocatorTest, DataLeavesTheLastLargeExtentsToMetadata) {
  SpaceAllocator a(Opts(16 * kMiB, 2 * kMiB));
  Age(a, [](uint64_t i) { return (i < 64 && i % 2 == 1) || (i >= 100 && i < 116); });
  ASSERT_EQ(a.Usage().large_free_bytes, 2 * kMiB);
  std::vector<Extent> got = AllocateRecords(a, 16, 5);
  ASSERT_EQ(got.size(), 16u);
  for (const Extent& e : got) {
    EXPECT_LT(e.offset_bytes, a.options().start_bytes + 64 * kRecord) << "in a hole";
  }
  EXPECT_EQ(a.Usage().hole_allocations, 16u);
  EXPECT_EQ(a.Usage().large_free_bytes, 2 * kMiB);
  Result<Extent> meta = a.Allocate(kMiB, AllocClass::kMetadata, 5);
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_EQ(meta->offset_bytes, a.options().start_bytes + 100 * kRecord);
  CheckInvariants(a);
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
  for (uint64_t bad : {uint64_t{0}, uint64_t{6000}, 2 * kGiB}) {
    o = Opts();
    o.large_extent_bytes = bad;
    EXPECT_NE(o.Validate().message().find("large_extent_bytes " + std::to_string(bad)),
              std::string::npos)
        << bad;
  }
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
      const SpaceUsage before = a.Usage();
      const uint64_t size = rnd.Range(1, 256 * kKiB);
      const AllocClass cls = rnd.OneIn(4) ? AllocClass::kMetadata : AllocClass::kData;
      Result<Extent> e = a.Allocate(size, cls, txg);
      // (Data takes holes once large extents hold less than the reserve.)
      if (before.large_free_bytes > 0 &&
          (cls == AllocClass::kMetadata || before.large_free_bytes >= o.reserve_bytes + size)) {
        ASSERT_EQ(a.Usage().hole_allocations, before.hole_allocations)
            << "a hole was taken while a large extent was free";
      }
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
