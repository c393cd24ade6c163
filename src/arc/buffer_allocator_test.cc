// The ARC's buffer allocator: small buffers from slabs (or the heap), large
// ones mapped, freed ones cached up to the bound and given back beyond it,
// options checked.
#include "arc/buffer_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "base/page_memory.h"
#include "base/units.h"

namespace arcstore::arc {
namespace {

// Waits for the filler to have placed slabs until `maps` are mapped; false
// after 10 s (the filler never did).
bool WaitForMaps(const BufferAllocator& a, uint64_t maps) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (a.Stats().maps < maps) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// `n` buffers of 4 KiB, every byte written.
std::vector<ArcBuffer> AllocateWritten(BufferAllocator& a, int n, uint8_t byte) {
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < n; i++) {
    bufs.push_back(a.Allocate(4 * kKiB));
    std::memset(bufs.back().get(), byte, bufs.back().bytes());
  }
  return bufs;
}

// Frees `bufs` first to last (vector::clear promises no order).
void FreeInOrder(std::vector<ArcBuffer>* bufs) {
  for (ArcBuffer& b : *bufs) b.Reset();
  bufs->clear();
}

// 4 KiB records come from slabs: one mapping per slab, not a heap growth
// (mprotect) and a page fault per buffer.
TEST(BufferAllocatorTest, SmallPowerOfTwoBuffersAreCutFromSlabs) {
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = kMiB, .slab_bytes = 64 * kKiB});
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 16; i++) {
    bufs.push_back(a.Allocate(4 * kKiB));
    ASSERT_EQ(bufs.back().bytes(), 4 * kKiB);
    std::memset(bufs.back().get(), i, bufs.back().bytes());
  }
  // One slab, cut in order into page-aligned pieces.
  EXPECT_EQ(a.Stats().maps, 1u);
  EXPECT_EQ(a.Stats().mapped_bytes, 64 * kKiB);
  EXPECT_EQ(a.Stats().spare_bytes, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(bufs[0].get()) % kPageBytes, 0u);
  for (int i = 1; i < 16; i++) EXPECT_EQ(bufs[i].get(), bufs[i - 1].get() + 4 * kKiB);
  for (int i = 0; i < 16; i++) EXPECT_EQ(bufs[i].get()[4 * kKiB - 1], i);  // no overlap
  bufs.push_back(a.Allocate(4 * kKiB));  // the 17th takes a second slab
  EXPECT_EQ(a.Stats().maps, 2u);
  EXPECT_EQ(a.Stats().spare_bytes, 60 * kKiB);
  // 8 KiB: 8 to a slab, a slab of its own.
  ArcBuffer eight = a.Allocate(8 * kKiB);
  EXPECT_EQ(a.Stats().maps, 3u);
  // Fewer than 8 to a slab, or not a power of two: the heap.
  ArcBuffer sixteen = a.Allocate(16 * kKiB);
  ArcBuffer odd = a.Allocate(5000);
  std::memset(sixteen.get(), 1, sixteen.bytes());
  std::memset(odd.get(), 1, odd.bytes());
  EXPECT_EQ(a.Stats().maps, 3u);
  EXPECT_EQ(a.Stats().mapped_bytes, 192 * kKiB);
}

