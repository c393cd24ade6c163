// --compare: an identical pair passes; a 20% regression is flagged.
#include <gtest/gtest.h>

#include "bench/compare.h"

namespace arcstore::bench {
namespace {

nlohmann::json Result(double bw_bytes, double iops, double p50, double p99) {
  nlohmann::json dir = {{"total_ios", 1000},
                        {"bw_bytes", bw_bytes},
                        {"iops", iops},
                        {"clat_ns", {{"percentile", {{"50.000000", p50}, {"99.000000", p99}}}}}};
  nlohmann::json idle = {{"total_ios", 0}, {"bw_bytes", 0}, {"iops", 0.0}};
  return {{"jobs", {{{"jobname", "randwrite-4K"}, {"read", idle}, {"write", dir}, {"trim", idle}}}}};
}

TEST(Compare, IdenticalRunsPass) {
  auto base = Result(100e6, 25000, 30000, 90000);
  auto r = CompareFioJson(base, base, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->regressed());
  EXPECT_EQ(r->rows.size(), 4u);  // write: bw, iops, p50, p99
  EXPECT_TRUE(r->unmatched.empty());
  EXPECT_NE(r->ToText(10).find("no regression"), std::string::npos);
}

TEST(Compare, TwentyPercentRegressionIsFlagged) {
  auto base = Result(100e6, 25000, 30000, 90000);
  auto slow = Result(80e6, 20000, 30000, 90000);
  auto r = CompareFioJson(base, slow, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->regressed());
  EXPECT_NEAR(r->rows[0].change_pct, -20.0, 1e-9);
  EXPECT_TRUE(r->rows[0].regression);
  EXPECT_NE(r->ToText(10).find("REGRESSION"), std::string::npos);
  // Values carry fio's units: KiB/s, IOPS, usec; the change in percent.
  const std::string text = r->ToText(10);
  EXPECT_NE(text.find("97656KiB/s"), std::string::npos) << text;  // 100e6 B/s
  EXPECT_NE(text.find("78125KiB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("25000.0"), std::string::npos) << text;
  EXPECT_NE(text.find("30.00 usec"), std::string::npos) << text;  // 30000 ns
  EXPECT_NE(text.find("-20.0%"), std::string::npos) << text;
  // The same drop within a 25% threshold passes.
  EXPECT_FALSE(CompareFioJson(base, slow, 25)->regressed());
  // Latency up 20% is a regression too; faster is never one.
  EXPECT_TRUE(CompareFioJson(base, Result(100e6, 25000, 36000, 90000), 10)->regressed());
  EXPECT_FALSE(CompareFioJson(base, Result(150e6, 40000, 10000, 20000), 10)->regressed());
}

TEST(Compare, UnmatchedJobsAndBadInput) {
  auto base = Result(1, 1, 1, 1);
  auto other = base;
  other["jobs"][0]["jobname"] = "else";
  auto r = CompareFioJson(base, other, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->unmatched.size(), 2u);
  EXPECT_FALSE(CompareFioJson(base, base, -1).ok());
  EXPECT_FALSE(CompareFioJsonFiles("/nonexistent/a.json", "/nonexistent/b.json", 10).ok());
}

}  // namespace
}  // namespace arcstore::bench
