// AlignedBuffer: an owned, zero-filled byte buffer whose start is aligned.
//
// O_DIRECT I/O needs buffers aligned to the device's logical block size, and
// recorded writes want a stable copy of their data; both use this type.
// Allocation size is rounded up to a multiple of the alignment so that a
// whole number of blocks can always be transferred from it; size() is the
// size asked for. Buffers of kMapMinBytes (64 KiB) and more, with an
// alignment of at most a page, are page mappings of their own
// (base/page_memory.h), so that freed ones leave the resident set.
//
// Ownership: the buffer owns its memory (move-only); spans taken from it are
// valid until it is destroyed or moved from.
// Thread-safety: none (a plain value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace arcstore::io {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // `alignment` must be a power of two (checked); the memory is zero-filled.
  // Aborts when memory cannot be had: callers bound their sizes.
  AlignedBuffer(size_t size_bytes, size_t alignment);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_bytes_; }
  size_t alignment() const { return alignment_; }
  bool empty() const { return size_bytes_ == 0; }
  std::span<uint8_t> span() { return {data_, size_bytes_}; }
  std::span<const uint8_t> span() const { return {data_, size_bytes_}; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_bytes_ = 0;
  size_t alignment_ = 1;
  bool mapped_ = false;  // a page mapping (else aligned_alloc)
  void Free();
};

}  // namespace arcstore::io
