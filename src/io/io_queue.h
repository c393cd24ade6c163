// QueuedDevice: a device's I/O queue with scheduling classes, the way a
// ZFS vdev queue works, as a Device wrapper (the pool talks to io::Device).
//
// Each request carries an IoClass (device.h; kFromOp: reads are sync reads,
// the rest sync writes). Each class has min_active and max_active, and the
// device a total cap. Requests wait in their class's FIFO; a slot goes, in
// priority order, first to a class below its min_active, then to a class
// below its max_active:
//
//   priority: sync_read > sync_write > log_write > async_read > async_write
//
// The async-write max_active follows dirty data: with f in [0, 1] from the
// injected async-write fraction (TxgManager::AsyncWriteFraction(), the 30%
// .. 60% ramp), it is min_active + f x (max_active - min_active).
//
// Async reads (prefetch) waiting together are merged into one device read
// when they are adjacent or separated by at most read_gap_limit_bytes (the
// gap is read into a scratch buffer and discarded), up to
// read_aggregation_limit_bytes. Writes are aggregated by their submitter
// (the txg sync), which says how many requests it merged in IoRequest.parts.
//
// Stats (module "io", per class C in sync_read sync_write async_read
// async_write log_write): io.C_ops, io.C_bytes (device I/Os and bytes,
// counted at completion), io.C_queue_ns (submit to issue), io.C_latency_ns
// (issue to completion), io.C_size_ind_bytes (device I/Os that carry one
// request) and io.C_size_agg_bytes (device I/Os that carry several:
// aggregated; ind + agg = every device I/O, like `zpool iostat -r`),
// io.C_active, io.C_queued; io.inflight_depth (I/Os at the device, sampled
// at each issue), io.flushes, io.flush_latency_ns, io.discards,
// io.trace_dropped. Flushes and discards use their class's slots but count
// only in io.flushes/io.discards (not in C_ops, C_queue_ns, ...).
//
// Completion: on whatever thread the inner device completes on (inline for
// psync and memory devices, the io_uring thread for io_uring). A completion
// issues the next waiting requests unless the thread that issued it is
// still inside the inner Submit (an inline completion), which then issues
// them itself, so an inline device never recurses.
//
// Thread-safety: all methods may be called from any thread. The queue owns
// the inner device; destroy it only when no request is in flight.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "io/forwarding_device.h"
#include "io/io_trace.h"
#include "stats/registry.h"

namespace arcstore::io {

struct IoClassLimits {
  uint32_t min_active = 1;
  uint32_t max_active = 1;
};

struct IoQueueOptions {
  // Indexed by IoClass (sync_read, sync_write, async_read, async_write,
  // log_write); OpenZFS's defaults, log writes as sync writes.
  std::array<IoClassLimits, kNumIoClasses> limits = {
      IoClassLimits{10, 10}, IoClassLimits{10, 10}, IoClassLimits{1, 3}, IoClassLimits{2, 10},
      IoClassLimits{10, 10}};
  uint32_t max_active_total = 1000;
  uint64_t read_gap_limit_bytes = 32 * 1024;
  uint64_t read_aggregation_limit_bytes = 1024 * 1024;
  // Requests waiting in one class before Submit completes with
  // ResourceExhausted (a bound, not a throttle).
  uint32_t max_queued_per_class = 65536;

  // Per class 0 <= min_active <= max_active, 1 <= max_active <= 1000;
  // max_active_total 1..10000; gap limit <= 1 MiB; aggregation limit
  // 4 KiB..kMaxIoBytes; max_queued_per_class 1..1000000.
  Status Validate() const;
};

class QueuedDevice final : public ForwardingDevice {
 public:
  // `registry` receives the io.* stats under `module`; `clock` times
  // queueing, latency and the trace. Both must outlive the queue.
  QueuedDevice(std::unique_ptr<Device> inner, const IoQueueOptions& options,
               stats::Registry* registry, Clock* clock, std::string_view module = "io");
  ~QueuedDevice() override;

