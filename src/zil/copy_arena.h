// CopyArena: where the intent log keeps the bytes of the changes it copies
// (IntentLog::Append) until they are in a log block or their txg commits.
//
// Why not a heap block per copy: a writer of 4 KiB random writes makes a
// copy per write, hundreds of thousands a second, and the log lets go of
// them in bulk: a commit's batch, a txg commit, or all at once when the
// copies pass the log's cap (max_pending_bytes, 64 MiB: 16,384 copies).
// With a heap block each, that bulk is as many frees in a row, under the
// log's lock and, at the cap, on the writer's path with its volume's lock
// held (milliseconds with every writer stopped); and the heap then gives
// its top back to the kernel, so the next copies fault their pages in
// again. So copies are cut one after another from chunks of kChunkBytes,
// and a chunk whose copies are all gone is kept for the next ones:
//
//   Copy(bytes) --fits the current chunk---> cut at its end
//               --else--> the current chunk is sealed; a kept chunk (or a
//                         new one, while fewer than max_chunks exist)
//                         becomes current and the copy is cut from it
//               --max_chunks exist, none kept--> an empty Ref (the log
//                         drops its copies, as at its cap)
//   ~Ref        --the last copy of a sealed chunk--> kept (up to
//                         retain_chunks), else freed
//
// A chunk counts its copies plus one while it is current, so a chunk is
// kept or freed exactly when nothing can cut from it or read it any more.
//
// Prefill makes chunks ahead and writes each page once, kept as if their
// copies were gone: a log that has run a while holds its kept chunks
// already mapped, and on a host where a page's first touch is costly a new
// log would otherwise copy its first burst of changes at the page-fault
// rate (64 MiB of copies, 16,384 faults, before its chunks are reused).
//
// Limits: a copy is 1 byte to kChunkBytes (1 MiB, the largest record);
// at most max_chunks chunks exist at once (live and kept), at most
// retain_chunks of them kept with no copy in them.
//
// Thread-safety: Copy, Ref's release and the accessors from any thread;
// one mutex guards the chunk lists (held for a pointer bump or a list
// push, never for a copy's bytes); a chunk's count is atomic. Refs must
// be gone before the arena is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/thread_annotations.h"

namespace arcstore::zil {

class CopyArena {
 public:
  static constexpr uint64_t kChunkBytes = 1u << 20;

  struct Options {
    uint32_t max_chunks = 80;     // live and kept, at most
    uint32_t retain_chunks = 66;  // kept with no copy in them, at most
  };

 private:
  struct Chunk {
    std::unique_ptr<uint8_t[]> bytes;
    uint64_t used_bytes = 0;           // cut so far (while current; mu_)
    std::atomic<uint32_t> refs{0};     // copies in it, plus one while current
  };

 public:
  // A copy's bytes: move-only; lets go of its place in the chunk when
  // destroyed. Empty (no bytes) when the arena had no room.
  class Ref {
   public:
    Ref() = default;
    Ref(Ref&& o) noexcept { *this = std::move(o); }
    Ref& operator=(Ref&& o) noexcept;
    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    ~Ref() { Reset(); }

    explicit operator bool() const { return chunk_ != nullptr; }
    std::span<const uint8_t> bytes() const { return {data_, length_}; }
    void Reset();

   private:
    friend class CopyArena;
    CopyArena* arena_ = nullptr;
    Chunk* chunk_ = nullptr;
    const uint8_t* data_ = nullptr;
    uint64_t length_ = 0;
  };

  explicit CopyArena(const Options& options);
  ~CopyArena();
  CopyArena(const CopyArena&) = delete;
  CopyArena& operator=(const CopyArena&) = delete;

  // A copy of `data` (1 byte to kChunkBytes), or an empty Ref when
  // max_chunks exist and none has room. `made` (optional): set to whether
  // the copy needed a new chunk (neither kept nor prefilled).
  Ref Copy(std::span<const uint8_t> data, bool* made = nullptr);

  // Makes up to `chunks` new chunks, each page written once, and keeps
  // them (never more than retain_chunks kept or max_chunks in all).
  // Returns the bytes made.
  uint64_t Prefill(uint32_t chunks);
  uint32_t retain_chunks() const { return options_.retain_chunks; }

  // Chunks that exist (live and kept), and those kept with no copy.
  uint32_t chunks();
  uint32_t kept_chunks();
  // New chunks Copy made (not reused, not prefilled) since the arena was made.
  uint64_t chunks_made() const { return chunks_made_.load(std::memory_order_relaxed); }

 private:
  // Drops one count of `c`; the last one keeps or frees it.
  void Release(Chunk* c);
  void ReleaseLocked(Chunk* c) ARC_REQUIRES(mu_);
  // `c` has no count left (not current, no copy): kept or freed.
  void Retire(Chunk* c) ARC_REQUIRES(mu_);
  // A kept chunk or a new one as the current chunk; false when max_chunks
  // exist and none is kept.
  bool NextChunk(bool* made) ARC_REQUIRES(mu_);

  const Options options_;
  Mutex mu_;
  Chunk* current_ ARC_GUARDED_BY(mu_) = nullptr;
  std::vector<Chunk*> kept_ ARC_GUARDED_BY(mu_);
  uint32_t chunks_ ARC_GUARDED_BY(mu_) = 0;
  std::atomic<uint64_t> chunks_made_{0};
};

}  // namespace arcstore::zil
