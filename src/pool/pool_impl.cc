// Pools: theory of operation.
//
// On disk (docs/format.md has every byte):
//
//   | label | uberblock ring |  data: records, indirect blocks, volume  | ring | label |
//   | front | 128 slots      |  tables, space log blocks (all COW)      | back | back  |
//
// The uberblock of txg T (slot T mod 128, in both rings) names the volume
// table (each volume's tree root) and the newest space log block. Nothing a
// committed uberblock references is ever overwritten: every block of a txg
// goes to space that was free when the txg began (copy-on-write), and a
// freed block waits two more txgs before reuse (space/allocator.h), so the
// trees of txgs T, T-1 and T-2 stay intact and are all valid states.
//
// Sync of txg T (TxgManager calls SyncTxg on its sync thread):
//
//   1. every destroyed volume's blocks are freed;
//   2. every volume writes its dirty records and indirect blocks
//      (volume_impl.cc), giving new roots;
//   3. the volume table is rewritten when a root or the set of volumes
//      changed; the old one is freed;
//   4. the allocator's records of T are appended to the space log (one or
//      more blocks that record their own allocation), or, every
//      kCondenseAfterBlocks blocks, the whole state is written as a new
//      chain and the old chain freed;
//   5. wait for all writes; FLUSH; write the uberblock in both rings (with
//      the intent log header: the log arena, allocated by the first sync
//      with the log on, and where replay of T's state starts); FLUSH. Only
//      now is T durable: its waiters are released, the allocator ages its
//      deferred frees, the volumes drop T's dirty copies, the intent log
//      drops T's records.
//
// Space: writers charge their new data against the pool's space before
// they join a txg (space_admission.cc), so that a sync never runs out of
// data space: a write that does not fit waits for the txgs whose commits
// free space (sync reason `space`), and fails with NoSpace only when
// nothing pending could make room. SyncTxg hands the allocator's state to
// the account at each commit.
//
// A failure anywhere (a txg sync, or an intent log commit's write or
// flush) fails the txg manager: the pool stops taking writes
// (every write and flush returns the error) and never writes another
// uberblock, so a failed device flush never makes unflushed data live.
// Reads go on working from what is committed.
//
// Open: read a label (front, else back), read both rings, and try the
// valid uberblocks (checksum, pool guid) newest first: the first whose
// volume table and space log chain read and verify wins; when it is not
// the newest, the report says which was skipped and why. At most three are
// tried: older ones may reference freed space. A writable open then
// replays the intent log (zil/intent_log.cc) into the volumes and syncs a
// txg before the pool is handed out; a read-only open applies it in memory
// only (dirty copies no sync writes), or not at all when those would take
// over half the ARC.
//
// Cache devices (cache_devices.h): a writable open opens the ones its label
// config names (`cache.N`) at the last committed txg; volumes read through
// them before the device, and the ARC's evictions feed them. Adding or
// removing one rewrites both label headers with a new config generation
// (format/label_io.h); a missing or unusable device is reported and left
// out.
//
// Locking: mu_ guards the volume map, the destroyed list, the summary
// values and the label's config; the sync thread takes it briefly to
// snapshot them. config_mu_ serialises config changes (before mu_). The allocator,
// the volume table pointer and the space log state belong to the sync
// thread (and to Load before it starts).
#include "pool/pool_impl.h"


#include <algorithm>
#include <set>
#include <cstring>
#include <random>

#include "base/units.h"
#include "base/random.h"
#include "format/encoding.h"
#include "format/indirect_block.h"
#include "format/label_io.h"
#include "format/output_file.h"
#include "format/space_log.h"
#include "arc/monitor/system_memory_monitor.h"
#include "io/file_device.h"

namespace arcstore::pool {

using format::BlockPointer;
using format::BlockType;

namespace {

constexpr size_t kCondenseAfterBlocks = 64;
constexpr size_t kMaxChainBlocks = 1 << 20;
constexpr uint32_t kIndirectShift = 10;


uint64_t WallNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSec + static_cast<uint64_t>(ts.tv_nsec);
}

class RecordSinkAdapter final : public volume::RecordSink {
 public:
  explicit RecordSinkAdapter(TxgWriter* w) : w_(w) {}
  Result<BlockPointer> WriteBlock(const BlockPointer& base,
                                  std::span<const uint8_t> logical) override {
    return w_->WriteBlock(base, logical);
  }
  Result<BlockPointer> WriteRecord(const BlockPointer& base, std::span<const uint8_t> logical,
                                   uint64_t undirty_bytes) override {
    // A dirty record's copy lives until its txg commits (RecordSink).
    return w_->WriteStable(base, logical, space::AllocClass::kData, undirty_bytes);
  }
  Status FreeBlock(const BlockPointer& bp) override { return w_->FreeBlock(bp); }

 private:
  TxgWriter* const w_;
};

}  // namespace

PoolImpl::PoolImpl(std::unique_ptr<io::Device> device, const PoolOptions& options,
                   const UnsafeTestSwitches& unsafe)
    : device_(std::move(device)),
      options_(options),
      unsafe_(unsafe),
      clock_(unsafe.clock != nullptr ? unsafe.clock : DefaultClock()),
      io_stats_(&registry_),
      volume_stats_(&registry_) {
  auto queue = std::make_unique<io::QueuedDevice>(std::move(device_), QueueOptionsFrom(options.io),
                                                  &registry_, clock_);
  queue_ = queue.get();
  write_tracer_ = std::make_unique<QueueWriteTracer>(queue_);
  device_ = std::move(queue);
}

PoolImpl::~PoolImpl() {
  (void)Close();
  queue_->SetAsyncWriteFraction(nullptr);  // txg_ goes before device_
}

Status PoolImpl::StartTrace(const std::string& path, uint64_t ring_entries,
                            bool replace_existing) {
  format::OutputFileOptions o;
  o.replace_existing = replace_existing;
  return queue_->StartTrace(path, ring_entries, [o](const std::string& p) {
    return format::CreateOutputFile(p, o);
  });
}

Status PoolImpl::StopTrace() { return queue_->StopTrace(); }

Status PoolImpl::Format(io::Device* device, const std::string& name) {
  ARC_ASSIGN_OR_RETURN(uint32_t unit, format::AllocationUnitFor(device->logical_block_size()));
  ARC_ASSIGN_OR_RETURN(format::DeviceLayout layout, format::ComputeLayout(device->size_bytes(), unit));
  format::LabelHeader h;
  h.pool_guid = NewGuid();
  h.device_guid = NewGuid();
  h.device_size_bytes = layout.end_bytes;
  h.allocation_unit = unit;
  h.config.Set("pool_name", name);
  // Both headers, and both rings cleared: uberblocks of an earlier pool on
  // this device must go.
  ARC_RETURN_IF_ERROR(format::WriteLabels(*device, h));
  ARC_RETURN_IF_ERROR(io::FlushSync(*device));
  format::Uberblock ub;
  ub.txg = 1;
  ub.timestamp_ns = WallNs();
  ub.pool_guid = h.pool_guid;
  ub.guid_sum = h.device_guid;
  ARC_RETURN_IF_ERROR(format::WriteUberblock(*device, layout, ub));
  return io::FlushSync(*device);
}

