// Reads arc_summary reports back into arcstats names. See arcstats_reader.h.
//
// The report is read as a stream of whitespace-separated tokens, not lines,
// so that reports pasted into web forms with their line breaks lost still
// read. Each known label ("Target size (adaptive):") is a token sequence;
// after it come, optionally, a parenthesised remark, a percentage or a ratio
// ("98.5 %", "< 0.1 %", "16:1"), then the value with its unit. Some labels
// mean different stats in different sections ("Demand data:" under hits or
// misses, "Header size:" in the ARC or the L2ARC part), so section headings
// are found first and each label names the section it needs. Longer labels
// are matched first and claim their tokens, so "L2 header size:" is never
// also read as "Header size:".
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/doctor/arcstats_reader.h"

namespace arcstore::doctor {
namespace {

enum class Section { kNone, kArc, kHitsByType, kMissesByType, kL2, kL2Breakdown, kOther };

struct Label {
  const char* text;
  const char* stat;
  Section section;  // kNone: any section
};

// clang-format off
constexpr Label kLabels[] = {
  {"ARC size (current):", "size", Section::kNone},
  {"ARC Size:", "size", Section::kNone},
  {"Target size (adaptive):", "c", Section::kNone},
  {"Target Size:", "c", Section::kNone},
  {"Min size (hard limit):", "c_min", Section::kNone},
  {"Max size (high water):", "c_max", Section::kNone},
  {"Most Frequently Used (MFU) cache size:", "mfu_size", Section::kNone},
  {"Most Recently Used (MRU) cache size:", "mru_size", Section::kNone},
  {"Recently Used Cache Size:", "p", Section::kNone},
  {"Metadata cache size (hard limit):", "arc_meta_limit", Section::kNone},
  {"Metadata cache size (current):", "arc_meta_used", Section::kNone},
  {"Dnode cache size (hard limit):", "arc_dnode_limit", Section::kNone},
  {"Dnode cache size (current):", "dnode_size", Section::kNone},
  {"Dnode cache target:", "arc_dnode_limit", Section::kNone},
  {"Dnode cache size:", "dnode_size", Section::kNone},
  {"Anonymous data size:", "anon_data", Section::kNone},
  {"Anonymous metadata size:", "anon_metadata", Section::kNone},
  {"MFU data size:", "mfu_data", Section::kNone},
  {"MFU ghost data size:", "mfu_ghost_data", Section::kNone},
  {"MFU metadata size:", "mfu_metadata", Section::kNone},
  {"MFU ghost metadata size:", "mfu_ghost_metadata", Section::kNone},
  {"MRU data size:", "mru_data", Section::kNone},
  {"MRU ghost data size:", "mru_ghost_data", Section::kNone},
  {"MRU metadata size:", "mru_metadata", Section::kNone},
  {"MRU ghost metadata size:", "mru_ghost_metadata", Section::kNone},
  {"Uncached data size:", "uncached_data", Section::kNone},
  {"Uncached metadata size:", "uncached_metadata", Section::kNone},
  {"Bonus size:", "bonus_size", Section::kNone},
  {"Dbuf size:", "dbuf_size", Section::kNone},
  {"Header size:", "hdr_size", Section::kArc},
  {"L2 header size:", "l2_hdr_size", Section::kNone},
  {"ABD chunk waste size:", "abd_chunk_waste_size", Section::kNone},
  {"Memory throttle count:", "memory_throttle_count", Section::kNone},
  {"Deleted:", "deleted", Section::kNone},
  {"Mutex misses:", "mutex_miss", Section::kNone},
  {"Eviction skips:", "evict_skip", Section::kNone},
  {"Evict Skips:", "evict_skip", Section::kNone},
  {"Eviction skips due to L2 writes:", "evict_l2_skip", Section::kNone},
  {"L2 cached evictions:", "evict_l2_cached", Section::kNone},
  {"L2 eligible evictions:", "evict_l2_eligible", Section::kNone},
  {"L2 ineligible evictions:", "evict_l2_ineligible", Section::kNone},
  {"Elements max:", "hash_elements_max", Section::kNone},
  {"Elements current:", "hash_elements", Section::kNone},
  {"Collisions:", "hash_collisions", Section::kNone},
  {"Chain max:", "hash_chain_max", Section::kNone},
  {"Chains:", "hash_chains", Section::kNone},
  {"Cache hit ratio:", "hits", Section::kNone},
  {"Cache miss ratio:", "misses", Section::kNone},
  {"Total hits:", "hits", Section::kNone},
  {"Total I/O hits:", "iohits", Section::kNone},
  {"Total misses:", "misses", Section::kNone},
  {"Demand data hits:", "demand_data_hits", Section::kNone},
  {"Demand data I/O hits:", "demand_data_iohits", Section::kNone},
  {"Demand data misses:", "demand_data_misses", Section::kNone},
  {"Demand metadata hits:", "demand_metadata_hits", Section::kNone},
  {"Demand metadata I/O hits:", "demand_metadata_iohits", Section::kNone},
  {"Demand metadata misses:", "demand_metadata_misses", Section::kNone},
  {"Prefetch data hits:", "prefetch_data_hits", Section::kNone},
  {"Prefetch data I/O hits:", "prefetch_data_iohits", Section::kNone},
  {"Prefetch data misses:", "prefetch_data_misses", Section::kNone},
  {"Prefetch metadata hits:", "prefetch_metadata_hits", Section::kNone},
  {"Prefetch metadata I/O hits:", "prefetch_metadata_iohits", Section::kNone},
  {"Prefetch metadata misses:", "prefetch_metadata_misses", Section::kNone},
  {"ARC predictive prefetches:", "predictive_prefetch", Section::kNone},
  {"Demand hits after predictive:", "demand_hit_predictive_prefetch", Section::kNone},
  {"Demand I/O hits after predictive:", "demand_iohit_predictive_prefetch", Section::kNone},
  {"ARC prescient prefetches:", "prescient_prefetch", Section::kNone},
  {"Demand hits after prescient:", "demand_hit_prescient_prefetch", Section::kNone},
  {"Most frequently used (MFU):", "mfu_hits", Section::kNone},
  {"Most recently used (MRU):", "mru_hits", Section::kNone},
  {"Most frequently used (MFU) ghost:", "mfu_ghost_hits", Section::kNone},
  {"Most recently used (MRU) ghost:", "mru_ghost_hits", Section::kNone},
  {"Uncached:", "uncached_hits", Section::kOther},
  {"Most Recently Used:", "mru_hits", Section::kNone},
  {"Most Frequently Used:", "mfu_hits", Section::kNone},
  {"Most Recently Used Ghost:", "mru_ghost_hits", Section::kNone},
  {"Most Frequently Used Ghost:", "mfu_ghost_hits", Section::kNone},
  {"Demand data:", "demand_data_hits", Section::kHitsByType},
  {"Prefetch data:", "prefetch_data_hits", Section::kHitsByType},
  {"Demand prefetch data:", "prefetch_data_hits", Section::kHitsByType},
  {"Demand metadata:", "demand_metadata_hits", Section::kHitsByType},
  {"Prefetch metadata:", "prefetch_metadata_hits", Section::kHitsByType},
  {"Demand prefetch metadata:", "prefetch_metadata_hits", Section::kHitsByType},
  {"Demand data:", "demand_data_misses", Section::kMissesByType},
  {"Prefetch data:", "prefetch_data_misses", Section::kMissesByType},
  {"Demand prefetch data:", "prefetch_data_misses", Section::kMissesByType},
  {"Demand metadata:", "demand_metadata_misses", Section::kMissesByType},
  {"Prefetch metadata:", "prefetch_metadata_misses", Section::kMissesByType},
  {"Demand prefetch metadata:", "prefetch_metadata_misses", Section::kMissesByType},
  {"L2ARC size (adaptive):", "l2_size", Section::kNone},
  {"L2 ARC Size: (Adaptive)", "l2_size", Section::kNone},
  {"Compressed:", "l2_asize", Section::kL2},
  {"Header size:", "l2_hdr_size", Section::kL2},
  {"Hit ratio:", "l2_hits", Section::kL2Breakdown},
  {"Miss ratio:", "l2_misses", Section::kL2Breakdown},
};

struct Marker {
  const char* text;
  Section section;
};
constexpr Marker kMarkers[] = {
  {"ARC size (current):", Section::kArc},
  {"ARC Size:", Section::kArc},
  {"Cache hits by data type:", Section::kHitsByType},
  {"Cache misses by data type:", Section::kMissesByType},
  {"L2ARC size (adaptive):", Section::kL2},
  {"L2 ARC Size:", Section::kL2},
  {"L2ARC breakdown:", Section::kL2Breakdown},
  {"ARC hash breakdown:", Section::kOther},
  {"ARC Size Breakdown:", Section::kOther},
  {"ARC total accesses", Section::kOther},
  {"Cache hits by cache type:", Section::kOther},
  {"Cache hits by cache list:", Section::kOther},
  {"ARC states hits of all accesses:", Section::kOther},
  {"DMU predictive prefetcher calls:", Section::kOther},
  {"DMU prefetch efficiency:", Section::kOther},
  {"L2ARC writes:", Section::kOther},
  {"L2 ARC Breakdown:", Section::kOther},
  {"Tunables:", Section::kOther},
  {"Solaris Porting Layer", Section::kOther},
};
// clang-format on

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> SplitLower(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) i++;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) j++;
    if (j > i) out.push_back(Lower(s.substr(i, j - i)));
    i = j;
  }
  return out;
}

