// PoolVolumeProvider over a fake Pool: opens, creates with the job's size
// and the run's record size, drops caches, and snapshots the pool's stats.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "bench/job_file.h"
#include "bench/pool_provider.h"
#include "bench/runner.h"
#include "stats/registry.h"
#include "testing/memory_volume.h"

namespace arcstore::bench {
namespace {

class FakePool final : public Pool {
 public:
  FakePool() { writes_ = registry_.AddCounter("pool", "volumes_created", stats::Unit::kOps, "test"); }
  PoolInfo Info() override { return {}; }
  Status CreateVolume(const VolumeOptions& o) override {
    if (volumes_.count(o.name)) return Status::AlreadyExists(o.name);
    VolumeInfo info;
    info.name = o.name;
    info.size_bytes = o.size_bytes;
    info.record_size_bytes = o.record_size_bytes;
    volumes_[o.name] = std::make_shared<testing::MemoryVolume>(info);
    writes_->Add();
    return Status::Ok();
  }
  Status DestroyVolume(const std::string& name) override {
    volumes_.erase(name);
    return Status::Ok();
  }
  Result<std::shared_ptr<Volume>> OpenVolume(const std::string& name) override {
    auto it = volumes_.find(name);
    if (it == volumes_.end()) return Status::NotFound("no volume " + name);
    return std::shared_ptr<Volume>(it->second);
  }
  Status Sync() override { return Status::Ok(); }
  Status DropCaches() override {
    drops++;
    return Status::Ok();
  }
  Status Close() override { return Status::Ok(); }
  stats::Registry& stats() override { return registry_; }

  std::map<std::string, std::shared_ptr<testing::MemoryVolume>> volumes_;
  int drops = 0;

 private:
  stats::Registry registry_;
  stats::Counter* writes_;
};

TEST(PoolProvider, CreatesOpensDropsAndSnapshots) {
  FakePool pool;
  VolumeOptions defaults;
  defaults.record_size_bytes = 64 * 1024;
  PoolVolumeProvider provider(&pool, defaults);
  auto set = ParseJobText("[a]\nfilename=/x/vol1\nsize=1m\nrw=write\n[b]\nstonewall\nfilename=vol1\nrw=read\n",
                          "t.fio", ".", JobEnv::FromSystem());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  RunnerOptions o;
  o.provider = &provider;
  o.cold = true;
  o.stats_hook = PoolStatsHook(&pool);
  auto r = RunJobs(*set, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(pool.volumes_.count("vol1"), 1u);
  EXPECT_EQ(pool.volumes_["vol1"]->info().record_size_bytes, 64u * 1024);
  EXPECT_EQ(provider.created(), std::vector<std::string>{"vol1"});
  EXPECT_EQ(pool.drops, 2);  // one per batch
  EXPECT_EQ(r->jobs[1].dirs[kRead].io_bytes, 1u << 20);  // job b used the existing volume
  // The job's view starts once its volumes are ready: making (and laying
  // out) a volume is preparation, as fio's layout is, and not in the delta.
  ASSERT_NE(r->jobs[0].arcstore_delta, nullptr);
  EXPECT_EQ(pool.stats().TakeSnapshot().Get("pool", "volumes_created"), 1);
  EXPECT_EQ(r->jobs[0].arcstore_delta->Get("pool", "volumes_created"), 0);
  EXPECT_EQ(r->jobs[1].arcstore_delta->Get("pool", "volumes_created"), 0);
  // A missing volume without a size is an error naming 'size'.
  auto bad = ParseJobText("[c]\nfilename=nope\nrw=read\n", "t.fio", ".", JobEnv::FromSystem());
  ASSERT_TRUE(bad.ok());
  auto rb = RunJobs(*bad, o);
  ASSERT_FALSE(rb.ok());
  EXPECT_NE(rb.status().message().find("option 'size'"), std::string::npos);
}

// A read job on a volume the provider creates gets it laid out first, as
// fio lays out a new file: every byte stored, none of it zeros from a hole.
// A write job's new volume is not written ahead.
TEST(PoolProvider, ANewVolumeForAReadJobIsLaidOutFirst) {
  FakePool pool;
  PoolVolumeProvider provider(&pool, VolumeOptions());
  auto set = ParseJobText("[r]\nfilename=rvol\nsize=2m\nrw=randread\nbs=64k\n"
                          "[w]\nfilename=wvol\nfilesize=2m\noffset=1m\nsize=1m\nrw=write\n"
                          "bs=64k\n",
                          "t.fio", ".", JobEnv::FromSystem());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  RunnerOptions o;
  o.provider = &provider;
  ASSERT_TRUE(RunJobs(*set, o).ok());
  std::vector<uint8_t> all(2 << 20);
  ASSERT_TRUE(pool.volumes_["rvol"]->Read(0, all).ok());
  size_t zero_pages = 0;
  for (size_t page = 0; page < all.size(); page += 4096) {
    bool zero = true;
    for (size_t i = page; i < page + 4096 && zero; i++) zero = all[i] == 0;
    zero_pages += zero;
  }
  EXPECT_EQ(zero_pages, 0u);
  ASSERT_TRUE(pool.volumes_["wvol"]->Read(4096, std::span(all.data(), 4096)).ok());
  EXPECT_EQ(std::count(all.begin(), all.begin() + 4096, 0), 4096);
}

}  // namespace
}  // namespace arcstore::bench
