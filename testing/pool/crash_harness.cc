#include "testing/pool/crash_harness.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>

#include "base/random.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "testing/io/cow_image.h"
#include "testing/io/recording_device.h"

namespace arcstore::pool {
namespace {

// Forwards to a device it does not own, counting completed durability
// barriers: flushes and FUA writes (Recording::FlushCrashPoints' events).
class CountingDevice final : public io::ForwardingDevice {
 public:
  explicit CountingDevice(io::Device* d) : ForwardingDevice(d) {}
  void Submit(io::IoRequest r) override {
    if (r.op == io::IoOp::kFlush || (r.op == io::IoOp::kWrite && r.fua)) {
      auto done = std::move(r.done);
      r.done = [this, done](const Status& s) {
        if (s.ok()) barriers_++;
        done(s);
      };
    }
    inner()->Submit(std::move(r));
  }
  uint64_t barriers() const { return barriers_.load(); }

 private:
  std::atomic<uint64_t> barriers_{0};
};

struct VolumeSpec {
  std::string name;
  uint64_t size;
  uint32_t record;
};

const VolumeSpec kVolumes[] = {
    {"a", 512 * 1024, 4096}, {"b", 768 * 1024, 16384}, {"c", 1024 * 1024, 65536}};

using Model = std::vector<std::vector<uint8_t>>;  // per volume

// The cache device's path in the pool's config; the harness's opener
// (UnsafeTestSwitches::open_cache_device) answers for it.
constexpr char kCachePath[] = "crash-cache";

PoolOptions HarnessPoolOptions(const CrashHarnessOptions& o) {
  PoolOptions po;
  po.txg_timeout_ns = 600 * kNsPerSec;  // txgs end when the workload asks
  po.intent_log_sync_kick_percent = 0;
  po.space_sync_kick_percent = 0;  // no early kick for space: only the workload ends txgs
  po.dirty_max_bytes = 1 * kGiB;
  po.intent_log = o.intent_log;
  po.work_threads = 0;
  // The ARC's memory comes as it is asked for: growing ahead would make
  // and zero up to its 64 MiB at every open of a crash image, most of a
  // harness run's time, and where buffers come from has no part in what
  // a power cut leaves.
  po.arc_grow_ahead_bytes = 0;
  if (o.cache_device_bytes != 0) {
    // The floor PoolOptions allows, and c_min as large: a cap set with
    // Arc::SetMaxBytes moves c down at once, and lifting the cap moves it
    // back up at once. Slots are sealed when full or when the
    // workload flushes the cache, never by the clock, and no offer is over
    // budget.
    po.arc_max_bytes = 16 * kMiB;
    po.arc_min_bytes = 16 * kMiB;
    po.cache.feed_interval_ms = 60000;
    po.cache.write_max_bytes = kGiB;
  }
  return po;
}

// One change of the workload: a write, trim or zeroing of one volume. The
// engine logs it as one record per volume record it touches, with
// consecutive seqs from first_seq, all in `txg`.
struct Change {
  uint64_t first_seq = 0;
  uint64_t txg = 0;
  size_t volume = 0;
  uint64_t offset = 0, length = 0;
  bool zeros = false;
  uint64_t data_seed = 0;  // the bytes of a write, regenerated on demand
};

std::vector<uint8_t> ChangeData(const Change& c) {
  std::vector<uint8_t> d(c.length);
  SeededRandom(c.data_seed).Fill(d.data(), d.size());
  return d;
}

// The records (pieces) of a change: [offset, length) per volume record.
template <typename Fn>
void ForEachPiece(const Change& c, Fn fn) {
  const uint64_t rec = kVolumes[c.volume].record;
  uint64_t seq = c.first_seq;
  for (uint64_t pos = 0; pos < c.length; seq++) {
    const uint64_t at = c.offset + pos;
    const uint64_t n = std::min(rec - at % rec, c.length - pos);
    fn(seq, pos, n);
    pos += n;
  }
}

uint64_t PieceCount(const Change& c) {
  uint64_t n = 0;
  ForEachPiece(c, [&](uint64_t, uint64_t, uint64_t) { n++; });
  return n;
}

// Applies the pieces of `c` with after_seq < seq <= max_seq (all: 0 and
// UINT64_MAX). A write's bytes are regenerated only when a piece applies.
void Apply(const Change& c, uint64_t after_seq, uint64_t max_seq, Model* model) {
  if (c.first_seq > max_seq || c.first_seq + PieceCount(c) - 1 <= after_seq) return;
  std::vector<uint8_t> data = c.zeros ? std::vector<uint8_t>() : ChangeData(c);
  std::vector<uint8_t>& m = (*model)[c.volume];
  ForEachPiece(c, [&](uint64_t seq, uint64_t pos, uint64_t n) {
    if (seq <= after_seq || seq > max_seq) return;
    if (c.zeros) {
      std::memset(m.data() + c.offset + pos, 0, n);
    } else {
      std::memcpy(m.data() + c.offset + pos, data.data() + pos, n);
    }
  });
}

// Reads every volume of `pool`, 256 KiB at a time (so that a small ARC
// never has to hold a whole volume at once).
Result<Model> ReadAll(PoolImpl& pool) {
  constexpr uint64_t kReadBytes = 256 << 10;
  Model out;
  for (const auto& v : kVolumes) {
    ARC_ASSIGN_OR_RETURN(std::shared_ptr<Volume> vol, pool.OpenVolume(v.name));
    std::vector<uint8_t> got(v.size);
    for (uint64_t at = 0; at < v.size; at += kReadBytes) {
      const uint64_t n = std::min(kReadBytes, v.size - at);
      ARC_RETURN_IF_ERROR((*vol).Read(at, std::span<uint8_t>(got.data() + at, n)));
    }
    out.push_back(std::move(got));
  }
  return out;
}

// "" when equal, else where the first difference is.
std::string Diff(const Model& got, const Model& want) {
  for (size_t v = 0; v < want.size(); v++) {
    if (got[v] == want[v]) continue;
    for (size_t i = 0; i < want[v].size(); i++) {
      if (got[v][i] != want[v][i]) {
        return "volume " + kVolumes[v].name + " differs from the model at byte " +
               std::to_string(i) + " (got " + std::to_string(got[v][i]) + ", expected " +
               std::to_string(want[v][i]) + ")";
      }
    }
  }
  return "";
}

// What a completed flush, FUA write or sync made durable.
struct DurableMark {
  uint64_t barriers = 0;  // device flushes and FUA writes completed when it returned
  uint64_t seq = 0;      // every change up to this seq
  uint64_t txg = 0;      // every txg up to this one
};

struct Opened {
  std::unique_ptr<PoolImpl> pool;
  uint64_t txg = 0;       // the uberblock opened
  uint64_t last_seq = 0;  // of the last log record replay read
};

// What a crash leaves: the pool device's image and, when the workload had
// a cache device, the cache device's image of the same moment.
struct CrashImages {
  io::CowImage pool;
  std::optional<io::CowImage> cache;
};

// The recorders of an open, on one clock, so that it can be cut in turn.
struct OpenRecorders {
  std::shared_ptr<std::atomic<uint64_t>> seq = std::make_shared<std::atomic<uint64_t>>(0);
  io::RecordingDevice* pool = nullptr;
  io::RecordingDevice* cache = nullptr;  // set when the open opened the cache device
  std::vector<std::unique_ptr<io::Device>> keep;  // the devices under the recorders
};

// The cache device of a crash image: a device over (a copy of) `image`,
// recorded when `rec` is given. Any other path is not found, so that an
// image never opens a file of the same name.
CacheDevices::Opener CacheImageOpener(std::optional<io::CowImage> image,
                                           OpenRecorders* rec) {
  auto shared = image ? std::make_shared<const io::CowImage>(std::move(*image)) : nullptr;
  return [shared, rec](const std::string& path) -> Result<std::unique_ptr<io::Device>> {
    if (shared == nullptr || path != kCachePath) {
      return Status::NotFound("crash harness: no cache device image for " + path);
    }
    ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::CowImageDevice> dev,
                         io::CowImageDevice::Create(kCachePath, *shared));
    if (rec == nullptr) return std::unique_ptr<io::Device>(std::move(dev));
    io::RecordingOptions ro;
    ro.shared_seq = rec->seq;
    ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::RecordingDevice> r,
                         io::RecordingDevice::Create(dev.get(), ro));
    rec->cache = r.get();
    rec->keep.push_back(std::move(dev));
    return std::unique_ptr<io::Device>(std::move(r));
  };
}

