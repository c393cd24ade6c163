// Test helpers for the bench: a VolumeProvider of in-memory volumes, and
// volumes that complete asynchronously or corrupt what they return.
//
// Test-only (it uses testing::MemoryVolume); not part of arcstore_bench.
// Thread-safety: the provider is used by one runner; the volumes follow the
// Volume contract.
#pragma once

#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "base/thread_annotations.h"
#include "bench/volume_provider.h"
#include "testing/memory_volume.h"

namespace arcstore::bench {

class MemoryVolumeProvider final : public VolumeProvider {
 public:
  explicit MemoryVolumeProvider(uint32_t record_size_bytes = 128 * 1024)
      : record_size_bytes_(record_size_bytes) {}
  // Wraps every new volume (async or corrupting variants).
  std::function<std::shared_ptr<Volume>(std::shared_ptr<testing::MemoryVolume>)> wrap;

  Result<std::shared_ptr<Volume>> OpenVolume(const VolumeSpec& req) override {
    auto it = volumes_.find(req.name);
    if (it == volumes_.end()) {
      if (req.size_bytes == 0) return Status::NotFound("no volume " + req.name);
      VolumeInfo info;
      info.name = req.name;
      info.size_bytes = req.size_bytes;
      info.record_size_bytes = record_size_bytes_;
      auto mem = std::make_shared<testing::MemoryVolume>(info);
      memory_[req.name] = mem;
      it = volumes_.emplace(req.name, wrap ? wrap(mem) : mem).first;
    }
    opened.push_back(req);
    return it->second;
  }
  Status DropCaches() override {
    drops++;
    return Status::Ok();
  }
  testing::MemoryVolume* memory(const std::string& name) {
    auto it = memory_.find(name);
    return it == memory_.end() ? nullptr : it->second.get();
  }

  std::vector<VolumeSpec> opened;
  int drops = 0;

 private:
  uint32_t record_size_bytes_;
  std::map<std::string, std::shared_ptr<Volume>> volumes_;
  std::map<std::string, std::shared_ptr<testing::MemoryVolume>> memory_;
};

// Forwards to a MemoryVolume but completes every operation on a thread of
// its own, so that callers see real asynchronous completions.
class AsyncVolume final : public Volume {
 public:
  explicit AsyncVolume(std::shared_ptr<Volume> inner) : inner_(std::move(inner)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~AsyncVolume() override {
    {
      MutexLock l(&mu_);
      stop_ = true;
      cv_.SignalAll();
    }
    thread_.join();
  }
  VolumeInfo info() const override { return inner_->info(); }
  void Submit(VolumeRequest req, Completion done) override {
    Defer(inner_->SubmitAndWait(std::move(req)), std::move(done));
  }
  uint64_t max_pending() {
    MutexLock l(&mu_);
    return max_pending_;
  }

 private:
  void Defer(Status s, Completion done) {
    MutexLock l(&mu_);
    pending_.emplace_back(std::move(s), std::move(done));
    max_pending_ = std::max<uint64_t>(max_pending_, pending_.size());
    cv_.SignalAll();
  }
  void Loop() {
    while (true) {
      std::vector<std::pair<Status, Completion>> batch;
      {
        MutexLock l(&mu_);
        while (!stop_ && pending_.empty()) cv_.Wait(&mu_);
        if (stop_ && pending_.empty()) return;
        batch.swap(pending_);
      }
      for (auto& [s, done] : batch) done(std::move(s));
    }
  }
  std::shared_ptr<Volume> inner_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ ARC_GUARDED_BY(mu_) = false;
  uint64_t max_pending_ ARC_GUARDED_BY(mu_) = 0;
  std::vector<std::pair<Status, Completion>> pending_ ARC_GUARDED_BY(mu_);
  std::thread thread_;
};

// Flips one byte of every read that covers `bad_offset`.
class CorruptingVolume final : public Volume {
 public:
  CorruptingVolume(std::shared_ptr<Volume> inner, uint64_t bad_offset)
      : inner_(std::move(inner)), bad_offset_(bad_offset) {}
  VolumeInfo info() const override { return inner_->info(); }
  void Submit(VolumeRequest req, Completion done) override {
    if (req.op != VolumeOp::kRead) {
      inner_->Submit(std::move(req), std::move(done));
      return;
    }
    const uint64_t o = req.offset;
    const std::span<uint8_t> out = req.out;
    Status s = inner_->SubmitAndWait(std::move(req));
    if (s.ok() && bad_offset_ >= o && bad_offset_ < o + out.size()) out[bad_offset_ - o + 100] ^= 0x5a;
    done(std::move(s));
  }

 private:
  std::shared_ptr<Volume> inner_;
  uint64_t bad_offset_;
};

}  // namespace arcstore::bench
