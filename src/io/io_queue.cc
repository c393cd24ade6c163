// The device I/O queue. Theory of operation:
//
//   Submit --CheckRequest--> Op{request, class, submit_ns} --mu_--> queued_[class] (FIFO)
//      |
//      v  Dispatch (loop): PickLocked chooses a class
//   +--------------------------------------------------------------+
//   | total_active_ < max_active_total, then in priority order:    |
//   |   1. the first class with waiting ops and active < min       |
//   |   2. the first class with waiting ops and active < max       |
//   |      (async_write: min + f x (max - min), f = dirty fraction)|
//   +--------------------------------------------------------------+
//      |  async reads: merge waiting neighbours (gap <= read_gap_limit)
//      v
//   Issue: inner->Submit(request with our completion)
//      |
//   Complete: active--, stats, trace; Dispatch unless the issuing thread
//      is still inside inner->Submit (inline completion: that thread's
//      loop issues the next ops); then the callers' `done`.
//
//   Execute (a caller that waits anyway: sync reads and writes, log
//   writes): when its class has a free slot and nobody of the class is
//   queued, take the slot, run inner->Execute on the caller's thread, then
//   account and Dispatch as Complete does; else Submit and wait in line.
//
// Invariants: active_[c] <= max_active of c (async_write: of the fraction
// seen when issuing); total_active_ <= max_active_total; every submitted
// request completes exactly once (refused requests inline, with the
// inner device's or CheckRequest's status); a merged read completes each
// of its requests with the device read's status.
// Locking: mu_ guards the queues and the active counts; fraction_mu_ is
// held only to call the fraction function (lock order: fraction_mu_, then
// whatever the function takes; never mu_ with it); trace_mu_ guards the
// trace pointer. No lock is held across inner->Submit or a caller's `done`.
// Nothing of `this` is touched after a caller's `done` runs in Complete
// (the caller may destroy the queue once its last request is done).
// Limits: per-class max_active, max_active_total, max_queued_per_class,
// read_aggregation_limit_bytes (<= kMaxIoBytes), kMaxIoVecs per merge.
// Tunables: IoQueueOptions (PoolOptions::io in the public API).
// Stats: see io_queue.h.
#include "io/io_queue.h"

#include <algorithm>

#include "base/check.h"
#include "io/aligned_buffer.h"

