// ProbeExisting: before the engine overwrites an existing file or block
// device (Pool::Create, Pool::AddCache), what it holds and whether the
// kernel holds it.
//
//   block device: an O_EXCL open, which the kernel refuses while the device
//                 is mounted or claimed by another exclusive opener -> Busy
//   either:       its size, and any signature on it (an arcstore label, a
//                 filesystem, a partition table: format/signature.h)
//
// The caller decides what a signature means (refused, or formatted anyway
// with --force) and takes the flock an open takes first, so that a pool in
// use is refused before anything is read.
//
// Thread-safety: a stateless function.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "format/signature.h"

namespace arcstore::pool {

struct DeviceProbe {
  bool block = false;
  uint64_t size_bytes = 0;
  std::optional<format::Signature> signature;
};

// `st` is the path's stat (a regular file or a block device); `who` names
// it in errors ("pool /dev/sdb", "cache device /dev/sdc").
Result<DeviceProbe> ProbeExisting(const std::string& path, const struct stat& st,
                                  const std::string& who);

}  // namespace arcstore::pool
