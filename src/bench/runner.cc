// Runner: the bench's theory of operation.
//
// Purpose: run fio job files unchanged, in-process, against volumes that a
// VolumeProvider hands out (engine pools, raw files, memory), and collect
// fio's figures plus arcstore's own view of each job.
//
//   JobSet ──> batches (split at stonewall) ──> for each batch:
//     for each job, each clone: OpenVolume(name, size) (a new volume a job
//       reads is laid out, as fio lays out a new file)
//     provider.DropCaches() if --cold
//     stats_hook() ──────────────────────> thread: RunWorker ──> stats_hook()
//     status thread (optional): sums Progress, prints fio's status line
//     sampler thread (optional): stats_hook() every stats_sample_ns
//     txg thread (optional): txg_hook() every txg_poll_ns, syncs kept by txg
//     stall watch (watch_stalls): wakes every period, counts the machine's
//       stalls (stall_watch.h), given to every job of the batch
//     join ──> JobResult per clone ──> fold (group_reporting) ──> RunResult
//
// Volume names: the base name of `filename` (all clones share it), else
// filename_format ($jobname.$jobnum.$filenum: one volume per clone, as fio
// makes one file per clone). Region: [offset, offset + size) of the volume,
// clipped to its end; a missing volume is created with filesize (else size).
//
// fio's log files: a clone of a job with write_bw_log/iops/lat keeps its
// entries in a JobLog (job_log.h); they move to RunResult::logs, by thread
// number (1.. over all clones in order, as fio numbers them), with the
// machine stalls of the clone's batch, before clones are folded, and the
// txg syncs seen go to RunResult::txg_spans. Writing the files is the
// caller's (log_files.h).
//
// Group ids: the first job is group 0; each later job with stonewall or
// new_group opens the next group.
//
// Threads and locking: one thread per clone, one optional status thread; no
// shared mutable state between workers except the Volume (its own
// contract) and the abort flag. Results are written by each worker into its
// own JobResult and read only after join.
//
// Limits: at most 4096 workers in one batch (kMaxWorkers); sizes and
// runtimes as parsed (job.h); max_log_entries per log and clone, and per-I/O
// logs of a batch within kMaxLogMemoryBytes; at most 1M txg spans. Tunables: RunnerOptions (runner.h).
// Stats: none of its own; it reports the engine's through the hook.

#include "bench/runner.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <thread>

#include "base/thread_name.h"
#include "bench/status_line.h"
#include "bench/worker.h"

namespace arcstore::bench {
namespace {

constexpr size_t kMaxWorkers = 4096;

uint64_t UnixMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string VolumeName(const Job& job, uint32_t clone) {
  if (!job.filename.empty()) return Basename(job.filename);
  std::string out = job.filename_format;
  auto replace = [&out](const std::string& key, const std::string& value) {
    for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + value.size())) {
      out.replace(at, key.size(), value);
    }
  };
  replace("$jobname", job.name);
  replace("$jobnum", std::to_string(clone));
  replace("$filenum", "0");
  return Basename(out);
}

// One clone, ready to run.
struct Task {
  const Job* job = nullptr;
  int groupid = 0;
  uint32_t clone = 0;
  WorkerConfig config;
  std::unique_ptr<Progress> progress;
  JobResult result;
};

uint64_t CapSize(const SizeValue& v, uint64_t whole, const RunnerOptions& o) {
  uint64_t b = v.Resolve(whole);
  if (o.max_size_bytes) b = std::min(b, *o.max_size_bytes);
  return b;
}

bool Unset(const SizeValue& v) { return !v.percent && v.bytes == 0; }

