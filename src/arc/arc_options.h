// ArcOptions: every tunable of the engine's ARC, with its default, in one
// place. Validate() names the first bad field.
//
// The defaults are section 3 of ARCHITECTURE.md: c_max = 50% of the memory
// limit the monitor sees, c_min = max(c_max / 32, 64 MiB), growth held off
// 5 s after any pressure, shrink steps of min(c, size) / 32, ovf = max(the
// largest record, c / 256), waiters' targets of 2 x their request. The
// policy refinements follow ZFS (ARC_MINTIME, arc_p_min_shift, multilists).
//
// Thread-safety: a value.
#pragma once

#include <cstdint>

#include "arc/arc_types.h"
#include "arc/buffer_allocator.h"
#include "arc/duet.h"
#include "arcstore/status.h"

namespace arcstore::arc {

// Who evicts. kThread is the engine's; the others make tests deterministic.
enum class EvictorMode : uint8_t {
  kThread,  // a background thread, woken by SOME/SEVERE overflow and pressure
  kInline,  // no thread: a thread that must wait (SEVERE) runs the passes itself
  kManual,  // no thread: waiters wait until someone calls RunEvictionPass()
};

struct ArcOptions {
  // ---- Target c -------------------------------------------------------------
  uint64_t c_max_bytes = 0;        // 0: c_max_percent of the monitor's limit
  uint32_t c_max_percent = 50;
  uint64_t c_min_bytes = 0;        // 0: max(c_max / 32, 64 MiB), at most c_max
  uint64_t initial_c_bytes = 0;    // 0: c_max
  uint64_t grow_holdoff_ns = 5'000'000'000;  // no growth this long after pressure
  uint32_t shrink_shift = 5;       // a pressure step is base >> shift (arc.cc, TARGET c)
  // Memory counts as free for growth when the monitor reports no pressure and
  // at least limit >> free_shift available.
  uint32_t free_shift = 6;
  uint64_t monitor_interval_ns = 1'000'000'000;  // Tick() period; 0 = never (tests)

  // ---- Eviction and overflow ---------------------------------------------------
  uint32_t overflow_shift = 8;     // ovf = max(largest record, c >> shift)
  uint64_t initial_largest_bytes = 128 * 1024;  // the largest record before any is seen
  uint32_t eviction_pct = 200;     // a waiter waits for this % of its request to be freed
  uint32_t evict_batch = 64;       // buffers evicted per policy-lock hold
  // When eviction is stuck (every buffer held, as while a txg syncs with the
  // dirty limit reached), an allocation waits up to this long for a buffer
  // to be released before it passes c + 1.5 ovf (counted in reserve_forced);
  // 0 = pass at once. Only with the evictor thread; at most 10 s. A txg
  // sync that releases them took up to 147 ms on a loaded 2-core machine.
  uint64_t stuck_wait_ns = 1'000'000'000;
  EvictorMode evictor = EvictorMode::kThread;

  // ---- Policy ---------------------------------------------------------------
  // Who chooses victims: ARC, or Duet (cache_policy.h; docs/cache-policies.md
  // says when each wins).
  PolicyKind policy = PolicyKind::kArc;
  // Duet's tunables (duet.h); cache_pages is ignored (the engine's shadows
  // follow c). Tests may fix the leader.
  DuetOptions duet;
  // Refinements (sim mode has them all off).
  uint64_t min_residence_ns = 62'000'000;  // ZFS ARC_MINTIME: MRU hits promote after this
  uint32_t p_min_shift = 4;        // p in [c >> 4, c - (c >> 4)]; 0 = [0, c]
  uint32_t list_sublists = 1;      // ZFS multilist sublists per state, <= 256

  // ---- Structure ------------------------------------------------------------
  // Where data buffers come from: records of 64 KiB and more are mapped and
  // unmapped by the ARC itself, with a cache of freed ones (2 MiB, or the
  // room below c when that is more; buffer_allocator.h says why).
  BufferAllocatorOptions buffers;
  // Start returns only once the pretouched reserve (buffers.pretouch_bytes)
  // is filled; with false it fills in the background.
  bool wait_for_pretouch = false;
  uint32_t hash_shards = 64;       // power of two
  uint32_t history_length = 256;   // TargetChange records kept

  Status Validate() const;
};

}  // namespace arcstore::arc
