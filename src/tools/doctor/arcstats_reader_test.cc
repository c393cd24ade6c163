#include "tools/doctor/arcstats_reader.h"

#include <gtest/gtest.h>

#include "base/random.h"
#include "base/units.h"
#include "tools/doctor/test_fixtures.h"

namespace arcstore::doctor {
namespace {

using testing::ReadFixture;

StatsView MustRead(const std::string& fixture) {
  auto r = ReadArcStats(ReadFixture(fixture));
  EXPECT_TRUE(r.ok()) << fixture << ": " << r.status().ToString();
  return r.ok() ? *r : StatsView{};
}

bool HasNote(const StatsView& v, std::string_view part) {
  for (const auto& n : v.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

TEST(KstatReader, IllumosLondonDumpFromTheSeed) {
  StatsView v = MustRead("seed000_london_kstat.txt");
  EXPECT_EQ(v.format, StatsFormat::kIllumosKstat);
  EXPECT_EQ(v.field_set, FieldSet::kPre22);
  EXPECT_NE(v.field_set_reason.find("arc_meta_used"), std::string::npos);
  EXPECT_EQ(v.Get("c"), 1073741824);
  EXPECT_EQ(v.Get("c_min"), 1073741824);
  EXPECT_EQ(v.Get("c_max"), 949701705728);
  EXPECT_EQ(v.Get("size"), 54427138464);
  EXPECT_EQ(v.Get("overhead_size"), 27193981440);
  EXPECT_EQ(v.Get("crtime"), 70394662000);  // seconds with a fraction, kept in ns
  EXPECT_EQ(v.values.size(), 67u);  // every "name value" line of the excerpt
  EXPECT_TRUE(v.approximate.empty());
  // The "... l2 details elided" remark is quoted; the shell prompt is not.
  EXPECT_TRUE(HasNote(v, "l2 details elided"));
  EXPECT_FALSE(HasNote(v, "BRM42220034"));
}

TEST(KstatReader, GrepExcerptHasNoFieldSet) {
  StatsView v = MustRead("seed000_grep_evictable_stuck.txt");
  EXPECT_EQ(v.format, StatsFormat::kNameValue);
  EXPECT_EQ(v.field_set, FieldSet::kUndecided);
  EXPECT_EQ(v.values.size(), 10u);
  EXPECT_EQ(v.Get("mru_evictable_data"), 0);
  EXPECT_FALSE(v.Has("c"));
  StatsView healthy = MustRead("seed000_grep_evictable_healthy.txt");
  EXPECT_EQ(healthy.Get("mru_evictable_data"), 89509593088);
}

TEST(KstatReader, LinuxPre22WithHeaderTimes) {
  StatsView v = MustRead("linux_arcstats_2.1_healthy.txt");
  EXPECT_EQ(v.format, StatsFormat::kLinuxKstat);
  EXPECT_EQ(v.field_set, FieldSet::kPre22);
  EXPECT_EQ(v.Get("crtime"), 5467367110);
  EXPECT_EQ(v.Get("snaptime"), 2587634571230);
  EXPECT_EQ(v.Get("c_max"), static_cast<int64_t>(32 * kGiB));
  EXPECT_TRUE(v.notes.empty()) << v.notes.front();
}

TEST(KstatReader, Linux22FieldSetAndSignedValues) {
  StatsView v = MustRead("linux_arcstats_2.2_healthy.txt");
  EXPECT_EQ(v.field_set, FieldSet::k22Plus);
  EXPECT_NE(v.field_set_reason.find("pd"), std::string::npos);
  EXPECT_EQ(v.Get("iohits"), 3012);
  EXPECT_FALSE(v.Has("p"));
}

TEST(KstatReader, FreeBsdSysctlReadsTheSameValues) {
  StatsView bsd = MustRead("freebsd_sysctl_healthy.txt");
  StatsView linux = MustRead("linux_arcstats_2.1_healthy.txt");
  EXPECT_EQ(bsd.format, StatsFormat::kFreeBsdSysctl);
  linux.values.erase("crtime");
  linux.values.erase("snaptime");
  EXPECT_EQ(bsd.values, linux.values);
}

TEST(KstatReader, IllumosKstatP) {
  StatsView v = MustRead("illumos_kstat_p_sizes.txt");
  EXPECT_EQ(v.format, StatsFormat::kIllumosKstatP);
  EXPECT_EQ(v.values.size(), 5u);
  EXPECT_EQ(v.Get("c"), static_cast<int64_t>(30 * kGiB));
  auto eq = ReadArcStats("kstat.zfs.misc.arcstats.size=42\n");
  ASSERT_TRUE(eq.ok());
  EXPECT_EQ(eq->Get("size"), 42);
}

TEST(KstatReader, SecondDumpEndsTheRead) {
  std::string text = ReadFixture("seed000_london_kstat.txt") + ReadFixture("seed000_c12_kstat.txt");
  auto v = ReadArcStats(text);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Get("c"), 1073741824);  // London's, not C12's
  EXPECT_TRUE(HasNote(*v, "a second dump begins here"));
}

TEST(KstatReader, WholeSeedReportReadsTheFirstDumpOnly) {
  // The whole field report, prose, job files and all: prose is not read as
  // stats ("runtime=60", "numjobs 1"), and the first dump (London) wins.
  const char* shared = std::getenv("ARCSTORE_SHARED_DIR");
  ASSERT_NE(shared, nullptr) << "ARCSTORE_SHARED_DIR is not set (ctest sets it)";
  std::ifstream in(std::string(shared) + "/seeds/000_98eedd3342c5fda6.txt");
  ASSERT_TRUE(in.good()) << "seed 000 missing under " << shared;
  std::stringstream text;
  text << in.rdbuf();
  auto v = ReadArcStats(text.str());
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->format, StatsFormat::kIllumosKstat);
  EXPECT_EQ(v->Get("c"), 1073741824);
  EXPECT_EQ(v->Get("size"), 54427138464);
  EXPECT_FALSE(v->Has("runtime"));
  EXPECT_FALSE(v->Has("numjobs"));
  EXPECT_TRUE(HasNote(*v, "a second dump begins here"));
}

TEST(KstatReader, LooseLinesBeforeAHeaderedDumpAreDropped) {
  auto v = ReadArcStats("size 5\nmodule: zfs instance: 0\nname: arcstats class: misc\n"
                        "  size 7\n  c 3\n");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Get("size"), 7);
  EXPECT_TRUE(HasNote(*v, "1 values before line 2 dropped"));
  EXPECT_FALSE(ReadArcStats("runtime=60\nnumjobs 1\nbs 4 4096\n").ok());
}

TEST(KstatReader, ArcSummaryRawReadsOnlyItsArcstatsSection) {
  StatsView v = MustRead("arc_summary_raw_2.1.txt");
  EXPECT_EQ(v.Get("hits"), 48210331);  // ARCSTATS' hits, not ZFETCHSTATS'
  EXPECT_EQ(v.Get("c_max"), static_cast<int64_t>(32 * kGiB));
  EXPECT_FALSE(v.Has("dmu_tx_assigned"));
  EXPECT_TRUE(HasNote(v, "section DMU_TX: is not arcstats"));
}

TEST(KstatReader, ConflictsKeepTheFirstValueAndSaySo) {
  auto v = ReadArcStats("size 10\nsize 20\nc 5\n");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Get("size"), 10);
  EXPECT_TRUE(HasNote(*v, "size appears twice (10 and 20)"));
}

