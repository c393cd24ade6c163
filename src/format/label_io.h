// Reading and writing a device's labels and uberblock rings.
//
// The pool's open and commit paths and fsck use these so that no one else
// computes label offsets:
//   WriteLabels      at creation: both headers, both rings zeroed
//   RewriteLabelHeaders  a config change of a pool in use: both headers,
//                    one after the other, rings untouched (flushes its own)
//   ReadLabel        at open: both headers, checked against each other
//   WriteUberblock   at commit (step 3 of docs/format.md "Commit order"): the
//                    txg's slot in the front ring, then the back ring
//   ScanUberblocks   at open: every valid uberblock of both rings, newest first
// None of them but RewriteLabelHeaders flushes: the commit order's flushes
// are the caller's.
//
// Thread-safety: stateless functions; concurrent calls on one device are
// the caller's business (the pool serialises commits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "format/label.h"
#include "format/uberblock.h"
#include "io/device.h"

namespace arcstore::format {

// Writes the front and back headers (position set for each) and zeroes both
// uberblock rings. `header.device_size_bytes` and `allocation_unit` must match
// the device (ComputeLayout of its size).
Status WriteLabels(io::Device& device, const LabelHeader& header);

// The config key counting config changes (RewriteLabelHeaders); absent: 0.
inline constexpr std::string_view kConfigGenerationKey = "config_generation";
uint64_t ConfigGeneration(const PoolConfig& config);

// Writes the front header, flushes, writes the back header, flushes; the
// rings are not touched. `header.config` must carry a config generation
// above the device's: a crash between the two writes leaves two valid
// headers that differ only in their config, and ReadLabel takes the newer.
Status RewriteLabelHeaders(io::Device& device, const LabelHeader& header);

// Reads both headers. Returns the front one when valid (else the back one);
// when both are valid they must agree on everything but the position, or
// differ only in their config with different config generations (a config
// rewrite cut short): then the newer is returned, with a warning.
// Each damaged copy adds a line to `warnings` (may be null). Corruption
// naming both failures when neither is usable.
Result<LabelHeader> ReadLabel(io::Device& device, std::vector<std::string>* warnings);

// Writes `ub` to slot ub.slot() of the front ring and then the back ring;
// the rest of the slot is zero.
Status WriteUberblock(io::Device& device, const DeviceLayout& layout, const Uberblock& ub);

struct UberblockScan {
  // Valid uberblocks of the pool, one per txg, newest first.
  std::vector<Uberblock> valid;
  // Damaged or foreign slots: "front ring slot 5 (offset N): <reason>".
  std::vector<std::string> problems;
};

// Reads both rings. A slot is valid when it decodes, belongs to `pool_guid`
// and sits in slot txg mod 128; an all-zero slot is simply empty. When the
// two copies of a txg differ, the front one is kept and the difference is a
// problem.
Result<UberblockScan> ScanUberblocks(io::Device& device, const DeviceLayout& layout,
                                     uint64_t pool_guid);

}  // namespace arcstore::format
