// Memory monitors over /proc and cgroup files: theory of operation.
//
// Purpose. The ARC sizes c_max from the memory limit and shrinks c under
// pressure. In the seed, c sat at c_min for weeks because the OS misreported
// pressure and nobody could see why. So every number here carries its
// source, and every pressure verdict carries its reason.
//
// Model.
//
//   <root>/proc/meminfo ----------> MeminfoMonitor --+
//   <root>/proc/self/cgroup --+                       |
//   <root>/proc/self/mountinfo+-> LocateMemoryCgroup  |
//                                  |                  |
//   <cgroup dir>/memory.* <--------+-> CgroupMonitor -+--> CombinedMemoryMonitor
//   <root>/proc/pressure/memory --> PsiMonitor -------+      limit = min(limits), named
//   options.cap_bytes ------------> CapMonitor -------+      available = min(available)
//                                                            pressure = any reason, or
//                                                            available < low% of limit
//
// Layouts. v2: /proc/self/cgroup has "0::/path" and a cgroup2 mount. v1: a
// line whose controller list includes "memory" and a "cgroup" mount whose
// super options include "memory". Hybrid: both exist; the memory controller
// lives in v1, so v1 wins whenever it names "memory". The cgroup directory is
// the mount point plus the cgroup path relative to the mount's root (a
// container sees its own cgroup as the mount root).
//
// Invariants. A combined reading has a finite limit, available <= limit, and
// a non-empty pressure_reason exactly when under_pressure; short_of_memory
// (available below low_available_pct of the limit) implies under_pressure,
// and pressure without it came from PSI alone. "max" and v1's
// huge sentinel mean "no limit from this source", never a number.
//
// Locking: none; Read() is a pure function of the files.
// Limits: files over 1 MiB are rejected; v2 walks at most 64 ancestors.
// Tunables: PressureThresholds (PSI some/full avg10, low-available percent).
// Stats: none here; the ARC records each reading's source and reason.
#include "arc/monitor/system_memory_monitor.h"

#include <algorithm>
#include <cstdio>

#include "arc/monitor/proc_parsers.h"
#include "base/units.h"

namespace arcstore {
namespace {

using memmon::JoinRoot;
using memmon::ReadRootedFile;

constexpr uint64_t kV1UnlimitedBytes = uint64_t{1} << 62;
constexpr int kMaxCgroupDepth = 64;

std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f%%", v);
  return buf;
}

void AddReason(MemoryReading& r, const std::string& reason) {
  r.under_pressure = true;
  if (!r.pressure_reason.empty()) r.pressure_reason += "; ";
  r.pressure_reason += reason;
}

// Applies PSI thresholds to a parsed PSI file.
void ApplyPsi(const memmon::Psi& psi, const std::string& what, const PressureThresholds& t,
              MemoryReading& r) {
  r.psi_some_avg10 = psi.some.avg10_pct;
  if (psi.some.avg10_pct > t.psi_some_avg10_pct)
    AddReason(r, what + " some avg10 " + Pct(psi.some.avg10_pct) + " > " +
                     Pct(t.psi_some_avg10_pct));
  if (psi.full && psi.full->avg10_pct > t.psi_full_avg10_pct)
    AddReason(r, what + " full avg10 " + Pct(psi.full->avg10_pct) + " > " +
                     Pct(t.psi_full_avg10_pct));
}

// Optional file: NotFound -> nullopt, other errors propagate.
Result<std::optional<std::string>> ReadOptional(const std::string& root, const std::string& path) {
  auto r = ReadRootedFile(root, path);
  if (r.ok()) return std::optional<std::string>(std::move(*r));
  if (r.status().code() == StatusCode::kNotFound) return std::optional<std::string>();
  return r.status();
}

// Required once a limit is known: a missing file is damage, not absence.
Result<std::string> ReadRequired(const std::string& root, const std::string& path,
                                 const std::string& why) {
  auto r = ReadRootedFile(root, path);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound)
    return Status::Corruption(JoinRoot(root, path) + ": missing, but " + why);
  return r;
}

std::string Parent(const std::string& dir) {
  size_t slash = dir.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return dir.substr(0, slash);
}

