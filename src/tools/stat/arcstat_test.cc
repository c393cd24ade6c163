// arcstore stat: header names against the arcstat output in seed 004, and
// values against deltas computed by hand from two fixed snapshots.
#include "tools/stat/arcstat.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/units.h"

namespace arcstore::tools {
namespace {

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string SeedText() {
  const char* shared = std::getenv("ARCSTORE_SHARED_DIR");
  std::string dir = shared != nullptr ? shared : "../shared";
  std::ifstream in(dir + "/seeds/004_e14887b0e44e6cf3.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The `count` words that follow `marker` in the seed.
std::vector<std::string> SeedWordsAfter(const std::string& marker, size_t count) {
  std::string text = SeedText();
  size_t at = text.find(marker);
  if (at == std::string::npos) return {};
  std::vector<std::string> w = Words(text.substr(at + marker.size(), 400));
  w.resize(std::min(w.size(), count));
  return w;
}

std::string Header(std::string_view fields) {
  auto f = ParseStatFields(fields);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? StatHeader(*f) : "";
}

TEST(ArcstatTest, HeadersMatchTheSeedsArcstatOutput) {
  std::vector<std::string> custom = SeedWordsAfter("arcstat.py -f read,hits,miss,hit%,arcsz 1 ", 5);
  ASSERT_EQ(custom, (std::vector<std::string>{"read", "hits", "miss", "hit%", "arcsz"}))
      << "seed 004 not found or changed (ARCSTORE_SHARED_DIR)";
  EXPECT_EQ(Words(Header("read,hits,miss,hit%,arcsz")), custom);

  std::vector<std::string> dflt = SeedWordsAfter("./arcstat.py 1 ", 12);
  ASSERT_EQ(dflt.size(), 12u);
  EXPECT_EQ(dflt.front(), "time");
  EXPECT_EQ(Words(Header(kDefaultFields)), dflt);
}

stats::Snapshot Make(uint64_t taken_ns, std::initializer_list<std::pair<const char*, int64_t>> counters,
                     std::initializer_list<std::pair<const char*, int64_t>> gauges) {
  stats::Snapshot s;
  s.taken_ns = taken_ns;
  auto add = [&](const char* full, stats::Kind kind, int64_t v) {
    std::string f = full;
    stats::StatValue sv;
    sv.info.module = f.substr(0, f.find('.'));
    sv.info.name = f.substr(f.find('.') + 1);
    sv.info.kind = kind;
    if (kind == stats::Kind::kCounter) sv.counter = static_cast<uint64_t>(v);
    else sv.gauge = v;
    s.values.push_back(sv);
  };
  for (auto& [n, v] : counters) add(n, stats::Kind::kCounter, v);
  for (auto& [n, v] : gauges) add(n, stats::Kind::kGauge, v);
  return s;
}

// Two snapshots 2 s apart. Deltas: hits 2200 (demand data 1500, demand
// metadata 100, prefetch data 600), misses 1102 (demand data 402, demand
// metadata 82, prefetch data 618), throttle delay 3 s, rmw reads 20.
struct Pair {
  stats::Snapshot earlier = Make(
      1 * kNsPerSec,
      {{"arcstats.hits", 1000}, {"arcstats.iohits", 5}, {"arcstats.misses", 500},
       {"arcstats.demand_data_hits", 700}, {"arcstats.demand_data_misses", 300},
       {"arcstats.demand_metadata_hits", 100}, {"arcstats.demand_metadata_misses", 50},
       {"arcstats.prefetch_data_hits", 200}, {"arcstats.prefetch_data_misses", 150},
       {"arcstats.prefetch_metadata_hits", 0}, {"arcstats.prefetch_metadata_misses", 0},
       {"txg.delay_ns", 1000}, {"txg.delayed_writes", 10}, {"volumes.rmw_reads", 7}},
      {{"arcstats.size", 1}, {"arcstats.c", 1}});
  stats::Snapshot later = Make(
      3 * kNsPerSec,
      {{"arcstats.hits", 3200}, {"arcstats.iohits", 5}, {"arcstats.misses", 1602},
       {"arcstats.demand_data_hits", 2200}, {"arcstats.demand_data_misses", 702},
       {"arcstats.demand_metadata_hits", 200}, {"arcstats.demand_metadata_misses", 132},
       {"arcstats.prefetch_data_hits", 800}, {"arcstats.prefetch_data_misses", 768},
       {"arcstats.prefetch_metadata_hits", 0}, {"arcstats.prefetch_metadata_misses", 0},
       {"txg.delay_ns", 3000001000}, {"txg.delayed_writes", 610}, {"volumes.rmw_reads", 27}},
      {{"arcstats.size", 9126805504}, {"arcstats.c", 9126805504},  // 8.5 GiB
       {"txg.dirty_bytes", 300 * int64_t{kMiB}}, {"txg.dirty_max_bytes", 4 * int64_t{kGiB}},
       {"txg.open_txg", 1234}, {"arcstats.held_bytes_handle_cache", 512 * int64_t{kMiB}}});
  stats::Snapshot delta = stats::Delta(earlier, later);
  StatInterval Interval() const {
    return {&delta, &later, 2.0, "09:48:48", "arc_dirty_limit"};
  }
};

std::string Row(std::string_view fields, const StatInterval& i) {
  auto f = ParseStatFields(fields);
  EXPECT_TRUE(f.ok());
  return StatRow(*f, i);
}

TEST(ArcstatTest, DefaultRowFromHandComputedDeltas) {
  Pair p;
  // read = (2200 + 0 + 1102) / 2 = 1651/s -> 1.7K; miss = 551; miss% = 1102/3302 = 33;
  // dmis = 484/2 = 242; dm% = 484/2084 = 23; pmis = 618/2 = 309; pm% = 618/1218 = 50;
  // mmis = 82/2 = 41; mm% = 82/182 = 45; arcsz = c = 8.5 GiB.
  EXPECT_EQ(Row(kDefaultFields, p.Interval()),
            "09:48:48  1.7K   551     33   242   23   309   50    41   45   8.5G  8.5G\n");
  // hits = 1100/s; hit% = 2200/3302 = 66.
  EXPECT_EQ(Row("read,hits,miss,hit%,arcsz", p.Interval()), "1.7K  1.1K   551    66   8.5G\n");
}

TEST(ArcstatTest, ArcstoreFieldsFromHandComputedDeltas) {
  Pair p;
  // dirty 300 MiB; dlim = min(4 GiB, 8.5 GiB / 2) = 4.0 GiB; thrw = 600/2 = 300;
  // thrms = 3e9 ns / 2 s = 1500 ms/s -> 1.5K; rmw = 20/2 = 10; hhc = 512 MiB.
  EXPECT_EQ(Row("dirty,dlim,txg,sync,thrw,thrms,rmw,hhc", p.Interval()),
            " 300M  4.0G    1234  arc_dirty_limit   300   1.5K    10  512M\n");
  // The limit follows c when c/2 is below dirty_max.
  for (auto& v : p.later.values) {
    if (v.info.name == "c") v.gauge = 6 * int64_t{kGiB};
  }
  EXPECT_EQ(Row("dlim", p.Interval()), "3.0G\n");
}

TEST(ArcstatTest, CacheDeviceFieldsFromHandComputedDeltas) {
  Pair p;
  auto add = [](stats::Snapshot& s, const char* name, stats::Kind kind, int64_t v) {
    stats::StatValue sv;
    sv.info.module = "arcstats";
    sv.info.name = name;
    sv.info.kind = kind;
    if (kind == stats::Kind::kCounter) sv.counter = static_cast<uint64_t>(v);
    else sv.gauge = v;
    s.values.push_back(sv);
  };
  add(p.earlier, "l2_hits", stats::Kind::kCounter, 100);
  add(p.earlier, "l2_misses", stats::Kind::kCounter, 50);
  add(p.earlier, "l2_read_bytes", stats::Kind::kCounter, 0);
  add(p.later, "l2_hits", stats::Kind::kCounter, 900);
  add(p.later, "l2_misses", stats::Kind::kCounter, 250);
  add(p.later, "l2_read_bytes", stats::Kind::kCounter, 100 * int64_t{kMiB});
  add(p.later, "l2_size", stats::Kind::kGauge, 3 * int64_t{kGiB});
  add(p.later, "l2_asize", stats::Kind::kGauge, 2 * int64_t{kGiB});
  p.delta = stats::Delta(p.earlier, p.later);
  // l2hits = 800/2 = 400; l2miss = 200/2 = 100; l2read = 500; l2hit% = 80;
  // l2miss% = 20; l2size 3 GiB; l2asize 2 GiB; l2bytes = 100 MiB / 2 s = 50 MiB/s.
  EXPECT_EQ(Row("l2hits,l2miss,l2read,l2hit%,l2miss%,l2size,l2asize,l2bytes", p.Interval()),
            "   400     100     500      80       20    3.0G     2.0G      50M\n");
}

// 7 hits and no misses over 1.3 s: the rates' ratio comes out a hair over
// 100 in floating point; a percentage is clamped, never scaled to "1.0K".
TEST(ArcstatTest, APercentageIsClampedNotScaled) {
  stats::Snapshot a = Make(0, {{"arcstats.hits", 0}, {"arcstats.misses", 0}}, {});
  stats::Snapshot b = Make(1300 * kNsPerMs, {{"arcstats.hits", 7}, {"arcstats.misses", 0}}, {});
  stats::Snapshot d = stats::Delta(a, b);
  StatInterval i{&d, &b, 1.3, "00:00:00", ""};
  EXPECT_EQ(Row("hit%,miss%", i), " 100      0\n");
}

TEST(ArcstatTest, MissingStatsPrintADash) {
  Pair p;
  EXPECT_EQ(Row("avail,hnbd,size", p.Interval()), "    -     -  8.5G\n");
}

TEST(ArcstatTest, UnknownFieldIsNamed) {
  auto f = ParseStatFields("read,bogus");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("'bogus'"), std::string::npos);
}

TEST(ArcstatTest, HeaderRepeatsEveryTwentyRows) {
  Pair p;
  StatPrinter printer(*ParseStatFields(kDefaultFields));
  std::string out;
  for (int i = 0; i < 41; i++) out += printer.Next(p.Interval());
  size_t headers = 0;
  for (size_t at = out.find("    time"); at != std::string::npos; at = out.find("    time", at + 1)) headers++;
  EXPECT_EQ(headers, 3u);
}

TEST(ArcstatTest, PrettyNumberFollowsArcstat) {
  EXPECT_EQ(PrettyNumber(0.4, 4, 1000), "   0");
  EXPECT_EQ(PrettyNumber(999, 4, 1000), " 999");
  EXPECT_EQ(PrettyNumber(1024, 4, 1000), "1.0K");
  EXPECT_EQ(PrettyNumber(25000, 4, 1000), " 25K");
  EXPECT_EQ(PrettyNumber(9.0 * kGiB, 5, 1024), " 9.0G");
  EXPECT_EQ(PrettyNumber(100, 3, 100), "100");
}

}  // namespace
}  // namespace arcstore::tools
