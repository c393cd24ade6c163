// Registry: the one place every stat of a pool (or a tool run) is declared.
//
// A subsystem declares each stat once, by module and name ("arcstats",
// "hits"), with its kind, unit and help text, and keeps the returned pointer
// for updates. Tools read the registry through snapshots: TakeSnapshot()
// copies every value at one moment; Delta(earlier, later) turns two snapshots
// into rates (counters and histograms subtract, gauges keep the later value).
// Exporters (kstat-style text, JSON; Prometheus later) are visitors over a
// snapshot, so no exporter touches live state.
//
//   subsystem --AddCounter/AddGauge/AddHistogram--> Registry (owns the stats)
//   tool      --TakeSnapshot--> Snapshot --Visit--> exporter
//
// There is no global registry: a pool owns one, so two pools in one process
// keep separate stats.
//
// Thread-safety: declaring, removing and snapshotting take an internal lock;
// updating a stat through its pointer is lock-free. A pointer stays valid
// until RemoveModule() removes its module or the registry is destroyed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/thread_annotations.h"
#include "stats/stats.h"

namespace arcstore::stats {

struct StatInfo {
  std::string module;
  std::string name;
  Kind kind = Kind::kCounter;
  Unit unit = Unit::kNone;
  std::string help;
  std::string FullName() const { return module + "." + name; }
};

// One stat's value at snapshot time.
struct StatValue {
  StatInfo info;
  uint64_t counter = 0;          // kCounter
  int64_t gauge = 0;             // kGauge
  HistogramData histogram;       // kHistogram
};

class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void OnCounter(const StatInfo& info, uint64_t value) = 0;
  virtual void OnGauge(const StatInfo& info, int64_t value) = 0;
  virtual void OnHistogram(const StatInfo& info, const HistogramData& value) = 0;
};

class Snapshot {
 public:
  uint64_t taken_ns = 0;
  std::vector<StatValue> values;  // sorted by module, then declaration order

  void Visit(Visitor& v) const;
  const StatValue* Find(std::string_view module, std::string_view name) const;
  // Counter or gauge value by name, or `fallback` when absent.
  int64_t Get(std::string_view module, std::string_view name, int64_t fallback = 0) const;
};

// later - earlier, stat by stat (stats missing from `earlier` count from 0).
Snapshot Delta(const Snapshot& earlier, const Snapshot& later);

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Declaring the same module.name twice is a bug and aborts.
  Counter* AddCounter(std::string_view module, std::string_view name, Unit unit,
                      std::string_view help);
  Gauge* AddGauge(std::string_view module, std::string_view name, Unit unit,
                  std::string_view help);
  // A gauge computed when a snapshot is taken (for values that already live
  // elsewhere, such as a state's size). `fn` must be safe to call from any
  // thread until its module is removed.
  void AddGaugeFn(std::string_view module, std::string_view name, Unit unit, std::string_view help,
                  std::function<int64_t()> fn);
  Histogram* AddHistogram(std::string_view module, std::string_view name, Unit unit,
                          std::string_view help);

  // Removes every stat of `module` (a destroyed volume, a closed export).
  void RemoveModule(std::string_view module);

  Snapshot TakeSnapshot(uint64_t now_ns = 0) const;
  std::vector<StatInfo> List() const;

 private:
  struct Entry;
  Entry* AddEntry(std::string_view module, std::string_view name, Kind kind, Unit unit,
                  std::string_view help) ARC_REQUIRES(mu_);

  mutable Mutex mu_;
  // module -> entries in declaration order.
  std::map<std::string, std::vector<std::unique_ptr<Entry>>, std::less<>> modules_
      ARC_GUARDED_BY(mu_);
};

// kstat-style text, one block per module, as /proc/spl/kstat/zfs/<module>:
//   arcstats
//   name                            type data
//   hits                            4    1234
// Histograms print one line per non-empty bucket: name.<low> 4 count.
std::string ToKstatText(const Snapshot& snapshot);
// {"module": {"name": value, "hist": {"count":..,"sum":..,"max":..,
//   "buckets": {"<low>": count, ...}}}}
std::string ToJson(const Snapshot& snapshot, int indent = 2);

}  // namespace arcstore::stats
