#include "bench/status_line.h"

#include <algorithm>
#include <cmath>

#include "bench/fio_format.h"

namespace arcstore::bench {

char JobLetter(const Job& job) {
  switch (job.rw) {
    case RwPattern::kRead: return 'R';
    case RwPattern::kRandRead: return 'r';
    case RwPattern::kWrite: return 'W';
    case RwPattern::kRandWrite: return 'w';
    case RwPattern::kReadWrite: return 'M';
    case RwPattern::kRandRw: return 'm';
    case RwPattern::kTrim: return 'D';
    case RwPattern::kRandTrim: return 'd';
  }
  return '?';
}

WorkerProgressView ViewOf(const Progress& p, const Job& job) {
  WorkerProgressView v;
  v.running = p.running.load(std::memory_order_relaxed);
  v.finished = p.finished.load(std::memory_order_relaxed);
  v.letter = v.finished ? '_' : (v.running ? JobLetter(job) : 'P');
  for (int d = 0; d < kNumDirs; d++) {
    v.bytes[d] = p.bytes[d].load(std::memory_order_relaxed);
    v.ios[d] = p.ios[d].load(std::memory_order_relaxed);
  }
  v.planned_ns = p.planned_ns;
  v.planned_bytes = p.planned_bytes;
  return v;
}

std::string FormatEta(uint64_t s) {
  if (s >= 3600) return StrFormat("%lluh:%02llum:%02llus", static_cast<unsigned long long>(s / 3600),
                                  static_cast<unsigned long long>(s / 60 % 60),
                                  static_cast<unsigned long long>(s % 60));
  return StrFormat("%02llum:%02llus", static_cast<unsigned long long>(s / 60),
                   static_cast<unsigned long long>(s % 60));
}

std::string StatusLineState::Update(const std::vector<WorkerProgressView>& workers,
                                    uint64_t elapsed_ns) {
  int running = 0;
  std::string letters;
  char prev = 0;
  int run = 0;
  double done_frac = 1.0;
  double eta_s = 0;
  uint64_t bytes[kNumDirs] = {}, ios[kNumDirs] = {};
  for (const auto& w : workers) {
    if (w.running && !w.finished) running++;
    if (w.letter == prev) {
      run++;
    } else {
      if (run > 0) letters += StrFormat("%c(%d)", prev, run);
      prev = w.letter;
      run = 1;
    }
    double f = 1.0;
    const double elapsed_s = static_cast<double>(elapsed_ns) / 1e9;
    if (!w.finished) {
      if (w.planned_ns != 0) {
        f = std::min(1.0, static_cast<double>(elapsed_ns) / static_cast<double>(w.planned_ns));
        eta_s = std::max(eta_s, static_cast<double>(w.planned_ns) / 1e9 - elapsed_s);
      } else if (w.planned_bytes != 0) {
        f = std::min(1.0, static_cast<double>(w.bytes[0] + w.bytes[1] + w.bytes[2]) /
                              static_cast<double>(w.planned_bytes));
        if (f > 0) eta_s = std::max(eta_s, elapsed_s * (1 - f) / f);
      } else {
        f = 0;
      }
    }
    done_frac = std::min(done_frac, f);
    for (int d = 0; d < kNumDirs; d++) {
      bytes[d] += w.bytes[d];
      ios[d] += w.ios[d];
    }
  }
  if (run > 0) letters += StrFormat("%c(%d)", prev, run);
  const double dt = std::max(1e-9, static_cast<double>(elapsed_ns - last_ns_) / 1e9);
  std::string bw, iops;
  static const char kDirLetter[] = {'r', 'w', 't'};
  for (int d = 0; d < kNumDirs; d++) {
    uint64_t db = bytes[d] - last_bytes_[d], di = ios[d] - last_ios_[d];
    if (bytes[d] == 0) continue;
    if (!bw.empty()) {
      bw += ",";
      iops += ",";
    }
    bw += StrFormat("%c=%s", kDirLetter[d],
                    Num2Str(static_cast<uint64_t>(static_cast<double>(db) / dt), 4, true,
                            N2SUnit::kBytesPerSec).c_str());
    iops += StrFormat("%c=%s", kDirLetter[d],
                      Num2Str(static_cast<uint64_t>(static_cast<double>(di) / dt), 4, false,
                              N2SUnit::kNone).c_str());
    last_bytes_[d] = bytes[d];
    last_ios_[d] = ios[d];
  }
  last_ns_ = elapsed_ns;
  std::string line = StrFormat("Jobs: %d (f=%d): [%s][%.1f%%]", running, running, letters.c_str(),
                               done_frac * 100.0);
  if (!bw.empty()) line += "[" + bw + "][" + iops + " IOPS]";
  line += "[eta " + FormatEta(static_cast<uint64_t>(std::ceil(std::max(0.0, eta_s) - 1e-9))) + "]";
  return line;
}

}  // namespace arcstore::bench