// With the filler running, the allocation that starts a slab asks for the
// next one, and the allocation that ends it takes that one: no slab mapped
// (and populated) on the allocating thread but the very first.
TEST(BufferAllocatorTest, TheFillerMapsTheNextSlabAhead) {
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = kMiB, .slab_bytes = 64 * kKiB});
  a.StartFiller();
  std::vector<ArcBuffer> bufs;
  bufs.push_back(a.Allocate(4 * kKiB));
  ASSERT_TRUE(WaitForMaps(a, 2)) << "the filler mapped no slab ahead";
  a.StopFiller();
  EXPECT_EQ(a.Stats().inline_slabs, 1u);
  EXPECT_EQ(a.Stats().maps, 2u);
  EXPECT_EQ(a.Stats().spare_bytes, 124 * kKiB);  // the first's rest and the ready one
  EXPECT_EQ(a.Stats().mapped_bytes, 128 * kKiB);
  for (int i = 0; i < 16; i++) bufs.push_back(a.Allocate(4 * kKiB));
  EXPECT_EQ(a.Stats().inline_slabs, 1u);  // the 17th took the ready slab
  EXPECT_EQ(a.Stats().maps, 2u);
  EXPECT_EQ(a.Stats().spare_bytes, 60 * kKiB);
  for (int i = 0; i < 15; i++) bufs.push_back(a.Allocate(4 * kKiB));
  bufs.push_back(a.Allocate(4 * kKiB));  // no filler now: mapped inline
  EXPECT_EQ(a.Stats().inline_slabs, 2u);
  EXPECT_EQ(a.Stats().maps, 3u);
  for (const ArcBuffer& b : bufs) std::memset(b.get(), 7, b.bytes());
}

// A txg sync frees a txg's 4 KiB records at once: they are kept for the
// next txg's copies (up to the bound); one beyond it gives its page back
// and keeps its address for a later allocation.
TEST(BufferAllocatorTest, FreedSlabPiecesAreReusedUpToTheCacheBoundAndGivenBackBeyond) {
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = 8 * kKiB, .slab_bytes = 64 * kKiB});
  std::vector<ArcBuffer> bufs = AllocateWritten(a, 3, 0x5a);
  std::vector<uint8_t*> kept = {bufs[0].get(), bufs[1].get(), bufs[2].get()};
  FreeInOrder(&bufs);  // the first two fit the 8 KiB bound, the third is given back
  EXPECT_EQ(a.Stats().cached_bytes, 8 * kKiB);
  EXPECT_EQ(a.Stats().unmaps, 1u);
  EXPECT_EQ(a.Stats().mapped_bytes, 60 * kKiB);
  for (int i = 0; i < 3; i++) bufs.push_back(a.Allocate(4 * kKiB));
  EXPECT_EQ(a.Stats().cache_hits, 2u);
  EXPECT_EQ(a.Stats().cached_bytes, 0u);
  EXPECT_EQ(a.Stats().maps, 1u);
  EXPECT_EQ(a.Stats().mapped_bytes, 64 * kKiB);
  EXPECT_EQ(bufs[0].get(), kept[1]);  // the cache is a stack
  EXPECT_EQ(bufs[1].get(), kept[0]);
  EXPECT_EQ(bufs[2].get(), kept[2]);  // the given-back piece, before the slab's spares
  // Its page went back to the system: it reads as zeros again.
  EXPECT_TRUE(
      std::all_of(bufs[2].get(), bufs[2].get() + 4 * kKiB, [](uint8_t b) { return b == 0; }));
  EXPECT_EQ(bufs[0].get()[0], 0x5a);  // a cached one kept its bytes
}

// When the ARC's room shrinks, Trim gives cached pieces' pages back; the
// next allocations reuse those pieces (zero-filled again) before any new
// slab.
TEST(BufferAllocatorTest, TrimGivesSlabPiecesPagesBackAndTheyAreReusedFirst) {
  uint64_t room = 64 * kKiB;
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = 0, .slab_bytes = 64 * kKiB});
  a.AttachRoom([&room] { return room; });
  std::vector<ArcBuffer> bufs = AllocateWritten(a, 12, 0x5a);
  FreeInOrder(&bufs);
  EXPECT_EQ(a.Stats().cached_bytes, 48 * kKiB);
  room = 16 * kKiB;
  a.Trim();
  EXPECT_EQ(a.Stats().cached_bytes, 16 * kKiB);
  EXPECT_EQ(a.Stats().unmaps, 8u);
  EXPECT_EQ(a.Stats().mapped_bytes, 32 * kKiB);
  for (int i = 0; i < 12; i++) bufs.push_back(a.Allocate(4 * kKiB));
  EXPECT_EQ(a.Stats().cache_hits, 4u);
  EXPECT_EQ(a.Stats().maps, 1u);
  EXPECT_EQ(a.Stats().mapped_bytes, 64 * kKiB);
  EXPECT_EQ(a.Stats().spare_bytes, 16 * kKiB);  // untouched: the given-back pieces came first
  const auto zeroed = std::count_if(bufs.begin(), bufs.end(), [](const ArcBuffer& b) {
    return std::all_of(b.get(), b.get() + b.bytes(), [](uint8_t x) { return x == 0; });
  });
  EXPECT_EQ(zeroed, 8);
  a.AttachRoom({});
}

