// arcstore bench: fio job files (and fio-style command-line jobs) run
// in-process against arcstore pool volumes, reported as fio reports them,
// plus arcstore's own view of what the figures measured (src/bench).
//
//   arcstore bench                      temporary pool, 1 GiB volume filled,
//                                       the seeds' 4 KiB random-write job, 20 s
//   arcstore bench JOB.fio... [--pool P] [--arc-max SIZE] [--cold] [--sparse]
//                  [--output-format normal|json|json+] [--output FILE]
//   arcstore bench --name=x --rw=randwrite --bs=4k ...
//   arcstore bench --compare BASE.json RESULT.json [--threshold PCT]
//   arcstore bench JOB.fio --print-fio-command [--nbd-socket PATH]
//   arcstore bench [JOB.fio] --write_bw_log=P --log_avg_msec=500 ...
//
// fio options given without a --name (e.g. --write_bw_log=P) apply to every
// job of the job files, overriding theirs; with no job file, to the seeds'
// random-write job (not to its fill). fio's log files (bench/log_files.h)
// are created new before the pool opens (--force: replace) and written
// after the run, with the pool's txg syncs in P_txg.N.log.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "arcstore/pool.h"
#include "base/units.h"
#include "bench/compare.h"
#include "bench/fio_command.h"
#include "bench/file_volume.h"
#include "bench/fio_format.h"
#include "bench/job_file.h"
#include "bench/log_files.h"
#include "bench/pool_provider.h"
#include "bench/report.h"
#include "bench/runner.h"
#include "cli/commands.h"
#include "cli/observe.h"
#include "cli/progress.h"
#include "cli/report_sink.h"
#include "format/output_file.h"
#include "tools/source/pool_access.h"
#ifdef ARCSTORE_HAVE_DOCTOR
#include "tools/doctor/doctor.h"
#include "tools/doctor/report_format.h"
#endif