Status PrepareTask(Task* t, const RunnerOptions& o, Clock* clock, const std::atomic<bool>* abort) {
  const Job& j = *t->job;
  VolumeSpec req;
  req.name = VolumeName(j, t->clone);
  req.directory = j.directory;
  req.direct = j.direct;
  req.invalidate = j.invalidate;
  req.lay_out = j.Reads();
  const SizeValue& sizing = Unset(j.filesize) ? j.size : j.filesize;
  req.size_bytes = sizing.percent ? 0 : CapSize(sizing, 0, o);
  auto vol = o.provider->OpenVolume(req);
  if (!vol.ok()) {
    if (vol.status().code() == StatusCode::kNotFound && req.size_bytes == 0) {
      return Status::InvalidArgument("job '" + j.name + "': volume '" + req.name +
                                     "' does not exist and option 'size' is not set");
    }
    return vol.status().WithContext("job '" + j.name + "': volume '" + req.name + "'");
  }
  const uint64_t vol_bytes = (*vol)->info().size_bytes;
  const uint64_t offset = std::min(j.offset.Resolve(vol_bytes), vol_bytes);
  uint64_t io_bytes = Unset(j.size) ? vol_bytes : CapSize(j.size, vol_bytes, o);
  io_bytes = std::min(io_bytes, vol_bytes - offset);
  const Dir main_dir = j.Trims() ? kTrim : (j.Writes() ? kWrite : kRead);
  if (io_bytes == 0 || io_bytes < j.MinBlockBytes(main_dir)) {
    return Status::InvalidArgument("job '" + j.name + "': region of " + std::to_string(io_bytes) +
                                   " bytes (option 'size'/'offset') is smaller than the block size");
  }
  uint64_t runtime = j.runtime_ns;
  if (o.max_runtime_ns) runtime = runtime == 0 ? *o.max_runtime_ns : std::min(runtime, *o.max_runtime_ns);
  t->progress = std::make_unique<Progress>();
  t->progress->planned_ns = j.time_based ? runtime + j.ramp_time_ns + j.startdelay_ns : 0;
  t->progress->planned_bytes = io_bytes * (j.time_based ? 1 : j.loops);
  WorkerConfig& c = t->config;
  c.job = &j;
  c.volume = std::move(*vol);
  c.region_start = offset;
  c.region_bytes = io_bytes;
  c.runtime_ns = runtime;
  uint64_t base = j.randseed;
  if (!j.randrepeat && !j.randseed_set) base ^= static_cast<uint64_t>(clock->NowNs());
  c.seed = base * 0x9E3779B97F4A7C15ull + t->clone + 1;
  c.sample_window_ns = o.sample_window_ns;
  if (o.logs && j.WritesLogs()) {
    JobLogOptions lo;
    lo.kinds[static_cast<int>(LogKind::kBw)] = j.bw_log_prefix.has_value();
    lo.kinds[static_cast<int>(LogKind::kIops)] = j.iops_log_prefix.has_value();
    for (LogKind k : {LogKind::kLat, LogKind::kClat, LogKind::kSlat}) {
      lo.kinds[static_cast<int>(k)] = j.lat_log_prefix.has_value();
    }
    lo.active_dirs = {j.Reads(), j.Writes(), j.Trims()};
    lo.avg_ms = j.log_avg_ms;
    lo.max_value = j.log_max_value;
    lo.max_entries = o.max_log_entries;
    ARC_RETURN_IF_ERROR(lo.Validate());
    c.log_options = lo;
  }
  c.clock = clock;
  c.progress = t->progress.get();
  c.abort = abort;
  t->result.name = j.name;
  t->result.groupid = t->groupid;
  t->result.job = &j;
  t->result.volume_names = {req.name};
  t->result.region_bytes = io_bytes;
  return Status::Ok();
}

// Samples the engine's gauges until `done`; stops at the first hook error.
void SampleLoop(const RunnerOptions& o, Clock* clock, const std::atomic<bool>* done,
                StatsSeries* series) {
  const uint64_t start = clock->NowNs();
  constexpr size_t kMaxSamples = 100000;
  while (!done->load(std::memory_order_acquire) && series->t_ms.size() < kMaxSamples) {
    auto snap = o.stats_hook();
    if (!snap.ok()) return;
    series->t_ms.push_back((clock->NowNs() - start) / 1000000);
    series->arc_size.push_back(snap->Get("arcstats", "size", -1));
    series->arc_c.push_back(snap->Get("arcstats", "c", -1));
    series->dirty_bytes.push_back(snap->Get("txg", "dirty_bytes", -1));
    series->dirty_max_bytes.push_back(snap->Get("txg", "dirty_max_bytes", -1));
    uint64_t next = clock->NowNs() + o.stats_sample_ns;
    while (!done->load(std::memory_order_acquire) && clock->NowNs() < next) {
      clock->SleepForNs(std::min<uint64_t>(10'000'000, o.stats_sample_ns));
    }
  }
}

// The txg syncs seen so far, by txg; polled from the pool's history,
// which keeps only its last rows: a gap between polls is counted.
struct TxgCollector {
  std::map<uint64_t, TxgSpan> spans;
  static constexpr size_t kMaxSpans = 1'000'000;

  void Poll(const TxgHook& hook) {
    auto rows = hook();
    if (!rows.ok()) return;
    for (TxgSpan& s : *rows) {
      if (spans.size() >= kMaxSpans) return;
      spans.emplace(s.txg, std::move(s));
    }
  }
  // Every txg is synced in turn: a number missing between the first and
  // the last seen left the history between two polls.
  uint64_t Missed() const {
    if (spans.empty()) return 0;
    return spans.rbegin()->first - spans.begin()->first + 1 - spans.size();
  }
};

