// The memory-cap workload (test support): many clients doing mixed reads
// and writes against a pool whose ARC is capped, while a sampler watches
// the ARC's size and the process's resident set. memory_cap_test.cc says
// what it proves; the default and long tests differ only in duration.
//
// Thread-safety: RunMemoryCapWorkload runs its own threads and returns when
// they are done; call it from one thread.
#pragma once

#include <cstdint>
#include <string>

#include "arcstore/status.h"

namespace arcstore::pool {

struct MemoryCapOptions {
  uint64_t arc_max_bytes = 64ull << 20;
  uint64_t working_set_bytes = 640ull << 20;  // the volume: 10 x the ARC
  uint32_t record_size_bytes = 128 * 1024;
  uint32_t clients = 16;
  uint64_t min_request_bytes = 4096;
  uint64_t max_request_bytes = 128 * 1024;  // also the per-client in-flight payload
  uint64_t duration_ms = 10'000;
  uint64_t sample_interval_ms = 5;
  uint64_t rss_slack_bytes = 128ull << 20;  // the allowance for the rest
  // Where the pool file goes; empty = the test temp dir.
  std::string dir;
};

struct MemoryCapResult {
  Status setup;  // not OK when the pool could not be made or filled
  uint64_t requests = 0, reads = 0, writes = 0;
  uint64_t failed_requests = 0, wrong_reads = 0;
  std::string first_failure;
  uint64_t samples = 0;
  uint64_t max_arc_bytes = 0, arc_bound_bytes = 0;  // bound = c_max + 1.5 x ovf
  uint64_t peak_rss_bytes = 0, rss_bound_bytes = 0;  // peak of samples and VmHWM
  uint64_t fill_ms = 0, run_ms = 0;
};

MemoryCapResult RunMemoryCapWorkload(const MemoryCapOptions& options);
void PrintMemoryCapResult(const MemoryCapOptions& options, const MemoryCapResult& r);

}  // namespace arcstore::pool