Result<LogOnDevice> ReadLogOnDevice(io::Device* device) {
  ARC_ASSIGN_OR_RETURN(format::LabelHeader label, format::ReadLabel(*device, nullptr));
  ARC_ASSIGN_OR_RETURN(format::DeviceLayout layout,
                       format::ComputeLayout(device->size_bytes(), label.allocation_unit));
  ARC_ASSIGN_OR_RETURN(format::UberblockScan scan,
                       format::ScanUberblocks(*device, layout, label.pool_guid));
  if (scan.valid.empty()) return Status::Corruption("no valid uberblock");
  LogOnDevice out;
  out.uberblock_txg = scan.valid.front().txg;
  ARC_ASSIGN_OR_RETURN(out.chain,
                       zil::ReadLog(device, label.allocation_unit, scan.valid.front().log));
  return out;
}

Result<std::unique_ptr<PoolImpl>> PoolImpl::OpenOnDevice(std::unique_ptr<io::Device> device,
                                                         const PoolOptions& options,
                                                         const UnsafeTestSwitches& unsafe) {
  ARC_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<PoolImpl> p(new PoolImpl(std::move(device), options, unsafe));
  ARC_RETURN_IF_ERROR(p->Load());
  ARC_RETURN_IF_ERROR(p->Start());
  ARC_RETURN_IF_ERROR(p->ReplayLog());
  return p;
}

Status PoolImpl::Load() {
  const std::string dev = "device " + device_->name();
  io::AlignedBuffer hdr(format::kLabelHeaderRegionBytes, io::BufferAlignmentFor(*device_));
  Status read = io::ReadSync(*device_, 0, hdr.span());
  Result<format::LabelHeader> label =
      read.ok() ? format::DecodeLabelHeader(hdr.span()) : Result<format::LabelHeader>(read);
  if (!label.ok()) {
    Status front = label.status();
    const uint64_t back_at = format::BackHeaderOffset(device_->size_bytes());
    Status s = io::ReadSync(*device_, back_at, hdr.span());
    label = s.ok() ? format::DecodeLabelHeader(hdr.span()) : Result<format::LabelHeader>(s);
    if (!label.ok()) {
      return Status::Corruption(dev + " holds no arcstore pool: front label: " +
                                front.ToString() + "; back label: " + label.status().ToString());
    }
    open_report_.notes.push_back("front label unreadable (" + front.ToString() +
                                 "); used the back label");
  }
  label_ = *label;
  ARC_ASSIGN_OR_RETURN(layout_, format::ComputeLayout(device_->size_bytes(), label_.allocation_unit));
  if (layout_.end_bytes != label_.device_size_bytes) {
    return Status::Corruption(dev + " is " + std::to_string(device_->size_bytes()) +
                              " bytes but its label says " +
                              std::to_string(label_.device_size_bytes));
  }
  reader_ = std::make_unique<BlockReader>(device_.get(), layout_.allocation_unit, &io_stats_);
  write_buffers_ = std::make_unique<io::BufferCache>(
      io::BufferAlignmentFor(*device_), kWriteBuffers, format::kMaxRecordSize,
      kWriteBufferBytes);
  // Every valid uberblock of this pool, from both rings, newest first.
  std::map<uint64_t, format::Uberblock, std::greater<>> found;
  io::AlignedBuffer ring(layout_.ring_bytes, io::BufferAlignmentFor(*device_));
  for (uint64_t at : {layout_.front_ring, layout_.back_ring}) {
    const char* ring_name = at == layout_.front_ring ? "front" : "back";
    Status read = io::ReadSync(*device_, at, ring.span());
    if (!read.ok()) {
      open_report_.notes.push_back(std::string(ring_name) + " uberblock ring unreadable: " +
                                   read.ToString());
      continue;
    }
    for (uint32_t slot = 0; slot < format::kUberblockSlots; slot++) {
      const uint8_t* p = ring.data() + uint64_t{slot} * layout_.allocation_unit;
      if (format::AllZero(p, format::kUberblockBytes)) continue;  // never written
      Result<format::Uberblock> ub =
          format::DecodeUberblock(std::span<const uint8_t>(p, format::kUberblockBytes));
      if (!ub.ok()) {
        open_report_.notes.push_back(std::string(ring_name) + " uberblock slot " +
                                     std::to_string(slot) + " is damaged: " +
                                     ub.status().ToString());
      } else if (ub->pool_guid == label_.pool_guid && ub->guid_sum == label_.device_guid) {
        found.emplace(ub->txg, *ub);
      }
    }
  }
  if (found.empty()) return Status::Corruption(dev + ": no valid uberblock in either ring");
  open_report_.newest_seen_txg = found.begin()->first;
  Status first_error;
  int tried = 0;
  for (const auto& [txg, ub] : found) {
    if (tried++ == 3) break;
    MutexLock sync_lock(&sync_mu_);  // no sync thread yet; for the analysis
    Status s = LoadState(ub);
    if (s.ok()) {
      open_report_.txg = txg;
      if (txg != open_report_.newest_seen_txg) {
        open_report_.notes.push_back("opened at txg " + std::to_string(txg) +
                                     ", not the newest (" +
                                     std::to_string(open_report_.newest_seen_txg) + ")");
      }
      return Status::Ok();
    }
    open_report_.notes.push_back("uberblock of txg " + std::to_string(txg) +
                                 " rejected: " + s.ToString());
    if (first_error.ok()) first_error = s;
  }
  return first_error.WithContext(dev + ": no usable uberblock");
}

