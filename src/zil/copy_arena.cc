// See copy_arena.h for what the arena is and why.
#include "zil/copy_arena.h"

#include <cstring>
#include <memory>

#include "base/check.h"

namespace arcstore::zil {

CopyArena::Ref& CopyArena::Ref::operator=(Ref&& o) noexcept {
  if (this != &o) {
    Reset();
    arena_ = o.arena_;
    chunk_ = o.chunk_;
    data_ = o.data_;
    length_ = o.length_;
    o.arena_ = nullptr;
    o.chunk_ = nullptr;
    o.data_ = nullptr;
    o.length_ = 0;
  }
  return *this;
}

void CopyArena::Ref::Reset() {
  if (chunk_ != nullptr) arena_->Release(chunk_);
  arena_ = nullptr;
  chunk_ = nullptr;
  data_ = nullptr;
  length_ = 0;
}

CopyArena::CopyArena(const Options& options) : options_(options) {
  ARC_CHECK(options_.max_chunks >= 1 && options_.retain_chunks <= options_.max_chunks);
}

CopyArena::~CopyArena() {
  MutexLock l(&mu_);
  if (current_ != nullptr) {
    // Every Ref is gone: the current chunk's only count is its own.
    ARC_CHECK(current_->refs.load(std::memory_order_acquire) == 1);
    delete current_;
  }
  for (Chunk* c : kept_) delete c;
}

CopyArena::Ref CopyArena::Copy(std::span<const uint8_t> data, bool* made) {
  ARC_CHECK(!data.empty() && data.size() <= kChunkBytes);
  if (made != nullptr) *made = false;
  Ref ref;
  {
    MutexLock l(&mu_);
    if (current_ == nullptr || kChunkBytes - current_->used_bytes < data.size()) {
      if (!NextChunk(made)) return ref;
    }
    ref.arena_ = this;
    ref.chunk_ = current_;
    ref.data_ = current_->bytes.get() + current_->used_bytes;
    ref.length_ = data.size();
    current_->used_bytes += data.size();
    current_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  // The bytes are this Ref's alone: copied without the lock.
  std::memcpy(const_cast<uint8_t*>(ref.data_), data.data(), data.size());
  return ref;
}

uint64_t CopyArena::Prefill(uint32_t chunks) {
  uint64_t made_bytes = 0;
  for (uint32_t i = 0; i < chunks; i++) {
    {
      MutexLock l(&mu_);
      if (kept_.size() >= options_.retain_chunks || chunks_ >= options_.max_chunks) break;
      chunks_++;  // counted now, so that Copy meanwhile stays within max_chunks
    }
    auto c = std::make_unique<Chunk>();
    c->bytes.reset(new uint8_t[kChunkBytes]);
    std::memset(c->bytes.get(), 0, kChunkBytes);  // each page written once, outside the lock
    made_bytes += kChunkBytes;
    MutexLock l(&mu_);
    Retire(c.release());  // kept, unless chunks Copy let go of filled the kept list meanwhile
  }
  return made_bytes;
}

bool CopyArena::NextChunk(bool* made) {
  Chunk* next = nullptr;
  if (!kept_.empty()) {
    next = kept_.back();
    kept_.pop_back();
  } else if (chunks_ < options_.max_chunks) {
    next = new Chunk;
    next->bytes.reset(new uint8_t[kChunkBytes]);
    chunks_++;
    chunks_made_.fetch_add(1, std::memory_order_relaxed);
    if (made != nullptr) *made = true;
  } else {
    return false;
  }
  next->used_bytes = 0;
  next->refs.store(1, std::memory_order_relaxed);
  Chunk* sealed = current_;
  current_ = next;
  if (sealed != nullptr) ReleaseLocked(sealed);
  return true;
}

void CopyArena::Release(Chunk* c) {
  // Only the last count takes the lock: a chunk's copies are let go of in
  // bulk, and all but one of them cost an atomic decrement.
  if (c->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  MutexLock l(&mu_);
  Retire(c);
}

void CopyArena::ReleaseLocked(Chunk* c) {
  if (c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) Retire(c);
}

void CopyArena::Retire(Chunk* c) {
  if (kept_.size() < options_.retain_chunks) {
    kept_.push_back(c);
  } else {
    chunks_--;
    delete c;
  }
}

uint32_t CopyArena::chunks() {
  MutexLock l(&mu_);
  return chunks_;
}

uint32_t CopyArena::kept_chunks() {
  MutexLock l(&mu_);
  return static_cast<uint32_t>(kept_.size());
}

}  // namespace arcstore::zil