namespace arcstore::cli {
namespace {

namespace fs = std::filesystem;
using bench::JobSet;

// Ctrl-C ends the running jobs, which report what they did (as fio does);
// a second Ctrl-C kills the process. A signal handler can only reach a
// lock-free atomic with static storage: this one flag is the exception to
// "no mutable globals".
std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) {
  g_interrupted.store(true);
  signal(SIGINT, SIG_DFL);
}

// The seeds' job (seed 000) after a 1 MiB sequential fill of its 1 GiB
// volume, as issue 5 measures it; 20 s instead of 60.
constexpr const char* kDefaultJobs =
    "[fill]\nfilename=vol1g\nsize=1G\nbs=1M\nrw=write\niodepth=8\nend_fsync=1\n"
    "[randwrite-4K]\nstonewall\nfilename=vol1g\nsize=1G\nbs=4K\nrw=randwrite\n"
    "time_based\nruntime=20\n";

struct BenchArgs {
  std::vector<std::string> job_files;
  std::string pool;
  std::string arc_max;
  std::string arc_policy = "arc";
  std::string arc_pretouch;
  std::string arc_grow_ahead;
  std::string recordsize = "128K";
  bool cold = false;
  bool sparse = false;
  bool no_intent_log = false;
  std::string io_backend = "auto";
  std::string output_format = "normal";
  std::string output;
  bool force = false;
  std::vector<std::string> compare;
  double threshold_pct = 10;
  bool print_fio_command = false;
  std::string nbd_socket = "/tmp/arcstore.sock";
  std::string max_runtime;
  std::string max_size;
  std::string baseline_dir;
  bool print_stats = false;
  std::vector<std::string> cache_devices;
  std::string pool_read_latency;
};

void Check(const Status& s, const std::string& what) {
  if (!s.ok()) throw CommandFailed(what + ": " + s.ToString());
}

// The jobs' volumes' total size (for sizing a new pool): per distinct
// filename its largest size; per clone when each clone has its own volume.
uint64_t TotalVolumeBytes(const JobSet& set) {
  std::map<std::string, uint64_t> by_name;
  uint64_t per_clone = 0;
  for (const auto& j : set.jobs) {
    const auto& s = (j.filesize.bytes != 0 || j.filesize.percent) ? j.filesize : j.size;
    uint64_t bytes = s.percent ? 0 : s.bytes;
    if (j.filename.empty()) {
      per_clone += bytes * j.numjobs;
    } else {
      uint64_t& b = by_name[j.filename];
      b = std::max(b, bytes);
    }
  }
  uint64_t total = per_clone;
  for (const auto& [name, b] : by_name) total += b;
  return total;
}

bool HasJobName(const std::vector<std::string>& extras) {
  return std::any_of(extras.begin(), extras.end(),
                     [](const std::string& e) { return e.rfind("--name=", 0) == 0; });
}

// fio options without a --name: applied to `jobs` (each overriding the
// job's own value), then every job is checked again.
void ApplyOverrides(const std::vector<std::string>& extras, std::vector<bench::Job*> jobs) {
  for (size_t i = 0; i < extras.size(); i++) {
    const std::string where = "command line argument " + std::to_string(i + 1);
    std::string_view e = extras[i];
    if (e.rfind("--", 0) != 0) throw UsageError(where + ": '" + extras[i] + "' is not --option[=value]");
    e.remove_prefix(2);
    const size_t eq = e.find('=');
    const std::string key(e.substr(0, eq));
    const std::string value = eq == std::string_view::npos ? "" : std::string(e.substr(eq + 1));
    for (bench::Job* j : jobs) {
      Status s = bench::ApplyJobOption(j, key, value, eq != std::string_view::npos);
      if (!s.ok()) throw CommandFailed(where + ": " + s.message());
      j->written.emplace_back(bench::Lowercase(key), value);
    }
  }
  for (bench::Job* j : jobs) Check(j->Validate(), "command line");
}

JobSet LoadJobs(const BenchArgs& a, const std::vector<std::string>& extras, bool* default_mode) {
  bench::JobEnv env = bench::JobEnv::FromSystem();
  const bool overrides = !extras.empty() && !HasJobName(extras);
  *default_mode = a.job_files.empty() && (extras.empty() || overrides);
  if (*default_mode) {
    auto set = bench::ParseJobText(kDefaultJobs, "default jobs", ".", env);
    Check(set.status().ok() ? Status::Ok() : set.status(), "default jobs");
    if (overrides) ApplyOverrides(extras, {&set->jobs.back()});
    return std::move(*set);
  }
  if (overrides) {
    auto files = bench::ParseJobFiles(a.job_files, env);
    if (!files.ok()) throw CommandFailed(files.status().message());
    std::vector<bench::Job*> all;
    for (auto& j : files->jobs) all.push_back(&j);
    ApplyOverrides(extras, all);
    return std::move(*files);
  }
  JobSet set;
  if (!a.job_files.empty()) {
    auto files = bench::ParseJobFiles(a.job_files, env);
    if (!files.ok()) throw CommandFailed(files.status().message());
    set = std::move(*files);
  }
  if (!extras.empty()) {
    auto cmd = bench::ParseCommandLineJobs(extras, env);
    if (!cmd.ok()) throw CommandFailed(cmd.status().message());
    if (set.global_written.empty()) set.global_written = cmd->global_written;
    for (auto& j : cmd->jobs) set.jobs.push_back(std::move(j));
  }
  return set;
}

// A pool for the run: the named one (created when missing) or a temporary
// one that is removed at the end.
struct RunPool {
  std::string path;
  std::string temp_dir;  // non-empty: remove afterwards
  bool created = false;
  uint64_t created_bytes = 0;
  std::unique_ptr<Pool> pool;

