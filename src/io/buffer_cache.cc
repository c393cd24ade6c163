#include "io/buffer_cache.h"

#include <utility>

namespace arcstore::io {

BufferCache::BufferCache(size_t alignment, size_t max_buffers, size_t max_buffer_bytes)
    : alignment_(alignment), max_buffers_(max_buffers), max_buffer_bytes_(max_buffer_bytes) {}

AlignedBuffer BufferCache::Take(size_t bytes, bool* made) {
  if (made != nullptr) *made = false;
  {
    MutexLock l(&mu_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->size() >= bytes && (best == kept_.end() || it->size() < best->size())) best = it;
    }
    if (best != kept_.end()) {
      AlignedBuffer b = std::move(*best);
      kept_.erase(best);
      return b;
    }
  }
  made_.fetch_add(1, std::memory_order_relaxed);
  if (made != nullptr) *made = true;
  return AlignedBuffer(bytes, alignment_);
}

void BufferCache::Give(AlignedBuffer buffer) {
  if (buffer.empty() || buffer.size() > max_buffer_bytes_ || buffer.alignment() < alignment_) {
    return;
  }
  MutexLock l(&mu_);
  if (kept_.size() < max_buffers_) {
    kept_.push_back(std::move(buffer));
    return;
  }
  // Full: it replaces the smallest kept buffer if it is larger (freed
  // outside the lock either way, as `buffer` leaves scope).
  auto smallest = kept_.begin();
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->size() < smallest->size()) smallest = it;
  }
  if (smallest != kept_.end() && smallest->size() < buffer.size()) std::swap(*smallest, buffer);
}

size_t BufferCache::kept() {
  MutexLock l(&mu_);
  return kept_.size();
}

}  // namespace arcstore::io
