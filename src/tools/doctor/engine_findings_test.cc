// The doctor on a real engine: each finding arcstore can produce is produced
// on purpose in an in-process pool (a memory device, a fake memory monitor),
// and the doctor, reading nothing but pool->stats(), must name it with its
// severity. A healthy run must raise nothing above info.
//
// Each case is one condition made real:
//   squeezed ARC         c_max 16 MiB, random reads over 64 MiB,
//                        100 ms of the test's clock between reads -> cache_too_small
//   pressure, memory free  the monitor reports PSI pressure with all memory
//                        available; the ARC's Tick shrinks c     -> target_collapsed (critical)
//   holds pin everything the test holds 1.5 x c of ARC buffers   -> nothing_evictable (critical),
//                                                                   eviction_no_progress,
//                                                                   size_over_target
//   tiny dirty_max       dirty_max 1 MiB, 4 KiB writes           -> throttle_driven_syncs
//   1 MiB records        4 KiB random writes, records not cached -> rmw_misses
//   a sync per write     4 KiB records, flush per write, no log  -> small_disk_writes
//
// (The engine's memory_available_bytes is what the monitor saw available
// minus the ARC's free floor, so it is never negative while memory is free:
// pressure invented by the OS shows as target_collapsed with the bytes c
// moved for "pressure", not as pressure_while_free, which is for OpenZFS's
// mis-sized reserves.)
//
// The pool takes the fake monitor (and, for the squeezed ARC, a manual
// clock) through pool::UnsafeTestSwitches.
// The pools are small, so the doctor's "enough evidence" minimums are lowered
// (TestOptions); the iteration counts honour ARCSTORE_TEST_SCALE and stay
// above those minimums at scale 0.2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/random.h"
#include "base/units.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "pool/pool_impl.h"
#include "testing/arc_test_policy.h"
#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"
#include "tools/doctor/arcstore_stat_names.h"
#include "tools/doctor/doctor.h"
#include "tools/doctor/report_format.h"