  ~RunPool() {
    if (pool) pool->Close().IgnoreError();
    pool.reset();
    if (!temp_dir.empty()) {
      std::error_code ec;
      fs::remove_all(temp_dir, ec);
    }
  }
};

void OpenRunPool(const BenchArgs& a, const JobSet& set, RunPool* rp) {
  rp->path = a.pool;
  if (rp->path.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "arcstore-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw CommandFailed("cannot make a temporary folder");
    rp->temp_dir = tmpl;
    rp->path = tmpl + "/pool";
  }
  if (!fs::exists(rp->path)) {
    PoolCreateOptions co;
    co.size_bytes = std::max<uint64_t>(8 * kGiB, 5 * TotalVolumeBytes(set));
    co.size_bytes = (co.size_bytes + kMiB - 1) / kMiB * kMiB;
    co.sparse = a.sparse;
    std::fprintf(stderr, "arcstore bench: creating pool %s (%s, %s)\n", rp->path.c_str(),
                 FormatBytes(co.size_bytes).c_str(), a.sparse ? "sparse" : "written once");
    ProgressLine progress("arcstore bench: writing " + rp->path + " once");
    co.progress = progress.callback();
    Status created = Pool::Create(rp->path, co);
    progress.Done();
    Check(created, "creating pool " + rp->path);
    rp->created = true;
    rp->created_bytes = co.size_bytes;
  }
  PoolOptions po;
  if (!a.arc_max.empty()) po.arc_max_bytes = SizeArg("--arc-max", a.arc_max);
  po.arc_policy = a.arc_policy;
  if (!a.arc_pretouch.empty()) {
    po.arc_pretouch_bytes = SizeArg("--arc-pretouch", a.arc_pretouch);
    po.arc_pretouch_wait = true;  // the jobs start on memory already written
  }
  if (!a.arc_grow_ahead.empty()) {
    po.arc_grow_ahead_bytes = SizeArg("--arc-grow-ahead", a.arc_grow_ahead);
  }
  po.intent_log = !a.no_intent_log;
  po.io.backend = a.io_backend;
  // Writes land in memory (the txg writes them later) and cached reads need
  // no device: such I/O completes fastest on the job's own thread, as fio's
  // psync does. Only reads at a queue depth above 1 gain from the pool's
  // work queue (several device reads at once).
  po.work_threads = 0;
  for (const auto& j : set.jobs) {
    const bool reads = j.rw != bench::RwPattern::kWrite && j.rw != bench::RwPattern::kRandWrite &&
                       j.rw != bench::RwPattern::kTrim && j.rw != bench::RwPattern::kRandTrim;
    if (reads && j.iodepth > 1) po.work_threads = PoolOptions().work_threads;
  }
  if (!a.pool_read_latency.empty()) {
    auto ns = ParseDurationNs(a.pool_read_latency, DurationUnit::kMs);
    if (!ns.ok()) throw UsageError("--pool-read-latency: " + ns.status().message());
    po.io.read_latency_ns = *ns;
  }
  auto p = Pool::Open(rp->path, po);
  if (!p.ok()) throw CommandFailed("cannot open pool " + rp->path + ": " + p.status().ToString());
  rp->pool = std::move(*p);
  // Cache devices the pool does not have yet (a pool may keep them from an
  // earlier run).
  const PoolInfo info = rp->pool->Info();
  for (const std::string& c : a.cache_devices) {
    const std::string path = fs::absolute(c).lexically_normal().string();
    bool have = false;
    for (const auto& d : info.cache_devices) have = have || d.path == path;
    if (!have) Check(rp->pool->AddCache(path), "--cache-device " + path);
  }
}

// The pool's txg syncs on the runner's clock (the pool's is the same
// monotonic clock): quiesce, sync start and end of each finished txg.
bench::TxgHook PoolTxgHook(Pool* pool) {
  return [pool]() -> Result<std::vector<bench::TxgSpan>> {
    ARC_ASSIGN_OR_RETURN(std::vector<tools::TxgRow> rows, tools::TxgHistoryOf(*pool));
    std::vector<bench::TxgSpan> out;
    for (const tools::TxgRow& r : rows) {
      if (r.state != "C" && r.state != "F") continue;
      bench::TxgSpan s;
      s.txg = r.txg;
      s.quiesce_start_ns = r.birth_ns + r.otime_ns;
      s.sync_start_ns = s.quiesce_start_ns + r.qtime_ns + r.wtime_ns;
      s.sync_end_ns = s.sync_start_ns + r.stime_ns;
      s.reason = r.reason;
      s.dirty_bytes = r.ndirty_bytes;
      s.written_bytes = r.nwritten_bytes;
      out.push_back(std::move(s));
    }
    return out;
  };
}

bench::RunnerOptions MakeRunnerOptions(const BenchArgs& a, bench::VolumeProvider* provider) {
  bench::RunnerOptions o;
  o.provider = provider;
  o.stop = &g_interrupted;
  o.cold = a.cold;
  if (isatty(STDERR_FILENO)) o.status_out = stderr;
  if (!a.max_runtime.empty()) {
    auto ns = ParseDurationNs(a.max_runtime, DurationUnit::kSec);
    if (!ns.ok()) throw UsageError("--max-runtime: " + ns.status().message());
    o.max_runtime_ns = *ns;
  }
  if (!a.max_size.empty()) o.max_size_bytes = SizeArg("--max-size", a.max_size);
  return o;
}


// The doctor's verdict on the pool after the run, when the doctor is built.
struct Verdict {
  std::string text;
  nlohmann::ordered_json json;
};

std::optional<Verdict> DoctorVerdict(Pool* pool) {
#ifdef ARCSTORE_HAVE_DOCTOR
  doctor::Report report = doctor::Diagnose(doctor::FromSnapshot(pool->stats().TakeSnapshot()));
  return Verdict{doctor::RenderText(report),
                 nlohmann::ordered_json::parse(doctor::RenderJson(report, -1))};
#else
  (void)pool;
  return std::nullopt;
#endif
}

std::string Render(const bench::RunResult& run, bench::OutputFormat format, const RunPool& rp,
                   const BenchArgs& a, const std::optional<Verdict>& verdict) {
  if (format == bench::OutputFormat::kNormal) {
    std::string text = bench::FormatText(run);
    if (verdict) text += "arcstore doctor, after the run:\n" + verdict->text + "\n";
    text += "arcstore: pool " + rp.path + (rp.temp_dir.empty() ? "" : " (temporary)") +
            (rp.created ? ", created " + FormatBytes(rp.created_bytes) + (a.sparse ? " sparse" : " written once")
                        : "") +
            (a.arc_max.empty() ? "" : ", arc_max " + a.arc_max) + ", arc_policy " + a.arc_policy + (a.cold ? ", cold cache per batch" : "") +
            (a.no_intent_log ? ", intent log off (flush = txg sync)" : "") + "\n";
    return text;
  }
  nlohmann::ordered_json j = bench::ToFioJson(run, format == bench::OutputFormat::kJsonPlus);
  j["arcstore"]["pool"] = {{"path", rp.path},
                           {"temporary", !rp.temp_dir.empty()},
                           {"created", rp.created},
                           {"created_bytes", rp.created_bytes},
                           {"sparse", rp.created && a.sparse},
                           {"arc_max", a.arc_max},
                           {"arc_policy", a.arc_policy},
                           {"cold", a.cold},
                           {"intent_log", !a.no_intent_log},
                           {"recordsize", a.recordsize}};
  if (verdict) j["arcstore"]["doctor"] = verdict->json;
  return j.dump(2) + "\n";
}

int RunCompare(const BenchArgs& a) {
  if (a.compare.size() != 2) throw UsageError("--compare takes BASELINE.json RESULT.json");
  auto r = bench::CompareFioJsonFiles(a.compare[0], a.compare[1], a.threshold_pct);
  if (!r.ok()) throw CommandFailed(r.status().message());
  std::fputs(r->ToText(a.threshold_pct).c_str(), stdout);
  return r->regressed() ? kExitFindings : kExitOk;
}

int RunBench(const BenchArgs& a, const std::vector<std::string>& extras) {
  if (!a.compare.empty()) return RunCompare(a);
  auto format = bench::ParseOutputFormat(a.output_format);
  if (!format.ok()) throw UsageError(format.status().message());
  bool default_mode = false;
  JobSet set = LoadJobs(a, extras, &default_mode);
  if (a.print_fio_command) {
    std::printf("%s\n", bench::FioCommandFor(set, [&](const std::string& v) {
                          return "nbd+unix:///" + v + "?socket=" + a.nbd_socket;
                        }).c_str());
    return 0;
  }
  // Every option is checked before the pool opens: a writable open
  // rewrites the pool at Close, and a refused command must change nothing.
  VolumeOptions vo;
  vo.name = "bench";
  vo.size_bytes = kMiB;
  vo.record_size_bytes = static_cast<uint32_t>(
      std::min<uint64_t>(SizeArg("--recordsize", a.recordsize), UINT32_MAX));
  if (Status s = vo.Validate(); !s.ok()) throw UsageError("--recordsize " + a.recordsize + ": " + s.message());
  MakeRunnerOptions(a, nullptr);  // parses --max-runtime and --max-size
  std::optional<ReportSink> file_out;
  if (!a.output.empty()) file_out.emplace(a.output, a.force, "--output");
  std::optional<bench::LogFileWriter> logs;
  if (auto plan = bench::PlanLogFiles(set, /*with_txg=*/true, /*with_stalls=*/true);
      !plan.empty()) {
    logs.emplace(OrFail(bench::LogFileWriter::Create(std::move(plan), a.force), "fio log files"));
  }
  RunPool rp;
  OpenRunPool(a, set, &rp);
  signal(SIGINT, OnInterrupt);
  vo = VolumeOptions();
  vo.record_size_bytes = static_cast<uint32_t>(SizeArg("--recordsize", a.recordsize));
  bench::PoolVolumeProvider provider(rp.pool.get(), vo);
  bench::RunnerOptions ro = MakeRunnerOptions(a, &provider);
  ro.stats_hook = bench::PoolStatsHook(rp.pool.get());
  ro.stats_sample_ns = 500'000'000;  // ARC size vs c and dirty level over the run
  if (logs) ro.txg_hook = PoolTxgHook(rp.pool.get());
  if (*format == bench::OutputFormat::kNormal && a.output.empty()) {
    std::fputs(bench::FormatRunHeader(set).c_str(), stdout);
    std::fflush(stdout);
  }
  auto run = bench::RunJobs(set, ro);
  if (!run.ok()) throw CommandFailed(run.status().ToString());
  if (!a.baseline_dir.empty()) {
    // The same jobs on plain files on the disk under DIR: the device's own
    // figures, in the same run.
    bench::FileVolumeProvider files(a.baseline_dir);
    bench::RunnerOptions fo = MakeRunnerOptions(a, &files);
    fo.logs = false;  // the log files hold the pool run's entries
    auto base = bench::RunJobs(set, fo);
    if (!base.ok()) throw CommandFailed("baseline: " + base.status().ToString());
    for (auto& j : base->jobs) {
      j.name = "baseline:" + j.name;
      run->jobs.push_back(std::move(j));
    }
    run->groups = bench::ComputeGroups(run->jobs);
  }
  if (logs) {
    std::vector<std::string> warnings;
    Check(logs->Write(*run, &warnings), "fio log files");
    for (const std::string& w : warnings) std::fprintf(stderr, "arcstore bench: warning: %s\n", w.c_str());
    std::string names;
    for (const std::string& p : logs->paths()) names += (names.empty() ? "" : ", ") + p;
    std::fprintf(stderr, "arcstore bench: fio logs written: %s\n", names.c_str());
  }
  if (a.print_stats) {
    std::fprintf(stderr, "%s", stats::ToKstatText(rp.pool->stats().TakeSnapshot()).c_str());
  }
  std::optional<Verdict> verdict = DoctorVerdict(rp.pool.get());
  std::string report = Render(*run, *format, rp, a, verdict);
  if (default_mode && a.output.empty()) {
    ReportSink().Write(report);
    std::string json_path = "arcstore-bench-" + std::to_string(run->timestamp_unix_s) + ".json";
    if (access(".", W_OK) != 0) json_path = (fs::temp_directory_path() / json_path).string();
    ReportSink json(json_path, /*replace_existing=*/false, "the JSON report");
    json.Write(Render(*run, bench::OutputFormat::kJson, rp, a, verdict));
    std::printf("arcstore: fio-format JSON report written to %s\n", json.path().c_str());
  } else {
    if (file_out) {
      file_out->Write(report);
    } else {
      ReportSink().Write(report);
    }
  }
  for (const auto& j : run->jobs) {
    if (j.error != 0) return kExitFindings;
  }
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app) {
  static BenchArgs args;
  auto* c = app.add_subcommand(
      "bench", "Run fio job files (or fio-style --name=... jobs) against arcstore volumes");
  c->allow_extras();
  c->add_option("JOBFILE", args.job_files, "fio job files");
  c->add_option("--pool", args.pool, "pool file or device (created when missing; default: a temporary pool)");
  c->add_option("--arc-max", args.arc_max, "ARC size for the run (e.g. 256M)");
  c->add_option("--arc-policy", args.arc_policy,
                 "cache replacement policy: arc, or duet (ARC and LIRS, led by whichever wins on "
                 "a sample of the keys; keeps a working set through scans larger than the cache)")
      ->check(CLI::IsMember({"arc", "duet"}));
  c->add_option("--arc-pretouch", args.arc_pretouch,
                "ARC memory written once before the jobs start, as a server that has been up a "
                "few seconds has it (serve --arc-pretouch; e.g. 2G; default none)");
  c->add_option("--arc-grow-ahead", args.arc_grow_ahead,
                "memory a background thread keeps ready ahead of a growing ARC (serve "
                "--arc-grow-ahead; default 64M; 0: writers map new buffers themselves)");
  c->add_option("--recordsize", args.recordsize, "record size of volumes the bench creates");
  c->add_flag("--cold", args.cold, "empty the pool's cache before each stonewalled batch");
  c->add_option("--io-backend", args.io_backend, "pool device backend: auto, io_uring or psync");
  c->add_flag("--no-intent-log", args.no_intent_log,
              "flushes and FUA writes wait for a txg sync instead of an intent log commit");
  c->add_flag("--sparse", args.sparse, "leave a new pool file sparse instead of writing it once");
  c->add_option("--output-format", args.output_format, "normal, json or json+");
  c->add_option("--output", args.output, "write the report to FILE (a new file)");
  c->add_flag("--force", args.force,
              "with --output and fio's write_*_log: replace existing regular files that are not pools");
  c->add_option("--compare", args.compare, "BASELINE.json RESULT.json: per-job differences")->expected(2);
  c->add_option("--threshold", args.threshold_pct, "regression threshold for --compare, percent");
  c->add_flag("--print-fio-command", args.print_fio_command,
              "print the fio command that runs the same jobs against arcstore serve over NBD");
  c->add_option("--nbd-socket", args.nbd_socket, "socket of arcstore serve for --print-fio-command");
  c->add_option("--max-runtime", args.max_runtime, "cap every job's runtime (e.g. 5s)");
  c->add_option("--max-size", args.max_size, "cap every job's size and filesize (e.g. 64M)");
  c->add_flag("--stats", args.print_stats, "print every stat of the pool on stderr at the end");
  c->add_option("--cache-device", args.cache_devices,
                "a cache device (file or block device, overwritten) for the pool's second cache "
                "level; repeat for more");
  c->add_option("--pool-read-latency", args.pool_read_latency,
                "every read of the pool's device takes at least this long (e.g. 8ms): a slower "
                "device than this machine's, for measuring a cache device");
  c->add_option("--baseline-dir", args.baseline_dir,
                "also run the jobs on plain files in DIR (the disk's own figures)");
  c->callback([c] {
    int code = RunBench(args, c->remaining());
    if (code != 0) throw CommandExit{code};
  });
}

}  // namespace arcstore::cli
