// A pool with cache devices (the second cache level), end to end on files:
// reads the ARC no longer holds come back from the cache device with the
// right bytes; a rewritten record never comes back from its old copy; the
// cache survives a reopen (rebuilt from the device); a missing or damaged
// cache device costs the pool nothing but the cache; the config keeps the
// devices; bad requests are refused by name.
#include "pool/cache_devices.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/random.h"
#include "pool/pool_impl.h"
#include "testing/temp_dir.h"

namespace arcstore::pool {
namespace {

constexpr uint64_t kRecord = 64 * 1024;
constexpr uint64_t kVolumeBytes = 48 * kMiB;  // three times the ARC
constexpr uint64_t kChunk = 1 * kMiB;

class CacheDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_path_ = dir_.File("p.pool");
    cache_path_ = dir_.File("fast.cache");
    PoolCreateOptions co;
    co.size_bytes = 256 * kMiB;
    co.sparse = true;
    ASSERT_TRUE(Pool::Create(pool_path_, co).ok());
    MakeFile(cache_path_, 96 * kMiB);
    Open();
  }
  void TearDown() override {
    if (pool_) EXPECT_TRUE(pool_->Close().ok());
  }
  static void MakeFile(const std::string& path, uint64_t bytes) {
    std::ofstream(path, std::ios::binary).close();
    std::filesystem::resize_file(std::filesystem::path(path), bytes);
  }
  void Open() {
    if (pool_) ASSERT_TRUE(pool_->Close().ok());
    pool_.reset();
    PoolOptions o;
    o.arc_max_bytes = 16 * kMiB;
    o.arc_min_bytes = 16 * kMiB;
    o.prefetch = false;  // every record read is a demand read
    o.cache.write_max_bytes = 1 * kGiB;
    o.cache.write_boost_bytes = 0;
    auto p = Pool::Open(pool_path_, o);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pool_.reset(static_cast<PoolImpl*>(p->release()));
  }
  std::shared_ptr<Volume> Fill() {
    VolumeOptions vo;
    vo.name = "v";
    vo.size_bytes = kVolumeBytes;
    vo.record_size_bytes = kRecord;
    EXPECT_TRUE(pool_->CreateVolume(vo).ok());
    auto v = *pool_->OpenVolume("v");
    model_.resize(kVolumeBytes);
    SeededRandom(7).Fill(model_.data(), model_.size());
    EXPECT_TRUE(v->Write(0, model_).ok());
    EXPECT_TRUE(pool_->Sync().ok());
    return v;
  }
  // Reads the whole volume a chunk at a time, checking every byte; after
  // each chunk the cache devices write what the ARC evicted meanwhile.
  void ReadAll(Volume& v) {
    std::vector<uint8_t> out(kChunk);
    for (uint64_t at = 0; at < kVolumeBytes; at += kChunk) {
      ASSERT_TRUE(v.Read(at, out).ok());
      ASSERT_TRUE(std::equal(out.begin(), out.end(), model_.begin() + at)) << "at " << at;
      ASSERT_TRUE(pool_->cache_devices()->Flush().ok());
    }
  }
  int64_t Stat(const char* name) {
    return pool_->stats().TakeSnapshot().Get("arcstats", name, -1);
  }

  testing::TempDir dir_{"arcstore_l2"};
  std::string pool_path_, cache_path_;
  std::unique_ptr<PoolImpl> pool_;
  std::vector<uint8_t> model_;
};

TEST_F(CacheDevicesTest, ReadsTheArcEvictedComeBackFromTheCacheDevice) {
  auto v = Fill();
  ASSERT_TRUE(pool_->AddCache(cache_path_).ok());
  ReadAll(*v);  // records leave the ARC for the cache device
  const int64_t hits0 = Stat("l2_hits"), misses0 = Stat("l2_misses");
  ReadAll(*v);
  const int64_t hits = Stat("l2_hits") - hits0, misses = Stat("l2_misses") - misses0;
  // 768 records against an ARC of 256: most of the second pass misses the
  // ARC, and nearly every such miss is on the cache device.
  EXPECT_GE(hits, 400) << "misses " << misses;
  EXPECT_GE(hits * 10, (hits + misses) * 9) << "hits " << hits << " misses " << misses;
  EXPECT_GT(Stat("l2_size"), 0);
  EXPECT_GT(Stat("l2_hdr_size"), 0);
  PoolInfo info = pool_->Info();
  ASSERT_EQ(info.cache_devices.size(), 1u);
  EXPECT_EQ(info.cache_devices[0].state, "online");
  EXPECT_GT(info.cache_devices[0].blocks, 0u);
  // The index counts in the ARC's size, as a line of its own.
  EXPECT_EQ(pool_->arc().Sizes().other_bytes, info.cache_devices[0].header_bytes);
  EXPECT_EQ(Stat("l2_hdr_size"), static_cast<int64_t>(info.cache_devices[0].header_bytes));
  ASSERT_TRUE(pool_->QuiesceForCheck().ok());
  Status inv = pool_->arc().CheckInvariants();
  EXPECT_TRUE(inv.ok()) << inv.ToString();
  ASSERT_TRUE(pool_->RemoveCache(cache_path_).ok());
  EXPECT_EQ(pool_->arc().Sizes().other_bytes, 0u);
}

