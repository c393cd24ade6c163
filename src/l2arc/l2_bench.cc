// Cache benchmarks on a memory device: offers written through the ring
// (Arg: block bytes), reads of cached blocks, and the index alone.
//   build/<dir>/src/l2arc/l2arc_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "io/memory_device.h"
#include "l2arc/l2_cache.h"

namespace arcstore::l2arc {
namespace {

constexpr uint64_t kDeviceBytes = 256ull << 20;

struct Rig {
  std::unique_ptr<io::MemoryDevice> device;
  std::unique_ptr<L2Cache> cache;
};

Rig NewRig() {
  Rig rig;
  rig.device = std::move(*io::MemoryDevice::Create({.size_bytes = kDeviceBytes}));
  L2CacheOptions o;
  o.write_max_bytes = 1ull << 30;
  L2CacheEnv env;
  env.device = rig.device.get();
  env.clock = DefaultClock();
  env.pool_guid = 1;
  env.name = "cache bench";
  Result<std::unique_ptr<L2Cache>> c = L2Cache::Open(o, env);
  if (!c.ok()) std::abort();
  rig.cache = std::move(*c);
  return rig;
}

// Offers of new blocks; when the writer is behind, waits for it (Flush), so
// the rate is that of copying, hashing and writing slots.
void BM_OfferThroughTheRing(benchmark::State& state) {
  Rig rig = NewRig();
  std::vector<uint8_t> data(static_cast<size_t>(state.range(0)));
  SeededRandom(1).Fill(data.data(), data.size());
  uint64_t key = 0;
  for (auto _ : state) {
    while (!rig.cache->Offer({key, 1}, data, false, false)) {
      if (!rig.cache->Flush().ok()) std::abort();
    }
    key++;
  }
  if (!rig.cache->Flush().ok()) std::abort();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_OfferThroughTheRing)->Arg(4096)->Arg(128 << 10);

void BM_ReadHit(benchmark::State& state) {
  Rig rig = NewRig();
  constexpr uint64_t kBlocks = 16384;
  std::vector<uint8_t> data(4096);
  SeededRandom(2).Fill(data.data(), data.size());
  for (uint64_t k = 0; k < kBlocks; k++) {
    while (!rig.cache->Offer({k, 1}, data, false, false)) {
      if (!rig.cache->Flush().ok()) std::abort();
    }
  }
  if (!rig.cache->Flush().ok()) std::abort();
  SeededRandom random(3);
  std::vector<uint8_t> out(4096);
  for (auto _ : state) {
    Status s = rig.cache->Read({random.Uniform(kBlocks), 1}, out);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 4096);
}
BENCHMARK(BM_ReadHit);

// Insert and find in a full index, erasing a slot's worth as the ring does.
void BM_IndexInsertFind(benchmark::State& state) {
  constexpr uint32_t kSlots = 1024, kPerSlot = 256;
  L2Index index(kSlots, uint64_t{kSlots} * kPerSlot);
  uint64_t key = 0;
  uint32_t slot = 0, in_slot = 0;
  for (auto _ : state) {
    if (in_slot == kPerSlot) {
      in_slot = 0;
      slot = (slot + 1) % kSlots;
      uint64_t bytes = 0;
      index.EraseSlot(slot, &bytes);
    }
    index.Insert({key, 1}, {slot, in_slot * 4096, 4096, key});
    benchmark::DoNotOptimize(index.Find({key / 2, 1}));
    key++;
    in_slot++;
  }
}
BENCHMARK(BM_IndexInsertFind);

}  // namespace
}  // namespace arcstore::l2arc
