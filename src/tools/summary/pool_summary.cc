#include "tools/summary/pool_summary.h"

#include <algorithm>

#include "tools/doctor/stats_view.h"
#include "tools/doctor/summary.h"
#include "tools/iostat/iostat.h"

namespace arcstore::tools {

namespace {

std::string Ns(double ns) { return NiceTimeNs(ns); }

void TxgTiming(std::string* out, const stats::Snapshot& snapshot, const std::vector<TxgRow>& txgs) {
  doctor::AppendSummaryHeading(out, "Txg timing", {"value", ""});
  uint64_t committed = 0, first_birth = 0, last_birth = 0, stime = 0, max_stime = 0, delay = 0,
           blocked = 0, arc_wait = 0;
  for (const TxgRow& r : txgs) {
    if (r.state != "C") continue;
    if (committed == 0) first_birth = r.birth_ns;
    last_birth = r.birth_ns;
    committed++;
    stime += r.stime_ns;
    max_stime = std::max(max_stime, r.stime_ns);
    delay += r.delay_ns;
    blocked += r.blocked_ns;
    arc_wait += r.arc_limit_wait_ns;
  }
  doctor::AppendSummaryRow(out, "txgs in history", {std::to_string(committed), ""});
  std::string every = committed >= 2 ? Ns(static_cast<double>(last_birth - first_birth) /
                                          static_cast<double>(committed - 1))
                                     : "-";
  doctor::AppendSummaryRow(out, "one txg every", {every, ""});
  doctor::AppendSummaryRow(
      out, "sync time (mean)",
      {committed > 0 ? Ns(static_cast<double>(stime) / static_cast<double>(committed)) : "-", ""});
  doctor::AppendSummaryRow(out, "sync time (max)", {committed > 0 ? Ns(static_cast<double>(max_stime)) : "-", ""});
  const stats::StatValue* h = snapshot.Find("txg", "sync_time_ns");
  if (h != nullptr && h->histogram.count > 0) {
    doctor::AppendSummaryRow(out, "sync time p50 / p99",
                             {Ns(static_cast<double>(h->histogram.Quantile(0.5))),
                              Ns(static_cast<double>(h->histogram.Quantile(0.99)))});
  }
  doctor::AppendSummaryRow(out, "delayed (history)", {Ns(static_cast<double>(delay)), ""});
  doctor::AppendSummaryRow(out, "blocked (history)", {Ns(static_cast<double>(blocked)), ""});
  doctor::AppendSummaryRow(out, "ARC wait (history)", {Ns(static_cast<double>(arc_wait)), ""});
}

}  // namespace

std::string RenderPoolSummary(const stats::Snapshot& snapshot, const std::vector<TxgRow>& txgs) {
  std::string out = doctor::RenderSummary(doctor::FromSnapshot(snapshot));
  TxgTiming(&out, snapshot, txgs);
  return out;
}

}  // namespace arcstore::tools
