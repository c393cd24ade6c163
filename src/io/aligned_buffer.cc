#include "io/aligned_buffer.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "base/units.h"

namespace arcstore::io {

AlignedBuffer::AlignedBuffer(size_t size_bytes, size_t alignment) : alignment_(alignment) {
  ARC_CHECK(IsPowerOfTwo(alignment)) << "alignment " << alignment;
  if (alignment < sizeof(void*)) alignment_ = alignment = sizeof(void*);
  if (size_bytes == 0) return;
  size_t rounded = (size_bytes + alignment - 1) / alignment * alignment;
  data_ = static_cast<uint8_t*>(std::aligned_alloc(alignment, rounded));
  ARC_CHECK(data_ != nullptr) << "out of memory allocating " << rounded << " bytes";
  std::memset(data_, 0, rounded);
  size_bytes_ = size_bytes;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)),
      alignment_(std::exchange(other.alignment_, 1)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
    alignment_ = std::exchange(other.alignment_, 1);
  }
  return *this;
}

}  // namespace arcstore::io