// mount_point + (cgroup_path relative to mount_root).
std::string CgroupDir(const memmon::MountEntry& m, const std::string& cgroup_path) {
  std::string rel = cgroup_path;
  if (m.root != "/" && (rel == m.root || rel.rfind(m.root + "/", 0) == 0))
    rel = rel.substr(m.root.size());
  else if (m.root != "/")
    rel = "";  // a namespaced view: the mount root is our own cgroup
  std::string dir = m.mount_point;
  if (!rel.empty() && rel != "/") dir += (dir.back() == '/' ? rel.substr(1) : rel);
  return dir;
}

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

uint64_t AvailableWithin(uint64_t limit, uint64_t used, uint64_t reclaimable) {
  uint64_t free = used >= limit ? 0 : limit - used;
  uint64_t avail = free + std::min(reclaimable, used);
  return std::min(avail, limit);
}

}  // namespace

Status PressureThresholds::Validate() const {
  auto check = [](double v, const char* name) {
    if (!(v >= 0 && v <= 100))
      return Status::InvalidArgument(std::string(name) + " must be in [0, 100], got " +
                                     std::to_string(v));
    return Status::Ok();
  };
  ARC_RETURN_IF_ERROR(check(psi_some_avg10_pct, "psi_some_avg10_pct"));
  ARC_RETURN_IF_ERROR(check(psi_full_avg10_pct, "psi_full_avg10_pct"));
  return check(low_available_pct, "low_available_pct");
}

Status SystemMemoryMonitorOptions::Validate() const {
  if (root.empty() || root.front() != '/')
    return Status::InvalidArgument("root must be an absolute path, got '" + root + "'");
  return thresholds.Validate();
}

Result<MemoryReading> MeminfoMonitor::Read() {
  const std::string path = "/proc/meminfo";
  ARC_ASSIGN_OR_RETURN(std::string text, ReadRootedFile(root_, path));
  ARC_ASSIGN_OR_RETURN(memmon::Meminfo mi, memmon::ParseMeminfo(text, JoinRoot(root_, path)));
  MemoryReading r;
  r.limit_bytes = mi.total_bytes;
  r.limit_source = "MemTotal";
  if (mi.available_bytes) {
    r.available_bytes = std::min(*mi.available_bytes, mi.total_bytes);
  } else {
    // Kernels before 3.14: MemFree + Cached is the usual estimate; say so.
    uint64_t est = mi.free_bytes.value_or(0) + mi.cached_bytes.value_or(0);
    r.available_bytes = std::min(est, mi.total_bytes);
    r.notes.push_back("no MemAvailable in " + path + ": available estimated as MemFree + Cached");
  }
  return r;
}

Result<MemoryReading> PsiMonitor::Read() {
  const std::string path = "/proc/pressure/memory";
  ARC_ASSIGN_OR_RETURN(std::string text, ReadRootedFile(root_, path));
  ARC_ASSIGN_OR_RETURN(memmon::Psi psi, memmon::ParsePsi(text, JoinRoot(root_, path)));
  MemoryReading r;
  r.limit_bytes = kNoMemoryLimit;
  r.available_bytes = kNoMemoryLimit;
  r.limit_source = "PSI (no limit)";
  ApplyPsi(psi, "psi", thresholds_, r);
  return r;
}

Result<CgroupLocation> LocateMemoryCgroup(const std::string& root) {
  const std::string cg_path = "/proc/self/cgroup", mi_path = "/proc/self/mountinfo";
  ARC_ASSIGN_OR_RETURN(std::string cg_text, ReadRootedFile(root, cg_path));
  ARC_ASSIGN_OR_RETURN(auto entries, memmon::ParseProcCgroup(cg_text, JoinRoot(root, cg_path)));
  ARC_ASSIGN_OR_RETURN(std::string mi_text, ReadRootedFile(root, mi_path));
  ARC_ASSIGN_OR_RETURN(auto mounts, memmon::ParseMountinfo(mi_text, JoinRoot(root, mi_path)));

  const memmon::ProcCgroupEntry* v1 = nullptr;
  const memmon::ProcCgroupEntry* v2 = nullptr;
  for (const auto& e : entries) {
    if (Has(e.controllers, "memory")) v1 = &e;
    if (e.hierarchy_id == "0" && e.controllers.empty()) v2 = &e;
  }
  const memmon::MountEntry* v1_mount = nullptr;
  const memmon::MountEntry* v2_mount = nullptr;
  for (const auto& m : mounts) {
    if (m.fs_type == "cgroup" && Has(m.super_options, "memory") && !v1_mount) v1_mount = &m;
    if (m.fs_type == "cgroup2" && !v2_mount) v2_mount = &m;
  }
  CgroupLocation loc;
  if (v1 && v1_mount) {
    loc.version = CgroupLocation::Version::kV1;
    loc.hybrid = v2 != nullptr && v2_mount != nullptr;
    loc.cgroup_path = v1->path;
    loc.mount_point = v1_mount->mount_point;
    loc.dir = CgroupDir(*v1_mount, v1->path);
    return loc;
  }
  if (v2 && v2_mount) {
    loc.version = CgroupLocation::Version::kV2;
    loc.cgroup_path = v2->path;
    loc.mount_point = v2_mount->mount_point;
    loc.dir = CgroupDir(*v2_mount, v2->path);
    return loc;
  }
  if (v1) return Status::NotFound(JoinRoot(root, mi_path) + ": no cgroup v1 memory mount");
  return Status::NotFound(JoinRoot(root, cg_path) + ": not in a memory cgroup");
}