// Destroyed with pieces cached, given back, spare and a ready slab: the
// destructor's own check (nothing left mapped but the slabs) must hold.
TEST(BufferAllocatorTest, DestroyedWithPiecesInEveryStateItAccountsForAllOfThem) {
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = 8 * kKiB, .slab_bytes = 64 * kKiB});
  a.StartFiller();
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 4; i++) bufs.push_back(a.Allocate(4 * kKiB));
  ASSERT_TRUE(WaitForMaps(a, 2)) << "the filler mapped no slab ahead";
  FreeInOrder(&bufs);  // two cached, two given back
  EXPECT_EQ(a.Stats().cached_bytes, 8 * kKiB);
  EXPECT_EQ(a.Stats().unmaps, 2u);
  EXPECT_EQ(a.Stats().spare_bytes, 112 * kKiB);
  EXPECT_EQ(a.Stats().mapped_bytes, 120 * kKiB);
}

#if defined(__SANITIZE_ADDRESS__)
#define ARC_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARC_TEST_ASAN 1
#endif
#endif
#ifdef ARC_TEST_ASAN
// Under ASan, a slab piece that is not handed out is poisoned: a use after
// free is reported as it would be for new[].
TEST(BufferAllocatorDeathTest, ASanReportsAUseOfAFreedSlabPiece) {
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = kMiB, .slab_bytes = 64 * kKiB});
  ArcBuffer b = a.Allocate(4 * kKiB);
  volatile uint8_t* stale = b.get();
  b.Reset();  // cached, poisoned
  EXPECT_DEATH(stale[0] = 1, "use-after-poison");
}
#endif

// Without slabs, small buffers come from the heap and are cached the same way.
TEST(BufferAllocatorTest, WithoutSlabsFreedHeapBuffersAreReusedUpToTheCacheBound) {
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = 8 * kKiB, .slab_bytes = 0});
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 3; i++) bufs.push_back(a.Allocate(4 * kKiB));
  std::vector<uint8_t*> kept = {bufs[0].get(), bufs[1].get(), bufs[2].get()};
  bufs.clear();  // two fit the 8 KiB bound, one goes back to the heap
  EXPECT_EQ(a.Stats().cached_bytes, 8 * kKiB);
  for (int i = 0; i < 3; i++) bufs.push_back(a.Allocate(4 * kKiB));
  EXPECT_EQ(a.Stats().cache_hits, 2u);
  EXPECT_EQ(a.Stats().cached_bytes, 0u);
  EXPECT_TRUE(std::find(kept.begin(), kept.end(), bufs[0].get()) != kept.end());
  EXPECT_TRUE(std::find(kept.begin(), kept.end(), bufs[1].get()) != kept.end());
  // Another class does not take them; none of it is mapped.
  bufs.clear();
  ArcBuffer other = a.Allocate(8 * kKiB);
  EXPECT_EQ(a.Stats().cache_hits, 2u);
  EXPECT_EQ(a.Stats().maps, 0u);
  EXPECT_EQ(a.Stats().mapped_bytes, 0u);
}