bool IsNumberLike(std::string_view s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) != 0);
}

class SummaryReader {
 public:
  explicit SummaryReader(std::string_view text) : tokens_(SplitLower(text)) {
    consumed_.assign(tokens_.size(), false);
    for (size_t i = 0; i < tokens_.size(); i++) by_first_[tokens_[i]].push_back(i);  // views into tokens_
  }
  StatsView Read();

 private:
  std::vector<size_t> Find(const std::vector<std::string>& seq) const;
  Section SectionAt(size_t token) const;
  bool ReadValue(size_t start, HumanValue* out) const;

  std::vector<std::string> tokens_;
  std::vector<bool> consumed_;
  std::unordered_map<std::string_view, std::vector<size_t>> by_first_;
  std::vector<std::pair<size_t, Section>> markers_;  // sorted by token index
};

std::vector<size_t> SummaryReader::Find(const std::vector<std::string>& seq) const {
  std::vector<size_t> out;
  if (seq.empty()) return out;
  auto it = by_first_.find(seq[0]);
  if (it == by_first_.end()) return out;
  for (size_t i : it->second) {
    if (i + seq.size() > tokens_.size()) continue;
    bool match = true;
    for (size_t k = 1; k < seq.size() && match; k++) match = tokens_[i + k] == seq[k];
    if (match) out.push_back(i);
  }
  return out;
}

