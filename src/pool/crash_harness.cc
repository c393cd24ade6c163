#include "pool/crash_harness.h"

#include <cstring>
#include <map>

#include "base/random.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "io/recording_device.h"

namespace arcstore::pool {
namespace {

// Forwards to a device it does not own, counting completed flushes.
class CountingDevice final : public io::ForwardingDevice {
 public:
  explicit CountingDevice(io::Device* d) : ForwardingDevice(d) {}
  void Submit(io::IoRequest r) override {
    if (r.op == io::IoOp::kFlush) {
      auto done = std::move(r.done);
      r.done = [this, done](const Status& s) {
        if (s.ok()) flushes_++;
        done(s);
      };
    }
    inner()->Submit(std::move(r));
  }
  uint64_t flushes() const { return flushes_.load(); }

 private:
  std::atomic<uint64_t> flushes_{0};
};

struct VolumeSpec {
  std::string name;
  uint64_t size;
  uint32_t record;
};

const VolumeSpec kVolumes[] = {
    {"a", 512 * 1024, 4096}, {"b", 768 * 1024, 16384}, {"c", 1024 * 1024, 65536}};

using Model = std::vector<std::vector<uint8_t>>;  // per volume

PoolOptions HarnessPoolOptions() {
  PoolOptions po;
  po.txg_timeout_ns = 600 * kNsPerSec;  // txgs end at flushes only
  po.dirty_max_bytes = 1 * kGiB;
  return po;
}

// Compares every volume of `pool` with `model`; "" when equal.
std::string Compare(PoolImpl& pool, const Model& model) {
  for (size_t v = 0; v < model.size(); v++) {
    Result<std::shared_ptr<Volume>> vol = pool.OpenVolume(kVolumes[v].name);
    if (!vol.ok()) return "volume " + kVolumes[v].name + ": " + vol.status().ToString();
    std::vector<uint8_t> got(model[v].size());
    Status s = (*vol)->Read(0, got);
    if (!s.ok()) return "volume " + kVolumes[v].name + ": " + s.ToString();
    for (size_t i = 0; i < got.size(); i++) {
      if (got[i] != model[v][i]) {
        return "volume " + kVolumes[v].name + " differs from the model at byte " +
               std::to_string(i) + " (got " + std::to_string(got[i]) + ", expected " +
               std::to_string(model[v][i]) + ")";
      }
    }
  }
  return "";
}

}  // namespace

Status CrashHarnessOptions::Validate() const {
  if (operations == 0 || operations > 1'000'000) {
    return Status::InvalidArgument("crash harness: operations must be in [1, 1000000]");
  }
  if (flush_one_in == 0 || images_per_point == 0) {
    return Status::InvalidArgument("crash harness: flush_one_in and images_per_point must be > 0");
  }
  if (device_bytes < (8 << 20) || device_bytes > (256 << 20)) {
    return Status::InvalidArgument("crash harness: device_bytes must be in [8 MiB, 256 MiB]");
  }
  return Status::Ok();
}

Result<CrashHarnessResult> RunCrashHarness(const CrashHarnessOptions& options) {
  ARC_RETURN_IF_ERROR(options.Validate());
  CrashHarnessResult result;
  SeededRandom rnd(options.seed);

  // The pool with its volumes, before recording starts.
  io::MemoryDeviceOptions mo;
  mo.size_bytes = options.device_bytes;
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::MemoryDevice> mem, io::MemoryDevice::Create(mo));
  ARC_RETURN_IF_ERROR(PoolImpl::Format(mem.get(), "crash"));
  {
    ARC_ASSIGN_OR_RETURN(std::unique_ptr<PoolImpl> p,
                         PoolImpl::OpenOnDevice(std::make_unique<CountingDevice>(mem.get()),
                                                HarnessPoolOptions()));
    for (const auto& v : kVolumes) {
      VolumeOptions vo;
      vo.name = v.name;
      vo.size_bytes = v.size;
      vo.record_size_bytes = v.record;
      vo.compression = rnd.OneIn(2) ? "lz4" : "off";
      ARC_RETURN_IF_ERROR(p->CreateVolume(vo));
    }
    ARC_RETURN_IF_ERROR(p->Close());
  }

