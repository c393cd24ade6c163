#include "pool/pool_impl.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "base/random.h"
#include "format/label.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "testing/wait_until.h"

namespace arcstore::pool {
namespace {

using DeviceRef = io::ForwardingDevice;

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io::MemoryDeviceOptions o;
    o.size_bytes = 64 * kMiB;
    dev_ = *io::MemoryDevice::Create(o);
    ASSERT_TRUE(PoolImpl::Format(dev_.get(), "test").ok());
    Reopen();
  }
  void Reopen(const UnsafeTestSwitches& unsafe = {}, PoolOptions po = {}) {
    if (pool_) ASSERT_TRUE(pool_->Close().ok());
    pool_.reset();
    po.txg_timeout_ns = 60 * kNsPerSec;  // syncs happen when tests ask
    // Only flushes and FUA writes write the log, so that a test knows what
    // its blocks hold and when the log lets go of a change.
    if (!early_log_writes_) po.intent_log_early_write_window_ns = 0;
    auto p = PoolImpl::OpenOnDevice(std::make_unique<DeviceRef>(dev_.get()), po, unsafe);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pool_ = std::move(*p);
  }
  std::shared_ptr<Volume> MakeVolume(const std::string& name, uint64_t size,
                                     uint32_t record = 128 * 1024,
                                     const std::string& compression = "lz4") {
    VolumeOptions vo;
    vo.name = name;
    vo.size_bytes = size;
    vo.record_size_bytes = record;
    vo.compression = compression;
    Status s = pool_->CreateVolume(vo);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return *pool_->OpenVolume(name);
  }
  bool early_log_writes_ = false;  // Reopen keeps the pool's early log writes
  // The pool reopened with early log writes inside a 1 s window (however
  // busy the machine) and no sync kicks (the log's blocks stay the only
  // copy of the changes), and a new volume "v" of 8 KiB records on it.
  std::shared_ptr<Volume> EarlyWritingVolume() {
    early_log_writes_ = true;
    PoolOptions po;
    po.intent_log_sync_kick_percent = 0;
    po.space_sync_kick_percent = 0;
    po.intent_log_early_write_window_ns = kNsPerSec;
    Reopen({}, po);
    return MakeVolume("v", 4 * kMiB, 8192, "off");
  }
  static std::vector<uint8_t> Pattern(size_t n, uint64_t seed) {
    std::vector<uint8_t> v(n);
    SeededRandom(seed).Fill(v.data(), n);
    return v;
  }
  // A power cut now (declared here, defined after OpenCopy).
  void ExpectWritesAfterAPowerCut(uint64_t txg, int writes, uint64_t stride, uint64_t* replayed);
  void ExpectClean() {
    PoolImpl::Census c = pool_->Check();
    for (const auto& p : c.problems) ADD_FAILURE() << p;
  }
  int64_t VolumeStat(const char* name) {
    return pool_->stats().TakeSnapshot().Get("volumes", name);
  }
  // Closes `v`, reopens the pool and its volume `name`, and checks that it
  // reads back as `model` and the pool is clean.
  void ExpectSameAfterReopen(std::shared_ptr<Volume>& v, const std::string& name,
                             const std::vector<uint8_t>& model) {
    v.reset();
    Reopen();
    v = *pool_->OpenVolume(name);
    std::vector<uint8_t> out(model.size());
    ASSERT_TRUE(v->Read(0, out).ok());
    EXPECT_EQ(out, model) << "after reopening";
    ExpectClean();
  }

  std::unique_ptr<io::MemoryDevice> dev_;
  std::unique_ptr<PoolImpl> pool_;
};

TEST_F(PoolTest, WritesSurviveFlushAndReopen) {
  auto v = MakeVolume("vol0", 8 * kMiB);
  std::vector<uint8_t> a = Pattern(300000, 1);  // spans records, partial at both ends
  ASSERT_TRUE(v->Write(5000, a).ok());
  std::vector<uint8_t> out(a.size());
  ASSERT_TRUE(v->Read(5000, out).ok());
  EXPECT_EQ(out, a) << "dirty data reads back";
  ASSERT_TRUE(v->Flush().ok());
  ASSERT_TRUE(v->Read(5000, out).ok());
  EXPECT_EQ(out, a) << "committed data reads back";
  v.reset();
  Reopen();
  v = *pool_->OpenVolume("vol0");
  std::fill(out.begin(), out.end(), 0);
  ASSERT_TRUE(v->Read(5000, out).ok());
  EXPECT_EQ(out, a) << "reopened data reads back";
  std::vector<uint8_t> head(5000, 1);
  ASSERT_TRUE(v->Read(0, head).ok());
  EXPECT_EQ(head, std::vector<uint8_t>(5000, 0)) << "unwritten bytes are zeros";
  ExpectClean();
}

// --arc-pretouch also has the intent log make its kept memory at open; a
// pool without it makes that memory as writes need it.
TEST_F(PoolTest, ThePretouchOptionReachesTheIntentLog) {
  auto zil_stat = [this](const char* name) { return pool_->stats().TakeSnapshot().Get("zil", name); };
  EXPECT_EQ(zil_stat("pretouched_bytes"), 0);
  PoolOptions po;
  po.arc_pretouch_bytes = 8 * kMiB;
  Reopen({}, po);
  EXPECT_GE(zil_stat("pretouched_bytes"), int64_t{16 * kMiB}) << "at least the block buffers";
  auto v = MakeVolume("vol0", 8 * kMiB);
  std::vector<uint8_t> a = Pattern(4096, 2);
  for (uint64_t off = 0; off < 2 * kMiB; off += 8192) ASSERT_TRUE(v->Write(off, a).ok());
  ASSERT_TRUE(v->Flush().ok());
  EXPECT_EQ(zil_stat("copy_chunks_made"), 0) << "the log's copies went to pretouched chunks";
}

TEST_F(PoolTest, PartialWritesAcrossTxgsReadModifyWrite) {
  auto v = MakeVolume("v", 1 * kMiB, 64 * 1024);
  std::vector<uint8_t> model(1 * kMiB, 0);
  SeededRandom rnd = SeededRandom::FromEnvironment("PartialWritesAcrossTxgs");
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i < 30; i++) {
      uint64_t off = rnd.Uniform(model.size() - 1);
      uint64_t len = rnd.Range(1, std::min<uint64_t>(200000, model.size() - off));
      std::vector<uint8_t> d = Pattern(len, rnd.Next());
      ASSERT_TRUE(v->Write(off, d).ok());
      std::memcpy(model.data() + off, d.data(), len);
    }
    if (round % 3 == 0) ASSERT_TRUE(pool_->Sync().ok());
    std::vector<uint8_t> out(model.size());
    ASSERT_TRUE(v->Read(0, out).ok());
    ASSERT_EQ(out, model) << "round " << round;
  }
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_GT(pool_->stats().TakeSnapshot().Get("volumes", "rmw_reads"), 0);
  v.reset();
  Reopen();
  v = *pool_->OpenVolume("v");
  std::vector<uint8_t> out(model.size());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model);
  ExpectClean();
}

TEST_F(PoolTest, PartialWriteToAnUncachedRecordWaitsForNoRead) {
  constexpr uint64_t kRecord = 128 * 1024;
  auto v = MakeVolume("v", 4 * kRecord, kRecord);
  std::vector<uint8_t> model = Pattern(4 * kRecord, 3);
  ASSERT_TRUE(v->Write(0, model).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(pool_->DropCaches().ok());
  const int64_t reads0 = VolumeStat("record_reads"), rmw0 = VolumeStat("rmw_reads");
  // Two pieces of record 1, not touching: the writes read nothing.
  std::vector<uint8_t> a = Pattern(4096, 4), b = Pattern(1000, 5);
  ASSERT_TRUE(v->Write(kRecord + 8192, a).ok());
  ASSERT_TRUE(v->Write(kRecord + 60000, b).ok());
  std::memcpy(model.data() + kRecord + 8192, a.data(), a.size());
  std::memcpy(model.data() + kRecord + 60000, b.data(), b.size());
  EXPECT_EQ(VolumeStat("record_reads"), reads0);
  EXPECT_EQ(VolumeStat("rmw_reads"), rmw0);
  EXPECT_EQ(VolumeStat("rmw_deferred"), 1);
  // Bytes the copy knows are read from it alone.
  std::vector<uint8_t> part(1000);
  ASSERT_TRUE(v->Read(kRecord + 8192 + 100, part).ok());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), model.begin() + kRecord + 8192 + 100));
  EXPECT_EQ(VolumeStat("record_reads"), reads0);
  // The whole record: the committed bytes under the known ones.
  std::vector<uint8_t> out(model.size());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model) << "before the sync";
  EXPECT_GT(VolumeStat("record_reads"), reads0);
  // The sync completes the copy from the committed record.
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_EQ(VolumeStat("rmw_reads"), rmw0 + 1);
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model) << "after the sync";
  ExpectSameAfterReopen(v, "v", model);
}

