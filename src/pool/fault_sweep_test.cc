// Fault sweep (label "crash"), in the style of SQLite's I/O error loops.
//
// A fixed workload (open, create volumes, writes, FUA writes, trims,
// write-zeroes, partial-record writes that read-modify-write, reads after
// dropping the cache, create and destroy a volume, flushes, close) runs once
// on a FaultDevice with no rules, which counts its device operations by kind
// (at most kMaxOps). Then, for each fault kind
//
//   eio_read     EIO on the Nth read          (kIoError, reads)
//   eio_write    EIO on the Nth write         (kIoError, writes)
//   eio_flush    EIO on the Nth flush         (kIoError, flushes)
//   enospc       ENOSPC on the Nth write      (kNoSpace, writes)
//   short_write  the Nth write stops short    (kShortWrite, writes)
//
// and for every N from 1 to that kind's count, the workload runs again with
// the Nth operation failing once, and again with it failing forever. The
// workload goes on after errors (each call may fail; none may crash). After
// each run the faults are cleared and:
//   - the pool opens on the same device;
//   - fsck (PoolImpl::Check) reports no problem;
//   - every 4 KiB block of every volume holds a version it may hold: nothing
//     durable (acknowledged by a completed flush, a FUA write or Close) is
//     lost, and nothing never written appears;
//   - a volume whose creation was durable exists; one whose destruction was
//     durable does not.
// During the run, every read that succeeds returns exactly what was last
// written where the last write succeeded. In the asan build LeakSanitizer
// checks that no failure path leaks.
//
// The model: per block, the versions that could be on disk after a reopen
// (`possible`), and the version a read must return now when that is known.
// A successful write makes its version current and possible; a failed one
// makes its version possible and the current one unknown (it may have
// landed in part). A successful flush or Close collapses every known block
// to its current version; a successful FUA write does so for its blocks.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/checksum.h"
#include "base/random.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "pool/pool_impl.h"
#include "testing/io/fault_device.h"

namespace arcstore::pool {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kMaxOps = 300;

struct BlockModel {
  std::vector<uint64_t> possible;
  std::optional<uint64_t> current;
  std::vector<uint64_t> history;  // every version ever written, oldest first (for messages)
};

uint64_t HashBlock(const uint8_t* p) { return Xxh3_64(p, kBlock); }

uint64_t ZeroHash() {
  static const std::vector<uint8_t> zero(kBlock, 0);
  return HashBlock(zero.data());
}

// One volume's model (see the top comment).
class VolumeModel {
 public:
  explicit VolumeModel(uint64_t size_bytes) : blocks_(size_bytes / kBlock) {
    for (BlockModel& b : blocks_) b = {{ZeroHash()}, ZeroHash(), {ZeroHash()}};
  }
  void Wrote(uint64_t offset, const std::vector<uint8_t>& data, bool ok) {
    for (uint64_t i = 0; i < data.size() / kBlock; i++) {
      BlockModel& b = blocks_[offset / kBlock + i];
      const uint64_t h = HashBlock(data.data() + i * kBlock);
      b.possible.push_back(h);
      b.history.push_back(h);
      b.current = ok ? std::optional<uint64_t>(h) : std::nullopt;
    }
  }
  // Everything known so far is durable (a flush or Close completed OK).
  void Durable(uint64_t offset = 0, uint64_t length = UINT64_MAX) {
    const uint64_t end = std::min<uint64_t>(blocks_.size(), length / kBlock + offset / kBlock);
    for (uint64_t i = offset / kBlock; i < end; i++) {
      if (blocks_[i].current) blocks_[i].possible = {*blocks_[i].current};
    }
  }
  // Checks `data` read at `offset`; `now` = a read during the run (known
  // blocks must be current), else after a reopen (any possible version).
  std::string Check(uint64_t offset, const std::vector<uint8_t>& data, bool now) const {
    for (uint64_t i = 0; i < data.size() / kBlock; i++) {
      const BlockModel& b = blocks_[offset / kBlock + i];
      const uint64_t h = HashBlock(data.data() + i * kBlock);
      if (now && b.current) {
        if (h != *b.current) return "block " + std::to_string(offset / kBlock + i) + " is stale";
        continue;
      }
      if (std::find(b.possible.begin(), b.possible.end(), h) == b.possible.end()) {
        auto at = std::find(b.history.rbegin(), b.history.rend(), h);
        const std::string which =
            at == b.history.rend()
                ? "a version never written there (junk)"
                : "version " + std::to_string(b.history.rend() - at) + " of " +
                      std::to_string(b.history.size()) + " written there, older than a durable one";
        return "block " + std::to_string(offset / kBlock + i) + " holds " + which;
      }
    }
    return "";
  }
  uint64_t size_bytes() const { return blocks_.size() * kBlock; }

