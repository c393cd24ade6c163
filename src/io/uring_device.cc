// The io_uring device. Theory of operation:
//
//   Submit ──CheckRequest──> InFlight{request, iovecs, done_bytes}
//      │ mu_: in_kernel_ < depth ? prep SQE + io_uring_submit : overflow_.push
//      v
//   kernel ──CQE──> completion thread: Reap
//      │ short transfer: advance iovecs, resubmit the remainder
//      │ error/end-of-file: Status naming the request
//      v
//   FillSlotsLocked moves overflow into the ring; done(status) runs outside mu_
//
// Invariants: in_kernel_ <= queue_depth_ == SQ entries, so an SQE is always
// available under mu_; each InFlight is owned by the ring between prep and
// its CQE, by overflow_ while queued, and freed after `done` runs; a
// user_data of 0 is the stop NOP sent by the destructor.
// Locking: mu_ guards the submission side (liburing's SQ is not
// thread-safe) and the counters; only the completion thread touches the CQ;
// no lock is held while calling `done`.
// Limits: queue_depth (1..4096); requests as CheckRequest allows.
#include "io/uring_device.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/thread_name.h"

namespace arcstore::io {

struct UringDevice::InFlight {
  IoRequest request;
  std::vector<iovec> vecs;  // what is left to transfer
  size_t first = 0;         // first vec with bytes left
  uint64_t done_bytes = 0;
  Status status;
};

Status UringDeviceOptions::Validate() const {
  ARC_RETURN_IF_ERROR(file.Validate());
  if (queue_depth == 0 || queue_depth > 4096) {
    return Status::InvalidArgument("queue_depth " + std::to_string(queue_depth) +
                                   ": must be from 1 to 4096");
  }
  return Status::Ok();
}

Result<std::unique_ptr<UringDevice>> UringDevice::Open(const std::string& path,
                                                       const UringDeviceOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  ARC_ASSIGN_OR_RETURN(OpenedFile f, OpenBackingFile(path, options.file));
  struct io_uring ring;
  int err = io_uring_queue_init(options.queue_depth, &ring, 0);
  if (err < 0) {
    ::close(f.fd);
    return Status::NotSupported("device " + path +
                                ": io_uring unavailable: " + std::strerror(-err));
  }
  std::unique_ptr<UringDevice> d(new UringDevice(path, f, options.queue_depth, ring));
  d->completer_ = std::thread([dev = d.get()] {
    NameThisThread("uring_done");
    dev->CompletionLoop();
  });
  return d;
}

UringDevice::UringDevice(std::string path, OpenedFile file, uint32_t queue_depth,
                         const struct io_uring& ring)
    : path_(std::move(path)), file_(file), queue_depth_(queue_depth), ring_(ring) {}

UringDevice::~UringDevice() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    // Every prepared SQE was submitted (the SQ is empty between calls), so
    // an entry is free; the CQ has room for depth + 1 completions.
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    while (sqe == nullptr) {
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    io_uring_prep_nop(sqe);
    io_uring_sqe_set_data(sqe, nullptr);
    io_uring_submit(&ring_);
  }
  completer_.join();
  io_uring_queue_exit(&ring_);
  ::close(file_.fd);
}

void UringDevice::Submit(IoRequest request) {
  Status check = CheckRequest(*this, request);
  if (!check.ok()) return request.done(check);
  if (request.op == IoOp::kDiscard) {
    Status s = DiscardBackingFile(*this, file_.fd, file_.is_block_device, request.offset,
                                  request.discard_length);
    return request.done(s);
  }
  auto* op = new InFlight{.request = std::move(request)};
  for (const IoVec& v : op->request.iov) op->vecs.push_back({v.data, v.size_bytes});
  MutexLock lock(&mu_);
  overflow_.push_back(op);
  FillSlotsLocked();
}

Status UringDevice::Execute(IoRequest request) {
  if (!request.done) request.done = [](const Status&) {};
  ARC_RETURN_IF_ERROR(CheckRequest(*this, request));
  return RunOnFile(*this, file_.fd, file_.is_block_device, request);
}

void UringDevice::FillSlotsLocked() {
  bool any = false;
  while (!overflow_.empty() && in_kernel_ < queue_depth_) {
    InFlight* op = overflow_.front();
    overflow_.pop_front();
    PrepareLocked(op);
    any = true;
  }
  if (any) io_uring_submit(&ring_);
}