// Holds the txg sync's data writes (async writes) while closed, so that a
// test can act while a txg is syncing.
class SyncWriteGate final : public io::ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  void Submit(io::IoRequest r) override {
    {
      MutexLock l(&mu_);
      if (closed_ && r.io_class == io::IoClass::kAsyncWrite) {
        held_.push_back(std::move(r));
        cv_.SignalAll();
        return;
      }
    }
    ForwardingDevice::Submit(std::move(r));
  }
  void Close() {
    MutexLock l(&mu_);
    closed_ = true;
  }
  void WaitHeld() {
    MutexLock l(&mu_);
    while (held_.empty()) cv_.Wait(&mu_);
  }
  void Open() {
    std::vector<io::IoRequest> held;
    {
      MutexLock l(&mu_);
      closed_ = false;
      held.swap(held_);
    }
    for (io::IoRequest& r : held) ForwardingDevice::Submit(std::move(r));
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool closed_ ARC_GUARDED_BY(mu_) = false;
  std::vector<io::IoRequest> held_ ARC_GUARDED_BY(mu_);
};

// A partial write to a record whose whole copy is being synced makes a
// partial copy over it, not a copy of the whole record; reads see the
// syncing copy's bytes under it, then the committed record's.
TEST_F(PoolTest, APartialWriteOverASyncingWholeCopyCopiesOnlyItsBytes) {
  constexpr uint64_t kRecord = 128 * 1024;
  ASSERT_TRUE(pool_->Close().ok());
  pool_.reset();
  auto gate = std::make_unique<SyncWriteGate>(dev_.get());
  SyncWriteGate* g = gate.get();
  PoolOptions po;
  po.txg_timeout_ns = 60 * kNsPerSec;
  auto opened = PoolImpl::OpenOnDevice(std::move(gate), po, {});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  pool_ = std::move(*opened);
  auto v = MakeVolume("v", 2 * kRecord, kRecord, "off");
  std::vector<uint8_t> model = Pattern(2 * kRecord, 21);
  ASSERT_TRUE(v->Write(0, model).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  std::vector<uint8_t> a = Pattern(kRecord, 22);  // record 1, whole, in txg T
  ASSERT_TRUE(v->Write(kRecord, a).ok());
  std::memcpy(model.data() + kRecord, a.data(), kRecord);
  const int64_t dirty0 = VolumeStat("rmw_dirty"), deferred0 = VolumeStat("rmw_deferred"),
                rmw0 = VolumeStat("rmw_reads"), held0 = VolumeStat("rmw_held_bases");
  g->Close();
  Status synced;
  std::thread sync([&] { synced = pool_->Sync(); });
  g->WaitHeld();  // T is syncing, its copy of record 1 still in memory
  std::vector<uint8_t> b = Pattern(4096, 23);
  ASSERT_TRUE(v->Write(kRecord + 8192, b).ok());  // in txg T+1
  std::memcpy(model.data() + kRecord + 8192, b.data(), b.size());
  EXPECT_EQ(VolumeStat("rmw_dirty"), dirty0) << "no copy of the whole record";
  EXPECT_EQ(VolumeStat("rmw_deferred"), deferred0 + 1);
  std::vector<uint8_t> out(model.size());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model) << "over the syncing copy";
  g->Open();
  sync.join();
  ASSERT_TRUE(synced.ok()) << synced.ToString();
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model) << "over the committed record";
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_EQ(VolumeStat("rmw_reads"), rmw0 + 1) << "completed by its sync";
  EXPECT_EQ(VolumeStat("rmw_held_bases"), held0 + 1)
      << "from the version held since T committed, not a read";
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model) << "after its sync";
  ExpectSameAfterReopen(v, "v", model);
}

