#include "stats/registry.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "base/check.h"

namespace arcstore::stats {

struct Registry::Entry {
  StatInfo info;
  Counter counter;
  Gauge gauge;
  Histogram histogram;
  std::function<int64_t()> gauge_fn;
};

Registry::Registry() = default;
Registry::~Registry() = default;

Registry::Entry* Registry::AddEntry(std::string_view module, std::string_view name, Kind kind,
                                    Unit unit, std::string_view help) {
  ARC_CHECK(!module.empty() && !name.empty()) << "stats need a module and a name";
  auto& entries = modules_[std::string(module)];
  for (const auto& e : entries) {
    ARC_CHECK(e->info.name != name) << "stat declared twice: " << module << "." << name;
  }
  auto e = std::make_unique<Entry>();
  e->info = StatInfo{std::string(module), std::string(name), kind, unit, std::string(help)};
  entries.push_back(std::move(e));
  return entries.back().get();
}

Counter* Registry::AddCounter(std::string_view module, std::string_view name, Unit unit,
                              std::string_view help) {
  MutexLock l(&mu_);
  return &AddEntry(module, name, Kind::kCounter, unit, help)->counter;
}

Gauge* Registry::AddGauge(std::string_view module, std::string_view name, Unit unit,
                          std::string_view help) {
  MutexLock l(&mu_);
  return &AddEntry(module, name, Kind::kGauge, unit, help)->gauge;
}

void Registry::AddGaugeFn(std::string_view module, std::string_view name, Unit unit,
                          std::string_view help, std::function<int64_t()> fn) {
  MutexLock l(&mu_);
  AddEntry(module, name, Kind::kGauge, unit, help)->gauge_fn = std::move(fn);
}

Histogram* Registry::AddHistogram(std::string_view module, std::string_view name, Unit unit,
                                  std::string_view help) {
  MutexLock l(&mu_);
  return &AddEntry(module, name, Kind::kHistogram, unit, help)->histogram;
}

void Registry::RemoveModule(std::string_view module) {
  MutexLock l(&mu_);
  auto it = modules_.find(module);
  if (it != modules_.end()) modules_.erase(it);
}

Snapshot Registry::TakeSnapshot(uint64_t now_ns) const {
  Snapshot s;
  s.taken_ns = now_ns;
  MutexLock l(&mu_);
  for (const auto& [module, entries] : modules_) {
    for (const auto& e : entries) {
      StatValue v;
      v.info = e->info;
      switch (e->info.kind) {
        case Kind::kCounter: v.counter = e->counter.Value(); break;
        case Kind::kGauge: v.gauge = e->gauge_fn ? e->gauge_fn() : e->gauge.Value(); break;
        case Kind::kHistogram: v.histogram = e->histogram.Read(); break;
      }
      s.values.push_back(std::move(v));
    }
  }
  return s;
}

std::vector<StatInfo> Registry::List() const {
  std::vector<StatInfo> out;
  MutexLock l(&mu_);
  for (const auto& [module, entries] : modules_) {
    for (const auto& e : entries) out.push_back(e->info);
  }
  return out;
}

void Snapshot::Visit(Visitor& v) const {
  for (const auto& s : values) {
    switch (s.info.kind) {
      case Kind::kCounter: v.OnCounter(s.info, s.counter); break;
      case Kind::kGauge: v.OnGauge(s.info, s.gauge); break;
      case Kind::kHistogram: v.OnHistogram(s.info, s.histogram); break;
    }
  }
}

const StatValue* Snapshot::Find(std::string_view module, std::string_view name) const {
  for (const auto& s : values) {
    if (s.info.module == module && s.info.name == name) return &s;
  }
  return nullptr;
}

int64_t Snapshot::Get(std::string_view module, std::string_view name, int64_t fallback) const {
  const StatValue* v = Find(module, name);
  if (v == nullptr) return fallback;
  if (v->info.kind == Kind::kCounter) return static_cast<int64_t>(v->counter);
  if (v->info.kind == Kind::kGauge) return v->gauge;
  return static_cast<int64_t>(v->histogram.count);
}

Snapshot Delta(const Snapshot& earlier, const Snapshot& later) {
  Snapshot d;
  d.taken_ns = later.taken_ns >= earlier.taken_ns ? later.taken_ns - earlier.taken_ns : 0;
  for (const auto& v : later.values) {
    StatValue out = v;
    const StatValue* e = earlier.Find(v.info.module, v.info.name);
    if (e != nullptr && e->info.kind == v.info.kind) {
      if (v.info.kind == Kind::kCounter) {
        out.counter = v.counter >= e->counter ? v.counter - e->counter : 0;
      } else if (v.info.kind == Kind::kHistogram) {
        out.histogram = v.histogram.Minus(e->histogram);
      }
    }
    d.values.push_back(std::move(out));
  }
  return d;
}

namespace {

class KstatTextVisitor final : public Visitor {
 public:
  void OnCounter(const StatInfo& info, uint64_t value) override {
    Header(info);
    Line(info.name, std::to_string(value));
  }
  void OnGauge(const StatInfo& info, int64_t value) override {
    Header(info);
    Line(info.name, std::to_string(value));
  }
  void OnHistogram(const StatInfo& info, const HistogramData& h) override {
    Header(info);
    Line(info.name + ".count", std::to_string(h.count));
    Line(info.name + ".sum", std::to_string(h.sum));
    Line(info.name + ".max", std::to_string(h.max));
    for (int i = 0; i < HistogramData::kBuckets; i++) {
      if (h.buckets[i] == 0) continue;
      Line(info.name + "." + std::to_string(HistogramData::BucketLow(i)),
           std::to_string(h.buckets[i]));
    }
  }
  std::string out;

 private:
  void Header(const StatInfo& info) {
    if (info.module == module_) return;
    if (!out.empty()) out += "\n";
    module_ = info.module;
    out += module_ + "\n";
    Line("name", "data", "type");
  }
  void Line(const std::string& name, const std::string& data, const char* type = "4") {
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%-32s %-4s %s\n", name.c_str(), type, data.c_str());
    out += buf;
  }
  std::string module_;
};

class JsonVisitor final : public Visitor {
 public:
  void OnCounter(const StatInfo& info, uint64_t value) override {
    doc[info.module][info.name] = value;
  }
  void OnGauge(const StatInfo& info, int64_t value) override { doc[info.module][info.name] = value; }
  void OnHistogram(const StatInfo& info, const HistogramData& h) override {
    nlohmann::ordered_json j;
    j["count"] = h.count;
    j["sum"] = h.sum;
    j["max"] = h.max;
    nlohmann::ordered_json b = nlohmann::ordered_json::object();
    for (int i = 0; i < HistogramData::kBuckets; i++) {
      if (h.buckets[i] != 0) b[std::to_string(HistogramData::BucketLow(i))] = h.buckets[i];
    }
    j["buckets"] = b;
    doc[info.module][info.name] = j;
  }
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
};

}  // namespace

std::string ToKstatText(const Snapshot& snapshot) {
  KstatTextVisitor v;
  snapshot.Visit(v);
  return v.out;
}

std::string ToJson(const Snapshot& snapshot, int indent) {
  JsonVisitor v;
  snapshot.Visit(v);
  return v.doc.dump(indent);
}

}  // namespace arcstore::stats
