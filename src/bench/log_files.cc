#include "bench/log_files.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

#include "format/output_file.h"

namespace arcstore::bench {
namespace {

struct Source {
  const std::optional<std::string> Job::*prefix;
  const char* option;
  std::vector<LogKind> kinds;
};

const Source kSources[] = {
    {&Job::bw_log_prefix, "write_bw_log", {LogKind::kBw}},
    {&Job::iops_log_prefix, "write_iops_log", {LogKind::kIops}},
    {&Job::lat_log_prefix, "write_lat_log", {LogKind::kLat, LogKind::kClat, LogKind::kSlat}},
};

std::string FileName(const std::string& prefix, const std::string& type, const Job& j, uint32_t n) {
  return prefix + "_" + type + (j.per_job_logs ? "." + std::to_string(n) : "") + ".log";
}

Status WriteAll(int fd, const std::string& path, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError(path + ": write failed: " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

int64_t RelMs(uint64_t t_ns, uint64_t start_ns) {
  return t_ns >= start_ns ? static_cast<int64_t>((t_ns - start_ns) / 1'000'000)
                          : -static_cast<int64_t>((start_ns - t_ns + 999'999) / 1'000'000);
}

}  // namespace

std::vector<PlannedLog> PlanLogFiles(const JobSet& set, bool with_txg, bool with_stalls) {
  std::vector<PlannedLog> plan;
  std::map<std::string, size_t> by_path;
  auto add = [&](PlannedLog p, uint32_t thread) {
    auto it = by_path.find(p.path);
    if (it == by_path.end()) {
      it = by_path.emplace(p.path, plan.size()).first;
      plan.push_back(std::move(p));
    }
    plan[it->second].threads.push_back(thread);
  };
  uint32_t n = 0;
  for (const Job& j : set.jobs) {
    for (uint32_t c = 0; c < j.numjobs; c++) {
      n++;
      std::vector<std::string> prefixes;
      for (const Source& s : kSources) {
        if (!(j.*s.prefix)) continue;
        const std::string prefix = (j.*s.prefix)->empty() ? j.name : *(j.*s.prefix);
        for (LogKind k : s.kinds) {
          PlannedLog p;
          p.path = FileName(prefix, LogKindName(k), j, n);
          p.option = s.option;
          p.job = j.name;
          p.kind = k;
          p.log_offset = j.log_offset;
          add(std::move(p), n);
        }
        if (std::find(prefixes.begin(), prefixes.end(), prefix) == prefixes.end()) {
          prefixes.push_back(prefix);
        }
      }
      // arcstore's own files, one per prefix: the txg syncs, the stalls.
      auto add_own = [&](const std::string& prefix, const char* type, const char* what,
                         bool PlannedLog::*flag) {
        PlannedLog p;
        p.path = FileName(prefix, type, j, n);
        p.option = std::string("write_*_log (") + what + ")";
        p.job = j.name;
        p.*flag = true;
        add(std::move(p), n);
      };
      for (const std::string& prefix : prefixes) {
        if (with_txg) add_own(prefix, "txg", "txg syncs", &PlannedLog::txg);
        if (with_stalls) add_own(prefix, "stalls", "machine stalls", &PlannedLog::stalls);
      }
    }
  }
  return plan;
}

std::string FormatLogEntries(const std::vector<LogEntry>& entries, bool log_offset) {
  std::string out;
  out.reserve(entries.size() * 28);
  char line[128];
  for (const LogEntry& e : entries) {
    int len = log_offset
                  ? std::snprintf(line, sizeof(line),
                                  "%" PRIu64 ", %" PRIu64 ", %u, %u, %" PRIu64 ", 0\n", e.time_ms,
                                  e.value, unsigned{e.dir}, e.block_bytes, e.offset_bytes)
                  : std::snprintf(line, sizeof(line), "%" PRIu64 ", %" PRIu64 ", %u, %u, 0\n",
                                  e.time_ms, e.value, unsigned{e.dir}, e.block_bytes);
    out.append(line, static_cast<size_t>(len));
  }
  return out;
}

std::string FormatTxgLog(const std::vector<TxgSpan>& spans, uint64_t start_ns, uint64_t end_ns,
                         uint64_t missed) {
  std::string out =
      "# arcstore txg syncs: quiesce_ms, sync_start_ms, sync_end_ms, txg, reason, dirty_bytes, "
      "written_bytes (ms since the job's start)\n";
  if (missed != 0) {
    out += "# " + std::to_string(missed) +
           " syncs left the pool's txg history before they were read\n";
  }
  char line[256];
  for (const TxgSpan& s : spans) {
    if (s.sync_end_ns < start_ns || s.quiesce_start_ns > end_ns) continue;
    int len = std::snprintf(
        line, sizeof(line),
        "%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRIu64 ", %s, %" PRIu64 ", %" PRIu64 "\n",
        RelMs(s.quiesce_start_ns, start_ns), RelMs(s.sync_start_ns, start_ns),
        RelMs(s.sync_end_ns, start_ns), s.txg, s.reason.c_str(), s.dirty_bytes, s.written_bytes);
    out.append(line, std::min<size_t>(static_cast<size_t>(len), sizeof(line) - 1));
  }
  return out;
}

std::string FormatStallLog(const MachineStalls& s, uint64_t start_ns, uint64_t end_ns,
                           bool header) {
  std::string out =
      header ? "# arcstore machine stalls: start_us, duration_us (us since the job's start; no "
               "CPU ran the bench for duration_us)\n"
             : "";
  char line[64];
  for (const StallEvent& e : s.events) {
    const uint64_t at_ns = s.start_ns + e.at_ns;
    if (at_ns < start_ns || at_ns > end_ns) continue;
    int len = std::snprintf(line, sizeof(line), "%" PRIu64 ", %" PRIu64 "\n",
                            (at_ns - start_ns) / 1000, e.duration_ns / 1000);
    out.append(line, std::min<size_t>(static_cast<size_t>(len), sizeof(line) - 1));
  }
  if (s.events.size() < s.stalls) {
    out += "# " + std::to_string(s.stalls - s.events.size()) +
           " later stalls of the batch not kept (the watch's limit)\n";
  }
  return out;
}

Result<LogFileWriter> LogFileWriter::Create(std::vector<PlannedLog> plan, bool replace_existing) {
  LogFileWriter w;
  format::OutputFileOptions fo;
  fo.replace_existing = replace_existing;
  for (PlannedLog& p : plan) {
    auto where = [&p](const Status& s) {
      return Status(s.code(), "option '" + p.option + "' of job '" + p.job + "': " + s.message());
    };
    auto resolved = format::ResolveOutputPath(p.path);
    if (!resolved.ok()) return where(resolved.status());
    auto fd = format::CreateOutputFile(*resolved, fo);
    if (!fd.ok()) return where(fd.status());
    p.path = *resolved;
    w.fds_.push_back(*fd);
    w.plan_.push_back(std::move(p));
  }
  return w;
}

LogFileWriter::LogFileWriter(LogFileWriter&& o) noexcept
    : plan_(std::move(o.plan_)), fds_(std::move(o.fds_)) {
  o.fds_.clear();
}

LogFileWriter::~LogFileWriter() {
  for (int fd : fds_) ::close(fd);
}

std::vector<std::string> LogFileWriter::paths() const {
  std::vector<std::string> out;
  for (const PlannedLog& p : plan_) out.push_back(p.path);
  return out;
}

Status LogFileWriter::Write(const RunResult& run, std::vector<std::string>* warnings) {
  for (size_t i = 0; i < plan_.size(); i++) {
    const PlannedLog& p = plan_[i];
    std::string text;
    uint64_t start_ns = UINT64_MAX, end_ns = 0;
    for (uint32_t t : p.threads) {
      auto it = std::find_if(run.logs.begin(), run.logs.end(),
                             [t](const CloneLog& c) { return c.thread_number == t; });
      if (it == run.logs.end() || !it->log) continue;  // the run stopped before this clone
      const JobLog& log = *it->log;
      if (p.stalls) {
        // Clones sharing the file (per_job_logs=0) each add their stalls.
        if (it->stalls) {
          text += FormatStallLog(*it->stalls, log.start_ns(), log.end_ns(), text.empty());
        }
        continue;
      }
      if (p.txg) {
        start_ns = std::min(start_ns, log.start_ns());
        end_ns = std::max(end_ns, log.end_ns());
        continue;
      }
      text += FormatLogEntries(log.entries(p.kind), p.log_offset);
      if (log.dropped(p.kind) != 0) {
        warnings->push_back(p.path + ": " + std::to_string(log.dropped(p.kind)) +
                            " entries of thread " + std::to_string(t) +
                            " dropped at the limit of " +
                            std::to_string(log.options().max_entries) +
                            " per log; set log_avg_msec to log windows");
      }
    }
    if (p.txg && start_ns != UINT64_MAX)
      text = FormatTxgLog(run.txg_spans, start_ns, end_ns, run.txg_missed);
    ARC_RETURN_IF_ERROR(WriteAll(fds_[i], p.path, text));
  }
  return Status::Ok();
}

}  // namespace arcstore::bench
