// CowImage: a device image that shares its bytes copy-on-write, and
// CowImageDevice, a device over one.
//
// The crash harness (pool/crash_harness.h) opens thousands of crash images
// of the same 16 MiB device, each a few writes away from the next. A flat
// image per crash costs a 16 MiB copy and ~4k page faults of fresh memory,
// which was most of the harness's time. A CowImage is a shared base that
// never changes plus the blocks written over it:
//
//   base (shared, const):  [0][1][2][3][4][5][6][7] ...
//   blocks written:           [1']      [4']              a map by index
//   what a read sees:      [0][1'][2][3][4'][5][6][7] ...
//
// Copying an image copies the map, not the bytes: the copy shares every
// block, and a write to a shared block clones it first (so neither image
// sees the other's later writes). A crash image is the builder's image of
// the durable writes, copied, plus the pending writes that landed.
//
// Thread-safety: an image is a value; one thread at a time may use it (its
// copies may be used by other threads: shared blocks are never written in
// place). CowImageDevice serializes its requests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/thread_annotations.h"
#include "io/device.h"

namespace arcstore::io {

class CowImage {
 public:
  CowImage() = default;
  // `base` is the image before any write; its size must be a positive
  // multiple of `block_bytes`, a power of two from 512 to 1 MiB (checked).
  CowImage(std::shared_ptr<const std::vector<uint8_t>> base, uint32_t block_bytes);

  uint64_t size_bytes() const { return base_ ? base_->size() : 0; }
  uint32_t block_bytes() const { return block_bytes_; }
  size_t blocks_written() const { return blocks_.size(); }

  // [offset, offset + bytes) must lie within the image (checked); any
  // alignment. Write's `data` nullptr writes zeros.
  void Write(uint64_t offset, const uint8_t* data, uint64_t bytes);
  void Read(uint64_t offset, uint8_t* out, uint64_t bytes) const;
  // The whole image as flat bytes.
  std::vector<uint8_t> Materialize() const;

  // Calls fn(pos, block, n) for each block piece of [offset, offset +
  // bytes): `block` points at the piece's first byte in the image, n bytes
  // of it, pos is the piece's place from `offset`. ForEachWritable clones
  // shared blocks first.
  template <typename Fn>
  void ForEachReadable(uint64_t offset, uint64_t bytes, Fn fn) const;
  template <typename Fn>
  void ForEachWritable(uint64_t offset, uint64_t bytes, Fn fn);

 private:
  using Block = std::shared_ptr<std::vector<uint8_t>>;
  void CheckRange(uint64_t offset, uint64_t bytes) const;
  // The block pieces of [offset, offset + bytes), each block's bytes from
  // block(index).
  template <typename BlockFn, typename Fn>
  void Walk(uint64_t offset, uint64_t bytes, BlockFn block, Fn fn) const;
  const uint8_t* BlockBytes(uint64_t index) const;
  uint8_t* WritableBlock(uint64_t index);

  std::shared_ptr<const std::vector<uint8_t>> base_;
  uint32_t block_bytes_ = 4096;
  std::map<uint64_t, Block> blocks_;  // block index -> its bytes, written over the base
};

template <typename BlockFn, typename Fn>
void CowImage::Walk(uint64_t offset, uint64_t bytes, BlockFn block, Fn fn) const {
  CheckRange(offset, bytes);
  for (uint64_t pos = 0; pos < bytes;) {
    const uint64_t at = offset + pos;
    const uint64_t in_block = at % block_bytes_;
    const uint64_t n = std::min<uint64_t>(block_bytes_ - in_block, bytes - pos);
    fn(pos, block(at / block_bytes_) + in_block, n);
    pos += n;
  }
}

template <typename Fn>
void CowImage::ForEachReadable(uint64_t offset, uint64_t bytes, Fn fn) const {
  auto block = [this](uint64_t index) { return BlockBytes(index); };
  Walk(offset, bytes, block, fn);
}

template <typename Fn>
void CowImage::ForEachWritable(uint64_t offset, uint64_t bytes, Fn fn) {
  auto block = [this](uint64_t index) { return WritableBlock(index); };
  Walk(offset, bytes, block, fn);
}

// A device whose contents are a CowImage: requests complete inline, under
// one lock; flush does nothing; discard zero-fills.
class CowImageDevice final : public Device {
 public:
  // The image's block size is the device's logical block size.
  static Result<std::unique_ptr<CowImageDevice>> Create(std::string name, CowImage image);

  const std::string& name() const override { return name_; }
  uint32_t logical_block_size() const override { return block_bytes_; }
  uint64_t size_bytes() const override { return size_bytes_; }
  bool supports_discard() const override { return true; }
  void Submit(IoRequest request) override;
  Status Execute(IoRequest request) override;

  // A copy of the image as it is now (shares its blocks).
  CowImage Image() const;

 private:
  CowImageDevice(std::string name, CowImage image);
  Status Run(const IoRequest& request);

  const std::string name_;
  const uint32_t block_bytes_;
  const uint64_t size_bytes_;
  mutable Mutex mu_;
  CowImage image_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::io
