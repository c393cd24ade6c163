// PayloadCache: reuses the data buffers (READ results, WRITE payloads) of
// one NBD connection's requests.
//
// A 4 KiB request at queue depth 32 otherwise allocates and frees a 4 KiB
// buffer per request; glibc serves that size outside its thread cache and
// first consolidates every small chunk freed since (malloc_consolidate,
// unlink_chunk: about a fifth of a connection thread's time in 4 KiB
// random reads of cached data). Buffers of up to kMaxBytes are rounded up
// to a power of two (at least kMinBytes) and kept on a free list per size
// when given back, up to `max_cached_bytes` in all; larger ones are plain
// allocations.
//
// Not io::BufferCache (the block reader's, the intent log's and the txg
// writer's): those hand out aligned AlignedBuffers (zero-filled when made),
// which are page mappings from 64 KiB up, and an NBD request of up to 32 MiB that
// is not kept would then be mapped and unmapped (a TLB shootdown) per
// request; payloads need neither alignment nor zeroing, and new[] lets
// glibc keep large blocks in its heap once it has freed one.
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
  static constexpr size_t kMaxBytes = 64 * 1024;

  explicit PayloadCache(size_t max_cached_bytes) : max_cached_bytes_(max_cached_bytes) {}

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
        cached_bytes_ -= kMinBytes << c;
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
    if (cached_bytes_ + (kMinBytes << c) > max_cached_bytes_) return;  // freed
    cached_bytes_ += kMinBytes << c;
    free_[c].push_back(std::move(buffer));
  }

  size_t cached_bytes() {
    MutexLock l(&mu_);
    return cached_bytes_;
  }

 private:
  static constexpr size_t kClasses = 5;  // 4, 8, 16, 32 and 64 KiB
  static_assert(kMaxBytes == kMinBytes << (kClasses - 1));
  static size_t ClassOf(size_t bytes) {
    const size_t rounded = std::bit_ceil(bytes < kMinBytes ? kMinBytes : bytes);
    return static_cast<size_t>(std::countr_zero(rounded / kMinBytes));
  }

  const size_t max_cached_bytes_;
  Mutex mu_;
  std::array<std::vector<std::unique_ptr<uint8_t[]>>, kClasses> free_ ARC_GUARDED_BY(mu_);
  size_t cached_bytes_ ARC_GUARDED_BY(mu_) = 0;
};

}  // namespace arcstore::nbd
