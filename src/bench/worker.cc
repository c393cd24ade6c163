// Worker: the I/O loop of one job clone, and how it measures.
//
//   +-------------------- worker thread --------------------+
//   | plan (IoPlanner) -> pick free slot -> fill buffer     |
//   |   -> t0=now, Submit*(slot, done) -> t1=now            |
//   | reap: slots with state==DONE -> account -> free       |
//   | wait: done_seq.wait() when iodepth slots are in flight|
//   +-------------------------------------------------------+
//        ^ done(status): t2=now, state=DONE, done_seq++, notify
//        | (inline inside Submit*, or on an engine thread)
//
// A synchronous engine (psync, sync, pvsync, pvsync2, vsync; the default)
// at iodepth 1 calls the volume's blocking Read/Write/Flush/Trim on the
// worker thread instead of Submit*, as fio makes the system call on the
// job's thread. At a deeper iodepth the bench keeps that many I/Os in
// flight through Submit* whatever the engine (fio's sync engines would
// ignore it).
//
// Latency as fio measures it (ns): for an I/O that had completed when its
// Submit* call returned (inline, or on an engine thread meanwhile: to the
// caller, a synchronous engine like fio's psync), there is no slat sample
// and clat = lat = t2 - t0. Otherwise slat = t1 - t0, clat = t2 - t1,
// lat = t2 - t0 (fio's libaio/io_uring view). Percentiles
// come from fio's log-linear histogram of clat (latency.h).
//
// Bandwidth and IOPS samples: every sample_window_ns (500 ms, fio's
// bw_avg_time), the bytes and I/Os completed in the window, as KiB/s and
// IOPS.
//
// fio's log files (write_*_log): each measured I/O also goes to the
// clone's JobLog (job_log.h) at accounting, with its completion time; the
// log closes its windows at the end of the I/O phase.
//
// Invariants: a slot is owned by the worker when FREE, by the volume while
// IN_FLIGHT, and handed back by the DONE store (release/acquire). The
// worker leaves only after every callback has finished touching it
// (callbacks_finished_ == submitted_). No allocation and no lock on the
// per-I/O path: buffers, slots, the random map and the histograms are
// allocated before the first I/O; std::function holds the one-pointer
// callback inline. The one exception is a job that asks for fio's log
// files: its JobLog's vectors grow (geometrically, up to their limit).
//
// Limits: iodepth <= 4096 (Job::Validate via the option table); block size
// <= 128 MiB; buffers total iodepth x max bs.

#include "bench/worker.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "base/random.h"
#include "bench/job_log.h"
#include "bench/offsets.h"
#include "bench/verify.h"

namespace arcstore::bench {
namespace {

constexpr size_t kBufferAlign = 4096;

// fio's engines that do each I/O with a blocking call on the job's thread.
bool IsSyncEngine(const std::string& engine) {
  return engine == "psync" || engine == "sync" || engine == "pvsync" || engine == "pvsync2" ||
         engine == "vsync";
}

enum SlotState : uint32_t { kFree = 0, kInFlight = 1, kDone = 2 };

int DepthBucket(uint64_t n) {
  if (n >= 64) return 6;
  if (n >= 32) return 5;
  if (n >= 16) return 4;
  if (n >= 8) return 3;
  if (n >= 4) return 2;
  if (n >= 2) return 1;
  return 0;
}

int BatchBucket(uint64_t n) {
  if (n == 0) return 0;
  if (n <= 4) return 1;
  if (n <= 8) return 2;
  if (n <= 16) return 3;
  if (n <= 32) return 4;
  if (n <= 64) return 5;
  return 6;
}

struct CpuTimes {
  uint64_t usr_us = 0, sys_us = 0, ctx = 0, majf = 0, minf = 0;
  static CpuTimes Now() {
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    CpuTimes t;
    t.usr_us = static_cast<uint64_t>(ru.ru_utime.tv_sec) * 1000000 + static_cast<uint64_t>(ru.ru_utime.tv_usec);
    t.sys_us = static_cast<uint64_t>(ru.ru_stime.tv_sec) * 1000000 + static_cast<uint64_t>(ru.ru_stime.tv_usec);
    t.ctx = static_cast<uint64_t>(ru.ru_nvcsw + ru.ru_nivcsw);
    t.majf = static_cast<uint64_t>(ru.ru_majflt);
    t.minf = static_cast<uint64_t>(ru.ru_minflt);
    return t;
  }
};

class WorkerLoop {
 public:
  WorkerLoop(const WorkerConfig& c, JobResult* r)
      : c_(c),
        job_(*c.job),
        r_(r),
        clock_(c.clock),
        rng_(c.seed ^ 0x5bd1e995),
        sync_engine_(IsSyncEngine(job_.ioengine) && job_.iodepth == 1) {}
  ~WorkerLoop() {
    // Callbacks may still be returning from their last atomic access.
    while (callbacks_finished_.load(std::memory_order_acquire) != submitted_) std::this_thread::yield();
    std::free(buffers_);
  }