Result<Opened> OpenImage(const CrashHarnessOptions& options, CrashImages images,
                         OpenRecorders* rec) {
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::CowImageDevice> img,
                       io::CowImageDevice::Create("crash-image", std::move(images.pool)));
  std::unique_ptr<io::Device> dev = std::move(img);
  if (rec != nullptr) {
    io::RecordingOptions ro;
    ro.shared_seq = rec->seq;
    ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::RecordingDevice> r,
                         io::RecordingDevice::Create(dev.get(), ro));
    rec->pool = r.get();
    rec->keep.push_back(std::move(dev));
    dev = std::move(r);
  }
  // The switches that break the commit protocol are the workload's; the
  // cache's keying is the same at every open.
  UnsafeTestSwitches unsafe;
  unsafe.l2_key_ignores_birth = options.unsafe.l2_key_ignores_birth;
  unsafe.open_cache_device = CacheImageOpener(std::move(images.cache), rec);
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<PoolImpl> p,
                       PoolImpl::OpenOnDevice(std::move(dev), HarnessPoolOptions(options), unsafe));
  Opened o;
  o.txg = p->open_report().txg;
  o.last_seq = p->open_report().log_last_seq;
  o.pool = std::move(p);
  return o;
}

uint64_t StatOf(PoolImpl& pool, const std::string& module, const char* name) {
  return static_cast<uint64_t>(std::max<int64_t>(0, pool.stats().TakeSnapshot().Get(module, name)));
}

