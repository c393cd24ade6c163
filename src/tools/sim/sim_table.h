// The comparison table of `arcstore sim`: parsing the lists of policies and
// cache sizes, running every pair over one trace, and rendering the result
// as a text table (policy across, cache size down) or as the JSON hit-ratio
// curve; and writing an output file without clobbering one.
//
// Thread-safety: the functions share nothing; RunSimTable runs its pairs one
// after another on the calling thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "tools/sim/sim.h"

namespace arcstore::sim {

// "arc,lirs,min" -> the policies in that order; "all" -> kAllSimPolicies.
// An unknown or repeated name is an error naming it.
Result<std::vector<SimPolicy>> ParsePolicyList(std::string_view text);

// One cache size as given: pages ("1000"), bytes with a unit ("16M"), or a
// percentage of the trace's distinct keys ("10%", rounded down).
struct CacheSizeSpec {
  uint64_t pages = 0;
  uint64_t bytes = 0;
  double percent_of_distinct = 0;
};
Result<std::vector<CacheSizeSpec>> ParseCacheSizeList(std::string_view text);
// Pages for one spec; distinct_keys is used only by a percentage.
Result<uint64_t> ResolveCacheSize(const CacheSizeSpec& spec, uint64_t page_bytes,
                                  uint64_t distinct_keys);
// The number of distinct keys of a trace (one pass, a hash set of the keys).
Result<uint64_t> CountDistinctKeys(const std::string& path, const TraceOptions& trace);

struct SimCell {
  SimPolicy policy = SimPolicy::kArc;
  uint64_t cache_pages = 0;
  SimResult result;
};

struct SimTableOptions {
  SimOptions base;  // policy and cache_pages are set per cell
  std::vector<SimPolicy> policies;
  std::vector<uint64_t> cache_pages;
  Status Validate() const;
};

// Runs every (cache size, policy) pair, sizes in the outer loop.
Result<std::vector<SimCell>> RunSimTable(const SimTableOptions& options);

// Rows of cache sizes, columns of policies, hit ratios in percent to 2 places.
std::string FormatSimTable(std::string_view trace, const SimTableOptions& options,
                           const std::vector<SimCell>& cells);
// {"trace": ..., "page_bytes": ..., "curve": [{"policy", "cache_pages",
// "requests", "hits", "ratio"}, ...]}.
std::string FormatSimCurveJson(std::string_view trace, const SimTableOptions& options,
                               const std::vector<SimCell>& cells);


}  // namespace arcstore::sim