TEST(KstatReader, WrappedCounterIsKeptSignedWithANote) {
  auto v = ReadArcStats("l2_size 4 18446744073709547520\n");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Get("l2_size"), -4096);
  EXPECT_TRUE(HasNote(*v, "above 2^63-1"));
  auto neg = ReadArcStats("memory_available_bytes 3 -1073741824\n");
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ(neg->Get("memory_available_bytes"), -1073741824);
}

TEST(KstatReader, RejectsInputWithoutStats) {
  EXPECT_EQ(ReadArcStats("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadArcStats("hello world, how are you\n").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadArcStats(std::string(kMaxArcStatsInputBytes + 1, 'x')).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(HumanValue, ParsesArcSummaryUnits) {
  bool unit = false;
  auto gib = ParseHumanValue("15.5", "GiB", &unit);
  ASSERT_TRUE(gib);
  EXPECT_TRUE(unit);
  EXPECT_EQ(gib->value, static_cast<int64_t>(15.5 * kGiB));
  EXPECT_FALSE(gib->exact);
  auto mega = ParseHumanValue("1.2M", "", &unit);
  ASSERT_TRUE(mega);
  EXPECT_EQ(mega->value, 1200000);
  auto billions = ParseHumanValue("1.21b", "", &unit);
  ASSERT_TRUE(billions);
  EXPECT_EQ(billions->value, 1210000000);
  auto zero = ParseHumanValue("0", "Bytes", &unit);
  ASSERT_TRUE(zero);
  EXPECT_TRUE(zero->exact);
  EXPECT_EQ(ParseHumanValue("42", "", &unit)->value, 42);
  EXPECT_TRUE(ParseHumanValue("42", "", &unit)->exact);
  EXPECT_FALSE(ParseHumanValue("1.2X", "", &unit));
  EXPECT_FALSE(ParseHumanValue("99999999", "EiB", &unit));  // beyond 63 bits
}

TEST(ArcSummaryReader, Layout21) {
  StatsView v = MustRead("arc_summary_2.1_healthy.txt");
  EXPECT_EQ(v.format, StatsFormat::kArcSummary);
  EXPECT_EQ(v.field_set, FieldSet::kPre22);
  EXPECT_EQ(v.Get("size"), static_cast<int64_t>(29.5 * kGiB));
  EXPECT_TRUE(v.IsApproximate("size"));
  EXPECT_EQ(v.Get("c_max"), static_cast<int64_t>(32 * kGiB));
  EXPECT_EQ(v.Get("memory_throttle_count"), 0);
  EXPECT_FALSE(v.IsApproximate("memory_throttle_count"));
  EXPECT_EQ(v.Get("hash_chain_max"), 6);
  EXPECT_EQ(v.Get("hits"), 48200000);
  EXPECT_EQ(v.Get("demand_data_hits"), 20300000);
  EXPECT_EQ(v.Get("demand_data_misses"), 1200000);
  EXPECT_EQ(v.Get("prefetch_metadata_misses"), 40700);
  EXPECT_EQ(v.Get("mfu_ghost_hits"), 8000);
  EXPECT_EQ(v.Get("arc_dnode_limit"), static_cast<int64_t>(2.4 * kGiB + 0.5));
  EXPECT_FALSE(v.Has("l2_hits"));  // "Hit ratio:" of the DMU section is not the L2ARC's
  EXPECT_FALSE(v.Has("zfs_arc_max"));
}

TEST(ArcSummaryReader, Layout22) {
  StatsView v = MustRead("arc_summary_2.2_healthy.txt");
  EXPECT_EQ(v.field_set, FieldSet::k22Plus);
  EXPECT_EQ(v.Get("hdr_size"), static_cast<int64_t>(900 * kKiB));
  EXPECT_EQ(v.Get("l2_hdr_size"), 0);
  EXPECT_EQ(v.Get("demand_data_iohits"), 114);
  EXPECT_FALSE(v.IsApproximate("demand_data_iohits"));
  EXPECT_EQ(v.Get("predictive_prefetch"), 20600);
  EXPECT_EQ(v.Get("mru_ghost_hits"), 405);
  EXPECT_EQ(v.Get("uncached_hits"), 0);
  EXPECT_EQ(v.Get("iohits"), 3000);
  EXPECT_EQ(v.Get("c"), static_cast<int64_t>(750 * kMiB));
}

TEST(ArcSummaryReader, OldPythonLayout) {
  StatsView v = MustRead("arc_summary_py_healthy.txt");
  EXPECT_EQ(v.format, StatsFormat::kArcSummaryPy);
  EXPECT_EQ(v.Get("c"), static_cast<int64_t>(8.71 * kGiB + 0.5));
  EXPECT_EQ(v.Get("c_max"), static_cast<int64_t>(10.6 * kGiB + 0.5));
  EXPECT_EQ(v.Get("hits"), 1210000000);
  EXPECT_EQ(v.Get("mru_ghost_hits"), 123450);
  EXPECT_EQ(v.Get("demand_data_misses"), 14340000);
  EXPECT_EQ(v.Get("prefetch_data_hits"), 629200);
  EXPECT_EQ(v.Get("p"), static_cast<int64_t>(8.17 * kGiB + 0.5));
  EXPECT_TRUE(HasNote(v, "arc_summary.py prints p"));
}

TEST(ArcSummaryReader, FlattenedExcerptFromTheSeed) {
  StatsView v = MustRead("seed004_arc_summary_py_flat.txt");
  EXPECT_EQ(v.format, StatsFormat::kArcSummaryPy);
  EXPECT_EQ(v.values.size(), 4u);
  EXPECT_EQ(v.Get("size"), static_cast<int64_t>(6.13 * kGiB + 0.5));
  EXPECT_EQ(v.Get("c_min"), static_cast<int64_t>(1.32 * kGiB + 0.5));
  EXPECT_EQ(v.field_set, FieldSet::kUndecided);
}

// Inputs built from the formats' own pieces and random bytes: the readers
// return a view or an error and never crash (the fuzzer goes further).
TEST(ArcStatsReaders, NeverCrashOnRandomInput) {
  auto rng = SeededRandom::FromEnvironment("ArcStatsReaders.NeverCrashOnRandomInput");
  const char* pieces[] = {"size", "c", " ", "\t", "\n", "4", "-", "18446744073709551615", "1.5",
                          "GiB", "%", "<", "(", ")", "ARC size (current):", "16:1", ":",
                          "module:", "name type data", "kstat.zfs.misc.arcstats.", "zfs:0:arcstats:",
                          "Cache hits by data type:", "Demand data:", "L2ARC size (adaptive):",
                          "Header size:", "crtime", "99999999999999999999999", "0x1f", "M", "b"};
  for (uint64_t i = 0; i < ScaledIterations(2000); i++) {
    std::string text;
    size_t n = rng.Uniform(60);
    for (size_t k = 0; k < n; k++) {
      if (rng.OneIn(5)) text.push_back(static_cast<char>(rng.Uniform(256)));
      else text += pieces[rng.Uniform(sizeof(pieces) / sizeof(pieces[0]))];
    }
    ReadArcStats(text).status().IgnoreError();
    (void)ReadArcSummary(text);
  }
}

}  // namespace
}  // namespace arcstore::doctor