namespace arcstore::doctor {
namespace {

constexpr uint64_t kMemoryBytes = 8 * kGiB;  // what the fake monitor reports

DoctorOptions TestOptions() {
  DoctorOptions o;
  o.min_overshoot_bytes = 8 * kMiB;
  o.min_accesses = 1000;
  o.min_rmw_writes = 200;
  o.min_disk_writes = 200;
  o.min_txg_syncs = 10;
  o.min_throttled_writes = 20;
  return o;
}

// At least `floor` even at the smallest scale, so every case stays above the
// minimums of TestOptions().
uint64_t Iterations(uint64_t base, uint64_t floor) {
  return std::max(ScaledIterations(base), floor);
}

class EngineFindingsTest : public ::testing::Test {
 protected:
  void Open(PoolOptions po, uint64_t device_bytes, Clock* clock = nullptr,
            std::optional<uint64_t> arc_stuck_wait_ns = std::nullopt) {
    io::MemoryDeviceOptions o;
    o.size_bytes = device_bytes;
    dev_ = *io::MemoryDevice::Create(o);
    ASSERT_TRUE(pool::PoolImpl::Format(dev_.get(), "doctor").ok());
    po.txg_timeout_ns = 60 * kNsPerSec;  // no timeout syncs: each case says why it syncs
    testing::ApplyTestArcPolicy(&po);  // the findings hold under Duet too (CMakeLists.txt)
    pool::UnsafeTestSwitches inject;
    inject.memory_monitor = &monitor_;
    inject.clock = clock;
    inject.arc_stuck_wait_ns = arc_stuck_wait_ns;
    auto p = pool::PoolImpl::OpenOnDevice(std::make_unique<io::ForwardingDevice>(dev_.get()), po,
                                          inject);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pool_ = std::move(*p);
    ASSERT_EQ(pool_->stats().TakeSnapshot().Get("arcstats", "policy", -1),
              po.arc_policy == "duet" ? 1 : 0)
        << "the pool runs the policy asked for";
  }
  void TearDown() override {
    vol_.reset();
    if (pool_) EXPECT_TRUE(pool_->Close().ok());
    pool_.reset();
  }
  void MakeVolume(uint64_t size_bytes, uint32_t record_bytes) {
    VolumeOptions vo;
    vo.name = "v";
    vo.size_bytes = size_bytes;
    vo.record_size_bytes = record_bytes;
    vo.compression = "off";
    ASSERT_TRUE(pool_->CreateVolume(vo).ok());
    vol_ = *pool_->OpenVolume("v");
  }
  // Writes the whole volume in 1 MiB pieces, committing every 4 MiB (well
  // below half of any c here, so no sync is forced by the ARC's dirty limit).
  void Fill() {
    std::vector<uint8_t> piece(kMiB);
    SeededRandom rnd(7);
    const uint64_t size = vol_->info().size_bytes;
    for (uint64_t off = 0; off < size; off += piece.size()) {
      rnd.Fill(piece.data(), piece.size());
      ASSERT_TRUE(vol_->Write(off, piece).ok());
      if ((off + piece.size()) % (4 * kMiB) == 0) ASSERT_TRUE(pool_->Sync().ok());
    }
    ASSERT_TRUE(pool_->Sync().ok());
  }
  // With a manual clock, `clock->AdvanceNs(gap_ns)` before each read.
  void RandomReads(uint64_t count, SeededRandom& rnd,
                   arcstore::testing::ManualClock* clock = nullptr, uint64_t gap_ns = 0) {
    std::vector<uint8_t> buf(4096);
    const uint64_t blocks = vol_->info().size_bytes / buf.size();
    for (uint64_t i = 0; i < count; i++) {
      if (clock != nullptr) clock->AdvanceNs(gap_ns);
      ASSERT_TRUE(vol_->Read(rnd.Uniform(blocks) * buf.size(), buf).ok());
    }
  }
  // c_max 16 MiB (c_min = c_max: c stays at its ceiling) under uniform random
  // reads of 4 KiB over 64 MiB of 128 KiB records, each read 4 times or more;
  // `gap_ns` of the test's clock pass before each read.
  void SqueezedReads(uint64_t gap_ns, std::string_view who) {
    PoolOptions po;
    po.arc_max_bytes = 16 * kMiB;
    Open(po, 192 * kMiB, &clock_);
    MakeVolume(64 * kMiB, 128 * 1024);  // 512 records, 128 of which fit
    Fill();
    SeededRandom rnd = SeededRandom::FromEnvironment(who);
    RandomReads(Iterations(4000, 2000), rnd, &clock_, gap_ns);
  }
  // The doctor on the pool's stats, as `arcstore doctor --pool` sees them.
  // A monitor tick first, so the memory stats are the monitor's current ones.
  Report Diagnose() {
    pool_->arc().Tick();
    pool_->arc().WaitEvictorIdle();
    view_ = FromSnapshot(pool_->stats().TakeSnapshot());
    return doctor::Diagnose(view_, TestOptions());
  }
  // The finding `id` with `severity`, with the report on failure.
  static const Finding* Expect(const Report& r, std::string_view id, Severity severity) {
    const Finding* f = r.Find(id);
    EXPECT_NE(f, nullptr) << "no " << id << " in\n" << RenderText(r);
    if (f == nullptr) return nullptr;
    EXPECT_EQ(f->severity, severity) << RenderText(r);
    return f;
  }
  static bool HasEvidence(const Finding& f, std::string_view name) {
    return std::any_of(f.evidence.begin(), f.evidence.end(),
                       [&](const Evidence& e) { return e.name == name; });
  }

