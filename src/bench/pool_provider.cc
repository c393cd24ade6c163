#include "bench/pool_provider.h"

#include "stats/registry.h"

namespace arcstore::bench {

Result<std::shared_ptr<Volume>> PoolVolumeProvider::OpenVolume(const VolumeRequest& req) {
  auto v = pool_->OpenVolume(req.name);
  if (v.ok() || v.status().code() != StatusCode::kNotFound) return v;
  if (req.size_bytes == 0) return v.status();
  VolumeOptions o = defaults_;
  o.name = req.name;
  o.size_bytes = req.size_bytes;
  ARC_RETURN_IF_ERROR(pool_->CreateVolume(o));  // the pool validates o
  created_.push_back(req.name);
  return pool_->OpenVolume(req.name);
}

StatsHook PoolStatsHook(Pool* pool) {
  return [pool]() -> Result<stats::Snapshot> { return pool->stats().TakeSnapshot(); };
}

}  // namespace arcstore::bench
