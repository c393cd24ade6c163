// Cost of the stats primitives on hot paths: a sharded counter against a
// single shared atomic, and a histogram record, at 1 and 2 threads.
#include <benchmark/benchmark.h>

#include <atomic>

#include "stats/stats.h"

namespace arcstore::stats {
namespace {

Counter g_counter;              // benchmark fixtures only: shared by threads
std::atomic<uint64_t> g_atomic{0};
Histogram g_histogram;

void BM_ShardedCounterAdd(benchmark::State& state) {
  for (auto _ : state) g_counter.Add();
  benchmark::DoNotOptimize(g_counter.Value());
}
BENCHMARK(BM_ShardedCounterAdd)->Threads(1)->Threads(2);

void BM_SharedAtomicAdd(benchmark::State& state) {
  for (auto _ : state) g_atomic.fetch_add(1, std::memory_order_relaxed);
}
BENCHMARK(BM_SharedAtomicAdd)->Threads(1)->Threads(2);

void BM_HistogramRecord(benchmark::State& state) {
  uint64_t v = 1;
  for (auto _ : state) {
    g_histogram.Record(v);
    v = v * 3 + 1;
  }
}
BENCHMARK(BM_HistogramRecord)->Threads(1)->Threads(2);

}  // namespace
}  // namespace arcstore::stats
