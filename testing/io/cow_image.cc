#include "testing/io/cow_image.h"

#include <cstring>

#include "base/check.h"
#include "base/units.h"

namespace arcstore::io {

CowImage::CowImage(std::shared_ptr<const std::vector<uint8_t>> base, uint32_t block_bytes)
    : base_(std::move(base)), block_bytes_(block_bytes) {
  ARC_CHECK(base_ != nullptr);
  ARC_CHECK(IsPowerOfTwo(block_bytes_) && block_bytes_ >= 512 && block_bytes_ <= kMiB)
      << "block_bytes " << block_bytes_;
  ARC_CHECK(!base_->empty() && base_->size() % block_bytes_ == 0)
      << "image of " << base_->size() << " bytes in blocks of " << block_bytes_;
}

void CowImage::CheckRange(uint64_t offset, uint64_t bytes) const {
  ARC_CHECK(offset <= size_bytes() && bytes <= size_bytes() - offset)
      << "[" << offset << ", +" << bytes << ") outside an image of " << size_bytes() << " bytes";
}

const uint8_t* CowImage::BlockBytes(uint64_t index) const {
  auto it = blocks_.find(index);
  return it != blocks_.end() ? it->second->data() : base_->data() + index * block_bytes_;
}

uint8_t* CowImage::WritableBlock(uint64_t index) {
  Block& b = blocks_[index];
  if (b == nullptr) {
    const uint8_t* from = base_->data() + index * block_bytes_;
    b = std::make_shared<std::vector<uint8_t>>(from, from + block_bytes_);
  } else if (b.use_count() > 1) {
    b = std::make_shared<std::vector<uint8_t>>(*b);  // shared with a copy: never written in place
  }
  return b->data();
}

void CowImage::Write(uint64_t offset, const uint8_t* data, uint64_t bytes) {
  ForEachWritable(offset, bytes, [&](uint64_t pos, uint8_t* to, uint64_t n) {
    if (data != nullptr) {
      std::memcpy(to, data + pos, n);
    } else {
      std::memset(to, 0, n);
    }
  });
}

void CowImage::Read(uint64_t offset, uint8_t* out, uint64_t bytes) const {
  ForEachReadable(offset, bytes, [&](uint64_t pos, const uint8_t* from, uint64_t n) {
    std::memcpy(out + pos, from, n);
  });
}

std::vector<uint8_t> CowImage::Materialize() const {
  if (base_ == nullptr) return {};
  std::vector<uint8_t> out = *base_;
  for (const auto& [index, b] : blocks_) {
    std::memcpy(out.data() + index * block_bytes_, b->data(), block_bytes_);
  }
  return out;
}

Result<std::unique_ptr<CowImageDevice>> CowImageDevice::Create(std::string name, CowImage image) {
  if (image.size_bytes() == 0) {
    return Status::InvalidArgument("cow image device " + name + ": the image is empty");
  }
  return std::unique_ptr<CowImageDevice>(new CowImageDevice(std::move(name), std::move(image)));
}

CowImageDevice::CowImageDevice(std::string name, CowImage image)
    : name_(std::move(name)),
      block_bytes_(image.block_bytes()),
      size_bytes_(image.size_bytes()),
      image_(std::move(image)) {}

CowImage CowImageDevice::Image() const {
  MutexLock lock(&mu_);
  return image_;
}

Status CowImageDevice::Run(const IoRequest& r) {
  ARC_RETURN_IF_ERROR(CheckRequest(*this, r));
  MutexLock lock(&mu_);
  switch (r.op) {
    case IoOp::kRead:
      image_.ForEachReadable(
          r.offset, r.length(),
          [&](uint64_t pos, const uint8_t* from, uint64_t n) { ScatterIov(r.iov, pos, n, from); });
      break;
    case IoOp::kWrite:
      image_.ForEachWritable(r.offset, r.length(), [&](uint64_t pos, uint8_t* to, uint64_t n) {
        GatherIov(r.iov, pos, n, to);
      });
      break;
    case IoOp::kDiscard:
      image_.Write(r.offset, nullptr, r.discard_length);
      break;
    case IoOp::kFlush:
      break;
  }
  return Status::Ok();
}

void CowImageDevice::Submit(IoRequest request) {
  Status s = Run(request);
  request.done(s);
}

Status CowImageDevice::Execute(IoRequest request) {
  if (!request.done) request.done = [](const Status&) {};
  return Run(request);
}

}  // namespace arcstore::io
