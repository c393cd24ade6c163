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
// A class takes its buffers from slabs when a slab holds this many.
constexpr uint64_t kMinPiecesPerSlab = 8;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels say EINVAL
#endif

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

// A slab, populated at once: one system call instead of a fault per page
// on first touch. Huge pages are refused: on a virtual machine, zeroing a
// 2 MiB page of memory the guest has not touched yet stalls the writer
// that touches it first. The advice is a hint; a kernel without it
// faults the pages in one by one on first touch.
uint8_t* MapSlab(uint64_t slab_bytes) {
  uint8_t* slab = MapPages(slab_bytes);
  (void)madvise(slab, slab_bytes, MADV_NOHUGEPAGE);
  (void)madvise(slab, slab_bytes, MADV_POPULATE_WRITE);
  return slab;
}

}  // namespace

Status BufferAllocatorOptions::Validate() const {
  if (map_min_bytes > kMaxMapMinBytes) {
    return Status::InvalidArgument("arc options: buffers.map_min_bytes must be <= 1 GiB");
  }
  if (cache_bytes > kMaxCacheBytes) {
    return Status::InvalidArgument("arc options: buffers.cache_bytes must be <= 1 GiB");
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
// one system call costs far less than a fault per page on a virtual
// machine, where a fault on fresh memory is a trip to the hypervisor. This
// is what a writer pays for each new buffer while the ARC grows to its
// working size.
uint8_t* BufferAllocator::Map(uint64_t bytes) {
  uint8_t* p = MapPages(bytes);
  (void)madvise(p, PageRound(bytes), MADV_POPULATE_WRITE);
  maps_.fetch_add(1, std::memory_order_relaxed);
  if (counters_.maps != nullptr) counters_.maps->Add();
  mapped_bytes_.fetch_add(PageRound(bytes), std::memory_order_relaxed);
  return p;
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

void BufferAllocator::AddSlab(Class& cl, uint8_t* slab) {
  cl.slabs.push_back(slab);
  maps_.fetch_add(1, std::memory_order_relaxed);
  if (counters_.maps != nullptr) counters_.maps->Add();
  mapped_bytes_.fetch_add(options_.slab_bytes, std::memory_order_relaxed);
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
        cl.next = MapSlab(options_.slab_bytes);
        AddSlab(cl, cl.next);
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
  if (SourceOf(kPageBytes) != Source::kSlab || filler_.joinable()) return;
  {
    MutexLock l(&filler_mu_);
    filler_stop_ = false;
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
  }
  filler_.join();
}

void BufferAllocator::FillerMain() {
  for (;;) {
    uint32_t wanted = 0;
    {
      MutexLock l(&filler_mu_);
      while (!filler_stop_ && filler_wanted_ == 0) filler_cv_.Wait(&filler_mu_);
      if (filler_stop_) return;
      wanted = std::exchange(filler_wanted_, 0);
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
      uint8_t* slab = MapSlab(options_.slab_bytes);
      MutexLock l(&cl.mu);
      AddSlab(cl, slab);
      cl.ready = slab;
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
  return s;
}

}  // namespace arcstore::arc
