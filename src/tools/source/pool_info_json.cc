// Pool::Info on the control socket (the `info` request): PoolInfoToJson on
// the server, PoolInfoFromJson on the client, which treats the reply as
// hostile input (every field typed, the volume list bounded).
#include <nlohmann/json.hpp>

#include "tools/source/stats_source.h"

namespace arcstore::tools {

namespace {

constexpr size_t kMaxVolumes = 100000;

Result<uint64_t> U64(const nlohmann::json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_number_unsigned()) {
    return Status::InvalidArgument(where + ": " + name + " is not an unsigned integer");
  }
  return it->get<uint64_t>();
}

Result<std::string> Text(const nlohmann::json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_string()) {
    return Status::InvalidArgument(where + ": " + name + " is not a string");
  }
  return it->get<std::string>();
}

Result<VolumeInfo> VolumeFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": not an object");
  VolumeInfo v;
  ARC_ASSIGN_OR_RETURN(v.name, Text(j, "name", where));
  ARC_ASSIGN_OR_RETURN(v.guid, U64(j, "guid", where));
  ARC_ASSIGN_OR_RETURN(v.size_bytes, U64(j, "size_bytes", where));
  ARC_ASSIGN_OR_RETURN(uint64_t record, U64(j, "record_size_bytes", where));
  if (record > UINT32_MAX) return Status::InvalidArgument(where + ": record_size_bytes too large");
  v.record_size_bytes = static_cast<uint32_t>(record);
  ARC_ASSIGN_OR_RETURN(v.compression, Text(j, "compression", where));
  return v;
}

Result<PoolInfo::CacheDevice> CacheFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": not an object");
  PoolInfo::CacheDevice d;
  ARC_ASSIGN_OR_RETURN(d.path, Text(j, "path", where));
  ARC_ASSIGN_OR_RETURN(d.state, Text(j, "state", where));
  ARC_ASSIGN_OR_RETURN(d.size_bytes, U64(j, "size_bytes", where));
  ARC_ASSIGN_OR_RETURN(d.used_bytes, U64(j, "used_bytes", where));
  ARC_ASSIGN_OR_RETURN(d.cached_bytes, U64(j, "cached_bytes", where));
  ARC_ASSIGN_OR_RETURN(d.blocks, U64(j, "blocks", where));
  ARC_ASSIGN_OR_RETURN(d.header_bytes, U64(j, "header_bytes", where));
  ARC_ASSIGN_OR_RETURN(d.stats_module, Text(j, "stats_module", where));
  return d;
}

}  // namespace

nlohmann::json PoolInfoToJson(const PoolInfo& info) {
  nlohmann::json j;
  j["name"] = info.name;
  j["path"] = info.path;
  j["guid"] = info.guid;
  j["size_bytes"] = info.size_bytes;
  j["allocated_bytes"] = info.allocated_bytes;
  j["free_bytes"] = info.free_bytes;
  j["pending_free_bytes"] = info.pending_free_bytes;
  j["txg"] = info.txg;
  j["format_version"] = info.format_version;
  nlohmann::json vols = nlohmann::json::array();
  for (const VolumeInfo& v : info.volumes) {
    vols.push_back({{"name", v.name},
                    {"guid", v.guid},
                    {"size_bytes", v.size_bytes},
                    {"record_size_bytes", v.record_size_bytes},
                    {"compression", v.compression}});
  }
  j["volumes"] = std::move(vols);
  nlohmann::json caches = nlohmann::json::array();
  for (const PoolInfo::CacheDevice& d : info.cache_devices) {
    caches.push_back({{"path", d.path},
                      {"state", d.state},
                      {"size_bytes", d.size_bytes},
                      {"used_bytes", d.used_bytes},
                      {"cached_bytes", d.cached_bytes},
                      {"blocks", d.blocks},
                      {"header_bytes", d.header_bytes},
                      {"stats_module", d.stats_module}});
  }
  j["cache_devices"] = std::move(caches);
  return j;
}

Result<PoolInfo> PoolInfoFromJson(const nlohmann::json& j) {
  const std::string where = "pool info";
  if (!j.is_object()) return Status::InvalidArgument(where + ": not a JSON object");
  PoolInfo info;
  ARC_ASSIGN_OR_RETURN(info.name, Text(j, "name", where));
  ARC_ASSIGN_OR_RETURN(info.path, Text(j, "path", where));
  ARC_ASSIGN_OR_RETURN(info.guid, U64(j, "guid", where));
  ARC_ASSIGN_OR_RETURN(info.size_bytes, U64(j, "size_bytes", where));
  ARC_ASSIGN_OR_RETURN(info.allocated_bytes, U64(j, "allocated_bytes", where));
  ARC_ASSIGN_OR_RETURN(info.free_bytes, U64(j, "free_bytes", where));
  ARC_ASSIGN_OR_RETURN(info.pending_free_bytes, U64(j, "pending_free_bytes", where));
  ARC_ASSIGN_OR_RETURN(info.txg, U64(j, "txg", where));
  ARC_ASSIGN_OR_RETURN(uint64_t version, U64(j, "format_version", where));
  if (version > UINT32_MAX) return Status::InvalidArgument(where + ": format_version too large");
  info.format_version = static_cast<uint32_t>(version);
  auto vols = j.find("volumes");
  if (vols == j.end() || !vols->is_array()) {
    return Status::InvalidArgument(where + ": volumes is not an array");
  }
  if (vols->size() > kMaxVolumes) {
    return Status::InvalidArgument(where + ": more than " + std::to_string(kMaxVolumes) +
                                   " volumes");
  }
  for (size_t i = 0; i < vols->size(); i++) {
    ARC_ASSIGN_OR_RETURN(VolumeInfo v,
                         VolumeFromJson((*vols)[i], where + ": volume " + std::to_string(i)));
    info.volumes.push_back(std::move(v));
  }
  // Absent from a server that has no cache devices to tell of.
  auto caches = j.find("cache_devices");
  if (caches != j.end()) {
    if (!caches->is_array() || caches->size() > Pool::kMaxCacheDevices) {
      return Status::InvalidArgument(where + ": cache_devices is not an array of at most " +
                                     std::to_string(Pool::kMaxCacheDevices));
    }
    for (size_t i = 0; i < caches->size(); i++) {
      ARC_ASSIGN_OR_RETURN(PoolInfo::CacheDevice d,
                           CacheFromJson((*caches)[i], where + ": cache device " + std::to_string(i)));
      info.cache_devices.push_back(std::move(d));
    }
  }
  return info;
}

}  // namespace arcstore::tools