Status PoolImpl::LoadState(const format::Uberblock& ub) {
  format::VolumeTable table;
  if (!ub.root.IsHole()) {
    ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, reader_->ReadBlock(ub.root));
    Result<format::VolumeTable> t = format::DecodeVolumeTable(bytes);
    if (!t.ok()) return t.status().WithContext("volume table " + ub.root.ToString());
    table = std::move(*t);
  }
  std::vector<format::SpaceLogBlock> blocks;
  std::vector<BlockPointer> chain;
  for (BlockPointer bp = ub.space_log; !bp.IsHole();) {
    if (chain.size() >= kMaxChainBlocks) return Status::Corruption("space log chain too long");
    ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, reader_->ReadBlock(bp));
    Result<format::SpaceLogBlock> b = format::DecodeSpaceLogBlock(bytes);
    if (!b.ok()) return b.status().WithContext("space log block " + bp.ToString());
    chain.push_back(bp);
    bp = b->prev;
    blocks.push_back(std::move(*b));
  }
  std::reverse(blocks.begin(), blocks.end());
  std::reverse(chain.begin(), chain.end());
  const uint64_t unit = layout_.allocation_unit;
  std::vector<space::SpaceRecord> records;
  for (const auto& b : blocks) {
    for (const auto& r : b.records) {
      records.push_back(space::SpaceRecord{
          r.op == format::SpaceOp::kAlloc ? space::SpaceRecord::Kind::kAlloc
                                          : space::SpaceRecord::Kind::kFree,
          r.txg, space::Extent{r.offset_units * unit, uint64_t{r.length_units} * unit}});
    }
  }
  space::SpaceOptions so;
  so.start_bytes = layout_.data_begin;
  so.end_bytes = layout_.data_end;
  so.unit_bytes = unit;
  so.reserve_bytes = space::SpaceOptions::DefaultReserve(so.end_bytes - so.start_bytes);
  so.unsafe_immediate_reuse = unsafe_.reuse_frees_early;
  Result<space::SpaceAllocator> a = space::SpaceAllocator::Load(so, records, ub.txg);
  if (!a.ok()) return a.status();
  allocator_ = std::make_unique<space::SpaceAllocator>(std::move(*a));
  table_bp_ = ub.root;
  log_head_ = ub.space_log;
  log_chain_ = chain;
  log_sequence_ = blocks.empty() ? 0 : blocks.back().sequence;
  loaded_entries_ = table.volumes;
  loaded_log_ = ub.log;
  MutexLock l(&mu_);
  committed_txg_ = ub.txg;
  usage_ = allocator_->Usage();
  return Status::Ok();
}

// Opening builds the parts bottom up, each from its own Options: the ARC
// (sized from the memory the monitor sees), the txg manager (its dirty
// limit from the same memory), space admission and the intent log (both
// writable pools only), the volumes, then the pool's own stats. The txg
// sync thread starts last, once everything it calls exists.
Status PoolImpl::Start() {
  ARC_ASSIGN_OR_RETURN(MemoryMonitor* monitor, StartArc());
  uint64_t first;
  {
    MutexLock l(&mu_);
    first = committed_txg_ + 1;
  }
  ARC_RETURN_IF_ERROR(StartTxgs(monitor, first));
  if (!options_.read_only) ARC_RETURN_IF_ERROR(StartSpaceAdmission(first));
  ARC_RETURN_IF_ERROR(StartIntentLog());
  if (!options_.read_only) StartCacheDevices();
  if (options_.work_threads > 0) {
    work_ = std::make_unique<WorkQueue>("pool", options_.work_threads, options_.work_queue_limit);
  }
  for (const auto& e : loaded_entries_) {
    ARC_ASSIGN_OR_RETURN(std::shared_ptr<volume::VolumeImpl> v, NewVolume(e));
    MutexLock l(&mu_);
    volumes_.emplace(e.name, std::move(v));
  }
  loaded_entries_.clear();
  RegisterSpaceStats();
  if (!options_.read_only) txg_->Start();
  return Status::Ok();
}

// The cache: its target comes from the memory the monitor sees (c_min and
// c_max default in ArcOptions).
Result<MemoryMonitor*> PoolImpl::StartArc() {
  if (unsafe_.memory_monitor == nullptr) {
    SystemMemoryMonitorOptions mo;
    mo.cap_bytes = options_.memory_limit_bytes;
    ARC_ASSIGN_OR_RETURN(monitor_, MakeSystemMemoryMonitor(mo));
  }
  MemoryMonitor* const monitor =
      unsafe_.memory_monitor != nullptr ? unsafe_.memory_monitor : monitor_.get();
  arc::ArcOptions ao;
  if (unsafe_.arc_stuck_wait_ns) ao.stuck_wait_ns = *unsafe_.arc_stuck_wait_ns;
  ao.c_max_bytes = options_.arc_max_bytes;
  ao.c_min_bytes = options_.arc_min_bytes;
  ARC_CHECK(arc::ParsePolicyKind(options_.arc_policy, &ao.policy));  // validated
  ao.buffers.pretouch_bytes = options_.arc_pretouch_bytes;
  ao.buffers.grow_ahead_bytes = options_.arc_grow_ahead_bytes;
  ao.wait_for_pretouch = options_.arc_pretouch_wait;
  arc::ArcEnv ae;
  ae.clock = clock_;
  ae.monitor = monitor;
  ae.registry = &registry_;
  ARC_ASSIGN_OR_RETURN(arc_, arc::Arc::Create(ao, ae));
  handles_ = std::make_unique<volume::HandleCache>(arc_.get(), volume::HandleCacheOptions(),
                                                   &registry_);
  return monitor;
}

// The txg manager: dirty_max from the same memory limit the ARC plans for
// (the monitor's: cgroup limit, MemTotal, or the configured cap), and
// dirty data held under half of c, since it is ARC data.
Status PoolImpl::StartTxgs(MemoryMonitor* monitor, uint64_t first_txg) {
  txg::TxgOptions t;
  Result<MemoryReading> reading = monitor->Read();
  t.arc_dirty_limit_bytes = [arc = arc_.get()] { return arc->target_bytes() / 2; };
  t.on_memory_throttle = [arc = arc_.get()] { arc->CountMemoryThrottle(); };
  // Frees wait for later txgs to commit them: an idle pool still syncs
  // (at the timeout) until they have.
  frees_pending_.store(allocator_->Usage().deferred_bytes > 0, std::memory_order_relaxed);
  t.has_deferred_work = [this] { return frees_pending_.load(std::memory_order_relaxed); };
  t.dirty_max_bytes = options_.dirty_max_bytes != 0
                          ? options_.dirty_max_bytes
                          : txg::TxgOptions::DirtyMaxFor(reading.ok() ? reading->limit_bytes : 0);
  t.timeout_ns = options_.txg_timeout_ns;
  t.sync_kick_percent = options_.txg_sync_kick_percent;
  t.sync_thread_nice = options_.txg_sync_nice;
  ARC_RETURN_IF_ERROR(t.Validate());
  txg_ = std::make_unique<txg::TxgManager>(
      t, clock_, &registry_, [this](uint64_t txg) { return SyncTxg(txg); }, first_txg);
  queue_->SetAsyncWriteFraction([t = txg_.get()] { return t->AsyncWriteFraction(); });
  return Status::Ok();
}