  void Submit(IoRequest request) override;
  // A sync read, sync write or log write that finds its class with a free
  // slot and nobody of its class waiting takes the slot and runs on the
  // calling thread (the inner device's Execute), with the same accounting
  // as a queued request; anything else is submitted and waited for.
  Status Execute(IoRequest request) override;

  // The async-write fraction in [0, 1] (values outside are clamped); until
  // set, 1 (max_active). Called on each dispatch, without queue locks held.
  void SetAsyncWriteFraction(std::function<double()> fraction);

  // The per-I/O trace (io_trace.h). Busy when a trace already runs (naming
  // its file), before `open` is called; errors of IoTrace::Start otherwise.
  Status StartTrace(const std::string& path, uint64_t ring_entries,
                    const TraceFileOpener& open = {});
  // NotFound when no trace runs; else the trace file's first write error.
  Status StopTrace();
  // A txg marker in the trace, when one runs.
  void AddTraceMarker(TraceMarker marker, uint64_t txg);
  // Whether a trace runs (a hint: it may stop meanwhile), and an
  // application write's record in it, when one runs.
  bool tracing() const { return tracing_.load(std::memory_order_acquire); }
  void AddTraceWrite(const TracedWrite& write);
  // A cache device's I/O (io_trace.h's C record), when a trace runs.
  void AddTraceCacheIo(uint32_t cache, const TracedIo& io);

  // The async-write max_active for fraction f (exposed for tests).
  uint32_t AsyncWriteMaxActive(double fraction) const;

 private:
  struct Op;
  struct ClassStats {
    stats::Counter* ops;
    stats::Counter* bytes;
    stats::Histogram* queue_ns;
    stats::Histogram* latency_ns;
    stats::Histogram* size_ind_bytes;
    stats::Histogram* size_agg_bytes;
    stats::Gauge* active;
    stats::Gauge* queued;
  };
  void Dispatch();
  // The next op to issue (merged when it can be), or nullptr.
  std::shared_ptr<Op> PickLocked(double fraction) ARC_REQUIRES(mu_);
  int PickClassLocked(double fraction) const ARC_REQUIRES(mu_);
  // Takes a slot of op's class for it and records its queue time.
  void StartLocked(Op& op) ARC_REQUIRES(mu_);
  // Gives the slot back.
  void FinishLocked(const Op& op) ARC_REQUIRES(mu_);
  std::shared_ptr<Op> NewOp(IoRequest request);
  std::shared_ptr<Op> MergeReadsLocked(std::shared_ptr<Op> head) ARC_REQUIRES(mu_);
  void Issue(const std::shared_ptr<Op>& op);
  void Complete(const std::shared_ptr<Op>& op, const Status& status);
  void Account(const Op& op, uint64_t done_ns, const Status& status);

  const std::unique_ptr<Device> owned_inner_;  // what ForwardingDevice forwards to
  const IoQueueOptions options_;
  Clock* const clock_;
  std::array<ClassStats, kNumIoClasses> class_stats_;
  stats::Histogram* inflight_depth_;
  stats::Counter* flushes_;
  stats::Histogram* flush_latency_ns_;
  stats::Counter* discards_;
  stats::Counter* trace_dropped_;

  Mutex fraction_mu_;
  std::function<double()> fraction_ ARC_GUARDED_BY(fraction_mu_);

  Mutex mu_;
  std::array<std::deque<std::shared_ptr<Op>>, kNumIoClasses> queued_ ARC_GUARDED_BY(mu_);
  std::array<uint32_t, kNumIoClasses> active_ ARC_GUARDED_BY(mu_) = {};
  uint32_t total_active_ ARC_GUARDED_BY(mu_) = 0;

  Mutex trace_mu_;  // never held across device calls
  std::unique_ptr<IoTrace> trace_ ARC_GUARDED_BY(trace_mu_);
  std::atomic<bool> tracing_{false};
};

}  // namespace arcstore::io
