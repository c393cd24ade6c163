#include "base/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace arcstore {
namespace {

TEST(WorkQueueTest, RunsEveryTaskAndDrains) {
  std::atomic<int> done{0};
  WorkQueue q("test", 4, 8);
  for (int i = 0; i < 1000; i++) q.Run([&] { done++; });
  q.Drain();
  EXPECT_EQ(done.load(), 1000);
  EXPECT_EQ(q.queued(), 0u);
}

TEST(WorkQueueTest, BoundedQueuePushesBack) {
  WorkQueue q("test", 1, 2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> done{0};
  q.Run([gate, &done] {
    gate.wait();
    done++;
  });
  // The one thread is busy; two more fit in the queue; the next Run blocks.
  q.Run([&] { done++; });
  q.Run([&] { done++; });
  std::atomic<bool> fourth_queued{false};
  std::thread submitter([&] {
    q.Run([&] { done++; });
    fourth_queued = true;
  });
  while (q.queued() < 2) std::this_thread::yield();
  EXPECT_FALSE(fourth_queued.load());
  release.set_value();
  submitter.join();
  q.Drain();
  EXPECT_EQ(done.load(), 4);
}

TEST(WorkQueueTest, DestructionRunsWhatIsQueued) {
  std::atomic<int> done{0};
  {
    WorkQueue q("test", 2, 100);
    for (int i = 0; i < 50; i++) q.Run([&] { done++; });
  }
  EXPECT_EQ(done.load(), 50);
}

}  // namespace
}  // namespace arcstore