// New data is charged against the space before it joins a txg
// (space_admission.cc); it never takes the allocator's metadata reserve nor
// the slop above it.
Status PoolImpl::StartSpaceAdmission(uint64_t first_txg) {
  const space::SpaceUsage usage = allocator_->Usage();
  SpaceAdmissionOptions so;
  so.pool_name = label_.config.Get("pool_name").value_or("");
  so.floor_bytes = allocator_->options().reserve_bytes +
                   std::min<uint64_t>(usage.total_bytes >> options_.space_slop_shift, kGiB);
  so.kick_percent = options_.space_sync_kick_percent;
  ARC_RETURN_IF_ERROR(so.Validate());
  space_ = std::make_unique<SpaceAdmission>(so, txg_.get(), clock_, &registry_, usage,
                                            first_txg - 1);
  return Status::Ok();
}

// The intent log: reads what the last life committed to it (replayed by
// ReplayLog once the volumes exist; in memory only on a read-only pool).
Status PoolImpl::StartIntentLog() {
  Result<zil::LogReplay> chain = zil::ReadLog(device_.get(), layout_.allocation_unit, loaded_log_);
  if (!chain.ok()) return chain.status().WithContext("intent log");
  open_report_.log_last_seq = chain->last_seq;
  replay_ = std::move(chain->records);
  if (options_.read_only) return Status::Ok();
  zil::IntentLogOptions lo;
  lo.enabled = options_.intent_log;
  lo.unsafe_skip_flush = unsafe_.log_ack_before_flush;
  lo.use_fua = !unsafe_.log_flush_not_fua;
  lo.pretouch = options_.arc_pretouch_bytes > 0;
  lo.sync_kick_percent = options_.intent_log_sync_kick_percent;
  lo.spill_percent = options_.intent_log_spill_percent;
  lo.early_write_window_ns = options_.intent_log_early_write_window_ns;
  lo.max_pending_bytes = zil::IntentLogOptions::PendingBytesFor(
      std::min(txg_->options().dirty_max_bytes, arc_->c_max() / 2));
  ARC_RETURN_IF_ERROR(lo.Validate());
  zil::IntentLogEnv le;
  le.device = device_.get();
  le.unit_bytes = layout_.allocation_unit;
  le.clock = clock_;
  le.registry = &registry_;
  le.sync_all = [this] {
    return txg_->WaitSynced(txg_->open_txg(), txg::SyncReason::kExplicitWait);
  };
  le.request_sync = [this] { txg_->RequestSync(txg_->open_txg(), txg::SyncReason::kLogSpace); };
  le.on_failure = [this](const Status& why) { txg_->Fail(why); };
  zil::LogStart start = chain->start;
  start.last_record_seq = chain->last_seq;
  log_ = std::make_unique<zil::IntentLog>(lo, le, start);
  if (lo.enabled && loaded_log_.present()) {
    FillArenaHoles(loaded_log_.arena_offset_bytes, loaded_log_.arena_bytes);
  }
  return Status::Ok();
}

// The space map as of the last committed txg.
void PoolImpl::RegisterSpaceStats() {
  auto usage_gauge = [this](std::string_view name, stats::Unit unit, std::string_view help,
                            uint64_t space::SpaceUsage::*field) {
    registry_.AddGaugeFn("pool", name, unit, help, [this, field] {
      MutexLock l(&mu_);
      return static_cast<int64_t>(usage_.*field);
    });
  };
  usage_gauge("allocated_bytes", stats::Unit::kBytes, "allocated space",
              &space::SpaceUsage::allocated_bytes);
  usage_gauge("free_bytes", stats::Unit::kBytes, "free space", &space::SpaceUsage::free_bytes);
  usage_gauge("large_free_bytes", stats::Unit::kBytes,
              "free space in extents large enough for a sync's contiguous writes",
              &space::SpaceUsage::large_free_bytes);
  usage_gauge("largest_free_bytes", stats::Unit::kBytes, "the largest free extent",
              &space::SpaceUsage::largest_free_bytes);
  usage_gauge("free_extents", stats::Unit::kNone, "free extents (fragmentation)",
              &space::SpaceUsage::free_extents);
  usage_gauge("hole_allocations", stats::Unit::kOps,
              "allocations that found no large extent and took a small hole",
              &space::SpaceUsage::hole_allocations);
}

Status PoolImpl::ReplayLog() {
  if (!log_ && !options_.read_only) return Status::Ok();
  uint64_t opened_at;
  std::map<uint64_t, std::shared_ptr<volume::VolumeImpl>> by_guid;
  {
    MutexLock l(&mu_);
    opened_at = committed_txg_;
    for (const auto& [name, v] : volumes_) by_guid.emplace(v->entry().guid, v);
  }
  // Records of txgs the uberblock already holds are skipped; the rest are
  // applied in log order as ordinary (unlogged) changes.
  std::erase_if(replay_, [opened_at](const format::LogRecord& r) { return r.txg <= opened_at; });
  if (options_.read_only) {
    // In memory: every record touched becomes a dirty copy that nothing
    // will sync, so the copies must fit in half the ARC.
    std::set<std::pair<uint64_t, uint64_t>> records;
    uint64_t bytes = 0;
    for (const format::LogRecord& r : replay_) {
      auto it = by_guid.find(r.volume_guid);
      if (it == by_guid.end() || r.length == 0) continue;
      const uint64_t size = it->second->entry().record_size_bytes;
      for (uint64_t rec = r.offset / size; rec <= (r.offset + r.length - 1) / size; rec++) {
        if (records.emplace(r.volume_guid, rec).second) bytes += size;
      }
    }
    if (bytes > arc_->c_max() / 2) {
      open_report_.notes.push_back(
          "intent log: " + std::to_string(replay_.size()) +
          " records NOT applied: the pool is read-only and they would hold " +
          FormatBytes(bytes) + " of dirty records in memory (over half of the ARC, " +
          FormatBytes(arc_->c_max() / 2) + "); open the pool writable to replay them");
      replay_.clear();
      return Status::Ok();
    }
  }
  if (log_) log_->SetReplaying(true);
  uint64_t applied = 0, orphans = 0;
  for (const format::LogRecord& r : replay_) {
    auto it = by_guid.find(r.volume_guid);
    if (it == by_guid.end()) {
      orphans++;
      continue;
    }
    Status s = it->second->ApplyLogRecord(r);
    if (!s.ok()) {
      if (log_) log_->SetReplaying(false);
      return s.WithContext("intent log replay of record " + std::to_string(r.seq));
    }
    applied++;
  }
  replay_.clear();
  open_report_.log_records_replayed = applied;
  if (applied > 0 || orphans > 0) {
    open_report_.notes.push_back(
        "intent log: replayed " + std::to_string(applied) + " records" +
        (orphans > 0 ? ", skipped " + std::to_string(orphans) + " of volumes that no longer exist"
                     : "") +
        (options_.read_only ? " (in memory only: the pool is read-only; a writable open writes them)"
                            : ""));
  }
  if (!log_) return Status::Ok();  // read-only: nothing is written
  log_->SetReplaying(false);
  log_->ReplayApplied(txg_->open_txg(), applied);
  // This life writes its log under a new guid; the uberblock must name it
  // (and hold the replayed changes) before anyone can commit to it. The
  // same sync allocates the arena of a pool that has none yet.
  return txg_->ForceSync(txg::SyncReason::kExplicitWait);
}

