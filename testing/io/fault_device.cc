// Fault injection. Theory of operation:
//
//   Submit(req) --CheckRequest--> Match(rules in id order)
//      no rule fires  -> inner->Submit(req) unchanged
//      kIoError/kNoSpace -> done(error) inline, inner untouched
//      kDropWrite     -> done(OK) inline, inner untouched
//      kFlipOnWrite   -> inner writes a private copy with one bit flipped
//      kFlipOnRead    -> inner reads; on OK one bit of the caller's buffer flips
//      kTornWrite     -> inner writes only the kept runs of sectors, done(OK)
//      kShortWrite    -> inner writes the first k sectors, then done(IOError)
//
// Invariants: at most one fault per request; a rule's counters advance only
// on requests it matches; the random stream advances only when a fault that
// needs a choice fires, so a seed replays for a given request order.
// Every valid request is counted by op (Counts()), faulted or not.
// Locking: mu_ guards the rules, counters, events and the random stream; it
// is never held while calling the inner device or a completion.
// Limits: kMaxRules rules, kMaxEvents events kept.
#include "testing/io/fault_device.h"

#include <algorithm>
#include <memory>

#include "io/aligned_buffer.h"

namespace arcstore::io {

std::string_view FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kIoError:
      return "io_error";
    case FaultKind::kNoSpace:
      return "no_space";
    case FaultKind::kFlipOnRead:
      return "flip_on_read";
    case FaultKind::kFlipOnWrite:
      return "flip_on_write";
    case FaultKind::kTornWrite:
      return "torn_write";
    case FaultKind::kDropWrite:
      return "drop_write";
    case FaultKind::kShortWrite:
      return "short_write";
  }
  return "unknown";
}

static uint32_t AllowedOps(FaultKind kind) {
  switch (kind) {
    case FaultKind::kIoError:
      return kFaultOnRead | kFaultOnWrite | kFaultOnFlush | kFaultOnDiscard;
    case FaultKind::kFlipOnRead:
      return kFaultOnRead;
    default:
      return kFaultOnWrite;
  }
}

Status FaultRule::Validate() const {
  if (ops == 0 || (ops & ~AllowedOps(kind)) != 0) {
    return Status::InvalidArgument("fault rule ops " + std::to_string(ops) + ": not allowed for " +
                                   std::string(FaultKindName(kind)));
  }
  if (range_length == 0) return Status::InvalidArgument("fault rule range_length: zero");
  if (fire_count == 0) return Status::InvalidArgument("fault rule fire_count: zero");
  return Status::Ok();
}

static uint32_t OpBit(IoOp op) {
  switch (op) {
    case IoOp::kRead:
      return kFaultOnRead;
    case IoOp::kWrite:
      return kFaultOnWrite;
    case IoOp::kFlush:
      return kFaultOnFlush;
    case IoOp::kDiscard:
      return kFaultOnDiscard;
  }
  return 0;
}

static bool Overlaps(const FaultRule& rule, const IoRequest& r) {
  if (r.op == IoOp::kFlush) return true;
  uint64_t end = r.offset + r.length();
  uint64_t rule_end = rule.range_length > UINT64_MAX - rule.range_offset
                          ? UINT64_MAX
                          : rule.range_offset + rule.range_length;
  return r.offset < rule_end && rule.range_offset < end;
}

FaultDevice::FaultDevice(Device* inner, uint64_t seed) : ForwardingDevice(inner), random_(seed) {}

Result<uint64_t> FaultDevice::AddRule(const FaultRule& rule) {
  ARC_RETURN_IF_ERROR(rule.Validate());
  MutexLock lock(&mu_);
  if (rules_.size() >= kMaxRules) {
    return Status::ResourceExhausted("fault device " + name() + ": more than " +
                                     std::to_string(kMaxRules) + " rules");
  }
  uint64_t id = next_id_++;
  rules_.push_back({.id = id, .rule = rule});
  return id;
}

void FaultDevice::RemoveRule(uint64_t id) {
  MutexLock lock(&mu_);
  std::erase_if(rules_, [id](const ActiveRule& r) { return r.id == id; });
}

void FaultDevice::ClearRules() {
  MutexLock lock(&mu_);
  rules_.clear();
}

uint64_t FaultDevice::FiredCount(uint64_t id) const {
  MutexLock lock(&mu_);
  for (const ActiveRule& r : rules_) {
    if (r.id == id) return r.fired;
  }
  return 0;
}

std::vector<FaultEvent> FaultDevice::Events() const {
  MutexLock lock(&mu_);
  return events_;
}

RequestCounts FaultDevice::Counts() const {
  MutexLock lock(&mu_);
  return counts_;
}

void FaultDevice::Count(IoOp op) {
  MutexLock lock(&mu_);
  switch (op) {
    case IoOp::kRead:
      ++counts_.reads;
      break;
    case IoOp::kWrite:
      ++counts_.writes;
      break;
    case IoOp::kFlush:
      ++counts_.flushes;
      break;
    case IoOp::kDiscard:
      ++counts_.discards;
      break;
  }
}

bool FaultDevice::Match(const IoRequest& r, FaultEvent* event) {
  MutexLock lock(&mu_);
  bool fired = false;
  for (ActiveRule& a : rules_) {
    if ((a.rule.ops & OpBit(r.op)) == 0 || !Overlaps(a.rule, r)) continue;
    ++a.matches;
    if (fired || a.matches <= a.rule.skip_matches) continue;
    if (a.rule.fire_count != kForever && a.fired >= a.rule.fire_count) continue;
    ++a.fired;
    fired = true;
    *event = {
        .rule_id = a.id, .kind = a.rule.kind, .op = r.op, .offset = r.offset, .length = r.length()};
  }
  return fired;
}