void UringDevice::PrepareLocked(InFlight* op) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  ARC_CHECK(sqe != nullptr) << "io_uring SQ full with " << in_kernel_ << " in flight";
  const IoRequest& r = op->request;
  unsigned n = static_cast<unsigned>(op->vecs.size() - op->first);
  uint64_t at = r.offset + op->done_bytes;
  switch (r.op) {
    case IoOp::kRead:
      io_uring_prep_readv(sqe, file_.fd, &op->vecs[op->first], n, at);
      break;
    case IoOp::kWrite:
      io_uring_prep_writev(sqe, file_.fd, &op->vecs[op->first], n, at);
      if (r.fua) sqe->rw_flags = RWF_DSYNC;
      break;
    case IoOp::kFlush:
      io_uring_prep_fsync(sqe, file_.fd, IORING_FSYNC_DATASYNC);
      break;
    case IoOp::kDiscard:
      ARC_CHECK(false) << "discards do not go through the ring";
  }
  io_uring_sqe_set_data(sqe, op);
  ++in_kernel_;
}

UringDevice::InFlight* UringDevice::Reap(InFlight* op, int result) {
  const IoRequest& r = op->request;
  uint64_t total = r.length();
  if (result == -EINTR || result == -EAGAIN) {
    overflow_.push_front(op);  // retry as is
    return nullptr;
  }
  if (result < 0) {
    op->status = ErrnoStatus(*this, r.op, r.offset, total, -result);
    return op;
  }
  if (r.op == IoOp::kFlush) return op;
  if (result == 0) {
    op->status = Status::IOError(DescribeIo(*this, r.op, r.offset, total) + ": end of file after " +
                                 std::to_string(op->done_bytes) + " bytes");
    return op;
  }
  op->done_bytes += static_cast<uint64_t>(result);
  if (op->done_bytes >= total) return op;
  size_t left = static_cast<size_t>(result);
  while (op->first < op->vecs.size() && left >= op->vecs[op->first].iov_len) {
    left -= op->vecs[op->first++].iov_len;
  }
  if (left > 0) {
    op->vecs[op->first].iov_base = static_cast<uint8_t*>(op->vecs[op->first].iov_base) + left;
    op->vecs[op->first].iov_len -= left;
  }
  overflow_.push_front(op);  // continue the short transfer first
  return nullptr;
}

void UringDevice::CompletionLoop() {
  bool stop_seen = false;
  for (;;) {
    io_uring_cqe* cqe = nullptr;
    int err = io_uring_wait_cqe(&ring_, &cqe);
    if (err == -EINTR) continue;
    ARC_CHECK(err == 0) << "io_uring_wait_cqe: " << std::strerror(-err);
    auto* op = static_cast<InFlight*>(io_uring_cqe_get_data(cqe));
    int result = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    InFlight* finished = nullptr;
    {
      // Taking mu_ before touching the op also orders this thread after the
      // submitter's writes for tools that do not see through the kernel.
      MutexLock lock(&mu_);
      if (op == nullptr) {
        stop_seen = true;  // the destructor's NOP; drain what is still in flight
      } else {
        finished = Reap(op, result);
        --in_kernel_;
      }
      FillSlotsLocked();
    }
    if (finished != nullptr) {
      finished->request.done(finished->status);
      delete finished;
    }
    MutexLock lock(&mu_);
    if (stop_seen && in_kernel_ == 0 && overflow_.empty()) return;
  }
}

Result<std::unique_ptr<Device>> OpenBestDevice(const std::string& path,
                                               const UringDeviceOptions& options,
                                               Backend* backend) {
  auto uring = UringDevice::Open(path, options);
  if (uring.ok()) {
    if (backend != nullptr) *backend = Backend::kIoUring;
    return std::unique_ptr<Device>(std::move(*uring));
  }
  if (uring.status().code() != StatusCode::kNotSupported) return uring.status();
  ARC_ASSIGN_OR_RETURN(auto psync, FileDevice::Open(path, options.file));
  if (backend != nullptr) *backend = Backend::kPsync;
  return std::unique_ptr<Device>(std::move(psync));
}

}  // namespace arcstore::io
