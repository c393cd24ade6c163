// Shared by the observability subcommands (stat, iostat, txgs, summary,
// doctor, trace): how a command names the pool it reads and opens its stats
// source (src/tools/source/stats_source.h), and the sampling loop.
//
//   arcstore CMD POOL [--control PATH] [--live]
//
// POOL's server is reached on --control PATH (default POOL.ctl) when one
// answers; otherwise the pool is opened in-process, read-only, unless --live
// demands the server.
#pragma once

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "tools/source/stats_source.h"

namespace arcstore::cli {

struct SourceArgs {
  std::string pool;
  std::string control;
  bool live = false;
};

inline void AddSourceOptions(CLI::App* cmd, SourceArgs* a) {
  cmd->add_option("--control", a->control, "the server's control socket (default POOL.ctl)");
  cmd->add_flag("--live", a->live, "read a running arcstore serve only; never open the pool");
}

inline tools::OpenedSource OpenSource(const SourceArgs& a, bool writable = false) {
  if (a.pool.empty() && a.control.empty()) {
    throw UsageError("name the pool (POOL, or --pool POOL for doctor) or a running server's "
                     "control socket (--control PATH)");
  }
  tools::SourceOptions o;
  o.pool_path = a.pool;
  o.control_path = a.control;
  // Without a pool only the server can answer.
  o.require_live = a.live || a.pool.empty();
  o.read_only = !writable;
  Result<tools::OpenedSource> s = tools::OpenStatsSource(o);
  if (!s.ok()) {
    // No pool there, and no server: the input is missing.
    throw CommandFailed(s.status().message(),
                        s.status().code() == StatusCode::kNotFound ? kExitNoInput : kExitFailed);
  }
  return std::move(*s);
}

// INTERVAL [COUNT] as arcstat and zpool iostat take them: no interval means
// one sample over 1 s; COUNT 0 means until interrupted.
struct Sampling {
  double interval_s = 0;
  uint64_t count = 0;
  CLI::Option* interval_option = nullptr;
  CLI::Option* count_option = nullptr;
};

inline constexpr double kMinIntervalS = 0.01;
inline constexpr double kMaxIntervalS = 86400.0;

inline void AddSamplingOptions(CLI::App* cmd, Sampling* s) {
  s->interval_option = cmd->add_option("INTERVAL", s->interval_s, "seconds between samples")
                           ->check(CLI::Range(kMinIntervalS, kMaxIntervalS));
  s->count_option = cmd->add_option(
      "COUNT", s->count, "samples to print (default: until interrupted; 1 without INTERVAL)");
}

// POOL is optional when --control names the server, so the parser hands the
// first number to POOL (`stat --control P 1 2`). A POOL that reads as a
// number and names no file is taken back: with --control the numbers move
// one place (INTERVAL, COUNT); without it, it is an error, since a pool
// must be named.
inline void SettlePositionals(SourceArgs* a, Sampling* s) {
  if (a->pool.empty() || std::filesystem::exists(a->pool)) return;
  char* end = nullptr;
  const double number = std::strtod(a->pool.c_str(), &end);
  if (end == a->pool.c_str() || *end != '\0') return;
  if (a->control.empty()) {
    throw UsageError("'" + a->pool + "' is not a pool (no such file) but reads as a number: "
                        "name the pool first (POOL [INTERVAL [COUNT]]), or the server with "
                        "--control PATH [INTERVAL [COUNT]]");
  }
  if (s->count_option->count() > 0) {
    throw UsageError("three numbers after --control " + a->control +
                        ": want INTERVAL [COUNT] (no POOL needed with --control)");
  }
  if (!(number >= kMinIntervalS && number <= kMaxIntervalS)) {
    throw UsageError("INTERVAL " + a->pool + " is not in [0.01, 86400] seconds");
  }
  if (s->interval_option->count() > 0) {
    if (s->interval_s != static_cast<double>(static_cast<uint64_t>(s->interval_s))) {
      throw UsageError("COUNT must be a whole number of samples");
    }
    s->count = static_cast<uint64_t>(s->interval_s);
  }
  s->interval_s = number;
  a->pool.clear();
}

// Calls `each(previous, current, seconds)` for every interval.
inline void SampleLoop(tools::StatsSource& source, const Sampling& s,
                       const std::function<void(const stats::Snapshot&, const stats::Snapshot&, double)>& each) {
  double interval = s.interval_s > 0 ? s.interval_s : 1.0;
  uint64_t count = s.interval_s > 0 ? s.count : 1;
  stats::Snapshot prev = OrFail(source.TakeSnapshot(), source.Describe());
  for (uint64_t n = 0; count == 0 || n < count; n++) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    stats::Snapshot cur = OrFail(source.TakeSnapshot(), source.Describe());
    double seconds = cur.taken_ns > prev.taken_ns ? static_cast<double>(cur.taken_ns - prev.taken_ns) / 1e9 : interval;
    each(prev, cur, seconds);
    prev = std::move(cur);
  }
}

inline std::string WallClockHms() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
  return buf;
}

inline void Print(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

}  // namespace arcstore::cli