// Blocks served by the pool's cache devices so far.
uint64_t L2Hits(PoolImpl& pool) { return StatOf(pool, "arcstats", "l2_hits"); }

// Slots written by the pool's cache devices now online.
uint64_t L2SlotsWritten(PoolImpl& pool) {
  uint64_t n = 0;
  for (const PoolInfo::CacheDevice& d : pool.Info().cache_devices) {
    if (!d.stats_module.empty()) n += StatOf(pool, d.stats_module, "slots_written");
  }
  return n;
}

// With a cache device online: waits for its rebuild, then shrinks the ARC
// to `arc_bytes` and empties it, so that the reads that follow miss the
// ARC and ask the cache device first. False when none is online.
bool ReadThroughCache(PoolImpl& pool, uint64_t arc_bytes) {
  CacheDevices* caches = pool.cache_devices();
  if (caches == nullptr || caches->online() == 0) return false;
  caches->WaitRebuilt();
  pool.arc().SetMaxBytes(arc_bytes);
  return pool.DropCaches().ok();
}

// Reads every volume of `pool` as ReadAll does, through the cache device
// when one is online, counting its images and hits in `result`.
Result<Model> VerifyRead(PoolImpl& pool, const CrashHarnessOptions& options,
                         CrashHarnessResult* result) {
  const bool through_cache =
      options.cache_device_bytes != 0 && ReadThroughCache(pool, options.cache_arc_bytes);
  const uint64_t hits_before = through_cache ? L2Hits(pool) : 0;
  Result<Model> got = ReadAll(pool);
  if (through_cache) {
    result->l2_images++;
    result->l2_verify_hits += L2Hits(pool) - hits_before;
  }
  return got;
}

// With a cache device, perhaps one operation on it: squeeze the ARC (cap
// it at cache_arc_bytes, which evicts what is over it into the cache
// device, and lift the cap), write the cache's partly filled slot, remove
// it, or add it back (fresh). True when it was one of these.
Result<bool> CacheOperation(const CrashHarnessOptions& options, PoolImpl& pool,
                            SeededRandom& rnd, bool* attached, CrashHarnessResult* result) {
  if (!*attached) {
    if (!rnd.OneIn(options.cache_readd_one_in)) return false;
    ARC_RETURN_IF_ERROR(pool.AddCache(kCachePath));
    *attached = true;
    return true;
  }
  if (options.cache_squeeze_one_in != 0 && rnd.OneIn(options.cache_squeeze_one_in)) {
    pool.arc().SetMaxBytes(options.cache_arc_bytes);
    pool.arc().RunEvictionPass();
    pool.arc().SetMaxBytes(0);
    return true;
  }
  if (options.cache_flush_one_in != 0 && rnd.OneIn(options.cache_flush_one_in)) {
    ARC_RETURN_IF_ERROR(pool.cache_devices()->Flush());
    return true;
  }
  if (options.cache_remove_one_in != 0 && rnd.OneIn(options.cache_remove_one_in)) {
    result->l2_slots_written += L2SlotsWritten(pool);  // its stats go with it
    ARC_RETURN_IF_ERROR(pool.RemoveCache(kCachePath));
    *attached = false;
    result->cache_removes++;
    return true;
  }
  return false;
}

}  // namespace

