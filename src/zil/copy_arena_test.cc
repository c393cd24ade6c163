// The copy arena: copies keep their bytes; a chunk is reused once its
// copies are gone; the chunk limit refuses a copy instead of growing; and
// copies made and let go of on several threads at once keep their bytes.
#include "zil/copy_arena.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace arcstore::zil {
namespace {

std::vector<uint8_t> Bytes(size_t n, uint8_t fill) { return std::vector<uint8_t>(n, fill); }

bool Holds(const CopyArena::Ref& r, size_t n, uint8_t fill) {
  if (!r || r.bytes().size() != n) return false;
  for (uint8_t b : r.bytes()) {
    if (b != fill) return false;
  }
  return true;
}

TEST(CopyArenaTest, CopiesAreCutOneAfterAnotherFromAChunk) {
  CopyArena arena(CopyArena::Options{});
  std::vector<CopyArena::Ref> refs;
  for (int i = 0; i < 200; i++) refs.push_back(arena.Copy(Bytes(4096, static_cast<uint8_t>(i))));
  EXPECT_EQ(arena.chunks(), 1u) << "200 copies of 4 KiB fit one 1 MiB chunk";
  for (int i = 0; i < 200; i++) EXPECT_TRUE(Holds(refs[i], 4096, static_cast<uint8_t>(i))) << i;
  EXPECT_EQ(refs[1].bytes().data(), refs[0].bytes().data() + 4096);
  // A copy that does not fit what is left seals the chunk for a new one.
  CopyArena::Ref big = arena.Copy(Bytes(CopyArena::kChunkBytes, 9));
  EXPECT_TRUE(Holds(big, CopyArena::kChunkBytes, 9));
  EXPECT_EQ(arena.chunks(), 2u);
  EXPECT_TRUE(Holds(refs[199], 4096, 199)) << "a sealed chunk keeps its copies";
}

TEST(CopyArenaTest, AChunkWhoseCopiesAreGoneIsReused) {
  CopyArena arena(CopyArena::Options{.max_chunks = 8, .retain_chunks = 4});
  for (int round = 0; round < 10; round++) {
    std::vector<CopyArena::Ref> refs;
    // Three chunks' worth: the first two are sealed with copies in them.
    for (int i = 0; i < 3 * 256; i++) refs.push_back(arena.Copy(Bytes(4096, 1)));
    EXPECT_EQ(arena.chunks(), 3u) << "round " << round;
  }
  EXPECT_EQ(arena.chunks_made(), 3u) << "later rounds cut from kept chunks";
  EXPECT_EQ(arena.kept_chunks(), 2u) << "the current chunk is not kept";
}

TEST(CopyArenaTest, KeptChunksAreBoundedAndTheRestFreed) {
  CopyArena arena(CopyArena::Options{.max_chunks = 8, .retain_chunks = 2});
  {
    std::vector<CopyArena::Ref> refs;
    for (int i = 0; i < 6; i++) refs.push_back(arena.Copy(Bytes(CopyArena::kChunkBytes, 1)));
    EXPECT_EQ(arena.chunks(), 6u);
  }
  EXPECT_EQ(arena.kept_chunks(), 2u);
  EXPECT_EQ(arena.chunks(), 3u) << "two kept and the current one";
}

TEST(CopyArenaTest, PrefilledChunksServeCopiesWithoutMakingOne) {
  CopyArena arena(CopyArena::Options{.max_chunks = 8, .retain_chunks = 4});
  EXPECT_EQ(arena.Prefill(6), 4 * CopyArena::kChunkBytes) << "no more than retain_chunks kept";
  EXPECT_EQ(arena.chunks(), 4u);
  EXPECT_EQ(arena.kept_chunks(), 4u);
  std::vector<CopyArena::Ref> refs;
  bool made = true;
  for (int i = 0; i < 4 * 256; i++) {
    refs.push_back(arena.Copy(Bytes(4096, static_cast<uint8_t>(i)), &made));
    ASSERT_FALSE(made) << "copy " << i << " made a chunk with four prefilled";
  }
  EXPECT_EQ(arena.chunks_made(), 0u);
  EXPECT_EQ(arena.chunks(), 4u);
  for (int i = 0; i < 4 * 256; i++) EXPECT_TRUE(Holds(refs[i], 4096, static_cast<uint8_t>(i))) << i;
  refs.push_back(arena.Copy(Bytes(16, 7), &made));
  EXPECT_TRUE(made) << "the fifth chunk is made";
  EXPECT_EQ(arena.chunks_made(), 1u);
  EXPECT_EQ(arena.Prefill(8), 3 * CopyArena::kChunkBytes) << "no more than max_chunks in all";
  EXPECT_EQ(arena.chunks(), 8u);
  refs.clear();
  EXPECT_EQ(arena.kept_chunks(), 4u) << "sealed chunks kept up to retain_chunks";
  EXPECT_EQ(arena.chunks(), 5u) << "four kept and the current one; the rest freed";
}

TEST(CopyArenaTest, AtTheChunkLimitACopyIsRefusedUntilAChunkIsFree) {
  CopyArena arena(CopyArena::Options{.max_chunks = 2, .retain_chunks = 1});
  CopyArena::Ref a = arena.Copy(Bytes(CopyArena::kChunkBytes, 1));
  CopyArena::Ref b = arena.Copy(Bytes(CopyArena::kChunkBytes, 2));
  CopyArena::Ref refused = arena.Copy(Bytes(16, 3));
  EXPECT_FALSE(refused);
  EXPECT_TRUE(refused.bytes().empty());
  EXPECT_EQ(arena.chunks(), 2u);
  a.Reset();  // a's chunk is sealed: kept once its copy goes
  CopyArena::Ref c = arena.Copy(Bytes(16, 3));
  EXPECT_TRUE(Holds(c, 16, 3));
  EXPECT_TRUE(Holds(b, CopyArena::kChunkBytes, 2));
  EXPECT_EQ(arena.chunks_made(), 2u);
}

TEST(CopyArenaTest, MovedRefsLetGoOnce) {
  CopyArena arena(CopyArena::Options{.max_chunks = 2, .retain_chunks = 2});
  CopyArena::Ref a = arena.Copy(Bytes(CopyArena::kChunkBytes, 1));
  CopyArena::Ref moved = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): a moved Ref is empty
  CopyArena::Ref other = arena.Copy(Bytes(CopyArena::kChunkBytes, 2));
  moved = std::move(other);  // lets go of the first chunk: it is kept
  EXPECT_EQ(arena.kept_chunks(), 1u);
  EXPECT_TRUE(Holds(moved, CopyArena::kChunkBytes, 2));
}

TEST(CopyArenaTest, ThreadsCopyingAndLettingGoKeepTheirBytes) {
  CopyArena arena(CopyArena::Options{.max_chunks = 64, .retain_chunks = 8});
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      std::vector<CopyArena::Ref> refs;
      for (int i = 0; i < 4000; i++) {
        const uint8_t fill = static_cast<uint8_t>(t * 50 + i % 50);
        refs.push_back(arena.Copy(Bytes(512 + (i % 7) * 1024, fill)));
        if (refs.size() == 64) {
          for (size_t k = 0; k < refs.size(); k++) {
            const int at = i - 63 + static_cast<int>(k);
            if (!Holds(refs[k], 512 + (at % 7) * 1024, static_cast<uint8_t>(t * 50 + at % 50))) {
              wrong++;
            }
          }
          refs.clear();
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(arena.kept_chunks(), 8u);
}

}  // namespace
}  // namespace arcstore::zil
