// Compare two fio JSON results (ours or fio's own): per job and direction,
// bandwidth, IOPS and clat p50/p99, with the change in percent. A change
// for the worse beyond the threshold (less bandwidth or IOPS, more latency)
// is a regression. Jobs are matched by jobname (in order for duplicates).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace arcstore::bench {

struct CompareRow {
  std::string job;
  std::string dir;     // "read", "write", "trim"
  std::string metric;  // "bw", "iops", "clat_p50", "clat_p99"
  double baseline = 0;
  double result = 0;
  double change_pct = 0;  // (result - baseline) / baseline * 100
  bool regression = false;
};

struct CompareReport {
  std::vector<CompareRow> rows;
  std::vector<std::string> unmatched;  // jobs present in only one file
  bool regressed() const;
  // The per-job table, one row per metric.
  std::string ToText(double threshold_pct) const;
};

Result<CompareReport> CompareFioJson(const nlohmann::json& baseline, const nlohmann::json& result,
                                     double threshold_pct);
// Reads both files; errors name the file.
Result<CompareReport> CompareFioJsonFiles(const std::string& baseline_path,
                                          const std::string& result_path, double threshold_pct);

}  // namespace arcstore::bench
