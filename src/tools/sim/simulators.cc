#include "tools/sim/simulators.h"

#include "base/check.h"

namespace arcstore::sim {

// ARC tracks at most 2c pages (T1 + T2 + B1 + B2 <= 2c), plus the one being
// inserted while the bounds are restored.
ArcSim::ArcSim(uint64_t cache_pages, uint64_t page_bytes)
    : page_bytes_(static_cast<uint32_t>(page_bytes)),
      nodes_(std::make_unique<Node[]>(2 * cache_pages + 2)),
      table_(2 * cache_pages + 2),
      policy_(arc::PolicyOptions::Paper(cache_pages * page_bytes), this) {
  ARC_CHECK_GT(cache_pages, 0u);
  ARC_CHECK(page_bytes > 0 && page_bytes <= arc::kMaxNodeBytes) << page_bytes;
  for (uint64_t i = 0; i < 2 * cache_pages + 2; i++) {
    nodes_[i].next = free_;
    free_ = &nodes_[i];
  }
}

LruSim::LruSim(uint64_t cache_pages)
    : capacity_(cache_pages), nodes_(std::make_unique<Node[]>(cache_pages)), table_(cache_pages) {
  ARC_CHECK_GT(cache_pages, 0u);
  head_.prev = head_.next = &head_;
}

}  // namespace arcstore::sim
