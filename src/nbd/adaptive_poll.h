// AdaptivePoll: how long a connection thread polls its socket for the next
// request (or the rest of a WRITE's payload) before it sleeps in the
// kernel.
//
// Why. A client at queue depth 1 sends its next request a few tens of
// microseconds after it gets a reply. A connection thread that sleeps in
// recv() meanwhile pays, per request, for being put to sleep and for the
// client's send waking it on another CPU: on a 2-CPU virtual machine that
// is about as long as serving a 4 KiB cached read. Polling (reading without
// waiting, in a loop) for a short window catches the request with the
// thread still running, which matters most to small requests at low queue
// depth. A 1 MiB WRITE's payload passes through the socket's buffer in
// pieces while the client writes it, and a receiver that slept would sleep
// for each piece: the payload is polled for too.
//
// The window adapts per connection, the way a hypervisor polls before
// halting a virtual CPU:
//
//   the wait ended while polling         -> the window stays
//   it slept, and the request came       -> doubled (at least max/8, at most
//     within max_window_ns of its start      max): a longer window would
//                                            have caught it
//   it slept longer than max_window_ns   -> halved (0 below max/8): the
//                                            client is idle or slow, and
//                                            polling would only burn CPU
//
// So a queue-depth-1 client converges on polling, an idle connection stops
// polling after a few requests, and a connection whose requests are
// already buffered (a deep queue) never waits at all. CPU spent polling is
// at most max_window_ns per wait.
//
// The window alone cannot tell a client whose gaps are spread out: a mix
// of short gaps (which grow the window) and long ones (which it polls in
// vain before sleeping) keeps it polling while it catches few requests.
// So each connection also keeps the books over epochs of kEpochWaits
// waits that polled: polling pays when it spent at most one
// max_window_ns per request it caught (max_window_ns is what a caught
// request is worth: the operator's bound on polling to save one sleep).
// An epoch that did not pay starts a rest, waits that sleep at once (the
// window still adapting to the gaps); the rests double while epochs keep
// not paying, up to kMaxRestEpochs epochs, and an epoch that pays ends
// the doubling:
//
//   epoch of kEpochWaits waits --paid--> next epoch, rest length reset
//        |
//        +--did not pay--> rest (1, 2, 4 ... kMaxRestEpochs epochs of
//                          waits, no polling) --> next epoch
//
// PollBudget bounds how many threads of the server poll at once (by
// default one fewer than the CPUs, at least one), so polling never takes
// the last CPU from the clients, the engine's threads or other
// connections; a thread that finds the budget spent sleeps at once.
//
// Stats (module "nbd"): poll_caught (waits polling ended), poll_slept
// (waits that slept), poll_no_budget (waits that could not poll),
// poll_ns (time spent polling), poll_rests (rests begun).
//
// Thread-safety: an AdaptivePoll belongs to one thread (the connection's
// reader); PollBudget is shared by all of them and lock-free.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "arcstore/status.h"
#include "base/clock.h"
#include "base/result.h"
#include "stats/registry.h"

namespace arcstore::nbd {

class PollBudget {
 public:
  // `max_pollers` threads may poll at once; 0 means one fewer than the
  // CPUs this process may run on, at least one.
  explicit PollBudget(uint32_t max_pollers);
  PollBudget(const PollBudget&) = delete;
  PollBudget& operator=(const PollBudget&) = delete;

  bool TryAcquire();
  void Release();
  uint32_t max_pollers() const { return max_; }

 private:
  const uint32_t max_;
  std::atomic<uint32_t> active_{0};
};

struct PollCounters {
  stats::Counter* caught = nullptr;
  stats::Counter* slept = nullptr;
  stats::Counter* no_budget = nullptr;
  stats::Counter* poll_ns = nullptr;
  stats::Counter* rests = nullptr;
};

class AdaptivePoll {
 public:
  // Borrows `budget`, `clock` and the counters (they must outlive it).
  // The window starts at its maximum.
  AdaptivePoll(uint64_t max_window_ns, PollBudget* budget, Clock* clock, PollCounters counters)
      : max_ns_(max_window_ns),
        window_ns_(max_window_ns),
        budget_(budget),
        clock_(clock),
        counters_(counters) {}

  // One wait for input. Calls `try_now` (a read that does not wait;
  // kBusy: nothing has arrived) until it returns anything else or the
  // window has passed, then `wait` (a read that waits). Returns what ended
  // the wait.
  template <typename TryNow, typename Wait>
  Result<size_t> Await(TryNow try_now, Wait wait) {
    const uint64_t start_ns = clock_->NowNs();
    if (window_ns_ > 0 && rest_waits_ == 0) {
      if (budget_->TryAcquire()) {
        uint64_t now_ns = start_ns;
        do {
          Result<size_t> r = try_now();
          now_ns = clock_->NowNs();
          if (r.ok() || r.status().code() != StatusCode::kBusy) {
            budget_->Release();
            counters_.poll_ns->Add(now_ns - start_ns);
            counters_.caught->Add();
            Polled(now_ns - start_ns, true);
            return r;  // the window stays
          }
        } while (now_ns - start_ns < window_ns_);
        budget_->Release();
        counters_.poll_ns->Add(now_ns - start_ns);
        Polled(now_ns - start_ns, false);
      } else {
        counters_.no_budget->Add();
      }
    } else if (rest_waits_ > 0) {
      rest_waits_--;
    }
    Result<size_t> r = wait();
    counters_.slept->Add();
    Slept(clock_->NowNs() - start_ns);
    return r;
  }

  uint64_t window_ns() const { return window_ns_; }
  // Waits left in the current rest (0: polling as the window says).
  uint64_t rest_waits() const { return rest_waits_; }

  static constexpr uint32_t kEpochWaits = 64;
  static constexpr uint32_t kMaxRestEpochs = 64;

 private:
  // Books a wait that polled for `polled_ns` (and caught its request or
  // not); at the end of an epoch, starts a rest if polling did not pay.
  void Polled(uint64_t polled_ns, bool caught) {
    epoch_waits_++;
    epoch_poll_ns_ += polled_ns;
    if (caught) epoch_caught_++;
    if (epoch_waits_ < kEpochWaits) return;
    if (epoch_poll_ns_ > epoch_caught_ * max_ns_) {
      rest_waits_ = uint64_t{kEpochWaits} * rest_epochs_;
      rest_epochs_ = std::min(rest_epochs_ * 2, kMaxRestEpochs);
      counters_.rests->Add();
    } else {
      rest_epochs_ = 1;
    }
    epoch_waits_ = 0;
    epoch_poll_ns_ = 0;
    epoch_caught_ = 0;
  }

  // Adapts the window after a wait that slept `waited_ns` in all.
  void Slept(uint64_t waited_ns) {
    const uint64_t floor_ns = max_ns_ / 8;
    if (waited_ns <= max_ns_) {
      window_ns_ = std::min(max_ns_, std::max(window_ns_ * 2, floor_ns));
    } else {
      window_ns_ /= 2;
      if (window_ns_ < floor_ns) window_ns_ = 0;
    }
  }

  const uint64_t max_ns_;
  uint64_t window_ns_;
  // The current epoch's books, and the rest: see the theory above.
  uint32_t epoch_waits_ = 0;
  uint64_t epoch_poll_ns_ = 0;
  uint64_t epoch_caught_ = 0;
  uint64_t rest_waits_ = 0;
  uint32_t rest_epochs_ = 1;  // the next rest's length, in epochs
  PollBudget* const budget_;
  Clock* const clock_;
  const PollCounters counters_;
};

}  // namespace arcstore::nbd
