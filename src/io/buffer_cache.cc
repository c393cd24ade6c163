#include "io/buffer_cache.h"

#include <cstring>
#include <utility>

namespace arcstore::io {

BufferCache::BufferCache(size_t alignment, size_t max_buffers, size_t max_buffer_bytes,
                         size_t max_kept_bytes)
    : alignment_(alignment),
      max_buffers_(max_buffers),
      max_buffer_bytes_(max_buffer_bytes),
      max_kept_bytes_(max_kept_bytes) {}

AlignedBuffer BufferCache::Take(size_t bytes, bool* made) {
  if (made != nullptr) *made = false;
  {
    MutexLock l(&mu_);
    auto best = kept_.lower_bound(bytes);  // the smallest that holds `bytes`
    if (best != kept_.end()) {
      AlignedBuffer b = std::move(best->second);
      kept_.erase(best);
      kept_bytes_ -= b.size();
      return b;
    }
  }
  made_.fetch_add(1, std::memory_order_relaxed);
  if (made != nullptr) *made = true;
  return AlignedBuffer(bytes, alignment_);
}

void BufferCache::Give(AlignedBuffer buffer) {
  if (buffer.empty() || buffer.size() > max_buffer_bytes_ || buffer.size() > max_kept_bytes_ ||
      buffer.alignment() < alignment_) {
    return;
  }
  std::vector<AlignedBuffer> freed;  // freed after the lock is let go
  MutexLock l(&mu_);
  // Full (by count or bytes): smaller kept buffers make room, smallest
  // first; the buffer is freed instead when none is smaller.
  while (kept_.size() >= max_buffers_ || kept_bytes_ + buffer.size() > max_kept_bytes_) {
    if (kept_.empty() || kept_.begin()->first >= buffer.size()) {
      freed.push_back(std::move(buffer));
      return;
    }
    kept_bytes_ -= kept_.begin()->first;
    freed.push_back(std::move(kept_.begin()->second));
    kept_.erase(kept_.begin());
  }
  kept_bytes_ += buffer.size();
  const size_t size = buffer.size();
  kept_.emplace(size, std::move(buffer));
}

size_t BufferCache::Prefill(size_t count, size_t bytes) {
  for (size_t i = 0; i < count; i++) {
    AlignedBuffer b(bytes, alignment_);
    std::memset(b.data(), 0, b.size());  // a fresh mapping reads as zeros but is not yet touched
    Give(std::move(b));
  }
  MutexLock l(&mu_);
  return kept_bytes_;
}

size_t BufferCache::kept() {
  MutexLock l(&mu_);
  return kept_.size();
}

}  // namespace arcstore::io
