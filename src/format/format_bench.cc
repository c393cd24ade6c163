// Format benchmarks: compression of a 128 KiB record (lz4, zstd; one-off
// calls and a kept Compressor) and its decompression, an indirect block of
// 1024 pointers encoded and decoded, and the block checksum (Xxh3_128)
// against libxxhash's plain entry point, the baseline built for the oldest
// x86-64 (same hash, no AVX).
//   build/<dir>/src/format/format_bench
#include <benchmark/benchmark.h>
#include <xxhash.h>

#include "base/checksum.h"
#include "base/random.h"
#include "format/compression.h"
#include "format/indirect_block.h"
#include "format/test_samples.h"

namespace arcstore::format {
namespace {

// Half random bytes, half repeated text: compresses to roughly 55%.
std::vector<uint8_t> Record() {
  std::vector<uint8_t> v(128 * 1024);
  SeededRandom random(7);
  for (size_t i = 0; i < v.size(); i += 64) {
    if ((i / 64) % 2 == 0) {
      random.Fill(&v[i], 64);
    } else {
      for (size_t j = 0; j < 64; ++j) v[i + j] = static_cast<uint8_t>("block storage "[j % 14]);
    }
  }
  return v;
}

// Arg 0: the algorithm; arg 1: 1 = one Compressor for every record (a
// txg's writer), 0 = a one-off call per record.
void BM_Compress(benchmark::State& state) {
  Compression algo = static_cast<Compression>(state.range(0));
  const bool kept = state.range(1) != 0;
  std::vector<uint8_t> in = Record(), out(in.size());
  Compressor compressor;
  uint64_t physical = 0;
  for (auto _ : state) {
    auto c = kept ? compressor.CompressBlock(algo, in, out) : CompressBlock(algo, in, out);
    physical = c->physical_bytes;
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations() * in.size()));
  state.SetLabel(std::string(CompressionName(algo)) + (kept ? " kept" : " one-off") + " ratio " +
                 std::to_string(double(physical) / double(in.size())));
}
BENCHMARK(BM_Compress)->ArgsProduct({{1, 2}, {0, 1}});

void BM_Decompress(benchmark::State& state) {
  Compression algo = static_cast<Compression>(state.range(0));
  std::vector<uint8_t> in = Record(), packed(in.size()), out(in.size());
  auto c = CompressBlock(algo, in, packed);
  std::span<const uint8_t> physical(packed.data(), c->physical_bytes);
  for (auto _ : state) {
    Status s = DecompressBlock(c->used, physical, out);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(int64_t(state.iterations() * in.size()));
  state.SetLabel(std::string(CompressionName(algo)));
}
BENCHMARK(BM_Decompress)->Arg(1)->Arg(2);

void BM_IndirectBlock1024(benchmark::State& state) {
  IndirectBlock b{.level = 1, .indirect_shift = 10, .birth_txg = 100, .volume_guid = 1};
  for (uint64_t i = 0; i < 1024; ++i) b.pointers.push_back(samples::DataPointer(50, i));
  for (auto _ : state) {
    auto bytes = EncodeIndirectBlock(b);
    auto back = DecodeIndirectBlock(*bytes);
    benchmark::DoNotOptimize(back);
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * 1024);
}
BENCHMARK(BM_IndirectBlock1024);

std::vector<uint8_t> RandomBytes(size_t n) {
  std::vector<uint8_t> v(n);
  SeededRandom random(11);
  random.Fill(v.data(), v.size());
  return v;
}

void BM_Checksum128(benchmark::State& state) {
  const std::vector<uint8_t> in = RandomBytes(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(Xxh3_128(in.data(), in.size()));
  state.SetBytesProcessed(int64_t(state.iterations() * in.size()));
}
BENCHMARK(BM_Checksum128)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);

void BM_Checksum128Baseline(benchmark::State& state) {
  const std::vector<uint8_t> in = RandomBytes(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(XXH3_128bits(in.data(), in.size()));
  state.SetBytesProcessed(int64_t(state.iterations() * in.size()));
}
BENCHMARK(BM_Checksum128Baseline)->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);

}  // namespace
}  // namespace arcstore::format
