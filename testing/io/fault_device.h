// FaultDevice: wraps any device and injects faults by rule, reproducibly.
//
// Faults:
//   kIoError     the request fails with IOError (EIO); nothing is transferred
//                for reads, nothing is written for writes (read, write,
//                flush, discard)
//   kNoSpace     a write fails with NoSpace (ENOSPC); nothing is written
//   kFlipOnRead  the read succeeds but one random bit of the returned data is
//                flipped
//   kFlipOnWrite the write succeeds but one random bit of what reaches the
//                inner device is flipped (the caller's buffer is untouched)
//   kTornWrite   the write reports success but only a random proper subset of
//                its sectors (sector = the inner device's logical block) is
//                written: a write torn by a power cut
//   kDropWrite   the write reports success and writes nothing (a lost write)
//   kShortWrite  the write fails with IOError after only its first k sectors
//                (0 <= k < all, random) reached the inner device: what a
//                pwrite that stops short and then errors leaves behind
//
// Triggers: a rule matches requests whose op is in `ops` and whose range
// overlaps [range_offset, range_offset + range_length) (flushes match any
// range). The first `skip_matches` matches pass untouched; the rule then
// fires on the next `fire_count` matches (1 = once, kForever = every one).
// So "the Nth write" is {ops=write, skip_matches=N-1}, "every op on range X,
// forever" is {range X, fire_count=kForever}. When several rules would fire
// on one request, the one added first does; each rule counts matches on its
// own. Random choices (which bit, which sectors) come from the seed, so a
// seed replays the same faults for the same request sequence.
//
// Completion: a request passes to the inner device, whose completion model
// applies; failures injected without touching the inner device complete
// inline. Thread-safety: all methods may be called from any thread. The
// inner device is not owned and must outlive this one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/random.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "io/forwarding_device.h"

namespace arcstore::io {

enum class FaultKind : uint8_t {
  kIoError,
  kNoSpace,
  kFlipOnRead,
  kFlipOnWrite,
  kTornWrite,
  kDropWrite,
  kShortWrite
};
std::string_view FaultKindName(FaultKind kind);

// Bits of FaultRule::ops.
inline constexpr uint32_t kFaultOnRead = 1u << 0;
inline constexpr uint32_t kFaultOnWrite = 1u << 1;
inline constexpr uint32_t kFaultOnFlush = 1u << 2;
inline constexpr uint32_t kFaultOnDiscard = 1u << 3;

inline constexpr uint64_t kForever = UINT64_MAX;

struct FaultRule {
  FaultKind kind = FaultKind::kIoError;
  uint32_t ops = kFaultOnRead | kFaultOnWrite;
  uint64_t range_offset = 0;
  uint64_t range_length = UINT64_MAX;
  uint64_t skip_matches = 0;
  uint64_t fire_count = 1;

  // ops non-empty and allowed for the kind (flips on read: read only; no
  // space, write flips, torn, dropped and short writes: write only); range and
  // fire_count non-zero.
  Status Validate() const;
};

// One fault that fired: what, where, and the detail (the bit flipped, or
// the number of sectors written by a torn write).
struct FaultEvent {
  uint64_t rule_id = 0;
  FaultKind kind = FaultKind::kIoError;
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t detail = 0;  // flips: bit index within the request; torn, short: sectors kept
};

// How many valid requests of each op reached the device (faulted or not):
// a workload's operation counts, for sweeps that fail the Nth of them.
struct RequestCounts {
  uint64_t reads = 0, writes = 0, flushes = 0, discards = 0;
  uint64_t total() const { return reads + writes + flushes + discards; }
};

class FaultDevice final : public ForwardingDevice {
 public:
  static constexpr size_t kMaxRules = 256;
  static constexpr size_t kMaxEvents = 4096;  // the oldest events are dropped beyond this

  FaultDevice(Device* inner, uint64_t seed);

  // Returns the rule's id (never 0).
  Result<uint64_t> AddRule(const FaultRule& rule);
  void RemoveRule(uint64_t id);
  void ClearRules();
  // How often the rule `id` fired so far (0 for an unknown id).
  uint64_t FiredCount(uint64_t id) const;
  std::vector<FaultEvent> Events() const;
  RequestCounts Counts() const;

  void Submit(IoRequest request) override;

 private:
  struct ActiveRule {
    uint64_t id;
    FaultRule rule;
    uint64_t matches = 0;
    uint64_t fired = 0;
  };
  // The rule that fires on `r`, if any, with its counters advanced.
  bool Match(const IoRequest& r, FaultEvent* event) ARC_EXCLUDES(mu_);
  uint64_t RandomBelow(uint64_t n) ARC_EXCLUDES(mu_);
  void Record(const FaultEvent& event) ARC_EXCLUDES(mu_);
  void FlipOnWrite(IoRequest r, const FaultEvent& event);
  void FlipOnRead(IoRequest r, const FaultEvent& event);
  void TornWrite(IoRequest r, const FaultEvent& event);
  void ShortWrite(IoRequest r, const FaultEvent& event);
  void Count(IoOp op) ARC_EXCLUDES(mu_);

  mutable Mutex mu_;
  SeededRandom random_ ARC_GUARDED_BY(mu_);
  uint64_t next_id_ ARC_GUARDED_BY(mu_) = 1;
  std::vector<ActiveRule> rules_ ARC_GUARDED_BY(mu_);
  std::vector<FaultEvent> events_ ARC_GUARDED_BY(mu_);
  RequestCounts counts_ ARC_GUARDED_BY(mu_);
};

}  // namespace arcstore::io
