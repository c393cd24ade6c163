#include "tools/sim/sim_table.h"


#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "base/units.h"

namespace arcstore::sim {
namespace {

std::vector<std::string_view> Split(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

Result<CacheSizeSpec> ParseOneSize(std::string_view s) {
  CacheSizeSpec spec;
  if (AllDigits(s)) {
    if (s.size() > 15) return Status::InvalidArgument("cache size '" + std::string(s) + "' is too large");
    spec.pages = std::stoull(std::string(s));
    if (spec.pages == 0) return Status::InvalidArgument("cache size must be at least one page");
    return spec;
  }
  if (!s.empty() && s.back() == '%') {
    std::string num(s.substr(0, s.size() - 1));
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size() || !(v > 0 && v <= 100)) {
      return Status::InvalidArgument("cache size '" + std::string(s) + "': a percentage is in (0, 100]");
    }
    spec.percent_of_distinct = v;
    return spec;
  }
  Result<uint64_t> bytes = ParseSizeBytes(s);
  if (!bytes.ok()) {
    return Status::InvalidArgument("cache size '" + std::string(s) +
                                   "': want pages (1000), bytes with a unit (16M) or a percentage of "
                                   "the distinct keys (10%)");
  }
  spec.bytes = *bytes;
  return spec;
}

}  // namespace

Result<std::vector<SimPolicy>> ParsePolicyList(std::string_view text) {
  if (text == "all") return std::vector<SimPolicy>(std::begin(kAllSimPolicies), std::end(kAllSimPolicies));
  std::vector<SimPolicy> out;
  for (std::string_view name : Split(text)) {
    ARC_ASSIGN_OR_RETURN(SimPolicy p, ParseSimPolicy(name));
    for (SimPolicy q : out) {
      if (q == p) return Status::InvalidArgument("policy '" + std::string(name) + "' given twice");
    }
    out.push_back(p);
  }
  return out;
}

Result<std::vector<CacheSizeSpec>> ParseCacheSizeList(std::string_view text) {
  std::vector<CacheSizeSpec> out;
  for (std::string_view s : Split(text)) {
    ARC_ASSIGN_OR_RETURN(CacheSizeSpec spec, ParseOneSize(s));
    out.push_back(spec);
  }
  return out;
}

Result<uint64_t> ResolveCacheSize(const CacheSizeSpec& spec, uint64_t page_bytes,
                                  uint64_t distinct_keys) {
  if (spec.pages != 0) return spec.pages;
  if (spec.bytes != 0) {
    if (spec.bytes < page_bytes) return Status::InvalidArgument("cache size is less than one page");
    return spec.bytes / page_bytes;
  }
  const auto pages = static_cast<uint64_t>(std::floor(spec.percent_of_distinct / 100.0 *
                                                      static_cast<double>(distinct_keys)));
  if (pages == 0) return Status::InvalidArgument("cache size: the percentage is less than one page");
  return pages;
}

Result<uint64_t> CountDistinctKeys(const std::string& path, const TraceOptions& trace) {
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path, trace));
  std::unordered_set<uint64_t> keys;
  std::array<KeyRun, 4096> runs;
  for (;;) {
    ARC_ASSIGN_OR_RETURN(size_t n, reader->Read(runs));
    if (n == 0) return static_cast<uint64_t>(keys.size());
    for (size_t i = 0; i < n; i++) {
      for (uint64_t k = 0; k < runs[i].count; k++) keys.insert(runs[i].first + k);
    }
  }
}

Status SimTableOptions::Validate() const {
  if (policies.empty()) return Status::InvalidArgument("sim: no policy given");
  if (cache_pages.empty()) return Status::InvalidArgument("sim: no cache size given");
  SimOptions o = base;
  for (uint64_t pages : cache_pages) {
    o.cache_pages = pages;
    ARC_RETURN_IF_ERROR(o.Validate());
  }
  return Status::Ok();
}

Result<std::vector<SimCell>> RunSimTable(const SimTableOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  std::vector<SimCell> cells;
  for (uint64_t pages : options.cache_pages) {
    for (SimPolicy policy : options.policies) {
      SimOptions o = options.base;
      o.policy = policy;
      o.cache_pages = pages;
      ARC_ASSIGN_OR_RETURN(SimResult r, RunSim(o));
      cells.push_back(SimCell{policy, pages, std::move(r)});
    }
  }
  return cells;
}

std::string FormatSimTable(std::string_view trace, const SimTableOptions& options,
                           const std::vector<SimCell>& cells) {
  std::string out = "trace " + std::string(trace);
  char buf[128];
  if (!cells.empty()) {
    std::snprintf(buf, sizeof(buf), ", %" PRIu64 " requests", cells.front().result.requests);
    out += buf;
  }
  out += "; hit ratio in percent\n";
  std::snprintf(buf, sizeof(buf), "%12s", "cache_pages");
  out += buf;
  for (SimPolicy p : options.policies) {
    std::snprintf(buf, sizeof(buf), " %9s", std::string(SimPolicyName(p)).c_str());
    out += buf;
  }
  out += "\n";
  for (size_t i = 0; i < cells.size(); i++) {
    if (i % options.policies.size() == 0) {
      std::snprintf(buf, sizeof(buf), "%12" PRIu64, cells[i].cache_pages);
      out += buf;
    }
    std::snprintf(buf, sizeof(buf), " %9.2f", 100.0 * cells[i].result.hit_ratio());
    out += buf;
    if (i % options.policies.size() == options.policies.size() - 1) out += "\n";
  }
  return out;
}

std::string FormatSimCurveJson(std::string_view trace, const SimTableOptions& options,
                               const std::vector<SimCell>& cells) {
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  for (const SimCell& c : cells) {
    curve.push_back({{"policy", std::string(SimPolicyName(c.policy))},
                     {"cache_pages", c.cache_pages},
                     {"requests", c.result.requests},
                     {"hits", c.result.hits},
                     {"ratio", c.result.hit_ratio()}});
  }
  nlohmann::ordered_json doc = {{"trace", std::string(trace)},
                                {"page_bytes", options.base.page_bytes},
                                {"curve", std::move(curve)}};
  // Invalid UTF-8 in a trace's path is replaced, not an exception.
  return doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace arcstore::sim
