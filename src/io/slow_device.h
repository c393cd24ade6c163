// SlowDevice: a device whose reads take at least a set time, to measure
// the engine against a slower device than the machine has (a hard disk's
// seek under a second cache level, for instance) without touching the
// machine's disks. `arcstore bench --pool-read-latency` puts one under a
// pool's device queue.
//
//   Submit(read) --> inner->Submit --done--> due = issue + latency
//                                            now >= due: done at once
//                                            else: parked until due
//   timer thread: completes parked reads at their due times, in order
//
// Reads overlap as they would on a device with a queue: each one waits its
// own latency from its own issue, not behind the others. Execute (a caller
// that waits anyway) runs the inner read on the caller's thread and then
// waits out the rest of the latency there. Writes, flushes and discards
// pass straight through.
//
// Limits: latency at most kMaxLatencyNs; at most kMaxParked reads parked at
// once (a read completing when the list is full completes late, not never:
// its completion waits on the completing thread).
//
// Thread-safety: as Device. The timer thread is joined by the destructor,
// which must not run while requests are in flight.
#pragma once

#include <cstdint>
#include <memory>
#include <queue>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/thread_annotations.h"
#include "io/device.h"

namespace arcstore::io {

class SlowDevice final : public Device {
 public:
  static constexpr uint64_t kMaxLatencyNs = 10ull * 1000 * 1000 * 1000;
  static constexpr size_t kMaxParked = 65536;

  // InvalidArgument when latency_ns is 0 or above kMaxLatencyNs.
  static Result<std::unique_ptr<SlowDevice>> Create(std::unique_ptr<Device> inner,
                                                    uint64_t read_latency_ns, Clock* clock);
  ~SlowDevice() override;

  const std::string& name() const override { return inner_->name(); }
  uint32_t logical_block_size() const override { return inner_->logical_block_size(); }
  uint64_t size_bytes() const override { return inner_->size_bytes(); }
  uint32_t buffer_alignment() const override { return inner_->buffer_alignment(); }
  bool supports_discard() const override { return inner_->supports_discard(); }
  void Submit(IoRequest request) override;
  Status Execute(IoRequest request) override;

 private:
  SlowDevice(std::unique_ptr<Device> inner, uint64_t read_latency_ns, Clock* clock);
  void TimerLoop();

  struct Parked {
    uint64_t due_ns;
    uint64_t seq;  // FIFO among equal due times
    IoCallback done;
    Status status;
    bool operator>(const Parked& o) const {
      return due_ns != o.due_ns ? due_ns > o.due_ns : seq > o.seq;
    }
  };

  const std::unique_ptr<Device> inner_;
  const uint64_t latency_ns_;
  Clock* const clock_;
  Mutex mu_;
  CondVar cv_;
  std::priority_queue<Parked, std::vector<Parked>, std::greater<>> parked_ ARC_GUARDED_BY(mu_);
  uint64_t next_seq_ ARC_GUARDED_BY(mu_) = 0;
  bool stop_ ARC_GUARDED_BY(mu_) = false;
  std::thread timer_;
};

}  // namespace arcstore::io
