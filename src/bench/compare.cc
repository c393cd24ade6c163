#include "bench/compare.h"

#include <fstream>
#include <map>

#include "bench/fio_format.h"

namespace arcstore::bench {
namespace {

Result<nlohmann::json> ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot open " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // fio may print notes before the JSON object.
  size_t brace = text.find('{');
  if (brace == std::string::npos) return Status::InvalidArgument(path + ": no JSON object");
  auto j = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(brace), text.end(),
                                 nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON");
  if (!j.contains("jobs") || !j["jobs"].is_array()) {
    return Status::InvalidArgument(path + ": no \"jobs\" array (not fio JSON)");
  }
  return j;
}

double Number(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return 0;
  return j[key].get<double>();
}

double Percentile(const nlohmann::json& dir, const char* key) {
  if (!dir.contains("clat_ns")) return 0;
  const auto& c = dir["clat_ns"];
  if (!c.contains("percentile") || !c["percentile"].contains(key)) return 0;
  return c["percentile"][key].get<double>();
}

// A metric's value as fio prints it: bandwidth in KiB/s, IOPS, completion
// latency percentiles in usec (fio's JSON holds bytes/s and ns).
std::string WithUnit(const std::string& metric, double value) {
  if (metric == "bw") return StrFormat("%.0fKiB/s", value / 1024.0);
  if (metric == "iops") return StrFormat("%.1f", value);
  return StrFormat("%.2f usec", value / 1000.0);
}

}  // namespace

bool CompareReport::regressed() const {
  for (const auto& r : rows) {
    if (r.regression) return true;
  }
  return false;
}

std::string CompareReport::ToText(double threshold_pct) const {
  std::string out = StrFormat("%-24s %-6s %-9s %16s %16s %9s\n", "job", "dir", "metric", "baseline",
                              "result", "change");
  for (const auto& r : rows) {
    out += StrFormat("%-24s %-6s %-9s %16s %16s %+8.1f%%%s\n", r.job.c_str(), r.dir.c_str(),
                     r.metric.c_str(), WithUnit(r.metric, r.baseline).c_str(),
                     WithUnit(r.metric, r.result).c_str(), r.change_pct,
                     r.regression ? "  REGRESSION" : "");
  }
  for (const auto& u : unmatched) out += "unmatched job: " + u + "\n";
  out += StrFormat("threshold %.1f%%: %s\n", threshold_pct,
                   regressed() ? "REGRESSION" : "no regression");
  return out;
}

Result<CompareReport> CompareFioJson(const nlohmann::json& base, const nlohmann::json& res,
                                     double threshold_pct) {
  if (!(threshold_pct >= 0)) return Status::InvalidArgument("threshold must be >= 0");
  CompareReport report;
  std::map<std::string, std::vector<const nlohmann::json*>> by_name;
  for (const auto& j : res["jobs"]) by_name[j.value("jobname", "")].push_back(&j);
  for (const auto& b : base["jobs"]) {
    std::string name = b.value("jobname", "");
    auto& candidates = by_name[name];
    if (candidates.empty()) {
      report.unmatched.push_back(name + " (baseline only)");
      continue;
    }
    const nlohmann::json& r = *candidates.front();
    candidates.erase(candidates.begin());
    for (const char* dir : {"read", "write", "trim"}) {
      if (!b.contains(dir) || !r.contains(dir)) continue;
      const auto& bd = b[dir];
      const auto& rd = r[dir];
      if (Number(bd, "total_ios") == 0 && Number(rd, "total_ios") == 0) continue;
      struct Metric {
        const char* name;
        double base, result;
        bool higher_is_better;
      };
      const Metric metrics[] = {
          {"bw", Number(bd, "bw_bytes"), Number(rd, "bw_bytes"), true},
          {"iops", Number(bd, "iops"), Number(rd, "iops"), true},
          {"clat_p50", Percentile(bd, "50.000000"), Percentile(rd, "50.000000"), false},
          {"clat_p99", Percentile(bd, "99.000000"), Percentile(rd, "99.000000"), false},
      };
      for (const Metric& m : metrics) {
        CompareRow row{name, dir, m.name, m.base, m.result, 0, false};
        if (m.base > 0) row.change_pct = (m.result - m.base) / m.base * 100.0;
        double worse = m.higher_is_better ? -row.change_pct : row.change_pct;
        row.regression = m.base > 0 && worse > threshold_pct;
        report.rows.push_back(row);
      }
    }
  }
  for (const auto& [name, left] : by_name) {
    for (size_t i = 0; i < left.size(); i++) report.unmatched.push_back(name + " (result only)");
  }
  return report;
}

Result<CompareReport> CompareFioJsonFiles(const std::string& baseline_path,
                                          const std::string& result_path, double threshold_pct) {
  ARC_ASSIGN_OR_RETURN(nlohmann::json b, ReadJson(baseline_path));
  ARC_ASSIGN_OR_RETURN(nlohmann::json r, ReadJson(result_path));
  return CompareFioJson(b, r, threshold_pct);
}

}  // namespace arcstore::bench
