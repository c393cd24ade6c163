#include "tools/summary/pool_summary.h"

#include <gtest/gtest.h>

#include "base/units.h"

namespace arcstore::tools {
namespace {

stats::Snapshot Fixed() {
  stats::Registry r;
  auto gauge = [&](const char* m, const char* n, int64_t v) {
    r.AddGauge(m, n, stats::Unit::kBytes, "")->Set(v);
  };
  auto counter = [&](const char* m, const char* n, uint64_t v) {
    r.AddCounter(m, n, stats::Unit::kOps, "")->Add(v);
  };
  gauge("arcstats", "c", 2 * int64_t{kGiB});
  gauge("arcstats", "c_min", 256 * int64_t{kMiB});
  gauge("arcstats", "c_max", 8 * int64_t{kGiB});
  gauge("arcstats", "size", 3 * int64_t{kGiB});
  gauge("arcstats", "held_bytes_handle_cache", 1536 * int64_t{kMiB});
  counter("arcstats", "hits", 900);
  counter("arcstats", "misses", 100);
  counter("arcstats", "c_changes_pressure", 3);
  r.AddCounter("arcstats", "c_change_bytes_pressure", stats::Unit::kBytes, "")->Add(6 * kGiB);
  gauge("txg", "dirty_bytes", 256 * int64_t{kMiB});
  gauge("txg", "dirty_max_bytes", 4 * int64_t{kGiB});
  counter("txg", "syncs_timeout", 1);
  counter("txg", "syncs_arc_dirty_limit", 3);
  gauge("handle_cache", "size", 64 * int64_t{kMiB});
  gauge("handle_cache", "target", 64 * int64_t{kMiB});
  stats::Histogram* st = r.AddHistogram("txg", "sync_time_ns", stats::Unit::kNanoseconds, "");
  for (int i = 0; i < 4; i++) st->Record(300 * kNsPerMs);
  return r.TakeSnapshot();
}

std::vector<TxgRow> History() {
  std::vector<TxgRow> rows;
  for (uint64_t t = 0; t < 4; t++) {
    TxgRow r;
    r.txg = 5 + t;
    r.state = "C";
    r.birth_ns = t * 400 * kNsPerMs;
    r.stime_ns = (200 + 100 * t) * kNsPerMs;
    r.delay_ns = 2 * kNsPerMs;
    rows.push_back(r);
  }
  return rows;
}

TEST(PoolSummaryTest, SameLayoutAsArcstatsSummaryPlusArcstoreSections) {
  std::string out = RenderPoolSummary(Fixed(), History());
  EXPECT_NE(out.find("ARC summary: arcstore stats registry\n"), std::string::npos) << out;
  // The arc_summary layout: a 32-column label, 14-column cells.
  EXPECT_NE(out.find("        target c                       2.0 GiB        25.0 %\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("        size / c                         1.50x"), std::string::npos);
  EXPECT_NE(out.find("        all                                900           100        90.0 %\n"),
            std::string::npos);
  EXPECT_NE(out.find("        pressure                             3       6.0 GiB\n"), std::string::npos);
  EXPECT_NE(out.find("        handle_cache                   1.5 GiB        50.0 %\n"), std::string::npos);
  // min(4 GiB, 2 GiB / 2) = 1 GiB.
  EXPECT_NE(out.find("        effective dirty limit          1.0 GiB              \n"), std::string::npos) << out;
  EXPECT_NE(out.find("        arc_dirty_limit                      3        75.0 %\n"), std::string::npos);
  // Txg timing: 4 committed 400 ms apart, stime 200..500 ms (mean 350 ms).
  EXPECT_NE(out.find("        txgs in history                      4              \n"), std::string::npos) << out;
  EXPECT_NE(out.find("        one txg every                    400ms              \n"), std::string::npos);
  EXPECT_NE(out.find("        sync time (mean)                 350ms              \n"), std::string::npos);
  EXPECT_NE(out.find("        sync time (max)                  500ms              \n"), std::string::npos);
  EXPECT_NE(out.find("        delayed (history)                  8ms              \n"), std::string::npos);
}

}  // namespace
}  // namespace arcstore::tools
