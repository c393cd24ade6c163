#include "stats/wire.h"

#include <nlohmann/json.hpp>

namespace arcstore::stats {

namespace {

using Json = nlohmann::json;
constexpr std::string_view kFormat = "arcstore-stats-v1";

Json HistogramJson(const HistogramData& h) {
  Json buckets = Json::array();
  for (int i = 0; i < HistogramData::kBuckets; i++) {
    if (h.buckets[i] != 0) buckets.push_back(Json::array({i, h.buckets[i]}));
  }
  return buckets;
}

std::string Where(size_t index, const Json& stat) {
  std::string where = "stats[" + std::to_string(index) + "]";
  auto m = stat.find("module");
  auto n = stat.find("name");
  if (m != stat.end() && n != stat.end() && m->is_string() && n->is_string()) {
    where += " (" + m->get<std::string>() + "." + n->get<std::string>() + ")";
  }
  return where;
}

Status Bad(size_t index, const Json& stat, std::string_view what) {
  return Status::InvalidArgument("stats snapshot: " + Where(index, stat) + ": " + std::string(what));
}

bool GetString(const Json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

bool GetU64(const Json& j, const char* key, uint64_t* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return false;
  if (it->is_number_unsigned()) {
    *out = it->get<uint64_t>();
    return true;
  }
  int64_t v = it->get<int64_t>();
  if (v < 0) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

Status ReadHistogram(size_t index, const Json& stat, HistogramData* h) {
  if (!GetU64(stat, "count", &h->count) || !GetU64(stat, "sum", &h->sum) ||
      !GetU64(stat, "max", &h->max)) {
    return Bad(index, stat, "histogram needs unsigned integers count, sum and max");
  }
  auto b = stat.find("buckets");
  if (b == stat.end() || !b->is_array()) return Bad(index, stat, "histogram needs a buckets array");
  for (const Json& pair : *b) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() ||
        !pair[1].is_number_unsigned()) {
      return Bad(index, stat, "a bucket is not [index, count] of unsigned integers");
    }
    uint64_t i = pair[0].get<uint64_t>();
    if (i >= HistogramData::kBuckets) {
      return Bad(index, stat, "bucket index " + std::to_string(i) + " is not below " +
                                  std::to_string(HistogramData::kBuckets));
    }
    h->buckets[i] = pair[1].get<uint64_t>();
  }
  return Status::Ok();
}

Status ReadStat(size_t index, const Json& stat, StatValue* v) {
  if (!stat.is_object()) return Bad(index, stat, "not an object");
  std::string kind, unit;
  if (!GetString(stat, "module", &v->info.module) || v->info.module.empty() ||
      !GetString(stat, "name", &v->info.name) || v->info.name.empty()) {
    return Bad(index, stat, "needs a non-empty module and name");
  }
  if (!GetString(stat, "kind", &kind) || !ParseKind(kind, &v->info.kind)) {
    return Bad(index, stat, "kind must be counter, gauge or histogram");
  }
  if (!GetString(stat, "unit", &unit) || !ParseUnit(unit, &v->info.unit)) {
    return Bad(index, stat, "unknown unit");
  }
  GetString(stat, "help", &v->info.help);
  auto value = stat.find("value");
  switch (v->info.kind) {
    case Kind::kCounter:
      if (!GetU64(stat, "value", &v->counter)) return Bad(index, stat, "counter value must be an unsigned integer");
      return Status::Ok();
    case Kind::kGauge:
      if (value == stat.end() || !value->is_number_integer()) {
        return Bad(index, stat, "gauge value must be an integer");
      }
      if (value->is_number_unsigned() && value->get<uint64_t>() > INT64_MAX) {
        return Bad(index, stat, "gauge value above 2^63-1");
      }
      v->gauge = value->get<int64_t>();
      return Status::Ok();
    case Kind::kHistogram:
      return ReadHistogram(index, stat, &v->histogram);
  }
  return Bad(index, stat, "unknown kind");
}

}  // namespace

bool ParseKind(std::string_view name, Kind* kind) {
  for (Kind k : {Kind::kCounter, Kind::kGauge, Kind::kHistogram}) {
    if (KindName(k) == name) {
      *kind = k;
      return true;
    }
  }
  return false;
}

bool ParseUnit(std::string_view name, Unit* unit) {
  for (Unit u : {Unit::kNone, Unit::kBytes, Unit::kNanoseconds, Unit::kOps, Unit::kPercent}) {
    if (UnitName(u) == name) {
      *unit = u;
      return true;
    }
  }
  return false;
}

std::string ToWireJson(const Snapshot& snapshot) {
  Json stats = Json::array();
  for (const StatValue& v : snapshot.values) {
    Json s = {{"module", v.info.module},
              {"name", v.info.name},
              {"kind", std::string(KindName(v.info.kind))},
              {"unit", std::string(UnitName(v.info.unit))},
              {"help", v.info.help}};
    switch (v.info.kind) {
      case Kind::kCounter: s["value"] = v.counter; break;
      case Kind::kGauge: s["value"] = v.gauge; break;
      case Kind::kHistogram:
        s["count"] = v.histogram.count;
        s["sum"] = v.histogram.sum;
        s["max"] = v.histogram.max;
        s["buckets"] = HistogramJson(v.histogram);
        break;
    }
    stats.push_back(std::move(s));
  }
  Json doc = {{"format", kFormat}, {"taken_ns", snapshot.taken_ns}, {"stats", std::move(stats)}};
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<Snapshot> FromWireJson(std::string_view text) {
  if (text.size() > kMaxWireBytes) {
    return Status::InvalidArgument("stats snapshot: " + std::to_string(text.size()) +
                                   " bytes, more than the limit of " + std::to_string(kMaxWireBytes));
  }
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument("stats snapshot: not valid JSON");
  if (!doc.is_object()) return Status::InvalidArgument("stats snapshot: not a JSON object");
  std::string format;
  if (!GetString(doc, "format", &format) || format != kFormat) {
    return Status::InvalidArgument("stats snapshot: format is not " + std::string(kFormat));
  }
  Snapshot s;
  if (!GetU64(doc, "taken_ns", &s.taken_ns)) {
    return Status::InvalidArgument("stats snapshot: taken_ns must be an unsigned integer");
  }
  auto stats = doc.find("stats");
  if (stats == doc.end() || !stats->is_array()) {
    return Status::InvalidArgument("stats snapshot: needs a stats array");
  }
  if (stats->size() > kMaxWireStats) {
    return Status::InvalidArgument("stats snapshot: " + std::to_string(stats->size()) +
                                   " stats, more than the limit of " + std::to_string(kMaxWireStats));
  }
  s.values.reserve(stats->size());
  for (size_t i = 0; i < stats->size(); i++) {
    StatValue v;
    ARC_RETURN_IF_ERROR(ReadStat(i, (*stats)[i], &v));
    s.values.push_back(std::move(v));
  }
  return s;
}

}  // namespace arcstore::stats