  void Run();

 private:
  struct Slot {
    WorkerLoop* loop = nullptr;
    uint8_t* buf = nullptr;
    Dir dir = kRead;
    bool flush = false;
    bool unmeasured = false;  // overwrite layout or verify read: not in the figures
    uint64_t offset = 0, length = 0;
    uint64_t start_ns = 0, returned_ns = 0, done_ns = 0;
    bool inline_done = false;  // worker-only: done before Submit* returned
    Status status;
    std::atomic<uint32_t> state{kFree};
  };

  Status Prepare();
  Status MainPhase();
  Status Issue(const IoPlanner::Io& io);
  void Submit(Slot* s);
  Status Reap(bool wait);
  Status Account(Slot* s);
  Status Drain();
  Status SyncFlush();
  Status VerifyPhase();
  Status OverwritePhase();
  void PrepareBuffer(Slot* s);
  void FillStatic(uint8_t* p, size_t n);
  void MaybeSample(uint64_t now);
  Status Pace(Dir d);
  bool Stopping() const { return c_.abort != nullptr && c_.abort->load(std::memory_order_relaxed); }

  static void OnDone(Slot* s, Status st) {
    WorkerLoop* w = s->loop;
    s->done_ns = w->clock_->NowNs();
    s->status = std::move(st);
    s->state.store(kDone, std::memory_order_release);
    w->done_seq_.fetch_add(1, std::memory_order_seq_cst);
    // Dekker with Reap(): a waiting worker either sees the new sequence or
    // is told; an inline completion costs no futex call.
    if (w->waiting_.load(std::memory_order_seq_cst)) w->done_seq_.notify_one();
    w->callbacks_finished_.fetch_add(1, std::memory_order_release);  // last access
  }

  const WorkerConfig& c_;
  const Job& job_;
  JobResult* r_;
  Clock* clock_;
  SeededRandom rng_;
  const bool sync_engine_;  // psync and its kin at iodepth 1: each I/O on this thread
  std::unique_ptr<IoPlanner> planner_;
  std::vector<Slot> slots_;
  std::vector<Slot*> free_;
  uint8_t* buffers_ = nullptr;
  uint64_t slot_bytes_ = 0;
  uint64_t inflight_ = 0;
  uint64_t submitted_ = 0;  // worker-only
  std::atomic<uint64_t> callbacks_finished_{0};
  std::atomic<uint32_t> done_seq_{0};
  std::atomic<bool> waiting_{false};