Result<MemoryReading> CgroupMonitor::Read() {
  ARC_ASSIGN_OR_RETURN(CgroupLocation loc, LocateMemoryCgroup(root_));
  return loc.version == CgroupLocation::Version::kV1 ? ReadV1(loc) : ReadV2(loc);
}

Result<MemoryReading> CgroupMonitor::ReadV2(const CgroupLocation& loc) {
  MemoryReading r;
  r.limit_bytes = kNoMemoryLimit;
  r.limit_source = "cgroup v2 (no limit)";
  std::string dir = loc.dir;
  for (int depth = 0; depth < kMaxCgroupDepth; depth++) {
    for (const char* file : {"memory.max", "memory.high"}) {
      std::string path = dir + "/" + file;
      ARC_ASSIGN_OR_RETURN(auto text, ReadOptional(root_, path));
      if (!text) continue;
      ARC_ASSIGN_OR_RETURN(auto limit, memmon::ParseLimit(*text, JoinRoot(root_, path)));
      if (limit && *limit < r.limit_bytes) {
        r.limit_bytes = *limit;
        r.limit_source = "cgroup v2 " + path;
      }
    }
    if (dir == loc.mount_point || dir.size() <= loc.mount_point.size()) break;
    dir = Parent(dir);
  }
  if (r.limit_bytes == kNoMemoryLimit) {
    r.available_bytes = kNoMemoryLimit;
    r.notes.push_back("cgroup v2 " + loc.dir + ": no memory limit");
  } else {
    std::string cur = loc.dir + "/memory.current", stat = loc.dir + "/memory.stat";
    ARC_ASSIGN_OR_RETURN(std::string cur_text,
                         ReadRequired(root_, cur, r.limit_source + " sets a limit"));
    ARC_ASSIGN_OR_RETURN(uint64_t used, memmon::ParseCounter(cur_text, JoinRoot(root_, cur)));
    uint64_t reclaimable = 0;
    ARC_ASSIGN_OR_RETURN(auto stat_text, ReadOptional(root_, stat));
    if (stat_text) {
      ARC_ASSIGN_OR_RETURN(auto kv, memmon::ParseKeyValues(*stat_text, JoinRoot(root_, stat)));
      if (kv.count("inactive_file")) reclaimable = kv["inactive_file"];
    } else {
      r.notes.push_back("no " + stat + ": page cache not counted as available");
    }
    r.available_bytes = AvailableWithin(r.limit_bytes, used, reclaimable);
  }
  std::string pressure = loc.dir + "/memory.pressure";
  ARC_ASSIGN_OR_RETURN(auto psi_text, ReadOptional(root_, pressure));
  if (psi_text) {
    ARC_ASSIGN_OR_RETURN(auto psi, memmon::ParsePsi(*psi_text, JoinRoot(root_, pressure)));
    ApplyPsi(psi, "cgroup " + pressure, thresholds_, r);
  }
  return r;
}

