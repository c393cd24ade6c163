#include "tools/sim/sim.h"

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "arc/duet.h"
#include "tools/sim/belady.h"
#include "tools/sim/lirs.h"
#include "tools/sim/s3fifo.h"
#include "tools/sim/simulators.h"
#include "tools/sim/tinylfu.h"
#include "tools/sim/two_q.h"

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

// Loads every key of the trace (MIN needs the future), at most max_requests.
Result<std::vector<uint64_t>> LoadKeys(TraceReader& reader, uint64_t max_requests) {
  std::array<KeyRun, 4096> runs;
  std::vector<uint64_t> keys;
  for (;;) {
    ARC_ASSIGN_OR_RETURN(size_t n, reader.Read(runs));
    if (n == 0) return keys;
    for (size_t i = 0; i < n; i++) {
      if (runs[i].count > max_requests - keys.size()) {
        return Status::ResourceExhausted("min: the trace has more than " +
                                         std::to_string(max_requests) + " requests to load");
      }
      for (uint64_t k = 0; k < runs[i].count; k++) keys.push_back(runs[i].first + k);
    }
  }
}

Status RunMin(TraceReader& reader, const SimOptions& options, SimResult* result) {
  BeladyOptions bo;
  bo.max_requests = options.min_max_requests;
  ARC_RETURN_IF_ERROR(bo.Validate());
  ARC_ASSIGN_OR_RETURN(std::vector<uint64_t> keys, LoadKeys(reader, bo.max_requests));
  ARC_ASSIGN_OR_RETURN(std::vector<uint32_t> next, NextReferences(keys));
  result->requests = keys.size();
  result->hits = BeladyHits(next, options.cache_pages);
  result->misses = result->requests - result->hits;
  result->lines = reader.lines();
  result->c_bytes = options.cache_pages * options.page_bytes;
  return Status::Ok();
}

// Runs one of the page-granular reference policies.
template <typename Sim, typename Opts>
Status RunReference(TraceReader& reader, const SimOptions& options, uint64_t start_ns,
                    SimResult* result) {
  Opts o;
  o.cache_pages = options.cache_pages;
  ARC_RETURN_IF_ERROR(o.Validate());
  auto sim = std::make_unique<Sim>(o);
  ARC_RETURN_IF_ERROR(Replay(reader, *sim, options, start_ns, result));
  result->c_bytes = options.cache_pages * options.page_bytes;
  result->resident_pages = sim->resident();
  return Status::Ok();
}

constexpr std::string_view kPolicyNames[] = {"arc",    "lru",      "2q",  "lirs",
                                             "s3fifo", "wtinylfu", "min", "duet"};

}  // namespace

std::string_view SimPolicyName(SimPolicy policy) {
  return kPolicyNames[static_cast<size_t>(policy)];
}

Result<SimPolicy> ParseSimPolicy(std::string_view name) {
  for (size_t i = 0; i < std::size(kPolicyNames); i++) {
    if (name == kPolicyNames[i]) return static_cast<SimPolicy>(i);
  }
  return Status::InvalidArgument("unknown policy '" + std::string(name) +
                                 "' (arc, lru, 2q, lirs, s3fifo, wtinylfu, duet or min)");
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

namespace {
Status RunOther(TraceReader& reader, const SimOptions& options, uint64_t start_ns,
                SimResult* result) {
  switch (options.policy) {
    case SimPolicy::kTwoQ:
      return RunReference<TwoQSim, TwoQOptions>(reader, options, start_ns, result);
    case SimPolicy::kLirs:
      return RunReference<LirsSim, LirsOptions>(reader, options, start_ns, result);
    case SimPolicy::kS3Fifo:
      return RunReference<S3FifoSim, S3FifoOptions>(reader, options, start_ns, result);
    case SimPolicy::kWTinyLfu:
      return RunReference<WTinyLfuSim, WTinyLfuOptions>(reader, options, start_ns, result);
    case SimPolicy::kMin:
      return RunMin(reader, options, result);
    case SimPolicy::kDuet:
      return RunReference<arc::Duet, arc::DuetOptions>(reader, options, start_ns, result);
    default:
      return Status::InvalidArgument("sim: no such policy");
  }
}
}  // namespace

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
  } else if (options.policy == SimPolicy::kLru) {
    auto sim = std::make_unique<LruSim>(options.cache_pages);
    ARC_RETURN_IF_ERROR(Replay(*reader, *sim, options, start_ns, &result));
    result.c_bytes = options.cache_pages * options.page_bytes;
    result.resident_pages = sim->size();
  } else {
    ARC_RETURN_IF_ERROR(RunOther(*reader, options, start_ns, &result));
  }
  result.elapsed_ns = NowNs() - start_ns;
  return result;
}

}  // namespace arcstore::sim
