// BufferCache: aligned buffers kept for reuse by per-I/O work.
//
// A buffer of kMapMinBytes (64 KiB) or more is a page mapping of its own
// (AlignedBuffer): making one faults in each of its pages, and unmapping it
// in a process with threads on other CPUs makes the kernel flush their TLBs
// (an interrupt to each). A block read that took a fresh 64 KiB buffer for
// its physical bytes and dropped it after decompressing would pay both on
// every read. Work that needs a buffer for the length of one I/O
// takes one here and gives it back: the block reader (its physical bytes),
// the intent log (the blocks a commit encodes) and the txg writers (each
// compressed or metadata block, until its write completes).
//
//   Take(bytes) --> the smallest kept buffer that holds `bytes`, else a new
//                   zero-filled one (counted)
//   Prefill(n, bytes) --> n new buffers of `bytes`, each page written
//                   once (a mapping's first touch is the costly part on
//                   some hosts), then Give
//   Give(buf)   --> kept if it is at most `max_buffer_bytes` and among the
//                   largest that fit in `max_buffers` and `max_kept_bytes`
//                   (smaller kept buffers are freed to make room); else
//                   freed
//
// A buffer taken from the cache is not zeroed again and may be larger than
// asked for: callers use the first `bytes` of it and overwrite what they
// read or write (or zero it). Memory held: at most max_kept_bytes, and at
// most max_buffers * max_buffer_bytes.
//
// Thread-safety: Take and Give from any thread (one mutex, held for a
// lookup among at most max_buffers, by size; buffers are freed outside it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "base/thread_annotations.h"
#include "io/aligned_buffer.h"

namespace arcstore::io {

class BufferCache {
 public:
  // `alignment`: of every buffer made (a power of two).
  BufferCache(size_t alignment, size_t max_buffers, size_t max_buffer_bytes,
              size_t max_kept_bytes = SIZE_MAX);
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // `made` (optional): set to whether the buffer was made, not reused.
  AlignedBuffer Take(size_t bytes, bool* made = nullptr);
  void Give(AlignedBuffer buffer);
  // Makes `count` buffers of `bytes`, writes each page of them once and
  // gives them to the cache (Give's limits apply). Returns the bytes the
  // cache keeps then.
  size_t Prefill(size_t count, size_t bytes);

  size_t alignment() const { return alignment_; }
  // Buffers Take had to make (the rest were reused).
  uint64_t made() const { return made_.load(std::memory_order_relaxed); }
  size_t kept();

 private:
  const size_t alignment_;
  const size_t max_buffers_;
  const size_t max_buffer_bytes_;
  const size_t max_kept_bytes_;
  std::atomic<uint64_t> made_{0};
  Mutex mu_;
  std::multimap<size_t, AlignedBuffer> kept_ ARC_GUARDED_BY(mu_);  // by size
  size_t kept_bytes_ ARC_GUARDED_BY(mu_) = 0;  // the sum of kept_'s sizes
};

}  // namespace arcstore::io
