#include "stats/wire.h"

#include <gtest/gtest.h>

#include "stats/prometheus.h"

namespace arcstore::stats {
namespace {

Snapshot Sample() {
  Registry r;
  r.AddCounter("arcstats", "hits", Unit::kOps, "hits")->Add(12);
  r.AddGauge("arcstats", "p", Unit::kBytes, "mru target")->Set(-5);
  Histogram* h = r.AddHistogram("io", "sync_read_latency_ns", Unit::kNanoseconds, "latency");
  h->Record(0);
  h->Record(1000);
  h->Record(1500);
  h->Record(70000);
  return r.TakeSnapshot(99);
}

TEST(WireTest, RoundTripsEveryKind) {
  Snapshot s = Sample();
  Result<Snapshot> back = FromWireJson(ToWireJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->taken_ns, 99u);
  ASSERT_EQ(back->values.size(), s.values.size());
  EXPECT_EQ(back->Get("arcstats", "hits"), 12);
  EXPECT_EQ(back->Find("arcstats", "hits")->info.kind, Kind::kCounter);
  EXPECT_EQ(back->Get("arcstats", "p"), -5);
  EXPECT_EQ(back->Find("arcstats", "p")->info.unit, Unit::kBytes);
  const StatValue* h = back->Find("io", "sync_read_latency_ns");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->info.help, "latency");
  EXPECT_EQ(h->histogram.buckets, s.Find("io", "sync_read_latency_ns")->histogram.buckets);
  EXPECT_EQ(h->histogram.count, 4u);
  EXPECT_EQ(h->histogram.sum, 72500u);
  EXPECT_EQ(h->histogram.max, 70000u);
}

TEST(WireTest, BadInputNamesTheStatAndField) {
  EXPECT_FALSE(FromWireJson("not json").ok());
  EXPECT_FALSE(FromWireJson("{}").ok());
  auto r = FromWireJson(
      R"({"format":"arcstore-stats-v1","taken_ns":1,"stats":[{"module":"io","name":"x",)"
      R"("kind":"histogram","unit":"ns","count":1,"sum":1,"max":1,"buckets":[[65,1]]}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("stats[0] (io.x)"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("bucket index 65"), std::string::npos);
  r = FromWireJson(
      R"({"format":"arcstore-stats-v1","taken_ns":1,"stats":[{"module":"a","name":"b",)"
      R"("kind":"counter","unit":"ops","value":-1}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("counter value"), std::string::npos);
  r = FromWireJson(R"({"format":"arcstore-stats-v1","taken_ns":1,"stats":[{"module":"a","name":"b",)"
                   R"("kind":"meter","unit":"ops","value":1}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("kind"), std::string::npos);
}

TEST(PrometheusTest, NamesTypesAndBaseUnits) {
  std::string text = ToPrometheusText(Sample());
  EXPECT_NE(text.find("# TYPE arcstore_arcstats_hits_total counter\narcstore_arcstats_hits_total 12\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE arcstore_arcstats_p_bytes gauge\narcstore_arcstats_p_bytes -5\n"),
            std::string::npos);
  // ns -> seconds; buckets are cumulative at 2^i ns, ending with +Inf = count.
  EXPECT_NE(text.find("# TYPE arcstore_io_sync_read_latency_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("arcstore_io_sync_read_latency_seconds_bucket{le=\"0\"} 1\n"), std::string::npos);
  // 1000 is below 1024 (bucket 10), 1500 below 2048, 70000 below 131072.
  EXPECT_NE(text.find("arcstore_io_sync_read_latency_seconds_bucket{le=\"0.000001024\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("arcstore_io_sync_read_latency_seconds_bucket{le=\"0.000002048\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("arcstore_io_sync_read_latency_seconds_bucket{le=\"0.000131072\"} 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("arcstore_io_sync_read_latency_seconds_bucket{le=\"+Inf\"} 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("arcstore_io_sync_read_latency_seconds_sum 0.0000725\n"),
            std::string::npos);
  EXPECT_NE(text.find("arcstore_io_sync_read_latency_seconds_count 4\n"), std::string::npos);
}

TEST(PrometheusTest, CounterAlreadyNamedTotalIsNotDoubled) {
  Registry r;
  r.AddCounter("x", "bytes_total", Unit::kBytes, "")->Add(1);
  r.AddCounter("x", "delay_ns", Unit::kNanoseconds, "")->Add(1500000000);
  std::string text = ToPrometheusText(r.TakeSnapshot());
  EXPECT_NE(text.find("arcstore_x_bytes_total 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("arcstore_x_delay_seconds_total 1.5\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace arcstore::stats
