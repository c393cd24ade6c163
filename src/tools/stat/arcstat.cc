#include "tools/stat/arcstat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <optional>

namespace arcstore::tools {

// kScale: 1000 for counts, 1024 for bytes, kPercent for percentages
// (clamped to 0..100 and printed as integers, never scaled: two counters
// read a moment apart can make a ratio a hair over 100), kRaw for integers
// printed unscaled, kText for strings.
inline constexpr int kRaw = -1;
inline constexpr int kText = 0;
inline constexpr int kPercent = 100;

struct StatField {
  std::string_view name;
  int width;
  int scale;
  std::string_view meaning;
  std::optional<double> (*value)(const StatInterval&);
  std::string (*text)(const StatInterval&);
};

namespace {

using Names = std::initializer_list<std::string_view>;
using Value = std::optional<double>;

// "arcstats.hits" -> the stat in `s`.
const stats::StatValue* Lookup(const stats::Snapshot& s, std::string_view full) {
  size_t dot = full.find('.');
  return s.Find(full.substr(0, dot), full.substr(dot + 1));
}

Value Sum(const stats::Snapshot* s, Names names) {
  if (s == nullptr) return std::nullopt;
  double total = 0;
  for (std::string_view n : names) {
    const stats::StatValue* v = Lookup(*s, n);
    if (v == nullptr) return std::nullopt;
    total += static_cast<double>(s->Get(v->info.module, v->info.name));
  }
  return total;
}

Value Rate(const StatInterval& i, Names names) {
  Value v = Sum(i.delta, names);
  if (!v) return v;
  return *v / std::max(i.seconds, 1e-9);
}

Value Now(const StatInterval& i, Names names) { return Sum(i.now, names); }

Value Pct(Value part, Value whole) {
  if (!part || !whole) return std::nullopt;
  return *whole <= 0 ? 0.0 : 100.0 * *part / *whole;
}

// The access families arcstat reports, by prefix of the arcstats names.
Value Hits(const StatInterval& i) { return Rate(i, {"arcstats.hits"}); }
Value Iohits(const StatInterval& i) { return Rate(i, {"arcstats.iohits"}); }
Value Misses(const StatInterval& i) { return Rate(i, {"arcstats.misses"}); }
Value Reads(const StatInterval& i) {
  Value h = Hits(i), m = Misses(i), io = Iohits(i);
  if (!h || !m) return std::nullopt;
  return *h + *m + io.value_or(0);
}
Value DHits(const StatInterval& i) {
  return Rate(i, {"arcstats.demand_data_hits", "arcstats.demand_metadata_hits"});
}
Value DMiss(const StatInterval& i) {
  return Rate(i, {"arcstats.demand_data_misses", "arcstats.demand_metadata_misses"});
}
Value DIoh(const StatInterval& i) {
  return Rate(i, {"arcstats.demand_data_iohits", "arcstats.demand_metadata_iohits"});
}
Value DReads(const StatInterval& i) {
  Value h = DHits(i), m = DMiss(i);
  if (!h || !m) return std::nullopt;
  return *h + *m + DIoh(i).value_or(0);
}
Value PHits(const StatInterval& i) {
  return Rate(i, {"arcstats.prefetch_data_hits", "arcstats.prefetch_metadata_hits"});
}
Value PMiss(const StatInterval& i) {
  return Rate(i, {"arcstats.prefetch_data_misses", "arcstats.prefetch_metadata_misses"});
}
Value PIoh(const StatInterval& i) {
  return Rate(i, {"arcstats.prefetch_data_iohits", "arcstats.prefetch_metadata_iohits"});
}
Value PReads(const StatInterval& i) {
  Value h = PHits(i), m = PMiss(i);
  if (!h || !m) return std::nullopt;
  return *h + *m + PIoh(i).value_or(0);
}
Value MHits(const StatInterval& i) {
  return Rate(i, {"arcstats.demand_metadata_hits", "arcstats.prefetch_metadata_hits"});
}
Value MMiss(const StatInterval& i) {
  return Rate(i, {"arcstats.demand_metadata_misses", "arcstats.prefetch_metadata_misses"});
}
Value MIoh(const StatInterval& i) {
  return Rate(i, {"arcstats.demand_metadata_iohits", "arcstats.prefetch_metadata_iohits"});
}
Value MReads(const StatInterval& i) {
  Value h = MHits(i), m = MMiss(i);
  if (!h || !m) return std::nullopt;
  return *h + *m + MIoh(i).value_or(0);
}

Value EffectiveDirtyLimit(const StatInterval& i) {
  Value max = Now(i, {"txg.dirty_max_bytes"}), c = Now(i, {"arcstats.c"});
  if (!max || !c) return std::nullopt;
  return std::min(*max, std::floor(*c / 2));
}

Value L2Hits(const StatInterval& i) { return Rate(i, {"arcstats.l2_hits"}); }
Value L2Miss(const StatInterval& i) { return Rate(i, {"arcstats.l2_misses"}); }
Value L2Reads(const StatInterval& i) {
  Value h = L2Hits(i), m = L2Miss(i);
  if (!h || !m) return std::nullopt;
  return *h + *m;
}

std::string TimeText(const StatInterval& i) { return i.time; }
std::string SyncText(const StatInterval& i) {
  return i.last_sync_reason.empty() ? "-" : i.last_sync_reason;
}

// Duet's leader (arcstats.duet_leader): "arc" or "lirs"; "-" under ARC.
std::string LeaderText(const StatInterval& i) {
  const Value v = Now(i, {"arcstats.duet_leader"});
  if (!v) return "-";
  return *v > 0 ? "lirs" : "arc";
}

#define ARC_RATE(...) [](const StatInterval& i) -> Value { return Rate(i, {__VA_ARGS__}); }
#define ARC_NOW(...) [](const StatInterval& i) -> Value { return Now(i, {__VA_ARGS__}); }

const StatField kFields[] = {
    {"time", 8, kText, "time of the sample (HH:MM:SS)", nullptr, TimeText},
    {"read", 4, 1000, "ARC accesses per second (hits + iohits + misses)", Reads, nullptr},
    {"hits", 4, 1000, "ARC hits per second", Hits, nullptr},
    {"iohs", 4, 1000, "ARC hits on a read in flight (iohits) per second", Iohits, nullptr},
    {"miss", 4, 1000, "ARC misses per second", Misses, nullptr},
    {"hit%", 4, 100, "ARC hit percentage", [](const StatInterval& i) { return Pct(Hits(i), Reads(i)); }, nullptr},
    {"miss%", 5, 100, "ARC miss percentage", [](const StatInterval& i) { return Pct(Misses(i), Reads(i)); }, nullptr},
    {"dread", 5, 1000, "demand accesses per second", DReads, nullptr},
    {"dhit", 4, 1000, "demand hits per second", DHits, nullptr},
    {"dmis", 4, 1000, "demand misses per second", DMiss, nullptr},
    {"dh%", 3, 100, "demand hit percentage", [](const StatInterval& i) { return Pct(DHits(i), DReads(i)); }, nullptr},
    {"dm%", 3, 100, "demand miss percentage", [](const StatInterval& i) { return Pct(DMiss(i), DReads(i)); }, nullptr},
    {"pread", 5, 1000, "prefetch accesses per second", PReads, nullptr},
    {"phit", 4, 1000, "prefetch hits per second", PHits, nullptr},
    {"pmis", 4, 1000, "prefetch misses per second", PMiss, nullptr},
    {"ph%", 3, 100, "prefetch hit percentage", [](const StatInterval& i) { return Pct(PHits(i), PReads(i)); }, nullptr},
    {"pm%", 3, 100, "prefetch miss percentage", [](const StatInterval& i) { return Pct(PMiss(i), PReads(i)); }, nullptr},
    {"mread", 5, 1000, "metadata accesses per second", MReads, nullptr},
    {"mhit", 4, 1000, "metadata hits per second", MHits, nullptr},
    {"mmis", 4, 1000, "metadata misses per second", MMiss, nullptr},
    {"mh%", 3, 100, "metadata hit percentage", [](const StatInterval& i) { return Pct(MHits(i), MReads(i)); }, nullptr},
    {"mm%", 3, 100, "metadata miss percentage", [](const StatInterval& i) { return Pct(MMiss(i), MReads(i)); }, nullptr},
    {"arcsz", 5, 1024, "ARC size", ARC_NOW("arcstats.size"), nullptr},
    {"size", 4, 1024, "ARC size", ARC_NOW("arcstats.size"), nullptr},
    {"c", 4, 1024, "ARC target size", ARC_NOW("arcstats.c"), nullptr},
    {"p", 4, 1024, "MRU target size within c", ARC_NOW("arcstats.p"), nullptr},
    {"avail", 5, 1024, "memory available to the ARC (memory_available_bytes)",
     ARC_NOW("arcstats.memory_available_bytes"), nullptr},
    {"l2hits", 6, 1000, "cache device (L2) hits per second", L2Hits, nullptr},
    {"l2miss", 6, 1000, "cache device (L2) misses per second", L2Miss, nullptr},
    {"l2read", 6, 1000, "cache device (L2) accesses per second", L2Reads, nullptr},
    {"l2hit%", 6, 100, "cache device (L2) hit percentage",
     [](const StatInterval& i) { return Pct(L2Hits(i), L2Reads(i)); }, nullptr},
    {"l2miss%", 7, 100, "cache device (L2) miss percentage",
     [](const StatInterval& i) { return Pct(L2Miss(i), L2Reads(i)); }, nullptr},
    {"l2size", 6, 1024, "bytes cached on cache devices", ARC_NOW("arcstats.l2_size"), nullptr},
    {"l2asize", 7, 1024, "cache device bytes holding them", ARC_NOW("arcstats.l2_asize"), nullptr},
    {"l2bytes", 7, 1024, "bytes read from cache devices per second",
     ARC_RATE("arcstats.l2_read_bytes"), nullptr},
    {"mfu", 4, 1000, "MFU list hits per second", ARC_RATE("arcstats.mfu_hits"), nullptr},
    {"mru", 4, 1000, "MRU list hits per second", ARC_RATE("arcstats.mru_hits"), nullptr},
    {"mfug", 4, 1000, "MFU ghost list hits per second", ARC_RATE("arcstats.mfu_ghost_hits"), nullptr},
    {"mrug", 4, 1000, "MRU ghost list hits per second", ARC_RATE("arcstats.mru_ghost_hits"), nullptr},
    {"eskip", 5, 1000, "evictions skipped (buffer held or in I/O) per second", ARC_RATE("arcstats.evict_skip"), nullptr},
    {"lead", 4, kText, "Duet: who names victims (arc, lirs; - under the ARC policy)", nullptr,
     LeaderText},
    {"sel", 5, kRaw, "Duet: the duel's selector (>= 0 ARC leads)", ARC_NOW("arcstats.duet_selector"),
     nullptr},
    {"lir", 4, 1024, "Duet: LIRS's protected (LIR) bytes", ARC_NOW("arcstats.duet_lir_size"), nullptr},
    {"hir", 4, 1024, "Duet: LIRS's resident HIR bytes", ARC_NOW("arcstats.duet_hir_size"), nullptr},
    {"evl", 4, 1000, "Duet: victims LIRS named per second", ARC_RATE("arcstats.duet_evict_lirs"),
     nullptr},
    {"dirty", 5, 1024, "unsynced dirty bytes (open + quiescing + syncing txgs)", ARC_NOW("txg.dirty_bytes"), nullptr},
    {"dmax", 4, 1024, "dirty_max: writers block here", ARC_NOW("txg.dirty_max_bytes"), nullptr},
    {"dlim", 4, 1024, "effective dirty limit min(dirty_max, c/2)", EffectiveDirtyLimit, nullptr},
    {"txg", 6, kRaw, "the open txg", ARC_NOW("txg.open_txg"), nullptr},
    {"sync", 15, kText, "why the last txg synced", nullptr, SyncText},
    {"thrw", 4, 1000, "writes delayed by the write throttle per second", ARC_RATE("txg.delayed_writes"), nullptr},
    {"thrms", 5, 1000, "ms of throttle delay per second (summed over writers)",
     [](const StatInterval& i) -> Value {
       Value v = Rate(i, {"txg.delay_ns"});
       return v ? Value(*v / 1e6) : v;
     },
     nullptr},
    {"blkw", 4, 1000, "writes blocked at dirty_max per second", ARC_RATE("txg.blocked_writes"), nullptr},
    {"rmw", 4, 1000, "partial record copies completed from the committed record per second",
     ARC_RATE("volumes.rmw_reads"), nullptr},
    {"rmwd", 4, 1000, "partial-record writes served by a dirty copy per second",
     ARC_RATE("volumes.rmw_dirty"), nullptr},
    {"hhc", 4, 1024, "bytes held by the handle cache", ARC_NOW("arcstats.held_bytes_handle_cache"), nullptr},
    {"hdr", 4, 1024, "bytes held by dirty records", ARC_NOW("arcstats.held_bytes_dirty_record"), nullptr},
    {"hrd", 4, 1024, "bytes held by reads in flight", ARC_NOW("arcstats.held_bytes_read_in_flight"), nullptr},
    {"hsw", 4, 1024, "bytes held by sync writes", ARC_NOW("arcstats.held_bytes_sync_write"), nullptr},
    {"hnbd", 4, 1024, "bytes held by NBD requests", ARC_NOW("arcstats.held_bytes_nbd_request"), nullptr},
    {"hapi", 4, 1024, "bytes held by API users", ARC_NOW("arcstats.held_bytes_api_user"), nullptr},
    {"hzil", 4, 1024, "bytes held by the intent log (whole records logged by reference)",
     ARC_NOW("arcstats.held_bytes_intent_log"), nullptr},
};

#undef ARC_RATE
#undef ARC_NOW

std::string Pad(std::string_view s, int width) {
  std::string out;
  if (static_cast<int>(s.size()) < width) out.assign(static_cast<size_t>(width) - s.size(), ' ');
  out += s;
  return out;
}

std::string Cell(const StatField& f, const StatInterval& i) {
  if (f.text != nullptr) return Pad(f.text(i), f.width);
  Value v = f.value(i);
  if (!v) return Pad("-", f.width);
  if (f.scale == kRaw) return Pad(std::to_string(static_cast<long long>(*v)), f.width);
  if (f.scale == kPercent) {
    return Pad(std::to_string(static_cast<long long>(std::clamp(*v, 0.0, 100.0))), f.width);
  }
  return PrettyNumber(*v, f.width, f.scale);
}

}  // namespace

std::string PrettyNumber(double value, int width, int scale) {
  static constexpr char kSuffix[] = " KMGTP";
  if (value > 0 && value < 1) value = 0;
  int index = 0;
  double save = 0;
  while (std::fabs(value) > scale && index < 5) {
    save = value;
    value /= scale;
    index++;
  }
  char buf[64];
  if (index == 0) {
    std::snprintf(buf, sizeof(buf), "%*lld", width, static_cast<long long>(value));
  } else if (std::fabs(save / scale) < 10) {
    std::snprintf(buf, sizeof(buf), "%*.1f%c", width - 1, value, kSuffix[index]);
  } else {
    std::snprintf(buf, sizeof(buf), "%*lld%c", width - 1, static_cast<long long>(value), kSuffix[index]);
  }
  return buf;
}

Result<std::vector<const StatField*>> ParseStatFields(std::string_view list) {
  std::vector<const StatField*> out;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (name.empty()) continue;
    const StatField* found = nullptr;
    for (const StatField& f : kFields) {
      if (f.name == name) found = &f;
    }
    if (found == nullptr) {
      std::string valid;
      for (const StatField& f : kFields) valid += (valid.empty() ? "" : " ") + std::string(f.name);
      return Status::InvalidArgument("-f: unknown field '" + std::string(name) + "'; fields: " + valid);
    }
    out.push_back(found);
  }
  if (out.empty()) return Status::InvalidArgument("-f: no fields given");
  return out;
}

std::string DescribeStatFields() {
  std::string out;
  for (const StatField& f : kFields) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%8s : %s\n", std::string(f.name).c_str(),
                  std::string(f.meaning).c_str());
    out += buf;
  }
  return out;
}

std::string StatHeader(const std::vector<const StatField*>& fields) {
  std::string out;
  for (const StatField* f : fields) out += (out.empty() ? "" : "  ") + Pad(f->name, f->width);
  return out + "\n";
}

std::string StatRow(const std::vector<const StatField*>& fields, const StatInterval& interval) {
  std::string out;
  for (const StatField* f : fields) out += (out.empty() ? "" : "  ") + Cell(*f, interval);
  return out + "\n";
}

std::string StatPrinter::Next(const StatInterval& interval) {
  std::string out;
  if (rows_ % kHeaderEvery == 0) out += StatHeader(fields_);
  rows_++;
  return out + StatRow(fields_, interval);
}

}  // namespace arcstore::tools
