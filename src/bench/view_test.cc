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

// A flushing job: the intent log's requests, commits and device flushes,
// and the commits by batch size, from the zil stats' delta.
TEST(View, AFlushingJobShowsTheIntentLogsBatching) {
  FakeEngineStats e;
  stats::Counter* requests = e.reg.AddCounter("zil", "commit_requests", stats::Unit::kOps, "");
  stats::Counter* commits = e.reg.AddCounter("zil", "commits", stats::Unit::kOps, "");
  stats::Counter* flushes = e.reg.AddCounter("zil", "flushes", stats::Unit::kOps, "");
  stats::Counter* fua = e.reg.AddCounter("zil", "fua_writes", stats::Unit::kOps, "");
  stats::Histogram* batch = e.reg.AddHistogram("zil", "batch_records", stats::Unit::kOps, "");
  requests->Add(5);  // before the job: not counted
  auto before = e.reg.TakeSnapshot();
  requests->Add(40);
  commits->Add(10);
  fua->Add(8);
  flushes->Add(2);
  for (uint64_t n : {1, 1, 2, 3, 4, 4, 7, 8, 20, 30}) batch->Record(n);
  JobResult r;
  r.dirs[kWrite].total_ios = 40;
  r.arcstore_delta = std::make_shared<stats::Snapshot>(stats::Delta(before, e.reg.TakeSnapshot()));
  ArcstoreView v = BuildView(r, 1 << 30);
  ASSERT_TRUE(v.intent_log.has_value());
  EXPECT_EQ(v.intent_log->commit_requests, 40u);
  EXPECT_EQ(v.intent_log->commits, 10u);
  EXPECT_EQ(v.intent_log->device_flushes, 10u);
  EXPECT_EQ(v.intent_log->batches, (std::array<uint64_t, 5>{2, 2, 3, 1, 2}));
  std::string text = v.ToText();
  EXPECT_NE(text.find("intent log: 40 commit requests, 10 commits, 10 device flushes (4.00 requests "
                      "per flush); records per commit: 1=20% 2-3=20% 4-7=30% 8-15=10% 16+=20%; "
                      "txg fallbacks=0"),
            std::string::npos)
      << text;
  EXPECT_EQ(v.ToJson()["intent_log"]["commits"], 10);

  // A job that never flushed has no intent log line.
  JobResult quiet;
  quiet.dirs[kWrite].total_ios = 40;
  auto now = e.reg.TakeSnapshot();
  quiet.arcstore_delta = std::make_shared<stats::Snapshot>(stats::Delta(now, e.reg.TakeSnapshot()));
  EXPECT_FALSE(BuildView(quiet, 1 << 30).intent_log.has_value());
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
