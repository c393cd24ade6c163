// UringDevice: a regular file or block device driven through io_uring
// (liburing), with real asynchronous completion.
//
// Completion: on the device's own completion thread, never inline (except
// for requests refused by CheckRequest and for discards, which are an
// ioctl done inline). Up to `queue_depth` requests are in the kernel at
// once; more are held in an overflow list and submitted as completions free
// slots, so Submit never blocks (also when called from a completion). A
// short transfer is continued by resubmitting the remainder. Flush is
// IORING_OP_FSYNC with IORING_FSYNC_DATASYNC (covers every completed write).
// Execute (a synchronous caller) bypasses the ring: the same file, driven
// by blocking preadv/pwritev/fdatasync on the caller's thread.
//
// OpenBestDevice() opens an io_uring device, or the psync FileDevice when
// io_uring is unavailable (old kernel, seccomp, memlock limits), and says
// which through its `backend` out-parameter.
//
// Thread-safety: all methods may be called from any thread. The device owns
// its file descriptor, ring and completion thread; destroying it waits for
// every request in flight to complete (callers should not destroy it with
// requests outstanding that they still care about).
#pragma once

#include <liburing.h>

#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "base/result.h"
#include "base/thread_annotations.h"
#include "io/device.h"
#include "io/file_device.h"

namespace arcstore::io {

struct UringDeviceOptions {
  FileDeviceOptions file;
  uint32_t queue_depth = 128;  // requests in the kernel at once, 1..4096

  Status Validate() const;
};

class UringDevice final : public Device {
 public:
  // NotSupported when io_uring cannot be set up here.
  static Result<std::unique_ptr<UringDevice>> Open(const std::string& path,
                                                   const UringDeviceOptions& options);
  ~UringDevice() override;

  const std::string& name() const override { return path_; }
  uint32_t logical_block_size() const override { return file_.block_size; }
  uint64_t size_bytes() const override { return file_.size_bytes; }
  uint32_t buffer_alignment() const override { return file_.direct ? file_.block_size : 1; }
  bool supports_discard() const override { return file_.is_block_device; }
  void Submit(IoRequest request) override;
  // On the calling thread with blocking system calls (RunOnFile), beside
  // the ring: a synchronous caller would otherwise wait for the completion
  // thread to wake it (and a flush for an io_uring worker thread).
  Status Execute(IoRequest request) override;
  Result<uint64_t> FillHoles(uint64_t offset, uint64_t length) override {
    return FillFileHoles(*this, file_.fd, file_.is_block_device, offset, length);
  }

  bool direct() const { return file_.direct; }

 private:
  struct InFlight;
  UringDevice(std::string path, OpenedFile file, uint32_t queue_depth, const struct io_uring& ring);
  void PrepareLocked(InFlight* op) ARC_REQUIRES(mu_);
  void FillSlotsLocked() ARC_REQUIRES(mu_);
  void CompletionLoop();
  // Handles one completion; returns the op when it is finished (else it
  // went back to the overflow list to continue).
  InFlight* Reap(InFlight* op, int result) ARC_REQUIRES(mu_);

  const std::string path_;
  const OpenedFile file_;
  const uint32_t queue_depth_;
  struct io_uring ring_;
  Mutex mu_;  // guards the submission queue and the counters below
  uint32_t in_kernel_ ARC_GUARDED_BY(mu_) = 0;
  bool stopping_ ARC_GUARDED_BY(mu_) = false;
  std::deque<InFlight*> overflow_ ARC_GUARDED_BY(mu_);
  std::thread completer_;
};

enum class Backend { kIoUring, kPsync };
// io_uring when it works here, else psync; `backend` (optional) says which.
Result<std::unique_ptr<Device>> OpenBestDevice(const std::string& path,
                                               const UringDeviceOptions& options,
                                               Backend* backend = nullptr);

}  // namespace arcstore::io
