// ArcstoreView from a stats delta: ARC read share, working set vs c, txg
// reasons, throttle time, and the warnings that say what was measured.
#include <gtest/gtest.h>

#include "bench/report.h"
#include "bench/view.h"
#include "stats/registry.h"

namespace arcstore::bench {
namespace {

struct FakeEngineStats {
  stats::Registry reg;
  stats::Counter* hits = reg.AddCounter("arcstats", "hits", stats::Unit::kOps, "");
  stats::Counter* misses = reg.AddCounter("arcstats", "misses", stats::Unit::kOps, "");
  stats::Gauge* c = reg.AddGauge("arcstats", "c", stats::Unit::kBytes, "");
  stats::Counter* timeout = reg.AddCounter("txg", "syncs_timeout", stats::Unit::kOps, "");
  stats::Counter* dirty = reg.AddCounter("txg", "syncs_dirty_threshold", stats::Unit::kOps, "");
  stats::Counter* delay = reg.AddCounter("txg", "delay_ns", stats::Unit::kNanoseconds, "");
  stats::Counter* rmw = reg.AddCounter("volumes", "rmw_reads", stats::Unit::kOps, "");
  stats::Counter* writes = reg.AddCounter("io", "writes", stats::Unit::kOps, "");
  stats::Histogram* sizes = reg.AddHistogram("io", "write_size_bytes", stats::Unit::kBytes, "");
};

TEST(View, CacheFiguresAreNamed) {
  FakeEngineStats e;
  auto before = e.reg.TakeSnapshot();
  e.hits->Add(90);
  e.misses->Add(10);
  e.c->Set(512 << 20);
  e.timeout->Add(1);
  e.dirty->Add(3);
  e.delay->Add(2'500'000);
  e.rmw->Add(7);
  e.writes->Add(4);
  // 8191 is the largest of its bucket, so the lower bound is exact here.
  for (uint64_t b : {8191ull, 1ull << 20, 1ull << 20, 512ull << 10}) e.sizes->Record(b);
  JobResult r;
  r.dirs[kRead].total_ios = 100;
  r.dirs[kWrite].total_ios = 100;
  r.arcstore_delta = std::make_shared<stats::Snapshot>(stats::Delta(before, e.reg.TakeSnapshot()));
  ArcstoreView v = BuildView(r, 256 << 20);
  ASSERT_TRUE(v.arc_hit_ratio.has_value());
  EXPECT_DOUBLE_EQ(*v.arc_hit_ratio, 0.9);
  EXPECT_TRUE(*v.region_fits_in_c);
  EXPECT_EQ(v.txgs, 4u);
  EXPECT_EQ(v.syncs_by_reason.at("dirty_threshold"), 3u);
  EXPECT_EQ(*v.delay_ns, 2'500'000u);
  EXPECT_EQ(*v.rmw_reads, 7u);
  EXPECT_EQ(*v.disk_writes, 4u);
  const double large_bytes = (2 << 20) + (512 << 10);
  EXPECT_DOUBLE_EQ(*v.disk_writes_512k_share, large_bytes / (large_bytes + 8191));  // by bytes
  ASSERT_EQ(v.warnings.size(), 2u);  // ARC share, fits in c
  EXPECT_NE(v.warnings[0].find("cache figures"), std::string::npos);
  std::string text = v.ToText();
  EXPECT_NE(text.find("ARC hit ratio=90.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("txgs=4 (dirty_threshold=3, timeout=1)"), std::string::npos) << text;
  EXPECT_NE(text.find("rmw=7, disk writes=4, >=512KiB=99.7%"), std::string::npos) << text;
  auto j = v.ToJson();
  EXPECT_EQ(j["txgs"], 4);
  EXPECT_EQ(j["warnings"].size(), 2u);
}

TEST(View, WritesThatNeverSyncedAreMemoryFigures) {
  FakeEngineStats e;
  auto before = e.reg.TakeSnapshot();
  JobResult r;
  r.dirs[kWrite].total_ios = 100;
  r.arcstore_delta = std::make_shared<stats::Snapshot>(stats::Delta(before, e.reg.TakeSnapshot()));
  ArcstoreView v = BuildView(r, 1 << 30);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("no txg was synced"), std::string::npos);
}

TEST(View, NoEngineNoView) {
  JobResult r;
  r.dirs[kWrite].total_ios = 1;
  EXPECT_TRUE(BuildView(r, 1).empty);
  EXPECT_EQ(BuildView(r, 1).ToText(), "");
  stats::Registry other;
  other.AddCounter("nbd", "x", stats::Unit::kOps, "");
  r.arcstore_delta = std::make_shared<stats::Snapshot>(other.TakeSnapshot());
  EXPECT_TRUE(BuildView(r, 1).empty);
}

}  // namespace
}  // namespace arcstore::bench
