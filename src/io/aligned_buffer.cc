#include "io/aligned_buffer.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "base/page_memory.h"
#include "base/units.h"

namespace arcstore::io {

AlignedBuffer::AlignedBuffer(size_t size_bytes, size_t alignment) : alignment_(alignment) {
  ARC_CHECK(IsPowerOfTwo(alignment)) << "alignment " << alignment;
  if (alignment < sizeof(void*)) alignment_ = alignment = sizeof(void*);
  if (size_bytes == 0) return;
  size_t rounded = (size_bytes + alignment - 1) / alignment * alignment;
  size_bytes_ = size_bytes;
  if (rounded >= kMapMinBytes && alignment <= kPageBytes) {
    data_ = MapPages(rounded);  // zero-filled
    mapped_ = true;
    return;
  }
  data_ = static_cast<uint8_t*>(std::aligned_alloc(alignment, rounded));
  ARC_CHECK(data_ != nullptr) << "out of memory allocating " << rounded << " bytes";
  std::memset(data_, 0, rounded);
}

void AlignedBuffer::Free() {
  if (data_ == nullptr) return;
  if (mapped_) {
    UnmapPages(data_, (size_bytes_ + alignment_ - 1) / alignment_ * alignment_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
}

AlignedBuffer::~AlignedBuffer() { Free(); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)),
      alignment_(std::exchange(other.alignment_, 1)),
      mapped_(std::exchange(other.mapped_, false)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    Free();
    data_ = std::exchange(other.data_, nullptr);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
    alignment_ = std::exchange(other.alignment_, 1);
    mapped_ = std::exchange(other.mapped_, false);
  }
  return *this;
}

}  // namespace arcstore::io