void TxgLoop(const RunnerOptions& o, Clock* clock, const std::atomic<bool>* done, TxgCollector* c) {
  while (!done->load(std::memory_order_acquire)) {
    c->Poll(o.txg_hook);
    const uint64_t next = clock->NowNs() + o.txg_poll_ns;
    while (!done->load(std::memory_order_acquire) && clock->NowNs() < next) {
      clock->SleepForNs(std::min<uint64_t>(10'000'000, o.txg_poll_ns));
    }
  }
}

void StatusLoop(const std::vector<std::unique_ptr<Task>>& tasks, const RunnerOptions& o,
                Clock* clock, const std::atomic<bool>* done) {
  StatusLineState state;
  const uint64_t start = clock->NowNs();
  while (!done->load(std::memory_order_acquire)) {
    uint64_t next = clock->NowNs() + o.status_interval_ns;
    while (!done->load(std::memory_order_acquire) && clock->NowNs() < next) {
      clock->SleepForNs(std::min<uint64_t>(50'000'000, o.status_interval_ns));
    }
    std::vector<WorkerProgressView> views;
    for (const auto& t : tasks) views.push_back(ViewOf(*t->progress, *t->job));
    std::string line = state.Update(views, clock->NowNs() - start);
    std::fprintf(o.status_out, "\r%s", line.c_str());
    std::fflush(o.status_out);
  }
  std::fprintf(o.status_out, "\r%*s\r", 100, "");
  std::fflush(o.status_out);
}

// Per-I/O logs grow with the I/O count: refuse a batch whose logs could
// pass kMaxLogMemoryBytes before it starts.
Status CheckLogMemory(const std::vector<std::unique_ptr<Task>>& tasks, const RunnerOptions& o) {
  uint64_t logs = 0;
  for (const auto& t : tasks) {
    const auto& lo = t->config.log_options;
    if (!lo || lo->avg_ms != 0) continue;
    for (bool k : lo->kinds) logs += k ? 1 : 0;
  }
  const uint64_t bytes = logs * o.max_log_entries * sizeof(LogEntry);
  if (bytes > kMaxLogMemoryBytes) {
    return Status::ResourceExhausted(
        "option 'log_avg_msec': per-I/O logs (log_avg_msec=0) of this batch could hold " +
        std::to_string(logs) + " logs of up to " + std::to_string(o.max_log_entries) +
        " entries, more than " + std::to_string(kMaxLogMemoryBytes >> 20) +
        " MiB; set log_avg_msec or log fewer clones");
  }
  return Status::Ok();
}

Status RunBatch(std::vector<std::unique_ptr<Task>>& tasks, const RunnerOptions& o, Clock* clock,
                TxgCollector* txgs) {
  static const std::atomic<bool> kNever{false};
  const std::atomic<bool>* abort = o.stop != nullptr ? o.stop : &kNever;
  // Volumes first (a new one a job reads is laid out there), then the cold
  // cache and the "before" snapshot: neither the layout's writes nor its
  // cached data count in the job.
  for (auto& t : tasks) ARC_RETURN_IF_ERROR(PrepareTask(t.get(), o, clock, abort));
  ARC_RETURN_IF_ERROR(CheckLogMemory(tasks, o));
  std::shared_ptr<const stats::Snapshot> before;
  if (o.cold) ARC_RETURN_IF_ERROR(o.provider->DropCaches());
  if (o.stats_hook) {
    ARC_ASSIGN_OR_RETURN(stats::Snapshot s, o.stats_hook());
    before = std::make_shared<stats::Snapshot>(std::move(s));
  }
  std::atomic<bool> all_done{false};
  std::thread status, sampler, txg_poller, stall_watch;
  auto stalls = std::make_shared<MachineStalls>();
  if (o.watch_stalls) {
    stall_watch = std::thread([&o, clock, &all_done, stalls] {
      NameThisThread("stall_watch");
      WatchStalls(o.stall_options, clock, &all_done, stalls.get());
    });
  }
  if (o.status_out != nullptr) status = std::thread(StatusLoop, std::cref(tasks), std::cref(o), clock, &all_done);
  auto series = std::make_shared<StatsSeries>();
  if (o.stats_hook && o.stats_sample_ns != 0) {
    sampler = std::thread(SampleLoop, std::cref(o), clock, &all_done, series.get());
  }
  if (o.txg_hook) txg_poller = std::thread(TxgLoop, std::cref(o), clock, &all_done, txgs);
  std::vector<std::thread> threads;
  threads.reserve(tasks.size());
  for (auto& t : tasks) {
    Task* task = t.get();
    threads.emplace_back([task] { RunWorker(task->config, &task->result); });
  }
  for (auto& th : threads) th.join();
  all_done.store(true, std::memory_order_release);
  if (status.joinable()) status.join();
  if (sampler.joinable()) sampler.join();
  if (txg_poller.joinable()) txg_poller.join();
  if (stall_watch.joinable()) {
    stall_watch.join();
    for (auto& t : tasks) t->result.machine_stalls = stalls;
  }
  if (o.txg_hook) txgs->Poll(o.txg_hook);
  for (auto& t : tasks) t->config.volume.reset();
  if (o.stats_hook) {
    ARC_ASSIGN_OR_RETURN(stats::Snapshot after, o.stats_hook());
    auto delta = std::make_shared<const stats::Snapshot>(stats::Delta(*before, after));
    for (auto& t : tasks) {
      t->result.arcstore_delta = delta;
      if (!series->t_ms.empty()) t->result.arcstore_series = series;
    }
  }
  return Status::Ok();
}

