#include "tools/txgs/txgs.h"

#include <cinttypes>
#include <cstdio>
#include <map>

#include "tools/iostat/iostat.h"

namespace arcstore::tools {

namespace {

struct ReasonTotals {
  uint64_t syncs = 0;
  uint64_t stime_ns = 0;
  uint64_t max_stime_ns = 0;
};

std::string Summary(const std::vector<TxgRow>& rows) {
  std::map<std::string, ReasonTotals> by_reason;
  uint64_t first_birth = 0, last_birth = 0, synced = 0, delay_ns = 0;
  for (const TxgRow& r : rows) {
    if (r.state != "C") continue;
    ReasonTotals& t = by_reason[r.reason];
    t.syncs++;
    t.stime_ns += r.stime_ns;
    t.max_stime_ns = std::max(t.max_stime_ns, r.stime_ns);
    if (synced == 0) first_birth = r.birth_ns;
    last_birth = r.birth_ns;
    synced++;
    delay_ns += r.delay_ns;
  }
  std::string out = "\ncommitted txgs: " + std::to_string(synced);
  if (synced >= 2) {
    out += ", one every " + NiceTimeNs(static_cast<double>(last_birth - first_birth) /
                                       static_cast<double>(synced - 1));
  }
  out += ", writers delayed " + NiceTimeNs(static_cast<double>(delay_ns)) + " in all\n";
  for (const auto& [reason, t] : by_reason) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "  %-16s %6" PRIu64 " syncs  mean stime %7s  max %7s\n",
                  reason.c_str(), t.syncs,
                  NiceTimeNs(static_cast<double>(t.stime_ns) / static_cast<double>(t.syncs)).c_str(),
                  NiceTimeNs(static_cast<double>(t.max_stime_ns)).c_str());
    out += buf;
  }
  return out;
}

}  // namespace

std::string RenderTxgs(const std::vector<TxgRow>& rows) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "%-8s %-16s %-5s %-12s %-12s %-12s %-8s %-8s %-12s %-12s %-12s %-12s %-16s %-12s "
                "%-8s %-12s %s\n",
                "txg", "birth", "state", "ndirty", "nread", "nwritten", "reads", "writes", "otime",
                "qtime", "wtime", "stime", "reason", "delay", "delayed", "blocked", "arcwait");
  std::string out = buf;
  for (const TxgRow& r : rows) {
    std::snprintf(buf, sizeof(buf),
                  "%-8" PRIu64 " %-16" PRIu64 " %-5s %-12" PRIu64 " %-12" PRIu64 " %-12" PRIu64
                  " %-8" PRIu64 " %-8" PRIu64 " %-12" PRIu64 " %-12" PRIu64 " %-12" PRIu64
                  " %-12" PRIu64 " %-16s %-12" PRIu64 " %-8" PRIu64 " %-12" PRIu64 " %" PRIu64 "\n",
                  r.txg, r.birth_ns, r.state.c_str(), r.ndirty_bytes, r.nread_bytes, r.nwritten_bytes,
                  r.reads, r.writes, r.otime_ns, r.qtime_ns, r.wtime_ns, r.stime_ns, r.reason.c_str(),
                  r.delay_ns, r.delayed_writes, r.blocked_ns, r.arc_limit_wait_ns);
    out += buf;
  }
  return out + Summary(rows);
}

}  // namespace arcstore::tools