 private:
  std::vector<BlockModel> blocks_;
};

struct VolumeState {
  VolumeModel model;
  bool created = false, create_durable = false;
  bool destroyed = false, destroy_ok = false, destroy_durable = false;
};

struct Spec {
  const char* name;
  io::FaultKind kind;
  uint32_t ops;
  uint64_t io::RequestCounts::*count;
};

const Spec kSpecs[] = {
    {"eio_read", io::FaultKind::kIoError, io::kFaultOnRead, &io::RequestCounts::reads},
    {"eio_write", io::FaultKind::kIoError, io::kFaultOnWrite, &io::RequestCounts::writes},
    {"eio_flush", io::FaultKind::kIoError, io::kFaultOnFlush, &io::RequestCounts::flushes},
    {"enospc", io::FaultKind::kNoSpace, io::kFaultOnWrite, &io::RequestCounts::writes},
    {"short_write", io::FaultKind::kShortWrite, io::kFaultOnWrite, &io::RequestCounts::writes},
};

PoolOptions SweepPoolOptions() {
  PoolOptions po;
  po.txg_timeout_ns = 600 * kNsPerSec;  // syncs only when asked: the op count is fixed
  po.intent_log_sync_kick_percent = 0;
  // Only flushes and FUA writes write the log: an early write goes when the
  // log's thread gets to it, so the op count would vary between runs.
  po.intent_log_early_write_window_ns = 0;
  po.prefetch = false;
  po.work_threads = 0;
  po.arc_max_bytes = 64 * kMiB;
  po.dirty_max_bytes = 64 * kMiB;
  return po;
}

// The workload and its model; one instance per run.
class Workload {
 public:
  explicit Workload(io::Device* device) : device_(device) {
    vols_.emplace("a", VolumeState{VolumeModel(256 * 1024)});
    vols_.emplace("b", VolumeState{VolumeModel(256 * 1024)});
    vols_.emplace("t", VolumeState{VolumeModel(64 * 1024)});
  }

  // Runs every step; each may fail. Returns a description of the first
  // wrong answer (a read that returned data it must not), or "".
  std::string Run() {
    auto p = PoolImpl::OpenOnDevice(std::make_unique<io::ForwardingDevice>(device_),
                                    SweepPoolOptions());
    if (!p.ok()) return "";  // a fault during open: refused cleanly
    pool_ = std::move(*p);
    Create("a", 16 * 1024, "lz4");
    Create("b", 64 * 1024, "off");
    Flush();
    Write("a", 0, 64 * 1024);
    Write("a", 100 * 1024, 20 * 1024);  // partial records at both ends
    Write("b", 0, 128 * 1024);
    Flush();
    (void)pool_->DropCaches();
    Write("b", 68 * 1024, 8 * 1024, kFua);  // read-modify-write of a committed record
    Verify("a");
    Verify("b");
    Trim("a", 0, 32 * 1024);
    Zero("b", 0, 64 * 1024);
    Write("a", 200 * 1024, 56 * 1024);
    Flush();
    Create("t", 16 * 1024, "zstd");
    Write("t", 0, 64 * 1024);
    Flush();
    Destroy("t");
    Flush();
    (void)pool_->DropCaches();
    Write("a", 4 * 1024, 4 * 1024);
    Write("a", 240 * 1024, 4 * 1024, kFua);
    Verify("a");
    Verify("b");
    // Rounds of scattered writes and zeroes, flushed every other round, so
    // that many txgs (and space log appends) are in the sweep.
    SeededRandom r(77);
    for (int round = 0; round < 18; round++) {
      for (int i = 0; i < 6; i++) {
        const char* name = r.OneIn(2) ? "a" : "b";
        const uint64_t blocks = 1 + r.Uniform(8);
        const uint64_t at = r.Uniform(64 - blocks) * kBlock;
        if (r.OneIn(5)) {
          Zero(name, at, blocks * kBlock);
        } else {
          Write(name, at, blocks * kBlock, r.OneIn(6) ? kFua : 0);
        }
      }
      if (round % 2 == 1) Flush();
      if (round == 6) {
        (void)pool_->DropCaches();
        Verify("a");
      }
    }
    handles_.clear();
    if (Log("close", pool_->Close())) AllDurable();
    pool_.reset();
    return wrong_;
  }