// Records written are published with where their txg stored them, so the
// ARC offers them to the cache device when it evicts them: a volume three
// times the ARC, written once and never read, is read back mostly from the
// cache device.
TEST_F(CacheDevicesTest, WrittenRecordsAreFedWithoutHavingBeenRead) {
  ASSERT_TRUE(pool_->AddCache(cache_path_).ok());
  auto v = Fill();
  ASSERT_TRUE(pool_->cache_devices()->Flush().ok());
  const int64_t hits0 = Stat("l2_hits"), misses0 = Stat("l2_misses");
  ReadAll(*v);
  const int64_t hits = Stat("l2_hits") - hits0, misses = Stat("l2_misses") - misses0;
  // 768 records, at most 256 of them still in the ARC: more than half
  // come from the cache device (not all: on a loaded machine the feed
  // refuses offers while its writer is behind).
  EXPECT_GE(hits, 400) << "misses " << misses;
}

// Every read and write of a cache device is counted in its module's device
// stats and is a C record of the pool's trace: the trace's C reads are the
// device's reads, each the size of a cached record.
TEST_F(CacheDevicesTest, TheTraceAndTheDeviceStatsShowEveryCacheDeviceIo) {
  auto v = Fill();
  ASSERT_TRUE(pool_->AddCache(cache_path_).ok());
  ReadAll(*v);
  const std::string module = pool_->Info().cache_devices.at(0).stats_module;
  ASSERT_FALSE(module.empty());
  auto device = [&](const char* name) { return pool_->stats().TakeSnapshot().Get(module, name, -1); };
  const int64_t reads0 = device("device_reads"), writes0 = device("device_writes");
  const int64_t hits0 = device("hits");
  const std::string trace = dir_.File("t.trace");
  ASSERT_TRUE(pool_->StartTrace(trace, 1 << 16, false).ok());
  ReadAll(*v);
  ASSERT_TRUE(pool_->StopTrace().ok());
  const int64_t reads = device("device_reads") - reads0, writes = device("device_writes") - writes0;
  EXPECT_GE(reads, 400);
  EXPECT_GE(reads, device("hits") - hits0);  // hits from a slot not yet written are not reads
  std::ifstream in(trace);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "# arcstore io trace v3");
  int64_t c_reads = 0, c_writes = 0;
  while (std::getline(in, line)) {
    if (line.rfind("C\t", 0) != 0) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    ASSERT_EQ(f.size(), 9u) << line;
    EXPECT_EQ(f[3], "0") << line;  // l2arc.0's number
    EXPECT_EQ(f[8], "ok") << line;
    if (f[5] == "read") {
      c_reads++;
      EXPECT_EQ(f[7], std::to_string(kRecord)) << line;
    } else if (f[5] == "write") {
      c_writes++;
    }
  }
  EXPECT_EQ(c_reads, reads);
  EXPECT_EQ(c_writes, writes);
  EXPECT_EQ(pool_->stats().TakeSnapshot().Get("io", "trace_dropped", -1), 0);
}

TEST_F(CacheDevicesTest, ARewrittenRecordNeverComesBackFromItsOldCopy) {
  auto v = Fill();
  ASSERT_TRUE(pool_->AddCache(cache_path_).ok());
  ReadAll(*v);
  ReadAll(*v);  // every record has a copy on the device by now
  // Rewrite every other record, then read everything again.
  std::vector<uint8_t> fresh(kRecord);
  for (uint64_t r = 0; r < kVolumeBytes / kRecord; r += 2) {
    SeededRandom(1000 + r).Fill(fresh.data(), fresh.size());
    ASSERT_TRUE(v->Write(r * kRecord, fresh).ok());
    std::copy(fresh.begin(), fresh.end(), model_.begin() + r * kRecord);
  }
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(pool_->DropCaches().ok());
  const int64_t hits0 = Stat("l2_hits");
  ReadAll(*v);  // checks every byte against the model
  EXPECT_GT(Stat("l2_hits") - hits0, 100);  // the records not rewritten
}