namespace arcstore::io {

namespace {
// Issue order of the classes.
constexpr std::array<IoClass, kNumIoClasses> kPriority = {
    IoClass::kSyncRead, IoClass::kSyncWrite, IoClass::kLogWrite, IoClass::kAsyncRead,
    IoClass::kAsyncWrite};
constexpr int Index(IoClass c) { return static_cast<int>(c); }
}  // namespace

struct QueuedDevice::Op {
  IoRequest request;  // until issued
  IoCallback done;    // the caller's
  IoClass cls = IoClass::kSyncRead;
  IoOp io_op = IoOp::kRead;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint32_t parts = 1;
  uint64_t submit_ns = 0;
  uint64_t issue_ns = 0;
  std::vector<std::shared_ptr<Op>> merged;  // reads merged into this one
  std::vector<AlignedBuffer> gaps;          // scratch for bridged gaps
  std::atomic<bool> in_submit{false};
  uint64_t end() const { return offset + bytes; }
};

Status IoQueueOptions::Validate() const {
  for (int c = 0; c < kNumIoClasses; c++) {
    const IoClassLimits& l = limits[c];
    const std::string who = "io queue class " + std::string(IoClassName(static_cast<IoClass>(c)));
    if (l.max_active < 1 || l.max_active > 1000) {
      return Status::InvalidArgument(who + ": max_active " + std::to_string(l.max_active) +
                                     " must be from 1 to 1000");
    }
    if (l.min_active > l.max_active) {
      return Status::InvalidArgument(who + ": min_active " + std::to_string(l.min_active) +
                                     " exceeds max_active " + std::to_string(l.max_active));
    }
  }
  if (max_active_total < 1 || max_active_total > 10000) {
    return Status::InvalidArgument("io queue: max_active_total " +
                                   std::to_string(max_active_total) + " must be from 1 to 10000");
  }
  if (read_gap_limit_bytes > 1024 * 1024) {
    return Status::InvalidArgument("io queue: read_gap_limit_bytes " +
                                   std::to_string(read_gap_limit_bytes) + " exceeds 1 MiB");
  }
  if (read_aggregation_limit_bytes < 4096 || read_aggregation_limit_bytes > kMaxIoBytes) {
    return Status::InvalidArgument("io queue: read_aggregation_limit_bytes " +
                                   std::to_string(read_aggregation_limit_bytes) +
                                   " must be from 4 KiB to " + std::to_string(kMaxIoBytes));
  }
  if (max_queued_per_class < 1 || max_queued_per_class > 1'000'000) {
    return Status::InvalidArgument("io queue: max_queued_per_class " +
                                   std::to_string(max_queued_per_class) +
                                   " must be from 1 to 1000000");
  }
  return Status::Ok();
}

QueuedDevice::QueuedDevice(std::unique_ptr<Device> inner, const IoQueueOptions& options,
                           stats::Registry* r, Clock* clock, std::string_view module)
    : ForwardingDevice(inner.get()), owned_inner_(std::move(inner)), options_(options), clock_(clock) {
  ARC_CHECK(options.Validate().ok()) << options.Validate().ToString();
  using stats::Unit;
  for (int c = 0; c < kNumIoClasses; c++) {
    const std::string n(IoClassName(static_cast<IoClass>(c)));
    class_stats_[c] = ClassStats{
        r->AddCounter(module, n + "_ops", Unit::kOps, n + " device I/Os completed"),
        r->AddCounter(module, n + "_bytes", Unit::kBytes, n + " bytes transferred"),
        r->AddHistogram(module, n + "_queue_ns", Unit::kNanoseconds,
                        n + " time queued (submit to issue)"),
        r->AddHistogram(module, n + "_latency_ns", Unit::kNanoseconds,
                        n + " device time (issue to completion)"),
        r->AddHistogram(module, n + "_size_ind_bytes", Unit::kBytes,
                        n + " size of device I/Os carrying one request"),
        r->AddHistogram(module, n + "_size_agg_bytes", Unit::kBytes,
                        n + " size of device I/Os carrying several (aggregated)"),
        r->AddGauge(module, n + "_active", Unit::kOps, n + " I/Os at the device"),
        r->AddGauge(module, n + "_queued", Unit::kOps, n + " requests waiting in the queue")};
  }
  inflight_depth_ = r->AddHistogram(module, "inflight_depth", Unit::kOps,
                                    "I/Os at the device, sampled at each issue");
  flushes_ = r->AddCounter(module, "flushes", Unit::kOps, "device flushes");
  flush_latency_ns_ =
      r->AddHistogram(module, "flush_latency_ns", Unit::kNanoseconds, "device flush latency");
  discards_ = r->AddCounter(module, "discards", Unit::kOps, "device discards");
  trace_dropped_ = r->AddCounter(module, "trace_dropped", Unit::kOps,
                                 "trace records dropped because the ring was full");
}

QueuedDevice::~QueuedDevice() { (void)StopTrace(); }

void QueuedDevice::SetAsyncWriteFraction(std::function<double()> fraction) {
  MutexLock l(&fraction_mu_);
  fraction_ = std::move(fraction);
}

uint32_t QueuedDevice::AsyncWriteMaxActive(double f) const {
  const IoClassLimits& l = options_.limits[Index(IoClass::kAsyncWrite)];
  f = std::clamp(f, 0.0, 1.0);
  const double span = static_cast<double>(l.max_active - l.min_active);
  return std::max<uint32_t>(1, l.min_active + static_cast<uint32_t>(f * span + 0.5));
}

std::shared_ptr<QueuedDevice::Op> QueuedDevice::NewOp(IoRequest request) {
  auto op = std::make_shared<Op>();
  op->cls = request.EffectiveClass();
  op->io_op = request.op;
  op->offset = request.offset;
  op->bytes = request.length();
  op->parts = std::max<uint32_t>(1, request.parts);
  op->done = std::move(request.done);
  op->request = std::move(request);
  op->submit_ns = clock_->NowNs();
  return op;
}

void QueuedDevice::Submit(IoRequest request) {
  Status s = CheckRequest(*inner(), request);
  if (!s.ok()) {
    request.done(s);
    return;
  }
  std::shared_ptr<Op> op = NewOp(std::move(request));
  const int c = Index(op->cls);
  {
    MutexLock l(&mu_);
    if (queued_[c].size() >= options_.max_queued_per_class) {
      s = Status::ResourceExhausted(DescribeIo(*inner(), op->io_op, op->offset, op->bytes) +
                                    ": " + std::to_string(queued_[c].size()) + " " +
                                    std::string(IoClassName(op->cls)) +
                                    " requests already queued (the limit)");
    } else {
      queued_[c].push_back(op);
      class_stats_[c].queued->Add(1);
    }
  }
  if (!s.ok()) {
    op->done(s);
    return;
  }
  Dispatch();
}

Status QueuedDevice::Execute(IoRequest request) {
  if (!request.done) request.done = [](const Status&) {};
  ARC_RETURN_IF_ERROR(CheckRequest(*inner(), request));
  const IoClass cls = request.EffectiveClass();
  if (cls == IoClass::kAsyncRead || cls == IoClass::kAsyncWrite) {
    return SubmitThenWait(*this, std::move(request));
  }
  std::shared_ptr<Op> op = NewOp(std::move(request));
  const int c = Index(cls);
  bool now = false;
  {
    MutexLock l(&mu_);
    // FIFO within the class: with anyone of the class waiting, or no slot
    // free, wait in line like a submitted request.
    now = queued_[c].empty() && total_active_ < options_.max_active_total &&
          active_[c] < options_.limits[c].max_active;
    if (now) StartLocked(*op);
  }
  if (!now) {
    op->request.done = std::move(op->done);
    return SubmitThenWait(*this, std::move(op->request));
  }
  Status s = inner()->Execute(std::move(op->request));
  const uint64_t done_ns = clock_->NowNs();
  {
    MutexLock l(&mu_);
    FinishLocked(*op);
  }
  Account(*op, done_ns, s);
  Dispatch();  // the slot may be what a queued request waits for
  return s;
}

void QueuedDevice::Dispatch() {
  double f = 1.0;
  {
    MutexLock l(&fraction_mu_);
    if (fraction_) f = fraction_();
  }
  for (;;) {
    std::shared_ptr<Op> op;
    {
      MutexLock l(&mu_);
      op = PickLocked(f);
    }
    if (!op) return;
    Issue(op);
  }
}

int QueuedDevice::PickClassLocked(double fraction) const {
  if (total_active_ >= options_.max_active_total) return -1;
  for (IoClass cls : kPriority) {
    const int c = Index(cls);
    if (!queued_[c].empty() && active_[c] < options_.limits[c].min_active) return c;
  }
  for (IoClass cls : kPriority) {
    const int c = Index(cls);
    const uint32_t max = cls == IoClass::kAsyncWrite ? AsyncWriteMaxActive(fraction)
                                                     : options_.limits[c].max_active;
    if (!queued_[c].empty() && active_[c] < max) return c;
  }
  return -1;
}

std::shared_ptr<QueuedDevice::Op> QueuedDevice::PickLocked(double fraction) {
  const int c = PickClassLocked(fraction);
  if (c < 0) return nullptr;
  std::shared_ptr<Op> op = std::move(queued_[c].front());
  queued_[c].pop_front();
  class_stats_[c].queued->Add(-1);
  if (op->cls == IoClass::kAsyncRead && op->io_op == IoOp::kRead && !queued_[c].empty()) {
    op = MergeReadsLocked(std::move(op));
  }
  StartLocked(*op);
  return op;
}

void QueuedDevice::StartLocked(Op& op) {
  const int c = Index(op.cls);
  active_[c]++;
  total_active_++;
  class_stats_[c].active->Add(1);
  inflight_depth_->Record(total_active_);
  op.issue_ns = clock_->NowNs();
  if (op.io_op == IoOp::kRead || op.io_op == IoOp::kWrite) {
    class_stats_[c].queue_ns->Record(op.issue_ns - op.submit_ns);
  }
}

void QueuedDevice::FinishLocked(const Op& op) {
  const int c = Index(op.cls);
  active_[c]--;
  total_active_--;
  class_stats_[c].active->Add(-1);
}

// Gathers the waiting async reads within read_gap_limit_bytes of the growing
// range [start, end), then builds one read over the range: the requests'
// own buffers, and scratch buffers for the gaps.
std::shared_ptr<QueuedDevice::Op> QueuedDevice::MergeReadsLocked(std::shared_ptr<Op> head) {
  auto& q = queued_[Index(IoClass::kAsyncRead)];
  std::vector<std::shared_ptr<Op>> parts = {head};
  uint64_t start = head->offset, end = head->end();
  size_t iovs = head->request.iov.size();
  const uint64_t gap_limit = options_.read_gap_limit_bytes;
  for (bool grew = true; grew;) {
    grew = false;
    for (auto it = q.begin(); it != q.end(); ++it) {
      Op& o = **it;
      if (o.io_op != IoOp::kRead) continue;
      const bool after = o.offset >= end && o.offset - end <= gap_limit;
      const bool before = o.end() <= start && start - o.end() <= gap_limit;
      if (!after && !before) continue;
      const uint64_t new_start = std::min(start, o.offset), new_end = std::max(end, o.end());
      if (new_end - new_start > options_.read_aggregation_limit_bytes ||
          iovs + o.request.iov.size() + 1 > kMaxIoVecs) {
        continue;
      }
      start = new_start;
      end = new_end;
      iovs += o.request.iov.size() + 1;
      parts.push_back(std::move(*it));
      q.erase(it);
      class_stats_[Index(IoClass::kAsyncRead)].queued->Add(-1);
      grew = true;
      break;
    }
  }
  if (parts.size() == 1) return head;
  std::sort(parts.begin(), parts.end(),
            [](const auto& a, const auto& b) { return a->offset < b->offset; });
  auto m = std::make_shared<Op>();
  m->cls = IoClass::kAsyncRead;
  m->io_op = IoOp::kRead;
  m->offset = start;
  m->bytes = end - start;
  m->parts = 0;
  m->submit_ns = head->submit_ns;
  m->request.op = IoOp::kRead;
  m->request.offset = start;
  m->request.io_class = IoClass::kAsyncRead;
  uint64_t at = start;
  for (const auto& p : parts) {
    if (p->offset > at) {
      m->gaps.emplace_back(p->offset - at, BufferAlignmentFor(*inner()));
      m->request.iov.push_back(IoVec{m->gaps.back().data(), p->offset - at});
    }
    for (const IoVec& v : p->request.iov) m->request.iov.push_back(v);
    at = p->end();
    m->parts += p->parts;
    m->submit_ns = std::min(m->submit_ns, p->submit_ns);
  }
  m->request.parts = m->parts;
  m->merged = std::move(parts);
  return m;
}

void QueuedDevice::Issue(const std::shared_ptr<Op>& op) {
  IoRequest req = std::move(op->request);
  req.done = [this, op](const Status& s) { Complete(op, s); };
  op->in_submit.store(true);
  inner()->Submit(std::move(req));
  op->in_submit.store(false);
}

void QueuedDevice::Account(const Op& op, uint64_t done_ns, const Status& status) {
  const uint64_t device_ns = done_ns - op.issue_ns;
  if (op.io_op == IoOp::kFlush) {
    flushes_->Add();
    flush_latency_ns_->Record(device_ns);
  } else if (op.io_op == IoOp::kDiscard) {
    discards_->Add();
  } else {
    const ClassStats& cs = class_stats_[Index(op.cls)];
    cs.ops->Add();
    cs.bytes->Add(op.bytes);
    cs.latency_ns->Record(device_ns);
    (op.parts > 1 ? cs.size_agg_bytes : cs.size_ind_bytes)->Record(op.bytes);
  }
  if (!tracing_.load(std::memory_order_acquire)) return;
  MutexLock l(&trace_mu_);
  if (trace_) {
    trace_->AddIo(TracedIo{op.submit_ns, op.issue_ns, done_ns, op.cls, op.io_op, op.offset,
                           op.bytes, op.parts, status.ok()});
  }
}

void QueuedDevice::Complete(const std::shared_ptr<Op>& op, const Status& status) {
  const uint64_t done_ns = clock_->NowNs();
  {
    MutexLock l(&mu_);
    FinishLocked(*op);
  }
  Account(*op, done_ns, status);
  // An inline completion: the issuing thread's Dispatch loop goes on.
  if (!op->in_submit.load()) Dispatch();
  if (op->merged.empty()) {
    op->done(status);
  } else {
    for (const auto& p : op->merged) p->done(status);
  }
}

Status QueuedDevice::StartTrace(const std::string& path, uint64_t ring_entries,
                               const TraceFileOpener& open) {
  MutexLock l(&trace_mu_);
  if (trace_) return Status::Busy("a trace is already running (to " + trace_->path() + ")");
  ARC_ASSIGN_OR_RETURN(trace_, IoTrace::Start(path, ring_entries, clock_, trace_dropped_, open));
  tracing_.store(true, std::memory_order_release);
  return Status::Ok();
}

Status QueuedDevice::StopTrace() {
  std::unique_ptr<IoTrace> t;
  {
    MutexLock l(&trace_mu_);
    if (!trace_) return Status::NotFound("no trace is running");
    tracing_.store(false, std::memory_order_release);
    t = std::move(trace_);
  }
  return t->Stop();
}

void QueuedDevice::AddTraceMarker(TraceMarker marker, uint64_t txg) {
  if (!tracing_.load(std::memory_order_acquire)) return;
  MutexLock l(&trace_mu_);
  if (trace_) trace_->AddMarker(marker, txg);
}

void QueuedDevice::AddTraceCacheIo(uint32_t cache, const TracedIo& io) {
  if (!tracing_.load(std::memory_order_acquire)) return;
  MutexLock l(&trace_mu_);
  if (trace_) trace_->AddCacheIo(cache, io);
}

void QueuedDevice::AddTraceWrite(const TracedWrite& write) {
  if (!tracing_.load(std::memory_order_acquire)) return;
  MutexLock l(&trace_mu_);
  if (trace_) trace_->AddWrite(write);
}

}  // namespace arcstore::io