  uint64_t measure_start_ns_ = 0;  // end of ramp_time
  uint64_t end_ns_ = UINT64_MAX;
  uint64_t next_sample_ns_ = 0, last_sample_ns_ = 0;
  uint64_t window_bytes_[kNumDirs] = {}, window_ios_[kNumDirs] = {};
  uint64_t issued_bytes_[kNumDirs] = {}, issued_ios_[kNumDirs] = {};
  uint64_t writes_since_sync_ = 0;
  uint64_t write_sequence_ = 0;
  std::vector<uint64_t> written_;  // verify: bit per write block of the region
  std::shared_ptr<JobLog> log_;    // fio's log files' entries, when the job asks
};

void WorkerLoop::FillStatic(uint8_t* p, size_t n) {
  if (job_.zero_buffers) {
    std::memset(p, 0, n);
    return;
  }
  rng_.Fill(p, n);
  if (job_.buffer_compress_percentage == 0) return;
  // In every 4 KiB chunk, the first pct% are zeros (compressible).
  for (size_t at = 0; at < n; at += 4096) {
    size_t chunk = std::min<size_t>(4096, n - at);
    std::memset(p + at, 0, chunk * job_.buffer_compress_percentage / 100);
  }
}

Status WorkerLoop::Prepare() {
  const uint64_t depth = job_.iodepth;
  slot_bytes_ = (job_.MaxBlockBytes() + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
  void* mem = nullptr;
  if (posix_memalign(&mem, kBufferAlign, slot_bytes_ * depth) != 0) {
    return Status::ResourceExhausted("job " + job_.name + ": cannot allocate I/O buffers");
  }
  buffers_ = static_cast<uint8_t*>(mem);
  FillStatic(buffers_, slot_bytes_ * depth);
  slots_ = std::vector<Slot>(depth);
  free_.reserve(depth);
  for (uint64_t i = 0; i < depth; i++) {
    slots_[i].loop = this;
    slots_[i].buf = buffers_ + i * slot_bytes_;
    free_.push_back(&slots_[depth - 1 - i]);
  }
  planner_ = std::make_unique<IoPlanner>(job_, c_.region_start, c_.region_bytes, c_.seed);
  if (job_.verify != VerifyKind::kNone) {
    written_.assign((c_.region_bytes / job_.bs_bytes[kWrite] + 63) / 64, 0);
  }
  return Status::Ok();
}

void WorkerLoop::PrepareBuffer(Slot* s) {
  if (s->dir != kWrite) return;
  if (job_.verify != VerifyKind::kNone) {
    FillVerifyBlock(job_.verify, s->offset, ++write_sequence_, {s->buf, s->length});
  } else if (job_.refill_buffers) {
    FillStatic(s->buf, s->length);
  }
}

void WorkerLoop::Submit(Slot* s) {
  s->state.store(kInFlight, std::memory_order_relaxed);
  inflight_++;
  submitted_++;
  r_->depths.depth[DepthBucket(inflight_)]++;
  r_->depths.submit[BatchBucket(1)]++;
  Volume& v = *c_.volume;
  auto done = [s](Status st) { OnDone(s, std::move(st)); };
  s->inline_done = false;
  s->start_ns = clock_->NowNs();
  if (sync_engine_) {
    // fio's synchronous engines make the system call on the job's thread:
    // so does the bench, through the volume's blocking calls (no hand-off
    // to an engine thread and back).
    Status st = s->flush            ? v.Flush()
                : s->dir == kRead   ? v.Read(s->offset, {s->buf, s->length})
                : s->dir == kWrite  ? v.Write(s->offset, {s->buf, s->length},
                                              job_.sync ? kFua : kWriteNone)
                                    : v.Trim(s->offset, s->length);
    OnDone(s, std::move(st));
  } else if (s->flush) {
    v.SubmitFlush(done);
  } else if (s->dir == kRead) {
    v.SubmitRead(s->offset, {s->buf, s->length}, done);
  } else if (s->dir == kWrite) {
    v.SubmitWrite(s->offset, {s->buf, s->length}, job_.sync ? kFua : kWriteNone, done);
  } else {
    v.SubmitTrim(s->offset, s->length, done);
  }
  s->returned_ns = clock_->NowNs();
  // Done already (inline, or on an engine thread before Submit* returned):
  // a synchronous I/O as far as the caller could tell.
  s->inline_done = s->state.load(std::memory_order_acquire) == kDone;
}

Status WorkerLoop::Account(Slot* s) {
  inflight_--;
  Status st = std::move(s->status);
  s->status = Status::Ok();
  const bool measured = s->start_ns >= measure_start_ns_ && !s->unmeasured;
  const bool inline_done = s->inline_done;
  const uint64_t lat = s->done_ns - s->start_ns;
  if (st.ok() && s->flush) {
    if (measured) {
      r_->sync_ios++;
      r_->sync_lat_ns.Add(static_cast<double>(lat));
    }
  } else if (st.ok()) {
    const Dir d = s->dir;
    if (d == kWrite && !written_.empty()) {
      uint64_t b = (s->offset - c_.region_start) / job_.bs_bytes[kWrite];
      written_[b / 64] |= uint64_t{1} << (b % 64);
    }
    if (measured) {
      c_.progress->bytes[d].fetch_add(s->length, std::memory_order_relaxed);
      c_.progress->ios[d].fetch_add(1, std::memory_order_relaxed);
      DirStats& ds = r_->dirs[d];
      ds.io_bytes += s->length;
      ds.total_ios++;
      window_bytes_[d] += s->length;
      window_ios_[d]++;
      uint64_t clat = lat;
      std::optional<uint64_t> slat;
      if (!inline_done) {
        // The completion may still have raced the returned_ns stamp.
        const uint64_t submitted = std::min(s->returned_ns, s->done_ns);
        slat = submitted - s->start_ns;
        ds.slat_ns.Add(static_cast<double>(*slat));
        clat = s->done_ns - submitted;
      }
      if (log_) log_->OnIo(s->done_ns, d, s->length, s->offset, lat, clat, slat);
      ds.clat_ns.Add(static_cast<double>(clat));
      ds.lat_ns.Add(static_cast<double>(lat));
      ds.clat_hist.Add(clat);
      r_->lat_bands.Add(clat);
      if (lat >= kSlowIoNs && r_->slow_ios.size() < kMaxSlowIos) {
        r_->slow_ios.push_back(SlowIo{s->start_ns, lat});
      }
    }
  }
  s->state.store(kFree, std::memory_order_relaxed);
  free_.push_back(s);
  if (!st.ok()) {
    return st.WithContext("job " + job_.name + " " + (s->flush ? "flush" : DirName(s->dir)) +
                          " at offset " + std::to_string(s->offset));
  }
  return Status::Ok();
}

Status WorkerLoop::Reap(bool wait) {
  uint64_t reaped = 0;
  Status first_error;
  while (true) {
    uint32_t seq = done_seq_.load(std::memory_order_seq_cst);
    for (Slot& s : slots_) {
      if (s.state.load(std::memory_order_acquire) != kDone) continue;
      Status st = Account(&s);
      if (!st.ok() && first_error.ok()) first_error = std::move(st);
      reaped++;
    }
    if (reaped > 0 || !wait || inflight_ == 0) break;
    waiting_.store(true, std::memory_order_seq_cst);
    if (done_seq_.load(std::memory_order_seq_cst) == seq) done_seq_.wait(seq, std::memory_order_acquire);
    waiting_.store(false, std::memory_order_relaxed);
  }
  if (reaped > 0) r_->depths.complete[BatchBucket(reaped)]++;
  return first_error;
}

Status WorkerLoop::Drain() {
  Status first;
  while (inflight_ > 0) {
    Status s = Reap(true);
    if (!s.ok() && first.ok()) first = std::move(s);
  }
  return first;
}

Status WorkerLoop::SyncFlush() {
  ARC_RETURN_IF_ERROR(Drain());
  Slot* s = free_.back();
  free_.pop_back();
  s->flush = true;
  s->offset = 0;
  s->length = 0;
  Submit(s);
  Status st = Drain();
  s->flush = false;
  return st;
}

Status WorkerLoop::Pace(Dir d) {
  uint64_t due = 0;
  const uint64_t rate = job_.rate_bytes_per_sec[d], iops = job_.rate_iops[d];
  if (rate != 0) {
    due = std::max(due, static_cast<uint64_t>(static_cast<long double>(issued_bytes_[d]) * 1e9L / rate));
  }
  if (iops != 0) {
    due = std::max(due, static_cast<uint64_t>(static_cast<long double>(issued_ios_[d]) * 1e9L / iops));
  }
  if (due == 0) return Status::Ok();
  due += measure_start_ns_;
  if (clock_->NowNs() >= due) return Status::Ok();
  ARC_RETURN_IF_ERROR(Drain());
  clock_->SleepUntilNs(std::min(due, end_ns_));
  return Status::Ok();
}

void WorkerLoop::MaybeSample(uint64_t now) {
  if (now < next_sample_ns_) return;
  const double elapsed_ms = static_cast<double>(now - last_sample_ns_) / 1e6;
  for (int d = 0; d < kNumDirs; d++) {
    bool active = (d == kRead && job_.Reads()) || (d == kWrite && job_.Writes()) ||
                  (d == kTrim && job_.Trims());
    if (active && elapsed_ms > 0) {
      r_->dirs[d].bw_kib_samples.Add(
          static_cast<double>(static_cast<uint64_t>(window_bytes_[d] * 1000.0 / elapsed_ms / 1024)));
      r_->dirs[d].iops_samples.Add(
          static_cast<double>(static_cast<uint64_t>(window_ios_[d] * 1000.0 / elapsed_ms)));
    }
    window_bytes_[d] = 0;
    window_ios_[d] = 0;
  }
  last_sample_ns_ = now;
  next_sample_ns_ = now + c_.sample_window_ns;
}

Status WorkerLoop::Issue(const IoPlanner::Io& io) {
  ARC_RETURN_IF_ERROR(Pace(io.dir));
  while (free_.empty()) ARC_RETURN_IF_ERROR(Reap(true));
  Slot* s = free_.back();
  free_.pop_back();
  s->dir = io.dir;
  s->offset = io.offset;
  s->length = io.length;
  PrepareBuffer(s);
  issued_bytes_[io.dir] += io.length;
  issued_ios_[io.dir]++;
  Submit(s);
  if (io.dir == kWrite) {
    uint64_t every = job_.fsync_every ? job_.fsync_every : job_.fdatasync_every;
    if (every != 0 && ++writes_since_sync_ >= every) {
      writes_since_sync_ = 0;
      ARC_RETURN_IF_ERROR(SyncFlush());
    }
  }
  if (job_.thinktime_ns != 0) {
    ARC_RETURN_IF_ERROR(Drain());
    clock_->SleepForNs(job_.thinktime_ns);
  }
  return Status::Ok();
}

Status WorkerLoop::MainPhase() {
  uint64_t loops_done = 0;
  while (!Stopping()) {
    uint64_t now = clock_->NowNs();
    if (now >= end_ns_) break;
    if (measure_start_ns_ > 0 && now >= measure_start_ns_ && last_sample_ns_ == 0) {
      last_sample_ns_ = now;
      next_sample_ns_ = now + c_.sample_window_ns;
    }
    if (last_sample_ns_ != 0) MaybeSample(now);
    if (planner_->PassDone()) {
      loops_done++;
      if (!job_.time_based && loops_done >= job_.loops) break;
      planner_->NewPass();
    }
    ARC_RETURN_IF_ERROR(Issue(planner_->Next()));
    if (inflight_ > 0) ARC_RETURN_IF_ERROR(Reap(inflight_ >= job_.iodepth));
  }
  return Drain();
}

// overwrite=1: write the whole region once, sequentially, before the job
// (fio lays the file out so that the job overwrites written blocks).
Status WorkerLoop::OverwritePhase() {
  for (uint64_t at = 0; at < c_.region_bytes && !Stopping();) {
    while (free_.empty()) ARC_RETURN_IF_ERROR(Reap(true));
    Slot* s = free_.back();
    free_.pop_back();
    s->dir = kWrite;
    s->unmeasured = true;
    s->offset = c_.region_start + at;
    s->length = std::min(slot_bytes_, c_.region_bytes - at);
    Submit(s);
    at += s->length;
    ARC_RETURN_IF_ERROR(Reap(false));
  }
  Status st = Drain();
  for (Slot& s : slots_) s.unmeasured = false;
  return st;
}

Status WorkerLoop::VerifyPhase() {
  const uint64_t bs = job_.bs_bytes[kWrite];
  ARC_RETURN_IF_ERROR(Drain());
  for (uint64_t b = 0; b < written_.size() * 64; b++) {
    if (!((written_[b / 64] >> (b % 64)) & 1)) continue;
    if (Stopping()) break;
    // One read at a time through the slots (no allocation per block).
    Slot* s = free_.back();
    free_.pop_back();
    s->dir = kRead;
    s->unmeasured = true;
    s->offset = c_.region_start + b * bs;
    s->length = bs;
    Submit(s);
    Status read = Drain();
    s->unmeasured = false;
    ARC_RETURN_IF_ERROR(read);
    r_->verified_blocks++;
    Status v = CheckVerifyBlock(job_.verify, s->offset, {s->buf, bs});
    if (!v.ok()) {
      r_->verify_errors++;
      if (r_->first_verify_error.empty()) r_->first_verify_error = v.message();
      if (job_.verify_fatal) return v.WithContext("job " + job_.name);
    }
  }
  if (r_->verify_errors > 0) {
    return Status::Corruption("job " + job_.name + ": " + std::to_string(r_->verify_errors) +
                              " blocks failed verification; first: " + r_->first_verify_error);
  }
  return Status::Ok();
}

void WorkerLoop::Run() {
  Status st = Prepare();
  const CpuTimes cpu0 = CpuTimes::Now();
  uint64_t t0 = clock_->NowNs();
  if (st.ok() && job_.startdelay_ns != 0) clock_->SleepForNs(job_.startdelay_ns);
  if (st.ok() && job_.overwrite && job_.Writes()) st = OverwritePhase();
  uint64_t start = clock_->NowNs();
  measure_start_ns_ = start + job_.ramp_time_ns;
  if (c_.runtime_ns != 0) end_ns_ = measure_start_ns_ + c_.runtime_ns;
  if (c_.log_options) log_ = std::make_shared<JobLog>(*c_.log_options, measure_start_ns_);
  c_.progress->running.store(true, std::memory_order_relaxed);
  r_->start_unix_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch()).count());
  if (st.ok()) st = MainPhase();
  uint64_t io_end = clock_->NowNs();
  if (log_) {
    log_->Finish(io_end);
    r_->log = log_;
  }
  if (st.ok() && job_.end_fsync && job_.Writes()) st = SyncFlush();
  if (st.ok() && !Stopping() && job_.verify != VerifyKind::kNone && job_.do_verify) st = VerifyPhase();
  Status drained = Drain();
  if (st.ok()) st = drained;
  const uint64_t run_ms = io_end > measure_start_ns_ ? (io_end - measure_start_ns_ + 500000) / 1000000 : 0;
  for (int d = 0; d < kNumDirs; d++) {
    if (r_->dirs[d].total_ios > 0) r_->dirs[d].runtime_ms = std::max<uint64_t>(1, run_ms);
  }
  const uint64_t t_end = clock_->NowNs();
  r_->job_runtime_ms = (t_end - t0) / 1000000;
  r_->end_unix_ms = r_->start_unix_ms + (t_end - start) / 1000000;
  const CpuTimes cpu1 = CpuTimes::Now();
  const double wall_us = std::max(1.0, static_cast<double>(t_end - t0) / 1000.0);
  r_->usr_cpu_pct = static_cast<double>(cpu1.usr_us - cpu0.usr_us) * 100.0 / wall_us;
  r_->sys_cpu_pct = static_cast<double>(cpu1.sys_us - cpu0.sys_us) * 100.0 / wall_us;
  r_->ctx = cpu1.ctx - cpu0.ctx;
  r_->majf = cpu1.majf - cpu0.majf;
  r_->minf = cpu1.minf - cpu0.minf;
  if (!st.ok()) {
    r_->error = st.code() == StatusCode::kCorruption ? 84 /* EILSEQ, as fio's verify */ : 5 /* EIO */;
    r_->error_text = st.ToString();
  }
  c_.progress->finished.store(true, std::memory_order_relaxed);
}

}  // namespace

void RunWorker(const WorkerConfig& config, JobResult* result) {
  WorkerLoop loop(config, result);
  loop.Run();
}

}  // namespace arcstore::bench
