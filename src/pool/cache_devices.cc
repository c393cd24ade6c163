// The pool's cache devices; see cache_devices.h for what they do.
#include "pool/cache_devices.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "base/checksum.h"
#include "pool/device_probe.h"

namespace arcstore::pool {

namespace {

// Whether two paths name the same file or device (the pool's own, or one
// already added under another name).
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return a == b;
  if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode)) return sa.st_rdev == sb.st_rdev;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// A new cache device is overwritten: never one the kernel holds (mounted,
// or claimed by another exclusive opener) or one that holds a filesystem,
// a partition table or a pool (pool/device_probe.h). A cache device of
// another pool carries no such signature and is taken.
Status CheckFreeForCache(const std::string& path) {
  const std::string who = "cache device " + path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status::NotFound(who + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return Status::InvalidArgument(who + " is not a file or a block device");
  }
  ARC_ASSIGN_OR_RETURN(DeviceProbe probe, ProbeExisting(path, st, who));
  if (probe.signature) {
    return Status::AlreadyExists(who + " holds " + probe.signature->description +
                                 "; adding it would destroy that");
  }
  return Status::Ok();
}

}  // namespace

l2arc::L2CacheOptions L2OptionsFrom(const PoolCacheOptions& options) {
  l2arc::L2CacheOptions o;
  o.write_max_bytes = options.write_max_bytes;
  o.write_boost_bytes = options.write_boost_bytes;
  o.feed_interval_ms = options.feed_interval_ms;
  o.cache_prefetched = options.cache_prefetched;
  o.rebuild = options.rebuild;
  return o;
}

CacheDevices::CacheDevices(const PoolCacheOptions& options, const Env& env)
    : options_(options), env_(env) {
  stats::Registry* r = env_.registry;
  if (r == nullptr) {
    own_registry_ = std::make_unique<stats::Registry>();
    r = own_registry_.get();
  }
  constexpr const char* kModule = "arcstats";
  hits_ = r->AddCounter(kModule, "l2_hits", stats::Unit::kOps,
                        "ARC misses served by a cache device");
  misses_ = r->AddCounter(kModule, "l2_misses", stats::Unit::kOps,
                          "ARC misses that no cache device held");
  read_bytes_ = r->AddCounter(kModule, "l2_read_bytes", stats::Unit::kBytes,
                              "bytes served by cache devices");
  fallbacks_ = r->AddCounter(
      kModule, "l2_pool_fallbacks", stats::Unit::kOps,
      "reads of a bad cached copy (checksum or I/O error) served by the pool's device");
  auto sum = [this](uint64_t l2arc::L2Cache::Sizes::*field) {
    return [this, field] {
      int64_t total = 0;
      MutexLock l(&mu_);
      for (const auto& e : list_) {
        if (e->cache) total += static_cast<int64_t>(e->cache->sizes().*field);
      }
      return total;
    };
  };
  r->AddGaugeFn(kModule, "l2_size", stats::Unit::kBytes, "bytes cached on cache devices",
                sum(&l2arc::L2Cache::Sizes::data_bytes));
  r->AddGaugeFn(kModule, "l2_asize", stats::Unit::kBytes,
                "cache device bytes holding cached blocks",
                sum(&l2arc::L2Cache::Sizes::device_bytes));
  r->AddGaugeFn(kModule, "l2_hdr_size", stats::Unit::kBytes,
                "memory of the cache devices' indexes (headers of blocks only there)",
                sum(&l2arc::L2Cache::Sizes::header_bytes));
}

CacheDevices::~CacheDevices() {
  List gone;
  {
    MutexLock l(&mu_);
    gone.swap(list_);
  }
  // The pool's owner detaches the sink and stops reading first: nobody
  // uses an entry any more.
}