  // After the run, on the healthy device: the pool opens, fsck is clean and
  // every volume holds what it may.
  std::string Reopen() {
    auto p = PoolImpl::OpenOnDevice(std::make_unique<io::ForwardingDevice>(device_),
                                    SweepPoolOptions());
    if (!p.ok()) return "the pool does not open: " + p.status().ToString();
    std::unique_ptr<PoolImpl> pool = std::move(*p);
    PoolImpl::Census c = pool->Check();
    if (!c.problems.empty()) return "fsck: " + c.problems[0];
    for (auto& [name, st] : vols_) {
      auto v = pool->OpenVolume(name);
      if (!v.ok()) {
        if (st.create_durable && !st.destroyed) return "volume " + name + " is lost";
        continue;
      }
      if (st.destroy_durable) return "volume " + name + " was destroyed durably but exists";
      if (name == "t") continue;  // contents of a volume being destroyed: not modelled
      std::vector<uint8_t> data(st.model.size_bytes());
      Status s = (*v)->Read(0, data);
      if (!s.ok()) return "reading volume " + name + " after reopen: " + s.ToString();
      std::string e = st.model.Check(0, data, /*now=*/false);
      if (!e.empty()) return "volume " + name + ": " + e;
    }
    Status s = pool->Close();
    if (!s.ok()) return "closing the reopened pool: " + s.ToString();
    return "";
  }

  // Every call of the run and its outcome, for failure messages.
  const std::string& log() const { return log_; }

 private:
  bool Log(const std::string& what, const Status& s) {
    log_ += "  " + what + ": " + s.ToString() + "\n";
    return s.ok();
  }
  std::vector<uint8_t> Data(uint64_t length) {
    std::vector<uint8_t> d(length);
    SeededRandom(++data_seq_).Fill(d.data(), d.size());
    return d;
  }
  std::shared_ptr<Volume> Handle(const std::string& name) {
    auto it = handles_.find(name);
    if (it != handles_.end()) return it->second;
    auto v = pool_->OpenVolume(name);
    if (!v.ok()) return nullptr;
    return handles_[name] = *v;
  }
  void Create(const std::string& name, uint32_t record_size, const char* compression) {
    VolumeOptions vo;
    vo.name = name;
    vo.size_bytes = vols_.at(name).model.size_bytes();
    vo.record_size_bytes = record_size;
    vo.compression = compression;
    vols_.at(name).created = Log("create " + name, pool_->CreateVolume(vo));
  }
  void Destroy(const std::string& name) {
    handles_.erase(name);
    // A failed destroy may still have reached the disk (its txg can fail
    // after its uberblock landed in one ring), so any attempt counts.
    VolumeState& st = vols_.at(name);
    st.destroyed = true;
    st.destroy_ok = Log("destroy " + name, pool_->DestroyVolume(name));
  }
  void Write(const std::string& name, uint64_t offset, uint64_t length, uint32_t flags = 0) {
    std::vector<uint8_t> d = Data(length);
    auto v = Handle(name);
    const bool ok = v && Log("write " + name + " " + std::to_string(offset) +
                                 (flags & kFua ? " fua" : ""),
                             v->Write(offset, d, flags));
    VolumeModel& m = vols_.at(name).model;
    m.Wrote(offset, d, ok);
    if (ok && (flags & kFua)) m.Durable(offset, length);
  }
  void Trim(const std::string& name, uint64_t offset, uint64_t length) {
    auto v = Handle(name);
    vols_.at(name).model.Wrote(offset, std::vector<uint8_t>(length),
                               v && Log("trim " + name, v->Trim(offset, length)));
  }
  void Zero(const std::string& name, uint64_t offset, uint64_t length) {
    auto v = Handle(name);
    vols_.at(name).model.Wrote(offset, std::vector<uint8_t>(length),
                               v && Log("zero " + name, v->WriteZeroes(offset, length)));
  }
  void Flush() {
    auto v = Handle("a");
    if (Log("flush", v ? v->Flush() : Status::NotFound("no volume a"))) AllDurable();
  }
  void AllDurable() {
    for (auto& [name, st] : vols_) {
      st.model.Durable();
      if (st.created) st.create_durable = true;
      if (st.destroy_ok) st.destroy_durable = true;
    }
  }
  void Verify(const std::string& name) {
    auto v = Handle(name);
    if (!v) return;
    VolumeModel& m = vols_.at(name).model;
    std::vector<uint8_t> data(m.size_bytes());
    if (!Log("read " + name, v->Read(0, data))) return;  // an error is an answer; wrong data is not
    std::string e = m.Check(0, data, /*now=*/true);
    if (!e.empty() && wrong_.empty()) wrong_ = "reading volume " + name + " during the run: " + e;
  }

