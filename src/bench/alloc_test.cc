// The runner allocates nothing per I/O: a job of 4x the I/Os makes exactly
// as many allocations as the small one (all of them are set-up). Its own
// binary, because it counts every operator new of the process.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "bench/job_file.h"
#include "bench/runner.h"
#include "bench/verify.h"

namespace {
std::atomic<uint64_t> g_allocations{0};  // test-only instrumentation
}  // namespace

void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace arcstore::bench {
namespace {

// Completes every request inline and does nothing: only the runner allocates.
class NullVolume final : public Volume {
 public:
  VolumeInfo info() const override {
    VolumeInfo i;
    i.size_bytes = 64 << 20;
    return i;
  }
  // Reads return a valid crc32c verify block for their offset, so that a
  // verifying job passes without the volume storing anything.
  void Submit(VolumeRequest req, Completion done) override {
    if (req.op == VolumeOp::kRead) FillVerifyBlock(VerifyKind::kCrc32c, req.offset, 1, req.out);
    if (req.op == VolumeOp::kBlockStatus) req.extents->clear();
    done(Status::Ok());
  }
};

class NullProvider final : public VolumeProvider {
 public:
  Result<std::shared_ptr<Volume>> OpenVolume(const VolumeSpec&) override {
    return std::shared_ptr<Volume>(std::make_shared<NullVolume>());
  }
};

uint64_t AllocationsFor(const std::string& size, const std::string& extra) {
  auto set = ParseCommandLineJobs({"--name=a", "--filename=v", "--size=" + size, "--bs=4k",
                                   "--rw=randrw", "--iodepth=4", extra},
                                  JobEnv::FromSystem());
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  NullProvider provider;
  RunnerOptions o;
  o.provider = &provider;
  o.sample_window_ns = 1'000'000;
  uint64_t before = g_allocations.load();
  auto r = RunJobs(*set, o);
  uint64_t after = g_allocations.load();
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r->jobs[0].error, 0) << r->jobs[0].error_text;
  EXPECT_EQ(r->jobs[0].dirs[kRead].total_ios + r->jobs[0].dirs[kWrite].total_ios,
            (size == "4m" ? 1024u : 256u));
  return after - before;
}

TEST(Allocations, NonePerIo) {
  for (const char* extra : {"--verify=0", "--verify=crc32c", "--fsync=8", "--norandommap"}) {
    uint64_t small = AllocationsFor("1m", extra);
    uint64_t big = AllocationsFor("4m", extra);
    EXPECT_EQ(small, big) << extra << ": 768 more I/Os made " << (big - small)
                          << " more allocations";
  }
}

}  // namespace
}  // namespace arcstore::bench
