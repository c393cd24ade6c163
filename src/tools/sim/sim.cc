#include "tools/sim/sim.h"

#include <array>
#include <chrono>
#include <memory>

#include "tools/sim/simulators.h"

namespace arcstore::sim {
namespace {

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// The hot loop, instantiated once per simulator so that Access() inlines.
template <typename Sim>
Status Replay(TraceReader& reader, Sim& sim, const SimOptions& options, uint64_t start_ns,
              SimResult* result) {
  std::array<KeyRun, 4096> runs;
  uint64_t requests = 0;
  uint64_t next_progress = options.progress_every_requests;
  for (;;) {
    ARC_ASSIGN_OR_RETURN(size_t n, reader.Read(runs));
    if (n == 0) break;
    for (size_t i = 0; i < n; i++) {
      const uint64_t first = runs[i].first;
      const uint64_t count = runs[i].count;
      for (uint64_t k = 0; k < count; k++) sim.Access(first + k);
      requests += count;
    }
    if (options.progress && requests >= next_progress) {
      next_progress = requests + options.progress_every_requests;
      options.progress(SimProgress{requests, sim.hits(), reader.file_offset(),
                                   reader.file_bytes(), NowNs() - start_ns});
    }
  }
  result->requests = requests;
  result->hits = sim.hits();
  result->misses = requests - sim.hits();
  result->lines = reader.lines();
  if (options.progress) {
    options.progress(SimProgress{requests, sim.hits(), reader.file_offset(), reader.file_bytes(),
                                 NowNs() - start_ns});
  }
  return Status::Ok();
}

}  // namespace

std::string_view SimPolicyName(SimPolicy policy) {
  return policy == SimPolicy::kArc ? "arc" : "lru";
}

Result<SimPolicy> ParseSimPolicy(std::string_view name) {
  if (name == "arc") return SimPolicy::kArc;
  if (name == "lru") return SimPolicy::kLru;
  return Status::InvalidArgument("unknown policy '" + std::string(name) + "' (arc or lru)");
}

Status SimOptions::Validate() const {
  if (cache_pages == 0) return Status::InvalidArgument("cache size must be at least one page");
  if (page_bytes == 0 || page_bytes > (uint64_t{1} << 30)) {
    return Status::InvalidArgument("page size must be in [1, 1 GiB]");
  }
  if (cache_pages > (uint64_t{1} << 40) / page_bytes) {
    return Status::InvalidArgument("cache size too large to simulate");
  }
  return Status::Ok();
}

uint64_t SimResult::requests_per_sec() const {
  if (elapsed_ns == 0) return 0;
  return static_cast<uint64_t>(static_cast<double>(requests) * 1e9 /
                               static_cast<double>(elapsed_ns));
}

Result<SimResult> RunSim(const SimOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  const uint64_t start_ns = NowNs();
  TraceOptions trace = options.trace;
  trace.page_bytes = options.page_bytes;
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader,
                       TraceReader::Open(options.trace_path, trace));
  SimResult result;
  result.trace_format = std::string(TraceFormatName(reader->format()));
  result.encoding = reader->encoding();
  if (options.policy == SimPolicy::kArc) {
    auto sim = std::make_unique<ArcSim>(options.cache_pages, options.page_bytes);
    ARC_RETURN_IF_ERROR(Replay(*reader, *sim, options, start_ns, &result));
    const arc::ArcPolicy& p = sim->policy();
    result.p_bytes = p.p();
    result.c_bytes = p.c();
    result.mru_bytes = p.Size(arc::ArcState::kMru);
    result.mfu_bytes = p.Size(arc::ArcState::kMfu);
    result.mru_ghost_bytes = p.Size(arc::ArcState::kMruGhost);
    result.mfu_ghost_bytes = p.Size(arc::ArcState::kMfuGhost);
    result.resident_pages = p.Resident() / options.page_bytes;
  } else {
    auto sim = std::make_unique<LruSim>(options.cache_pages);
    ARC_RETURN_IF_ERROR(Replay(*reader, *sim, options, start_ns, &result));
    result.c_bytes = options.cache_pages * options.page_bytes;
    result.resident_pages = sim->size();
  }
  result.elapsed_ns = NowNs() - start_ns;
  return result;
}

}  // namespace arcstore::sim
