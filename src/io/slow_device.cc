// SlowDevice: reads that take at least a set time (see slow_device.h).
#include "io/slow_device.h"

#include <chrono>

namespace arcstore::io {

Result<std::unique_ptr<SlowDevice>> SlowDevice::Create(std::unique_ptr<Device> inner,
                                                       uint64_t read_latency_ns, Clock* clock) {
  if (inner == nullptr || clock == nullptr) {
    return Status::InvalidArgument("slow device: needs a device and a clock");
  }
  if (read_latency_ns == 0 || read_latency_ns > kMaxLatencyNs) {
    return Status::InvalidArgument("slow device " + inner->name() + ": read latency " +
                                   std::to_string(read_latency_ns) + " ns not in (0, 10 s]");
  }
  return std::unique_ptr<SlowDevice>(new SlowDevice(std::move(inner), read_latency_ns, clock));
}

SlowDevice::SlowDevice(std::unique_ptr<Device> inner, uint64_t read_latency_ns, Clock* clock)
    : inner_(std::move(inner)), latency_ns_(read_latency_ns), clock_(clock) {
  timer_ = std::thread([this] { TimerLoop(); });
}

SlowDevice::~SlowDevice() {
  {
    MutexLock l(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  timer_.join();
}

void SlowDevice::Submit(IoRequest request) {
  if (request.op != IoOp::kRead) {
    inner_->Submit(std::move(request));
    return;
  }
  const uint64_t due = clock_->NowNs() + latency_ns_;
  IoCallback done = std::move(request.done);
  request.done = [this, due, done = std::move(done)](const Status& s) mutable {
    if (clock_->NowNs() >= due) {
      done(s);
      return;
    }
    {
      MutexLock l(&mu_);
      if (parked_.size() < kMaxParked && !stop_) {
        const bool earliest = parked_.empty() || due < parked_.top().due_ns;
        parked_.push(Parked{due, next_seq_++, std::move(done), s});
        if (earliest) cv_.SignalAll();
        return;
      }
    }
    // The list is full: this completion waits out its latency here.
    const uint64_t now = clock_->NowNs();
    if (due > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
    done(s);
  };
  inner_->Submit(std::move(request));
}

Status SlowDevice::Execute(IoRequest request) {
  if (request.op != IoOp::kRead) return inner_->Execute(std::move(request));
  const uint64_t due = clock_->NowNs() + latency_ns_;
  Status s = inner_->Execute(std::move(request));
  const uint64_t now = clock_->NowNs();
  // The emulated device's own time, spent on the caller's thread.
  if (due > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
  return s;
}

void SlowDevice::TimerLoop() {
  std::vector<Parked> due;
  while (true) {
    {
      MutexLock l(&mu_);
      while (true) {
        if (parked_.empty()) {
          if (stop_) return;
          cv_.Wait(&mu_);
          continue;
        }
        const uint64_t now = clock_->NowNs();
        const uint64_t first = parked_.top().due_ns;
        if (first <= now || stop_) break;
        (void)cv_.WaitFor(&mu_, std::chrono::nanoseconds(first - now));
      }
      // Everything due now (at shutdown: everything), earliest first.
      const uint64_t now = clock_->NowNs();
      while (!parked_.empty() && (parked_.top().due_ns <= now || stop_)) {
        due.push_back(std::move(const_cast<Parked&>(parked_.top())));
        parked_.pop();
      }
    }
    for (Parked& p : due) p.done(p.status);
    due.clear();
  }
}

}  // namespace arcstore::io
