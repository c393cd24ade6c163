// Memory caps (label "memory"; the 2-minute run is memory_cap_long_test,
// label "long"). Not run under the sanitizers: their shadow memory and
// quarantine are not the engine's resident set.
//
// A pool whose ARC is capped at 64 MiB (c_max = c_min = 64 MiB) serves a
// volume ten times larger (640 MiB, 128 KiB records, written once) to 16
// client threads, each doing one request at a time: reads and writes of
// 4 to 128 KiB at random 4 KiB-aligned offsets. A sampler thread reads the
// ARC's size and the process's resident set every few milliseconds.
// Required (issue 11):
//   - no request fails, and every 4 KiB block read holds its own index (or
//     zeros) in its first 8 bytes;
//   - at every sample, ARC size <= c_max + 1.5 x ovf, with ovf =
//     max(largest record, c / 256) (ARCHITECTURE.md section 3);
//   - at every sample and at the end (VmHWM, the peak over the whole
//     process), RSS <= c_max + 1.5 x ovf + 16 x the per-client in-flight
//     payload (128 KiB: one request of at most 128 KiB) + 128 MiB.
//
// The cgroup test is memory_cgroup_test.cc.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "arcstore/pool.h"
#include "base/random.h"
#include "pool/pool_impl.h"
#include "testing/pool/memory_cap_workload.h"

namespace arcstore::pool {
namespace {

// One run checks everything (the fill of 640 MiB is most of its time).
TEST(MemoryCapTest, SixteenClientsAgainstACappedArcStayWithinTheBounds) {
  MemoryCapOptions o;
  o.dir = ::testing::TempDir();
  o.duration_ms = std::max<uint64_t>(2000, ScaledIterations(10'000));
  MemoryCapResult r = RunMemoryCapWorkload(o);
  PrintMemoryCapResult(o, r);
  ASSERT_TRUE(r.setup.ok()) << r.setup.ToString();
  EXPECT_EQ(r.failed_requests, 0u) << r.first_failure;
  EXPECT_EQ(r.wrong_reads, 0u) << r.first_failure;
  EXPECT_GT(r.requests, 0u);
  EXPECT_GT(r.samples, 10u);
  // Was 68.2 MiB against 64.4: allocators passed the overflow check and then
  // all added their bytes. The reservation is now one compare-and-swap
  // (Arc::TryReserve, src/arc/arc_evict.cc).
  EXPECT_LE(r.max_arc_bytes, r.arc_bound_bytes) << "ARC size above c_max + 1.5 x ovf";
  // Was 231.8 MiB against 194.4: glibc kept freed 128 KiB buffers resident
  // in its arenas. ARC records of 64 KiB and more (src/arc/buffer_allocator.h)
  // and large I/O buffers (src/io/aligned_buffer.h) are now page mappings,
  // unmapped when freed (src/base/page_memory.h).
  EXPECT_LE(r.peak_rss_bytes, r.rss_bound_bytes) << "RSS above its bound";
}

}  // namespace
}  // namespace arcstore::pool