uint64_t PoolImpl::ArenaBytes() const {
  const uint64_t unit = layout_.allocation_unit;
  const uint64_t space = layout_.data_end - layout_.data_begin;
  uint64_t bytes = options_.intent_log_bytes;
  if (bytes == 0) {
    bytes = std::min({std::max<uint64_t>(space / 16, 4 * kMiB), space / 8, 2 * kGiB});
  }
  return bytes / unit * unit;
}

Result<std::shared_ptr<volume::VolumeImpl>> PoolImpl::NewVolume(const format::VolumeEntry& e) {
  ARC_RETURN_IF_ERROR(format::ValidateVolumeEntry(e));
  volume::VolumeEnv env;
  env.txg = txg_.get();
  env.blocks = caches_ ? static_cast<volume::BlockSource*>(caches_.get()) : reader_.get();
  env.arc = arc_.get();
  env.work = work_.get();
  env.handles = handles_.get();
  env.log = options_.intent_log ? log_.get() : nullptr;
  env.prefetch = options_.prefetch;
  env.defer_partial_reads = options_.defer_partial_reads;
  env.registry = &registry_;
  env.clock = clock_;
  env.tracer = write_tracer_.get();
  env.read_only = options_.read_only;
  env.space = space_.get();
  return std::make_shared<volume::VolumeImpl>(e, env, &volume_stats_);
}

namespace {

// Records a space log block of `length_bytes` holds (at most a full block).
size_t LogBlockCapacity(uint64_t length_bytes) {
  return std::min<size_t>(format::kMaxSpaceRecords,
                          (length_bytes - format::kSpaceLogHeaderBytes) / format::kSpaceRecordBytes);
}

}  // namespace

Result<std::vector<space::Extent>> PoolImpl::AllocateLogBlocks(uint64_t txg, size_t records) {
  // Each block also records its own allocation. Blocks are full-size (1 MiB)
  // when the space has room for them; a pool whose free space is cut into
  // small holes (4 KiB records rewritten at random) gets smaller blocks,
  // down to one allocation unit, rather than a failed sync.
  const uint64_t unit = layout_.allocation_unit;
  std::vector<space::Extent> extents;
  size_t capacity = 0;
  size_t want = format::kMaxSpaceRecords;
  while (capacity < records + extents.size()) {
    const size_t count = std::min(want, records + extents.size() + 1 - capacity);
    const uint64_t bytes = format::kSpaceLogHeaderBytes + count * format::kSpaceRecordBytes;
    if (extents.size() >= kMaxChainBlocks) {
      return Status::Internal("space log: more than " + std::to_string(kMaxChainBlocks) +
                              " blocks for " + std::to_string(records) + " records");
    }
    Result<space::Extent> e = allocator_->Allocate(bytes, space::AllocClass::kMetadata, txg);
    if (!e.ok()) {
      if (e.status().code() != StatusCode::kNoSpace || bytes <= unit) return e.status();
      want = std::max<size_t>(1, LogBlockCapacity(std::max<uint64_t>(bytes / 2, unit) / unit * unit));
      continue;
    }
    capacity += LogBlockCapacity(e->length_bytes);
    extents.push_back(*e);
  }
  return extents;
}

Status PoolImpl::WriteChain(uint64_t txg, std::vector<space::SpaceRecord> records,
                            std::vector<space::Extent> extents, uint64_t first_sequence,
                            BlockPointer prev, TxgWriter* writer) {
  size_t capacity = 0;
  for (const space::Extent& e : extents) capacity += LogBlockCapacity(e.length_bytes);
  if (records.size() > capacity) {
    return Status::Internal("space log: " + std::to_string(records.size()) +
                            " records for " + std::to_string(extents.size()) + " blocks");
  }
  const uint64_t unit = layout_.allocation_unit;
  size_t next = 0;
  for (size_t i = 0; i < extents.size(); i++) {
    format::SpaceLogBlock b;
    b.birth_txg = txg;
    b.sequence = first_sequence + i;
    b.prev = prev;
    const size_t count = std::min(LogBlockCapacity(extents[i].length_bytes), records.size() - next);
    for (size_t k = 0; k < count; k++, next++) {
      const space::SpaceRecord& r = records[next];
      b.records.push_back(format::SpaceRecord{
          r.txg, r.extent.offset_bytes / unit, static_cast<uint32_t>(r.extent.length_bytes / unit),
          0,
          r.kind == space::SpaceRecord::Kind::kAlloc ? format::SpaceOp::kAlloc
                                                     : format::SpaceOp::kFree});
    }
    ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, format::EncodeSpaceLogBlock(b));
    if (bytes.size() > extents[i].length_bytes) {
      return Status::Internal("space log block of " + std::to_string(bytes.size()) +
                              " bytes does not fit its extent");
    }
    io::AlignedBuffer buf(extents[i].length_bytes, io::BufferAlignmentFor(*device_));
    std::memcpy(buf.data(), bytes.data(), bytes.size());
    BlockPointer base;
    base.type = BlockType::kSpaceLog;
    base.birth_txg = txg;
    BlockPointer bp = format::PointerTo(base, 0, extents[i].offset_bytes / unit, bytes,
                                        static_cast<uint32_t>(bytes.size()));
    ARC_RETURN_IF_ERROR(writer->WriteAt(extents[i], std::move(buf)));
    log_chain_.push_back(bp);
    prev = bp;
  }
  log_head_ = prev;
  log_sequence_ = first_sequence + extents.size() - 1;
  return Status::Ok();
}

Status PoolImpl::WriteSpaceLog(uint64_t txg, TxgWriter* writer) {
  if (log_chain_.size() < kCondenseAfterBlocks) {
    std::vector<space::SpaceRecord> records = allocator_->TakeRecords();
    ARC_ASSIGN_OR_RETURN(std::vector<space::Extent> extents,
                         AllocateLogBlocks(txg, records.size()));
    for (const auto& r : allocator_->TakeRecords()) records.push_back(r);
    const bool first = log_head_.IsHole();
    return WriteChain(txg, std::move(records), std::move(extents),
                      first ? 0 : log_sequence_ + 1, log_head_, writer);
  }
  // Condense: the whole state as a new chain; the old chain is freed.
  for (const BlockPointer& bp : log_chain_) ARC_RETURN_IF_ERROR(writer->FreeBlock(bp));
  log_chain_.clear();
  (void)allocator_->TakeRecords();  // captured by the condensed form
  const size_t before = allocator_->CondensedRecords(txg).size();
  ARC_ASSIGN_OR_RETURN(std::vector<space::Extent> extents, AllocateLogBlocks(txg, before));
  std::vector<space::SpaceRecord> records = allocator_->CondensedRecords(txg);
  (void)allocator_->TakeRecords();
  return WriteChain(txg, std::move(records), std::move(extents), 0, BlockPointer{}, writer);
}