  arcstore::testing::FakeMemoryMonitor monitor_{kMemoryBytes, "fake 8 GiB"};
  // For the cases that step time themselves; sleeps move it to their deadline.
  arcstore::testing::ManualClock clock_{kNsPerSec, /*auto_advance=*/true};
  std::unique_ptr<io::MemoryDevice> dev_;
  std::unique_ptr<pool::PoolImpl> pool_;
  std::shared_ptr<Volume> vol_;
  StatsView view_;
};

TEST_F(EngineFindingsTest, HealthyRunRaisesNothingAboveInfo) {
  PoolOptions po;
  po.arc_max_bytes = 64 * kMiB;
  po.arc_min_bytes = 16 * kMiB;
  Open(po, 128 * kMiB);
  MakeVolume(16 * kMiB, 128 * 1024);
  Fill();
  SeededRandom rnd = SeededRandom::FromEnvironment("HealthyRunRaisesNothingAboveInfo");
  RandomReads(Iterations(10000, 2000), rnd);  // the volume fits in c: hits
  std::vector<uint8_t> record(128 * 1024, 3);
  for (int i = 0; i < 16; i++)
    ASSERT_TRUE(vol_->Write(rnd.Uniform(128) * record.size(), record).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  Report r = Diagnose();
  EXPECT_EQ(r.Worst(), Severity::kInfo) << RenderText(r);
  EXPECT_NE(r.Find("healthy"), nullptr) << RenderText(r);
  EXPECT_EQ(r.field_set, FieldSet::kArcstore);
  // The engine exports every field a check needs, except the count of
  // prefetched blocks later read on demand (it does not count it yet).
  for (const std::string& missing : r.MissingFields())
    EXPECT_EQ(missing, "demand_hit_predictive_prefetch") << RenderText(r);
}

TEST_F(EngineFindingsTest, SqueezedArcIsACacheTooSmall) {
  // Time as on a disk: 100 ms between reads, past the ARC's minimum residence
  // (62 ms), so a second hit promotes to MFU whatever this machine's speed.
  SqueezedReads(100 * kNsPerMs, "SqueezedArcIsACacheTooSmall");
  Report r = Diagnose();
  const Finding* f = Expect(r, "cache_too_small", Severity::kWarning);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("hit a ghost list"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("with c at c_max"), std::string::npos) << f->title;
  EXPECT_TRUE(HasEvidence(*f, "mru_ghost_size")) << RenderText(r);
  EXPECT_EQ(r.Find("nothing_evictable"), nullptr) << RenderText(r);
  EXPECT_LE(r.Worst(), Severity::kWarning) << RenderText(r);
}

TEST_F(EngineFindingsTest, PressureWhileMemoryIsFreeCollapsesTheTarget) {
  PoolOptions po;
  po.arc_max_bytes = 256 * kMiB;
  po.arc_min_bytes = 16 * kMiB;
  Open(po, 128 * kMiB);
  MakeVolume(16 * kMiB, 128 * 1024);
  Fill();
  // All 8 GiB available, yet the monitor reports pressure (PSI), as the
  // seed's OS did: every tick shrinks c one bounded step.
  monitor_.SetPressure(true, "psi some avg10 40.0% > 10%", 40.0);
  for (int i = 0; i < 1000 && pool_->arc().target_bytes() > pool_->arc().c_min(); i++)
    pool_->arc().Tick();
  ASSERT_EQ(pool_->arc().target_bytes(), pool_->arc().c_min());
  Report r = Diagnose();
  const Finding* f = Expect(r, "target_collapsed", Severity::kCritical);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("memory is free"), std::string::npos) << f->title;
  std::string cause = std::string(names::kCChangeBytesPrefix) + "pressure";
  EXPECT_TRUE(HasEvidence(*f, cause)) << "the cause of the collapse is shown:\n" << RenderText(r);
  EXPECT_TRUE(HasEvidence(*f, "memory_free_bytes")) << RenderText(r);
}

TEST_F(EngineFindingsTest, HoldsPinningEverythingAreNamed) {
  PoolOptions po;
  po.arc_max_bytes = 32 * kMiB;  // c_min = c_max = 32 MiB
  // Nothing will be released: allocations past the line go on at once.
  Open(po, 64 * kMiB, nullptr, 0);
  arc::Arc& arc = pool_->arc();
  const uint64_t buf_bytes = 128 * 1024;
  const uint64_t count = 3 * arc.target_bytes() / 2 / buf_bytes;
  std::vector<arc::ArcHold> holds;
  for (uint64_t i = 0; i < count; i++) {
    arc::LookupResult l = arc.Lookup(arc::ArcKey{0xd0c, i, 0},
                                     {buf_bytes, arc::BufKind::kData, arc::HolderKind::kApiUser});
    ASSERT_FALSE(l.hit());
    std::memset(l.fill.buffer().data(), static_cast<int>(i), buf_bytes);  // may wait: SEVERE
    holds.push_back(l.fill.Finish());
  }
  Report r = Diagnose();
  const Finding* f = Expect(r, "nothing_evictable", Severity::kCritical);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("api_user holds"), std::string::npos) << f->title;
  Expect(r, "eviction_no_progress", Severity::kWarning);
  Expect(r, "size_over_target", Severity::kWarning);
  holds.clear();
  arc.RunEvictionPass();
  EXPECT_EQ(Diagnose().Find("nothing_evictable"), nullptr) << "released holds are evictable";
}

TEST_F(EngineFindingsTest, TinyDirtyMaxThrottlesAndSyncsByThreshold) {
  PoolOptions po;
  po.arc_max_bytes = 256 * kMiB;  // the ARC's dirty limit (c/2) is far away
  po.dirty_max_bytes = kMiB;      // a sync every 200 KiB, writers delayed from 600 KiB
  Open(po, 128 * kMiB);
  MakeVolume(32 * kMiB, 4096);
  SeededRandom rnd = SeededRandom::FromEnvironment("TinyDirtyMaxThrottlesAndSyncsByThreshold");
  std::vector<uint8_t> block(4096);
  // Whether a writer finds dirty data past 60% of dirty_max depends on how
  // the sync thread keeps up on a loaded machine: write until the throttle
  // has delayed or blocked enough writes for the doctor (or a bound).
  auto throttled = [&] {
    stats::Snapshot s = pool_->stats().TakeSnapshot();
    return s.Get("txg", "delayed_writes") + s.Get("txg", "blocked_writes");
  };
  for (uint64_t i = 0, n = Iterations(8000, 1600); i < n || throttled() < 40; i++) {
    ASSERT_LT(i, 200000u) << "the throttle never delayed a writer";
    rnd.Fill(block.data(), block.size());
    ASSERT_TRUE(vol_->Write(rnd.Uniform(8192) * block.size(), block).ok());
  }
  Report r = Diagnose();
  const Finding* f = Expect(r, "throttle_driven_syncs", Severity::kWarning);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("dirty threshold"), std::string::npos) << f->title;
  EXPECT_TRUE(HasEvidence(*f, names::kDirtyMax)) << RenderText(r);
}