Section SummaryReader::SectionAt(size_t token) const {
  Section s = Section::kNone;
  for (const auto& [at, section] : markers_) {
    if (at > token) break;
    s = section;
  }
  return s;
}

bool SummaryReader::ReadValue(size_t i, HumanValue* out) const {
  const size_t end = std::min(tokens_.size(), i + 8);
  while (i < end) {
    const std::string& t = tokens_[i];
    if (t == "<" || t == "%" || t == "n/a") {
      i++;
    } else if (t.front() == '(') {  // "(adaptive)", "(hard limit)"
      while (i < end && tokens_[i].back() != ')') i++;
      i++;
    } else if (t.back() == '%' || t.find(':') != std::string::npos) {
      if (t.back() == ':' && !IsNumberLike(t)) return false;  // the next label: no value
      i++;                                                      // "57.82%", "16:1"
    } else if (IsNumberLike(t) && i + 1 < tokens_.size() && tokens_[i + 1] == "%") {
      i += 2;
    } else {
      break;
    }
  }
  if (i >= end || !IsNumberLike(tokens_[i])) return false;
  bool used_unit = false;
  std::string_view unit = i + 1 < tokens_.size() ? std::string_view(tokens_[i + 1]) : "";
  auto v = ParseHumanValue(tokens_[i], unit, &used_unit);
  if (!v) return false;
  *out = *v;
  return true;
}

// Labels as lower-case token sequences, longest first; built once.
struct Compiled {
  std::vector<std::pair<const Label*, std::vector<std::string>>> labels;
  std::vector<std::pair<Section, std::vector<std::string>>> markers;
  std::vector<std::string> py_summary, py_size;
};

