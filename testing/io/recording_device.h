// RecordingDevice: wraps any device and records every write, discard and
// flush, in order, with the written data, so that a crash harness can build
// every device image a power cut could leave behind.
//
// Time is a sequence number that advances at each submission and each
// completion. A crash at time T means: everything with a sequence number
// below T happened, nothing after. At time T:
//   - a write is DURABLE when it completed before the submission of some
//     flush that completed before T (the device contract, see device.h),
//     or when it is a FUA write that completed before T;
//   - every other write submitted before T is PENDING: it may have reached
//     the media whole, in part (any subset of its sectors: a torn write), or
//     not at all. A write that failed stays pending forever.
// A crash image is the base image (the device when recording started) with
// the durable writes and a chosen subset of the pending ones applied in
// submission order. Discards are recorded as writes of zeros.
//
// Thread-safety: all methods may be called from any thread. The inner device
// is not owned and must outlive this one. A Recording is an immutable value
// (its write data is shared, so copies are cheap).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/random.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "io/forwarding_device.h"
#include "testing/io/cow_image.h"

namespace arcstore::io {

inline constexpr uint64_t kNotCompleted = UINT64_MAX;

struct RecordedWrite {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::shared_ptr<const std::vector<uint8_t>> data;  // null for a discard (zeros)
  uint64_t submit_seq = 0;
  uint64_t complete_seq = kNotCompleted;  // only for writes that completed OK
  bool fua = false;                       // durable at its completion
};

struct RecordedFlush {
  uint64_t submit_seq = 0;
  uint64_t complete_seq = 0;  // only flushes that completed OK are recorded
};

// What a crash at `crash_seq` leaves to chance: indices into writes.
struct CrashState {
  uint64_t crash_seq = 0;
  std::vector<size_t> durable;
  std::vector<size_t> pending;
};

// How one pending write lands: whole (empty `sectors`) or only the sectors
// whose flag is set (one flag per logical block of the write).
struct PendingChoice {
  size_t write_index = 0;
  std::vector<bool> sectors;
};

class Recording {
 public:
  // The device before the first recorded write; shared, so that a copy of
  // the recording does not copy the device.
  std::shared_ptr<const std::vector<uint8_t>> base_image;
  uint32_t sector_bytes = 4096;
  std::vector<RecordedWrite> writes;   // in submission order
  std::vector<RecordedFlush> flushes;  // in completion order
  uint64_t end_seq = 0;                // the time after the last event

  // Crash points worth trying: the moment each completed flush or FUA write
  // completes (just before it counts: everything since the previous one is
  // still pending), in order, and the end of the recording.
  std::vector<uint64_t> FlushCrashPoints() const;
  CrashState StateAt(uint64_t crash_seq) const;
  // The image: base + durable + the chosen pending writes, in submission
  // order (sharing the base). Fails (InvalidArgument) when a choice names a
  // write that is not pending at the crash or has the wrong number of
  // sector flags.
  Result<CowImage> BuildImage(const CrashState& state,
                              const std::vector<PendingChoice>& choices) const;
  // A random subset of the pending writes: each lands with probability 1/2;
  // one in `tear_one_in` of those that land is torn (0: never).
  std::vector<PendingChoice> RandomChoices(const CrashState& state, SeededRandom& random,
                                           uint64_t tear_one_in) const;
};

// Builds crash images at increasing crash points without replaying the
// whole history each time: it keeps the image of the durable writes and, on
// AdvanceTo, applies only the writes that became durable. Build() returns
// exactly what Recording::BuildImage would (it falls back to it when writes
// completed out of submission order make the shortcut unsafe).
// Thread-safety: none; one builder per thread. The recording must outlive it.
class CrashImageBuilder {
 public:
  explicit CrashImageBuilder(const Recording& recording);
  // Moves to `crash_seq` (any order; going back rebuilds from the base).
  const CrashState& AdvanceTo(uint64_t crash_seq);
  const CrashState& state() const { return state_; }
  // The image at the current point with `choices` of its pending writes.
  // It shares the blocks of the builder's image (cow_image.h): no copy of
  // the device.
  Result<CowImage> Build(const std::vector<PendingChoice>& choices) const;

 private:
  void Rebuild();
  const Recording& recording_;
  CrashState state_;
  CowImage durable_image_;
  size_t applied_ = 0;      // durable writes in durable_image_
  size_t max_applied_ = 0;  // largest write index applied, + 1 (0: none)
};

struct RecordingOptions {
  // Limit on base image plus recorded write data; past it, writes fail with
  // ResourceExhausted (and are not passed on).
  uint64_t max_recorded_bytes = 1ull << 30;
  // Optional: the clock of several devices recorded together (a pool's
  // device and its cache device), so that a crash time is the same moment
  // on each: every device draws its sequence numbers from it. Unset: the
  // device counts on its own from 0.
  std::shared_ptr<std::atomic<uint64_t>> shared_seq;
  Status Validate() const;
};

class RecordingDevice final : public ForwardingDevice {
 public:
  // Reads the inner device whole as the base image.
  static Result<std::unique_ptr<RecordingDevice>> Create(Device* inner,
                                                         const RecordingOptions& options);

  // A copy of everything recorded so far (the base image and the writes'
  // bytes are shared, not copied).
  Recording TakeRecording() const;

  void Submit(IoRequest request) override;

 private:
  RecordingDevice(Device* inner, const RecordingOptions& options);
  void SubmitWrite(IoRequest request);
  void SubmitFlush(IoRequest request);
  uint64_t NextSeq() ARC_REQUIRES(mu_);

  const RecordingOptions options_;
  mutable Mutex mu_;
  uint64_t next_seq_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t recorded_bytes_ ARC_GUARDED_BY(mu_) = 0;
  Recording recording_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::io
