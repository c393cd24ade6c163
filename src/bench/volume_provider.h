// VolumeProvider: where the bench gets the volumes its jobs name.
//
// A job's `filename` (its base name) or its filename_format names a volume;
// the runner asks the provider to open it, creating it with the job's size
// when it does not exist. The engine's pools plug in here (cli/cmd_bench.cc);
// tests use in-memory volumes; FileVolumeProvider (file_volume.h) measures
// the raw disk in the same run.
//
// Thread-safety: OpenVolume may be called from the runner's thread only; the
// volumes it returns are used concurrently by the workers (the Volume
// contract). The provider keeps a volume alive as long as it wants; the
// runner holds its shared_ptr only while the job runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "arcstore/volume.h"
#include "base/result.h"
#include "stats/registry.h"

namespace arcstore::bench {

// The volume a job opens, and how (VolumeProvider::OpenVolume).
struct VolumeSpec {
  std::string name;          // the volume's name (a file's base name)
  std::string directory;     // the job's `directory`, for file providers
  uint64_t size_bytes = 0;   // size for a new volume; 0: it must exist
  bool direct = false;       // the job's direct=1
  bool invalidate = true;    // the job's invalidate: drop the OS page cache of a file
  // The job reads: a new volume is laid out first, as fio lays out a new
  // file (written whole with incompressible data), so that its reads
  // measure stored data and not holes.
  bool lay_out = false;
};

class VolumeProvider {
 public:
  virtual ~VolumeProvider() = default;
  // Opens `req.name`, creating it with `req.size_bytes` when missing. A
  // missing volume with size 0 is NotFound.
  virtual Result<std::shared_ptr<Volume>> OpenVolume(const VolumeSpec& req) = 0;
  // Called before each stonewalled batch when the run wants a cold cache
  // (--cold); providers without a cache do nothing.
  virtual Status DropCaches() { return Status::Ok(); }
};

// arcstore's own view of a job: a stats snapshot taken before and after it.
using StatsHook = std::function<Result<stats::Snapshot>()>;

}  // namespace arcstore::bench
