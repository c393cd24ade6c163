// ThreadedVolume: a Volume wrapper, for tests only, that completes every
// operation on its own worker threads instead of inline, so that replies of
// an NBD connection come back out of order as they do with the engine.
// A caller that waits (VolumeRequest::caller_waits) waits for a worker too.
// Pause() holds every submitted operation (they count as in flight) until
// Resume(), so tests can fill a connection's in-flight window on purpose.
//
// Thread-safety: all methods may be called from any thread. The destructor
// runs every queued operation (paused or not) and joins the workers.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "arcstore/volume.h"
#include "base/thread_annotations.h"

namespace arcstore::nbd {

class ThreadedVolume final : public Volume {
 public:
  ThreadedVolume(std::shared_ptr<Volume> inner, int threads) : inner_(std::move(inner)) {
    for (int i = 0; i < threads; i++) workers_.emplace_back([this] { Work(); });
  }
  ~ThreadedVolume() override {
    {
      MutexLock l(&mu_);
      stop_ = true;
      paused_ = false;
      cv_.SignalAll();
    }
    for (auto& t : workers_) t.join();
  }

  VolumeInfo info() const override { return inner_->info(); }

  void Submit(VolumeRequest req, Completion done) override {
    Queue([this, req = std::move(req), done = std::move(done)]() mutable {
      inner_->Submit(std::move(req), Wrap(std::move(done)));
    });
  }
  std::unique_ptr<PreparedWrite> PrepareWrite(uint64_t offset, uint64_t length) override {
    return inner_->PrepareWrite(offset, length);
  }

  void Pause() {
    MutexLock l(&mu_);
    paused_ = true;
  }
  void Resume() {
    MutexLock l(&mu_);
    paused_ = false;
    cv_.SignalAll();
  }
  // Blocks until `n` operations are in flight (submitted, not completed).
  void WaitForInFlight(size_t n) {
    MutexLock l(&mu_);
    while (in_flight_ < n) cv_.Wait(&mu_);
  }
  size_t in_flight() {
    MutexLock l(&mu_);
    return in_flight_;
  }
  size_t max_in_flight() {
    MutexLock l(&mu_);
    return max_in_flight_;
  }

 private:
  void Queue(std::function<void()> task) {
    MutexLock l(&mu_);
    in_flight_++;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    queue_.push_back(std::move(task));
    cv_.SignalAll();
  }
  Completion Wrap(Completion done) {
    // Counted out before the caller hears of it, so that a caller that
    // submits more from its completion never sees its own limit exceeded.
    return [this, done = std::move(done)](Status s) {
      Done();
      done(std::move(s));
    };
  }
  void Done() {
    MutexLock l(&mu_);
    in_flight_--;
    cv_.SignalAll();
  }
  void Work() {
    while (true) {
      std::function<void()> task;
      {
        MutexLock l(&mu_);
        while (!stop_ && (paused_ || queue_.empty())) cv_.Wait(&mu_);
        if (queue_.empty()) return;  // stopping and drained
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  const std::shared_ptr<Volume> inner_;
  Mutex mu_;
  CondVar cv_;
  bool paused_ ARC_GUARDED_BY(mu_) = false;
  bool stop_ ARC_GUARDED_BY(mu_) = false;
  size_t in_flight_ ARC_GUARDED_BY(mu_) = 0;
  size_t max_in_flight_ ARC_GUARDED_BY(mu_) = 0;
  std::deque<std::function<void()>> queue_ ARC_GUARDED_BY(mu_);
  std::vector<std::thread> workers_;
};

}  // namespace arcstore::nbd
