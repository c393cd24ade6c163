// The cache's writer thread: sealed slots to the ring (theory of operation
// in l2_cache.cc).
#include <chrono>
#include <span>
#include <string>

#include "base/thread_name.h"
#include "l2arc/l2_cache.h"

namespace arcstore::l2arc {

namespace {

// Runs `fn` with `mu` released and takes `mu` again before returning.
template <typename Fn>
void RunUnlocked(Mutex* mu, Fn&& fn) ARC_REQUIRES(mu) ARC_NO_THREAD_SAFETY_ANALYSIS {
  mu->Unlock();
  fn();
  mu->Lock();
}

}  // namespace

void L2Cache::WriterLoop() {
  NameThisThread("l2arc_writer");
  MutexLock l(&mu_);
  while (!stop_) {
    RollIntervalLocked(env_.clock->NowNs());
    if (sealed_count_ == 0) {
      idle_cv_.SignalAll();
      // Wakes at least once an interval to seal a partly filled slot.
      writer_cv_.WaitFor(&mu_, std::chrono::milliseconds(options_.feed_interval_ms));
      continue;
    }
    const int b = sealed_[0];
    for (size_t i = 1; i < sealed_count_; i++) sealed_[i - 1] = sealed_[i];
    sealed_count_--;
    writing_ = b;
    WriteSlotLocked(b);
    writing_ = kNone;
    buffers_[b].in_use = false;
    idle_cv_.SignalAll();
  }
  idle_cv_.SignalAll();
}

void L2Cache::WriteSlotLocked(int b) {
  Buffer* buf = &buffers_[b];
  const auto h = static_cast<uint32_t>(head_);
  // Nothing may start reading slot h from here on; reads in flight there
  // see the new generation and report a miss.
  if (index_.slot_entries(h) > 0) device_bytes_ -= slots_[h].device_bytes;
  uint64_t evicted_bytes = 0;
  stats_.evicted_entries->Add(index_.EraseSlot(h, &evicted_bytes));
  data_bytes_ -= evicted_bytes;
  slots_[h].generation++;
  slots_[h].device_bytes = 0;
  L2SlotHeader header;
  header.pool_guid = label_.pool_guid;
  header.cache_guid = cache_guid_;
  header.sequence = next_sequence_++;
  header.data_bytes = buf->data_used;
  header.epoch = label_.epoch;
  const uint64_t write_bytes = layout_.header_area_bytes + buf->data_used;
  Status written;
  RunUnlocked(&mu_, [&] {
    header.entries = buf->entries;
    EncodeSlotHeader(header, std::span<uint8_t>(buf->bytes.data(), layout_.header_area_bytes));
    written = io::WriteSync(*env_.device, layout_.SlotOffset(h),
                            std::span<const uint8_t>(buf->bytes.data(), write_bytes),
                            io::IoClass::kAsyncWrite);
  });
  if (!written.ok()) {
    for (uint32_t node : buf->nodes) DropNodeLocked(node);
    stats_.io_errors->Add();
    if (write_error_.ok()) {
      write_error_ = written.WithContext(name_ + ": l2arc slot " + std::to_string(h));
    }
    UpdateGaugesLocked();
    return;
  }
  for (uint32_t node : buf->nodes) index_.Place(node, h);
  slots_[h].device_bytes = write_bytes;
  slots_[h].sequence = header.sequence;
  device_bytes_ += write_bytes;
  head_ = (head_ + 1) % layout_.slot_count;
  if (head_ == 0) wrapped_ = true;
  stats_.slots_written->Add();
  stats_.write_bytes->Add(write_bytes);
  UpdateGaugesLocked();
}

}  // namespace arcstore::l2arc