const Compiled& Tables() {
  static const Compiled* tables = [] {
    auto* c = new Compiled;
    for (const auto& l : kLabels) c->labels.emplace_back(&l, SplitLower(l.text));
    std::stable_sort(c->labels.begin(), c->labels.end(), [](const auto& a, const auto& b) {
      return std::string_view(a.first->text).size() > std::string_view(b.first->text).size();
    });
    for (const auto& m : kMarkers) c->markers.emplace_back(m.section, SplitLower(m.text));
    c->py_summary = SplitLower("ARC Summary:");
    c->py_size = SplitLower("ARC Size:");
    return c;
  }();
  return *tables;
}

StatsView SummaryReader::Read() {
  StatsView view;
  const Compiled& t = Tables();
  for (const auto& [section, seq] : t.markers)
    for (size_t at : Find(seq)) markers_.emplace_back(at, section);
  std::sort(markers_.begin(), markers_.end());
  bool py = !Find(t.py_summary).empty() || !Find(t.py_size).empty();
  size_t used = 0;
  for (const auto& [l, seq] : t.labels) {
    for (size_t at : Find(seq)) {
      bool free = true;
      for (size_t k = 0; k < seq.size(); k++) free = free && !consumed_[at + k];
      if (!free) continue;
      if (l->section != Section::kNone && SectionAt(at) != l->section) continue;
      for (size_t k = 0; k < seq.size(); k++) consumed_[at + k] = true;
      HumanValue v;
      if (!ReadValue(at + seq.size(), &v)) continue;
      view.Set(l->stat, v.value, !v.exact);
      used++;
    }
  }
  view.format = py ? StatsFormat::kArcSummaryPy : StatsFormat::kArcSummary;
  if (used > 0 && !view.approximate.empty())
    view.notes.push_back(std::to_string(view.approximate.size()) +
                         " values come from the report's rounded figures (e.g. \"15.5 GiB\") "
                         "and are approximate");
  if (view.Has("p") && py)
    view.notes.push_back("p read from \"Recently Used Cache Size\" (arc_summary.py prints p there)");
  return view;
}

}  // namespace

std::optional<HumanValue> ParseHumanValue(std::string_view number, std::string_view unit,
                                          bool* used_unit) {
  *used_unit = false;
  if (number.empty() || number.size() > 32 || !std::isdigit(static_cast<unsigned char>(number[0])))
    return std::nullopt;
  size_t digits_end = 0;
  bool dot = false;
  while (digits_end < number.size() &&
         (std::isdigit(static_cast<unsigned char>(number[digits_end])) ||
          (number[digits_end] == '.' && !dot))) {
    dot = dot || number[digits_end] == '.';
    digits_end++;
  }
  std::string_view suffix = number.substr(digits_end);
  double mult = 1;
  if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'k': case 'K': mult = 1e3; break;
      case 'm': case 'M': mult = 1e6; break;
      case 'b': case 'g': case 'G': mult = 1e9; break;
      case 't': case 'T': mult = 1e12; break;
      case 'q': case 'p': case 'P': mult = 1e15; break;
      case 'e': case 'E': mult = 1e18; break;
      default: return std::nullopt;
    }
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (suffix.empty() && !unit.empty()) {
    std::string u = Lower(unit);
    static const std::pair<const char*, double> kUnits[] = {
        {"bytes", 1}, {"b", 1}, {"kib", 0x1p10}, {"kb", 0x1p10}, {"k", 0x1p10},
        {"mib", 0x1p20}, {"mb", 0x1p20}, {"m", 0x1p20}, {"gib", 0x1p30}, {"gb", 0x1p30},
        {"g", 0x1p30}, {"tib", 0x1p40}, {"tb", 0x1p40}, {"t", 0x1p40}, {"pib", 0x1p50},
        {"pb", 0x1p50}, {"eib", 0x1p60}, {"eb", 0x1p60}};
    for (const auto& [name, m] : kUnits)
      if (u == name) {
        mult = m;
        *used_unit = true;
        break;
      }
  }
  double v = 0;
  std::string copy(number.substr(0, digits_end));
  if (std::sscanf(copy.c_str(), "%lf", &v) != 1) return std::nullopt;
  double scaled = v * mult;
  if (!(scaled >= 0) || scaled >= 9.2e18) return std::nullopt;
  HumanValue out;
  out.value = static_cast<int64_t>(std::llround(scaled));
  out.exact = !dot && mult == 1;
  return out;
}

StatsView ReadArcSummary(std::string_view text) { return SummaryReader(text).Read(); }

}  // namespace arcstore::doctor
