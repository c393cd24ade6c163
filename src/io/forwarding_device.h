// ForwardingDevice: a Device that passes every request to another device it
// does not own. Tests give a pool a ForwardingDevice so that they keep the
// real device (to damage it, reopen it, or look at it); wrappers that queue,
// count, record or alter requests (QueuedDevice, FaultDevice,
// RecordingDevice) derive from it and override Submit.
//
// Thread-safety: as the inner device's. The inner device must outlive it.
#pragma once

#include "io/device.h"

namespace arcstore::io {

class ForwardingDevice : public Device {
 public:
  explicit ForwardingDevice(Device* inner) : inner_(inner) {}
  const std::string& name() const override { return inner_->name(); }
  uint32_t logical_block_size() const override { return inner_->logical_block_size(); }
  uint64_t size_bytes() const override { return inner_->size_bytes(); }
  uint32_t buffer_alignment() const override { return inner_->buffer_alignment(); }
  bool supports_discard() const override { return inner_->supports_discard(); }
  void Submit(IoRequest request) override { inner_->Submit(std::move(request)); }
  Result<uint64_t> FillHoles(uint64_t offset, uint64_t length) override {
    return inner_->FillHoles(offset, length);
  }

  Device* inner() const { return inner_; }

 private:
  Device* const inner_;
};

}  // namespace arcstore::io
