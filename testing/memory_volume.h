// MemoryVolume: an arcstore::Volume kept in memory, record by record.
//
// A stand-in for an engine volume in tests of code that only needs the
// Volume interface (the NBD server, the bench driver). Unwritten and trimmed
// records are holes and read as zeros; block status reports them. Every
// operation completes inline. Nothing is persisted: Flush only counts.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "arcstore/volume.h"
#include "base/thread_annotations.h"

namespace arcstore::testing {

class MemoryVolume final : public Volume {
 public:
  explicit MemoryVolume(VolumeInfo info) : info_(std::move(info)) {}

  VolumeInfo info() const override { return info_; }
  // Nothing here ever waits (for a disk, a throttle or another thread).
  bool MayWait(VolumeOp /*op*/, uint64_t /*offset*/, uint64_t /*length*/) override {
    return false;
  }

  void SubmitRead(uint64_t offset, std::span<uint8_t> out, Completion done) override {
    Status s = CheckRange("read", offset, out.size(), info_.size_bytes);
    if (s.ok()) {
      MutexLock l(&mu_);
      for (const Piece& p : Pieces(offset, out.size())) {
        auto it = records_.find(p.record);
        if (it == records_.end()) {
          std::memset(out.data() + p.pos, 0, p.n);
        } else {
          std::memcpy(out.data() + p.pos, it->second.data() + p.in_record, p.n);
        }
      }
      reads_++;
    }
    done(std::move(s));
  }

  void SubmitWrite(uint64_t offset, std::span<const uint8_t> data, uint32_t flags,
                   Completion done) override {
    Status s = CheckRange("write", offset, data.size(), info_.size_bytes);
    if (s.ok()) {
      MutexLock l(&mu_);
      for (const Piece& p : Pieces(offset, data.size())) {
        std::memcpy(Record(p.record).data() + p.in_record, data.data() + p.pos, p.n);
      }
      writes_++;
      if (flags & kFua) fua_writes_++;
    }
    done(std::move(s));
  }

  void SubmitFlush(Completion done) override {
    {
      MutexLock l(&mu_);
      flushes_++;
    }
    done(Status::Ok());
  }

  void SubmitTrim(uint64_t offset, uint64_t length, Completion done) override {
    Status s = CheckRange("trim", offset, length, info_.size_bytes);
    if (s.ok()) Zero(offset, length, /*keep_allocated=*/false);
    done(std::move(s));
  }

  void SubmitWriteZeroes(uint64_t offset, uint64_t length, uint32_t flags,
                         Completion done) override {
    Status s = CheckRange("write zeroes", offset, length, info_.size_bytes);
    if (s.ok()) Zero(offset, length, (flags & kZeroNoHole) != 0);
    done(std::move(s));
  }

  void SubmitCache(uint64_t offset, uint64_t length, Completion done) override {
    done(CheckRange("cache", offset, length, info_.size_bytes));
  }

  void SubmitBlockStatus(uint64_t offset, uint64_t length, ExtentsCompletion done) override {
    Status s = CheckRange("block status", offset, length, info_.size_bytes);
    std::vector<Extent> extents;
    if (s.ok()) {
      MutexLock l(&mu_);
      for (const Piece& p : Pieces(offset, length)) {
        bool hole = records_.find(p.record) == records_.end();
        if (!extents.empty() && extents.back().hole == hole) {
          extents.back().length += p.n;
        } else {
          extents.push_back(Extent{offset + p.pos, p.n, hole, hole});
        }
      }
    }
    done(std::move(s), std::move(extents));
  }

  uint64_t flushes() {
    MutexLock l(&mu_);
    return flushes_;
  }
  uint64_t writes() {
    MutexLock l(&mu_);
    return writes_;
  }
  uint64_t fua_writes() {
    MutexLock l(&mu_);
    return fua_writes_;
  }
  size_t allocated_records() {
    MutexLock l(&mu_);
    return records_.size();
  }

 private:
  // One record-sized piece of a request: the record, the offset inside it,
  // the length, and the offset inside the request.
  struct Piece {
    uint64_t record, in_record, n, pos;
  };
  std::vector<Piece> Pieces(uint64_t offset, uint64_t length) const {
    const uint64_t rs = info_.record_size_bytes;
    std::vector<Piece> pieces;
    for (uint64_t pos = 0; pos < length;) {
      uint64_t at = offset + pos;
      uint64_t in_rec = at % rs;
      uint64_t n = std::min(rs - in_rec, length - pos);
      pieces.push_back(Piece{at / rs, in_rec, n, pos});
      pos += n;
    }
    return pieces;
  }

  std::vector<uint8_t>& Record(uint64_t rec) ARC_REQUIRES(mu_) {
    auto& r = records_[rec];
    if (r.empty()) r.assign(info_.record_size_bytes, 0);
    return r;
  }

  void Zero(uint64_t offset, uint64_t length, bool keep_allocated) {
    MutexLock l(&mu_);
    const uint64_t rs = info_.record_size_bytes;
    for (const Piece& p : Pieces(offset, length)) {
      if (p.n == rs && !keep_allocated) {
        records_.erase(p.record);
      } else if (keep_allocated || records_.count(p.record) != 0) {
        std::memset(Record(p.record).data() + p.in_record, 0, p.n);
      }
    }
  }

  const VolumeInfo info_;
  Mutex mu_;
  std::map<uint64_t, std::vector<uint8_t>> records_ ARC_GUARDED_BY(mu_);
  uint64_t reads_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t writes_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t fua_writes_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t flushes_ ARC_GUARDED_BY(mu_) = 0;
};

}  // namespace arcstore::testing
