#include "base/work_queue.h"

#include "base/check.h"
#include "base/thread_name.h"

namespace arcstore {

WorkQueue::WorkQueue(std::string name, uint32_t threads, uint32_t max_queued)
    : name_(std::move(name)), max_queued_(max_queued) {
  ARC_CHECK_GE(threads, 1u);
  ARC_CHECK_GE(max_queued, 1u);
  for (uint32_t i = 0; i < threads; i++) threads_.emplace_back([this] {
      NameThisThread("work");
      Loop();
    });
}

WorkQueue::~WorkQueue() {
  {
    MutexLock l(&mu_);
    stopping_ = true;
    work_cv_.SignalAll();
  }
  for (auto& t : threads_) t.join();
}

void WorkQueue::Run(std::function<void()> task) {
  MutexLock l(&mu_);
  while (tasks_.size() >= max_queued_ && !stopping_) space_cv_.Wait(&mu_);
  tasks_.push_back(std::move(task));
  work_cv_.Signal();
}

void WorkQueue::Drain() {
  MutexLock l(&mu_);
  while (!tasks_.empty() || running_ > 0) space_cv_.Wait(&mu_);
}

size_t WorkQueue::queued() {
  MutexLock l(&mu_);
  return tasks_.size();
}

void WorkQueue::Loop() {
  MutexLock l(&mu_);
  while (true) {
    while (tasks_.empty() && !stopping_) work_cv_.Wait(&mu_);
    if (tasks_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    running_++;
    space_cv_.SignalAll();
    mu_.Unlock();
    task();
    mu_.Lock();
    running_--;
    space_cv_.SignalAll();
  }
}

}  // namespace arcstore
