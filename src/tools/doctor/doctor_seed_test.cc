// The doctor on real dumps (the seed's four excerpts, copied exactly) and on
// hand-made dumps built from the arcstats field definitions.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/doctor/arcstats_reader.h"
#include "tools/doctor/doctor.h"
#include "tools/doctor/report_format.h"
#include "tools/doctor/test_fixtures.h"

namespace arcstore::doctor {
namespace {

using testing::ReadFixture;

Report DiagnoseFixture(const std::string& name) {
  auto v = ReadArcStats(ReadFixture(name));
  EXPECT_TRUE(v.ok()) << name << ": " << v.status().ToString();
  return v.ok() ? Diagnose(*v) : Report{};
}

std::string Evidence(const Finding& f, const std::string& name) {
  for (const auto& e : f.evidence)
    if (e.name == name) return e.value;
  return "<absent>";
}

void ExpectNothingAboveInfo(const Report& r, const std::string& what) {
  EXPECT_EQ(r.ExitCode(), 0) << what << "\n" << RenderText(r);
  for (const auto& f : r.findings) EXPECT_EQ(f.severity, Severity::kInfo) << what << ": " << f.id;
  EXPECT_NE(r.Find("healthy"), nullptr) << what;
}

TEST(DoctorSeed, LondonIsCritical) {
  Report r = DiagnoseFixture("seed000_london_kstat.txt");
  EXPECT_EQ(r.ExitCode(), 2);
  const Finding* collapsed = r.Find("target_collapsed");
  ASSERT_NE(collapsed, nullptr) << RenderText(r);
  EXPECT_EQ(collapsed->severity, Severity::kCritical);
  EXPECT_NE(collapsed->title.find("50.7x"), std::string::npos) << collapsed->title;
  EXPECT_EQ(Evidence(*collapsed, "c"), "1.0 GiB (1073741824)");
  EXPECT_EQ(Evidence(*collapsed, "c_min"), "1.0 GiB (1073741824)");
  const Finding* over = r.Find("size_over_target");
  ASSERT_NE(over, nullptr);
  EXPECT_EQ(over->severity, Severity::kCritical);
  EXPECT_EQ(Evidence(*over, "size / c"), "50.7x");
  EXPECT_NE(over->title.find("almost nothing is evictable"), std::string::npos) << over->title;
  const Finding* pinned = r.Find("nothing_evictable");
  ASSERT_NE(pinned, nullptr);
  EXPECT_EQ(pinned->severity, Severity::kCritical);
  EXPECT_EQ(Evidence(*pinned, "evictable (mru + mfu)"), "0 B (0)");
  const Finding* overhead = r.Find("overhead_large");
  ASSERT_NE(overhead, nullptr);
  EXPECT_EQ(Evidence(*overhead, "overhead_size"), "25.3 GiB (27193981440)");
  EXPECT_EQ(r.findings.front().severity, Severity::kCritical);
  EXPECT_EQ(r.Find("healthy"), nullptr);
}

TEST(DoctorSeed, C12IsHealthy) {
  Report r = DiagnoseFixture("seed000_c12_kstat.txt");
  ExpectNothingAboveInfo(r, "C12");
  // Little is evictable there, but size is far below c: said, as info.
  const Finding* f = r.Find("nothing_evictable");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
}

TEST(DoctorSeed, StuckEvictableExcerptIsCriticalAndNamesWhatIsMissing) {
  Report r = DiagnoseFixture("seed000_grep_evictable_stuck.txt");
  EXPECT_EQ(r.ExitCode(), 2);
  const Finding* f = r.Find("nothing_evictable");
  ASSERT_NE(f, nullptr) << RenderText(r);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NE(f->title.find("c and size missing"), std::string::npos) << f->title;
  auto missing = r.MissingFields();
  EXPECT_NE(std::find(missing.begin(), missing.end(), "c"), missing.end());
  EXPECT_NE(std::find(missing.begin(), missing.end(), "size"), missing.end());
  EXPECT_EQ(r.field_set, FieldSet::kUndecided);
}

TEST(DoctorSeed, HealthyEvictableExcerptIsHealthy) {
  Report r = DiagnoseFixture("seed000_grep_evictable_healthy.txt");
  ExpectNothingAboveInfo(r, "grep evicta");
  EXPECT_EQ(r.Find("nothing_evictable"), nullptr);
}

TEST(DoctorFixtures, HealthyDumpsOfEveryFormatRaiseNothingAboveInfo) {
  for (const char* name :
       {"linux_arcstats_2.1_healthy.txt", "linux_arcstats_2.2_healthy.txt",
        "freebsd_sysctl_healthy.txt", "illumos_kstat_p_sizes.txt", "arc_summary_2.1_healthy.txt",
        "arc_summary_2.2_healthy.txt", "arc_summary_py_healthy.txt",
        "seed004_arc_summary_py_flat.txt"})
    ExpectNothingAboveInfo(DiagnoseFixture(name), name);
}

struct Expected {
  const char* fixture;
  const char* id;
  Severity severity;
  int exit_code;
};

TEST(DoctorFixtures, EachPathologyIsNamed) {
  const Expected cases[] = {
      {"finding_pressure_while_free.txt", "pressure_while_free", Severity::kCritical, 2},
      {"finding_pressure_while_free.txt", "target_collapsed", Severity::kCritical, 2},
      {"finding_not_yielding.txt", "not_yielding", Severity::kCritical, 2},
      {"finding_metadata_dnode_prune.txt", "metadata_over_limit", Severity::kWarning, 1},
      {"finding_metadata_dnode_prune.txt", "dnode_over_limit", Severity::kWarning, 1},
      {"finding_metadata_dnode_prune.txt", "arc_prune_storm", Severity::kWarning, 1},
      {"finding_l2arc_headers.txt", "l2arc_headers_large", Severity::kCritical, 2},
      {"finding_l2arc_wrapped.txt", "l2arc_sizes_impossible", Severity::kCritical, 2},
      {"finding_cache_too_small.txt", "cache_too_small", Severity::kWarning, 1},
      {"finding_prefetch_wasted.txt", "prefetch_wasted", Severity::kWarning, 1},
      {"finding_cold_cache.txt", "cold_cache", Severity::kInfo, 0},
  };
  for (const auto& c : cases) {
    Report r = DiagnoseFixture(c.fixture);
    const Finding* f = r.Find(c.id);
    ASSERT_NE(f, nullptr) << c.fixture << " lacks " << c.id << "\n" << RenderText(r);
    EXPECT_EQ(f->severity, c.severity) << c.fixture << " " << c.id;
    EXPECT_EQ(r.ExitCode(), c.exit_code) << c.fixture << "\n" << RenderText(r);
    EXPECT_FALSE(f->evidence.empty());
    EXPECT_FALSE(f->advice.empty());
  }
}

TEST(DoctorFixtures, PressureWhileFreeShowsTheNumbers) {
  Report r = DiagnoseFixture("finding_pressure_while_free.txt");
  const Finding* f = r.Find("pressure_while_free");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Evidence(*f, "memory_available_bytes"), "-3.0 GiB (-3221225472)");
  EXPECT_EQ(Evidence(*f, "memory_free_bytes"), "22.0 GiB (23622320128)");
  EXPECT_NE(f->title.find("(34%) free"), std::string::npos) << f->title;
}

TEST(DoctorReport, JsonCarriesVerdictFindingsAndMissingFields) {
  Report r = DiagnoseFixture("seed000_grep_evictable_stuck.txt");
  auto j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["verdict"], "critical");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["source"]["format"], "name/value excerpt");
  bool found = false;
  for (const auto& f : j["findings"]) found |= f["id"] == "nothing_evictable";
  EXPECT_TRUE(found);
  auto missing = j["missing_fields"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(missing.begin(), missing.end(), "c"), missing.end());
  std::string text = RenderText(r);
  EXPECT_NE(text.find("CRITICAL  nothing_evictable"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: critical (exit 2)"), std::string::npos);
}

}  // namespace
}  // namespace arcstore::doctor