  io::Device* const device_;
  std::unique_ptr<PoolImpl> pool_;
  std::map<std::string, VolumeState> vols_;
  std::map<std::string, std::shared_ptr<Volume>> handles_;
  uint64_t data_seq_ = 0;
  std::string wrong_;
  std::string log_;
};

std::unique_ptr<io::MemoryDevice> FreshPool() {
  io::MemoryDeviceOptions o;
  o.size_bytes = 16 * kMiB;
  auto mem = std::move(*io::MemoryDevice::Create(o));
  Status s = PoolImpl::Format(mem.get(), "sweep");
  EXPECT_TRUE(s.ok()) << s.ToString();
  return mem;
}

// The fault-free run: its counts size the sweep, and it must pass itself.
io::RequestCounts CountOps() {
  auto mem = FreshPool();
  io::FaultDevice counting(mem.get(), 1);
  Workload w(&counting);
  EXPECT_EQ(w.Run(), "");
  const io::RequestCounts counts = counting.Counts();
  EXPECT_EQ(w.Reopen(), "");
  return counts;
}

// Runs the workload once per N in [1, count] with the Nth operation that
// `rule` matches failing; returns the failures found.
struct SweepOutcome {
  uint64_t runs = 0, fired = 0;
  std::vector<std::string> failures;
};
SweepOutcome Sweep(const char* name, io::FaultRule rule, uint64_t count) {
  SweepOutcome out;
  const char* mode = rule.fire_count == 1 ? "once" : "forever";
  for (uint64_t n = 1; n <= count; n++) {
    auto mem = FreshPool();
    io::FaultDevice faults(mem.get(), n);
    rule.skip_matches = n - 1;
    auto id = faults.AddRule(rule);
    EXPECT_TRUE(id.ok());
    Workload w(&faults);
    const std::string during = w.Run();
    const bool fired = faults.FiredCount(*id) > 0;
    faults.ClearRules();
    const std::string after = w.Reopen();
    out.runs++;
    out.fired += fired;
    const std::string where = std::string(name) + " " + mode + " at op " + std::to_string(n);
    if (!fired) out.failures.push_back(where + ": the workload no longer reaches that op");
    for (const std::string* e : {&during, &after}) {
      if (!e->empty()) out.failures.push_back(where + ": " + *e + "; the run:\n" + w.log());
    }
  }
  return out;
}

TEST(FaultSweepTest, EveryNthOperationFailingOnceOrForeverLosesNothingDurable) {
  const io::RequestCounts counts = CountOps();
  ASSERT_LE(counts.total(), kMaxOps) << "the workload grew past the sweep's budget";
  ASSERT_GT(counts.reads, 0u);
  ASSERT_GT(counts.writes, 0u);
  ASSERT_GT(counts.flushes, 0u);
  std::printf("fault sweep: workload of %llu device ops (%llu reads, %llu writes, %llu flushes)\n",
              static_cast<unsigned long long>(counts.total()),
              static_cast<unsigned long long>(counts.reads),
              static_cast<unsigned long long>(counts.writes),
              static_cast<unsigned long long>(counts.flushes));
  uint64_t runs = 0, fired = 0;
  for (const Spec& spec : kSpecs) {
    for (uint64_t fire_count : {uint64_t{1}, io::kForever}) {
      SweepOutcome o = Sweep(spec.name, {.kind = spec.kind, .ops = spec.ops, .fire_count = fire_count},
                             counts.*spec.count);
      runs += o.runs;
      fired += o.fired;
      for (const std::string& f : o.failures) ADD_FAILURE() << f;
      if (!o.failures.empty()) return;  // one kind's failures are enough to read
    }
  }
  std::printf("fault sweep: %llu runs, %llu with the fault fired, durable writes lost: 0\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(fired));
}

// The checks can fail: a device that acknowledges a write it never made
// (kDropWrite) must be caught at some N, as lost data or by fsck.
TEST(FaultSweepTest, ASilentlyDroppedWriteIsCaught) {
  const io::RequestCounts counts = CountOps();
  SweepOutcome o = Sweep("drop_write",
                         {.kind = io::FaultKind::kDropWrite, .ops = io::kFaultOnWrite},
                         counts.writes);
  EXPECT_FALSE(o.failures.empty()) << "no dropped write was noticed in " << o.runs << " runs";
  std::printf("fault sweep: a dropped write was caught in %zu of %llu runs\n", o.failures.size(),
              static_cast<unsigned long long>(o.runs));
}

}  // namespace
}  // namespace arcstore::pool
