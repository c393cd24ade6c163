// Recording for crash images. Theory of operation:
//
//   seq:   0    1     2     3     4      5      6
//          W1s  W1c   W2s   F1s   W2c    F1c    W3s ...      (s = submit, c = complete)
//
//   crash at T=6: F1 completed (5 < 6) and was submitted at 3, so W1
//   (completed at 1 < 3) is durable; W2 (completed at 4, after F1's
//   submission) and W3 are pending: any subset of their sectors may be on
//   the media.
//
// Devices recorded together share one clock (RecordingOptions::shared_seq):
// each takes its numbers from it under its own mu_, so one device's events
// keep their order and a crash time T cuts every device at the same moment.
//
// Invariants: writes are appended at submission under mu_, so their order is
// submission order; a write's data is copied at submission (the caller may
// reuse its buffer after completion); flushes are appended at completion,
// only when OK. Sequence numbers are unique and increase.
// Locking: mu_ guards the recording and the sequence counter; never held
// across the inner device or a completion.
// Limits: max_recorded_bytes of base image plus write data.
#include "testing/io/recording_device.h"

#include <algorithm>
#include <cstring>

namespace arcstore::io {

Status RecordingOptions::Validate() const {
  if (max_recorded_bytes == 0) {
    return Status::InvalidArgument("max_recorded_bytes: must be positive");
  }
  return Status::Ok();
}

Result<std::unique_ptr<RecordingDevice>> RecordingDevice::Create(Device* inner,
                                                                 const RecordingOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  if (inner->size_bytes() > options.max_recorded_bytes) {
    return Status::ResourceExhausted("recording device " + inner->name() +
                                     ": the device is larger than max_recorded_bytes");
  }
  std::unique_ptr<RecordingDevice> d(new RecordingDevice(inner, options));
  std::vector<uint8_t> base(inner->size_bytes());
  ARC_RETURN_IF_ERROR(ReadSync(*inner, 0, base));
  {
    MutexLock lock(&d->mu_);
    d->recording_.base_image = std::make_shared<const std::vector<uint8_t>>(std::move(base));
    d->recording_.sector_bytes = inner->logical_block_size();
    d->recorded_bytes_ = inner->size_bytes();
  }
  return d;
}

RecordingDevice::RecordingDevice(Device* inner, const RecordingOptions& options)
    : ForwardingDevice(inner), options_(options) {}

Recording RecordingDevice::TakeRecording() const {
  MutexLock lock(&mu_);
  Recording r = recording_;
  r.end_seq = options_.shared_seq ? options_.shared_seq->load() : next_seq_;
  return r;
}

uint64_t RecordingDevice::NextSeq() {
  return options_.shared_seq ? options_.shared_seq->fetch_add(1) : next_seq_++;
}

void RecordingDevice::Submit(IoRequest r) {
  Status check = CheckRequest(*this, r);
  if (!check.ok()) return r.done(check);
  switch (r.op) {
    case IoOp::kRead:
      return inner()->Submit(std::move(r));
    case IoOp::kWrite:
    case IoOp::kDiscard:
      return SubmitWrite(std::move(r));
    case IoOp::kFlush:
      return SubmitFlush(std::move(r));
  }
}

void RecordingDevice::SubmitWrite(IoRequest r) {
  RecordedWrite w{.offset = r.offset, .length = r.length(), .fua = r.op == IoOp::kWrite && r.fua};
  if (r.op == IoOp::kWrite) {
    auto data = std::make_shared<std::vector<uint8_t>>(w.length);
    GatherIov(r.iov, 0, w.length, data->data());
    w.data = std::move(data);
  }
  size_t index;
  {
    MutexLock lock(&mu_);
    if (recorded_bytes_ + w.length > options_.max_recorded_bytes) {
      return r.done(Status::ResourceExhausted(DescribeIo(*this, r.op, r.offset, w.length) +
                                              ": recording is full (max_recorded_bytes)"));
    }
    recorded_bytes_ += w.length;
    w.submit_seq = NextSeq();
    index = recording_.writes.size();
    recording_.writes.push_back(std::move(w));
  }
  IoCallback done = std::move(r.done);
  r.done = [this, index, done](const Status& s) {
    {
      MutexLock lock(&mu_);
      uint64_t seq = NextSeq();
      if (s.ok()) recording_.writes[index].complete_seq = seq;
    }
    done(s);
  };
  inner()->Submit(std::move(r));
}

void RecordingDevice::SubmitFlush(IoRequest r) {
  uint64_t submit_seq;
  {
    MutexLock lock(&mu_);
    submit_seq = NextSeq();
  }
  IoCallback done = std::move(r.done);
  r.done = [this, submit_seq, done](const Status& s) {
    {
      MutexLock lock(&mu_);
      uint64_t seq = NextSeq();
      if (s.ok()) recording_.flushes.push_back({submit_seq, seq});
    }
    done(s);
  };
  inner()->Submit(std::move(r));
}

std::vector<uint64_t> Recording::FlushCrashPoints() const {
  std::vector<uint64_t> points;
  for (const RecordedFlush& f : flushes) points.push_back(f.complete_seq);
  for (const RecordedWrite& w : writes) {
    if (w.fua && w.complete_seq != kNotCompleted) points.push_back(w.complete_seq);
  }
  std::sort(points.begin(), points.end());
  points.push_back(end_seq);
  return points;
}

CrashState Recording::StateAt(uint64_t crash_seq) const {
  CrashState state{.crash_seq = crash_seq};
  // The newest barrier: the latest submission among flushes done before T.
  uint64_t barrier = 0;
  bool any = false;
  for (const RecordedFlush& f : flushes) {
    if (f.complete_seq < crash_seq) {
      barrier = std::max(barrier, f.submit_seq);
      any = true;
    }
  }
  for (size_t i = 0; i < writes.size(); ++i) {
    const RecordedWrite& w = writes[i];
    if (w.submit_seq >= crash_seq) break;
    if ((any && w.complete_seq < barrier) || (w.fua && w.complete_seq < crash_seq)) {
      state.durable.push_back(i);
    } else {
      state.pending.push_back(i);
    }
  }
  return state;
}

static void ApplySectors(CowImage& image, const RecordedWrite& w, uint64_t first, uint64_t bytes) {
  image.Write(w.offset + first, w.data ? w.data->data() + first : nullptr, bytes);
}

Result<CowImage> Recording::BuildImage(
    const CrashState& state, const std::vector<PendingChoice>& choices) const {
  // What happens to each write: absent = not applied.
  std::vector<const PendingChoice*> chosen(writes.size(), nullptr);
  std::vector<bool> is_pending(writes.size(), false), is_durable(writes.size(), false);
  for (size_t i : state.pending) is_pending.at(i) = true;
  for (size_t i : state.durable) is_durable.at(i) = true;
  for (const PendingChoice& c : choices) {
    if (c.write_index >= writes.size() || !is_pending[c.write_index]) {
      return Status::InvalidArgument("crash image: write " + std::to_string(c.write_index) +
                                     " is not pending at seq " + std::to_string(state.crash_seq));
    }
    const RecordedWrite& w = writes[c.write_index];
    if (!c.sectors.empty() && c.sectors.size() != w.length / sector_bytes) {
      return Status::InvalidArgument("crash image: write " + std::to_string(c.write_index) +
                                     " has " + std::to_string(w.length / sector_bytes) +
                                     " sectors, choice gives " + std::to_string(c.sectors.size()));
    }
    chosen[c.write_index] = &c;
  }
  CowImage image(base_image, sector_bytes);
  for (size_t i = 0; i < writes.size(); ++i) {
    const RecordedWrite& w = writes[i];
    if (is_durable[i] || (chosen[i] != nullptr && chosen[i]->sectors.empty())) {
      ApplySectors(image, w, 0, w.length);
    } else if (chosen[i] != nullptr) {
      for (size_t s = 0; s < chosen[i]->sectors.size(); ++s) {
        if (chosen[i]->sectors[s]) ApplySectors(image, w, s * sector_bytes, sector_bytes);
      }
    }
  }
  return image;
}

std::vector<PendingChoice> Recording::RandomChoices(const CrashState& state, SeededRandom& random,
                                                    uint64_t tear_one_in) const {
  std::vector<PendingChoice> choices;
  for (size_t i : state.pending) {
    if (random.OneIn(2)) continue;
    PendingChoice c{.write_index = i};
    if (tear_one_in != 0 && random.OneIn(tear_one_in)) {
      c.sectors.resize(writes[i].length / sector_bytes);
      for (size_t s = 0; s < c.sectors.size(); ++s) c.sectors[s] = random.OneIn(2);
    }
    choices.push_back(std::move(c));
  }
  return choices;
}

CrashImageBuilder::CrashImageBuilder(const Recording& recording)
    : recording_(recording), durable_image_(recording.base_image, recording.sector_bytes) {}

void CrashImageBuilder::Rebuild() {
  durable_image_ = CowImage(recording_.base_image, recording_.sector_bytes);
  for (size_t i : state_.durable) {
    const RecordedWrite& w = recording_.writes[i];
    ApplySectors(durable_image_, w, 0, w.length);
  }
  applied_ = state_.durable.size();
  max_applied_ = state_.durable.empty() ? 0 : state_.durable.back() + 1;
}

const CrashState& CrashImageBuilder::AdvanceTo(uint64_t crash_seq) {
  bool backwards = crash_seq < state_.crash_seq;
  CrashState next = recording_.StateAt(crash_seq);
  // The durable set only grows with time; the shortcut also needs every new
  // durable write to come after those applied (no reordering to undo).
  bool extends =
      !backwards && next.durable.size() >= applied_ &&
      std::equal(next.durable.begin(), next.durable.begin() + applied_, state_.durable.begin());
  for (size_t k = applied_; extends && k < next.durable.size(); ++k) {
    extends = next.durable[k] >= max_applied_;
  }
  state_ = std::move(next);
  if (!extends) {
    Rebuild();
    return state_;
  }
  for (; applied_ < state_.durable.size(); ++applied_) {
    const RecordedWrite& w = recording_.writes[state_.durable[applied_]];
    ApplySectors(durable_image_, w, 0, w.length);
    max_applied_ = state_.durable[applied_] + 1;
  }
  return state_;
}

Result<CowImage> CrashImageBuilder::Build(
    const std::vector<PendingChoice>& choices) const {
  std::vector<const PendingChoice*> ordered;
  for (const PendingChoice& c : choices) {
    // A pending write older than an applied durable one must be applied
    // under it: only the full replay gets that order right.
    if (c.write_index < max_applied_) return recording_.BuildImage(state_, choices);
    ordered.push_back(&c);
  }
  std::sort(ordered.begin(), ordered.end(), [](const PendingChoice* a, const PendingChoice* b) {
    return a->write_index < b->write_index;
  });
  // Anything BuildImage would refuse (or resolve by "last choice wins") goes
  // to it, so both always agree.
  std::vector<bool> is_pending(recording_.writes.size(), false);
  for (size_t i : state_.pending) is_pending[i] = true;
  for (size_t k = 0; k < ordered.size(); ++k) {
    const PendingChoice& c = *ordered[k];
    bool valid = c.write_index < recording_.writes.size() && is_pending[c.write_index] &&
                 (c.sectors.empty() || c.sectors.size() == recording_.writes[c.write_index].length /
                                                               recording_.sector_bytes) &&
                 (k == 0 || ordered[k - 1]->write_index != c.write_index);
    if (!valid) return recording_.BuildImage(state_, choices);
  }
  CowImage image = durable_image_;  // shares its blocks
  for (const PendingChoice* c : ordered) {
    const RecordedWrite& w = recording_.writes[c->write_index];
    if (c->sectors.empty()) {
      ApplySectors(image, w, 0, w.length);
      continue;
    }
    for (size_t s = 0; s < c->sectors.size(); ++s) {
      if (c->sectors[s])
        ApplySectors(image, w, s * recording_.sector_bytes, recording_.sector_bytes);
    }
  }
  return image;
}

}  // namespace arcstore::io
