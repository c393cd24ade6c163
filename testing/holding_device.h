// HoldingDevice: a Device that holds every request until the test releases
// it, so that a test controls the order and moment of completions (the I/O
// queue's class limits, priority order, accounting).
//
// Released requests are executed by an inner device (a MemoryDevice, so
// data really moves) and completed on the releasing thread. Held() lists
// what the device has, oldest first, each with its class and offset.
//
// Thread-safety: all methods may be called from any thread; Release runs
// the request's completion without the device's lock held.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "base/thread_annotations.h"
#include "io/forwarding_device.h"

namespace arcstore::testing {

class HoldingDevice final : public io::ForwardingDevice {
 public:
  struct Seen {
    io::IoClass cls;
    io::IoOp op;
    uint64_t offset;
    uint64_t bytes;
    uint32_t parts;
  };

  explicit HoldingDevice(io::Device* inner) : io::ForwardingDevice(inner) {}

  void Submit(io::IoRequest request) override {
    MutexLock l(&mu_);
    log_.push_back(Describe(request));
    held_.push_back(std::move(request));
    changed_.SignalAll();
  }

  // Waits until the device holds at least `n` requests.
  void WaitHeld(size_t n) {
    MutexLock l(&mu_);
    while (held_.size() < n) changed_.Wait(&mu_);
  }

  size_t held() {
    MutexLock l(&mu_);
    return held_.size();
  }
  std::vector<Seen> Held() {
    MutexLock l(&mu_);
    std::vector<Seen> out;
    for (const auto& r : held_) out.push_back(Describe(r));
    return out;
  }
  // Every request the device was given, in order.
  std::vector<Seen> Log() {
    MutexLock l(&mu_);
    return log_;
  }
  // Executes and completes the `index`-th oldest held request; false when
  // there is none.
  bool Release(size_t index = 0) {
    io::IoRequest r;
    {
      MutexLock l(&mu_);
      if (index >= held_.size()) return false;
      r = std::move(held_[index]);
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(index));
    }
    inner()->Submit(std::move(r));
    return true;
  }

 private:
  static Seen Describe(const io::IoRequest& r) {
    return Seen{r.EffectiveClass(), r.op, r.offset, r.length(), r.parts};
  }
  Mutex mu_;
  CondVar changed_;
  std::deque<io::IoRequest> held_ ARC_GUARDED_BY(mu_);
  std::vector<Seen> log_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::testing