// One txg's sync, in the order that makes it crash safe (docs/format.md):
// the blocks of every volume, the volume table and the space log, a device
// flush, the uberblock naming them, another flush; then the txg is
// committed and its dirty copies published to the ARC.
Status PoolImpl::SyncTxg(uint64_t txg) {
  MutexLock sync_lock(&sync_mu_);
  queue_->AddTraceMarker(io::TraceMarker::kSyncStart, txg);
  SyncSet set = TakeSyncSet(txg);
  PlaceLogArena(txg);
  TxgWriter writer(device_.get(), allocator_.get(), txg, TxgWriterOptions{}, &io_stats_,
                   write_buffers_.get(),
                   [this, txg](uint64_t bytes) { txg_->Undirty(txg, bytes); });
  ARC_RETURN_IF_ERROR(WriteVolumes(txg, set, &writer));
  ARC_RETURN_IF_ERROR(WriteSpaceLog(txg, &writer));
  ARC_ASSIGN_OR_RETURN(format::Uberblock ub, WriteUberblockAfterBlocks(txg, &writer));
  queue_->AddTraceMarker(io::TraceMarker::kSyncEnd, txg);
  Committed(txg, set, ub);
  return Status::Ok();
}

PoolImpl::SyncSet PoolImpl::TakeSyncSet(uint64_t txg) {
  SyncSet set;
  MutexLock l(&mu_);
  // The volumes that exist at txg: not those created in a later txg
  // (CreateVolume runs while this sync does), but those destroyed in a
  // later one (their blocks are freed by that txg's sync).
  for (const auto& [name, v] : volumes_) {
    if (v->entry().create_txg <= txg) set.volumes.push_back(v);
  }
  for (const auto& [t, list] : destroyed_) {
    if (t <= txg) continue;
    for (const auto& v : list) {
      if (v->entry().create_txg <= txg) set.volumes.push_back(v);
    }
  }
  // The table lists volumes by name.
  std::sort(set.volumes.begin(), set.volumes.end(),
            [](const auto& a, const auto& b) { return a->entry().name < b->entry().name; });
  while (!destroyed_.empty() && destroyed_.begin()->first <= txg) {
    for (auto& v : destroyed_.begin()->second) set.destroyed.push_back(std::move(v));
    destroyed_.erase(destroyed_.begin());
  }
  set.table_changed = !table_dirty_txgs_.empty() && *table_dirty_txgs_.begin() <= txg;
  while (!table_dirty_txgs_.empty() && *table_dirty_txgs_.begin() <= txg) {
    table_dirty_txgs_.erase(table_dirty_txgs_.begin());
  }
  return set;
}

// The log's arena, once per pool: recorded in this txg's space log and
// named by its uberblock. A pool too full for it keeps syncing txgs for
// flushes.
void PoolImpl::PlaceLogArena(uint64_t txg) {
  if (!log_ || !options_.intent_log || log_->has_arena()) return;
  Result<space::Extent> arena = allocator_->Allocate(ArenaBytes(), space::AllocClass::kData, txg);
  if (!arena.ok()) return;
  FillArenaHoles(arena->offset_bytes, arena->length_bytes);
  log_->SetArena(arena->offset_bytes, arena->length_bytes);
}

// A commit is one small write with FUA that a flush waits for. Into a hole
// of a sparse pool file, the host file system allocates blocks and must
// commit its own journal before the write is durable, one more device
// write and flush on every commit until the log has wrapped once. So the
// arena's holes are written with zeros before its first use
// (in the sync that places it, or at open for an arena placed before): a
// one-time write of at most the arena's size, nothing on a block device or
// a file written at creation. Blocks that hold records are never holes,
// so this never touches a record. A failure only costs the allocation on
// the commits: the log works the same.
void PoolImpl::FillArenaHoles(uint64_t offset_bytes, uint64_t bytes) {
  Result<uint64_t> filled = device_->FillHoles(offset_bytes, bytes);
  if (filled.ok()) io_stats_.holes_filled_bytes->Add(*filled);
}

// Frees the blocks of volumes destroyed by txg, writes each volume's dirty
// records and indirect blocks, and the volume table when a root or the set
// of volumes changed.
Status PoolImpl::WriteVolumes(uint64_t txg, SyncSet& set, TxgWriter* writer) {
  RecordSinkAdapter sink(writer);
  for (const auto& v : set.destroyed) ARC_RETURN_IF_ERROR(v->FreeAll(&sink));
  format::VolumeTable table;
  table.birth_txg = txg;
  for (const auto& v : set.volumes) {
    const BlockPointer old_root = v->entry().root;
    format::VolumeEntry e;
    ARC_RETURN_IF_ERROR(v->SyncTxg(txg, &sink, &e));
    set.table_changed |= !(e.root == old_root);
    table.volumes.push_back(std::move(e));
  }
  if (!set.table_changed) return Status::Ok();
  BlockPointer fresh;
  if (!table.volumes.empty()) {
    ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, format::EncodeVolumeTable(table));
    BlockPointer base;
    base.type = BlockType::kVolumeTable;
    base.compression = format::Compression::kLz4;
    ARC_ASSIGN_OR_RETURN(fresh, writer->WriteBlock(base, bytes));
  }
  ARC_RETURN_IF_ERROR(writer->FreeBlock(table_bp_));
  table_bp_ = fresh;
  return Status::Ok();
}

// Waits for the txg's blocks, flushes, writes the uberblock that names
// them and flushes again (the unsafe switches break that order for the
// crash harness to catch).
Result<format::Uberblock> PoolImpl::WriteUberblockAfterBlocks(uint64_t txg, TxgWriter* writer) {
  format::Uberblock ub;
  ub.txg = txg;
  ub.timestamp_ns = WallNs();
  ub.pool_guid = label_.pool_guid;
  ub.guid_sum = label_.device_guid;
  ub.allocated_bytes = allocator_->Usage().allocated_bytes;
  ub.root = table_bp_;
  ub.space_log = log_head_;
  ub.log = log_ ? log_->HeaderFor(txg) : loaded_log_;
  if (unsafe_.uberblock_before_blocks) {
    ARC_RETURN_IF_ERROR(format::WriteUberblock(*device_, layout_, ub));
    ARC_RETURN_IF_ERROR(io::FlushSync(*device_));
  }
  ARC_RETURN_IF_ERROR(writer->Finish());
  txg_->NoteSyncIo(txg, txg::SyncIo{0, 0, writer->written_bytes(), writer->device_writes()});
  if (!unsafe_.skip_flush_before_uberblock) ARC_RETURN_IF_ERROR(io::FlushSync(*device_));
  if (!unsafe_.uberblock_before_blocks) {
    ARC_RETURN_IF_ERROR(format::WriteUberblock(*device_, layout_, ub));
  }
  ARC_RETURN_IF_ERROR(io::FlushSync(*device_));
  return ub;
}

