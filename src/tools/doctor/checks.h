// Internal to the doctor: the context every check runs in, and the checks.
//
// A check reads named values through the context. Need() returns all of the
// named values or records an Undecided naming the missing ones; Opt() reads
// one value that only refines a finding. Evidence helpers print bytes as
// "1.0 GiB (1073741824)" and mark approximate values with "~".
//
// Thread-safety: a context belongs to one Diagnose() call.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/doctor/doctor.h"

namespace arcstore::doctor::internal {

class CheckContext {
 public:
  CheckContext(const StatsView& view, const DoctorOptions& options, Report& report)
      : view(view), opt(options), report_(report) {}

  std::optional<std::vector<int64_t>> Need(std::string_view check,
                                           std::initializer_list<std::string_view> names,
                                           std::string_view what);
  std::optional<int64_t> Opt(std::string_view name) const { return view.Get(name); }
  // Sum of the names present; nullopt when none is; `missing` gets the rest.
  std::optional<int64_t> SumPresent(std::initializer_list<std::string_view> names,
                                    std::vector<std::string>* missing) const;
  void Undecide(std::string_view check, std::vector<std::string> missing, std::string why);
  void Add(Finding f) { report_.findings.push_back(std::move(f)); }

  Evidence Bytes(std::string_view name) const;  // a field as bytes
  Evidence Count(std::string_view name) const;  // a field as a count
  static Evidence BytesOf(std::string label, int64_t v, bool approx = false);
  static Evidence RatioOf(std::string label, double v);     // "50.7x"
  static Evidence PercentOf(std::string label, double pct);  // "41.2%"

  const StatsView& view;
  const DoctorOptions& opt;

 private:
  Report& report_;
};

std::string FormatSignedBytes(int64_t v);

// Memory around the ARC, from memory_all_bytes / memory_free_bytes /
// memory_available_bytes when the dump has them.
struct MemoryState {
  std::optional<int64_t> all, free, available;
  bool FreeIsHigh(const DoctorOptions& o) const;   // free >= free_memory_pct of all
  bool IsShort(const DoctorOptions& o) const;      // really short of memory
};
MemoryState ReadMemory(const CheckContext& ctx);

// Size and control-loop checks (checks_size.cc).
void CheckTargetCollapsed(CheckContext& ctx);
void CheckSizeOverTarget(CheckContext& ctx);
void CheckEvictable(CheckContext& ctx);
void CheckOverhead(CheckContext& ctx);
void CheckNotYielding(CheckContext& ctx);
void CheckPressureWhileFree(CheckContext& ctx);
// Efficiency and OpenZFS-only checks (checks_efficiency.cc).
void CheckCacheTooSmall(CheckContext& ctx);
void CheckPrefetch(CheckContext& ctx);
void CheckMetadata(CheckContext& ctx);
void CheckDnodes(CheckContext& ctx);
void CheckArcPrune(CheckContext& ctx);
void CheckL2arc(CheckContext& ctx);
void CheckColdCache(CheckContext& ctx);
// arcstore engine checks (checks_arcstore.cc).
void CheckSyncReasons(CheckContext& ctx);
void CheckRmw(CheckContext& ctx);
void CheckWriterWaits(CheckContext& ctx);
void CheckMachineStalls(CheckContext& ctx);
void CheckNoProgress(CheckContext& ctx);
void CheckSmallWrites(CheckContext& ctx);
// The dominant holder kind, for findings about pinned buffers: "handle_cache
// holds 27.0 GiB (96% of held bytes)"; empty without held_bytes_* stats.
std::string DominantHolder(const CheckContext& ctx, std::vector<Evidence>* evidence);

}  // namespace arcstore::doctor::internal
