// RunSim: replays a block trace through a cache policy and counts hits.
//
// This is `arcstore sim`'s engine, a library so that tests run it too. For
// policy "arc" it drives the engine's own ArcPolicy (simulators.h) with a
// fixed c of cache_pages pages and the paper's rules, which reproduces the
// published hit counts of the ARC paper's traces to the request
// (../shared/traces/README.md, section 5).
//
// Thread-safety: RunSim may run on several threads at once (nothing shared).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "tools/sim/trace_reader.h"

namespace arcstore::sim {

// The policies `arcstore sim` runs: the engine's ARC, the reference
// policies (two_q.h, lirs.h, s3fifo.h, tinylfu.h), arcstore's own Duet
// (arc/duet.h) and the offline optimum (belady.h, which loads the trace).
enum class SimPolicy { kArc, kLru, kTwoQ, kLirs, kS3Fifo, kWTinyLfu, kMin, kDuet };
inline constexpr SimPolicy kAllSimPolicies[] = {SimPolicy::kLru,    SimPolicy::kArc,
                                                SimPolicy::kTwoQ,   SimPolicy::kLirs,
                                                SimPolicy::kS3Fifo, SimPolicy::kWTinyLfu,
                                                SimPolicy::kDuet,   SimPolicy::kMin};
// "arc", "lru", "2q", "lirs", "s3fifo", "wtinylfu", "min", "duet".
std::string_view SimPolicyName(SimPolicy policy);
Result<SimPolicy> ParseSimPolicy(std::string_view name);

struct SimProgress {
  uint64_t requests = 0;
  uint64_t hits = 0;
  uint64_t file_offset = 0;  // compressed bytes read so far
  uint64_t file_bytes = 0;
  uint64_t elapsed_ns = 0;
};

struct SimOptions {
  std::string trace_path;
  SimPolicy policy = SimPolicy::kArc;
  uint64_t cache_pages = 0;
  // Bytes per page: the size of every simulated buffer (ARC works in bytes)
  // and, for CSV traces, the size requests are split by.
  uint64_t page_bytes = 512;
  TraceOptions trace;  // trace.page_bytes is set from page_bytes
  // Called about every progress_every_requests requests, and once at the end.
  std::function<void(const SimProgress&)> progress;
  uint64_t progress_every_requests = uint64_t{1} << 22;
  // MIN only: the most requests it loads (12 bytes each).
  uint64_t min_max_requests = uint64_t{256} << 20;

  Status Validate() const;
};

struct SimResult {
  std::string trace_format;   // "lis", "lirs", "csv"
  std::string encoding;       // "zstd", "gzip", "plain"
  uint64_t requests = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t lines = 0;
  // ARC only (zero for LRU): the final p and the final sizes, in bytes.
  double p_bytes = 0;
  uint64_t c_bytes = 0;
  uint64_t mru_bytes = 0;
  uint64_t mfu_bytes = 0;
  uint64_t mru_ghost_bytes = 0;
  uint64_t mfu_ghost_bytes = 0;
  uint64_t resident_pages = 0;  // LRU: pages cached at the end
  uint64_t elapsed_ns = 0;      // opening the trace to the last request

  double hit_ratio() const { return requests == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(requests); }
  uint64_t requests_per_sec() const;
};

Result<SimResult> RunSim(const SimOptions& options);

}  // namespace arcstore::sim
