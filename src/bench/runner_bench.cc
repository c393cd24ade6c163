// The runner's overhead per I/O: a 4 KiB random-write job at QD1 on a
// memory volume (whose own cost is a map lookup and a 4 KiB copy under a
// mutex), reported as IOPS. Also the raw cost of one MemoryVolume write,
// for comparison.
#include <benchmark/benchmark.h>

#include "bench/job_file.h"
#include "bench/runner.h"
#include "bench/test_volumes.h"

namespace arcstore::bench {
namespace {

void BM_RunnerRandWrite4kQd1(benchmark::State& state) {
  auto set = ParseCommandLineJobs({"--name=bench", "--filename=v", "--size=64m", "--bs=4k",
                                   "--rw=randwrite", "--iodepth=1", "--time_based",
                                   "--runtime=200ms"},
                                  JobEnv::FromSystem());
  if (!set.ok()) {
    state.SkipWithError(set.status().ToString().c_str());
    return;
  }
  MemoryVolumeProvider provider(4096);
  double ios = 0, seconds = 0;
  for (auto _ : state) {
    RunnerOptions o;
    o.provider = &provider;
    auto r = RunJobs(*set, o);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    ios += static_cast<double>(r->jobs[0].dirs[kWrite].total_ios);
    seconds += static_cast<double>(r->jobs[0].dirs[kWrite].runtime_ms) / 1000.0;
  }
  state.counters["iops"] = ios / seconds;
}
BENCHMARK(BM_RunnerRandWrite4kQd1)->Unit(benchmark::kMillisecond)->Iterations(3);

// A volume that does nothing and completes inline: what is left is the
// runner's own cost per I/O.
class NullVolume final : public Volume {
 public:
  VolumeInfo info() const override {
    VolumeInfo i;
    i.size_bytes = 64 << 20;
    return i;
  }
  void Submit(VolumeRequest req, Completion done) override {
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

void BM_RunnerOnNullVolume(benchmark::State& state) {
  auto set = ParseCommandLineJobs({"--name=bench", "--filename=v", "--size=64m", "--bs=4k",
                                   "--rw=randwrite", "--iodepth=" + std::to_string(state.range(0)),
                                   "--time_based", "--runtime=200ms"},
                                  JobEnv::FromSystem());
  NullProvider provider;
  double ios = 0, seconds = 0;
  for (auto _ : state) {
    RunnerOptions o;
    o.provider = &provider;
    auto r = RunJobs(*set, o);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    ios += static_cast<double>(r->jobs[0].dirs[kWrite].total_ios);
    seconds += static_cast<double>(r->jobs[0].dirs[kWrite].runtime_ms) / 1000.0;
  }
  state.counters["iops"] = ios / seconds;
  state.counters["ns_per_io"] = seconds * 1e9 / ios;
}
BENCHMARK(BM_RunnerOnNullVolume)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_MemoryVolumeWrite4k(benchmark::State& state) {
  VolumeInfo info;
  info.size_bytes = 64 << 20;
  info.record_size_bytes = 4096;
  testing::MemoryVolume v(info);
  std::vector<uint8_t> buf(4096, 1);
  uint64_t i = 0;
  for (auto _ : state) {
    uint64_t off = (i++ * 2654435761u) % (16384) * 4096;
    v.SubmitWrite(off, buf, kWriteNone, [](Status s) { benchmark::DoNotOptimize(s); });
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_MemoryVolumeWrite4k);

}  // namespace
}  // namespace arcstore::bench