Result<std::shared_ptr<CacheDevices::Entry>> CacheDevices::OpenEntry(
    const std::string& path, uint64_t committed_txg, bool fresh) {
  if (SameFile(path, env_.pool_path)) {
    return Status::InvalidArgument("cache device " + path + " is the pool's own device");
  }
  auto e = std::make_shared<Entry>();
  e->path = path;
  if (env_.open_device) {
    ARC_ASSIGN_OR_RETURN(e->device, env_.open_device(path));
  } else {
    ARC_ASSIGN_OR_RETURN(e->lock, io::FileLock::Acquire(path, /*exclusive=*/true));
    io::FileDeviceOptions fo;
    ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::FileDevice> dev, io::FileDevice::Open(path, fo));
    e->device = std::move(dev);
  }
  l2arc::L2CacheOptions o = L2OptionsFrom(options_);
  if (fresh) o.rebuild = false;
  uint32_t number;
  {
    MutexLock l(&mu_);
    number = next_module_++;
    e->stats_module = "l2arc." + std::to_string(number);
  }
  l2arc::L2CacheEnv le;
  le.stats_module = e->stats_module;
  le.device = e->device.get();
  le.clock = env_.clock;
  le.registry = env_.registry;
  le.pool_guid = env_.pool_guid;
  le.committed_txg = committed_txg;
  le.name = "cache " + path;
  if (env_.arc != nullptr) {
    arc::Arc* a = env_.arc;
    le.on_header_bytes = [a](int64_t delta) { a->ChargeOtherBytes(delta); };
  }
  if (env_.trace_io) {
    le.on_io = [trace = env_.trace_io, number](const io::TracedIo& io) { trace(number, io); };
  }
  ARC_ASSIGN_OR_RETURN(e->cache, l2arc::L2Cache::Open(o, le));
  e->state = "online";
  return e;
}

void CacheDevices::Open(const std::string& path, uint64_t committed_txg) {
  Result<std::shared_ptr<Entry>> e = OpenEntry(path, committed_txg, /*fresh=*/false);
  std::shared_ptr<Entry> entry;
  if (e.ok()) {
    entry = *e;
  } else {
    entry = std::make_shared<Entry>();
    entry->path = path;
    std::error_code ec;
    const bool missing = !std::filesystem::exists(path, ec);
    entry->state = (missing ? "missing: " : "unusable: ") + e.status().message();
  }
  MutexLock l(&mu_);
  if (entry->cache) online_.fetch_add(1, std::memory_order_relaxed);
  list_.push_back(std::move(entry));
}