TEST(BufferAllocatorTest, LargeBuffersAreMappedAndFreedOnesReusedUpToTheCacheBound) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = 256 * kKiB});
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 4; i++) {
    bufs.push_back(a.Allocate(128 * kKiB));
    std::memset(bufs.back().get(), i, bufs.back().bytes());  // every byte writable
  }
  EXPECT_EQ(a.Stats().maps, 4u);
  EXPECT_EQ(a.Stats().mapped_bytes, 512 * kKiB);
  bufs.clear();  // two fit in the 256 KiB cache, two are unmapped
  EXPECT_EQ(a.Stats().unmaps, 2u);
  EXPECT_EQ(a.Stats().cached_bytes, 256 * kKiB);
  EXPECT_EQ(a.Stats().mapped_bytes, 256 * kKiB);
  ArcBuffer again = a.Allocate(128 * kKiB);
  EXPECT_EQ(a.Stats().cache_hits, 1u);
  EXPECT_EQ(a.Stats().maps, 4u);
  EXPECT_EQ(a.Stats().cached_bytes, 128 * kKiB);
  // Another size class does not take the cached 128 KiB buffer.
  ArcBuffer big = a.Allocate(256 * kKiB);
  EXPECT_EQ(a.Stats().maps, 5u);
  // Sizes that are not a power of two are mapped (page-rounded) and never cached.
  { ArcBuffer odd = a.Allocate(100 * kKiB + 1); }
  EXPECT_EQ(a.Stats().maps, 6u);
  EXPECT_EQ(a.Stats().unmaps, 3u);
}

TEST(BufferAllocatorTest, TheOwnersRoomWidensTheCacheAndTrimFollowsItDown) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = 128 * kKiB});
  uint64_t room = kMiB;
  a.AttachRoom([&room] { return room; });
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 10; i++) bufs.push_back(a.Allocate(128 * kKiB));
  bufs.clear();  // eight fit the 1 MiB room, two are unmapped
  EXPECT_EQ(a.Stats().cached_bytes, kMiB);
  EXPECT_EQ(a.Stats().unmaps, 2u);
  // A txg's worth of allocations comes back without a system call.
  for (int i = 0; i < 8; i++) bufs.push_back(a.Allocate(128 * kKiB));
  EXPECT_EQ(a.Stats().cache_hits, 8u);
  EXPECT_EQ(a.Stats().maps, 10u);
  bufs.clear();
  room = 256 * kKiB;  // the owner grew, or its target fell
  a.Trim();
  EXPECT_EQ(a.Stats().cached_bytes, 256 * kKiB);
  EXPECT_EQ(a.Stats().mapped_bytes, 256 * kKiB);
  room = 0;  // never below cache_bytes
  a.Trim();
  EXPECT_EQ(a.Stats().cached_bytes, 128 * kKiB);
  a.AttachRoom({});
  a.Trim();
  EXPECT_EQ(a.Stats().cached_bytes, 128 * kKiB);
}

// A txg of more than 1 GiB frees more than 1 GiB at once: all of it stays
// for the next txg's copies while the room allows. (Populated, never
// touched here: cheap to map.)
TEST(BufferAllocatorTest, TheWholeRoomIsKeptBeyondOneGiB) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = 0});
  a.AttachRoom([] { return 2 * kGiB; });
  constexpr int kBuffers = 20;  // 1.25 GiB
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < kBuffers; i++) bufs.push_back(a.Allocate(64 * kMiB));
  bufs.clear();
  EXPECT_EQ(a.Stats().cached_bytes, kBuffers * 64 * kMiB);
  EXPECT_EQ(a.Stats().unmaps, 0u);
  for (int i = 0; i < kBuffers; i++) bufs.push_back(a.Allocate(64 * kMiB));
  EXPECT_EQ(a.Stats().cache_hits, static_cast<uint64_t>(kBuffers));
  EXPECT_EQ(a.Stats().maps, static_cast<uint64_t>(kBuffers));
}

