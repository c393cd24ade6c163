// Device benchmarks: 4 KiB random writes at queue depth 1 (psync) and 1..32
// (io_uring), 1 MiB sequential writes, on a file written once beforehand in
// $ARCSTORE_BENCH_DIR (default /tmp), O_DIRECT when the file system allows.
//   build/<dir>/src/io/io_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "base/random.h"
#include "io/aligned_buffer.h"
#include "io/file_device.h"
#include "io/memory_device.h"
#include "io/uring_device.h"
#include "testing/io/recording_device.h"

namespace arcstore::io {
namespace {

constexpr uint64_t kFileBytes = 256ull << 20;

// The benchmark file, created (written once) on first use.
const std::string& BenchFile() {
  static const std::string path = [] {
    const char* dir = std::getenv("ARCSTORE_BENCH_DIR");
    std::string p =
        std::string(dir ? dir : "/tmp") + "/arcstore_io_bench." + std::to_string(::getpid());
    Status s = CreateFileForDevice(p, {.size_bytes = kFileBytes});
    if (!s.ok()) std::abort();
    std::atexit([] { ::unlink(BenchFile().c_str()); });
    return p;
  }();
  return path;
}

void BM_MemoryWrite4K(benchmark::State& state) {
  auto d = std::move(*MemoryDevice::Create({.size_bytes = 64 << 20}));
  std::vector<uint8_t> buf(4096, 1);
  SeededRandom random(1);
  for (auto _ : state) {
    Status s = WriteSync(*d, random.Uniform((64 << 20) / 4096) * 4096, buf);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 4096);
}
BENCHMARK(BM_MemoryWrite4K);

// A 128 KiB I/O buffer taken, filled (as a read or a compressor fills it)
// and dropped. Arg 1: AlignedBuffer, a page mapping of its own since issue
// 11 (base/page_memory.h); arg 0: what it was before, aligned_alloc +
// zeroing. The ratio is the cost of keeping freed buffers out of the
// resident set.
void BM_IoBuffer128K(benchmark::State& state) {
  constexpr size_t kBytes = 128 * 1024;
  for (auto _ : state) {
    if (state.range(0) == 1) {
      AlignedBuffer b(kBytes, 4096);
      std::memset(b.data(), 1, kBytes);
      benchmark::DoNotOptimize(b.data());
    } else {
      auto* p = static_cast<uint8_t*>(std::aligned_alloc(4096, kBytes));
      std::memset(p, 0, kBytes);
      std::memset(p, 1, kBytes);
      benchmark::DoNotOptimize(p);
      std::free(p);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}
BENCHMARK(BM_IoBuffer128K)->ArgName("mapped")->Arg(0)->Arg(1);

void BM_PsyncRandomWrite4K(benchmark::State& state) {
  auto d = std::move(*FileDevice::Open(BenchFile(), {}));
  AlignedBuffer buf(4096, 4096);
  SeededRandom random(2);
  for (auto _ : state) {
    Status s = WriteSync(*d, random.Uniform(kFileBytes / 4096) * 4096, buf.span());
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 4096);
  state.SetLabel(d->direct() ? "O_DIRECT" : "buffered");
}
BENCHMARK(BM_PsyncRandomWrite4K)->UseRealTime();

void BM_PsyncSequentialWrite1M(benchmark::State& state) {
  auto d = std::move(*FileDevice::Open(BenchFile(), {}));
  AlignedBuffer buf(1 << 20, 4096);
  uint64_t at = 0;
  for (auto _ : state) {
    Status s = WriteSync(*d, at, buf.span());
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    at = (at + (1 << 20)) % kFileBytes;
  }
  state.SetBytesProcessed(int64_t(state.iterations()) << 20);
}
BENCHMARK(BM_PsyncSequentialWrite1M)->UseRealTime();

// Keeps `depth` writes of `bytes` in flight; each iteration is one completion.
void UringWrites(benchmark::State& state, uint64_t bytes, bool random_offsets) {
  uint32_t depth = static_cast<uint32_t>(state.range(0));
  auto opened = UringDevice::Open(BenchFile(), {.queue_depth = depth});
  if (!opened.ok()) return state.SkipWithError(opened.status().ToString().c_str());
  UringDevice& d = **opened;
  AlignedBuffer buf(bytes, 4096);
  SeededRandom random(3);
  Mutex mu;
  CondVar cv;
  uint64_t completed = 0, submitted = 0, seq = 0;
  auto submit_one = [&](auto& self) -> void {
    uint64_t at = random_offsets ? random.Uniform(kFileBytes / bytes) * bytes : seq;
    seq = (seq + bytes) % kFileBytes;
    ++submitted;
    d.Submit({.op = IoOp::kWrite,
              .offset = at,
              .iov = {{buf.data(), bytes}},
              .done = [&](const Status&) {
                MutexLock lock(&mu);
                ++completed;
                cv.Signal();
              }});
  };
  for (uint32_t i = 0; i < depth; ++i) submit_one(submit_one);
  for (auto _ : state) {
    {
      MutexLock lock(&mu);
      while (completed == 0) cv.Wait(&mu);
      --completed;
    }
    submit_one(submit_one);
  }
  MutexLock lock(&mu);
  while (completed < depth) cv.Wait(&mu);
  state.SetBytesProcessed(int64_t(state.iterations() * bytes));
  state.SetLabel(d.direct() ? "O_DIRECT" : "buffered");
}

void BM_UringRandomWrite4K(benchmark::State& state) { UringWrites(state, 4096, true); }
BENCHMARK(BM_UringRandomWrite4K)->Arg(1)->Arg(8)->Arg(32)->UseRealTime();

void BM_UringSequentialWrite1M(benchmark::State& state) { UringWrites(state, 1 << 20, false); }
BENCHMARK(BM_UringSequentialWrite1M)->Arg(1)->Arg(8)->UseRealTime();

// Crash images of a 16 MiB device after 4000 recorded 64 KiB writes with a
// flush every 20: one image per flush point, by full replay (arg 0) or by
// CrashImageBuilder (arg 1). Items = images.
void BM_CrashImages(benchmark::State& state) {
  auto mem = std::move(*MemoryDevice::Create({.size_bytes = 16 << 20}));
  auto rec = std::move(*RecordingDevice::Create(mem.get(), {}));
  SeededRandom random(4);
  std::vector<uint8_t> data(64 << 10, 7);
  for (int i = 0; i < 4000; ++i) {
    if (i % 20 == 19) (void)FlushSync(*rec).ok();
    (void)WriteSync(*rec, random.Uniform(256) * (64 << 10), data).ok();
  }
  Recording r = rec->TakeRecording();
  std::vector<uint64_t> points = r.FlushCrashPoints();
  int64_t images = 0;
  for (auto _ : state) {
    CrashImageBuilder builder(r);
    for (uint64_t t : points) {
      if (state.range(0) == 0) {
        auto image = r.BuildImage(r.StateAt(t), {});
        benchmark::DoNotOptimize(image);
      } else {
        builder.AdvanceTo(t);
        auto image = builder.Build({});
        benchmark::DoNotOptimize(image);
      }
      ++images;
    }
  }
  state.SetItemsProcessed(images);
}
BENCHMARK(BM_CrashImages)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace arcstore::io
