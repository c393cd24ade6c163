// CallerThreadVolume: a Volume view that runs every Submit* on the calling
// thread, through the inner volume's synchronous call, and calls `done`
// before returning.
//
// The NBD connection uses it for a request it runs on its reader thread (a
// request alone on its connection, or one the volume says will not wait):
// that saves the handoff to an engine thread and back, and the reply leaves
// in the reader's next write. See server.cc, "Requests run inline".
//
// Thread-safety: as the inner volume's synchronous calls. Borrows `inner`,
// which must outlive it.
#pragma once

#include <utility>
#include <vector>

#include "arcstore/volume.h"

namespace arcstore::nbd {

class CallerThreadVolume final : public Volume {
 public:
  explicit CallerThreadVolume(Volume* inner) : inner_(inner) {}

  VolumeInfo info() const override { return inner_->info(); }
  bool MayWait(VolumeOp op, uint64_t offset, uint64_t length) override {
    return inner_->MayWait(op, offset, length);
  }

  void SubmitRead(uint64_t offset, std::span<uint8_t> out, Completion done) override {
    done(inner_->Read(offset, out));
  }
  void SubmitWrite(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags,
                   Completion done) override {
    done(inner_->Write(offset, data, write_flags));
  }
  std::unique_ptr<PreparedWrite> PrepareWrite(uint64_t offset, uint64_t length) override {
    return inner_->PrepareWrite(offset, length);
  }
  void SubmitPrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags,
                      Completion done) override {
    done(inner_->WritePrepared(std::move(prepared), write_flags));
  }
  void SubmitFlush(Completion done) override { done(inner_->Flush()); }
  void SubmitTrim(uint64_t offset, uint64_t length, Completion done) override {
    done(inner_->Trim(offset, length));
  }
  void SubmitWriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags,
                         Completion done) override {
    done(inner_->WriteZeroes(offset, length, zero_flags));
  }
  void SubmitCache(uint64_t offset, uint64_t length, Completion done) override {
    done(inner_->Cache(offset, length));
  }
  void SubmitBlockStatus(uint64_t offset, uint64_t length, ExtentsCompletion done) override {
    std::vector<Extent> extents;
    Status s = inner_->BlockStatus(offset, length, &extents);
    done(std::move(s), std::move(extents));
  }

 private:
  Volume* const inner_;
};

}  // namespace arcstore::nbd