// Folds clones of group_reporting groups into one result per group.
std::vector<JobResult> Fold(std::vector<JobResult> in) {
  std::vector<JobResult> out;
  int folded_group = -1;
  for (JobResult& r : in) {
    bool grouped = r.job != nullptr && r.job->group_reporting;
    if (grouped && folded_group == r.groupid && !out.empty() && out.back().groupid == r.groupid) {
      out.back().Merge(r);
      continue;
    }
    folded_group = grouped ? r.groupid : -1;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Status RunnerOptions::Validate() const {
  if (provider == nullptr) return Status::InvalidArgument("RunnerOptions.provider: required");
  if (watch_stalls) ARC_RETURN_IF_ERROR(stall_options.Validate());
  if (sample_window_ns < 1'000'000) {
    return Status::InvalidArgument("RunnerOptions.sample_window_ns: below 1 ms");
  }
  if (status_out != nullptr && status_interval_ns < 10'000'000) {
    return Status::InvalidArgument("RunnerOptions.status_interval_ns: below 10 ms");
  }
  if (max_runtime_ns && *max_runtime_ns == 0) {
    return Status::InvalidArgument("RunnerOptions.max_runtime_ns: must not be 0");
  }
  if (stats_sample_ns != 0 && stats_sample_ns < 10'000'000) {
    return Status::InvalidArgument("RunnerOptions.stats_sample_ns: below 10 ms");
  }
  if (max_log_entries == 0 || max_log_entries > (uint64_t{1} << 28)) {
    return Status::InvalidArgument("RunnerOptions.max_log_entries: must be 1..2^28");
  }
  if (txg_hook && txg_poll_ns < 10'000'000) {
    return Status::InvalidArgument("RunnerOptions.txg_poll_ns: below 10 ms");
  }
  if (max_size_bytes && *max_size_bytes == 0) {
    return Status::InvalidArgument("RunnerOptions.max_size_bytes: must not be 0");
  }
  return Status::Ok();
}

Result<RunResult> RunJobs(const JobSet& set, const RunnerOptions& o) {
  ARC_RETURN_IF_ERROR(o.Validate());
  Clock* clock = o.clock != nullptr ? o.clock : DefaultClock();
  RunResult run;
  run.global_written = set.global_written;
  run.timestamp_unix_ms = UnixMs();
  run.timestamp_unix_s = run.timestamp_unix_ms / 1000;
  std::vector<JobResult> all;
  TxgCollector txgs;
  uint32_t thread_number = 0;
  int group = 0;
  size_t i = 0;
  while (i < set.jobs.size()) {
    std::vector<std::unique_ptr<Task>> batch;
    size_t workers = 0;
    do {
      const Job& j = set.jobs[i];
      if (i > 0 && (j.stonewall || j.new_group)) group++;
      for (uint32_t c = 0; c < j.numjobs; c++) {
        auto t = std::make_unique<Task>();
        t->job = &j;
        t->groupid = group;
        t->clone = c;
        t->result.thread_number = ++thread_number;
        batch.push_back(std::move(t));
      }
      workers += j.numjobs;
      if (workers > kMaxWorkers) {
        return Status::ResourceExhausted("more than " + std::to_string(kMaxWorkers) +
                                         " workers in one batch");
      }
      i++;
    } while (i < set.jobs.size() && !set.jobs[i].stonewall);
    if (o.stop != nullptr && o.stop->load(std::memory_order_relaxed)) break;
    ARC_RETURN_IF_ERROR(RunBatch(batch, o, clock, &txgs));
    for (auto& t : batch) {
      if (t->result.log) {
        run.logs.push_back({t->job, t->result.thread_number, std::move(t->result.log),
                            t->result.machine_stalls});
        t->result.log.reset();
      }
      all.push_back(std::move(t->result));
    }
  }
  run.txg_missed = txgs.Missed();
  for (auto& [txg, span] : txgs.spans) run.txg_spans.push_back(std::move(span));
  run.jobs = Fold(std::move(all));
  run.groups = ComputeGroups(run.jobs);
  return run;
}

}  // namespace arcstore::bench