// The reserve: written once by the filler, then cut into mapped buffers
// and slabs with no mapping of their own; what they free goes to the cache.
TEST(BufferAllocatorTest, ThePretouchedReserveServesBuffersAndSlabsWithoutAMapping) {
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = 0, .slab_bytes = 256 * kKiB, .pretouch_bytes = 8 * kMiB});
  a.AttachRoom([] { return 64 * kMiB; });
  a.StartFiller();
  a.WaitReserveFilled();
  EXPECT_EQ(a.Stats().reserve_bytes, 8 * kMiB);
  EXPECT_EQ(a.Stats().pretouched_bytes, 8 * kMiB);
  EXPECT_EQ(a.Stats().mapped_bytes, 8 * kMiB);
  a.StopFiller();  // slabs are then mapped inline: from the reserve
  const uint64_t maps = a.Stats().maps;  // the reserve's chunk
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 4; i++) bufs.push_back(a.Allocate(128 * kKiB));
  bufs.push_back(a.Allocate(4 * kKiB));  // its class's first slab
  for (ArcBuffer& b : bufs) std::memset(b.get(), 0xab, b.bytes());
  EXPECT_EQ(a.Stats().reserve_hits, 5u);
  EXPECT_EQ(a.Stats().maps, maps);
  EXPECT_EQ(a.Stats().reserve_bytes, 8 * kMiB - 4 * 128 * kKiB - 256 * kKiB);
  EXPECT_EQ(a.Stats().mapped_bytes, 8 * kMiB);  // nothing mapped beyond the reserve
  bufs.clear();
  EXPECT_EQ(a.Stats().unmaps, 0u);
  EXPECT_EQ(a.Stats().cached_bytes, 4 * 128 * kKiB + 4 * kKiB);
  a.AttachRoom({});
}

// Never above the room (less what the cache holds), and given back when
// the room shrinks.
TEST(BufferAllocatorTest, TheReserveFollowsTheRoom) {
  uint64_t room = 2 * kMiB + 100 * kKiB;
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = 0, .pretouch_bytes = 8 * kMiB});
  a.AttachRoom([&room] { return room; });
  a.StartFiller();
  a.WaitReserveFilled();
  a.StopFiller();  // the room is read by the filler; changed below without it
  EXPECT_EQ(a.Stats().reserve_bytes, 2 * kMiB + 100 * kKiB);
  room = 0;
  a.Trim();
  EXPECT_EQ(a.Stats().reserve_bytes, 0u);
  EXPECT_EQ(a.Stats().mapped_bytes, 0u);
  a.AttachRoom({});
}

// A request larger than the oldest chunk's tail unmaps that tail and takes
// the next chunk; one larger than the whole reserve maps its own and leaves
// the reserve to smaller ones. (72 MiB: a chunk of 64 MiB and one of 8.)
TEST(BufferAllocatorTest, AChunksTailTooSmallIsGivenBack) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = 0, .pretouch_bytes = 72 * kMiB});
  a.AttachRoom([] { return 128 * kMiB; });
  a.StartFiller();
  a.WaitReserveFilled();
  a.StopFiller();
  const uint64_t maps = a.Stats().maps;
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 22; i++) bufs.push_back(a.Allocate(3 * kMiB));  // not a cached size
  EXPECT_EQ(a.Stats().reserve_hits, 22u);
  EXPECT_EQ(a.Stats().unmaps, 1u);  // the first chunk's last 1 MiB
  EXPECT_EQ(a.Stats().reserve_bytes, 5 * kMiB);
  bufs.push_back(a.Allocate(6 * kMiB));
  EXPECT_EQ(a.Stats().reserve_hits, 22u);
  EXPECT_EQ(a.Stats().maps, maps + 1);
  EXPECT_EQ(a.Stats().reserve_bytes, 5 * kMiB);
  EXPECT_EQ(a.Stats().mapped_bytes, (66 + 6 + 5) * kMiB);
  bufs.clear();
  EXPECT_EQ(a.Stats().mapped_bytes, 5 * kMiB);
  a.AttachRoom({});
}

