// Kill test (label "crash"): the ztest-style kill-and-reopen loop of
// kill_stress.h, short. Many threads write, FUA-write, trim, zero, flush and
// read-verify three volumes while syncs (every 100 ms) and eviction (a 16-32
// MiB ARC) run; the child tells the parent what is durable after every
// flush and FUA write; the parent SIGKILLs it at random moments, reopens,
// runs fsck and requires every durable write (or a newer one) and nothing
// else. About a minute at ARCSTORE_TEST_SCALE=1; kill_long_test runs 500
// cycles (label "long").
#include <gtest/gtest.h>

#include "base/random.h"
#include "pool/kill_stress.h"

namespace arcstore::pool {
namespace {

KillStressOptions Short() {
  KillStressOptions o;
  o.dir = ::testing::TempDir();
  o.cycles = ScaledIterations(80);
  return o;
}

void ExpectClean(const KillStressOptions& o, const KillStressResult& r) {
  EXPECT_EQ(r.first_failure, "");
  EXPECT_EQ(r.durable_lost, 0u);
  EXPECT_EQ(r.cycles, o.cycles);
  EXPECT_GT(r.flushes, 0u);
}

TEST(KillTest, NothingDurableIsLostWhenTheProcessDies) {
  KillStressOptions o = Short();
  KillStressResult r = RunKillStress(o);
  PrintKillStressResult(r);
  ExpectClean(o, r);
  EXPECT_GT(r.fua_writes, 0u);
}

// The check can fail: a child that reports durability without flushing
// loses writes the parent was told were durable, and the parent says so.
TEST(KillTest, AChildThatSkipsItsFlushesIsCaught) {
  KillStressOptions o = Short();
  o.cycles = 20;
  o.unsafe_skip_flush = true;
  KillStressResult r = RunKillStress(o);
  PrintKillStressResult(r);
  EXPECT_GT(r.durable_lost, 0u) << "no loss found in " << r.cycles << " cycles";
}

// DISABLED, engine bug: writers sharing a record lose writes. With 4-block
// stripes, four threads write disjoint pieces of each 64 KiB record of s2
// concurrently. In 5 of 6 runs of 80 cycles a block then held the version
// from before a durable write ("volume s2 block 1329 holds op X, older than
// the durable op Y; base X, then Y(zero,durable)"), sometimes seen by the
// child's own read-verify before any kill: the write is lost in memory.
// Cause (confirmed): VolumeImpl::TryApply (src/volume/volume_impl.cc)
// applies a write only to the copy of the txg the writer holds. A writer
// holding txg T (now quiescing) that is slow - a read-modify-write read, or
// an ARC allocation waiting for eviction, both under the txg hold - applies
// after another writer made the record's copy in T+1: T+1's copy never gets
// the bytes (and T's copy is made from NewestDirty, i.e. from T+1's), so
// T+1's sync writes the record without them. Applying each piece also to
// every newer txg's copy of the record made this test pass twice (160
// cycles) and volume_model_test's DISABLED_ConcurrentWritersSharingRecords
// pass 4 of 4 times (1 of 2 failing without it); the fix still needs the
// case of a newer copy that is a hole or zero marker (it needs a buffer).
TEST(KillTest, DISABLED_WritersSharingRecordsLoseNothing) {
  KillStressOptions o = Short();
  o.stripe_blocks = 4;
  KillStressResult r = RunKillStress(o);
  PrintKillStressResult(r);
  ExpectClean(o, r);
}

// DISABLED, engine bug: creating (or destroying) a volume while a txg
// syncs. PoolImpl::CreateVolume (src/pool/pool_impl.cc) puts the volume in
// volumes_ under a hold on the OPEN txg N+1 (create_txg = N+1), but
// PoolImpl::SyncTxg(N), running at the same time, snapshots all of
// volumes_ and writes the new entry into txg N's volume table, which
// EncodeVolumeTable refuses ("volume table: entry 2: born after the
// table"): the sync fails and the pool stops taking writes. It also clears
// table_dirty_, which belonged to N+1. DestroyVolume has the mirror race
// (the volume leaves volumes_ before txg N is written, while its blocks are
// freed only in N+1). A fix: SyncTxg(N) takes only volumes with create_txg
// <= N, keeps volumes destroyed in a txg > N in N's table, and keeps the
// table-dirty mark per txg. Found by this loop in its first cycle.
TEST(KillTest, DISABLED_VolumesCreatedAndDestroyedMeanwhileLoseNothing) {
  KillStressOptions o = Short();
  o.churn = true;
  KillStressResult r = RunKillStress(o);
  PrintKillStressResult(r);
  ExpectClean(o, r);
  EXPECT_GT(r.volumes_created, 0u);
  EXPECT_GT(r.volumes_destroyed, 0u);
}

}  // namespace
}  // namespace arcstore::pool
