#include "io/memory_device.h"

#include <cstring>

#include "base/units.h"

namespace arcstore::io {

Status MemoryDeviceOptions::Validate() const {
  if (!IsPowerOfTwo(logical_block_size) || logical_block_size < 512 || logical_block_size > kMiB) {
    return Status::InvalidArgument("logical_block_size " + std::to_string(logical_block_size) +
                                   ": must be a power of two from 512 to 1 MiB");
  }
  if (size_bytes == 0 || size_bytes % logical_block_size != 0) {
    return Status::InvalidArgument("size_bytes " + std::to_string(size_bytes) +
                                   ": must be a positive multiple of the block size");
  }
  if (size_bytes > max_size_bytes) {
    return Status::InvalidArgument("size_bytes " + FormatBytes(size_bytes) +
                                   ": more than max_size_bytes " + FormatBytes(max_size_bytes));
  }
  return Status::Ok();
}

Result<std::unique_ptr<MemoryDevice>> MemoryDevice::Create(const MemoryDeviceOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  return std::unique_ptr<MemoryDevice>(
      new MemoryDevice(options, std::vector<uint8_t>(options.size_bytes)));
}

Result<std::unique_ptr<MemoryDevice>> MemoryDevice::FromImage(const MemoryDeviceOptions& options,
                                                              std::vector<uint8_t> image) {
  MemoryDeviceOptions o = options;
  o.size_bytes = image.size();
  ARC_RETURN_IF_ERROR(o.Validate());
  return std::unique_ptr<MemoryDevice>(new MemoryDevice(o, std::move(image)));
}

MemoryDevice::MemoryDevice(const MemoryDeviceOptions& options, std::vector<uint8_t> image)
    : name_(options.name),
      block_size_(options.logical_block_size),
      size_bytes_(options.size_bytes),
      data_(std::move(image)) {}

std::vector<uint8_t> MemoryDevice::Contents() const {
  MutexLock lock(&mu_);
  return data_;
}

Status MemoryDevice::Run(const IoRequest& r) {
  ARC_RETURN_IF_ERROR(CheckRequest(*this, r));
  MutexLock lock(&mu_);
  switch (r.op) {
    case IoOp::kRead:
      ScatterIov(r.iov, 0, r.length(), data_.data() + r.offset);
      break;
    case IoOp::kWrite:
      GatherIov(r.iov, 0, r.length(), data_.data() + r.offset);
      break;
    case IoOp::kDiscard:
      std::memset(data_.data() + r.offset, 0, r.discard_length);
      break;
    case IoOp::kFlush:
      break;
  }
  return Status::Ok();
}

void MemoryDevice::Submit(IoRequest request) {
  Status s = Run(request);
  request.done(s);
}

Status MemoryDevice::Execute(IoRequest request) {
  if (!request.done) request.done = [](const Status&) {};
  return Run(request);
}

}  // namespace arcstore::io