// The txg is durable: its frees count down, the log lets go of the dirty
// buffers of txg it holds (writes logged by reference), and the volumes
// then publish their copies to the ARC.
void PoolImpl::Committed(uint64_t txg, const SyncSet& set, const format::Uberblock& ub) {
  allocator_->SyncDone(txg);
  if (log_) log_->TxgCommitted(txg, ub.log);
  for (const auto& v : set.volumes) v->TxgCommitted(txg);
  const space::SpaceUsage usage = allocator_->Usage();
  if (space_) space_->Committed(txg, usage);
  frees_pending_.store(usage.deferred_bytes > 0, std::memory_order_relaxed);
  MutexLock l(&mu_);
  committed_txg_ = txg;
  usage_ = usage;
}

PoolInfo PoolImpl::Info() {
  PoolInfo info;
  info.path = device_->name();
  info.guid = label_.pool_guid;
  info.size_bytes = device_->size_bytes();
  info.format_version = format::kFormatVersion;
  if (caches_) info.cache_devices = caches_->Info();
  MutexLock l(&mu_);
  info.name = label_.config.Get("pool_name").value_or("");
  if (!caches_) {
    for (const std::string& path : CachePathsOf(label_.config)) {
      PoolInfo::CacheDevice d;
      d.path = path;
      d.state = "not in use: the pool is open read-only";
      info.cache_devices.push_back(std::move(d));
    }
  }
  info.allocated_bytes = usage_.allocated_bytes;
  info.free_bytes = usage_.free_bytes;
  info.pending_free_bytes = usage_.deferred_bytes;
  info.txg = committed_txg_;
  for (const auto& [name, v] : volumes_) info.volumes.push_back(v->info());
  return info;
}

Status PoolImpl::CreateVolume(const VolumeOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  ARC_ASSIGN_OR_RETURN(format::Compression comp, format::ParseCompression(options.compression));
  format::VolumeEntry e;
  e.name = options.name;
  e.guid = NewGuid();
  e.size_bytes = options.size_bytes;
  e.record_size_bytes = options.record_size_bytes;
  e.compression = comp;
  e.indirect_shift = kIndirectShift;
  e.tree_depth = static_cast<uint8_t>(format::TreeDepthFor(e.records(), kIndirectShift));
  e.root.level = e.tree_depth;
  uint64_t txg;
  {
    // The table entry is the dirty data of this txg.
    ARC_ASSIGN_OR_RETURN(txg::TxgHold hold, txg_->AssignNoThrottle(format::kVolumeEntryBytes));
    txg = hold.txg();
    e.create_txg = txg;
    MutexLock l(&mu_);
    if (closed_) return Status::Aborted("pool is closed");
    if (volumes_.count(e.name) != 0) {
      return Status::AlreadyExists("volume " + e.name + " already exists");
    }
    if (volumes_.size() >= format::kMaxVolumes) {
      return Status::ResourceExhausted("a pool holds at most " +
                                       std::to_string(format::kMaxVolumes) + " volumes");
    }
    ARC_ASSIGN_OR_RETURN(std::shared_ptr<volume::VolumeImpl> v, NewVolume(e));
    volumes_.emplace(e.name, std::move(v));
    table_dirty_txgs_.insert(txg);
  }
  return txg_->WaitSynced(txg, txg::SyncReason::kExplicitWait);
}

Status PoolImpl::DestroyVolume(const std::string& name) {
  uint64_t txg;
  {
    ARC_ASSIGN_OR_RETURN(txg::TxgHold hold, txg_->AssignNoThrottle(format::kVolumeEntryBytes));
    txg = hold.txg();
    MutexLock l(&mu_);
    auto it = volumes_.find(name);
    if (it == volumes_.end()) return Status::NotFound("volume " + name + " does not exist");
    it->second->MarkDestroyed();
    handles_->RemoveVolume(it->second->entry().guid);
    arc_->RemoveVolume(it->second->entry().guid);
    destroyed_[txg].push_back(std::move(it->second));
    volumes_.erase(it);
    table_dirty_txgs_.insert(txg);
  }
  return txg_->WaitSynced(txg, txg::SyncReason::kExplicitWait);
}

Result<std::shared_ptr<Volume>> PoolImpl::OpenVolume(const std::string& name) {
  MutexLock l(&mu_);
  if (closed_) return Status::Aborted("pool is closed");
  auto it = volumes_.find(name);
  if (it == volumes_.end()) return Status::NotFound("volume " + name + " does not exist");
  return std::shared_ptr<Volume>(it->second);
}

Status PoolImpl::DropCaches() {
  std::vector<uint64_t> guids;
  {
    MutexLock l(&mu_);
    for (const auto& [name, v] : volumes_) guids.push_back(v->entry().guid);
  }
  for (uint64_t g : guids) {
    handles_->RemoveVolume(g);
    arc_->RemoveVolume(g);
  }
  return Status::Ok();
}

Status PoolImpl::QuiesceForCheck() {
  ARC_RETURN_IF_ERROR(Sync());
  if (work_) work_->Drain();
  handles_->Drain();
  return Status::Ok();
}

Status PoolImpl::Sync() {
  if (options_.read_only) return Status::Ok();
  return txg_->WaitSynced(txg_->open_txg(), txg::SyncReason::kExplicitWait);
}

std::vector<std::string> PoolImpl::CachePathsOf(const format::PoolConfig& config) {
  std::vector<std::string> paths;
  for (size_t i = 0; i < Pool::kMaxCacheDevices; i++) {
    std::optional<std::string> path = config.Get("cache." + std::to_string(i));
    if (!path) break;
    paths.push_back(*path);
  }
  return paths;
}

// The cache devices of the config ("cache.0", "cache.1", ...), opened at
// the last committed txg; one that cannot be used is listed with why.
void PoolImpl::StartCacheDevices() {
  CacheDevices::Env env;
  env.inner = reader_.get();
  env.clock = clock_;
  env.registry = &registry_;
  env.pool_guid = label_.pool_guid;
  env.pool_path = device_->name();
  env.arc = arc_.get();
  io::QueuedDevice* queue = queue_;
  env.trace_io = [queue](uint32_t cache, const io::TracedIo& io) {
    queue->AddTraceCacheIo(cache, io);
  };
  env.open_device = unsafe_.open_cache_device;
  env.unsafe_key_ignores_birth = unsafe_.l2_key_ignores_birth;
  caches_ = std::make_unique<CacheDevices>(options_.cache, env);
  uint64_t txg;
  {
    MutexLock l(&mu_);
    txg = committed_txg_;
  }
  for (const std::string& path : CachePathsOf(label_.config)) caches_->Open(path, txg);
  for (const PoolInfo::CacheDevice& d : caches_->Info()) {
    if (d.state != "online") {
      open_report_.notes.push_back("cache device " + d.path + " not used: " + d.state);
    }
  }
  MutexLock c(&config_mu_);
  UpdateEvictionSink();
}