// Waits until `done(stats)` holds; false after 10 s (the filler never got
// there).
template <typename Done>
bool WaitForStats(const BufferAllocator& a, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done(a.Stats())) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// A growing ARC: its first new buffer is mapped by the writer and asks the
// filler for grow_ahead_bytes of populated memory, which the next buffers are
// cut from; below half of it the filler is asked again; never beyond the
// room.
TEST(BufferAllocatorTest, GrowingAheadKeepsMemoryReadyWithinTheRoom) {
  std::atomic<uint64_t> room_bytes{64 * kMiB};
  BufferAllocator a(BufferAllocatorOptions{
      .map_min_bytes = 64 * kKiB, .cache_bytes = 0, .slab_bytes = 0, .grow_ahead_bytes = 8 * kMiB});
  a.AttachRoom([&room_bytes] { return room_bytes.load(); });
  a.StartFiller();
  std::vector<ArcBuffer> bufs;
  bufs.push_back(a.Allocate(128 * kKiB));
  EXPECT_EQ(a.Stats().reserve_hits, 0u);
  ASSERT_TRUE(WaitForStats(a, [](const BufferAllocatorStats& s) { return s.reserve_bytes == 8 * kMiB; }))
      << "reserve " << a.Stats().reserve_bytes;
  EXPECT_EQ(a.Stats().pretouched_bytes, 8 * kMiB);
  const uint64_t maps = a.Stats().maps;
  // Half of it: no new mapping, nothing asked yet.
  for (int i = 0; i < 32; i++) bufs.push_back(a.Allocate(128 * kKiB));
  for (ArcBuffer& b : bufs) std::memset(b.get(), 0x3c, b.bytes());
  EXPECT_EQ(a.Stats().reserve_hits, 32u);
  EXPECT_EQ(a.Stats().maps, maps);
  EXPECT_EQ(a.Stats().reserve_bytes, 4 * kMiB);
  // One more takes it below half: filled to 8 MiB again.
  bufs.push_back(a.Allocate(128 * kKiB));
  ASSERT_TRUE(WaitForStats(a, [](const BufferAllocatorStats& s) { return s.reserve_bytes == 8 * kMiB; }))
      << "reserve " << a.Stats().reserve_bytes;
  EXPECT_EQ(a.Stats().pretouched_bytes, 12 * kMiB + 128 * kKiB);
  // The ARC near its target: the room bounds the reserve, and Trim gives
  // back whole chunks, newest first, until it fits.
  a.StopFiller();
  room_bytes = 4 * kMiB;
  a.Trim();
  EXPECT_EQ(a.Stats().reserve_bytes, 4 * kMiB - 128 * kKiB);
  room_bytes = 0;
  a.Trim();
  EXPECT_EQ(a.Stats().reserve_bytes, 0u);
  const uint64_t in_use = 34 * 128 * kKiB;
  EXPECT_EQ(a.Stats().mapped_bytes, in_use);
  bufs.clear();
  EXPECT_EQ(a.Stats().mapped_bytes, 0u);
  a.AttachRoom({});
}

TEST(BufferAllocatorTest, NoMappingMeansTheHeapForEverySize) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 0, .cache_bytes = 0});
  ArcBuffer b = a.Allocate(kMiB);
  std::memset(b.get(), 1, b.bytes());
  EXPECT_EQ(a.Stats().maps, 0u);
}

TEST(BufferAllocatorTest, OptionsNameTheBadField) {
  Status s = BufferAllocatorOptions{.map_min_bytes = 2 * kGiB}.Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("buffers.map_min_bytes"), std::string::npos) << s.ToString();
  s = BufferAllocatorOptions{.pretouch_bytes = 65 * kGiB}.Validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("pretouch_bytes"), std::string::npos) << s.ToString();
  s = BufferAllocatorOptions{.grow_ahead_bytes = 2 * kGiB}.Validate();
  EXPECT_NE(s.message().find("buffers.grow_ahead_bytes"), std::string::npos) << s.ToString();
  s = BufferAllocatorOptions{.cache_bytes = 2 * kGiB}.Validate();
  EXPECT_NE(s.message().find("buffers.cache_bytes"), std::string::npos) << s.ToString();
  for (uint64_t slab : {96 * kKiB, 32 * kKiB, 128 * kMiB}) {
    s = BufferAllocatorOptions{.slab_bytes = slab}.Validate();
    EXPECT_NE(s.message().find("buffers.slab_bytes"), std::string::npos) << s.ToString();
  }
  EXPECT_TRUE(BufferAllocatorOptions{.slab_bytes = 0}.Validate().ok());
  EXPECT_TRUE(BufferAllocatorOptions{}.Validate().ok());
}

}  // namespace
}  // namespace arcstore::arc
