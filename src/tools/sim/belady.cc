#include "tools/sim/belady.h"

#include <algorithm>
#include <unordered_map>

#include "base/check.h"

namespace arcstore::sim {

Status BeladyOptions::Validate() const {
  if (max_requests == 0 || max_requests >= kNeverAgain) {
    return Status::InvalidArgument("min: max_requests must be in [1, 2^32 - 1)");
  }
  return Status::Ok();
}

Result<std::vector<uint32_t>> NextReferences(std::span<const uint64_t> keys) {
  if (keys.size() >= kNeverAgain) return Status::ResourceExhausted("min: trace too long");
  std::vector<uint32_t> next(keys.size(), kNeverAgain);
  std::unordered_map<uint64_t, uint32_t> last;
  last.reserve(std::min<size_t>(keys.size(), size_t{1} << 24));
  for (size_t i = keys.size(); i-- > 0;) {
    auto [it, inserted] = last.try_emplace(keys[i], static_cast<uint32_t>(i));
    if (!inserted) {
      next[i] = it->second;
      it->second = static_cast<uint32_t>(i);
    }
  }
  return next;
}

uint64_t BeladyHits(std::span<const uint32_t> next, uint64_t cache_pages) {
  // A page never referenced again is due at size + i (unique, after every
  // real reference), so that it is the first to go.
  const uint64_t size = next.size();
  // cached[j]: the page due at j is in the cache.
  std::vector<bool> cached(2 * size + 1, false);
  std::vector<uint64_t> heap;  // max-heap of due indexes, stale ones included
  uint64_t in_cache = 0, hits = 0;
  for (uint64_t i = 0; i < size; i++) {
    if (cached[i]) {
      hits++;
      cached[i] = false;
      in_cache--;
    } else if (in_cache == cache_pages) {
      // Stale entries (index <= i) sort below every live one (> i).
      ARC_DCHECK(heap.front() > i);
      cached[heap.front()] = false;
      std::pop_heap(heap.begin(), heap.end());
      heap.pop_back();
      in_cache--;
    }
    const uint64_t due = next[i] == kNeverAgain ? size + i : next[i];
    cached[due] = true;
    in_cache++;
    heap.push_back(due);
    std::push_heap(heap.begin(), heap.end());
    if (heap.size() > 2 * cache_pages + 1024) {
      std::erase_if(heap, [&](uint64_t x) { return x <= i; });
      std::make_heap(heap.begin(), heap.end());
    }
  }
  return hits;
}

}  // namespace arcstore::sim
