// PoolVolumeProvider: the bench's volumes from an arcstore pool (the public
// Pool API, include/arcstore/pool.h). A job's volume is opened by name and
// created with the job's size and the run's record size when missing;
// DropCaches empties the pool's cache (--cold); PoolStatsHook gives the
// runner the pool's stats for "arcstore's own view".
//
// Thread-safety: as VolumeProvider (the runner's thread only); the pool must
// outlive the provider and every volume it returned.
#pragma once

#include <string>

#include "arcstore/pool.h"
#include "bench/volume_provider.h"

namespace arcstore::bench {

class PoolVolumeProvider final : public VolumeProvider {
 public:
  PoolVolumeProvider(Pool* pool, VolumeOptions defaults) : pool_(pool), defaults_(std::move(defaults)) {}
  Result<std::shared_ptr<Volume>> OpenVolume(const VolumeSpec& req) override;
  Status DropCaches() override { return pool_->DropCaches(); }
  // Names of the volumes this provider created (a CLI may remove them).
  const std::vector<std::string>& created() const { return created_; }

 private:
  Pool* pool_;
  VolumeOptions defaults_;
  std::vector<std::string> created_;
};

StatsHook PoolStatsHook(Pool* pool);

// Writes all of `volume`'s first `size_bytes` with incompressible data in
// 1 MiB pieces and flushes: the layout a read job gets (VolumeSpec).
Status LayOut(Volume& volume, uint64_t size_bytes);

}  // namespace arcstore::bench
