// MemoryDevice: a device held in memory, for tests, crash images and fuzzing.
//
// Every request completes inline (before Submit returns). Writes apply
// under one lock, so a concurrent read sees each write whole or not at all.
// Flush does nothing (memory is as durable as it gets); discard zero-fills.
//
// Thread-safety: Submit and the accessors may be called from any thread.
// Contents() returns a copy the caller owns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/thread_annotations.h"
#include "io/device.h"

namespace arcstore::io {

struct MemoryDeviceOptions {
  std::string name = "mem";
  uint64_t size_bytes = 64ull << 20;
  uint32_t logical_block_size = 4096;
  uint64_t max_size_bytes = 16ull << 30;  // a limit, so a typo does not eat the host

  // size a positive multiple of the block size (which is a power of two in
  // [512, 1 MiB]) and at most max_size_bytes.
  Status Validate() const;
};

class MemoryDevice final : public Device {
 public:
  static Result<std::unique_ptr<MemoryDevice>> Create(const MemoryDeviceOptions& options);
  // A device whose contents are `image` (its size must satisfy Validate()).
  static Result<std::unique_ptr<MemoryDevice>> FromImage(const MemoryDeviceOptions& options,
                                                         std::vector<uint8_t> image);

  const std::string& name() const override { return name_; }
  uint32_t logical_block_size() const override { return block_size_; }
  uint64_t size_bytes() const override { return size_bytes_; }
  bool supports_discard() const override { return true; }
  void Submit(IoRequest request) override;
  Status Execute(IoRequest request) override;

  // A copy of the whole device.
  std::vector<uint8_t> Contents() const;

 private:
  MemoryDevice(const MemoryDeviceOptions& options, std::vector<uint8_t> image);
  Status Run(const IoRequest& request);

  const std::string name_;
  const uint32_t block_size_;
  const uint64_t size_bytes_;
  mutable Mutex mu_;
  std::vector<uint8_t> data_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::io
