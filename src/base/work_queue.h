// WorkQueue: a fixed set of threads running submitted tasks, oldest first.
//
// The engine's asynchronous API runs each submitted operation on one of
// these threads, so that a caller (an NBD connection, the bench) keeps many
// operations in flight without a thread of its own for each. The queue is
// bounded: Run() blocks while `max_queued` tasks are waiting, which pushes
// back on a caller that submits faster than the engine completes.
//
// Thread-safety: Run, Drain and queued may be called from any thread,
// including from a task. Destruction runs every queued task, then joins.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/thread_annotations.h"

namespace arcstore {

class WorkQueue {
 public:
  // threads >= 1, max_queued >= 1 (checked).
  WorkQueue(std::string name, uint32_t threads, uint32_t max_queued);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Run(std::function<void()> task);
  // Waits until every task submitted so far has finished.
  void Drain();
  size_t queued();
  const std::string& name() const { return name_; }

 private:
  void Loop();

  const std::string name_;
  const uint32_t max_queued_;
  Mutex mu_;
  CondVar work_cv_;   // tasks to run, or stopping
  CondVar space_cv_;  // room in the queue, or everything done
  std::deque<std::function<void()>> tasks_ ARC_GUARDED_BY(mu_);
  uint64_t running_ ARC_GUARDED_BY(mu_) = 0;
  bool stopping_ ARC_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace arcstore
