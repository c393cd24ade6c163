#include "stats/registry.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace arcstore::stats {
namespace {

TEST(RegistryTest, SnapshotReadsEveryKind) {
  Registry r;
  Counter* hits = r.AddCounter("arcstats", "hits", Unit::kOps, "demand and prefetch hits");
  Gauge* size = r.AddGauge("arcstats", "size", Unit::kBytes, "bytes cached");
  int64_t c = 1 << 20;
  r.AddGaugeFn("arcstats", "c", Unit::kBytes, "target size", [&c] { return c; });
  Histogram* lat = r.AddHistogram("io", "write_lat", Unit::kNanoseconds, "write latency");
  hits->Add(3);
  size->Set(4096);
  lat->Record(1000);
  Snapshot s = r.TakeSnapshot(7);
  EXPECT_EQ(s.taken_ns, 7u);
  EXPECT_EQ(s.Get("arcstats", "hits"), 3);
  EXPECT_EQ(s.Get("arcstats", "size"), 4096);
  EXPECT_EQ(s.Get("arcstats", "c"), 1 << 20);
  EXPECT_EQ(s.Find("io", "write_lat")->histogram.count, 1u);
  EXPECT_EQ(s.Get("arcstats", "nonesuch", -1), -1);
  c = 2 << 20;  // function gauges are sampled at snapshot time
  EXPECT_EQ(r.TakeSnapshot().Get("arcstats", "c"), 2 << 20);
}

TEST(RegistryTest, DeltaSubtractsCountersKeepsGauges) {
  Registry r;
  Counter* hits = r.AddCounter("arcstats", "hits", Unit::kOps, "");
  Gauge* size = r.AddGauge("arcstats", "size", Unit::kBytes, "");
  Histogram* lat = r.AddHistogram("io", "lat", Unit::kNanoseconds, "");
  hits->Add(10);
  size->Set(100);
  lat->Record(5);
  Snapshot a = r.TakeSnapshot(1000);
  hits->Add(7);
  size->Set(50);
  lat->Record(5);
  lat->Record(300);
  Counter* late = r.AddCounter("arcstats", "misses", Unit::kOps, "");
  late->Add(2);
  Snapshot b = r.TakeSnapshot(3000);
  Snapshot d = Delta(a, b);
  EXPECT_EQ(d.taken_ns, 2000u);
  EXPECT_EQ(d.Get("arcstats", "hits"), 7);
  EXPECT_EQ(d.Get("arcstats", "size"), 50);
  EXPECT_EQ(d.Get("arcstats", "misses"), 2);  // new since `a`: counts from zero
  const HistogramData& h = d.Find("io", "lat")->histogram;
  EXPECT_EQ(h.count, 2u);
  EXPECT_EQ(h.buckets[HistogramData::BucketOf(5)], 1u);
  EXPECT_EQ(h.buckets[HistogramData::BucketOf(300)], 1u);
}

TEST(RegistryTest, RemoveModuleDropsItsStats) {
  Registry r;
  r.AddCounter("vol.a", "writes", Unit::kOps, "");
  r.AddCounter("vol.b", "writes", Unit::kOps, "");
  r.RemoveModule("vol.a");
  EXPECT_EQ(r.TakeSnapshot().Find("vol.a", "writes"), nullptr);
  EXPECT_NE(r.TakeSnapshot().Find("vol.b", "writes"), nullptr);
  // The name is free again.
  r.AddCounter("vol.a", "writes", Unit::kOps, "");
  EXPECT_EQ(r.List().size(), 2u);
}

TEST(RegistryDeathTest, DuplicateDeclarationAborts) {
  Registry r;
  r.AddCounter("arcstats", "hits", Unit::kOps, "");
  EXPECT_DEATH(r.AddGauge("arcstats", "hits", Unit::kOps, ""), "declared twice: arcstats.hits");
}

TEST(RegistryTest, ExportsKstatTextAndJson) {
  Registry r;
  r.AddCounter("arcstats", "hits", Unit::kOps, "")->Add(12);
  r.AddGauge("arcstats", "c_min", Unit::kBytes, "")->Set(67108864);
  Histogram* h = r.AddHistogram("io", "size", Unit::kBytes, "");
  h->Record(4096);
  h->Record(4096);
  Snapshot s = r.TakeSnapshot();
  std::string text = ToKstatText(s);
  EXPECT_NE(text.find("arcstats\nname                             type data\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("hits                             4    12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("c_min                            4    67108864\n"), std::string::npos);
  EXPECT_NE(text.find("size.4096                        4    2\n"), std::string::npos) << text;

  nlohmann::json j = nlohmann::json::parse(ToJson(s));
  EXPECT_EQ(j["arcstats"]["hits"], 12);
  EXPECT_EQ(j["arcstats"]["c_min"], 67108864);
  EXPECT_EQ(j["io"]["size"]["count"], 2);
  EXPECT_EQ(j["io"]["size"]["buckets"]["4096"], 2);
}

}  // namespace
}  // namespace arcstore::stats
