// The checks on hand-made stat sets, built in a real stats registry (as the
// engine will export them) and read through FromSnapshot.
#include <gtest/gtest.h>

#include <memory>

#include "base/units.h"
#include "stats/registry.h"
#include "tools/doctor/doctor.h"
#include "tools/doctor/report_format.h"

namespace arcstore::doctor {
namespace {

class StatSet {
 public:
  StatSet& Gauge(const std::string& name, int64_t v, const std::string& module = "arcstats") {
    registry_->AddGauge(module, name, stats::Unit::kNone, "test")->Set(v);
    return *this;
  }
  // "module.name" goes to that module, a plain name to arcstats.
  StatSet& Counter(const std::string& name, uint64_t v) {
    size_t dot = name.find('.');
    std::string module = dot == std::string::npos ? "arcstats" : name.substr(0, dot);
    std::string stat = dot == std::string::npos ? name : name.substr(dot + 1);
    registry_->AddCounter(module, stat, stats::Unit::kNone, "test")->Add(v);
    return *this;
  }
  StatsView View() const { return FromSnapshot(registry_->TakeSnapshot()); }
  Report Diagnose(const DoctorOptions& o = {}) const { return doctor::Diagnose(View(), o); }

 private:
  std::unique_ptr<stats::Registry> registry_ = std::make_unique<stats::Registry>();
};

const int64_t GiB = static_cast<int64_t>(kGiB);
const int64_t MiB = static_cast<int64_t>(kMiB);

TEST(FromSnapshot, KeepsArcstatsNamesAndPrefixesOthers) {
  StatSet s;
  s.Gauge("c", 5).Counter("hits", 7).Gauge("dirty_bytes", 3, "txg");
  StatsView v = s.View();
  EXPECT_EQ(v.format, StatsFormat::kArcstore);
  EXPECT_EQ(v.field_set, FieldSet::kArcstore);
  EXPECT_EQ(v.Get("c"), 5);
  EXPECT_EQ(v.Get("hits"), 7);
  EXPECT_EQ(v.Get("txg.dirty_bytes"), 3);
}

StatSet PinnedArc() {
  StatSet s;
  s.Gauge("c", 1 * GiB).Gauge("c_min", 1 * GiB).Gauge("c_max", 16 * GiB).Gauge("size", 4 * GiB);
  s.Gauge("mru_evictable_data", 0).Gauge("mru_evictable_metadata", 0);
  s.Gauge("mfu_evictable_data", 0).Gauge("mfu_evictable_metadata", 0);
  return s;
}

// c far above its floor but at 3% of c_max, with size 8x c: a collapse,
// named as one, whatever c_min is; the same c with size near it is not.
TEST(SizeChecks, ATargetFarBelowCMaxWithSizeFarAboveItIsACollapse) {
  StatSet s;
  s.Gauge("c", 1 * GiB).Gauge("c_min", 64 * MiB).Gauge("c_max", 32 * GiB).Gauge("size", 8 * GiB);
  Report r = s.Diagnose();
  const Finding* f = r.Find("target_collapsed");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NE(f->title.find("collapsed to 3.1% of c_max while size is 8.0x c"), std::string::npos)
      << f->title;
  StatSet calm;
  calm.Gauge("c", 1 * GiB).Gauge("c_min", 64 * MiB).Gauge("c_max", 32 * GiB).Gauge("size", GiB);
  EXPECT_EQ(calm.Diagnose().Find("target_collapsed"), nullptr);
}

TEST(ArcstoreChecks, PinnedCacheNamesTheHolderKind) {
  StatSet s = PinnedArc();
  s.Gauge("held_bytes_handle_cache", 3 * GiB + 800 * MiB).Gauge("held_bytes_nbd_request", 100 * MiB);
  s.Gauge("held_bytes_api_user", 0);
  Report r = s.Diagnose();
  const Finding* f = r.Find("nothing_evictable");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NE(f->title.find("handle_cache holds 3.8 GiB (97% of held bytes)"), std::string::npos)
      << f->title;
  EXPECT_EQ(r.ExitCode(), 2);
}

TEST(ArcstoreChecks, CacheDeviceIndexTakingMuchOfTheArcIsNamed) {
  StatSet big;
  big.Gauge("size", 4 * GiB).Gauge("l2_size", 200 * GiB).Gauge("l2_asize", 200 * GiB);
  big.Gauge("l2_hdr_size", 1200 * MiB);
  Report r = big.Diagnose();
  const Finding* f = r.Find("l2arc_headers_large");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kCritical);  // 29% of the ARC
  EXPECT_NE(f->title.find("29%"), std::string::npos) << f->title;
  EXPECT_NE(f->advice.find("--recordsize"), std::string::npos) << f->advice;
  StatSet small;
  small.Gauge("size", 4 * GiB).Gauge("l2_size", 8 * GiB).Gauge("l2_asize", 8 * GiB);
  small.Gauge("l2_hdr_size", 4 * MiB);
  Report rs = small.Diagnose();
  EXPECT_EQ(rs.Find("l2arc_headers_large"), nullptr);
  // No cache devices: nothing said, not even undecided.
  StatSet none;
  none.Gauge("size", 4 * GiB);
  Report rn = none.Diagnose();
  EXPECT_EQ(RenderText(rn).find("l2arc"), std::string::npos) << RenderText(rn);
}

TEST(ArcstoreChecks, WaitersReleasedWithoutProgress) {
  StatSet s = PinnedArc();
  s.Counter("evict_passes_no_progress", 2).Counter("waiters_released_pass_end", 5);
  s.Gauge("held_bytes_dirty_record", 2 * GiB);
  Report r = s.Diagnose();
  const Finding* f = r.Find("eviction_no_progress");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("dirty_record holds"), std::string::npos) << f->title;
  StatSet none = PinnedArc();
  none.Counter("evict_passes_no_progress", 0);
  EXPECT_EQ(none.Diagnose().Find("eviction_no_progress"), nullptr);
}

