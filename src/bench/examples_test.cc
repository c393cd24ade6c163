// Every example job file parses, and runs (shortened) on memory volumes.
#include <gtest/gtest.h>

#include <filesystem>

#include "bench/job_file.h"
#include "bench/runner.h"
#include "bench/test_volumes.h"

namespace arcstore::bench {
namespace {

namespace fs = std::filesystem;

// ARCSTORE_SOURCE_DIR when ctest passes it, else the tree this file is in.
fs::path ExamplesDir() {
  const char* src = std::getenv("ARCSTORE_SOURCE_DIR");  // NOLINT(concurrency-mt-unsafe)
  fs::path root = src != nullptr ? fs::path(src) : fs::path(__FILE__).parent_path().parent_path().parent_path();
  return root / "examples" / "jobs";
}

std::vector<fs::path> Examples() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(ExamplesDir())) {
    if (e.path().extension() == ".fio") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Examples, TheExpectedSetIsThere) {
  std::vector<std::string> names;
  for (const auto& p : Examples()) names.push_back(p.filename().string());
  for (const char* want : {"seed000-randwrite-4k.fio", "seed000-randwrite-4k-180s.fio",
                           "ior-4k-np1.fio", "ior-4k-np16.fio", "iozone-4m.fio",
                           "fill-1g.fio", "writes-after-fill.fio", "seeds-job-120s.fio"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
}

TEST(Examples, EachParsesAndRunsShortened) {
  auto files = Examples();
  ASSERT_FALSE(files.empty()) << ExamplesDir();
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    auto set = ParseJobFile(path.string(), JobEnv::FromSystem());
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    MemoryVolumeProvider provider(128 * 1024);
    RunnerOptions o;
    o.provider = &provider;
    o.max_runtime_ns = 40'000'000;  // 40 ms per job
    o.max_size_bytes = 8 << 20;     // 8 MiB volumes
    o.sample_window_ns = 10'000'000;
    auto r = RunJobs(*set, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->jobs.empty());
    for (const JobResult& j : r->jobs) {
      EXPECT_EQ(j.error, 0) << j.name << ": " << j.error_text;
      uint64_t ios = j.dirs[kRead].total_ios + j.dirs[kWrite].total_ios + j.dirs[kTrim].total_ios;
      EXPECT_GT(ios, 0u) << j.name;
    }
  }
}

TEST(Examples, IorFilePerJobMakesOneVolumePerClone) {
  auto set = ParseJobFile((ExamplesDir() / "ior-4k-np16.fio").string(), JobEnv::FromSystem());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  MemoryVolumeProvider provider(128 * 1024);
  RunnerOptions o;
  o.provider = &provider;
  o.max_size_bytes = 256 << 10;
  auto r = RunJobs(*set, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // group_reporting: one write result, one read result, 16 clones each.
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[0].jobs, 16);
  EXPECT_EQ(r->jobs[0].dirs[kWrite].io_bytes, 16u * (256 << 10));
  EXPECT_EQ(r->jobs[1].dirs[kRead].io_bytes, 16u * (256 << 10));
  EXPECT_NE(provider.memory("ior.15"), nullptr);
  EXPECT_EQ(provider.memory("ior.15")->flushes(), 1u);  // end_fsync
}

}  // namespace
}  // namespace arcstore::bench
