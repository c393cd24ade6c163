// CacheDevices: a pool's second cache level (L2ARC) — its cache devices,
// the ARC's eviction sink that feeds them, and the block source that reads
// them before the pool's device.
//
//   ARC REPLACE --OnEvict(key, origin, bytes)--> one cache device's L2Cache
//                                                (chosen by the origin's hash)
//   volume miss --ReadBlockInto(bp)--> each online cache: (Place, birth)?
//                      hit: its bytes (checked against its own checksum)
//                      miss or a bad copy: the next, then the pool's device
//
// A block is cached under (bp.Place(), bp.birth_txg), which names the same
// bytes for the pool's life: a rewritten block has a new place and birth,
// so its old copy is never found again, and a copy made before a restart
// is as good after it (an L2Cache drops copies of txgs that never
// committed when it rebuilds).
//
// Stats: in "arcstats", OpenZFS's names for the level as a whole (l2_hits,
// l2_misses, l2_read_bytes, l2_pool_fallbacks; l2_size, l2_asize,
// l2_hdr_size summed over the online devices), so that arcstat, the
// summary and doctor read them as they read a ZFS host's; each device's own
// in "l2arc.N" (N in the order devices were opened or added, never reused).
//
// A cache device that cannot be opened (missing, too small, unreadable) is
// kept in the list with its state and never used; the pool serves without
// it (one holding another pool's cache, or none, is formatted afresh and
// used). Devices come and go while the pool serves (Add, Remove): reads and
// feeds mark the entries they use, and a device taken out is closed once
// those have ended.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arc/arc.h"
#include "arcstore/pool.h"
#include "base/clock.h"
#include "base/thread_annotations.h"
#include "io/device.h"
#include "io/file_device.h"
#include "l2arc/l2_cache.h"
#include "stats/registry.h"
#include "volume/block_tree.h"

namespace arcstore::pool {

// The L2Cache options of the pool's cache options.
l2arc::L2CacheOptions L2OptionsFrom(const PoolCacheOptions& options);

class CacheDevices final : public arc::EvictionSink, public volume::BlockSource {
 public:
  // Opens the cache device named by a path (Env::open_device).
  using Opener = std::function<Result<std::unique_ptr<io::Device>>(const std::string& path)>;
  struct Env {
    volume::BlockSource* inner = nullptr;  // the pool's device (required)
    Clock* clock = nullptr;                // required
    stats::Registry* registry = nullptr;   // optional
    uint64_t pool_guid = 0;
    std::string pool_path;  // a cache device may not be the pool's own
    // Optional: the devices' index memory is charged to it (it counts in
    // the ARC's size, as a ZFS host's l2_hdr_size does).
    arc::Arc* arc = nullptr;
    // Optional: each device's reads and writes, with the N of its stats
    // module l2arc.N (the pool's per-I/O trace, io_trace.h's C records).
    std::function<void(uint32_t cache, const io::TracedIo& io)> trace_io;
    // Tests: opens the cache device named `path` instead of the file or
    // block device there (no lock, no signature check), so that a test can
    // record it or hand over a crash image; the entry owns what it returns.
    Opener open_device;
    // Tests (unsafe): copies are filed and looked up under the block's place
    // alone, not its birth, so a block freed and rewritten there is served
    // the old bytes: a stale block the crash harness must notice.
    bool unsafe_key_ignores_birth = false;
  };
  CacheDevices(const PoolCacheOptions& options, const Env& env);
  ~CacheDevices() override;
  CacheDevices(const CacheDevices&) = delete;
  CacheDevices& operator=(const CacheDevices&) = delete;

  // A device of the pool's config, at open: used if it can be; if not, it
  // is listed with the reason and the pool serves without it.
  void Open(const std::string& path, uint64_t committed_txg);
  // A new device (`pool add-cache`): its contents are replaced. An error
  // names the device and why it cannot be used; nothing changes then.
  Status Add(const std::string& path, uint64_t committed_txg);
  // Stops using the device; returns once nothing reads or feeds it.
  // NotFound when it is not one of the pool's.
  Status Remove(const std::string& path);
  std::vector<std::string> paths() const;
  std::vector<PoolInfo::CacheDevice> Info() const;
  // Devices in use now. With none, reads and evictions cost one atomic load
  // here (and the pool leaves the ARC without an eviction sink).
  int online() const { return online_.load(std::memory_order_relaxed); }
  // Tests: every online device writes what it was given; waits for their
  // rebuilds.
  Status Flush();
  void WaitRebuilt();

  // arc::EvictionSink
  void OnEvict(const arc::ArcKey& key, const arc::ArcOrigin& origin, arc::BufKind kind,
               bool prefetched, std::span<const uint8_t> data) override;
  // volume::BlockSource
  Result<std::vector<uint8_t>> ReadBlock(const format::BlockPointer& bp) override;
  Status ReadBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) override;
  Status PrefetchBlockInto(const format::BlockPointer& bp, std::span<uint8_t> out) override;

 private:
  struct Entry {
    std::string path;
    std::string stats_module;  // "l2arc.N"
    std::string state;  // "online", or why not
    io::FileLock lock;
    std::unique_ptr<io::Device> device;
    std::unique_ptr<l2arc::L2Cache> cache;  // nullptr unless online
    int users = 0;        // reads and feeds in progress (mu_)
    bool removed = false;  // (mu_)
  };
  using List = std::vector<std::shared_ptr<Entry>>;

  // Opens `path` as a cache device; `fresh`: drop what it holds.
  Result<std::shared_ptr<Entry>> OpenEntry(const std::string& path, uint64_t committed_txg,
                                           bool fresh);
  // The online entries, each marked in use until Release.
  std::vector<Entry*> Acquire() const;
  void Release(const std::vector<Entry*>& used) const;
  Status ReadCached(const format::BlockPointer& bp, std::span<uint8_t> out, bool* hit);
  // The key a copy of the block at `where` born in `birth` is filed under.
  l2arc::L2Key KeyOf(uint64_t where, uint64_t birth) const;

  const PoolCacheOptions options_;
  const Env env_;
  mutable Mutex mu_;
  mutable CondVar idle_cv_;  // a removed entry's last user is gone
  List list_ ARC_GUARDED_BY(mu_);
  std::atomic<int> online_{0};  // entries of list_ with a cache, written under mu_
  uint32_t next_module_ ARC_GUARDED_BY(mu_) = 0;
  // Level-wide stats (module "arcstats"), declared in env_.registry or in
  // a registry of the object's own.
  std::unique_ptr<stats::Registry> own_registry_;
  stats::Counter* hits_ = nullptr;
  stats::Counter* misses_ = nullptr;
  stats::Counter* read_bytes_ = nullptr;
  stats::Counter* fallbacks_ = nullptr;  // bad copies read from the pool instead
};

}  // namespace arcstore::pool
