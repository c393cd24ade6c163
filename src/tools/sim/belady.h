// Belady's MIN: the offline optimum of demand paging, the ceiling a policy's
// hit ratio is read against.
//
// MIN needs the future, so the whole trace is loaded first: 8 bytes a
// request for the key and 4 for the index of its next reference (12 bytes a
// request: P12's 13.2 M requests take 160 MB), plus a hash map of the
// distinct keys while the next references are computed. Loading stops with
// ResourceExhausted beyond BeladyOptions::max_requests.
//
// Demand paging, as the online policies are: every missed page is cached.
// The replay keeps, for every cached page, the index of its next reference
// in a max-heap; a miss that finds the cache full evicts the cached page
// referenced furthest in the future (a page never referenced again first).
// Entries of pages that were hit become stale (their index is in the past)
// and are dropped when the heap grows past 2c + 1024 entries. Memory during
// the replay: a bit per request twice and the heap.
//
// Thread-safety: none; the functions share nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"

namespace arcstore::sim {

inline constexpr uint32_t kNeverAgain = UINT32_MAX;

struct BeladyOptions {
  uint64_t max_requests = uint64_t{256} << 20;  // 3 GiB of arrays
  Status Validate() const;
};

// next[i] = the index of the next reference to keys[i], or kNeverAgain.
Result<std::vector<uint32_t>> NextReferences(std::span<const uint64_t> keys);

// Hits of MIN with a cache of cache_pages pages over keys (next from NextReferences).
uint64_t BeladyHits(std::span<const uint32_t> next, uint64_t cache_pages);

}  // namespace arcstore::sim
