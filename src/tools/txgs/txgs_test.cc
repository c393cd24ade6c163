#include "tools/txgs/txgs.h"

#include <gtest/gtest.h>

#include "base/units.h"

namespace arcstore::tools {
namespace {

TxgRow Row(uint64_t txg, uint64_t birth_ms, const char* state, const char* reason, uint64_t stime_ms,
           uint64_t delay_ms) {
  TxgRow r;
  r.txg = txg;
  r.birth_ns = birth_ms * kNsPerMs;
  r.state = state;
  r.reason = reason;
  r.stime_ns = stime_ms * kNsPerMs;
  r.delay_ns = delay_ms * kNsPerMs;
  r.ndirty_bytes = 50 * kMiB;
  return r;
}

TEST(TxgsTest, KstatColumnsThenSyncsByReason) {
  // Four committed txgs 400 ms apart (three for the ARC's dirty limit, one
  // timeout), and the open one, which the summary leaves out.
  std::vector<TxgRow> rows = {Row(10, 0, "C", "timeout", 100, 0),
                              Row(11, 400, "C", "arc_dirty_limit", 300, 5),
                              Row(12, 800, "C", "arc_dirty_limit", 200, 10),
                              Row(13, 1200, "C", "arc_dirty_limit", 400, 15),
                              Row(14, 1600, "O", "-", 0, 0)};
  std::string out = RenderTxgs(rows);
  EXPECT_EQ(out.rfind("txg      birth            state ndirty       nread        nwritten     reads    "
                      "writes   otime        qtime        wtime        stime        reason           "
                      "delay        delayed  blocked      arcwait\n",
                      0),
            0u)
      << out;
  EXPECT_NE(out.find("\n11       400000000        C     52428800 "), std::string::npos) << out;
  EXPECT_NE(out.find(" 300000000    arc_dirty_limit  5000000 "), std::string::npos) << out;
  EXPECT_NE(out.find("committed txgs: 4, one every 400ms, writers delayed 30ms in all\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  arc_dirty_limit       3 syncs  mean stime   300ms  max   400ms\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("  timeout               1 syncs  mean stime   100ms  max   100ms\n"), std::string::npos);
}

}  // namespace
}  // namespace arcstore::tools
