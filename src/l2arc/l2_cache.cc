// L2ARC: theory of operation.
//
// The ARC holds what fits in memory. A buffer it evicts is offered to this
// cache, which keeps a copy on a fast cache device; a later ARC miss asks
// here before it reads the pool. Nothing here is needed for correctness:
// every copy carries its checksum, and a copy that is missing, damaged or
// unreadable is a miss for the caller, who then reads the pool.
//
// Identity: a copy is filed under the block's (where, birth). The pool never
// writes a block in place and frees are deferred, so while the pool lives a
// (where, birth) names the same bytes: a copy found under it is never
// stale, and nothing needs to invalidate it when the block is freed (a new
// block at that place has a new birth).
//
// Device layout: a label, then a ring of fixed-size slots. A slot is a
// header area (room for one entry per kBytesPerEntrySlot of data) followed
// by the data of its entries, each at a block-aligned offset:
//
//   | label | slot 0          | slot 1          | ... | slot n-1        |
//           | hdr | data ...  | hdr | data ...  |     | hdr | data ...  |
//                               ^ head: the next slot written; n-1 is followed by 0
//
// The label holds the pool guid, the cache guid (new each time the device
// is formatted), the geometry and the epoch table (below). A slot header
// holds both guids, a sequence number (never reused under a cache guid),
// the epoch it was written in, and per entry: key, offset, bytes and the
// xxHash3-64 of the data; its own checksum covers all of it.
//
// Feed: Offer copies the buffer into the slot being filled, in memory. The
// slot is sealed when the next buffer does not fit (data or header room),
// and at the end of the feed interval it was filled in; the writer thread
// writes each sealed slot with ONE device write at the ring head, then
// advances the head:
//
//   Offer --copy--> [fill] --seal--> [sealed][sealed] --> writer --one write--> ring[head++]
//                     ^ budget: write_max_bytes a feed interval
//                       (+ write_boost_bytes until the ring first wraps)
//
// At most kMaxSealedSlots slots wait for the writer; when the fill slot
// must be sealed and they are all waiting, the offer is refused
// (feed_refused_busy): the ARC never waits for the cache device. Copies
// waiting in memory are in the index already (their slot is a pending
// value), so a Read finds them and copies from memory, and a second offer
// of the same block is refused.
//
// Overwrite: before the writer overwrites slot h it removes every index
// entry of h (the per-slot chain says which) and bumps h's generation, both
// under the lock, so no new read starts there. A read already in flight
// into h copied the generation with the location and checks it again after
// its device read: if it changed the read is a miss, whatever it returned.
//
// Index (l2_index.h): a node array of 40-byte nodes, an open-addressing
// table of 4-byte node ids and per-slot chain heads, at most 64 bytes a
// cached block including the table's slack, once the ring is full of small
// blocks (the per-slot state, a few dozen bytes a slot, is shared by the
// blocks of the slot). sizes().header_bytes counts all of it.
//
// Open and rebuild: a label that is blank, damaged, of another pool or of
// another geometry, or a cache opened with rebuild off, is formatted fresh:
// a new label with a new cache guid, so no slot header written before is
// trusted (nothing else is erased). A label of this pool is rebuilt: a
// background thread reads every slot's header area once, in ring order,
// keeps the ones whose magic, checksum and guids are right (a damaged one
// is counted in rebuild_bad_slots and skipped) and inserts their entries;
// a key found in two slots keeps the copy of the slot with the larger
// sequence (the copies hold the same bytes; the newer lives longer). The
// head goes after the slot with the largest sequence, the next sequence
// after it. Offers are refused until the rebuild is done; reads are served
// as entries arrive.
//
// Epochs: a block born in a txg that never committed (the pool crashed
// before it) is dropped at rebuild: the pool will write that txg number
// again with other contents. It must stay dropped at every later open, when
// the pool's committed txg has passed its birth. So each Open of a cache of
// this pool starts a new epoch and records in the label, before any slot of
// the new epoch is written, the bound of the epoch that ended: the pool's
// committed txg now. Slot headers carry their epoch; at rebuild an entry
// is kept only if its birth is at most its epoch's bound (and at most the
// committed txg). The label keeps the bounds of the newest kMaxEpochBounds
// epochs; slots of an epoch it has no bound for are dropped whole (older
// ones, and those of a label lost in a crash, which is why the label is
// flushed before the epoch's first slot write).
//
//   open k:   label {epoch k, bounds [.., (k-1, committed txg at open k)]}
//   slot of epoch e, entry born b: kept iff b <= bound(e) and b <= committed
//
// Failure: a failed slot write drops the slot's entries (counted in
// io_errors, returned by the next Flush) and leaves the head where it was;
// a failed or mismatching read drops the entry. A torn slot write leaves
// either the old header (its data checksums then fail, entry by entry) or
// a damaged one (skipped at rebuild). A slot header the rebuild cannot read
// is counted in io_errors and skipped.
//
// Locking: one mutex, mu_, guards the index, the slot states, the buffers'
// bookkeeping and the feed state. It is never held across device I/O: a
// read copies the location under it and reads without it; the writer
// encodes and writes a sealed buffer (which nothing else changes) without
// it. Offer hashes the buffer without it and copies it into the fill slot
// under it; the feed budget bounds those copies, so the time readers can
// wait for them is bounded too. The cache calls nothing under mu_ but the
// clock, so a caller may hold locks of its own (the ARC's) across Offer and
// Read: mu_ comes after them.
//
// Limits: kBuffers slot buffers (fill, sealed, writing), allocated on first
// use; buffers of kMinBlockBytes..max_block_bytes; at most kMaxRingEntries
// index entries; the label's kMaxEpochBounds.
//
// Tunables (L2CacheOptions): slot_bytes (size of a ring write; larger
// slots mean fewer writes and fewer header reads at rebuild, more memory
// and a coarser eviction), write_max_bytes and write_boost_bytes (the feed
// rate), feed_interval_ms, max_block_bytes, cache_prefetched, rebuild.
//
// Stats (module "l2arc", or env.stats_module): hits, misses, read_bytes, checksum_errors,
// io_errors; feeds, feed_bytes, feed_refused_budget, feed_refused_busy,
// feed_refused_other; slots_written, write_bytes, evicted_entries;
// rebuild_entries, rebuild_dropped, rebuild_bad_slots; gauges size, asize,
// hdr_size, entries.
#include "l2arc/l2_cache.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "base/checksum.h"
#include "base/random.h"

