// What a file or block device already holds, before arcstore writes over it.
//
// `pool create` and every command that replaces an existing file ask here
// first, so that nothing is formatted or truncated while it carries data
// someone owns:
//
//   FindSignature(fd)
//     front label header (offset 0) or back header decodes  -> kArcstorePool
//     the label magic at either place, header damaged         -> kArcstorePool
//     libblkid: a filesystem, RAID or volume-manager superblock,
//       a partition table (dos, gpt, ...)                      -> kOther
//     several of those at once (blkid calls it ambiguous)      -> kOther
//     nothing                                                  -> nullopt
//
// The probe only reads (pread on the caller's descriptor; it neither moves
// the file offset nor changes the file). It reads at most two label headers
// and what libblkid reads (its superblock and partition-table offsets).
//
// Thread-safety: stateless; concurrent calls on different descriptors are
// safe (each libblkid probe is its own object).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"

namespace arcstore::format {

struct Signature {
  enum class Kind { kArcstorePool, kOther };
  Kind kind = Kind::kOther;
  // For people: "arcstore pool 'tank' (guid 0x...)", "ext4 filesystem",
  // "gpt partition table", "a damaged arcstore label".
  std::string description;
};

// Looks at what `fd` (open for reading; a regular file or a block device of
// `size_bytes`) holds. `name` labels errors. IOError when a read fails.
Result<std::optional<Signature>> FindSignature(int fd, uint64_t size_bytes, const std::string& name);

}  // namespace arcstore::format