TEST(ArcstoreChecks, ThrottleDrivenSyncs) {
  StatSet forced;
  forced.Counter("txg.syncs_arc_dirty_limit", 90).Counter("txg.syncs_timeout", 10);
  Report r = forced.Diagnose();
  const Finding* f = r.Find("throttle_driven_syncs");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_NE(f->title.find("90%"), std::string::npos);
  StatSet normal;
  normal.Counter("txg.syncs_timeout", 95).Counter("txg.syncs_dirty_threshold", 400);
  EXPECT_EQ(normal.Diagnose().Find("throttle_driven_syncs"), nullptr);
}

TEST(ArcstoreChecks, ReadModifyWriteMisses) {
  StatSet bad;
  bad.Counter("volumes.rmw_reads", 9000).Counter("volumes.rmw_dirty", 1000);
  EXPECT_NE(bad.Diagnose().Find("rmw_misses"), nullptr);
  StatSet good;
  good.Counter("volumes.rmw_reads", 1000).Counter("volumes.rmw_dirty", 9000);
  EXPECT_EQ(good.Diagnose().Find("rmw_misses"), nullptr);
}

// The server's stall watch: the host stopping it for a share of the time
// is a warning that names the share; a few stalls, or a small share, none.
TEST(ArcstoreChecks, MachineStallsAreTheHosts) {
  StatSet vm;
  vm.Counter("machine.stalls", 500)
      .Counter("machine.stall_ns", 10'800'000'000)
      .Counter("machine.watched_ns", 120'000'000'000)
      .Gauge("worst_stall_ns", 134'000'000, "machine");
  Report r = vm.Diagnose();
  const Finding* f = r.Find("machine_stalls");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->title.find("500 times"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("9% of the time"), std::string::npos) << f->title;
  EXPECT_EQ(f->evidence.size(), 4u);

  StatSet rare;  // a small share of the time
  rare.Counter("machine.stalls", 50)
      .Counter("machine.stall_ns", 1'200'000'000)
      .Counter("machine.watched_ns", 120'000'000'000);
  EXPECT_EQ(rare.Diagnose().Find("machine_stalls"), nullptr);
  StatSet few;  // a large share, but two stalls
  few.Counter("machine.stalls", 2)
      .Counter("machine.stall_ns", 300'000'000)
      .Counter("machine.watched_ns", 1'000'000'000);
  EXPECT_EQ(few.Diagnose().Find("machine_stalls"), nullptr);
  EXPECT_EQ(StatSet{}.Diagnose().Find("machine_stalls"), nullptr) << "no watch, no verdict";
}

TEST(ArcstoreChecks, WriterWaitsNameThePlaceThatDominates) {
  StatSet lock;
  lock.Counter("volumes.writer_waits_lock", 900)
      .Counter("volumes.writer_wait_lock_ns", 3'000'000'000)
      .Counter("volumes.writer_waits_throttle", 100)
      .Counter("volumes.writer_wait_throttle_ns", 1'000'000'000);
  Report r = lock.Diagnose();
  const Finding* f = r.Find("writer_waits_lock");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->title.find("75%"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("3.000 s"), std::string::npos) << f->title;

  // The throttle is where writers are meant to wait: info, not a warning.
  StatSet throttle;
  throttle.Counter("volumes.writer_waits_throttle", 500)
      .Counter("volumes.writer_wait_throttle_ns", 2'000'000'000);
  Report rt = throttle.Diagnose();
  const Finding* t = rt.Find("writer_waits_throttle");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->severity, Severity::kInfo);

  // Buffer waits of an ARC far below its target are new memory, not
  // eviction: the advice says so.
  auto buffer_waits = [](int64_t size) {
    StatSet s;
    s.Counter("volumes.writer_waits_buffer", 30000)
        .Counter("volumes.writer_wait_buffer_ns", 2'000'000'000)
        .Gauge("size", size)
        .Gauge("c", 12 * GiB);
    return s.Diagnose();
  };
  Report rg = buffer_waits(2 * GiB);
  const Finding* g = rg.Find("writer_waits_buffer");
  ASSERT_NE(g, nullptr) << RenderText(rg);
  EXPECT_NE(g->advice.find("--arc-pretouch"), std::string::npos) << g->advice;
  Report ra = buffer_waits(12 * GiB);
  const Finding* a = ra.Find("writer_waits_buffer");
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a->advice.find("evict"), std::string::npos) << a->advice;

  // No place with most of the time, or too few waits: no verdict.
  StatSet spread;
  spread.Counter("volumes.writer_waits_space", 300)
      .Counter("volumes.writer_wait_space_ns", 1'000'000'000)
      .Counter("volumes.writer_waits_buffer", 300)
      .Counter("volumes.writer_wait_buffer_ns", 1'000'000'000);
  Report rs = spread.Diagnose();
  for (const char* id : {"writer_waits_space", "writer_waits_buffer"}) EXPECT_EQ(rs.Find(id), nullptr);
  StatSet few;
  few.Counter("volumes.writer_waits_rmw_read", 10).Counter("volumes.writer_wait_rmw_read_ns", 5'000'000'000);
  EXPECT_EQ(few.Diagnose().Find("writer_waits_rmw_read"), nullptr);
  StatSet short_waits;
  short_waits.Counter("volumes.writer_waits_buffer", 5000).Counter("volumes.writer_wait_buffer_ns", 200'000'000);
  EXPECT_EQ(short_waits.Diagnose().Find("writer_waits_buffer"), nullptr);
}

TEST(ArcstoreChecks, SmallDiskWrites) {
  StatSet small;
  small.Counter("io.writes", 10000).Counter("io.write_bytes", 10000 * 4096);
  const Finding* f = nullptr;
  Report r = small.Diagnose();
  f = r.Find("small_disk_writes");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("4.0 KiB"), std::string::npos) << f->title;
  StatSet large;
  large.Counter("io.writes", 10000).Counter("io.write_bytes", 10000 * kMiB);
  EXPECT_EQ(large.Diagnose().Find("small_disk_writes"), nullptr);
}

TEST(ArcstoreChecks, HealthyEngineStatsRaiseNothingAboveInfo) {
  StatSet s;
  s.Gauge("c", 8 * GiB).Gauge("c_min", 512 * MiB).Gauge("c_max", 8 * GiB).Gauge("size", 7 * GiB);
  s.Gauge("mru_evictable_data", 3 * GiB).Gauge("mfu_evictable_data", 3 * GiB);
  s.Counter("hits", 9000000).Counter("misses", 100000);
  s.Counter("mru_ghost_hits", 100).Counter("mfu_ghost_hits", 100);
  s.Counter("txg.syncs_timeout", 100).Counter("volumes.rmw_reads", 100);
  s.Counter("volumes.rmw_dirty", 5000);
  s.Counter("io.writes", 5000).Counter("io.write_bytes", 5000 * kMiB);
  s.Gauge("held_bytes_handle_cache", 256 * MiB);
  Report r = s.Diagnose();
  EXPECT_EQ(r.ExitCode(), 0) << RenderText(r);
  EXPECT_NE(r.Find("healthy"), nullptr);
  // OpenZFS-only checks stay silent on arcstore stats.
  for (const auto& u : r.undecided) {
    EXPECT_NE(u.check, "metadata_limit");
    EXPECT_NE(u.check, "l2arc");
    EXPECT_NE(u.check, "arc_prune");
  }
}

// A low hit ratio at c_max: hits + misses = 120000, 25% hits.
StatSet LowHitRatioAtMax(int64_t ghost_hits, int64_t ghost_bytes) {
  StatSet s;
  s.Gauge("c", 1 * GiB).Gauge("c_min", 64 * MiB).Gauge("c_max", 1 * GiB).Gauge("size", 1 * GiB);
  s.Counter("hits", 30000).Counter("misses", 90000);
  s.Counter("mru_ghost_hits", static_cast<uint64_t>(ghost_hits)).Counter("mfu_ghost_hits", 0);
  s.Gauge("mru_ghost_size", ghost_bytes).Gauge("mfu_ghost_size", 0);
  return s;
}

TEST(EfficiencyChecks, GhostListsAsLongAsCWithoutHitsMeanNoReuse) {
  Report r = LowHitRatioAtMax(0, 1 * GiB).Diagnose();
  const Finding* f = r.Find("cache_too_small");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->title.find("does not reuse data"), std::string::npos) << f->title;
}

TEST(EfficiencyChecks, ShortGhostListsAreNoEvidenceAgainstReuse) {
  // MRU + MRU-ghost <= c: a full MRU leaves the ghosts nothing to remember.
  Report r = LowHitRatioAtMax(0, 16 * MiB).Diagnose();
  const Finding* f = r.Find("cache_too_small");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->title.find("ghost lists are too short"), std::string::npos) << f->title;
}

TEST(EfficiencyChecks, GhostHitsAreScaledToGhostListsOfC) {
  // 3% of accesses hit ghost lists a quarter of c long: ~12% for lists of c.
  Report r = LowHitRatioAtMax(3600, 256 * MiB).Diagnose();
  const Finding* f = r.Find("cache_too_small");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->title.find("~12.0% for ghost lists as large as c"), std::string::npos) << f->title;
}

// 40 syncs, 36 of them by the dirty threshold, 500 writes delayed.
StatSet ThresholdSyncs(int64_t dirty_max) {
  StatSet s;
  s.Counter("txg.syncs_dirty_threshold", 36).Counter("txg.syncs_timeout", 4);
  s.Counter("txg.delayed_writes", 500).Counter("txg.blocked_writes", 3);
  s.Gauge("dirty_max_bytes", dirty_max, "txg").Gauge("memory_all_bytes", 16 * GiB);
  return s;
}

TEST(ArcstoreChecks, ThresholdSyncsWithASmallDirtyMaxAreAWarning) {
  Report r = ThresholdSyncs(64 * MiB).Diagnose();
  const Finding* f = r.Find("throttle_driven_syncs");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->title.find("dirty_max (64.0 MiB) is small"), std::string::npos) << f->title;
}

TEST(ArcstoreChecks, ThresholdSyncsWithTheDefaultDirtyMaxAreInfo) {
  Report r = ThresholdSyncs(4 * GiB).Diagnose();
  const Finding* f = r.Find("throttle_driven_syncs");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->title.find("outpace the device"), std::string::npos) << f->title;
  DoctorOptions o;
  o.min_throttled_writes = 1000;  // 503 throttled writes: no verdict
  EXPECT_EQ(ThresholdSyncs(64 * MiB).Diagnose(o).Find("throttle_driven_syncs"), nullptr);
}

TEST(SizeChecks, OverTargetThresholdsAreTheOptions) {
  auto report = [](int64_t size) {
    StatSet s;
    s.Gauge("c", 4 * GiB).Gauge("size", size).Gauge("mru_evictable_data", size / 2);
    return s.Diagnose();
  };
  EXPECT_EQ(report(6 * GiB - MiB).Find("size_over_target"), nullptr);  // 1.49x
  Report at_warn = report(6 * GiB);  // 1.5x
  const Finding* warn = at_warn.Find("size_over_target");
  ASSERT_NE(warn, nullptr);
  EXPECT_EQ(warn->severity, Severity::kWarning);
  Report crit = report(8 * GiB);
  ASSERT_NE(crit.Find("size_over_target"), nullptr);
  EXPECT_EQ(crit.Find("size_over_target")->severity, Severity::kCritical);
}

TEST(SizeChecks, FloorAloneIsAWarningThatSaysWhatIsUndecided) {
  StatSet s;
  s.Gauge("c", 1 * GiB).Gauge("c_min", 1 * GiB).Gauge("c_max", 32 * GiB).Gauge("size", 1 * GiB);
  Report r = s.Diagnose();
  const Finding* f = r.Find("target_collapsed");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  bool undecided = false;
  for (const auto& u : r.undecided) undecided |= u.check == "target_collapsed";
  EXPECT_TRUE(undecided);
  // At the floor because memory really is short: info.
  s.Gauge("memory_all_bytes", 64 * GiB).Gauge("memory_free_bytes", 1 * GiB);
  s.Gauge("memory_available_bytes", -1 * GiB);
  Report short_report = s.Diagnose();
  const Finding* info = short_report.Find("target_collapsed");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->severity, Severity::kInfo);
}

TEST(ArcstoreChecks, CollapsedTargetShowsWhatMovedC) {
  StatSet s;
  s.Gauge("c", 1 * GiB).Gauge("c_min", 1 * GiB).Gauge("c_max", 32 * GiB).Gauge("size", 8 * GiB);
  s.Counter("c_changes_pressure", 40).Counter("c_change_bytes_pressure", 31 * kGiB);
  s.Counter("c_change_bytes_grow", 0);
  Report r = s.Diagnose();
  const Finding* f = r.Find("target_collapsed");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  bool pressure = false, grow = false;
  for (const auto& e : f->evidence) {
    pressure |= e.name == "c_change_bytes_pressure" && e.value == "31.0 GiB (33285996544)";
    grow |= e.name == "c_change_bytes_grow";
  }
  EXPECT_TRUE(pressure) << RenderText(r);
  EXPECT_FALSE(grow);  // causes that never moved c are left out
}

TEST(DoctorOptionsTest, ValidateNamesTheOption) {
  DoctorOptions o;
  EXPECT_TRUE(o.Validate().ok());
  o.ghost_hit_pct = 120;
  EXPECT_NE(o.Validate().message().find("ghost_hit_pct"), std::string::npos);
  o = {};
  o.over_target_crit_ratio = 1.2;
  EXPECT_NE(o.Validate().message().find("over_target"), std::string::npos);
}

}  // namespace
}  // namespace arcstore::doctor
