// CheckCacheDevice: what `arcstore fsck` says of a pool's cache device. It
// reads the label and every slot's header, and reads each valid slot's data
// to check every copy against its checksum, without changing anything. A
// cache device holds nothing the pool needs, so what it finds is a report,
// never an error of the pool: a device that is not a cache of this pool is
// formatted afresh when the pool next opens it, damaged slots are skipped
// and bad copies dropped by the rebuild and the reads.
//
// Thread-safety: a stateless function; the device must not be written
// meanwhile (fsck opens the pool read-only, and that leaves cache devices
// alone).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "io/device.h"

namespace arcstore::l2arc {

struct CacheDeviceCheck {
  bool ours = false;         // a label of this pool's cache, in this format
  std::string label_note;    // why not, when not ours
  uint64_t epoch = 0;        // the label's
  uint64_t slots = 0;        // in the ring
  uint64_t slots_written = 0;   // headers of this cache that check out
  uint64_t slots_blank = 0;     // never written (or by something else)
  uint64_t slots_damaged = 0;   // slot magic, but a bad checksum or field
  uint64_t slots_foreign = 0;   // a valid header of another cache or pool
  uint64_t slots_unreadable = 0;
  uint64_t blocks = 0;          // entries of the written slots
  uint64_t block_bytes = 0;
  uint64_t bad_copies = 0;      // entries whose bytes fail their checksum
};

// Checks `device` as a cache device of the pool `pool_guid`. An error only
// when the device cannot be read at all (its label's block).
Result<CacheDeviceCheck> CheckCacheDevice(io::Device& device, uint64_t pool_guid);

// "label ok (epoch 3); 37 of 120 slots written (2 damaged, 0 of another
// cache, 81 blank), 2048 blocks (256.0 MiB), 0 bad copies", or why the
// label is not this pool's.
std::string DescribeCheck(const CacheDeviceCheck& c);

}  // namespace arcstore::l2arc
