// PayloadCache: reuses the data buffers (READ results, WRITE payloads) of
// one NBD connection's requests.
//
// A 4 KiB request at queue depth 32 otherwise allocates and frees a 4 KiB
// buffer per request; glibc serves that size outside its thread cache and
// first consolidates every small chunk freed since (malloc_consolidate,
// unlink_chunk: about a fifth of a connection thread's time in 4 KiB
// random reads of cached data). A large one (a 1 MiB READ) is worse: it is
// taken on the connection's thread and given back on an engine thread, and
// glibc hands the freed memory back to the kernel (a heap trimmed with
// MADV_DONTNEED, or a mapping unmapped), so every request's buffer is new
// memory, faulted in page by page while the read copies into it. On a
// virtual machine each such fault is a trip to the hypervisor, and 1 MiB
// reads of cached data then spend most of their server time in them.
//
// Buffers are rounded up to a power of two (at least kMinBytes) and kept on
// a free list per size when given back: small ones (up to kSmallMaxBytes)
// up to `max_cached_bytes` in all, large ones (up to kMaxBytes) up to
// `max_cached_large_bytes` in all, so that a connection keeps about one
// queue's worth of its large buffers warm. Past a cap, and above kMaxBytes,
// a buffer is simply freed.
//
// Not io::BufferCache (the block reader's, the intent log's and the txg
// writer's): those hand out aligned AlignedBuffers (zero-filled when made),
// which are page mappings from 64 KiB up; payloads need neither alignment
// nor zeroing.
//
// Thread-safety: Take and Give from any thread (a request's buffer is
// given back by whichever thread completes it). Buffers are plain new[]
// arrays: one dropped instead of given back is simply freed.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/thread_annotations.h"

namespace arcstore::nbd {

class PayloadCache {
 public:
  static constexpr size_t kMinBytes = 4096;
  static constexpr size_t kSmallMaxBytes = 64 * 1024;
  static constexpr size_t kMaxBytes = 32 * 1024 * 1024;  // the largest NBD payload

  PayloadCache(size_t max_cached_bytes, size_t max_cached_large_bytes)
      : max_cached_bytes_(max_cached_bytes), max_cached_large_bytes_(max_cached_large_bytes) {}

  // A buffer of at least `bytes`.
  std::unique_ptr<uint8_t[]> Take(size_t bytes) {
    if (bytes > kMaxBytes) return std::unique_ptr<uint8_t[]>(new uint8_t[bytes]);
    const size_t c = ClassOf(bytes);
    {
      MutexLock l(&mu_);
      auto& list = free_[c];
      if (!list.empty()) {
        std::unique_ptr<uint8_t[]> b = std::move(list.back());
        list.pop_back();
        CachedOf(c) -= kMinBytes << c;
        return b;
      }
    }
    return std::unique_ptr<uint8_t[]>(new uint8_t[kMinBytes << c]);
  }

  // Gives back a buffer that Take(bytes) returned.
  void Give(std::unique_ptr<uint8_t[]> buffer, size_t bytes) {
    if (buffer == nullptr || bytes > kMaxBytes) return;
    const size_t c = ClassOf(bytes);
    MutexLock l(&mu_);
    size_t& cached = CachedOf(c);
    const size_t cap = IsLarge(c) ? max_cached_large_bytes_ : max_cached_bytes_;
    if (cached + (kMinBytes << c) > cap) return;  // freed
    cached += kMinBytes << c;
    free_[c].push_back(std::move(buffer));
  }

  // Bytes kept: small buffers, large ones.
  size_t cached_bytes() {
    MutexLock l(&mu_);
    return cached_bytes_;
  }
  size_t cached_large_bytes() {
    MutexLock l(&mu_);
    return cached_large_bytes_;
  }

 private:
  static constexpr size_t kClasses = 14;  // 4 KiB, 8 KiB, ... 32 MiB
  static_assert(kMaxBytes == kMinBytes << (kClasses - 1));
  static size_t ClassOf(size_t bytes) {
    const size_t rounded = std::bit_ceil(bytes < kMinBytes ? kMinBytes : bytes);
    return static_cast<size_t>(std::countr_zero(rounded / kMinBytes));
  }
  static bool IsLarge(size_t c) { return (kMinBytes << c) > kSmallMaxBytes; }
  size_t& CachedOf(size_t c) ARC_REQUIRES(mu_) {
    return IsLarge(c) ? cached_large_bytes_ : cached_bytes_;
  }

  const size_t max_cached_bytes_;
  const size_t max_cached_large_bytes_;
  Mutex mu_;
  std::array<std::vector<std::unique_ptr<uint8_t[]>>, kClasses> free_ ARC_GUARDED_BY(mu_);
  size_t cached_bytes_ ARC_GUARDED_BY(mu_) = 0;
  size_t cached_large_bytes_ ARC_GUARDED_BY(mu_) = 0;
};

}  // namespace arcstore::nbd
