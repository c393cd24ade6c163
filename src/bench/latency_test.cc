// fio's histogram bucketing and percentiles, the stats merge, the random
// map, and the verify checksums against known vectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "base/random.h"
#include "bench/latency.h"
#include "bench/offsets.h"
#include "bench/verify.h"

namespace arcstore::bench {
namespace {

TEST(PlatHistogram, BucketsAreFios) {
  // Exact below 128 ns.
  for (uint64_t v = 0; v < 128; v++) {
    EXPECT_EQ(PlatHistogram::IndexOf(v), static_cast<int>(v));
    EXPECT_EQ(PlatHistogram::ValueOf(static_cast<int>(v)), v);
  }
  // fio reported 42752 for a bucket of [42496, 43008): 6 bits of precision.
  EXPECT_EQ(PlatHistogram::ValueOf(PlatHistogram::IndexOf(42600)), 42752u);
  EXPECT_EQ(PlatHistogram::ValueOf(PlatHistogram::IndexOf(68000)), 68096u);
  // Every value lands in a bucket whose midpoint is within 1/128 of it.
  SeededRandom rng = SeededRandom::FromEnvironment("PlatHistogram");
  for (uint64_t i = 0; i < ScaledIterations(100000); i++) {
    uint64_t v = rng.Uniform(uint64_t{1} << 33) + 128;
    double mid = static_cast<double>(PlatHistogram::ValueOf(PlatHistogram::IndexOf(v)));
    EXPECT_NEAR(mid, static_cast<double>(v), static_cast<double>(v) / 64.0) << v;
  }
  // Huge values share the last bucket.
  EXPECT_EQ(PlatHistogram::IndexOf(~0ull), PlatHistogram::kBuckets - 1);
}

TEST(PlatHistogram, PercentilesAsFioComputesThem) {
  PlatHistogram h;
  for (uint64_t v = 1; v <= 100; v++) h.Add(v);  // exact buckets
  auto p = h.Percentiles({1, 50, 99, 100, 99.99});
  EXPECT_EQ(p[0], 1u);
  EXPECT_EQ(p[1], 50u);
  EXPECT_EQ(p[2], 99u);
  EXPECT_EQ(p[3], 100u);
  EXPECT_EQ(p[4], 100u);
  PlatHistogram other;
  other.Add(1000);
  h.Merge(other);
  EXPECT_EQ(h.total(), 101u);
  EXPECT_EQ(h.Percentiles({100})[0], PlatHistogram::ValueOf(PlatHistogram::IndexOf(1000)));
  EXPECT_EQ(PlatHistogram().Percentiles({50})[0], 0u);
}

TEST(RunningStat, MeanStddevAndMerge) {
  RunningStat a, b, all;
  SeededRandom rng = SeededRandom::FromEnvironment("RunningStat");
  for (int i = 0; i < 1000; i++) {
    double v = static_cast<double>(rng.Uniform(100000));
    (i % 3 ? a : b).Add(v);
    all.Add(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.n(), all.n());
  EXPECT_NEAR(a.mean(), all.mean(), 1e-6);
  EXPECT_NEAR(a.stddev(), all.stddev(), 1e-6);
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  RunningStat two;
  two.Add(2);
  two.Add(4);
  EXPECT_DOUBLE_EQ(two.stddev(), std::sqrt(2.0));  // n - 1, as fio
}

TEST(LatencyBands, FiosBounds) {
  LatencyBands b;
  b.Add(1);          // < 2 ns
  b.Add(999);        // < 1000 ns
  b.Add(1500);       // < 2 us
  b.Add(3'000'000);  // < 4 ms
  b.Add(5'000'000'000ull);  // >= 2000 ms
  EXPECT_EQ(b.ns[0], 1u);
  EXPECT_EQ(b.ns[9], 1u);
  EXPECT_EQ(b.us[0], 1u);
  EXPECT_EQ(b.ms[1], 1u);
  EXPECT_EQ(b.ms[11], 1u);
  EXPECT_EQ(b.total, 5u);
}

TEST(RandomMap, HandsOutEveryUnitOnce) {
  SeededRandom rng = SeededRandom::FromEnvironment("RandomMap");
  for (uint64_t units : {1ull, 63ull, 64ull, 65ull, 4096ull, 70000ull}) {
    RandomMap map(units);
    std::vector<bool> seen(units, false);
    for (uint64_t i = 0; i < units; i++) {
      uint64_t u = map.TakeNear(rng.Uniform(units));
      ASSERT_LT(u, units);
      ASSERT_FALSE(seen[u]) << "unit " << u << " twice, units=" << units;
      seen[u] = true;
    }
    EXPECT_TRUE(map.Full());
    map.Clear();
    EXPECT_FALSE(map.Full());
  }
}

TEST(Verify, KnownVectors) {
  // CRC-32C check value (RFC 3720 / iSCSI): "123456789" -> 0xE3069283.
  EXPECT_EQ(Crc32c(0, "123456789", 9), 0xE3069283u);
  // MD5 test suite of RFC 1321.
  auto hex = [](const std::string& s) {
    uint8_t d[16];
    Md5(s.data(), s.size(), d);
    std::string out;
    char buf[3];
    for (uint8_t b : d) {
      std::snprintf(buf, sizeof(buf), "%02x", b);
      out += buf;
    }
    return out;
  };
  EXPECT_EQ(hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Verify, DetectsFlipsAndMisplacedBlocks) {
  for (VerifyKind kind : {VerifyKind::kCrc32c, VerifyKind::kMd5}) {
    std::vector<uint8_t> block(4096);
    FillVerifyBlock(kind, 8192, 7, block);
    EXPECT_TRUE(CheckVerifyBlock(kind, 8192, block).ok());
    Status misplaced = CheckVerifyBlock(kind, 12288, block);
    EXPECT_EQ(misplaced.code(), StatusCode::kCorruption);
    EXPECT_NE(misplaced.message().find("offset 12288"), std::string::npos);
    for (size_t at : {size_t{0}, size_t{20}, size_t{100}, size_t{4095}}) {
      auto bad = block;
      bad[at] ^= 1;
      Status s = CheckVerifyBlock(kind, 8192, bad);
      EXPECT_FALSE(s.ok()) << at;
      EXPECT_NE(s.message().find("8192"), std::string::npos) << s.message();
    }
  }
}

}  // namespace
}  // namespace arcstore::bench
