// The calls of include/arcstore/volume.h that are not the core: the
// VolumeRequest constructors, the named Submit* calls and the synchronous
// calls over Volume::Submit, and the default (one plain buffer) zero-copy
// write.
#include <condition_variable>
#include <mutex>

#include "arcstore/volume.h"

namespace arcstore {
namespace {

// The default PreparedWrite: one heap buffer.
class PlainPreparedWrite final : public PreparedWrite {
 public:
  PlainPreparedWrite(uint64_t offset, uint64_t length)
      : PreparedWrite(offset, length), bytes_(new uint8_t[length]) {
    pieces_.emplace_back(bytes_.get(), length);
  }

 private:
  std::unique_ptr<uint8_t[]> bytes_;
};

// Where a synchronous call waits for its completion. A volume that runs
// the request on the caller's thread has called Set before Submit returns,
// and Wait then returns without sleeping.
class Waiter {
 public:
  void Set(Status s) {
    std::lock_guard<std::mutex> l(mu_);
    status_ = std::move(s);
    done_ = true;
    cv_.notify_one();
  }
  Status Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return done_; });
    return std::move(status_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Status status_;
};

}  // namespace

const char* VolumeOpName(VolumeOp op) {
  switch (op) {
    case VolumeOp::kRead: return "read";
    case VolumeOp::kWrite: return "write";
    case VolumeOp::kTrim: return "trim";
    case VolumeOp::kWriteZeroes: return "write zeroes";
    case VolumeOp::kFlush: return "flush";
    case VolumeOp::kCache: return "cache";
    case VolumeOp::kBlockStatus: return "block status";
  }
  return "unknown operation";
}

VolumeRequest VolumeRequest::Read(uint64_t offset, std::span<uint8_t> out) {
  VolumeRequest r;
  r.op = VolumeOp::kRead;
  r.offset = offset;
  r.length = out.size();
  r.out = out;
  return r;
}

VolumeRequest VolumeRequest::Write(uint64_t offset, std::span<const uint8_t> data,
                                   uint32_t write_flags) {
  VolumeRequest r;
  r.op = VolumeOp::kWrite;
  r.offset = offset;
  r.length = data.size();
  r.data = data;
  r.flags = write_flags;
  return r;
}

VolumeRequest VolumeRequest::Prepared(std::unique_ptr<PreparedWrite> prepared,
                                      uint32_t write_flags) {
  VolumeRequest r;
  r.op = VolumeOp::kWrite;
  r.offset = prepared->offset();
  r.length = prepared->length();
  r.prepared = std::move(prepared);
  r.flags = write_flags;
  return r;
}

VolumeRequest VolumeRequest::Flush() {
  VolumeRequest r;
  r.op = VolumeOp::kFlush;
  return r;
}

namespace {
VolumeRequest RangeRequest(VolumeOp op, uint64_t offset, uint64_t length) {
  VolumeRequest r;
  r.op = op;
  r.offset = offset;
  r.length = length;
  return r;
}
}  // namespace

VolumeRequest VolumeRequest::Trim(uint64_t offset, uint64_t length) {
  return RangeRequest(VolumeOp::kTrim, offset, length);
}

VolumeRequest VolumeRequest::WriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags) {
  VolumeRequest r = RangeRequest(VolumeOp::kWriteZeroes, offset, length);
  r.flags = zero_flags;
  return r;
}

VolumeRequest VolumeRequest::Cache(uint64_t offset, uint64_t length) {
  return RangeRequest(VolumeOp::kCache, offset, length);
}

VolumeRequest VolumeRequest::BlockStatus(uint64_t offset, uint64_t length,
                                         std::vector<Extent>* extents) {
  VolumeRequest r = RangeRequest(VolumeOp::kBlockStatus, offset, length);
  r.extents = extents;
  return r;
}

std::span<const uint8_t> VolumeRequest::bytes() const {
  if (prepared == nullptr) return data;
  if (prepared->pieces().size() == 1) return prepared->pieces()[0];
  return {};
}

std::unique_ptr<PreparedWrite> Volume::PrepareWrite(uint64_t offset, uint64_t length) {
  return std::make_unique<PlainPreparedWrite>(offset, length);
}

Status Volume::SubmitAndWait(VolumeRequest req) {
  req.caller_waits = true;
  Waiter waiter;
  Submit(std::move(req), [&waiter](Status s) { waiter.Set(std::move(s)); });
  return waiter.Wait();
}

void Volume::SubmitRead(uint64_t offset, std::span<uint8_t> out, Completion done) {
  Submit(VolumeRequest::Read(offset, out), std::move(done));
}

void Volume::SubmitWrite(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags,
                         Completion done) {
  Submit(VolumeRequest::Write(offset, data, write_flags), std::move(done));
}

void Volume::SubmitPrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags,
                            Completion done) {
  Submit(VolumeRequest::Prepared(std::move(prepared), write_flags), std::move(done));
}

void Volume::SubmitFlush(Completion done) { Submit(VolumeRequest::Flush(), std::move(done)); }

void Volume::SubmitTrim(uint64_t offset, uint64_t length, Completion done) {
  Submit(VolumeRequest::Trim(offset, length), std::move(done));
}

void Volume::SubmitWriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags,
                               Completion done) {
  Submit(VolumeRequest::WriteZeroes(offset, length, zero_flags), std::move(done));
}

void Volume::SubmitCache(uint64_t offset, uint64_t length, Completion done) {
  Submit(VolumeRequest::Cache(offset, length), std::move(done));
}

void Volume::SubmitBlockStatus(uint64_t offset, uint64_t length, ExtentsCompletion done) {
  // The extents live with the completion until it hands them on.
  auto extents = std::make_shared<std::vector<Extent>>();
  Submit(VolumeRequest::BlockStatus(offset, length, extents.get()),
         [extents, done = std::move(done)](Status s) { done(std::move(s), std::move(*extents)); });
}

Status Volume::Read(uint64_t offset, std::span<uint8_t> out) {
  return SubmitAndWait(VolumeRequest::Read(offset, out));
}

Status Volume::Write(uint64_t offset, std::span<const uint8_t> data, uint32_t write_flags) {
  return SubmitAndWait(VolumeRequest::Write(offset, data, write_flags));
}

Status Volume::WritePrepared(std::unique_ptr<PreparedWrite> prepared, uint32_t write_flags) {
  return SubmitAndWait(VolumeRequest::Prepared(std::move(prepared), write_flags));
}

Status Volume::Flush() { return SubmitAndWait(VolumeRequest::Flush()); }

Status Volume::Trim(uint64_t offset, uint64_t length) {
  return SubmitAndWait(VolumeRequest::Trim(offset, length));
}

Status Volume::WriteZeroes(uint64_t offset, uint64_t length, uint32_t zero_flags) {
  return SubmitAndWait(VolumeRequest::WriteZeroes(offset, length, zero_flags));
}

Status Volume::Cache(uint64_t offset, uint64_t length) {
  return SubmitAndWait(VolumeRequest::Cache(offset, length));
}

Status Volume::BlockStatus(uint64_t offset, uint64_t length, std::vector<Extent>* extents) {
  return SubmitAndWait(VolumeRequest::BlockStatus(offset, length, extents));
}

Status CheckRange(const char* op, uint64_t offset, uint64_t length, uint64_t size_bytes) {
  if (offset > size_bytes || length > size_bytes - offset) {
    return Status::OutOfRange(std::string(op) + " at offset " + std::to_string(offset) +
                              " length " + std::to_string(length) + " is past the end (size " +
                              std::to_string(size_bytes) + ")");
  }
  return Status::Ok();
}

}  // namespace arcstore
