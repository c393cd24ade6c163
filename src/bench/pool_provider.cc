#include "bench/pool_provider.h"

#include <algorithm>
#include <vector>

#include "base/random.h"
#include "stats/registry.h"

namespace arcstore::bench {

Result<std::shared_ptr<Volume>> PoolVolumeProvider::OpenVolume(const VolumeSpec& req) {
  auto v = pool_->OpenVolume(req.name);
  if (v.ok() || v.status().code() != StatusCode::kNotFound) return v;
  if (req.size_bytes == 0) return v.status();
  VolumeOptions o = defaults_;
  o.name = req.name;
  o.size_bytes = req.size_bytes;
  ARC_RETURN_IF_ERROR(pool_->CreateVolume(o));  // the pool validates o
  created_.push_back(req.name);
  ARC_ASSIGN_OR_RETURN(std::shared_ptr<Volume> volume, pool_->OpenVolume(req.name));
  if (req.lay_out) ARC_RETURN_IF_ERROR(LayOut(*volume, req.size_bytes).WithContext(req.name));
  return volume;
}

Status LayOut(Volume& volume, uint64_t size_bytes) {
  constexpr uint64_t kChunkBytes = 1 << 20;
  std::vector<uint8_t> chunk(kChunkBytes);
  SeededRandom random(size_bytes);
  for (uint64_t at = 0; at < size_bytes; at += kChunkBytes) {
    const uint64_t n = std::min(kChunkBytes, size_bytes - at);
    random.Fill(chunk.data(), n);
    ARC_RETURN_IF_ERROR(volume.Write(at, std::span<const uint8_t>(chunk.data(), n)));
  }
  return volume.Flush();
}

StatsHook PoolStatsHook(Pool* pool) {
  return [pool]() -> Result<stats::Snapshot> { return pool->stats().TakeSnapshot(); };
}

}  // namespace arcstore::bench