uint64_t FaultDevice::RandomBelow(uint64_t n) {
  MutexLock lock(&mu_);
  return random_.Uniform(n);
}

void FaultDevice::Record(const FaultEvent& event) {
  MutexLock lock(&mu_);
  if (events_.size() >= kMaxEvents) events_.erase(events_.begin());
  events_.push_back(event);
}

void FaultDevice::Submit(IoRequest r) {
  Status check = CheckRequest(*this, r);
  if (!check.ok()) return r.done(check);
  Count(r.op);
  FaultEvent event;
  if (!Match(r, &event)) return inner()->Submit(std::move(r));
  std::string where = DescribeIo(*this, r.op, r.offset, r.length());
  switch (event.kind) {
    case FaultKind::kIoError:
      Record(event);
      return r.done(Status::IOError(where + ": injected I/O error"));
    case FaultKind::kNoSpace:
      Record(event);
      return r.done(Status::NoSpace(where + ": injected no space left on device"));
    case FaultKind::kDropWrite:
      Record(event);
      return r.done(Status::Ok());
    case FaultKind::kFlipOnWrite:
      return FlipOnWrite(std::move(r), event);
    case FaultKind::kFlipOnRead:
      return FlipOnRead(std::move(r), event);
    case FaultKind::kTornWrite:
      return TornWrite(std::move(r), event);
    case FaultKind::kShortWrite:
      return ShortWrite(std::move(r), event);
  }
}

void FaultDevice::FlipOnWrite(IoRequest r, const FaultEvent& event) {
  FaultEvent e = event;
  uint64_t length = r.length();
  // A private copy, aligned for an O_DIRECT inner device; the caller's
  // buffer is never modified.
  auto copy =
      std::make_shared<AlignedBuffer>(length, BufferAlignmentFor(*inner()));
  GatherIov(r.iov, 0, length, copy->data());
  e.detail = RandomBelow(length * 8);
  copy->data()[e.detail / 8] ^= static_cast<uint8_t>(1u << (e.detail % 8));
  Record(e);
  IoCallback done = std::move(r.done);
  r.iov = {{copy->data(), length}};
  r.done = [copy, done](const Status& s) { done(s); };
  inner()->Submit(std::move(r));
}

void FaultDevice::FlipOnRead(IoRequest r, const FaultEvent& event) {
  FaultEvent e = event;
  e.detail = RandomBelow(r.length() * 8);
  Record(e);
  std::vector<IoVec> iov = r.iov;
  uint64_t bit = e.detail;
  IoCallback done = std::move(r.done);
  r.done = [iov, bit, done](const Status& s) {
    if (s.ok()) {
      uint8_t byte;
      GatherIov(iov, bit / 8, 1, &byte);
      byte ^= static_cast<uint8_t>(1u << (bit % 8));
      ScatterIov(iov, bit / 8, 1, &byte);
    }
    done(s);
  };
  inner()->Submit(std::move(r));
}

namespace {
// Completes the caller's request once every piece of a torn write is done.
struct Joiner {
  Mutex mu;
  size_t remaining ARC_GUARDED_BY(mu) = 0;
  Status first_error ARC_GUARDED_BY(mu);
  IoCallback done;
  void PieceDone(const Status& s) {
    bool last;
    Status result;
    {
      MutexLock lock(&mu);
      if (!s.ok() && first_error.ok()) first_error = s;
      last = --remaining == 0;
      result = first_error;
    }
    if (last) done(result);
  }
};
}  // namespace

void FaultDevice::TornWrite(IoRequest r, const FaultEvent& event) {
  const uint64_t sector = logical_block_size();
  const uint64_t sectors = r.length() / sector;
  std::vector<bool> keep(sectors);
  uint64_t kept = 0;
  for (uint64_t i = 0; i < sectors; ++i) kept += (keep[i] = RandomBelow(2) == 1);
  if (kept == sectors) keep[RandomBelow(sectors)] = false, --kept;
  FaultEvent e = event;
  e.detail = kept;
  Record(e);
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // first sector, count
  for (uint64_t i = 0; i < sectors; ++i) {
    if (!keep[i]) continue;
    if (!runs.empty() && runs.back().first + runs.back().second == i) {
      ++runs.back().second;
    } else {
      runs.push_back({i, 1});
    }
  }
  if (runs.empty()) return r.done(Status::Ok());
  auto joiner = std::make_shared<Joiner>();
  joiner->done = std::move(r.done);
  {
    MutexLock lock(&joiner->mu);
    joiner->remaining = runs.size();
  }
  for (auto [first, count] : runs) {
    IoRequest piece{.op = IoOp::kWrite,
                    .offset = r.offset + first * sector,
                    .iov = SliceIov(r.iov, first * sector, count * sector),
                    .done = [joiner](const Status& s) { joiner->PieceDone(s); }};
    inner()->Submit(std::move(piece));
  }
}

void FaultDevice::ShortWrite(IoRequest r, const FaultEvent& event) {
  const uint64_t sector = logical_block_size();
  const uint64_t sectors = r.length() / sector;
  FaultEvent e = event;
  e.detail = RandomBelow(sectors);  // sectors written before the stop
  Record(e);
  Status error = Status::IOError(DescribeIo(*this, r.op, r.offset, r.length()) +
                                 ": injected short write (" + std::to_string(e.detail * sector) +
                                 " bytes written)");
  if (e.detail == 0) return r.done(error);
  IoCallback done = std::move(r.done);
  IoRequest prefix{.op = IoOp::kWrite,
                   .offset = r.offset,
                   .iov = SliceIov(r.iov, 0, e.detail * sector),
                   .done = [done, error](const Status& s) { done(s.ok() ? error : s); }};
  inner()->Submit(std::move(prefix));
}

}  // namespace arcstore::io
