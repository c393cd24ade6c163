// Tests of the per-I/O trace: the file format, markers, drops when the ring
// is full, and errors; and the queue's trace of real I/Os.
#include "io/io_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "io/io_queue.h"
#include "io/memory_device.h"
#include "stats/registry.h"
#include "testing/manual_clock.h"
#include "testing/temp_dir.h"

namespace arcstore::io {
namespace {

std::vector<std::vector<std::string>> ReadTrace(const std::string& path, std::string* header) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, *header);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, '\t');) fields.push_back(f);
    rows.push_back(fields);
  }
  return rows;
}

class IoTraceTest : public ::testing::Test {
 protected:
  arcstore::testing::TempDir dir_{"arcstore_trace"};
  const std::string path_ = dir_.File("trace.txt");
  arcstore::testing::ManualClock clock_{5000};
  stats::Counter dropped_;
};

TEST_F(IoTraceTest, WritesRecordsAndMarkersInTheDocumentedFormat) {
  auto t = IoTrace::Start(path_, 64, &clock_, &dropped_);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  clock_.AdvanceNs(100);
  (*t)->AddMarker(TraceMarker::kSyncStart, 7);
  (*t)->AddIo(TracedIo{5100, 5150, 5400, IoClass::kAsyncWrite, IoOp::kWrite, 1 << 20, 524288, 128,
                       true});
  (*t)->AddIo(TracedIo{5200, 5200, 5300, IoClass::kSyncRead, IoOp::kRead, 8192, 4096, 1, false});
  TracedWrite w;
  w.start_ns = 5250;
  w.done_ns = 5450;
  w.op = TracedWriteOp::kTrim;
  w.offset = 65536;
  w.bytes = 131072;
  for (int i = 0; i < kTracedWaits; i++) w.wait_ns[i] = 10 * static_cast<uint64_t>(i + 1);
  w.ok = false;
  (*t)->AddWrite(w);
  (*t)->AddCacheIo(2, TracedIo{5300, 5300, 5380, IoClass::kSyncRead, IoOp::kRead, 3 << 20, 8192, 1,
                              true});
  clock_.AdvanceNs(400);
  (*t)->AddMarker(TraceMarker::kSyncEnd, 7);
  ASSERT_TRUE((*t)->Stop().ok());
  std::string header;
  auto rows = ReadTrace(path_, &header);
  EXPECT_EQ(header, "# arcstore io trace v3");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"T", "100", "sync_start", "7"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"I", "100", "150", "400", "async_write", "write",
                                               "1048576", "524288", "128", "ok"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"I", "200", "200", "300", "sync_read", "read",
                                               "8192", "4096", "1", "error"}));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"W", "250", "450", "trim", "65536", "131072", "10",
                                               "20", "30", "40", "50", "error"}));
  EXPECT_EQ(rows[4], (std::vector<std::string>{"C", "300", "380", "2", "sync_read", "read",
                                               "3145728", "8192", "ok"}));
  EXPECT_EQ(rows[5], (std::vector<std::string>{"T", "500", "sync_end", "7"}));
  EXPECT_EQ(dropped_.Value(), 0u);
}

TEST_F(IoTraceTest, AFullRingDropsAndCounts) {
  auto t = IoTrace::Start(path_, 4, &clock_, &dropped_);
  ASSERT_TRUE(t.ok());
  (*t)->HoldWriterForTest(true);
  for (uint64_t i = 0; i < 10; i++) {
    (*t)->AddIo(TracedIo{5000, 5000, 5000, IoClass::kSyncWrite, IoOp::kWrite, i * 4096, 4096, 1,
                         true});
  }
  EXPECT_EQ(dropped_.Value(), 6u);
  (*t)->HoldWriterForTest(false);
  ASSERT_TRUE((*t)->Stop().ok());
  std::string header;
  auto rows = ReadTrace(path_, &header);
  ASSERT_EQ(rows.size(), 4u);  // the first four, in order
  for (size_t i = 0; i < 4; i++) EXPECT_EQ(rows[i][6], std::to_string(i * 4096));
}

TEST_F(IoTraceTest, BadPathAndRingSizeAreNamed) {
  auto t = IoTrace::Start(dir_.File("no/such/dir/t"), 64, &clock_, &dropped_);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(dir_.File("no/such/dir/t")), std::string::npos);
  t = IoTrace::Start(path_, 2, &clock_, &dropped_);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("ring"), std::string::npos);
}

// Through the queue: one I line per device I/O, markers where asked, and
// start/stop errors.
TEST_F(IoTraceTest, QueueTracesEveryIo) {
  stats::Registry registry;
  auto mem = std::move(MemoryDevice::Create({.size_bytes = 8 << 20}).value());
  QueuedDevice q(std::move(mem), IoQueueOptions(), &registry, &clock_);
  std::vector<uint8_t> buf(4096, 3);
  ASSERT_TRUE(WriteSync(q, 0, buf).ok());  // not traced: before Start
  ASSERT_TRUE(q.StartTrace(path_, 1024).ok());
  Status again = q.StartTrace(dir_.File("other"), 1024);
  EXPECT_EQ(again.code(), StatusCode::kBusy);
  EXPECT_NE(again.message().find(path_), std::string::npos);
  const int n = 37;
  for (int i = 0; i < n; i++) {
    q.AddTraceMarker(TraceMarker::kSyncStart, 10 + i);
    ASSERT_TRUE(WriteSync(q, 4096 * i, buf, IoClass::kAsyncWrite).ok());
    ASSERT_TRUE(ReadSync(q, 4096 * i, buf).ok());
    q.AddTraceMarker(TraceMarker::kSyncEnd, 10 + i);
  }
  ASSERT_TRUE(q.StopTrace().ok());
  EXPECT_EQ(q.StopTrace().code(), StatusCode::kNotFound);
  ASSERT_TRUE(WriteSync(q, 0, buf).ok());  // not traced: after Stop
  std::string header;
  auto rows = ReadTrace(path_, &header);
  int ios = 0, starts = 0, ends = 0, writes = 0;
  for (const auto& r : rows) {
    if (r[0] == "I") {
      ios++;
      ASSERT_EQ(r.size(), 10u);
      writes += r[4] == "async_write" && r[5] == "write";
      EXPECT_EQ(r[9], "ok");
    }
    if (r[0] == "T" && r[2] == "sync_start") starts++;
    if (r[0] == "T" && r[2] == "sync_end") ends++;
  }
  EXPECT_EQ(ios, 2 * n);
  EXPECT_EQ(writes, n);
  EXPECT_EQ(starts, n);
  EXPECT_EQ(ends, n);
  EXPECT_EQ(registry.TakeSnapshot().Get("io", "trace_dropped"), 0);
}

}  // namespace
}  // namespace arcstore::io