TEST_F(EngineFindingsTest, LargeRecordsUnderSmallWritesAreRmwMisses) {
  PoolOptions po;
  po.arc_max_bytes = 16 * kMiB;  // 16 of the 64 records fit
  Open(po, 256 * kMiB);
  MakeVolume(64 * kMiB, kMiB);
  Fill();
  ASSERT_TRUE(pool_->DropCaches().ok());
  SeededRandom rnd = SeededRandom::FromEnvironment("LargeRecordsUnderSmallWritesAreRmwMisses");
  std::vector<uint8_t> block(4096, 9);
  for (uint64_t i = 0, n = Iterations(600, 300); i < n; i++) {
    ASSERT_TRUE(vol_->Write(rnd.Uniform(16384) * block.size(), block).ok());
    if (i % 8 == 7) ASSERT_TRUE(pool_->Sync().ok());
  }
  ASSERT_TRUE(pool_->Sync().ok());
  Report r = Diagnose();
  const Finding* f = Expect(r, "rmw_misses", Severity::kWarning);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(HasEvidence(*f, names::kRecordReads)) << RenderText(r);
  // The disk writes are whole 1 MiB records: large, not small.
  EXPECT_EQ(r.Find("small_disk_writes"), nullptr) << RenderText(r);
}

TEST_F(EngineFindingsTest, ASyncPerWriteMakesSmallDiskWrites) {
  PoolOptions po;
  po.arc_max_bytes = 64 * kMiB;
  po.intent_log = false;  // each flush syncs a txg holding one 4 KiB record
  Open(po, 128 * kMiB);
  MakeVolume(32 * kMiB, 4096);
  SeededRandom rnd = SeededRandom::FromEnvironment("ASyncPerWriteMakesSmallDiskWrites");
  std::vector<uint8_t> block(4096, 5);
  for (uint64_t i = 0, n = Iterations(1000, 250); i < n; i++) {
    ASSERT_TRUE(vol_->Write(rnd.Uniform(8192) * block.size(), block).ok());
    ASSERT_TRUE(vol_->Flush().ok());
  }
  Report r = Diagnose();
  const Finding* f = Expect(r, "small_disk_writes", Severity::kWarning);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(HasEvidence(*f, "average write")) << RenderText(r);
  EXPECT_EQ(r.Find("throttle_driven_syncs"), nullptr) << "flush syncs are explicit waits:\n"
                                                      << RenderText(r);
}

}  // namespace
}  // namespace arcstore::doctor