Status CrashHarnessOptions::Validate() const {
  if (operations == 0 || operations > 1'000'000) {
    return Status::InvalidArgument("crash harness: operations must be in [1, 1000000]");
  }
  if (flush_one_in == 0 || images_per_point == 0) {
    return Status::InvalidArgument("crash harness: flush_one_in and images_per_point must be > 0");
  }
  if (device_bytes < (8 << 20) || device_bytes > (256 << 20)) {
    return Status::InvalidArgument("crash harness: device_bytes must be in [8 MiB, 256 MiB]");
  }
  if (cache_device_bytes != 0 && (cache_device_bytes < (6 << 20) || cache_device_bytes > (64 << 20))) {
    return Status::InvalidArgument(
        "crash harness: cache_device_bytes must be 0 or in [6 MiB, 64 MiB]");
  }
  if (cache_arc_bytes < (256 << 10) || cache_arc_bytes > (16 << 20)) {
    return Status::InvalidArgument("crash harness: cache_arc_bytes must be in [256 KiB, 16 MiB]");
  }
  if (cache_readd_one_in == 0) {
    return Status::InvalidArgument("crash harness: cache_readd_one_in must be > 0");
  }
  return Status::Ok();
}

Result<CrashHarnessResult> RunCrashHarness(const CrashHarnessOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  CrashHarnessResult result;
  SeededRandom rnd(options.seed);
  const PoolOptions pool_options = HarnessPoolOptions(options);
  const bool with_cache = options.cache_device_bytes != 0;

  // The cache device, when asked for: the opener hands out a device over
  // `cache_target` (the memory device while the pool is set up, its
  // recorder during the workload).
  std::unique_ptr<io::MemoryDevice> cache_mem;
  io::Device* cache_target = nullptr;
  UnsafeTestSwitches unsafe = options.unsafe;
  unsafe.open_cache_device =
      [&cache_target](const std::string& path) -> Result<std::unique_ptr<io::Device>> {
    if (cache_target == nullptr || path != kCachePath) {
      return Status::NotFound("crash harness: no cache device " + path);
    }
    return std::unique_ptr<io::Device>(std::make_unique<io::ForwardingDevice>(cache_target));
  };
  if (with_cache) {
    io::MemoryDeviceOptions co;
    co.name = kCachePath;
    co.size_bytes = options.cache_device_bytes;
    ARC_ASSIGN_OR_RETURN(cache_mem, io::MemoryDevice::Create(co));
    cache_target = cache_mem.get();
  }

  // The pool with its volumes (and its cache device), before recording
  // starts.
  io::MemoryDeviceOptions mo;
  mo.size_bytes = options.device_bytes;
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::MemoryDevice> mem, io::MemoryDevice::Create(mo));
  ARC_RETURN_IF_ERROR(PoolImpl::Format(mem.get(), "crash"));
  uint64_t base_txg = 0;  // where the recording starts
  Model initial;          // the volumes then
  for (const auto& v : kVolumes) initial.emplace_back(v.size, 0);
  {
    ARC_ASSIGN_OR_RETURN(std::unique_ptr<PoolImpl> p,
                         PoolImpl::OpenOnDevice(std::make_unique<CountingDevice>(mem.get()),
                                                pool_options, unsafe));
    for (const auto& v : kVolumes) {
      VolumeOptions vo;
      vo.name = v.name;
      vo.size_bytes = v.size;
      vo.record_size_bytes = v.record;
      vo.compression = rnd.OneIn(2) ? "lz4" : "off";
      ARC_RETURN_IF_ERROR(p->CreateVolume(vo));
    }
    if (with_cache) {
      ARC_RETURN_IF_ERROR(p->AddCache(kCachePath));
      // Volumes full of data from the start: the workload's first reads
      // find blocks on the device, which the ARC then evicts into the cache.
      for (size_t i = 0; i < std::size(kVolumes); i++) {
        SeededRandom(rnd.Uniform(UINT64_MAX)).Fill(initial[i].data(), initial[i].size());
        ARC_ASSIGN_OR_RETURN(std::shared_ptr<Volume> vol, p->OpenVolume(kVolumes[i].name));
        ARC_RETURN_IF_ERROR(vol->Write(0, initial[i]));
      }
    }
    ARC_RETURN_IF_ERROR(p->Close());
    base_txg = p->Info().txg;
  }

  // The workload, recorded: the pool's device and the cache device on one
  // clock.
  io::RecordingOptions ro;
  ro.shared_seq = std::make_shared<std::atomic<uint64_t>>(0);
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::RecordingDevice> rec,
                       io::RecordingDevice::Create(mem.get(), ro));
  std::unique_ptr<io::RecordingDevice> cache_rec;
  if (with_cache) {
    ARC_ASSIGN_OR_RETURN(cache_rec, io::RecordingDevice::Create(cache_mem.get(), ro));
    cache_target = cache_rec.get();
  }
  auto counting = std::make_unique<CountingDevice>(rec.get());
  CountingDevice* counter = counting.get();
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<PoolImpl> pool,
                       PoolImpl::OpenOnDevice(std::move(counting), pool_options, unsafe));
  bool cache_attached = with_cache;
  if (with_cache) {
    // Offers are refused until the rebuild is done.
    if (pool->cache_devices()->online() == 0) {
      return Status::Internal("crash harness: the cache device did not come online");
    }
    pool->cache_devices()->WaitRebuilt();
  }
  // The txg manager ends a txg by itself once its dirty data passes a
  // fifth of the ARC's dirty limit (half of c): the workload syncs before
  // it could.
  const uint64_t dirty_budget_bytes = with_cache ? pool->arc().target_bytes() / 16 : UINT64_MAX;
  uint64_t open_dirty_bytes = 0;  // at most: a whole record per piece written since the commit
  auto last_seq = [&] { return pool->intent_log() ? pool->intent_log()->last_seq() : 0; };
  Model model = initial;
  std::map<uint64_t, Model> at_txg;        // contents at each committed txg
  std::map<uint64_t, size_t> changes_at;   // changes made before each txg committed
  std::vector<Change> changes;
  std::vector<DurableMark> marks;
  uint64_t committed = pool->Info().txg;
  for (uint64_t t : {base_txg, committed}) {
    at_txg[t] = model;
    changes_at[t] = 0;
  }
  auto note_commits = [&] {
    // Txgs commit only when the workload asks (a sync, or a flush that
    // fell back to one), and then hold every change made so far.
    const uint64_t now = pool->Info().txg;
    if (now != committed) {
      committed = now;
      at_txg[now] = model;
      changes_at[now] = changes.size();
      open_dirty_bytes = 0;
    }
  };
  auto sync = [&]() -> Status {
    ARC_RETURN_IF_ERROR(pool->Sync());
    note_commits();
    marks.push_back(DurableMark{counter->barriers(), 0, committed});
    return Status::Ok();
  };
  std::vector<std::shared_ptr<Volume>> vols;
  for (const auto& v : kVolumes) {
    ARC_ASSIGN_OR_RETURN(std::shared_ptr<Volume> h, pool->OpenVolume(v.name));
    vols.push_back(h);
  }
  auto fail_workload = [&](uint32_t op, const std::string& what) {
    result.failures.push_back("seed " + std::to_string(options.seed) + " workload op " +
                              std::to_string(op) + ": " + what);
  };
  for (uint32_t op = 0; op < options.operations; op++) {
    const size_t v = rnd.Uniform(vols.size());
    if (with_cache) {
      Result<bool> done = CacheOperation(options, *pool, rnd, &cache_attached, &result);
      ARC_RETURN_IF_ERROR(done.status());
      if (*done) continue;
    }
    if (options.read_one_in != 0 && rnd.OneIn(options.read_one_in)) {
      const uint64_t offset = rnd.Uniform(kVolumes[v].size);
      const uint64_t length =
          rnd.Range(1, std::min<uint64_t>(kVolumes[v].size - offset, 3 * kVolumes[v].record));
      std::vector<uint8_t> got(length);
      result.workload_reads++;
      if (Status s = vols[v]->Read(offset, got); !s.ok()) {
        fail_workload(op, "read of volume " + kVolumes[v].name + ": " + s.ToString());
      } else if (!std::equal(got.begin(), got.end(), model[v].begin() + offset)) {
        fail_workload(op, "a read of volume " + kVolumes[v].name + " at " +
                              std::to_string(offset) + "+" + std::to_string(length) +
                              " differs from the model");
      }
      if (options.stop_at_first_failure && !result.failures.empty()) return result;
      continue;
    }
    if (rnd.OneIn(options.flush_one_in)) {
      ARC_RETURN_IF_ERROR(vols[v]->Flush());
      note_commits();
      marks.push_back(DurableMark{counter->barriers(), last_seq(), options.intent_log ? 0 : committed});
      result.durable_flushes++;
      continue;
    }
    if (rnd.OneIn(options.sync_one_in)) {
      ARC_RETURN_IF_ERROR(sync());
      continue;
    }
    Change c;
    c.volume = v;
    c.offset = rnd.Uniform(kVolumes[v].size);
    c.length = rnd.Range(1, std::min<uint64_t>(kVolumes[v].size - c.offset,
                                               3 * kVolumes[v].record));
    const uint64_t dirty_bytes = PieceCount(c) * kVolumes[v].record;
    if (open_dirty_bytes + dirty_bytes > dirty_budget_bytes) ARC_RETURN_IF_ERROR(sync());
    open_dirty_bytes += dirty_bytes;
    c.first_seq = last_seq() + 1;
    c.txg = pool->txgs().open_txg();
    const uint64_t kind = rnd.Uniform(20);
    bool fua = false;
    Status s;
    if (kind < 14) {
      c.data_seed = rnd.Uniform(UINT64_MAX);
      fua = kind == 0;
      s = vols[v]->Write(c.offset, ChangeData(c), fua ? kFua : 0);
    } else if (kind < 18) {
      c.zeros = true;
      s = vols[v]->Trim(c.offset, c.length);
    } else {
      c.zeros = true;
      s = vols[v]->WriteZeroes(c.offset, c.length, rnd.OneIn(2) ? kZeroNoHole : kZeroNone);
    }
    ARC_RETURN_IF_ERROR(s);
    if (options.intent_log && last_seq() != c.first_seq - 1 + PieceCount(c)) {
      return Status::Internal("crash harness: op " + std::to_string(op) + " logged " +
                              std::to_string(last_seq() - c.first_seq + 1) + " records, expected " +
                              std::to_string(PieceCount(c)));
    }
    Apply(c, 0, UINT64_MAX, &model);
    changes.push_back(c);
    if (fua) {
      // A FUA write may have fallen back to a txg sync holding it.
      note_commits();
      marks.push_back(DurableMark{counter->barriers(), last_seq(), options.intent_log ? 0 : committed});
      result.durable_flushes++;
    } else if (pool->txgs().open_txg() != c.txg || pool->Info().txg != committed) {
      return Status::Internal("crash harness: a txg ended during op " + std::to_string(op) +
                              "; the model assumes txgs end only when the workload asks");
    }
  }
  vols.clear();
  result.txgs = at_txg.size() - 1;
  if (cache_attached) result.l2_slots_written += L2SlotsWritten(*pool);
  if (with_cache) result.l2_workload_hits = L2Hits(*pool);
  io::Recording recording = rec->TakeRecording();
  // Taken second: a slot write after the pool's recording ends is after
  // its last crash point too.
  std::optional<io::Recording> cache_recording;
  if (cache_rec) cache_recording = cache_rec->TakeRecording();
  pool.reset();  // stops without a final sync being needed by the points below

  // The contents a pool opened at txg T with log records up to seq k must
  // have: T's state, then every later change's pieces with seq <= k. The
  // images of a crash point open at a few (T, k) near each other, so the
  // last few answers are kept, and one for the same T and a smaller k is
  // extended by the pieces between (regenerating the writes' bytes is most
  // of the cost).
  struct Expected {
    uint64_t txg = 0, k = 0;
    Model model;
  };
  std::deque<Expected> recent_expected;  // newest first, at most kExpectedKept
  constexpr size_t kExpectedKept = 4;
  auto expected = [&](uint64_t txg, uint64_t k) -> Result<const Model*> {
    const Expected* from = nullptr;  // same txg, the largest k below this one
    for (const Expected& e : recent_expected) {
      if (e.txg != txg || e.k > k) continue;
      if (e.k == k) return &e.model;
      if (from == nullptr || e.k > from->k) from = &e;
    }
    auto at = at_txg.find(txg);
    if (at == at_txg.end()) {
      return Status::NotFound("txg " + std::to_string(txg) + " was never committed by the workload");
    }
    Model m = from != nullptr ? from->model : at->second;
    const uint64_t after = from != nullptr ? from->k : 0;
    for (size_t i = changes_at[txg]; i < changes.size(); i++) Apply(changes[i], after, k, &m);
    if (recent_expected.size() == kExpectedKept) recent_expected.pop_back();
    recent_expected.push_front(Expected{txg, k, std::move(m)});
    return &recent_expected.front().model;
  };
  // The newest change a crash after `marks` may not lose, as a check on (T, k).
  auto lost = [&](uint64_t must_seq, uint64_t txg, uint64_t k) -> std::string {
    for (size_t i = changes_at[txg]; i < changes.size(); i++) {
      const Change& c = changes[i];
      std::string what;
      ForEachPiece(c, [&](uint64_t seq, uint64_t, uint64_t) {
        if (what.empty() && seq <= must_seq && seq > k) {
          what = "durable record seq " + std::to_string(seq) + " (volume " +
                 kVolumes[c.volume].name + " offset " + std::to_string(c.offset) + ", txg " +
                 std::to_string(c.txg) + ") is missing: opened at txg " + std::to_string(txg) +
                 ", log replayed up to seq " + std::to_string(k);
        }
      });
      if (!what.empty()) return what;
    }
    return "";
  };

  // Every crash point, several images each.
  const std::vector<uint64_t> points = recording.FlushCrashPoints();
  io::CrashImageBuilder builder(recording);
  std::optional<io::CrashImageBuilder> cache_builder;
  if (cache_recording) cache_builder.emplace(*cache_recording);
  for (size_t i = 0; i < points.size(); i++) {
    // Barriers 0..i-1 had completed at point i (the last point: all of them).
    uint64_t must_txg = 0, must_seq = 0;
    for (const DurableMark& m : marks) {
      if (m.barriers <= i) {
        must_txg = std::max(must_txg, m.txg);
        must_seq = std::max(must_seq, m.seq);
      }
    }
    const io::CrashState& state = builder.AdvanceTo(points[i]);
    const io::CrashState* cache_state =
        cache_builder ? &cache_builder->AdvanceTo(points[i]) : nullptr;
    result.crash_points++;
    for (uint32_t k = 0; k < options.images_per_point; k++) {
      std::vector<io::PendingChoice> choices =
          recording.RandomChoices(state, rnd, options.tear_one_in);
      std::vector<io::PendingChoice> cache_choices;
      if (cache_state != nullptr) {
        cache_choices = cache_recording->RandomChoices(*cache_state, rnd, options.tear_one_in);
      }
      auto fail = [&](const std::string& what) {
        std::string cache;
        if (cache_state != nullptr) {
          cache = ", " + std::to_string(cache_choices.size()) + " of " +
                  std::to_string(cache_state->pending.size()) + " pending cache device writes";
        }
        result.failures.push_back("seed " + std::to_string(options.seed) + " crash point " +
                                  std::to_string(i) + " image " + std::to_string(k) + " (" +
                                  std::to_string(choices.size()) + " of " +
                                  std::to_string(state.pending.size()) +
                                  " pending writes landed" + cache + "): " + what);
      };
      CrashImages images;
      ARC_ASSIGN_OR_RETURN(images.pool, builder.Build(choices));
      if (cache_builder) {
        ARC_ASSIGN_OR_RETURN(io::CowImage cache_image, cache_builder->Build(cache_choices));
        images.cache = std::move(cache_image);
      }
      result.images++;
      const bool cut_replay =
          options.replay_crash_one_in != 0 && rnd.OneIn(options.replay_crash_one_in);
      CrashImages copy;  // shares the blocks
      if (cut_replay) copy = images;
      Result<Opened> opened = OpenImage(options, std::move(images), nullptr);
      Model contents;
      if (!opened.ok()) {
        fail("pool does not open: " + opened.status().ToString());
      } else {
        PoolImpl& p = *opened->pool;
        const uint64_t txg = opened->txg;
        if (txg < p.open_report().newest_seen_txg) result.fallbacks++;
        if (p.open_report().log_records_replayed > 0) {
          result.replayed_images++;
          result.replayed_records += p.open_report().log_records_replayed;
        }
        PoolImpl::Census c = p.Check();
        Result<const Model*> want = expected(txg, opened->last_seq);
        Result<Model> got = VerifyRead(p, options, &result);
        if (!c.problems.empty()) {
          fail("check at txg " + std::to_string(txg) + ": " + c.problems.front());
        } else if (txg < must_txg) {
          fail("opened at txg " + std::to_string(txg) + " but txg " + std::to_string(must_txg) +
               " was durable (a completed sync waited for it)");
        } else if (!want.ok()) {
          fail("opened at txg " + std::to_string(txg) + ": " + want.status().ToString());
        } else if (std::string miss = lost(must_seq, txg, opened->last_seq); !miss.empty()) {
          fail(miss);
        } else if (!got.ok()) {
          fail("reading the volumes: " + got.status().ToString());
        } else if (std::string diff = Diff(*got, **want); !diff.empty()) {
          fail("at txg " + std::to_string(txg) + " + log to seq " +
               std::to_string(opened->last_seq) + ": " + diff);
        } else {
          contents = std::move(*got);
        }
        opened->pool.reset();
      }
      // Replay cut short: the open of this image (and its cache device's
      // rebuild), itself cut at each of its flushes, must reopen to the
      // same contents.
      if (cut_replay && !contents.empty() && opened.ok()) {
        OpenRecorders recorders;
        Result<Opened> again = OpenImage(options, std::move(copy), &recorders);
        if (!again.ok()) {
          fail("second open: " + again.status().ToString());
        } else {
          io::Recording replay = recorders.pool->TakeRecording();
          std::optional<io::Recording> cache_replay;
          if (recorders.cache != nullptr) cache_replay = recorders.cache->TakeRecording();
          again->pool.reset();
          for (uint64_t point : replay.FlushCrashPoints()) {
            io::CrashState cut = replay.StateAt(point);
            std::vector<io::PendingChoice> landed = replay.RandomChoices(cut, rnd, options.tear_one_in);
            CrashImages twice;
            ARC_ASSIGN_OR_RETURN(twice.pool, replay.BuildImage(cut, landed));
            if (cache_replay) {
              io::CrashState cache_cut = cache_replay->StateAt(point);
              std::vector<io::PendingChoice> cache_landed =
                  cache_replay->RandomChoices(cache_cut, rnd, options.tear_one_in);
              ARC_ASSIGN_OR_RETURN(io::CowImage cache_image,
                                   cache_replay->BuildImage(cache_cut, cache_landed));
              twice.cache = std::move(cache_image);
            }
            result.replay_crash_images++;
            Result<Opened> third = OpenImage(options, std::move(twice), nullptr);
            if (!third.ok()) {
              fail("open after a crash during replay: " + third.status().ToString());
              continue;
            }
            Result<Model> got = VerifyRead(*third->pool, options, &result);
            if (!got.ok()) {
              fail("reading after a crash during replay: " + got.status().ToString());
            } else if (std::string diff = Diff(*got, contents); !diff.empty()) {
              fail("after a crash during replay (cut at " + std::to_string(point) + "): " + diff);
            }
          }
        }
      }
      if (options.stop_at_first_failure && !result.failures.empty()) return result;
    }
  }
  return result;
}

}  // namespace arcstore::pool