// Runs `work` on a thread of its own (left in *other for the caller to
// join) and waits for it, 20 s at most (only a failure waits that long):
// whether it finished meanwhile. A test calls it from a hook that holds a
// sync at some point, to show the volume's writers and readers go on.
bool FinishesMeanwhile(std::thread* other, std::function<void()> work) {
  struct Done {
    Mutex mu;
    CondVar cv;
    bool done ARC_GUARDED_BY(mu) = false;
  };
  auto d = std::make_shared<Done>();
  *other = std::thread([d, work = std::move(work)] {
    work();
    MutexLock l(&d->mu);
    d->done = true;
    d->cv.SignalAll();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  MutexLock l(&d->mu);
  while (!d->done && std::chrono::steady_clock::now() < deadline) {
    (void)d->cv.WaitFor(&d->mu, deadline - std::chrono::steady_clock::now());
  }
  return d->done;
}

// A committed txg's records become cached versions without the volume's
// lock: a writer and a reader of the volume go on meanwhile (under the lock,
// publishing a txg of 12k records blocked them all for 12-29 ms).
TEST_F(PoolTest, WritersAndReadersGoOnWhileACommittedTxgIsPublished) {
  constexpr uint64_t kRecord = 4096;
  auto v = MakeVolume("v", 4 * kRecord, kRecord, "off");
  auto* impl = static_cast<volume::VolumeImpl*>(v.get());
  const std::vector<uint8_t> first = Pattern(2 * kRecord, 41), later = Pattern(kRecord, 42);
  ASSERT_TRUE(v->Write(0, first).ok());  // records 0 and 1, in txg T
  bool done_in_hook = false;
  Status write_status, read_status;
  std::vector<uint8_t> read(2 * kRecord);
  std::thread other;
  impl->SetPublishHookForTest([&](uint64_t) {
    if (other.joinable()) return;  // the first record's publication only
    done_in_hook = FinishesMeanwhile(&other, [&] {
      write_status = v->Write(2 * kRecord, later);  // txg T+1
      read_status = v->Read(0, read);               // T's records, being published
    });
  });
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(other.joinable()) << "the hook ran";
  other.join();
  impl->SetPublishHookForTest(nullptr);
  EXPECT_TRUE(done_in_hook) << "the write and the read waited for the publication";
  ASSERT_TRUE(write_status.ok()) << write_status.ToString();
  ASSERT_TRUE(read_status.ok()) << read_status.ToString();
  EXPECT_EQ(read, first);
  std::vector<uint8_t> model(4 * kRecord, 0);
  std::memcpy(model.data(), first.data(), first.size());
  std::memcpy(model.data() + 2 * kRecord, later.data(), later.size());
  ExpectSameAfterReopen(v, "v", model);
}

// A sync builds the whole copy of each partial record without the volume's
// lock and only swaps it in under the lock: a writer and a reader of the
// volume go on meanwhile (the completing threads run at the sync's low
// priority; filling the copies under the lock stalled writers up to 230 ms).
TEST_F(PoolTest, WritersAndReadersGoOnWhileASyncCompletesPartialCopies) {
  constexpr uint64_t kRecord = 64 * 1024;
  auto v = MakeVolume("v", 4 * kRecord, kRecord, "off");
  auto* impl = static_cast<volume::VolumeImpl*>(v.get());
  std::vector<uint8_t> model = Pattern(4 * kRecord, 51);
  ASSERT_TRUE(v->Write(0, model).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(pool_->DropCaches().ok());
  const int64_t rmw0 = VolumeStat("rmw_reads");
  const std::vector<uint8_t> piece = Pattern(4096, 52), later = Pattern(kRecord, 53);
  ASSERT_TRUE(v->Write(kRecord + 8192, piece).ok());  // a partial copy of record 1 in txg T
  std::memcpy(model.data() + kRecord + 8192, piece.data(), piece.size());
  bool done_in_hook = false;
  Status write_status, read_status;
  std::vector<uint8_t> read(kRecord);
  std::thread other;
  impl->SetCompleteHookForTest([&](uint64_t record) {
    EXPECT_EQ(record, 1u);
    done_in_hook = FinishesMeanwhile(&other, [&] {
      write_status = v->Write(2 * kRecord, later);  // txg T+1
      read_status = v->Read(0, read);               // committed, untouched
    });
  });
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(other.joinable()) << "the hook ran";
  other.join();
  impl->SetCompleteHookForTest(nullptr);
  EXPECT_TRUE(done_in_hook) << "the write and the read waited for the completion";
  EXPECT_EQ(VolumeStat("rmw_reads"), rmw0 + 1) << "one partial copy completed";
  ASSERT_TRUE(write_status.ok()) << write_status.ToString();
  ASSERT_TRUE(read_status.ok()) << read_status.ToString();
  EXPECT_TRUE(std::equal(read.begin(), read.end(), model.begin()));
  std::memcpy(model.data() + 2 * kRecord, later.data(), later.size());
  ExpectSameAfterReopen(v, "v", model);
}

// The ARC's key names a record, not a version of it. A reader that took
// the record's old block from the tree, then looked it up after a txg
// committed a newer version (published in the ARC, then evicted), read the
// old block and cached it: every later read of the record returned the
// older version (the kill stress's writers read back data they had
// overwritten). Such a read now goes to its reader only.
TEST_F(PoolTest, ARecordReadAcrossACommitDoesNotCacheTheOlderVersion) {
  constexpr uint64_t kRecord = 64 * 1024;
  auto v = MakeVolume("v", 2 * kRecord, kRecord, "off");
  const std::vector<uint8_t> older = Pattern(kRecord, 31), newer = Pattern(kRecord, 32);
  ASSERT_TRUE(v->Write(0, older).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  v.reset();
  Reopen();  // nothing cached
  v = *pool_->OpenVolume("v");
  auto* impl = static_cast<volume::VolumeImpl*>(v.get());
  Mutex mu;
  CondVar cv;
  bool paused = false, resume = false;
  impl->SetTreeReadHookForTest([&](uint64_t record, volume::VolumeImpl::TreeReadPoint point) {
    if (point != volume::VolumeImpl::TreeReadPoint::kBeforeLookup) return;
    MutexLock l(&mu);
    if (record != 0 || paused) return;  // pauses the first read of record 0 only
    paused = true;
    cv.SignalAll();
    while (!resume) cv.Wait(&mu);
  });
  const int64_t uncached0 = VolumeStat("reads_uncached");
  std::vector<uint8_t> raced(kRecord);
  Status raced_status;
  std::thread reader([&] { raced_status = v->Read(0, raced); });
  {
    MutexLock l(&mu);
    while (!paused) cv.Wait(&mu);
  }
  // The reader holds the older block's pointer. The record is rewritten,
  // committed (published in the ARC) and evicted before it looks it up.
  ASSERT_TRUE(v->Write(0, newer).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  pool_->arc().RemoveVolume(impl->info().guid);
  {
    MutexLock l(&mu);
    resume = true;
    cv.SignalAll();
  }
  reader.join();
  impl->SetTreeReadHookForTest(nullptr);
  ASSERT_TRUE(raced_status.ok()) << raced_status.ToString();
  EXPECT_TRUE(raced == older || raced == newer) << "the racing read returned neither version";
  EXPECT_EQ(VolumeStat("reads_uncached"), uncached0 + 1);
  std::vector<uint8_t> out(kRecord);
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_TRUE(out == newer) << "a later read found the older version cached";
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_TRUE(out == newer) << "again, from the cache";
  std::vector<uint8_t> model = newer;
  model.resize(2 * kRecord, 0);
  ExpectSameAfterReopen(v, "v", model);
}

// A reader that found no dirty copy of a record goes to the tree; a writer
// and a sync can get there first, leaving the tree pointing at the new
// block of a txg not yet committed (written, maybe not yet readable as the
// cached version). The read returned "Busy: record being written" to its
// caller (the pool concurrency test's readers, in 1 of ~500 runs); it now
// looks again and finds the syncing txg's copy.
TEST_F(PoolTest, AReadRacingTheFirstWriteOfASyncingRecordSeesAVersionNotBusy) {
  constexpr uint64_t kRecord = 16 * 1024;
  using Point = volume::VolumeImpl::TreeReadPoint;
  auto v = MakeVolume("v", 2 * kRecord, kRecord, "off");
  const std::vector<uint8_t> older = Pattern(kRecord, 51), newer = Pattern(kRecord, 52);
  ASSERT_TRUE(v->Write(0, older).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  v.reset();
  Reopen();  // nothing cached: the read goes to the tree
  v = *pool_->OpenVolume("v");
  auto* impl = static_cast<volume::VolumeImpl*>(v.get());
  Mutex mu;
  CondVar cv;
  bool reader_paused = false, reader_resume = false, sync_paused = false, sync_resume = false;
  auto pause = [&](bool* paused, const bool* resume) {
    MutexLock l(&mu);
    *paused = true;
    cv.SignalAll();
    while (!*resume) cv.Wait(&mu);
  };
  auto wait_for = [&](const bool* flag) {
    MutexLock l(&mu);
    while (!*flag) cv.Wait(&mu);
  };
  auto release = [&](bool* resume) {
    MutexLock l(&mu);
    *resume = true;
    cv.SignalAll();
  };
  // The reader pauses before its first tree read, with no dirty copy seen.
  impl->SetTreeReadHookForTest([&](uint64_t record, Point point) {
    if (record != 0 || point != Point::kBeforeTreeRead || reader_paused) return;
    pause(&reader_paused, &reader_resume);
  });
  std::vector<uint8_t> raced(kRecord);
  Status raced_status;
  std::thread reader([&] { raced_status = v->Read(0, raced); });
  wait_for(&reader_paused);
  // The record is rewritten and its txg synced up to its commit: the tree
  // points at the new block, the txg's copy is still there.
  impl->SetPublishHookForTest([&](uint64_t) {
    if (!sync_paused) pause(&sync_paused, &sync_resume);
  });
  ASSERT_TRUE(v->Write(0, newer).ok());
  Status synced;
  std::thread sync([&] { synced = pool_->Sync(); });
  wait_for(&sync_paused);
  release(&reader_resume);
  reader.join();
  release(&sync_resume);
  sync.join();
  impl->SetTreeReadHookForTest(nullptr);
  impl->SetPublishHookForTest(nullptr);
  ASSERT_TRUE(synced.ok()) << synced.ToString();
  ASSERT_TRUE(raced_status.ok()) << raced_status.ToString();
  EXPECT_TRUE(raced == newer) << "the read saw the older version after the tree moved on";
  std::vector<uint8_t> model = newer;
  model.resize(2 * kRecord, 0);
  ExpectSameAfterReopen(v, "v", model);
}

// A read of bytes a partial copy does not all know reads the committed
// record, then lays the newest copy's known bytes over it. Meanwhile (no
// commit, no tree change) the copy could be completed, here by writes that
// cover the record (or by its sync's CompletePartials), and the next txg
// make a partial copy over it that knows only its own bytes: the read laid
// that one over the committed record and returned bytes older than a write
// finished before it began (the kill stress's "holds op X, not op Y").
TEST_F(PoolTest, AReadAcrossACopyCompletedMeanwhileSeesTheCompletedCopy) {
  constexpr uint64_t kRecord = 64 * 1024, kBlock = 4096;
  auto v = MakeVolume("v", 2 * kRecord, kRecord, "off");
  std::vector<uint8_t> model = Pattern(2 * kRecord, 41);
  ASSERT_TRUE(v->Write(0, model).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  auto* impl = static_cast<volume::VolumeImpl*>(v.get());
  // Pauses the first committed-record read of each of records 0 and 1.
  Mutex mu;
  CondVar cv;
  bool paused[2] = {false, false}, resume[2] = {false, false};
  impl->SetTreeReadHookForTest([&](uint64_t record, volume::VolumeImpl::TreeReadPoint point) {
    if (point != volume::VolumeImpl::TreeReadPoint::kBeforeLookup) return;
    MutexLock l(&mu);
    if (record > 1 || paused[record]) return;
    paused[record] = true;
    cv.SignalAll();
    while (!resume[record]) cv.Wait(&mu);
  });
  auto wait_paused = [&](int r) {
    MutexLock l(&mu);
    while (!paused[r]) cv.Wait(&mu);
  };
  auto release = [&](int r) {
    MutexLock l(&mu);
    resume[r] = true;
    cv.SignalAll();
  };
  auto write = [&](uint64_t offset, uint64_t length, uint64_t seed) {
    std::vector<uint8_t> d = Pattern(length, seed);
    ASSERT_TRUE(v->Write(offset, d).ok());
    std::memcpy(model.data() + offset, d.data(), length);
  };
  // Txg T: partial copies of records 0 (block 2) and 1 (block 0).
  write(2 * kBlock, kBlock, 42);
  write(kRecord, kBlock, 43);
  const std::vector<uint8_t> before = model;
  // A read of blocks 1-2 of record 0: the copy knows block 2 only, so the
  // reader reads the committed record, and pauses there.
  std::vector<uint8_t> raced(2 * kBlock);
  Status raced_status;
  std::thread reader([&] { raced_status = v->Read(kBlock, raced); });
  wait_paused(0);
  // Still in T, the rest of record 0: its copy is whole now.
  write(0, 2 * kBlock, 44);
  write(3 * kBlock, kRecord - 3 * kBlock, 45);
  // T syncs, and pauses completing record 1's copy (before its tree
  // changes): T+1 is open and T's whole copy of record 0 stays.
  Status synced;
  std::thread sync([&] { synced = pool_->Sync(); });
  wait_paused(1);
  // T+1: a partial copy of record 0 over T's whole one, knowing block 10.
  write(10 * kBlock, kBlock, 46);
  release(0);
  reader.join();
  ASSERT_TRUE(raced_status.ok()) << raced_status.ToString();
  // Block 2 was written before the read began: its new bytes, not the
  // committed record's. Block 1 was written during the read: either.
  EXPECT_TRUE(std::equal(raced.begin() + kBlock, raced.end(), model.begin() + 2 * kBlock))
      << "block 2 read as the committed record's";
  EXPECT_TRUE(std::equal(raced.begin(), raced.begin() + kBlock, model.begin() + kBlock) ||
              std::equal(raced.begin(), raced.begin() + kBlock, before.begin() + kBlock));
  release(1);
  sync.join();
  ASSERT_TRUE(synced.ok()) << synced.ToString();
  impl->SetTreeReadHookForTest(nullptr);
  std::vector<uint8_t> out(model.size());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_TRUE(out == model);
  ASSERT_TRUE(pool_->Sync().ok());
  ExpectSameAfterReopen(v, "v", model);
}

TEST_F(PoolTest, PartialWritesReadTheRecordThemselvesWhenTold) {
  constexpr uint64_t kRecord = 64 * 1024;
  auto v = MakeVolume("v", 2 * kRecord, kRecord);
  std::vector<uint8_t> model = Pattern(2 * kRecord, 6);
  ASSERT_TRUE(v->Write(0, model).ok());
  v.reset();
  PoolOptions po;
  po.defer_partial_reads = false;
  Reopen({}, po);  // an empty cache
  v = *pool_->OpenVolume("v");
  std::vector<uint8_t> a = Pattern(3000, 7);
  ASSERT_TRUE(v->Write(kRecord + 10, a).ok());
  std::memcpy(model.data() + kRecord + 10, a.data(), a.size());
  auto snap = pool_->stats().TakeSnapshot();
  EXPECT_EQ(snap.Get("volumes", "rmw_reads"), 1) << "the writer read the record";
  EXPECT_EQ(snap.Get("volumes", "rmw_deferred"), 0);
  ASSERT_TRUE(pool_->Sync().ok());
  std::vector<uint8_t> out(model.size());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model);
}

TEST_F(PoolTest, AFragmentedPartialCopyIsCompletedByItsWriter) {
  constexpr uint64_t kRecord = 64 * 1024;
  auto v = MakeVolume("v", kRecord, kRecord);
  std::vector<uint8_t> model = Pattern(kRecord, 8);
  ASSERT_TRUE(v->Write(0, model).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(pool_->DropCaches().ok());
  // Bytes 0, 2, 4, ...: every piece a range of its own, until the copy has
  // too many and a writer reads the record to complete it.
  for (uint64_t off = 0; off < 400; off += 2) {
    const uint8_t byte = static_cast<uint8_t>(off * 7 + 1);
    ASSERT_TRUE(v->Write(off, std::span<const uint8_t>(&byte, 1)).ok());
    model[off] = byte;
  }
  EXPECT_EQ(pool_->stats().TakeSnapshot().Get("volumes", "rmw_reads"), 1);
  std::vector<uint8_t> out(model.size());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model) << "before the sync";
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_EQ(pool_->stats().TakeSnapshot().Get("volumes", "rmw_reads"), 1)
      << "the copy was whole at the sync";
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model) << "after the sync";
}

TEST_F(PoolTest, TrimAndZeroesMakeHolesAndFreeSpace) {
  auto v = MakeVolume("v", 4 * kMiB, 128 * 1024, "off");
  std::vector<uint8_t> d = Pattern(4 * kMiB, 7);
  ASSERT_TRUE(v->Write(0, d).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  const uint64_t full = pool_->Info().allocated_bytes;
  ASSERT_TRUE(v->Trim(1 * kMiB, 1 * kMiB).ok());
  ASSERT_TRUE(v->WriteZeroes(2 * kMiB, 512 * 1024).ok());
  ASSERT_TRUE(v->WriteZeroes(3 * kMiB, 256 * 1024, kZeroNoHole).ok());
  ASSERT_TRUE(v->Trim(100, 1000).ok());  // partial: zeroes bytes, keeps the record
  std::memset(d.data() + 100, 0, 1000);
  std::memset(d.data() + 1 * kMiB, 0, 1 * kMiB);
  std::memset(d.data() + 2 * kMiB, 0, 512 * 1024);
  std::memset(d.data() + 3 * kMiB, 0, 256 * 1024);
  for (int flushes = 0; flushes < 2; flushes++) {
    std::vector<uint8_t> out(d.size());
    ASSERT_TRUE(v->Read(0, out).ok());
    ASSERT_EQ(out, d);
    ASSERT_TRUE(pool_->Sync().ok());
  }
  std::vector<Extent> e;
  ASSERT_TRUE(v->BlockStatus(0, 4 * kMiB, &e).ok());
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].offset, 0u);
  EXPECT_FALSE(e[0].hole);
  EXPECT_TRUE(e[1].hole);
  EXPECT_EQ(e[1].offset, 1 * kMiB);
  EXPECT_EQ(e[1].length, 1 * kMiB);
  EXPECT_TRUE(e[2].zero);
  EXPECT_FALSE(e[2].hole);
  EXPECT_EQ(e[2].length, 512 * 1024u);
  EXPECT_FALSE(e[3].zero);  // NO_HOLE zeroes are real data
  // Freed space comes back after the two-txg deferral.
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(v->Write(4 * kMiB - 4096, std::vector<uint8_t>(4096, uint8_t(i + 1))).ok());
    ASSERT_TRUE(pool_->Sync().ok());
  }
  EXPECT_LT(pool_->Info().allocated_bytes, full - 1 * kMiB);
  ExpectClean();
}

// Frees wait two txgs; on a pool nobody writes to any more, the txg
// manager still syncs (at its timeout) until they are free, so the space
// comes back without another write.
TEST_F(PoolTest, AnIdlePoolGivesFreedSpaceBackWithoutAnotherWrite) {
  auto v = MakeVolume("v", 4 * kMiB, 128 * 1024, "off");
  ASSERT_TRUE(v->Write(0, Pattern(4 * kMiB, 9)).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  const uint64_t full = pool_->Info().allocated_bytes;
  v.reset();
  ASSERT_TRUE(pool_->Close().ok());
  pool_.reset();
  PoolOptions po;
  po.txg_timeout_ns = 100 * kNsPerMs;
  auto p = PoolImpl::OpenOnDevice(std::make_unique<DeviceRef>(dev_.get()), po);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  pool_ = std::move(*p);
  v = *pool_->OpenVolume("v");
  ASSERT_TRUE(v->Trim(0, 4 * kMiB).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_GT(pool_->Info().pending_free_bytes, 3 * kMiB);
  const uint64_t committed = pool_->Info().txg;
  // No write from here on: only the timeout's syncs may free the space.
  PoolInfo info;
  for (int i = 0; i < 1000; i++) {  // at most 10 s
    info = pool_->Info();
    if (info.pending_free_bytes == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(info.pending_free_bytes, 0u) << "frees still pending at txg " << info.txg;
  EXPECT_LT(info.allocated_bytes, full - 3 * kMiB);
  EXPECT_GT(info.txg, committed);
  ExpectClean();
}

TEST_F(PoolTest, DestroyFreesEverythingAndNamesAreChecked) {
  const uint64_t empty = pool_->Info().allocated_bytes;
  auto v = MakeVolume("gone", 4 * kMiB);
  ASSERT_TRUE(v->Write(0, Pattern(4 * kMiB, 3)).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_GT(pool_->Info().allocated_bytes, empty + 3 * kMiB);
  ASSERT_TRUE(pool_->DestroyVolume("gone").ok());
  EXPECT_EQ(v->Write(0, std::vector<uint8_t>(10)).code(), StatusCode::kAborted);
  EXPECT_EQ(pool_->DestroyVolume("gone").code(), StatusCode::kNotFound);
  auto w = MakeVolume("other", 1 * kMiB);
  for (int i = 0; i < 3; i++) ASSERT_TRUE(w->Write(0, Pattern(4096, i)).ok() && pool_->Sync().ok());
  EXPECT_LT(pool_->Info().allocated_bytes, empty + 1 * kMiB);
  VolumeOptions dup;
  dup.name = "other";
  dup.size_bytes = kMiB;
  EXPECT_EQ(pool_->CreateVolume(dup).code(), StatusCode::kAlreadyExists);
  dup.name = "bad name!";
  EXPECT_NE(pool_->CreateVolume(dup).message().find("name may hold only"), std::string::npos);
  dup.name = "rs";
  dup.record_size_bytes = 3000;
  EXPECT_NE(pool_->CreateVolume(dup).message().find("record size 3000"), std::string::npos);
  ExpectClean();
}

TEST_F(PoolTest, ChecksumMismatchIsAnErrorNamingTheBlock) {
  auto v = MakeVolume("v", 1 * kMiB, 128 * 1024, "off");
  ASSERT_TRUE(v->Write(0, Pattern(1 * kMiB, 9)).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  v.reset();
  // Find record 3's block and flip one bit of it on the device.
  auto bp = pool_->OpenVolume("v");
  auto tree_bp = static_cast<volume::VolumeImpl*>(bp->get())->tree().Get(3);
  ASSERT_TRUE(tree_bp.ok());
  const uint64_t at = tree_bp->offset_units * 4096 + 100;
  std::vector<uint8_t> byte(4096);
  ASSERT_TRUE(io::ReadSync(*dev_, at - 100, byte).ok());
  byte[100] ^= 0x10;
  ASSERT_TRUE(io::WriteSync(*dev_, at - 100, byte).ok());
  Reopen();
  v = *pool_->OpenVolume("v");
  std::vector<uint8_t> out(4096);
  Status s = v->Read(3 * 128 * 1024 + 10, out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("volume v offset 393226 (record 3)"), std::string::npos) << s.ToString();
  EXPECT_TRUE(v->Read(0, out).ok()) << "other records still read";
  PoolImpl::Census c = pool_->Check();
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("volume v record 3"), std::string::npos) << c.problems[0];
}

TEST_F(PoolTest, DamagedNewestUberblockFallsBack) {
  auto v = MakeVolume("v", 1 * kMiB);
  std::vector<uint8_t> old_data = Pattern(4096, 1), new_data = Pattern(4096, 2);
  ASSERT_TRUE(v->Write(0, old_data).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(v->Write(0, new_data).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  const uint64_t newest = pool_->Info().txg;
  v.reset();
  ASSERT_TRUE(pool_->Close().ok());
  pool_.reset();
  // Tear the newest uberblock in both rings.
  auto layout = *format::ComputeLayout(dev_->size_bytes(), 4096);
  for (auto pos : {format::LabelPosition::kFront, format::LabelPosition::kBack}) {
    std::vector<uint8_t> junk(4096, 0xee);
    ASSERT_TRUE(io::WriteSync(*dev_, layout.SlotOffset(pos, newest % 128), junk).ok());
  }
  Reopen();
  EXPECT_EQ(pool_->open_report().txg, newest - 1);
  ASSERT_FALSE(pool_->open_report().notes.empty());
  v = *pool_->OpenVolume("v");
  std::vector<uint8_t> out(4096);
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, old_data) << "the pool is exactly the previous txg";
  ExpectClean();
}

TEST_F(PoolTest, FullPoolSaysNoSpaceAndRecoversAfterTrim) {
  auto v = MakeVolume("big", 128 * kMiB, 128 * 1024, "off");  // larger than the pool
  std::vector<uint8_t> chunk = Pattern(4 * kMiB, 5);
  Status s;
  for (uint64_t off = 0; off < 128 * kMiB && s.ok(); off += chunk.size()) {
    s = v->Write(off, chunk);
    if (s.ok()) s = pool_->Sync();
  }
  ASSERT_EQ(s.code(), StatusCode::kNoSpace) << s.ToString();
  EXPECT_NE(s.message().find("reserved for metadata"), std::string::npos) << s.ToString();
  // The write was refused before joining a txg: the pool itself is fine.
  ASSERT_TRUE(pool_->Sync().ok());
  ExpectClean();
  ASSERT_TRUE(v->Trim(0, 32 * kMiB).ok());
  Status flushed = pool_->Sync();
  ASSERT_TRUE(flushed.ok()) << "frees commit on a full pool: " << flushed.ToString();
  // The freed space is reusable once two more txgs have committed.
  for (int i = 0; i < 3; i++) {
    ASSERT_TRUE(v->Write(64 * kMiB, std::vector<uint8_t>(4096, 1)).ok());
    ASSERT_TRUE(pool_->Sync().ok());
  }
  EXPECT_TRUE(v->Write(0, chunk).ok());
  EXPECT_TRUE(pool_->Sync().ok());
  Reopen();
  ExpectClean();
}

TEST_F(PoolTest, ManyTxgsCondenseTheSpaceLog) {
  auto v = MakeVolume("v", 4 * kMiB, 4096);
  SeededRandom rnd(11);
  std::vector<uint8_t> model(4 * kMiB, 0);
  for (int txg = 0; txg < 150; txg++) {
    for (int i = 0; i < 5; i++) {
      uint64_t off = rnd.Uniform(1024) * 4096;
      std::vector<uint8_t> d = Pattern(4096, rnd.Next());
      ASSERT_TRUE(v->Write(off, d).ok());
      std::memcpy(model.data() + off, d.data(), 4096);
    }
    ASSERT_TRUE(pool_->Sync().ok());
  }
  v.reset();
  Reopen();
  v = *pool_->OpenVolume("v");
  std::vector<uint8_t> out(model.size());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model);
  PoolImpl::Census c = pool_->Check();
  EXPECT_LT(c.log_blocks, 70u) << "the chain was condensed";
  for (const auto& p : c.problems) ADD_FAILURE() << p;
}

}  // namespace
}  // namespace arcstore::pool

namespace arcstore::pool {
namespace {

TEST_F(PoolTest, CommittedRecordsAreServedByTheArc) {
  // No stream prefetcher: its read-ahead runs on the work queue and may land
  // after a DropCaches below, adding reads the counts here do not expect.
  PoolOptions po;
  po.prefetch = false;
  Reopen({}, po);
  auto v = MakeVolume("v", 2 * kMiB, 128 * 1024);
  std::vector<uint8_t> d = Pattern(2 * kMiB, 4);
  ASSERT_TRUE(v->Write(0, d).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  auto reads = [&] { return pool_->stats().TakeSnapshot().Get("volumes", "record_reads"); };
  // A committed record is found in the handle cache, else in the ARC.
  auto hits = [&] {
    auto snap = pool_->stats().TakeSnapshot();
    return snap.Get("arcstats", "hits") + snap.Get("handle_cache", "hits");
  };
  std::vector<uint8_t> out(d.size());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, d);
  EXPECT_EQ(reads(), 0) << "written records were published to the ARC at commit";
  ASSERT_TRUE(pool_->DropCaches().ok());
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, d);
  EXPECT_EQ(reads(), 16) << "a cold cache reads every record once";
  const int64_t before = hits();
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(reads(), 16);
  EXPECT_EQ(hits() - before, 16);
  // Prefetch (NBD CACHE) fills the ARC without returning data.
  ASSERT_TRUE(pool_->DropCaches().ok());
  ASSERT_TRUE(v->Cache(0, 1 * kMiB).ok());
  EXPECT_EQ(reads(), 24);
  EXPECT_GT(pool_->stats().TakeSnapshot().Get("arcstats", "prefetch_data_misses"), 0);
}

}  // namespace
}  // namespace arcstore::pool

namespace arcstore::pool {
namespace {

TEST_F(PoolTest, ManyOperationsInFlightThroughSubmit) {
  auto v = MakeVolume("v", 8 * kMiB, 16 * 1024);
  const int n = 512;
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < n; i++) data.push_back(Pattern(16 * 1024, i));
  Mutex mu;
  CondVar cv;
  int completed = 0;
  std::vector<Status> results(n);
  auto wait_all = [&] {
    MutexLock l(&mu);
    while (completed < n) cv.Wait(&mu);
  };
  for (int i = 0; i < n; i++) {
    v->SubmitWrite(uint64_t(i) * 16 * 1024, data[i], i % 64 == 0 ? kFua : kWriteNone,
                   [&, i](Status s) {
                     MutexLock l(&mu);
                     results[i] = std::move(s);
                     completed++;
                     cv.SignalAll();
                   });
  }
  wait_all();
  for (const Status& s : results) ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<std::vector<uint8_t>> back(n, std::vector<uint8_t>(16 * 1024));
  completed = 0;
  for (int i = 0; i < n; i++) {
    v->SubmitRead(uint64_t(i) * 16 * 1024, back[i], [&, i](Status s) {
      MutexLock l(&mu);
      results[i] = std::move(s);
      completed++;
      cv.SignalAll();
    });
  }
  wait_all();
  for (int i = 0; i < n; i++) {
    ASSERT_TRUE(results[i].ok());
    ASSERT_EQ(back[i], data[i]) << "block " << i;
  }
}

}  // namespace
}  // namespace arcstore::pool

namespace arcstore::pool {
namespace {

TEST_F(PoolTest, SequentialReadsArePrefetched) {
  auto v = MakeVolume("seq", 4 * kMiB, 64 * 1024);
  ASSERT_TRUE(v->Write(0, Pattern(4 * kMiB, 8)).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(pool_->DropCaches().ok());
  auto stat = [&](const char* name) { return pool_->stats().TakeSnapshot().Get("arcstats", name); };
  std::vector<uint8_t> buf(64 * 1024);
  // Three records in a row start a stream: records 2..9 are read ahead.
  for (uint64_t r = 0; r < 3; r++) ASSERT_TRUE(v->Read(r * buf.size(), buf).ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (stat("prefetch_data_misses") + stat("prefetch_data_hits") +
                 stat("prefetch_data_iohits") < 8 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_GE(stat("prefetch_data_misses"), 6) << "the read-ahead went to disk";
  const int64_t misses = stat("demand_data_misses");
  for (uint64_t r = 3; r < 10; r++) ASSERT_TRUE(v->Read(r * buf.size(), buf).ok());
  EXPECT_EQ(stat("demand_data_misses"), misses) << "records 3..9 were already in the cache";
}

}  // namespace
}  // namespace arcstore::pool

namespace arcstore::pool {
namespace {

// The device as a power cut right now would leave it (a memory device
// loses nothing it was given), opened as a new pool.
std::unique_ptr<PoolImpl> OpenCopy(io::MemoryDevice& dev, const PoolOptions& po = {}) {
  io::MemoryDeviceOptions o;
  o.size_bytes = dev.size_bytes();
  auto copy = io::MemoryDevice::FromImage(o, dev.Contents());
  EXPECT_TRUE(copy.ok());
  auto p = PoolImpl::OpenOnDevice(std::move(*copy), po);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(*p) : nullptr;
}

// A copy of the device opens at `txg`, its volume "v" holds write i
// (Pattern(4096, i)) at stride * i for each of the first `writes`, and the
// census is clean; *replayed is how many log records the open replayed.
void PoolTest::ExpectWritesAfterAPowerCut(uint64_t txg, int writes, uint64_t stride,
                                          uint64_t* replayed) {
  std::unique_ptr<PoolImpl> after = OpenCopy(*dev_);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->open_report().txg, txg);
  *replayed = after->open_report().log_records_replayed;
  auto w = *after->OpenVolume("v");
  std::vector<uint8_t> out(4096);
  for (int i = 0; i < writes; i++) {
    ASSERT_TRUE(w->Read(stride * i, out).ok());
    ASSERT_EQ(out, Pattern(4096, i)) << "write " << i;
  }
  PoolImpl::Census c = after->Check();
  for (const auto& p : c.problems) ADD_FAILURE() << p;
}

TEST_F(PoolTest, FlushAndFuaCommitTheLogWithoutATxgAndReplayAtOpen) {
  auto v = MakeVolume("v", 8 * kMiB, 16 * 1024);
  const uint64_t txg = pool_->Info().txg;
  std::vector<uint8_t> a = Pattern(40000, 7), b = Pattern(4096, 8);
  ASSERT_TRUE(v->Write(1000, a).ok());
  ASSERT_TRUE(v->Trim(100000, 20000).ok());
  ASSERT_TRUE(v->Flush().ok());
  ASSERT_TRUE(v->Write(200000, b, kFua).ok());
  EXPECT_EQ(pool_->Info().txg, txg) << "a flush must not sync a txg";
  stats::Snapshot snap = pool_->stats().TakeSnapshot();
  EXPECT_EQ(snap.Get("zil", "commits"), 2);
  // Each commit was one log block: one FUA write, no flush.
  EXPECT_EQ(snap.Get("zil", "flushes") + snap.Get("zil", "fua_writes"), 2);
  EXPECT_EQ(snap.Get("zil", "fallback_syncs"), 0);

  std::unique_ptr<PoolImpl> after = OpenCopy(*dev_);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->open_report().txg, txg);
  EXPECT_GE(after->open_report().log_records_replayed, 5u);  // 4 + 2 + 1 pieces at least
  EXPECT_EQ(after->stats().TakeSnapshot().Get("zil", "replayed_records"),
            static_cast<int64_t>(after->open_report().log_records_replayed));
  auto w = *after->OpenVolume("v");
  std::vector<uint8_t> out(a.size());
  ASSERT_TRUE(w->Read(1000, out).ok());
  EXPECT_EQ(out, a);
  out.assign(20000, 1);
  ASSERT_TRUE(w->Read(100000, out).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(20000, 0));
  out.resize(b.size());
  ASSERT_TRUE(w->Read(200000, out).ok());
  EXPECT_EQ(out, b);
  PoolImpl::Census c = after->Check();
  for (const auto& p : c.problems) ADD_FAILURE() << p;
  // The replayed changes were synced at open: opening again replays nothing.
  w.reset();
  after.reset();
}

TEST_F(PoolTest, AWholeRecordIsLoggedByReferenceAndNeverChangedUnderTheLog) {
  constexpr uint32_t kRecord = 16 * 1024;
  auto v = MakeVolume("v", 1 * kMiB, kRecord);
  auto held_by_log = [&] {
    return pool_->stats().TakeSnapshot().Get("arcstats", "held_bytes_intent_log", -1);
  };
  const std::vector<uint8_t> a = Pattern(kRecord, 1), b = Pattern(100, 2);
  const std::vector<uint8_t> c = Pattern(kRecord, 3), d = Pattern(kRecord, 4);
  // Record 0: a whole write, logged by a hold on its dirty buffer (no
  // copy); then a partial write into it, which must copy the buffer first.
  ASSERT_TRUE(v->Write(0, a).ok());
  EXPECT_EQ(held_by_log(), kRecord);
  ASSERT_TRUE(v->Write(1000, b).ok());
  EXPECT_EQ(VolumeStat("log_shared_copies"), 1);
  // Record 1: a whole write, then a whole overwrite (a new buffer, no copy).
  ASSERT_TRUE(v->Write(kRecord, c).ok());
  ASSERT_TRUE(v->Write(kRecord, d).ok());
  EXPECT_EQ(VolumeStat("log_shared_copies"), 2);
  EXPECT_EQ(held_by_log(), 3 * kRecord);  // a, c and d; b is a copy
  std::vector<uint8_t> model = a;
  std::copy(b.begin(), b.end(), model.begin() + 1000);
  model.insert(model.end(), d.begin(), d.end());
  std::vector<uint8_t> out(2 * kRecord);
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_EQ(out, model);
  // The commit copies the held bytes into its block and lets them go.
  ASSERT_TRUE(v->Flush().ok());
  EXPECT_EQ(held_by_log(), 0);
  EXPECT_EQ(pool_->stats().TakeSnapshot().Get("zil", "fallback_syncs"), 0);

  // Each logged record holds the bytes of its own write, not a later one's.
  Result<LogOnDevice> log = ReadLogOnDevice(dev_.get());
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  std::vector<std::vector<uint8_t>> logged;
  for (const format::LogRecord& r : log->chain.records) logged.push_back(r.data);
  ASSERT_EQ(logged.size(), 4u);
  EXPECT_EQ(logged[0], a);
  EXPECT_EQ(logged[1], b);
  EXPECT_EQ(logged[2], c);
  EXPECT_EQ(logged[3], d);

  // A record held by the log when its txg commits is let go of before the
  // volume publishes it to the ARC (which takes a buffer with no other hold).
  ASSERT_TRUE(v->Write(2 * kRecord, c).ok());
  EXPECT_EQ(held_by_log(), kRecord);
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_EQ(held_by_log(), 0);
  ASSERT_TRUE(v->Read(2 * kRecord, std::span(out).first(kRecord)).ok());
  EXPECT_TRUE(std::equal(c.begin(), c.end(), out.begin()));

  std::unique_ptr<PoolImpl> after = OpenCopy(*dev_);
  ASSERT_NE(after, nullptr);
  auto w = *after->OpenVolume("v");
  ASSERT_TRUE(w->Read(0, out).ok());
  EXPECT_EQ(out, model) << "after replay";
}

TEST_F(PoolTest, AReadOnlyOpenAppliesTheLogInMemoryAndWritesNothing) {
  auto v = MakeVolume("v", 8 * kMiB, 16 * 1024);
  const uint64_t txg = pool_->Info().txg;
  std::vector<uint8_t> a = Pattern(40000, 11), b = Pattern(3000, 12);
  ASSERT_TRUE(v->Write(1000, a).ok());
  ASSERT_TRUE(v->Trim(16384 * 8, 16384).ok());
  ASSERT_TRUE(v->Write(300000, b, kFua).ok());
  ASSERT_EQ(pool_->Info().txg, txg) << "the changes are only in the log";
  const std::vector<uint8_t> image = dev_->Contents();

  io::MemoryDeviceOptions o;
  o.size_bytes = dev_->size_bytes();
  auto copy = io::MemoryDevice::FromImage(o, image);
  ASSERT_TRUE(copy.ok());
  io::MemoryDevice* device = copy->get();
  PoolOptions ro;
  ro.read_only = true;
  auto opened = PoolImpl::OpenOnDevice(std::make_unique<DeviceRef>(device), ro);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<PoolImpl> p = std::move(*opened);
  EXPECT_EQ(p->open_report().txg, txg);
  EXPECT_GE(p->open_report().log_records_replayed, 4u);
  auto w = *p->OpenVolume("v");
  std::vector<uint8_t> out(a.size());
  ASSERT_TRUE(w->Read(1000, out).ok());
  EXPECT_EQ(out, a);
  out.assign(16384, 1);
  ASSERT_TRUE(w->Read(16384 * 8, out).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(16384, 0));
  out.resize(b.size());
  ASSERT_TRUE(w->Read(300000, out).ok());
  EXPECT_EQ(out, b);
  EXPECT_FALSE(w->Write(0, b).ok()) << "still read-only";
  EXPECT_TRUE(w->Flush().ok());
  w.reset();
  ASSERT_TRUE(p->Close().ok());
  p.reset();
  EXPECT_TRUE((*copy)->Contents() == image) << "a read-only open wrote to the device";

  // The log is still there for a writable open, which writes it.
  std::unique_ptr<PoolImpl> after = OpenCopy(**copy);
  ASSERT_NE(after, nullptr);
  EXPECT_GE(after->open_report().log_records_replayed, 4u);
  auto x = *after->OpenVolume("v");
  out.resize(a.size());
  ASSERT_TRUE(x->Read(1000, out).ok());
  EXPECT_EQ(out, a);
}

TEST_F(PoolTest, WithoutTheLogAFlushSyncsATxg) {
  pool_.reset();
  PoolOptions po;
  po.intent_log = false;
  auto p = PoolImpl::OpenOnDevice(std::make_unique<DeviceRef>(dev_.get()), po);
  ASSERT_TRUE(p.ok());
  pool_ = std::move(*p);
  auto v = MakeVolume("v", 1 * kMiB);
  const uint64_t txg = pool_->Info().txg;
  ASSERT_TRUE(v->Write(0, Pattern(4096, 1)).ok());
  ASSERT_TRUE(v->Flush().ok());
  EXPECT_GT(pool_->Info().txg, txg);
  EXPECT_EQ(pool_->stats().TakeSnapshot().Get("zil", "commits"), 0);
}

// Flush-heavy work with a long txg timeout: the log asks for txg syncs
// (reason log_space) as it fills its arena, and everything stays durable.
TEST_F(PoolTest, AFillingLogArenaAsksForTxgSyncs) {
  auto v = MakeVolume("v", 8 * kMiB, 4096);
  constexpr int kWrites = 1000;  // 8 MiB of log blocks through a 4 MiB arena
  for (int i = 0; i < kWrites; i++) {
    ASSERT_TRUE(v->Write(i * 4096, Pattern(4096, i)).ok());
    ASSERT_TRUE(v->Flush().ok());
  }
  stats::Snapshot snap = pool_->stats().TakeSnapshot();
  EXPECT_GE(snap.Get("txg", "syncs_log_space"), 1);  // none without the kick
  EXPECT_GE(snap.Get("zil", "sync_kicks"), snap.Get("txg", "syncs_log_space"));
  EXPECT_EQ(snap.Get("zil", "commit_requests"), kWrites);
  std::unique_ptr<PoolImpl> after = OpenCopy(*dev_);
  ASSERT_NE(after, nullptr);
  auto w = *after->OpenVolume("v");
  for (int i = 0; i < kWrites; i++) {
    std::vector<uint8_t> out(4096);
    ASSERT_TRUE(w->Read(i * 4096, out).ok());
    ASSERT_EQ(out, Pattern(4096, i)) << "write " << i;
  }
}

// A record rewritten in the open txg adds no dirty bytes: a working set
// below the sync kick (txg_sync_kick_percent of dirty_max), rewritten many
// times, stays in one txg and reaches the device once; the same working
// set above a lower kick makes the txg go early.
TEST_F(PoolTest, RewritesOfAWorkingSetBelowTheKickReachTheDiskOnce) {
  constexpr uint32_t kRecord = 64 * 1024;
  constexpr uint64_t kWorkingSet = 4 * kMiB;
  constexpr int kPasses = 8;
  // Returns the txgs the passes made, after a Sync() commits them.
  auto run = [&](uint32_t kick_percent) -> std::vector<txg::TxgRecord> {
    PoolOptions po;
    po.dirty_max_bytes = 16 * kMiB;  // a 30% kick is 4.8 MiB, 20% is 3.2 MiB
    po.txg_sync_kick_percent = kick_percent;
    po.arc_max_bytes = 64 * kMiB;
    po.arc_min_bytes = 64 * kMiB;  // the ARC's dirty limit (c/2) is out of reach
    po.intent_log_sync_kick_percent = 0;
    po.space_sync_kick_percent = 0;
    Reopen({}, po);
    const std::string name = "v" + std::to_string(kick_percent);
    auto v = MakeVolume(name, 16 * kMiB, kRecord, "off");
    const uint64_t before = pool_->txgs().last_committed_txg();
    for (int pass = 0; pass < kPasses; pass++) {
      EXPECT_TRUE(v->Write(0, Pattern(kWorkingSet, pass)).ok());
    }
    EXPECT_TRUE(pool_->Sync().ok());
    std::vector<uint8_t> out(kWorkingSet);
    EXPECT_TRUE(v->Read(0, out).ok());
    EXPECT_EQ(out, Pattern(kWorkingSet, kPasses - 1)) << "kick " << kick_percent;
    std::vector<txg::TxgRecord> made;
    for (const txg::TxgRecord& r : pool_->txgs().History()) {
      if (r.txg > before && r.ndirty_bytes > 0) made.push_back(r);
    }
    return made;
  };

  const std::vector<txg::TxgRecord> below = run(30);
  ASSERT_EQ(below.size(), 1u) << "the working set stays in one txg";
  EXPECT_EQ(below[0].ndirty_bytes, kWorkingSet) << "rewrites add no dirty bytes";
  EXPECT_NE(below[0].reason, txg::SyncReason::kDirtyThreshold);
  EXPECT_GE(below[0].nwritten_bytes, kWorkingSet);
  EXPECT_LT(below[0].nwritten_bytes, 2 * kWorkingSet) << "each record written once";

  const std::vector<txg::TxgRecord> above = run(20);
  ASSERT_GE(above.size(), 2u) << "a kick below the working set ends txgs early";
  EXPECT_EQ(above[0].reason, txg::SyncReason::kDirtyThreshold);
  uint64_t written = 0;
  for (const txg::TxgRecord& r : above) written += r.nwritten_bytes;
  EXPECT_GT(written, 2 * kWorkingSet);
}

// The hint the NBD server asks before it runs a FLUSH on a connection's
// thread (Volume::MayWait of a flush): a flush whose changes the log holds
// writes a log block; once the log dropped copies past its cap the flush
// syncs a txg, and the hint says so until a txg holds every dropped change.
TEST_F(PoolTest, AFlushSaysWhenItWouldSyncATxg) {
  PoolOptions po;
  po.dirty_max_bytes = 16 * kMiB;  // the log keeps 1 MiB of changes; the kick is 4.8 MiB
  po.arc_max_bytes = 64 * kMiB;
  po.arc_min_bytes = 64 * kMiB;
  po.intent_log_sync_kick_percent = 0;
  po.intent_log_spill_percent = 0;  // the copies run into the cap
  po.space_sync_kick_percent = 0;
  Reopen({}, po);
  auto v = MakeVolume("v", 16 * kMiB, 8192, "off");
  auto stat = [&](const char* name) { return pool_->stats().TakeSnapshot().Get("zil", name); };
  EXPECT_FALSE(v->MayWait(VolumeOp::kFlush, 0, 0)) << "nothing to make durable";
  ASSERT_TRUE(v->Write(0, Pattern(4096, 1)).ok());
  EXPECT_FALSE(v->MayWait(VolumeOp::kFlush, 0, 0)) << "the commit writes a log block";
  // 2 MiB of half-record writes (4 MiB of dirty records, below the kick).
  for (uint64_t i = 1; i <= 512; i++) ASSERT_TRUE(v->Write(i * 8192, Pattern(4096, i)).ok());
  ASSERT_GT(stat("dropped_copies"), 0);
  EXPECT_TRUE(v->MayWait(VolumeOp::kFlush, 0, 0));
  const uint64_t txg = pool_->txgs().last_committed_txg();
  ASSERT_TRUE(v->Flush().ok());
  EXPECT_GT(pool_->txgs().last_committed_txg(), txg) << "the flush synced a txg";
  EXPECT_EQ(stat("fallback_syncs"), 1);
  EXPECT_FALSE(v->MayWait(VolumeOp::kFlush, 0, 0));
  ASSERT_TRUE(v->Write(0, Pattern(4096, 2)).ok());
  EXPECT_FALSE(v->MayWait(VolumeOp::kFlush, 0, 0)) << "the log takes copies again";
  ASSERT_TRUE(v->Flush().ok());
  EXPECT_EQ(stat("fallback_syncs"), 1);
}

// Small writes with no flush: past the spill share the log's writer
// writes their copies to the arena, so none is dropped at the cap and no
// txg is synced for them. A power cut then finds them in the log: the open
// replays every spilled write, in order, and the pool checks clean.
TEST_F(PoolTest, SpilledWritesAreInTheLogAtAPowerCut) {
  PoolOptions po;
  po.dirty_max_bytes = 16 * kMiB;  // the log keeps 1 MiB of copies; a spill is due at 256 KiB
  po.arc_max_bytes = 64 * kMiB;
  po.arc_min_bytes = 64 * kMiB;
  po.intent_log_sync_kick_percent = 0;
  po.space_sync_kick_percent = 0;
  Reopen({}, po);
  auto v = MakeVolume("v", 16 * kMiB, 8192, "off");
  auto stat = [&](const char* name) { return pool_->stats().TakeSnapshot().Get("zil", name); };
  const uint64_t txg = pool_->txgs().last_committed_txg();
  constexpr int kWrites = 400;  // 1.6 MiB of half-record writes: the arena (4 MiB) has room
  for (int i = 0; i < kWrites; i++) {
    ASSERT_TRUE(v->Write(8192 * i, Pattern(4096, i)).ok());
    // Pace the writes to the spills, so that none reaches the cap.
    if (stat("pending_bytes") >= 256 * 1024) {
      ASSERT_TRUE(arcstore::testing::WaitUntil([&] { return stat("pending_bytes") < 256 * 1024; }))
          << "no spill after write " << i;
    }
  }
  EXPECT_GE(stat("spills"), 4);
  EXPECT_EQ(stat("dropped_copies"), 0);
  EXPECT_EQ(stat("fallback_syncs"), 0);
  EXPECT_EQ(pool_->txgs().last_committed_txg(), txg) << "a spill syncs no txg";
  const int64_t spilled = stat("records");
  ASSERT_GT(spilled, kWrites / 2);

  uint64_t replayed = 0;
  ExpectWritesAfterAPowerCut(txg, static_cast<int>(spilled), 8192, &replayed);
  EXPECT_GE(replayed, static_cast<uint64_t>(spilled));
}

// Writes each followed by a flush, with early log writes on: the log's
// thread writes most of them before their flush comes, and every flushed
// write is in the log at a power cut (an image taken after the last
// flush), in order; the census is clean.
TEST_F(PoolTest, EarlyWrittenChangesAreInTheLogAtAPowerCut) {
  auto v = EarlyWritingVolume();
  auto stat = [&](const char* name) { return pool_->stats().TakeSnapshot().Get("zil", name); };
  const uint64_t txg = pool_->txgs().last_committed_txg();
  constexpr int kWrites = 200;
  for (int i = 0; i < kWrites; i++) {
    ASSERT_TRUE(v->Write(4096 * i, Pattern(4096, i)).ok());
    ASSERT_TRUE(v->Flush().ok());
  }
  EXPECT_GT(stat("early_writes"), 0);
  EXPECT_EQ(stat("fallback_syncs"), 0);
  EXPECT_EQ(pool_->txgs().last_committed_txg(), txg);

  uint64_t replayed = 0;
  ExpectWritesAfterAPowerCut(txg, kWrites, 4096, &replayed);
  EXPECT_EQ(replayed, static_cast<uint64_t>(kWrites));
}

// A thread that runs its writes itself and registers with the volume
// (SetCallerThread, as the NBD reader does) has the early log batch its
// write makes due left to it: nothing is asked of the log's writer, its
// BeforeCallerWaits writes the batch, the FLUSH after it finds the write
// durable, and every write is in the log at a power cut.
TEST_F(PoolTest, ACallerThreadWritesTheEarlyBatchItsWriteLeft) {
  auto v = EarlyWritingVolume();
  auto stat = [&](const char* name) { return pool_->stats().TakeSnapshot().Get("zil", name); };
  const uint64_t txg = pool_->txgs().last_committed_txg();
  v->SetCallerThread(true);
  constexpr int kWrites = 20;
  for (int i = 0; i < kWrites; i++) {
    ASSERT_TRUE(v->Write(4096 * i, Pattern(4096, i)).ok());
    const int64_t early = std::max(i - 1, 0);  // the first write comes before any commit
    EXPECT_EQ(stat("early_writes"), early) << "the writer was asked for write " << i;
    v->BeforeCallerWaits();
    EXPECT_EQ(stat("early_writes"), i == 0 ? 0 : early + 1) << "write " << i;
    ASSERT_TRUE(v->Flush().ok());
  }
  v->SetCallerThread(false);
  EXPECT_EQ(stat("commits"), kWrites) << "a FLUSH wrote its write again";
  EXPECT_EQ(stat("fallback_syncs"), 0);
  EXPECT_EQ(pool_->txgs().last_committed_txg(), txg);

  uint64_t replayed = 0;
  ExpectWritesAfterAPowerCut(txg, kWrites, 4096, &replayed);
  EXPECT_EQ(replayed, static_cast<uint64_t>(kWrites));
}

TEST_F(PoolTest, ConcurrentFlushesAreAllDurableWithoutTxgSyncs) {
  auto v = MakeVolume("v", 8 * kMiB, 4096);
  constexpr int kThreads = 8, kEach = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; i++) {
        ASSERT_TRUE(v->Write((t * kEach + i) * 4096, Pattern(4096, t * 1000 + i)).ok());
        ASSERT_TRUE(v->Flush().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  stats::Snapshot snap = pool_->stats().TakeSnapshot();
  // Every flush was served (by its own commit or by a batch); none by a txg.
  EXPECT_EQ(snap.Get("zil", "commit_requests"), kThreads * kEach);
  EXPECT_EQ(snap.Get("zil", "fallback_syncs"), 0);
  EXPECT_LE(snap.Get("zil", "flushes"), kThreads * kEach);
  std::unique_ptr<PoolImpl> after = OpenCopy(*dev_);
  ASSERT_NE(after, nullptr);
  auto w = *after->OpenVolume("v");
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kEach; i++) {
      std::vector<uint8_t> out(4096);
      ASSERT_TRUE(w->Read((t * kEach + i) * 4096, out).ok());
      ASSERT_EQ(out, Pattern(4096, t * 1000 + i)) << "thread " << t << " write " << i;
    }
  }
}

}  // namespace
}  // namespace arcstore::pool

namespace arcstore::pool {
namespace {

// Fills a PreparedWrite's pieces, in order, with `bytes`.
void Fill(PreparedWrite* p, std::span<const uint8_t> bytes) {
  size_t at = 0;
  for (std::span<uint8_t> piece : p->pieces()) {
    std::memcpy(piece.data(), bytes.data() + at, piece.size());
    at += piece.size();
  }
  ASSERT_EQ(at, bytes.size()) << "the pieces cover the write exactly";
}

TEST_F(PoolTest, PreparedWritesAdoptTheirRecordBuffersAndReadLikePlainWrites) {
  constexpr uint32_t kRecord = 16 * 1024;
  const uint64_t size = 1 * kMiB + 5120;  // a short last record
  auto v = MakeVolume("v", size, kRecord);
  std::vector<uint8_t> model(size, 0);
  SeededRandom random(20261201);
  int64_t adoptable = 0;
  for (int op = 0; op < 300; op++) {
    const uint64_t offset = random.Uniform(size);
    const uint64_t length = 1 + random.Uniform(std::min<uint64_t>(size - offset, 100000));
    const std::vector<uint8_t> bytes = Pattern(length, 1000 + op);
    const uint32_t flags = random.Uniform(8) == 0 ? kFua : kWriteNone;
    if (op % 3 == 2) {
      ASSERT_TRUE(v->Write(offset, bytes, flags).ok());
    } else {
      std::unique_ptr<PreparedWrite> p = v->PrepareWrite(offset, length);
      ASSERT_EQ(p->offset(), offset);
      ASSERT_EQ(p->length(), length);
      // One piece per record; the whole full-size records are their own.
      uint64_t at = offset;
      for (std::span<uint8_t> piece : p->pieces()) {
        ASSERT_EQ(piece.size(), std::min<uint64_t>(kRecord - at % kRecord, offset + length - at));
        if (at % kRecord == 0 && piece.size() == kRecord) adoptable++;
        at += piece.size();
      }
      Fill(p.get(), bytes);
      if (op % 3 == 0) {
        ASSERT_TRUE(v->WritePrepared(std::move(p), flags).ok());
      } else {
        std::promise<Status> done;
        v->SubmitPrepared(std::move(p), flags, [&](Status s) { done.set_value(std::move(s)); });
        ASSERT_TRUE(done.get_future().get().ok());
      }
    }
    std::copy(bytes.begin(), bytes.end(), model.begin() + static_cast<ptrdiff_t>(offset));
    if (op % 50 == 49) ASSERT_TRUE(pool_->Sync().ok());
    if (op % 17 == 0) ASSERT_TRUE(v->Flush().ok());
    std::vector<uint8_t> out(length);
    ASSERT_TRUE(v->Read(offset, out).ok());
    ASSERT_TRUE(std::equal(out.begin(), out.end(), model.begin() + static_cast<ptrdiff_t>(offset)))
        << "op " << op << " at " << offset << " length " << length;
  }
  EXPECT_GT(adoptable, 100);
  EXPECT_EQ(VolumeStat("adopted_buffers"), adoptable);

  // A PreparedWrite that is not the volume's own (the default plain
  // buffer) is written as a copy; a bad range fails as a plain write does.
  std::unique_ptr<PreparedWrite> plain = v->Volume::PrepareWrite(kRecord, 2 * kRecord);
  ASSERT_EQ(plain->pieces().size(), 1u);
  const std::vector<uint8_t> p2 = Pattern(2 * kRecord, 7);
  Fill(plain.get(), p2);
  ASSERT_TRUE(v->WritePrepared(std::move(plain)).ok());
  std::copy(p2.begin(), p2.end(), model.begin() + kRecord);
  EXPECT_EQ(VolumeStat("adopted_buffers"), adoptable);
  Status past = v->WritePrepared(v->PrepareWrite(size - 10, 20));
  EXPECT_EQ(past.code(), StatusCode::kOutOfRange) << past.ToString();

  // Unsynced writes come back from the log (held buffers logged by
  // reference), the rest from the txgs.
  ASSERT_TRUE(v->Flush().ok());
  ExpectSameAfterReopen(v, "v", model);
}

}  // namespace
}  // namespace arcstore::pool