Status CacheDevices::Add(const std::string& path, uint64_t committed_txg) {
  {
    MutexLock l(&mu_);
    if (list_.size() >= Pool::kMaxCacheDevices) {
      return Status::InvalidArgument("cache device " + path + ": the pool has " +
                                     std::to_string(list_.size()) + " cache devices, the most");
    }
    for (const auto& e : list_) {
      if (e->path == path || SameFile(e->path, path)) {
        return Status::AlreadyExists("cache device " + path + " is already the pool's (" +
                                     e->path + ")");
      }
    }
  }
  if (!env_.open_device && !SameFile(path, env_.pool_path)) {
    ARC_RETURN_IF_ERROR(CheckFreeForCache(path));
  }
  ARC_ASSIGN_OR_RETURN(std::shared_ptr<Entry> e, OpenEntry(path, committed_txg, /*fresh=*/true));
  MutexLock l(&mu_);
  list_.push_back(std::move(e));
  online_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Status CacheDevices::Remove(const std::string& path) {
  std::shared_ptr<Entry> gone;
  {
    MutexLock l(&mu_);
    auto it = std::find_if(list_.begin(), list_.end(),
                           [&](const auto& e) { return e->path == path; });
    if (it == list_.end()) {
      return Status::NotFound("cache device " + path + " is not one of the pool's");
    }
    gone = *it;
    list_.erase(it);
    if (gone->cache) online_.fetch_sub(1, std::memory_order_relaxed);
    gone->removed = true;
    while (gone->users > 0) idle_cv_.Wait(&mu_);
  }
  return Status::Ok();  // `gone` closes its device here
}

std::vector<std::string> CacheDevices::paths() const {
  MutexLock l(&mu_);
  std::vector<std::string> out;
  for (const auto& e : list_) out.push_back(e->path);
  return out;
}

std::vector<PoolInfo::CacheDevice> CacheDevices::Info() const {
  std::vector<PoolInfo::CacheDevice> out;
  MutexLock l(&mu_);
  for (const auto& e : list_) {
    PoolInfo::CacheDevice d;
    d.path = e->path;
    d.state = e->state;
    if (e->cache) d.stats_module = e->stats_module;
    if (e->device) d.size_bytes = e->device->size_bytes();
    if (e->cache) {
      const l2arc::L2Cache::Sizes s = e->cache->sizes();
      d.used_bytes = s.device_bytes;
      d.cached_bytes = s.data_bytes;
      d.blocks = s.entries;
      d.header_bytes = s.header_bytes;
    }
    out.push_back(std::move(d));
  }
  return out;
}

Status CacheDevices::Flush() {
  std::vector<Entry*> used = Acquire();
  Status first;
  for (Entry* e : used) {
    Status s = e->cache->Flush();
    if (first.ok()) first = s;
  }
  Release(used);
  return first;
}

void CacheDevices::WaitRebuilt() {
  std::vector<Entry*> used = Acquire();
  for (Entry* e : used) e->cache->WaitRebuilt();
  Release(used);
}

std::vector<CacheDevices::Entry*> CacheDevices::Acquire() const {
  std::vector<Entry*> used;
  MutexLock l(&mu_);
  for (const auto& e : list_) {
    if (e->cache == nullptr) continue;
    e->users++;
    used.push_back(e.get());
  }
  return used;
}

void CacheDevices::Release(const std::vector<Entry*>& used) const {
  MutexLock l(&mu_);
  for (Entry* e : used) {
    if (--e->users == 0 && e->removed) idle_cv_.SignalAll();
  }
}

void CacheDevices::OnEvict(const arc::ArcKey& key, const arc::ArcOrigin& origin,
                           arc::BufKind kind, bool prefetched, std::span<const uint8_t> data) {
  if (online() == 0) return;
  std::vector<Entry*> used = Acquire();
  if (!used.empty()) {
    const uint64_t h = Xxh3_64(&origin, sizeof(origin));
    used[h % used.size()]->cache->Offer(KeyOf(origin.where, origin.birth), data,
                                        kind != arc::BufKind::kData, prefetched);
  }
  Release(used);
}

l2arc::L2Key CacheDevices::KeyOf(uint64_t where, uint64_t birth) const {
  return {where, env_.unsafe_key_ignores_birth ? 0 : birth};
}

Status CacheDevices::ReadCached(const format::BlockPointer& bp, std::span<uint8_t> out,
                                bool* hit) {
  *hit = false;
  if (online() == 0 || bp.IsHole() || bp.birth_txg == 0) return Status::Ok();
  std::vector<Entry*> used = Acquire();
  for (Entry* e : used) {
    Status s = e->cache->Read(KeyOf(bp.Place(), bp.birth_txg), out);
    if (s.ok()) {
      *hit = true;
      break;
    }
    if (s.code() != StatusCode::kNotFound) fallbacks_->Add();
  }
  Release(used);
  if (!used.empty()) {
    (*hit ? hits_ : misses_)->Add();
    if (*hit) read_bytes_->Add(out.size());
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> CacheDevices::ReadBlock(const format::BlockPointer& bp) {
  return env_.inner->ReadBlock(bp);
}

Status CacheDevices::ReadBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) {
  bool hit = false;
  ARC_RETURN_IF_ERROR(ReadCached(bp, out, &hit));
  return hit ? Status::Ok() : env_.inner->ReadBlockInto(bp, out);
}

Status CacheDevices::PrefetchBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) {
  bool hit = false;
  ARC_RETURN_IF_ERROR(ReadCached(bp, out, &hit));
  return hit ? Status::Ok() : env_.inner->PrefetchBlockInto(bp, out);
}

}  // namespace arcstore::pool
