// The ARC's buffer allocator: see buffer_allocator.h for the model.
#include "arc/buffer_allocator.h"

#include <sys/mman.h>
#include <unistd.h>


#include <algorithm>
#include <utility>

#include "base/check.h"
#include "base/page_memory.h"
#include "base/thread_name.h"
#include "base/units.h"

namespace arcstore::arc {
namespace {

constexpr uint64_t kMaxMapMinBytes = 1ull << 30;
constexpr uint64_t kMaxCacheBytes = 1ull << 30;
constexpr uint64_t kMinSlabBytes = 64 * 1024;
constexpr uint64_t kMaxSlabBytes = 4ull << 20;
constexpr uint64_t kMaxPretouchBytes = 64ull << 30;
// The reserve is mapped and populated in chunks of at most this.
constexpr uint64_t kReserveChunkBytes = 64ull << 20;
// ... and while the ARC grows, in chunks of at most this, so that the
// first of them is ready soon after the filler is asked.
constexpr uint64_t kGrowChunkBytes = 8ull << 20;
constexpr uint64_t kMaxGrowAheadBytes = 1ull << 30;
// A class takes its buffers from slabs when a slab holds this many.
constexpr uint64_t kMinPiecesPerSlab = 8;

#if defined(__SANITIZE_ADDRESS__)
#define ARC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARC_ASAN 1
#endif
#endif
#ifdef ARC_ASAN
}  // namespace
}  // namespace arcstore::arc
#include <sanitizer/asan_interface.h>
namespace arcstore::arc {
namespace {
// Slab pieces not handed out are poisoned, so that ASan still reports a
// use after free (or a read of a spare piece) as it would for new[].
void Poison(const uint8_t* p, uint64_t bytes) { ASAN_POISON_MEMORY_REGION(p, bytes); }
void Unpoison(const uint8_t* p, uint64_t bytes) { ASAN_UNPOISON_MEMORY_REGION(p, bytes); }
#else
void Poison(const uint8_t*, uint64_t) {}
void Unpoison(const uint8_t*, uint64_t) {}
#endif

}  // namespace

Status BufferAllocatorOptions::Validate() const {
  if (map_min_bytes > kMaxMapMinBytes) {
    return Status::InvalidArgument("arc options: buffers.map_min_bytes must be <= 1 GiB");
  }
  if (cache_bytes > kMaxCacheBytes) {
    return Status::InvalidArgument("arc options: buffers.cache_bytes must be <= 1 GiB");
  }
  if (pretouch_bytes > kMaxPretouchBytes) {
    return Status::InvalidArgument("arc options: buffers.pretouch_bytes must be <= 64 GiB");
  }
  if (grow_ahead_bytes > kMaxGrowAheadBytes) {
    return Status::InvalidArgument("arc options: buffers.grow_ahead_bytes must be <= 1 GiB, not " +
                                   std::to_string(grow_ahead_bytes));
  }
  if (slab_bytes != 0 &&
      (!IsPowerOfTwo(slab_bytes) || slab_bytes < kMinSlabBytes || slab_bytes > kMaxSlabBytes)) {
    return Status::InvalidArgument(
        "arc options: buffers.slab_bytes must be 0 or a power of two from 64 KiB to 4 MiB, not " +
        std::to_string(slab_bytes));
  }
  return Status::Ok();
}

BufferAllocator::BufferAllocator(const BufferAllocatorOptions& options)
    : options_(options), classes_(std::make_unique<Class[]>(kClasses)) {
  ARC_CHECK(sysconf(_SC_PAGESIZE) == static_cast<long>(kPageBytes))
      << "the ARC's buffer allocator assumes 4 KiB pages, not " << sysconf(_SC_PAGESIZE);
}

BufferAllocator::~BufferAllocator() {
  StopFiller();
  for (int i = 0; i < kClasses; i++) {
    Class& cl = classes_[i];
    const uint64_t bytes = kPageBytes << i;
    MutexLock l(&cl.mu);
    if (SourceOf(bytes) == Source::kSlab) {
      // The slabs go as a whole: what was resident in them and not in use.
      const uint64_t spare =
          static_cast<uint64_t>(cl.end - cl.next) + (cl.ready != nullptr ? options_.slab_bytes : 0);
      mapped_bytes_.fetch_sub(cl.free.size() * bytes + spare, std::memory_order_relaxed);
      spare_bytes_.fetch_sub(spare, std::memory_order_relaxed);
      cl.free.clear();
      continue;
    }
    for (uint8_t* p : cl.free) Release(p, bytes);
    cl.free.clear();
  }
  {
    MutexLock l(&reserve_mu_);
    for (const Chunk& chunk : reserve_) {
      UnmapPages(chunk.next, static_cast<uint64_t>(chunk.end - chunk.next));
      mapped_bytes_.fetch_sub(static_cast<uint64_t>(chunk.end - chunk.next),
                              std::memory_order_relaxed);
    }
    reserve_.clear();
  }
  ARC_CHECK_EQ(mapped_bytes_.load(), 0u) << "ARC buffers outlive their allocator";
  for (int i = 0; i < kClasses; i++) {
    MutexLock l(&classes_[i].mu);
    for (uint8_t* slab : classes_[i].slabs) {
      Unpoison(slab, options_.slab_bytes);  // the next mapping there is clean
      UnmapPages(slab, options_.slab_bytes);
    }
  }
}

int BufferAllocator::ClassOf(uint64_t bytes) {
  if (bytes < kPageBytes || !IsPowerOfTwo(bytes)) return -1;
  int i = 0;
  while ((kPageBytes << i) < bytes) i++;
  return i < kClasses ? i : -1;
}

// A buffer of its own mapping, populated at once like a slab: every record
// buffer is written whole soon after it is made (a record copied into a
// dirty copy, a block read into it), so its pages are touched anyway, and
// one system call costs far less than a fault per page. This is what a
// writer pays for each new buffer while the ARC grows to its working size
// and outruns the filler.
uint8_t* BufferAllocator::Map(uint64_t bytes) {
  bool from_reserve = false;
  uint8_t* p = MapFresh(PageRound(bytes), &from_reserve);
  if (!from_reserve) {
    maps_.fetch_add(1, std::memory_order_relaxed);
    if (counters_.maps != nullptr) counters_.maps->Add();
    mapped_bytes_.fetch_add(PageRound(bytes), std::memory_order_relaxed);
  }
  return p;
}

// Populated memory of `bytes` (page-rounded): cut from the reserve, else
// mapped and populated here (MapPopulatedPages: small pages, see
// base/page_memory.h).
uint8_t* BufferAllocator::MapFresh(uint64_t bytes, bool* from_reserve) {
  uint8_t* p = TakeReserved(bytes);
  AskToGrow();
  if (p != nullptr) {
    *from_reserve = true;
    reserve_hits_.fetch_add(1, std::memory_order_relaxed);
    if (counters_.reserve_hits != nullptr) counters_.reserve_hits->Add();
    return p;
  }
  *from_reserve = false;
  return MapPopulatedPages(bytes);
}

void BufferAllocator::AskToGrow() {
  const uint64_t ahead = options_.grow_ahead_bytes;
  if (ahead == 0) return;
  const uint64_t have = reserve_bytes_.load(std::memory_order_relaxed);
  // Not growing: the ARC is at its target (no room to fill).
  if (have >= ahead / 2 || have >= RoomForReserve()) return;
  MutexLock l(&filler_mu_);
  if (reserve_goal_bytes_ >= ahead) return;  // asked already
  reserve_goal_bytes_ = ahead;
  filler_cv_.Signal();
}

uint64_t BufferAllocator::RoomForReserve() const {
  const uint64_t room = room_ ? room_() : 0;
  const uint64_t cached = cached_bytes_.load(std::memory_order_relaxed);
  return room > cached ? room - cached : 0;
}

uint64_t BufferAllocator::ReserveTargetBytes() const {
  const uint64_t most = std::max(options_.pretouch_bytes, options_.grow_ahead_bytes);
  if (most == 0) return 0;
  return std::min(most, RoomForReserve());
}

bool BufferAllocator::FillReserve(uint64_t goal_bytes) {
  const uint64_t target = std::min(goal_bytes, RoomForReserve());
  const uint64_t have = reserve_bytes_.load(std::memory_order_relaxed);
  if (have >= target) return false;
  const uint64_t chunk_bytes =
      goal_bytes > options_.grow_ahead_bytes ? kReserveChunkBytes : kGrowChunkBytes;
  const uint64_t bytes = PageRound(std::min(chunk_bytes, target - have));
  uint8_t* p = MapPopulatedPages(bytes);
  maps_.fetch_add(1, std::memory_order_relaxed);
  if (counters_.maps != nullptr) counters_.maps->Add();
  mapped_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  pretouched_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  MutexLock l(&reserve_mu_);
  reserve_.push_back(Chunk{p, p + bytes});
  reserve_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  return true;
}

uint8_t* BufferAllocator::TakeReserved(uint64_t bytes) {
  if (reserve_bytes_.load(std::memory_order_relaxed) < bytes) return nullptr;
  uint8_t* p = nullptr;
  {
    MutexLock l(&reserve_mu_);
    while (!reserve_.empty()) {
      Chunk& chunk = reserve_.front();
      const uint64_t tail = static_cast<uint64_t>(chunk.end - chunk.next);
      if (tail >= bytes) {
        p = chunk.next;
        chunk.next += bytes;
        if (chunk.next == chunk.end) reserve_.pop_front();
        reserve_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
        break;
      }
      // Too small for this request: given back, so that the reserve holds
      // only what can be cut.
      UnmapPages(chunk.next, tail);
      unmaps_.fetch_add(1, std::memory_order_relaxed);
      if (counters_.unmaps != nullptr) counters_.unmaps->Add();
      mapped_bytes_.fetch_sub(tail, std::memory_order_relaxed);
      reserve_bytes_.fetch_sub(tail, std::memory_order_relaxed);
      reserve_.pop_front();
    }
  }
  return p;
}

void BufferAllocator::TrimReserve() {
  for (;;) {
    uint8_t* p = nullptr;
    uint64_t bytes = 0;
    {
      MutexLock l(&reserve_mu_);
      if (reserve_.empty() || reserve_bytes_.load(std::memory_order_relaxed) <= ReserveTargetBytes()) {
        return;
      }
      p = reserve_.back().next;
      bytes = static_cast<uint64_t>(reserve_.back().end - p);
      reserve_.pop_back();
      reserve_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    }
    UnmapPages(p, bytes);
    unmaps_.fetch_add(1, std::memory_order_relaxed);
    if (counters_.unmaps != nullptr) counters_.unmaps->Add();
    mapped_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  }
}

void BufferAllocator::Unmap(uint8_t* data, uint64_t bytes) {
  UnmapPages(data, bytes);
  unmaps_.fetch_add(1, std::memory_order_relaxed);
  if (counters_.unmaps != nullptr) counters_.unmaps->Add();
  mapped_bytes_.fetch_sub(PageRound(bytes), std::memory_order_relaxed);
}

BufferAllocator::Source BufferAllocator::SourceOf(uint64_t bytes) const {
  if (options_.map_min_bytes != 0 && bytes >= options_.map_min_bytes) return Source::kMapping;
  if (options_.map_min_bytes != 0 && options_.slab_bytes != 0 && ClassOf(bytes) >= 0 &&
      bytes * kMinPiecesPerSlab <= options_.slab_bytes) {
    return Source::kSlab;
  }
  return Source::kHeap;
}

void BufferAllocator::AddSlab(Class& cl, uint8_t* slab, bool from_reserve) {
  cl.slabs.push_back(slab);
  if (!from_reserve) {
    maps_.fetch_add(1, std::memory_order_relaxed);
    if (counters_.maps != nullptr) counters_.maps->Add();
    mapped_bytes_.fetch_add(options_.slab_bytes, std::memory_order_relaxed);
  }
  spare_bytes_.fetch_add(options_.slab_bytes, std::memory_order_relaxed);
  Poison(slab, options_.slab_bytes);
}

uint8_t* BufferAllocator::TakePiece(Class& cl, int c, uint64_t bytes) {
  uint8_t* p = nullptr;
  if (!cl.cold.empty()) {
    p = cl.cold.back();
    cl.cold.pop_back();
    mapped_bytes_.fetch_add(bytes, std::memory_order_relaxed);  // faults in on first touch
  } else {
    if (cl.next == cl.end) {
      if (cl.ready != nullptr) {
        cl.next = std::exchange(cl.ready, nullptr);
      } else {
        bool from_reserve = false;
        cl.next = MapFresh(options_.slab_bytes, &from_reserve);
        AddSlab(cl, cl.next, from_reserve);
        inline_slabs_.fetch_add(1, std::memory_order_relaxed);
        if (counters_.inline_slabs != nullptr) counters_.inline_slabs->Add();
      }
      cl.end = cl.next + options_.slab_bytes;
      // The filler, if running, maps the next one meanwhile.
      MutexLock fl(&filler_mu_);
      filler_wanted_ |= 1u << c;
      filler_cv_.Signal();
    }
    p = cl.next;
    cl.next += bytes;
    spare_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  }
  Unpoison(p, bytes);
  return p;
}

void BufferAllocator::StartFiller() {
  if (filler_.joinable()) return;
  if (SourceOf(kPageBytes) != Source::kSlab && options_.pretouch_bytes == 0 &&
      options_.grow_ahead_bytes == 0) {
    return;
  }
  {
    MutexLock l(&filler_mu_);
    filler_stop_ = false;
    reserve_goal_bytes_ = options_.pretouch_bytes;
    reserve_filled_ = options_.pretouch_bytes == 0;
  }
  filler_ = std::thread([this] {
    NameThisThread("arc_slabs");
    FillerMain();
  });
}

void BufferAllocator::StopFiller() {
  if (!filler_.joinable()) return;
  {
    MutexLock l(&filler_mu_);
    filler_stop_ = true;
    filler_cv_.Signal();
    reserve_filled_cv_.SignalAll();
  }
  filler_.join();
}

void BufferAllocator::WaitReserveFilled() {
  MutexLock l(&filler_mu_);
  if (!filler_.joinable()) return;
  while (!reserve_filled_ && !filler_stop_) reserve_filled_cv_.Wait(&filler_mu_);
}

void BufferAllocator::FillerMain() {
  for (;;) {
    uint32_t wanted = 0;
    uint64_t goal_bytes = 0;
    {
      MutexLock l(&filler_mu_);
      while (!filler_stop_ && filler_wanted_ == 0 && reserve_goal_bytes_ == 0) {
        filler_cv_.Wait(&filler_mu_);
      }
      if (filler_stop_) return;
      wanted = std::exchange(filler_wanted_, 0);
      goal_bytes = reserve_goal_bytes_;
    }
    for (int c = 0; c < kClasses; c++) {
      if ((wanted & (1u << c)) == 0) continue;
      Class& cl = classes_[c];
      {
        MutexLock l(&cl.mu);
        if (cl.ready != nullptr) continue;
      }
      // Mapped and populated without the class's lock: only this thread
      // sets `ready`, so it is still empty below.
      bool from_reserve = false;
      uint8_t* slab = MapFresh(options_.slab_bytes, &from_reserve);
      MutexLock l(&cl.mu);
      AddSlab(cl, slab, from_reserve);
      cl.ready = slab;
    }
    // A chunk at a time, so that slabs asked for meanwhile and a stop wait
    // for one chunk at most.
    if (goal_bytes != 0) {
      const bool more = FillReserve(goal_bytes);
      MutexLock l(&filler_mu_);
      // A larger goal set meanwhile (growth during the fill) stays asked.
      if (!more && reserve_goal_bytes_ <= goal_bytes) reserve_goal_bytes_ = 0;
      if (!more && !reserve_filled_) {
        reserve_filled_ = true;
        reserve_filled_cv_.SignalAll();
      }
    }
  }
}

void BufferAllocator::Release(uint8_t* data, uint64_t bytes) {
  switch (SourceOf(bytes)) {
    case Source::kSlab: {
      // Locked memory (mlockall) keeps its page (madvise fails): the piece
      // goes cold all the same, reused before any spare, and is counted as
      // given back. (Caching it instead would make Trim take it again.)
      (void)madvise(data, bytes, MADV_DONTNEED);
      unmaps_.fetch_add(1, std::memory_order_relaxed);
      if (counters_.unmaps != nullptr) counters_.unmaps->Add();
      mapped_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
      Poison(data, bytes);
      Class& cl = classes_[ClassOf(bytes)];
      MutexLock l(&cl.mu);
      cl.cold.push_back(data);
      return;
    }
    case Source::kHeap:
      delete[] data;
      return;
    case Source::kMapping:
      Unmap(data, bytes);
      return;
  }
}

ArcBuffer BufferAllocator::Allocate(uint64_t bytes) {
  // map_min_bytes 0: the plain heap allocator of before, no cache.
  if (const int c = ClassOf(bytes); c >= 0 && options_.map_min_bytes != 0) {
    Class& cl = classes_[c];
    MutexLock l(&cl.mu);
    if (!cl.free.empty()) {
      uint8_t* p = cl.free.back();
      cl.free.pop_back();
      cached_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
      cache_hits_.fetch_add(1, std::memory_order_relaxed);
      if (counters_.cache_hits != nullptr) counters_.cache_hits->Add();
      if (SourceOf(bytes) == Source::kSlab) Unpoison(p, bytes);
      return ArcBuffer(p, bytes, this);
    }
    if (SourceOf(bytes) == Source::kSlab) return ArcBuffer(TakePiece(cl, c, bytes), bytes, this);
  }
  if (SourceOf(bytes) == Source::kHeap) return ArcBuffer(new uint8_t[bytes], bytes, this);
  return ArcBuffer(Map(bytes), bytes, this);
}

void BufferAllocator::Free(uint8_t* data, uint64_t bytes) {
  if (const int c = ClassOf(bytes); c >= 0 && options_.map_min_bytes != 0) {
    // Reserve room in the cache first, so that concurrent frees never
    // take it past cache_bytes.
    uint64_t cached = cached_bytes_.load(std::memory_order_relaxed);
    const uint64_t limit = CacheLimitBytes();
    while (cached + bytes <= limit &&
           !cached_bytes_.compare_exchange_weak(cached, cached + bytes, std::memory_order_relaxed)) {
    }
    if (cached + bytes <= limit) {
      if (SourceOf(bytes) == Source::kSlab) Poison(data, bytes);
      Class& cl = classes_[c];
      MutexLock l(&cl.mu);
      cl.free.push_back(data);
      return;
    }
  }
  Release(data, bytes);
}

uint64_t BufferAllocator::CacheLimitBytes() const {
  const uint64_t room = room_ ? room_() : 0;
  return std::max(options_.cache_bytes, room);
}

void BufferAllocator::Trim() {
  TrimCache();
  TrimReserve();
}

void BufferAllocator::TrimCache() {
  // Largest classes first: the fewest system calls per byte returned.
  for (int i = kClasses - 1; i >= 0; i--) {
    const uint64_t bytes = kPageBytes << i;
    for (;;) {
      uint64_t cached = cached_bytes_.load(std::memory_order_relaxed);
      if (cached <= CacheLimitBytes()) return;
      uint8_t* p = nullptr;
      {
        MutexLock l(&classes_[i].mu);
        if (classes_[i].free.empty()) break;
        p = classes_[i].free.back();
        classes_[i].free.pop_back();
      }
      cached_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
      Release(p, bytes);
    }
  }
}

BufferAllocatorStats BufferAllocator::Stats() const {
  BufferAllocatorStats s;
  s.mapped_bytes = mapped_bytes_.load(std::memory_order_relaxed);
  s.cached_bytes = cached_bytes_.load(std::memory_order_relaxed);
  s.spare_bytes = spare_bytes_.load(std::memory_order_relaxed);
  s.inline_slabs = inline_slabs_.load(std::memory_order_relaxed);
  s.maps = maps_.load(std::memory_order_relaxed);
  s.unmaps = unmaps_.load(std::memory_order_relaxed);
  s.cache_hits = cache_hits_.load(std::memory_order_relaxed);
  s.reserve_bytes = reserve_bytes_.load(std::memory_order_relaxed);
  s.reserve_hits = reserve_hits_.load(std::memory_order_relaxed);
  s.pretouched_bytes = pretouched_bytes_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace arcstore::arc
