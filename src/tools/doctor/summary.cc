#include "tools/doctor/summary.h"

#include <cstdio>
#include <set>
#include <vector>

#include "base/units.h"
#include "tools/doctor/arcstore_stat_names.h"

namespace arcstore::doctor {
namespace {

constexpr int kWidth = 72;

class Summary {
 public:
  explicit Summary(const StatsView& v) : v_(v) {}
  std::string Render();

 private:
  std::string Bytes(std::string_view name);
  std::string Count(std::string_view name);
  std::string PctOf(std::string_view a, std::string_view b);
  // hits / (hits + misses) as "96.2 %"; "-" when either is missing or both 0.
  std::string HitRatio(std::string_view hits, std::string_view misses);
  void Row(std::string_view label, const std::vector<std::string>& cells);
  void Heading(std::string_view title, const std::vector<std::string>& columns);
  void Sizes();
  void States();
  void Hits();
  void Memory();
  void L2();
  void Arcstore();

  const StatsView& v_;
  std::string out_;
  std::set<std::string> missing_;
};

std::string Summary::Bytes(std::string_view name) {
  auto x = v_.Get(name);
  if (!x) {
    missing_.emplace(name);
    return "-";
  }
  std::string s = *x < 0 ? "-" + FormatBytes(static_cast<uint64_t>(-(*x + 1)) + 1)
                         : FormatBytes(static_cast<uint64_t>(*x));
  return (v_.IsApproximate(name) ? "~" : "") + s;
}

std::string Summary::Count(std::string_view name) {
  auto x = v_.Get(name);
  if (!x) {
    missing_.emplace(name);
    return "-";
  }
  return (v_.IsApproximate(name) ? "~" : "") + std::to_string(*x);
}

std::string Summary::PctOf(std::string_view a, std::string_view b) {
  auto x = v_.Get(a), y = v_.Get(b);
  if (!x || !y || *y == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %%", 100.0 * static_cast<double>(*x) / *y);
  return buf;
}

std::string Summary::HitRatio(std::string_view hits, std::string_view misses) {
  auto a = v_.Get(hits), b = v_.Get(misses);
  if (!a || !b || *a + *b == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %%", 100.0 * static_cast<double>(*a) / static_cast<double>(*a + *b));
  return buf;
}

void Summary::Row(std::string_view label, const std::vector<std::string>& cells) {
  AppendSummaryRow(&out_, label, cells);
}

void Summary::Heading(std::string_view title, const std::vector<std::string>& columns) {
  AppendSummaryHeading(&out_, title, columns);
}

void Summary::Sizes() {
  Heading("ARC size", {"value", "of c_max"});
  Row("size (current)", {Bytes("size"), PctOf("size", "c_max")});
  Row("target c", {Bytes("c"), PctOf("c", "c_max")});
  Row("c_min (floor)", {Bytes("c_min"), PctOf("c_min", "c_max")});
  Row("c_max (ceiling)", {Bytes("c_max"), ""});
  auto size = v_.Get("size"), c = v_.Get("c");
  if (size && c && *c > 0) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2fx", static_cast<double>(*size) / *c);
    Row("size / c", {buf, ""});
  }
  if (v_.field_set == FieldSet::k22Plus) {
    Row("pd (MRU data target)", {Count("pd"), ""});
    Row("pm (MRU metadata target)", {Count("pm"), ""});
    Row("meta (metadata balance)", {Count("meta"), ""});
  } else {
    Row("p (MRU target)", {Bytes("p"), PctOf("p", "c")});
  }
  for (auto n : {"data_size", "metadata_size", "overhead_size", "hdr_size", "dbuf_size",
                 "dnode_size", "bonus_size", "other_size"})
    if (v_.Has(n)) Row(n, {Bytes(n), PctOf(n, "size")});
  if (v_.field_set != FieldSet::k22Plus) {
    Row("arc_meta_used", {Bytes("arc_meta_used"), ""});
    Row("arc_meta_limit", {Bytes("arc_meta_limit"), ""});
  }
}

void Summary::States() {
  Heading("ARC states", {"size", "evict. data", "evict. meta"});
  for (auto s : {"anon", "mru", "mfu", "mru_ghost", "mfu_ghost"}) {
    std::string st(s);
    Row(st, {Bytes(st + "_size"), Bytes(st + "_evictable_data"), Bytes(st + "_evictable_metadata")});
  }
  if (v_.Has("uncached_size"))
    Row("uncached", {Bytes("uncached_size"), Bytes("uncached_evictable_data"),
                     Bytes("uncached_evictable_metadata")});
  if (!v_.Has("mru_data") && !v_.Has("mfu_data")) return;  // before 2.2: no split
  Heading("ARC states by type (2.2+)", {"data", "metadata"});
  for (auto s : {"anon", "mru", "mfu", "mru_ghost", "mfu_ghost", "uncached"}) {
    std::string st(s);
    Row(st, {Bytes(st + "_data"), Bytes(st + "_metadata")});
  }
}

void Summary::Hits() {
  Heading("Hit ratios", {"hits", "misses", "hit ratio"});
  Row("all", {Count("hits"), Count("misses"), HitRatio("hits", "misses")});
  for (auto k : {"demand_data", "demand_metadata", "prefetch_data", "prefetch_metadata"}) {
    std::string n(k);
    Row(n, {Count(n + "_hits"), Count(n + "_misses"), HitRatio(n + "_hits", n + "_misses")});
  }
  if (v_.Has("iohits")) Row("iohits (waited for a read)", {Count("iohits"), "", ""});
  Heading("Hits by list", {"hits", "of all hits"});
  for (auto n : {"mru_hits", "mfu_hits", "mru_ghost_hits", "mfu_ghost_hits"})
    Row(n, {Count(n), PctOf(n, "hits")});
  Row("prefetched, then demanded", {Count("demand_hit_predictive_prefetch"), ""});
}

void Summary::Memory() {
  Heading("Memory", {"value", ""});
  for (auto n : {"memory_all_bytes", "memory_free_bytes", "memory_available_bytes",
                 "arc_sys_free"})
    Row(n, {Bytes(n), ""});
  Row("memory_throttle_count", {Count("memory_throttle_count"), ""});
}

// The second cache level (arc_summary's L2ARC section): shown when the
// input has any l2 field; "no cache device" when nothing was ever cached.
// arcstore adds a row per cache device (its l2arc.N module).
void Summary::L2() {
  if (!v_.Has("l2_size") && !v_.Has("l2_hits") && !v_.Has("l2_misses")) return;
  if (v_.Get("l2_size").value_or(0) == 0 && v_.Get("l2_hits").value_or(0) == 0 &&
      v_.Get("l2_asize").value_or(0) == 0) {
    Heading("L2ARC", {"value", ""});
    Row("no cache device (nothing cached, no hits)", {"", ""});
    return;
  }
  Heading("L2ARC size", {"value", "of size"});
  Row("l2_size (cached)", {Bytes("l2_size"), ""});
  Row("l2_asize (on devices)", {Bytes("l2_asize"), ""});
  Row("l2_hdr_size (in ARC)", {Bytes("l2_hdr_size"), PctOf("l2_hdr_size", "size")});
  Heading("L2ARC hits (of ARC misses)", {"hits", "misses", "hit ratio"});
  Row("l2_hits, l2_misses", {Count("l2_hits"), Count("l2_misses"), HitRatio("l2_hits", "l2_misses")});
  Heading("L2ARC I/O", {"value", ""});
  if (v_.Has("l2_read_bytes")) Row("l2_read_bytes", {Bytes("l2_read_bytes"), ""});
  if (v_.Has("l2_write_bytes")) Row("l2_write_bytes", {Bytes("l2_write_bytes"), ""});
  for (auto n : {"l2_feeds", "l2_writes_sent", "l2_writes_error", "l2_evict_reading",
                 "l2_abort_lowmem", "l2_rw_clash", "l2_free_on_write"}) {
    if (v_.Has(n)) Row(n, {Count(n), ""});
  }
  for (auto n : {"l2_cksum_bad", "l2_io_error", "l2_pool_fallbacks"}) {
    if (v_.Has(n)) Row(n, {Count(n), ""});
  }
  if (v_.Has("l2_rebuild_success")) {
    Row("rebuilds (success)", {Count("l2_rebuild_success"), ""});
    Row("rebuilt blocks", {Count("l2_rebuild_bufs"), ""});
  }
  // arcstore: one row per device, from its module.
  std::set<std::string> devices;
  for (const auto& [name, value] : v_.values) {
    if (name.rfind("l2arc.", 0) != 0) continue;
    size_t dot = name.find('.', 6);
    if (dot != std::string::npos) devices.insert(name.substr(0, dot));
  }
  if (devices.empty()) return;
  Heading("L2ARC devices", {"hits", "slots written", "rebuilt", "bad copies"});
  for (const std::string& d : devices) {
    int64_t bad = v_.Get(d + ".checksum_errors").value_or(0) + v_.Get(d + ".io_errors").value_or(0);
    Row(d, {Count(d + ".hits"), Count(d + ".slots_written"), Count(d + ".rebuild_entries"),
            std::to_string(bad)});
  }
}

// arcstore's own sections: what OpenZFS's arcstats cannot say.
void Summary::Arcstore() {
  Heading("Changes of c, by cause", {"changes", "bytes moved"});
  for (std::string_view cause : names::kCCauses) {
    std::string c(cause);
    Row(c, {Count(std::string(names::kCChangesPrefix) + c), Bytes(std::string(names::kCChangeBytesPrefix) + c)});
  }
  Heading("Held bytes, by holder kind", {"bytes", "of size"});
  for (std::string_view kind : names::kHolderKinds) {
    std::string n = std::string(names::kHeldBytesPrefix) + std::string(kind);
    Row(kind, {Bytes(n), PctOf(n, "size")});
  }
  Heading("Handle cache", {"value", "of target"});
  Row("size", {Bytes("handle_cache.size"), PctOf("handle_cache.size", "handle_cache.target")});
  Row("target (c / 32)", {Bytes("handle_cache.target"), ""});
  Row("hits", {Count("handle_cache.hits"), ""});
  Row("misses", {Count("handle_cache.misses"), ""});
  Row("evictions (background)", {Count("handle_cache.evictions"), ""});
  Row("evictions (direct)", {Count("handle_cache.direct_evictions"), ""});
  Heading("Dirty data and throttle", {"value", "of limit"});
  auto dirty_max = v_.Get("txg.dirty_max_bytes"), c = v_.Get("c");
  std::string limit = "-";
  if (dirty_max && c) limit = FormatBytes(static_cast<uint64_t>(std::max<int64_t>(0, std::min(*dirty_max, *c / 2))));
  Row("dirty (unsynced)", {Bytes("txg.dirty_bytes"), PctOf("txg.dirty_bytes", "txg.dirty_max_bytes")});
  Row("dirty_max", {Bytes("txg.dirty_max_bytes"), ""});
  Row("effective dirty limit", {limit, ""});
  Row("writes delayed", {Count("txg.delayed_writes"), ""});
  Row("delay ns (all writers)", {Count("txg.delay_ns"), ""});
  Row("writes blocked", {Count("txg.blocked_writes"), ""});
  Row("blocked (ns)", {Count("txg.blocked_ns"), ""});
  Row("ARC dirty limit waits", {Count("memory_throttle_count"), ""});
  Row("rmw from the committed record (ARC or disk)", {Count(names::kRmwReads), ""});
  Row("rmw on a dirty copy", {Count(names::kRmwDirty), ""});
  Heading("Txgs synced, by reason", {"syncs", "of all"});
  int64_t all = 0;
  for (std::string_view r : names::kSyncReasons) all += v_.Get(std::string(names::kTxgSyncsPrefix) + std::string(r)).value_or(0);
  for (std::string_view r : names::kSyncReasons) {
    std::string n = std::string(names::kTxgSyncsPrefix) + std::string(r);
    auto x = v_.Get(n);
    char pct[32] = "-";
    if (x && all > 0) std::snprintf(pct, sizeof(pct), "%.1f %%", 100.0 * static_cast<double>(*x) / static_cast<double>(all));
    Row(r, {Count(n), pct});
  }
}

std::string Summary::Render() {
  out_ = std::string(kWidth, '-') + "\nARC summary: " + std::string(FormatName(v_.format)) +
         "\nfield set: " + std::string(FieldSetName(v_.field_set)) + "\n";
  Sizes();
  States();
  Hits();
  Memory();
  L2();
  if (v_.format == StatsFormat::kArcstore) Arcstore();
  if (!missing_.empty()) {
    std::string line = "\nnot in the input:";
    size_t col = line.size();
    for (const auto& m : missing_) {
      if (col + m.size() + 1 > static_cast<size_t>(kWidth)) {
        line += "\n   ";
        col = 3;
      }
      line += " " + m;
      col += m.size() + 1;
    }
    out_ += line + "\n";
  }
  for (const auto& n : v_.notes) out_ += "note: " + n + "\n";
  return out_;
}

}  // namespace

void AppendSummaryRow(std::string* out, std::string_view label, const std::vector<std::string>& cells) {
  char buf[256];
  std::string line = "        " + std::string(label);
  if (line.size() < 32) line.append(32 - line.size(), ' ');
  for (const auto& c : cells) {
    std::snprintf(buf, sizeof(buf), "%14s", c.c_str());
    line += buf;
  }
  *out += line + "\n";
}

void AppendSummaryHeading(std::string* out, std::string_view title,
                          const std::vector<std::string>& columns) {
  std::string line(title);
  if (line.size() < 32) line.append(32 - line.size(), ' ');
  char buf[64];
  for (const auto& c : columns) {
    std::snprintf(buf, sizeof(buf), "%14s", c.c_str());
    line += buf;
  }
  *out += "\n" + line + "\n";
}

std::string RenderSummary(const StatsView& view) { return Summary(view).Render(); }

}  // namespace arcstore::doctor