Result<MemoryReading> CgroupMonitor::ReadV1(const CgroupLocation& loc) {
  MemoryReading r;
  const std::string tag = loc.hybrid ? "cgroup v1 (hybrid) " : "cgroup v1 ";
  std::string lim = loc.dir + "/memory.limit_in_bytes";
  std::string use = loc.dir + "/memory.usage_in_bytes";
  std::string stat = loc.dir + "/memory.stat";
  ARC_ASSIGN_OR_RETURN(std::string lim_text,
                       ReadRequired(root_, lim, "the memory controller is mounted here"));
  ARC_ASSIGN_OR_RETURN(uint64_t limit, memmon::ParseCounter(lim_text, JoinRoot(root_, lim)));
  r.limit_bytes = limit >= kV1UnlimitedBytes ? kNoMemoryLimit : limit;
  r.limit_source = r.limit_bytes == kNoMemoryLimit ? tag + "(no limit)" : tag + lim;
  std::map<std::string, uint64_t> kv;
  ARC_ASSIGN_OR_RETURN(auto stat_text, ReadOptional(root_, stat));
  if (stat_text) {
    ARC_ASSIGN_OR_RETURN(kv, memmon::ParseKeyValues(*stat_text, JoinRoot(root_, stat)));
    auto h = kv.find("hierarchical_memory_limit");
    if (h != kv.end() && h->second < kV1UnlimitedBytes && h->second < r.limit_bytes) {
      r.limit_bytes = h->second;
      r.limit_source = tag + stat + " hierarchical_memory_limit";
    }
  }
  if (r.limit_bytes == kNoMemoryLimit) {
    r.available_bytes = kNoMemoryLimit;
    r.notes.push_back(tag + loc.dir + ": no memory limit");
    return r;
  }
  ARC_ASSIGN_OR_RETURN(std::string use_text, ReadRequired(root_, use, r.limit_source + " sets a limit"));
  ARC_ASSIGN_OR_RETURN(uint64_t used, memmon::ParseCounter(use_text, JoinRoot(root_, use)));
  uint64_t reclaimable = kv.count("total_inactive_file")
                             ? kv["total_inactive_file"]
                             : (kv.count("inactive_file") ? kv["inactive_file"] : 0);
  r.available_bytes = AvailableWithin(r.limit_bytes, used, reclaimable);
  return r;
}

Result<MemoryReading> CapMonitor::Read() {
  MemoryReading r;
  r.limit_bytes = cap_bytes_;
  r.available_bytes = cap_bytes_;
  r.limit_source = "cap";
  return r;
}

Result<MemoryReading> CombinedMemoryMonitor::Read() {
  MemoryReading out;
  out.limit_bytes = kNoMemoryLimit;
  out.available_bytes = kNoMemoryLimit;
  for (auto& source : sources_) {
    auto r = source->Read();
    if (!r.ok()) {
      if (r.status().code() != StatusCode::kNotFound) return r.status();
      out.notes.push_back(r.status().message());
      continue;
    }
    if (r->limit_bytes < out.limit_bytes) {
      out.limit_bytes = r->limit_bytes;
      out.limit_source = r->limit_source;
    }
    out.available_bytes = std::min(out.available_bytes, r->available_bytes);
    out.psi_some_avg10 = std::max(out.psi_some_avg10, r->psi_some_avg10);
    if (r->under_pressure) AddReason(out, r->pressure_reason);
    for (auto& n : r->notes) out.notes.push_back(std::move(n));
  }
  if (out.limit_bytes == kNoMemoryLimit)
    return Status::NotFound("no memory source gave a limit");
  out.available_bytes = std::min(out.available_bytes, out.limit_bytes);
  double low = thresholds_.low_available_pct / 100.0 * static_cast<double>(out.limit_bytes);
  if (static_cast<double>(out.available_bytes) < low) {
    out.short_of_memory = true;
    AddReason(out, "available " + FormatBytes(out.available_bytes) + " < " +
                       Pct(thresholds_.low_available_pct) + " of limit " +
                       FormatBytes(out.limit_bytes) + " (" + out.limit_source + ")");
  }
  return out;
}

Result<std::unique_ptr<MemoryMonitor>> MakeSystemMemoryMonitor(
    const SystemMemoryMonitorOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  std::vector<std::unique_ptr<MemoryMonitor>> sources;
  sources.push_back(std::make_unique<MeminfoMonitor>(options.root));
  sources.push_back(std::make_unique<CgroupMonitor>(options.root, options.thresholds));
  sources.push_back(std::make_unique<PsiMonitor>(options.root, options.thresholds));
  if (options.cap_bytes > 0) sources.push_back(std::make_unique<CapMonitor>(options.cap_bytes));
  return std::unique_ptr<MemoryMonitor>(
      std::make_unique<CombinedMemoryMonitor>(std::move(sources), options.thresholds));
}

}  // namespace arcstore
