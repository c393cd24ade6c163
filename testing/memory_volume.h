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

  void Submit(VolumeRequest req, Completion done) override { done(Execute(req)); }

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
  Status Execute(const VolumeRequest& req) {
    Status s = CheckRange(VolumeOpName(req.op), req.offset, req.length, info_.size_bytes);
    if (!s.ok()) return s;
    switch (req.op) {
      case VolumeOp::kRead: ReadNow(req.offset, req.out); break;
      case VolumeOp::kWrite: return WriteNow(req);
      case VolumeOp::kFlush: {
        MutexLock l(&mu_);
        flushes_++;
        break;
      }
      case VolumeOp::kTrim: Zero(req.offset, req.length, /*keep_allocated=*/false); break;
      case VolumeOp::kWriteZeroes:
        Zero(req.offset, req.length, (req.flags & kZeroNoHole) != 0);
        break;
      case VolumeOp::kCache: break;
      case VolumeOp::kBlockStatus: Describe(req.offset, req.length, req.extents); break;
    }
    return Status::Ok();
  }

  void ReadNow(uint64_t offset, std::span<uint8_t> out) {
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

  Status WriteNow(const VolumeRequest& req) {
    const std::span<const uint8_t> data = req.bytes();
    if (data.size() != req.length) return Status::InvalidArgument("a prepared write of pieces");
    MutexLock l(&mu_);
    for (const Piece& p : Pieces(req.offset, data.size())) {
      std::memcpy(Record(p.record).data() + p.in_record, data.data() + p.pos, p.n);
    }
    writes_++;
    if (req.flags & kFua) fua_writes_++;
    return Status::Ok();
  }

  void Describe(uint64_t offset, uint64_t length, std::vector<Extent>* extents) {
    extents->clear();
    MutexLock l(&mu_);
    for (const Piece& p : Pieces(offset, length)) {
      bool hole = records_.find(p.record) == records_.end();
      if (!extents->empty() && extents->back().hole == hole) {
        extents->back().length += p.n;
      } else {
        extents->push_back(Extent{offset + p.pos, p.n, hole, hole});
      }
    }
  }

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