namespace arcstore::l2arc {

namespace {

std::string KeyText(const L2Key& key) {
  return "block " + format::Hex64(key.where) + " birth " + std::to_string(key.birth);
}

}  // namespace

Result<std::unique_ptr<L2Cache>> L2Cache::Open(const L2CacheOptions& options,
                                               const L2CacheEnv& env) {
  ARC_RETURN_IF_ERROR(options.Validate());
  if (env.device == nullptr || env.clock == nullptr) {
    return Status::InvalidArgument("l2arc: env.device and env.clock are required");
  }
  if (env.pool_guid == 0) return Status::InvalidArgument("l2arc: env.pool_guid is zero");
  if (env.stats_module.empty()) return Status::InvalidArgument("l2arc: env.stats_module is empty");
  const std::string who = env.name.empty() ? "cache " + env.device->name() : env.name;
  Result<L2Layout> layout =
      ComputeLayout(options.slot_bytes, env.device->logical_block_size(), env.device->size_bytes());
  if (!layout.ok()) return layout.status().WithContext(who);
  std::unique_ptr<L2Cache> cache(new L2Cache(options, env, *layout));
  Result<bool> rebuild = cache->WriteLabel();
  if (!rebuild.ok()) return rebuild.status();
  cache->Start(*rebuild);
  return cache;
}

Result<bool> L2Cache::WriteLabel() {
  io::AlignedBuffer block(layout_.label_bytes, io::BufferAlignmentFor(*env_.device));
  std::optional<L2Label> old;
  if (io::ReadSync(*env_.device, 0, block.span()).ok()) {
    Result<L2Label> found = DecodeLabel(block.span());
    if (found.ok() && found->pool_guid == env_.pool_guid &&
        found->slot_data_bytes == layout_.slot_data_bytes &&
        found->slot_count == layout_.slot_count &&
        found->slot_stride_bytes == layout_.slot_stride_bytes) {
      old = *found;
    }
  }
  const bool rebuild = options_.rebuild && old.has_value();
  L2Label label;
  if (rebuild) {
    // A new epoch; the one that ended holds no block born after the
    // committed txg.
    label = *old;
    label.epoch = old->epoch + 1;
    label.bounds.push_back(L2EpochBound{old->epoch, env_.committed_txg});
    if (label.bounds.size() > kMaxEpochBounds) label.bounds.erase(label.bounds.begin());
  } else {
    label.pool_guid = env_.pool_guid;
    label.cache_guid = NewGuid();
    label.slot_data_bytes = layout_.slot_data_bytes;
    label.slot_count = layout_.slot_count;
    label.slot_stride_bytes = layout_.slot_stride_bytes;
    label.epoch = 1;
  }
  std::memset(block.data(), 0, block.size());
  EncodeLabel(label, block.span());
  // Durable before any slot of the new epoch is written: a slot whose epoch
  // the label does not know is dropped whole, so a label lost in a crash
  // must not leave slots of its epoch behind to be trusted later.
  Status written = io::WriteSync(*env_.device, 0, block.span());
  if (written.ok()) written = io::FlushSync(*env_.device);
  if (!written.ok()) return written.WithContext(name_ + ": l2arc label write");
  label_ = label;
  cache_guid_ = label.cache_guid;
  return rebuild;
}

namespace {

// The env with the cache's measured device in place of the caller's.
L2CacheEnv Measured(const L2CacheEnv& env, io::Device* measured) {
  L2CacheEnv e = env;
  e.device = measured;
  return e;
}

}  // namespace

L2Cache::L2Cache(const L2CacheOptions& options, const L2CacheEnv& env, const L2Layout& layout)
    : own_registry_(env.registry == nullptr ? std::make_unique<stats::Registry>() : nullptr),
      registry_(env.registry != nullptr ? env.registry : own_registry_.get()),
      measured_(env.device, env.clock, registry_, env.stats_module, env.on_io),
      options_(options),
      env_(Measured(env, &measured_)),
      name_(env.name.empty() ? "cache " + env.device->name() : env.name),
      layout_(layout),
      interval_ns_(options.feed_interval_ms * 1'000'000),
      stats_(registry_, env.stats_module),
      index_(static_cast<uint32_t>(layout.slot_count),
             (layout.slot_count + kBuffers) * layout.entries_per_slot),
      slots_(layout.slot_count) {
  MutexLock l(&mu_);
  interval_start_ns_ = env_.clock->NowNs();
  UpdateGaugesLocked();
}

void L2Cache::Start(bool rebuild) {
  {
    MutexLock l(&mu_);
    rebuilt_ = !rebuild;
  }
  writer_ = std::thread([this] { WriterLoop(); });
  if (rebuild) rebuilder_ = std::thread([this] { RebuildLoop(); });
}

L2Cache::~L2Cache() {
  {
    MutexLock l(&mu_);
    stop_ = true;
    writer_cv_.SignalAll();
    idle_cv_.SignalAll();
  }
  if (writer_.joinable()) writer_.join();
  if (rebuilder_.joinable()) rebuilder_.join();
  if (!own_registry_) registry_->RemoveModule(env_.stats_module);
  MutexLock l(&mu_);
  if (env_.on_header_bytes && reported_header_bytes_ != 0) {
    env_.on_header_bytes(-reported_header_bytes_);
    reported_header_bytes_ = 0;
  }
}

bool L2Cache::Refuse(stats::Counter* counter) const {
  counter->Add();
  return false;
}

bool L2Cache::Offer(const L2Key& key, std::span<const uint8_t> data, bool metadata,
                    bool prefetched) {
  // Metadata and data are cached alike.
  (void)metadata;
  const uint64_t bytes = data.size();
  if (bytes < kMinBlockBytes || bytes > options_.max_block_bytes || bytes % kMinBlockBytes != 0 ||
      (prefetched && !options_.cache_prefetched)) {
    return Refuse(stats_.feed_refused_other);
  }
  const uint64_t now_ns = env_.clock->NowNs();
  // Admission is checked before the data is hashed (most refusals cost no
  // hashing) and again after, since the lock was let go in between.
  {
    MutexLock l(&mu_);
    if (!AdmitLocked(key, bytes, now_ns)) return false;
  }
  const uint64_t checksum = Xxh3_64(data.data(), bytes);
  const uint64_t asize = layout_.RoundToBlock(bytes);
  MutexLock l(&mu_);
  if (!AdmitLocked(key, bytes, now_ns)) return false;
  if (fill_ != kNone) {
    const Buffer& f = buffers_[fill_];
    if (f.data_used + asize > layout_.slot_data_bytes ||
        f.entries.size() >= layout_.entries_per_slot) {
      if (!SealLocked()) return Refuse(stats_.feed_refused_busy);
    }
  }
  if (fill_ == kNone) fill_ = TakeBufferLocked();
  if (fill_ == kNone) return Refuse(stats_.feed_refused_busy);
  Buffer& f = buffers_[fill_];
  const L2Location loc{kPendingSlot0 + static_cast<uint32_t>(fill_),
                       static_cast<uint32_t>(f.data_used), static_cast<uint32_t>(bytes), checksum};
  const uint32_t node = index_.Insert(key, loc);
  if (node == kNoNode) return Refuse(stats_.feed_refused_other);
  uint8_t* at = f.bytes.data() + layout_.header_area_bytes + f.data_used;
  std::memcpy(at, data.data(), bytes);
  std::memset(at + bytes, 0, asize - bytes);
  f.entries.push_back(L2SlotEntry{key, loc.offset, loc.bytes, checksum});
  f.nodes.push_back(node);
  f.data_used += asize;
  interval_bytes_ += bytes;
  data_bytes_ += bytes;
  stats_.feeds->Add();
  stats_.feed_bytes->Add(bytes);
  // A full slot goes to the writer at once.
  if (f.data_used + layout_.block_bytes > layout_.slot_data_bytes ||
      f.entries.size() >= layout_.entries_per_slot) {
    SealLocked();
  }
  UpdateGaugesLocked();
  return true;
}

bool L2Cache::AdmitLocked(const L2Key& key, uint64_t bytes, uint64_t now_ns) {
  if (!rebuilt_ || stop_) return Refuse(stats_.feed_refused_other);
  RollIntervalLocked(now_ns);
  const uint64_t budget = options_.write_max_bytes + (wrapped_ ? 0 : options_.write_boost_bytes);
  if (interval_bytes_ + bytes > budget) return Refuse(stats_.feed_refused_budget);
  return index_.Find(key) == kNoNode;
}

void L2Cache::RollIntervalLocked(uint64_t now_ns) {
  if (now_ns < interval_start_ns_ + interval_ns_) return;
  interval_start_ns_ = now_ns;
  interval_bytes_ = 0;
  SealLocked();  // when the writer is behind, the slot is sealed by a later call
}

bool L2Cache::SealLocked() {
  if (fill_ == kNone || buffers_[fill_].entries.empty()) return true;
  if (sealed_count_ == kMaxSealedSlots) return false;
  sealed_[sealed_count_++] = fill_;
  fill_ = kNone;
  writer_cv_.Signal();
  return true;
}

int L2Cache::TakeBufferLocked() {
  for (int b = 0; b < static_cast<int>(kBuffers); b++) {
    Buffer& buf = buffers_[b];
    if (buf.in_use) continue;
    if (buf.bytes.empty()) {
      buf.bytes =
          io::AlignedBuffer(layout_.slot_stride_bytes, io::BufferAlignmentFor(*env_.device));
      buf.entries.reserve(layout_.entries_per_slot);
      buf.nodes.reserve(layout_.entries_per_slot);
    }
    buf.in_use = true;
    buf.entries.clear();
    buf.nodes.clear();
    buf.data_used = 0;
    return b;
  }
  return kNone;
}

Status L2Cache::Read(const L2Key& key, std::span<uint8_t> out) {
  uint32_t node = kNoNode;
  L2Location loc;
  uint64_t generation = 0;
  {
    MutexLock l(&mu_);
    node = index_.Find(key);
    if (node == kNoNode) {
      stats_.misses->Add();
      return Status::NotFound(name_ + ": " + KeyText(key) + " not in the l2arc");
    }
    loc = index_.location(node);
    if (out.size() != loc.bytes) {
      return Status::InvalidArgument(name_ + ": l2arc read of " + KeyText(key) + " into " +
                                     std::to_string(out.size()) + " bytes, its size is " +
                                     std::to_string(loc.bytes));
    }
    if (loc.slot >= kPendingSlot0) {
      const Buffer& buf = buffers_[loc.slot - kPendingSlot0];
      std::memcpy(out.data(), buf.bytes.data() + layout_.header_area_bytes + loc.offset, loc.bytes);
      stats_.hits->Add();
      stats_.read_bytes->Add(loc.bytes);
      return Status::Ok();
    }
    generation = slots_[loc.slot].generation;
  }
  const uint64_t offset = layout_.DataOffset(loc.slot) + loc.offset;
  // Straight into `out` when the device can take it (whole blocks, aligned
  // memory), else through a buffer of whole blocks.
  const size_t align = io::BufferAlignmentFor(*env_.device);
  const bool direct =
      loc.bytes % layout_.block_bytes == 0 && reinterpret_cast<uintptr_t>(out.data()) % align == 0;
  io::AlignedBuffer bounce;
  std::span<uint8_t> target = out;
  if (!direct) {
    bounce = io::AlignedBuffer(layout_.RoundToBlock(loc.bytes), align);
    target = bounce.span();
  }
  Status read = io::ReadSync(*env_.device, offset, target, io::IoClass::kSyncRead);
  const bool match = read.ok() && Xxh3_64(target.data(), loc.bytes) == loc.checksum;
  {
    MutexLock l(&mu_);
    if (slots_[loc.slot].generation != generation) {
      stats_.misses->Add();
      return Status::NotFound(name_ + ": " + KeyText(key) + ": its l2arc slot was overwritten");
    }
    if (!match) {
      // No overwrite since the lookup, so the entry is the same unless
      // another reader dropped it already.
      if (index_.Find(key) == node && index_.location(node).slot == loc.slot &&
          index_.location(node).offset == loc.offset) {
        DropNodeLocked(node);
      }
      UpdateGaugesLocked();
      if (!read.ok()) {
        stats_.io_errors->Add();
        return read.WithContext(name_ + ": l2arc read of " + KeyText(key));
      }
      stats_.checksum_errors->Add();
      return Status::Corruption(name_ + ": l2arc copy of " + KeyText(key) + " at device offset " +
                                std::to_string(offset) + ": checksum mismatch");
    }
  }
  if (!direct) std::memcpy(out.data(), bounce.data(), loc.bytes);
  stats_.hits->Add();
  stats_.read_bytes->Add(loc.bytes);
  return Status::Ok();
}

bool L2Cache::Contains(const L2Key& key) const {
  MutexLock l(&mu_);
  return index_.Find(key) != kNoNode;
}

void L2Cache::DropNodeLocked(uint32_t node) {
  const L2Location loc = index_.location(node);
  data_bytes_ -= loc.bytes;
  index_.Erase(node);
  if (loc.slot < index_.slot_count() && index_.slot_entries(loc.slot) == 0) {
    device_bytes_ -= slots_[loc.slot].device_bytes;
  }
}

Status L2Cache::Flush() {
  MutexLock l(&mu_);
  while (!stop_ && !SealLocked()) idle_cv_.Wait(&mu_);
  writer_cv_.Signal();
  while (!stop_ && !WriterIdleLocked()) idle_cv_.Wait(&mu_);
  Status error = write_error_;
  write_error_ = Status::Ok();
  return error;
}

bool L2Cache::WriterIdleLocked() const { return sealed_count_ == 0 && writing_ == kNone; }

void L2Cache::WaitRebuilt() {
  MutexLock l(&mu_);
  while (!rebuilt_ && !stop_) idle_cv_.Wait(&mu_);
}

L2Cache::Sizes L2Cache::sizes() const {
  MutexLock l(&mu_);
  Sizes s;
  s.entries = index_.size();
  s.header_bytes = index_.memory_bytes() + slots_.capacity() * sizeof(SlotState);
  s.data_bytes = data_bytes_;
  s.device_bytes = device_bytes_;
  return s;
}

void L2Cache::UpdateGaugesLocked() {
  stats_.size->Set(static_cast<int64_t>(data_bytes_));
  stats_.asize->Set(static_cast<int64_t>(device_bytes_));
  const int64_t hdr =
      static_cast<int64_t>(index_.memory_bytes() + slots_.capacity() * sizeof(SlotState));
  stats_.hdr_size->Set(hdr);
  if (env_.on_header_bytes && hdr != reported_header_bytes_) {
    env_.on_header_bytes(hdr - reported_header_bytes_);
    reported_header_bytes_ = hdr;
  }
  stats_.entries->Set(static_cast<int64_t>(index_.size()));
}

}  // namespace arcstore::l2arc
