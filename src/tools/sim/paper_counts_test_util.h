// Test support: the exact hit counts of ../shared/traces/README.md section 5
// (cold start, every request counted, p a real number), and the path of a
// shared trace. A trace that cannot be found fails the test: it never skips.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <sys/stat.h>

#include "tools/sim/sim.h"

namespace arcstore::sim::testing {

struct PaperRow {
  const char* trace;  // file under traces/arc/
  uint64_t cache_pages;
  uint64_t requests;
  uint64_t lru_hits;
  uint64_t arc_hits;
};

inline constexpr PaperRow kPaperRows[] = {
    {"OLTP.lis.zst", 1000, 914145, 300122, 356015},
    {"OLTP.lis.zst", 2000, 914145, 388235, 421200},
    {"OLTP.lis.zst", 5000, 914145, 490443, 505080},
    {"OLTP.lis.zst", 10000, 914145, 554906, 565609},
    {"OLTP.lis.zst", 15000, 914145, 590851, 597857},
    {"P2.lis.zst", 32768, 12729495, 2350757, 3485175},
    {"P3.lis.zst", 32768, 3912296, 139485, 669507},
    {"P6.lis.zst", 32768, 12672123, 537345, 3021895},
    {"P12.lis.zst", 1024, 13208930, 539564, 549674},
    {"P12.lis.zst", 2048, 13208930, 638154, 644660},
    {"P12.lis.zst", 4096, 13208930, 741237, 760277},
    {"P12.lis.zst", 8192, 13208930, 821758, 943907},
    {"P12.lis.zst", 16384, 13208930, 936757, 1334993},
    {"P12.lis.zst", 32768, 13208930, 1179069, 2104636},
    {"P12.lis.zst", 65536, 13208930, 1906176, 3446535},
    {"P12.lis.zst", 131072, 13208930, 3859015, 5108453},
    {"P12.lis.zst", 262144, 13208930, 6487504, 7062365},
    {"P12.lis.zst", 524288, 13208930, 8046177, 8396011},
};

// $ARCSTORE_SHARED_DIR/traces/<rel>; fails the calling test (and returns "")
// when the variable is unset or the file is missing.
inline std::string SharedTrace(const std::string& rel) {
  const char* dir = std::getenv("ARCSTORE_SHARED_DIR");
  if (dir == nullptr || *dir == '\0') {
    ADD_FAILURE() << "ARCSTORE_SHARED_DIR is not set (ctest sets it; see cmake/Arcstore.cmake)";
    return "";
  }
  std::string path = std::string(dir) + "/traces/" + rel;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    ADD_FAILURE() << "missing trace " << path;
    return "";
  }
  return path;
}

// Runs one row with one policy and checks requests and hits exactly.
inline void ExpectPaperRow(const PaperRow& row, SimPolicy policy) {
  SCOPED_TRACE(std::string(row.trace) + " c=" + std::to_string(row.cache_pages) + " " +
               std::string(SimPolicyName(policy)));
  const std::string path = SharedTrace(std::string("arc/") + row.trace);
  ASSERT_FALSE(path.empty());
  SimOptions o;
  o.trace_path = path;
  o.policy = policy;
  o.cache_pages = row.cache_pages;
  auto r = RunSim(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->requests, row.requests);
  EXPECT_EQ(r->hits, policy == SimPolicy::kArc ? row.arc_hits : row.lru_hits);
  EXPECT_EQ(r->hits + r->misses, r->requests);
  if (policy == SimPolicy::kArc) {
    EXPECT_LE(r->mru_bytes + r->mfu_bytes, r->c_bytes);
    EXPECT_GE(r->p_bytes, 0.0);
    EXPECT_LE(r->p_bytes, static_cast<double>(r->c_bytes));
  }
}

}  // namespace arcstore::sim::testing