// The ARC offers its evictions only while a cache device can take them.
void PoolImpl::UpdateEvictionSink() {
  arc_->SetEvictionSink(caches_->online() > 0 ? caches_.get() : nullptr);
}

Status PoolImpl::WriteCacheConfig() {
  format::LabelHeader next;
  {
    MutexLock l(&mu_);
    next = label_;
  }
  format::PoolConfig config;
  for (const auto& [key, value] : next.config.entries) {
    if (key.rfind("cache.", 0) != 0 && key != format::kConfigGenerationKey) {
      config.Set(key, value);
    }
  }
  const std::vector<std::string> paths = caches_->paths();
  for (size_t i = 0; i < paths.size(); i++) config.Set("cache." + std::to_string(i), paths[i]);
  config.Set(std::string(format::kConfigGenerationKey),
             std::to_string(format::ConfigGeneration(next.config) + 1));
  next.config = config;
  ARC_RETURN_IF_ERROR(next.config.Validate());
  ARC_RETURN_IF_ERROR(format::RewriteLabelHeaders(*device_, next));
  MutexLock l(&mu_);
  label_ = next;
  return Status::Ok();
}

Status PoolImpl::AddCache(const std::string& path) {
  if (options_.read_only || caches_ == nullptr) {
    return Status::NotSupported("pool add-cache: the pool is open read-only");
  }
  MutexLock c(&config_mu_);
  uint64_t txg;
  {
    MutexLock l(&mu_);
    if (closed_) return Status::Aborted("pool add-cache: the pool is closed");
    txg = committed_txg_;
  }
  ARC_RETURN_IF_ERROR(caches_->Add(path, txg));
  Status s = WriteCacheConfig();
  if (!s.ok()) {
    (void)caches_->Remove(path);
    return s.WithContext("pool add-cache " + path + ": recording it in the labels");
  }
  UpdateEvictionSink();
  return Status::Ok();
}

Status PoolImpl::RemoveCache(const std::string& path) {
  if (options_.read_only || caches_ == nullptr) {
    return Status::NotSupported("pool remove-cache: the pool is open read-only");
  }
  MutexLock c(&config_mu_);
  // Evictions stop being offered first when this was the last device.
  if (caches_->online() <= 1) arc_->SetEvictionSink(nullptr);
  ARC_RETURN_IF_ERROR(caches_->Remove(path));
  UpdateEvictionSink();
  return WriteCacheConfig().WithContext("pool remove-cache " + path + ": recording it in the labels");
}

Status PoolImpl::Close() {
  {
    MutexLock l(&mu_);
    if (closed_) return Status::Ok();
    closed_ = true;
  }
  if (work_) work_->Drain();  // operations already submitted finish first
  if (caches_) arc_->SetEvictionSink(nullptr);  // nothing more to cache
  if (log_) log_->StopWriter();  // before the txg pipeline its fallback needs
  Status s = txg_ ? txg_->Stop() : Status::Ok();
  MutexLock l(&mu_);
  for (auto& [name, v] : volumes_) v->Close();
  if (s.ok() && !options_.read_only) s = io::FlushSync(*device_);
  return s;
}

PoolImpl::Census PoolImpl::Check() {
  MutexLock sync_lock(&sync_mu_);
  Census c;
  const uint32_t unit = layout_.allocation_unit;
  std::vector<space::Extent> referenced;
  auto note = [&](const std::string& where, const BlockPointer& bp) {
    if (!bp.OwnsSpace()) return;
    c.blocks++;
    c.referenced_bytes += bp.AllocatedBytes(unit);
    space::Extent e{bp.offset_units * unit, bp.AllocatedBytes(unit)};
    referenced.push_back(e);
    if (!allocator_->IsAllocated(e)) {
      c.problems.push_back(where + ": " + bp.ToString() + " is not allocated in the space map");
    }
    Result<std::vector<uint8_t>> r = reader_->ReadBlock(bp);
    if (!r.ok()) c.problems.push_back(where + ": " + r.status().ToString());
  };
  note("volume table", table_bp_);
  const format::IntentLogHeader arena = log_ ? log_->HeaderFor(UINT64_MAX) : loaded_log_;
  if (arena.present()) {
    const space::Extent e{arena.arena_offset_bytes, arena.arena_bytes};
    c.referenced_bytes += e.length_bytes;
    referenced.push_back(e);
    if (!allocator_->IsAllocated(e)) {
      c.problems.push_back("intent log arena " + std::to_string(e.offset_bytes) + "+" +
                           std::to_string(e.length_bytes) + " is not allocated in the space map");
    }
  }
  for (size_t i = 0; i < log_chain_.size(); i++) {
    note("space log block " + std::to_string(i), log_chain_[i]);
    c.log_blocks++;
  }
  std::vector<std::shared_ptr<volume::VolumeImpl>> vols;
  {
    MutexLock l(&mu_);
    for (const auto& [name, v] : volumes_) vols.push_back(v);
  }
  for (const auto& v : vols) {
    const std::string name = "volume " + v->entry().name;
    Status s = v->tree().Walk([&](uint64_t id, const BlockPointer& bp) {
      if (bp.type == BlockType::kData) {
        c.data_blocks++;
        note(name + " record " + std::to_string(id), bp);
      } else if (bp.type == BlockType::kIndirect) {
        c.indirect_blocks++;
        note(name + " indirect L" + std::to_string(bp.level) + " block " + std::to_string(id), bp);
      }
      return Status::Ok();
    });
    if (!s.ok()) c.problems.push_back(name + ": tree walk failed: " + s.ToString());
  }
  const space::SpaceUsage u = allocator_->Usage();
  if (u.allocated_bytes != c.referenced_bytes) {
    c.problems.push_back("space map: " + std::to_string(u.allocated_bytes) +
                         " bytes allocated but " + std::to_string(c.referenced_bytes) +
                         " referenced (" +
                         (u.allocated_bytes > c.referenced_bytes ? "leaked" : "double use") + ")");
  }
  std::sort(referenced.begin(), referenced.end(),
            [](const space::Extent& a, const space::Extent& b) {
              return a.offset_bytes < b.offset_bytes;
            });
  for (size_t i = 1; i < referenced.size(); i++) {
    if (referenced[i].offset_bytes < referenced[i - 1].end_bytes()) {
      c.problems.push_back("blocks overlap at byte " + std::to_string(referenced[i].offset_bytes));
    }
  }
  return c;
}

}  // namespace arcstore::pool
