#include "tools/doctor/summary.h"

#include <gtest/gtest.h>

#include "stats/registry.h"
#include "tools/doctor/arcstats_reader.h"
#include "tools/doctor/stats_view.h"
#include "tools/doctor/test_fixtures.h"

namespace arcstore::doctor {
namespace {

using testing::ReadFixture;

std::string SummaryOf(const std::string& fixture) {
  auto v = ReadArcStats(ReadFixture(fixture));
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? RenderSummary(*v) : "";
}

// The row for `label`, or "" when absent.
std::string Row(const std::string& text, const std::string& label) {
  size_t at = text.find("        " + label + " ");
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

// An arcstore pool's read-modify-writes are labelled by what the counter
// counts: completions from the committed record, whether the ARC held it
// or it came from disk.
TEST(Summary, ReadModifyWritesAreLabelledByWhatTheyCount) {
  stats::Registry r;
  r.AddGauge("arcstats", "c", stats::Unit::kBytes, "")->Set(1 << 30);
  r.AddGauge("txg", "dirty_max_bytes", stats::Unit::kBytes, "")->Set(1 << 28);
  r.AddCounter("volumes", "rmw_reads", stats::Unit::kOps, "")->Add(42);
  std::string s = RenderSummary(FromSnapshot(r.TakeSnapshot()));
  EXPECT_NE(Row(s, "rmw from the committed record (ARC or disk)").find("42"), std::string::npos)
      << s;
  EXPECT_EQ(s.find("rmw reads from disk"), std::string::npos) << s;
}

TEST(Summary, LondonShowsSizeFarAboveTarget) {
  std::string s = SummaryOf("seed000_london_kstat.txt");
  EXPECT_NE(Row(s, "size (current)").find("50.7 GiB"), std::string::npos) << s;
  EXPECT_NE(Row(s, "target c").find("1.0 GiB"), std::string::npos) << s;
  EXPECT_NE(Row(s, "c_max (ceiling)").find("884.5 GiB"), std::string::npos) << s;
  EXPECT_NE(Row(s, "size / c").find("50.69x"), std::string::npos) << s;
  std::string mru = Row(s, "mru");
  EXPECT_NE(mru.find("48.1 GiB"), std::string::npos) << mru;  // mru_size, nothing evictable
  EXPECT_NE(mru.find("0 B"), std::string::npos) << mru;
  EXPECT_NE(Row(s, "demand_metadata").find("96.4 %"), std::string::npos) << s;
  EXPECT_NE(s.find("not in the input:"), std::string::npos);
  EXPECT_NE(s.find("memory_all_bytes"), std::string::npos);
  EXPECT_NE(s.find("field set: OpenZFS before 2.2"), std::string::npos);
}

TEST(Summary, TwoTwoLayoutShowsItsTargetsAndApproximations) {
  std::string s = SummaryOf("arc_summary_2.2_healthy.txt");
  EXPECT_NE(s.find("pd (MRU data target)"), std::string::npos) << s;
  EXPECT_EQ(s.find("p (MRU target)"), std::string::npos);
  EXPECT_NE(Row(s, "size (current)").find("~106.5 MiB"), std::string::npos) << s;
  EXPECT_NE(Row(s, "all").find("99.9 %"), std::string::npos) << s;
  size_t by_type = s.find("ARC states by type (2.2+)");
  ASSERT_NE(by_type, std::string::npos) << s;
  std::string mru = Row(s.substr(by_type), "mru");
  EXPECT_NE(mru.find("~37.6 MiB"), std::string::npos) << mru;
  EXPECT_NE(mru.find("~23.2 MiB"), std::string::npos) << mru;
  // Before 2.2 there is no data/metadata split to show.
  EXPECT_EQ(SummaryOf("seed000_london_kstat.txt").find("by type"), std::string::npos);
}

// The L2ARC section: sizes, the header share of the ARC and the hit ratio
// from an OpenZFS dump; arcstore's per-device rows from its modules; a pool
// that never cached anything says so.
TEST(Summary, L2SectionShowsSizesHeadersAndHitRatio) {
  std::string s = SummaryOf("finding_l2arc_headers.txt");
  EXPECT_NE(Row(s, "l2_size (cached)").find("1.8 TiB"), std::string::npos) << s;
  // 2,201,334 hits of 12,134,346 ARC misses that went to the L2.
  EXPECT_NE(Row(s, "l2_hits, l2_misses").find("18.1 %"), std::string::npos) << s;
  EXPECT_NE(Row(s, "l2_hdr_size (in ARC)").find("9.0 GiB"), std::string::npos) << s;

  stats::Registry r;
  r.AddGauge("arcstats", "size", stats::Unit::kBytes, "")->Set(int64_t{1} << 30);
  r.AddCounter("arcstats", "l2_hits", stats::Unit::kOps, "")->Add(900);
  r.AddCounter("arcstats", "l2_misses", stats::Unit::kOps, "")->Add(100);
  r.AddGauge("arcstats", "l2_size", stats::Unit::kBytes, "")->Set(int64_t{3} << 30);
  r.AddGauge("arcstats", "l2_hdr_size", stats::Unit::kBytes, "")->Set(int64_t{1} << 26);
  r.AddCounter("l2arc.0", "hits", stats::Unit::kOps, "")->Add(700);
  r.AddCounter("l2arc.0", "slots_written", stats::Unit::kOps, "")->Add(12);
  r.AddCounter("l2arc.0", "checksum_errors", stats::Unit::kOps, "")->Add(2);
  r.AddCounter("l2arc.3", "hits", stats::Unit::kOps, "")->Add(200);
  std::string a = RenderSummary(FromSnapshot(r.TakeSnapshot()));
  EXPECT_NE(Row(a, "l2_hits, l2_misses").find("90.0 %"), std::string::npos) << a;
  EXPECT_NE(Row(a, "l2_hdr_size (in ARC)").find("6.2 %"), std::string::npos) << a;
  std::string d0 = Row(a, "l2arc.0");
  EXPECT_NE(d0.find("700"), std::string::npos) << a;
  EXPECT_NE(d0.find("12"), std::string::npos) << d0;
  EXPECT_EQ(d0.substr(d0.size() - 2), " 2") << d0;  // bad copies
  EXPECT_NE(Row(a, "l2arc.3").find("200"), std::string::npos) << a;

  stats::Registry none;
  none.AddCounter("arcstats", "l2_hits", stats::Unit::kOps, "");
  none.AddGauge("arcstats", "l2_size", stats::Unit::kBytes, "");
  std::string n = RenderSummary(FromSnapshot(none.TakeSnapshot()));
  EXPECT_NE(n.find("no cache device"), std::string::npos) << n;
  EXPECT_EQ(n.find("L2ARC devices"), std::string::npos) << n;
}

TEST(Summary, ExcerptMarksEverythingElseMissing) {
  std::string s = SummaryOf("seed000_grep_evictable_healthy.txt");
  EXPECT_NE(Row(s, "mru").find("83.4 GiB"), std::string::npos) << s;
  EXPECT_NE(Row(s, "size (current)").find("-"), std::string::npos);
  EXPECT_NE(s.find(" c_max"), std::string::npos);
}

}  // namespace
}  // namespace arcstore::doctor
