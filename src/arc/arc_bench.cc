// Microbenchmarks of the engine's ARC hot paths, at 1 and 2 threads:
//  - BM_HitPath: Lookup of a resident buffer + hold + release (the read
//    path of a cached record);
//  - BM_MissPath: Lookup of a new key + fill + release into a full cache,
//    with the background evictor making room (the read path of an uncached
//    record, minus the disk);
//  - BM_MissPath128K/heap and /mapped: the same with 128 KiB records, the
//    buffers from new[] (the allocator before issue 11) or mapped by the
//    ARC's BufferAllocator (the default): the cost of the allocator that
//    keeps the resident set near the ARC's size, as a ratio in one run.
// Each thread draws its own keys. Run: build/release/src/arc/arc_bench
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "arc/arc.h"
#include "base/clock.h"
#include "testing/arc_test_policy.h"
#include "testing/fake_memory_monitor.h"

namespace arcstore::arc {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kResident = 16384;  // 64 MiB of 4 KiB blocks

struct Bench {
  SystemClock clock;
  testing::FakeMemoryMonitor monitor{64 * kGiB};
  stats::Registry registry;
  std::unique_ptr<Arc> arc;
};

Bench* g_bench = nullptr;  // benchmark fixture: built by thread 0, shared by the threads

void SetUp(uint64_t c_bytes, bool prefill, uint64_t block_bytes = kBlock, bool mapped = true) {
  g_bench = new Bench();
  ArcOptions o;
  o.c_max_bytes = c_bytes;
  o.c_min_bytes = c_bytes / 2;
  o.monitor_interval_ns = 0;
  o.initial_largest_bytes = block_bytes;
  if (!mapped) o.buffers.map_min_bytes = 0;
  testing::ApplyTestArcPolicy(&o);  // ARCSTORE_TEST_ARC_POLICY=duet: the same paths under Duet
  g_bench->arc = std::move(*Arc::Create(o, ArcEnv{&g_bench->clock, &g_bench->monitor, &g_bench->registry}));
  if (!prefill) return;
  for (uint64_t b = 0; b < c_bytes / block_bytes; b++) {
    LookupResult r = g_bench->arc->Lookup(ArcKey{1, b, 0}, {.bytes = block_bytes});
    if (!r.hit()) {
      r.fill.buffer();
      r.fill.Finish();
    }
  }
}

void TearDown() {
  delete g_bench;
  g_bench = nullptr;
}

uint64_t NextRandom(uint64_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

void BM_HitPath(benchmark::State& state) {
  if (state.thread_index() == 0) SetUp(2 * kResident * kBlock, true);
  uint64_t rng = 0x9E3779B97F4A7C15ULL * (state.thread_index() + 1);
  for (auto _ : state) {
    const ArcKey key{1, NextRandom(&rng) % kResident, 0};
    LookupResult r = g_bench->arc->Lookup(key, {.bytes = kBlock});
    if (!r.hit()) {
      // Headers are charged too, so the prefill may not have kept every
      // key: fill it once, later lookups hit.
      r.fill.buffer();
      r.hold = r.fill.Finish();
    }
    benchmark::DoNotOptimize(r.hold.data().data());
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    state.counters["hits"] = static_cast<double>(g_bench->registry.TakeSnapshot().Get("arcstats", "hits"));
    TearDown();
  }
}
BENCHMARK(BM_HitPath)->Threads(1)->Threads(2)->UseRealTime();

void BM_MissPath(benchmark::State& state) {
  if (state.thread_index() == 0) SetUp(kResident * kBlock, true);
  uint64_t next = (static_cast<uint64_t>(state.thread_index()) + 2) << 40;  // keys nobody has seen
  for (auto _ : state) {
    LookupResult r = g_bench->arc->Lookup(ArcKey{1, next++, 0}, {.bytes = kBlock});
    auto buf = r.fill.buffer();
    buf[0] = 1;
    ArcHold h = r.fill.Finish();
    benchmark::DoNotOptimize(h.data().data());
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    g_bench->arc->WaitEvictorIdle();
    stats::Snapshot s = g_bench->registry.TakeSnapshot();
    state.counters["evict_passes"] = static_cast<double>(s.Get("arcstats", "evict_passes"));
    state.counters["evict_waits"] = static_cast<double>(s.Get("arcstats", "evict_waits"));
    state.counters["size_over_c_KiB"] = static_cast<double>(
        static_cast<int64_t>(g_bench->arc->size_bytes()) - static_cast<int64_t>(g_bench->arc->target_bytes())) / 1024;
    TearDown();
  }
}
BENCHMARK(BM_MissPath)->Threads(1)->Threads(2)->UseRealTime();

// Arg 0: heap buffers (new[]); 1: mapped (BufferAllocator). 64 MiB of 128
// KiB records, so every fill evicts one.
void BM_MissPath128K(benchmark::State& state) {
  constexpr uint64_t kRecord = 128 * 1024;
  if (state.thread_index() == 0) SetUp(64 * kMiB, true, kRecord, state.range(0) == 1);
  uint64_t next = (static_cast<uint64_t>(state.thread_index()) + 2) << 40;
  for (auto _ : state) {
    LookupResult r = g_bench->arc->Lookup(ArcKey{1, next++, 0}, {.bytes = kRecord});
    auto buf = r.fill.buffer();
    std::memset(buf.data(), 1, buf.size());  // a read fills every byte
    ArcHold h = r.fill.Finish();
    benchmark::DoNotOptimize(h.data().data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * kRecord);
  if (state.thread_index() == 0) {
    g_bench->arc->WaitEvictorIdle();
    stats::Snapshot s = g_bench->registry.TakeSnapshot();
    state.counters["buf_maps"] = static_cast<double>(s.Get("arcstats", "buf_maps"));
    state.counters["buf_cache_hits"] = static_cast<double>(s.Get("arcstats", "buf_cache_hits"));
    TearDown();
  }
}
BENCHMARK(BM_MissPath128K)->ArgName("mapped")->Arg(0)->Arg(1)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace arcstore::arc