TEST_F(CacheDevicesTest, TheCacheIsKeptInTheConfigAndRebuiltAtReopen) {
  auto v = Fill();
  ASSERT_TRUE(pool_->AddCache(cache_path_).ok());
  ReadAll(*v);
  const uint64_t blocks = pool_->Info().cache_devices.at(0).blocks;
  ASSERT_GT(blocks, 100u);
  v.reset();
  Open();
  pool_->cache_devices()->WaitRebuilt();
  PoolInfo info = pool_->Info();
  ASSERT_EQ(info.cache_devices.size(), 1u);
  EXPECT_EQ(info.cache_devices[0].path, cache_path_);
  EXPECT_EQ(info.cache_devices[0].state, "online");
  EXPECT_GE(info.cache_devices[0].blocks * 10, blocks * 9);
  v = *pool_->OpenVolume("v");
  const int64_t hits0 = Stat("l2_hits");
  ReadAll(*v);
  EXPECT_GE(Stat("l2_hits") - hits0, 400);  // a cold ARC, a warm cache device
  // Removed: out of the config, not used after a reopen.
  ASSERT_TRUE(pool_->RemoveCache(cache_path_).ok());
  EXPECT_TRUE(pool_->Info().cache_devices.empty());
  v.reset();
  Open();
  EXPECT_TRUE(pool_->Info().cache_devices.empty());
}

TEST_F(CacheDevicesTest, AMissingOrDamagedCacheDeviceCostsOnlyTheCache) {
  auto v = Fill();
  ASSERT_TRUE(pool_->AddCache(cache_path_).ok());
  ReadAll(*v);
  v.reset();
  ASSERT_TRUE(pool_->Close().ok());
  pool_.reset();
  // Damaged: the data of every slot replaced, the slot headers kept, so
  // the rebuilt index points at bad copies.
  {
    auto layout = l2arc::ComputeLayout(l2arc::L2CacheOptions().slot_bytes, 4096, 96 * kMiB);
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    std::vector<char> junk(layout->slot_data_bytes, 0x5a);
    std::fstream f(cache_path_, std::ios::in | std::ios::out | std::ios::binary);
    for (uint64_t s = 0; s < layout->slot_count; s++) {
      f.seekp(static_cast<std::streamoff>(layout->DataOffset(s)));
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    ASSERT_TRUE(f.good());
  }
  Open();
  pool_->cache_devices()->WaitRebuilt();
  ASSERT_GT(pool_->Info().cache_devices.at(0).blocks, 100u);
  v = *pool_->OpenVolume("v");
  ReadAll(*v);  // every byte right
  EXPECT_EQ(Stat("l2_hits"), 0);
  EXPECT_GT(Stat("l2_pool_fallbacks"), 100);
  v.reset();
  ASSERT_TRUE(pool_->Close().ok());
  pool_.reset();
  // Missing: the pool opens, says so, and serves.
  std::filesystem::remove(cache_path_);
  Open();
  PoolInfo info = pool_->Info();
  ASSERT_EQ(info.cache_devices.size(), 1u);
  EXPECT_EQ(info.cache_devices[0].state.rfind("missing: ", 0), 0u) << info.cache_devices[0].state;
  bool noted = false;
  for (const std::string& n : pool_->open_report().notes) {
    noted = noted || n.find(cache_path_) != std::string::npos;
  }
  EXPECT_TRUE(noted);
  v = *pool_->OpenVolume("v");
  ReadAll(*v);
  // It can still be taken out of the config.
  EXPECT_TRUE(pool_->RemoveCache(cache_path_).ok());
}

TEST_F(CacheDevicesTest, BadCacheRequestsAreRefusedByName) {
  Status own = pool_->AddCache(pool_path_);
  EXPECT_EQ(own.code(), StatusCode::kInvalidArgument) << own.ToString();
  EXPECT_NE(own.message().find("pool's own device"), std::string::npos) << own.ToString();
  ASSERT_TRUE(pool_->AddCache(cache_path_).ok());
  Status twice = pool_->AddCache(cache_path_);
  EXPECT_EQ(twice.code(), StatusCode::kAlreadyExists) << twice.ToString();
  Status none = pool_->RemoveCache(dir_.File("none"));
  EXPECT_EQ(none.code(), StatusCode::kNotFound) << none.ToString();
  Status absent = pool_->AddCache(dir_.File("absent"));
  EXPECT_FALSE(absent.ok());
  EXPECT_NE(absent.message().find("absent"), std::string::npos) << absent.ToString();
  // Another pool's file: its label is a signature, never overwritten.
  const std::string other = dir_.File("other.pool");
  PoolCreateOptions co;
  co.size_bytes = 64 * kMiB;
  co.sparse = true;
  ASSERT_TRUE(Pool::Create(other, co).ok());
  Status pool_file = pool_->AddCache(other);
  EXPECT_EQ(pool_file.code(), StatusCode::kAlreadyExists) << pool_file.ToString();
  EXPECT_NE(pool_file.message().find("arcstore pool"), std::string::npos) << pool_file.ToString();
  EXPECT_EQ(pool_->Info().cache_devices.size(), 1u);
}

}  // namespace
}  // namespace arcstore::pool