  // The workload, recorded.
  io::RecordingOptions ro;
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::RecordingDevice> rec,
                       io::RecordingDevice::Create(mem.get(), ro));
  auto counting = std::make_unique<CountingDevice>(rec.get());
  CountingDevice* counter = counting.get();
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<PoolImpl> pool,
                       PoolImpl::OpenOnDevice(std::move(counting), HarnessPoolOptions(),
                                              options.unsafe));
  Model model;
  for (const auto& v : kVolumes) model.emplace_back(v.size, 0);
  std::map<uint64_t, Model> at_txg;  // model at each committed txg
  at_txg[pool->Info().txg] = model;
  // (device flushes completed when an API flush returned, its txg)
  std::vector<std::pair<uint64_t, uint64_t>> durable_marks;
  std::vector<std::shared_ptr<Volume>> vols;
  for (const auto& v : kVolumes) {
    ARC_ASSIGN_OR_RETURN(std::shared_ptr<Volume> h, pool->OpenVolume(v.name));
    vols.push_back(h);
  }
  for (uint32_t op = 0; op < options.operations; op++) {
    const size_t v = rnd.Uniform(vols.size());
    std::vector<uint8_t>& m = model[v];
    if (rnd.OneIn(options.flush_one_in)) {
      ARC_RETURN_IF_ERROR(vols[v]->Flush());
      const uint64_t txg = pool->Info().txg;
      at_txg[txg] = model;
      durable_marks.emplace_back(counter->flushes(), txg);
      continue;
    }
    const uint64_t off = rnd.Uniform(m.size());
    const uint64_t len = rnd.Range(1, std::min<uint64_t>(m.size() - off, 3 * kVolumes[v].record));
    const uint64_t kind = rnd.Uniform(10);
    if (kind < 7) {
      std::vector<uint8_t> d(len);
      rnd.Fill(d.data(), len);
      ARC_RETURN_IF_ERROR(vols[v]->Write(off, d));
      std::memcpy(m.data() + off, d.data(), len);
    } else if (kind < 9) {
      ARC_RETURN_IF_ERROR(vols[v]->Trim(off, len));
      std::memset(m.data() + off, 0, len);
    } else {
      ARC_RETURN_IF_ERROR(vols[v]->WriteZeroes(off, len, rnd.OneIn(2) ? kZeroNoHole : kZeroNone));
      std::memset(m.data() + off, 0, len);
    }
  }
  vols.clear();
  result.txgs = at_txg.size() - 1;
  io::Recording recording = rec->TakeRecording();
  pool.reset();  // stops without a final sync being needed by the points below

  // Every crash point, several images each.
  const std::vector<uint64_t> points = recording.FlushCrashPoints();
  for (size_t i = 0; i < points.size(); i++) {
    // Flushes 0..i-1 had completed at point i (the last point: all of them).
    uint64_t must_have = 0;
    for (const auto& [flushes, txg] : durable_marks) {
      if (flushes <= i) must_have = std::max(must_have, txg);
    }
    io::CrashState state = recording.StateAt(points[i]);
    result.crash_points++;
    for (uint32_t k = 0; k < options.images_per_point; k++) {
      std::vector<io::PendingChoice> choices =
          recording.RandomChoices(state, rnd, options.tear_one_in);
      auto fail = [&](const std::string& what) {
        result.failures.push_back("seed " + std::to_string(options.seed) + " crash point " +
                                  std::to_string(i) + " image " + std::to_string(k) + " (" +
                                  std::to_string(choices.size()) + " of " +
                                  std::to_string(state.pending.size()) +
                                  " pending writes landed): " + what);
      };
      ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> image, recording.BuildImage(state, choices));
      result.images++;
      ARC_ASSIGN_OR_RETURN(std::unique_ptr<io::MemoryDevice> img,
                           io::MemoryDevice::FromImage(mo, std::move(image)));
      PoolOptions po = HarnessPoolOptions();
      po.read_only = true;
      Result<std::unique_ptr<PoolImpl>> opened = PoolImpl::OpenOnDevice(std::move(img), po);
      if (!opened.ok()) {
        fail("pool does not open: " + opened.status().ToString());
      } else {
        PoolImpl& p = **opened;
        const uint64_t txg = p.Info().txg;
        if (txg < p.open_report().newest_seen_txg) result.fallbacks++;
        PoolImpl::Census c = p.Check();
        auto model_at = at_txg.find(txg);
        if (!c.problems.empty()) {
          fail("check at txg " + std::to_string(txg) + ": " + c.problems.front());
        } else if (txg < must_have) {
          fail("opened at txg " + std::to_string(txg) + " but txg " + std::to_string(must_have) +
               " was durable (a completed flush waited for it)");
        } else if (model_at == at_txg.end()) {
          fail("opened at txg " + std::to_string(txg) + ", which the workload never committed");
        } else if (std::string diff = Compare(p, model_at->second); !diff.empty()) {
          fail("at txg " + std::to_string(txg) + ": " + diff);
        }
      }
      if (options.stop_at_first_failure && !result.failures.empty()) return result;
    }
  }
  return result;
}

}  // namespace arcstore::pool
