// The ARC's buffer allocator: see buffer_allocator.h for the model.
#include "arc/buffer_allocator.h"

#include <unistd.h>

#include <algorithm>

#include "base/check.h"
#include "base/page_memory.h"
#include "base/units.h"

namespace arcstore::arc {
namespace {

constexpr uint64_t kMaxMapMinBytes = 1ull << 30;
constexpr uint64_t kMaxCacheBytes = 1ull << 30;

}  // namespace

Status BufferAllocatorOptions::Validate() const {
  if (map_min_bytes > kMaxMapMinBytes) {
    return Status::InvalidArgument("arc options: buffers.map_min_bytes must be <= 1 GiB");
  }
  if (cache_bytes > kMaxCacheBytes) {
    return Status::InvalidArgument("arc options: buffers.cache_bytes must be <= 1 GiB");
  }
  return Status::Ok();
}

BufferAllocator::BufferAllocator(const BufferAllocatorOptions& options)
    : options_(options), classes_(std::make_unique<Class[]>(kClasses)) {
  ARC_CHECK(sysconf(_SC_PAGESIZE) == static_cast<long>(kPageBytes))
      << "the ARC's buffer allocator assumes 4 KiB pages, not " << sysconf(_SC_PAGESIZE);
}

BufferAllocator::~BufferAllocator() {
  for (int i = 0; i < kClasses; i++) {
    MutexLock l(&classes_[i].mu);
    for (uint8_t* p : classes_[i].free) Release(p, kPageBytes << i);
    classes_[i].free.clear();
  }
  ARC_CHECK_EQ(mapped_bytes_.load(), 0u) << "ARC buffers outlive their allocator";
}

int BufferAllocator::ClassOf(uint64_t bytes) {
  if (bytes < kPageBytes || !IsPowerOfTwo(bytes)) return -1;
  int i = 0;
  while ((kPageBytes << i) < bytes) i++;
  return i < kClasses ? i : -1;
}

uint8_t* BufferAllocator::Map(uint64_t bytes) {
  uint8_t* p = MapPages(bytes);
  maps_.fetch_add(1, std::memory_order_relaxed);
  if (counters_.maps != nullptr) counters_.maps->Add();
  mapped_bytes_.fetch_add(PageRound(bytes), std::memory_order_relaxed);
  return p;
}

void BufferAllocator::Unmap(uint8_t* data, uint64_t bytes) {
  UnmapPages(data, bytes);
  unmaps_.fetch_add(1, std::memory_order_relaxed);
  if (counters_.unmaps != nullptr) counters_.unmaps->Add();
  mapped_bytes_.fetch_sub(PageRound(bytes), std::memory_order_relaxed);
}

bool BufferAllocator::FromHeap(uint64_t bytes) const {
  return options_.map_min_bytes == 0 || bytes < options_.map_min_bytes;
}

void BufferAllocator::Release(uint8_t* data, uint64_t bytes) {
  if (FromHeap(bytes)) {
    delete[] data;
  } else {
    Unmap(data, bytes);
  }
}

ArcBuffer BufferAllocator::Allocate(uint64_t bytes) {
  // map_min_bytes 0: the plain heap allocator of before, no cache.
  if (const int c = ClassOf(bytes); c >= 0 && options_.map_min_bytes != 0) {
    Class& cl = classes_[c];
    MutexLock l(&cl.mu);
    if (!cl.free.empty()) {
      uint8_t* p = cl.free.back();
      cl.free.pop_back();
      cached_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
      cache_hits_.fetch_add(1, std::memory_order_relaxed);
      if (counters_.cache_hits != nullptr) counters_.cache_hits->Add();
      return ArcBuffer(p, bytes, this);
    }
  }
  if (FromHeap(bytes)) return ArcBuffer(new uint8_t[bytes], bytes, this);
  return ArcBuffer(Map(bytes), bytes, this);
}

void BufferAllocator::Free(uint8_t* data, uint64_t bytes) {
  if (const int c = ClassOf(bytes); c >= 0 && options_.map_min_bytes != 0) {
    // Reserve room in the cache first, so that concurrent frees never
    // take it past cache_bytes.
    uint64_t cached = cached_bytes_.load(std::memory_order_relaxed);
    const uint64_t limit = CacheLimitBytes();
    while (cached + bytes <= limit &&
           !cached_bytes_.compare_exchange_weak(cached, cached + bytes, std::memory_order_relaxed)) {
    }
    if (cached + bytes <= limit) {
      Class& cl = classes_[c];
      MutexLock l(&cl.mu);
      cl.free.push_back(data);
      return;
    }
  }
  Release(data, bytes);
}

uint64_t BufferAllocator::CacheLimitBytes() const {
  const uint64_t room = room_ ? std::min(room_(), kMaxCacheBytes) : 0;
  return std::max(options_.cache_bytes, room);
}

void BufferAllocator::Trim() {
  // Largest classes first: the fewest system calls per byte returned.
  for (int i = kClasses - 1; i >= 0; i--) {
    const uint64_t bytes = kPageBytes << i;
    for (;;) {
      uint64_t cached = cached_bytes_.load(std::memory_order_relaxed);
      if (cached <= CacheLimitBytes()) return;
      uint8_t* p = nullptr;
      {
        MutexLock l(&classes_[i].mu);
        if (classes_[i].free.empty()) break;
        p = classes_[i].free.back();
        classes_[i].free.pop_back();
      }
      cached_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
      Release(p, bytes);
    }
  }
}

BufferAllocatorStats BufferAllocator::Stats() const {
  BufferAllocatorStats s;
  s.mapped_bytes = mapped_bytes_.load(std::memory_order_relaxed);
  s.cached_bytes = cached_bytes_.load(std::memory_order_relaxed);
  s.maps = maps_.load(std::memory_order_relaxed);
  s.unmaps = unmaps_.load(std::memory_order_relaxed);
  s.cache_hits = cache_hits_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace arcstore::arc
