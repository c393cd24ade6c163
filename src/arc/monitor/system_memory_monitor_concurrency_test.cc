// One monitor read from several threads at once (the ARC's control loop and
// stat readers may do so): every reading is complete and the same.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "arc/monitor/system_memory_monitor.h"
#include "base/random.h"

namespace arcstore {
namespace {

std::string Fixture(const std::string& name) {
  const char* src = std::getenv("ARCSTORE_SOURCE_DIR");
  if (src) return std::string(src) + "/src/arc/monitor/testdata/" + name;
  return std::string(MEMMON_TESTDATA_DIR) + "/" + name;
}

TEST(SystemMonitorConcurrency, ParallelReadsAgree) {
  for (const char* layout : {"v2", "v1", "hybrid"}) {
    SystemMemoryMonitorOptions o;
    o.root = Fixture(layout);
    auto monitor = MakeSystemMemoryMonitor(o);
    ASSERT_TRUE(monitor.ok());
    auto expected = (*monitor)->Read();
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    const uint64_t reads = ScaledIterations(200);
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
      threads.emplace_back([&, t] {
        for (uint64_t i = 0; i < reads; i++) {
          auto r = (*monitor)->Read();
          if (!r.ok() || r->limit_bytes != expected->limit_bytes ||
              r->available_bytes != expected->available_bytes ||
              r->limit_source != expected->limit_source ||
              r->pressure_reason != expected->pressure_reason)
            mismatches[t]++;
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; t++) EXPECT_EQ(mismatches[t], 0) << layout << " thread " << t;
  }
}

}  // namespace
}  // namespace arcstore
