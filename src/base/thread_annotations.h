// Clang thread-safety annotations, and a Mutex that carries them.
//
// libstdc++'s std::mutex is not annotated, so the engine uses arcstore::Mutex
// (a std::mutex underneath) and MutexLock for scoped locking. With clang and
// -Wthread-safety a field marked ARC_GUARDED_BY(mu_) read without mu_ held is
// a compile error. Under g++ the macros expand to nothing.
#pragma once

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define ARC_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define ARC_THREAD_ANNOTATION_(x)
#endif

#define ARC_CAPABILITY(x) ARC_THREAD_ANNOTATION_(capability(x))
#define ARC_SCOPED_CAPABILITY ARC_THREAD_ANNOTATION_(scoped_lockable)
#define ARC_GUARDED_BY(x) ARC_THREAD_ANNOTATION_(guarded_by(x))
#define ARC_PT_GUARDED_BY(x) ARC_THREAD_ANNOTATION_(pt_guarded_by(x))
#define ARC_ACQUIRED_AFTER(...) ARC_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))
#define ARC_ACQUIRED_BEFORE(...) ARC_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define ARC_REQUIRES(...) ARC_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define ARC_ACQUIRE(...) ARC_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define ARC_RELEASE(...) ARC_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define ARC_TRY_ACQUIRE(...) ARC_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define ARC_EXCLUDES(...) ARC_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define ARC_RETURN_CAPABILITY(x) ARC_THREAD_ANNOTATION_(lock_returned(x))
#define ARC_NO_THREAD_SAFETY_ANALYSIS ARC_THREAD_ANNOTATION_(no_thread_safety_analysis)

namespace arcstore {

class ARC_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ARC_ACQUIRE() { mu_.lock(); }
  void Unlock() ARC_RELEASE() { mu_.unlock(); }
  bool TryLock() ARC_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Documents (to the analysis) that the caller holds the lock.
  void AssertHeld() const {}

  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

class ARC_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ARC_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ARC_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable used with arcstore::Mutex. Wait() must be called with
// the mutex held; it is released while waiting and re-acquired on return.
class CondVar {
 public:
  void Wait(Mutex* mu) ARC_REQUIRES(mu) {
    std::unique_lock<std::mutex> lk(mu->native(), std::adopt_lock);
    cv_.wait(lk);
    lk.release();
  }
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> d) ARC_REQUIRES(mu) {
    std::unique_lock<std::mutex> lk(mu->native(), std::adopt_lock);
    bool signalled = cv_.wait_for(lk, d) == std::cv_status::no_timeout;
    lk.release();
    return signalled;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace arcstore
