// The trace readers on small files of every format and encoding, and on the
// shipped traces' line and request counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "testing/temp_dir.h"
#include "tools/sim/paper_counts_test_util.h"
#include "tools/sim/trace_reader.h"

namespace arcstore::sim {
namespace {

using arcstore::testing::TempDir;

void WritePlain(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void WriteZstd(const std::string& path, const std::string& text) {
  std::vector<char> out(ZSTD_compressBound(text.size()));
  size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  ASSERT_FALSE(ZSTD_isError(n));
  std::ofstream(path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(n));
}

void WriteGzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

std::vector<KeyRun> ReadAll(const std::string& path, TraceOptions options = {}) {
  auto r = TraceReader::Open(path, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  std::vector<KeyRun> all;
  KeyRun buf[3];  // small on purpose: several Read calls
  for (;;) {
    auto n = (*r)->Read(buf);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) break;
    all.insert(all.end(), buf, buf + *n);
  }
  return all;
}

TEST(TraceReaderTest, LisLinesExpandToRuns) {
  const TempDir d("arcstore_trace_test");
  const std::string text = "110765 64 0 0\n5 1 0 1\n\n7 0 0 2\n9 2 0 3";  // no final newline
  const std::vector<KeyRun> want = {{110765, 64}, {5, 1}, {9, 2}};
  WritePlain(d.File("a.lis"), text);
  EXPECT_EQ(ReadAll(d.File("a.lis")), want);
  WriteZstd(d.File("a.lis.zst"), text);
  EXPECT_EQ(ReadAll(d.File("a.lis.zst")), want);
  WriteGzip(d.File("a.lis.gz"), text);
  EXPECT_EQ(ReadAll(d.File("a.lis.gz")), want);
}

TEST(TraceReaderTest, LargeZstdAcrossBuffers) {
  const TempDir d("arcstore_trace_test");
  std::string text;
  for (int i = 0; i < 300000; i++) text += std::to_string(i * 7) + " " + std::to_string(i % 5 + 1) + " 0 " + std::to_string(i) + "\n";
  WriteZstd(d.File("big.lis.zst"), text);
  auto runs = ReadAll(d.File("big.lis.zst"));
  ASSERT_EQ(runs.size(), 300000u);
  for (int i = 0; i < 300000; i += 9999) {
    EXPECT_EQ(runs[i].first, uint64_t(i) * 7);
    EXPECT_EQ(runs[i].count, uint64_t(i % 5 + 1));
  }
}

TEST(TraceReaderTest, LirsSkipsCheckpoints) {
  const TempDir d("arcstore_trace_test");
  WriteGzip(d.File("x.trace.gz"), "12\n*\n13\n  14\n*\n\n12\n");
  const std::vector<KeyRun> want = {{12, 1}, {13, 1}, {14, 1}, {12, 1}};
  EXPECT_EQ(ReadAll(d.File("x.trace.gz")), want);
}

TEST(TraceReaderTest, CsvSplitsIntoPages) {
  const TempDir d("arcstore_trace_test");
  WritePlain(d.File("t.csv"), "offset,size,op\n0,512,R\n1000,100,W\n4096,8192,R\n511,2,r\n");
  TraceOptions o;
  o.page_bytes = 512;
  const std::vector<KeyRun> want = {{0, 1}, {1, 2}, {8, 16}, {0, 2}};
  EXPECT_EQ(ReadAll(d.File("t.csv"), o), want);
  o.reads_only = true;
  const std::vector<KeyRun> reads = {{0, 1}, {8, 16}, {0, 2}};
  EXPECT_EQ(ReadAll(d.File("t.csv"), o), reads);
  o.reads_only = false;
  o.page_bytes = 4096;
  const std::vector<KeyRun> big = {{0, 1}, {0, 1}, {1, 2}, {0, 1}};
  EXPECT_EQ(ReadAll(d.File("t.csv"), o), big);
}

TEST(TraceReaderTest, CsvColumnsCanMove) {
  const TempDir d("arcstore_trace_test");
  // MSR Cambridge layout: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
  WritePlain(d.File("msr.csv"), "128166372003061629,wdev,0,Read,8192,4096,1331\n");
  TraceOptions o;
  o.page_bytes = 4096;
  o.csv_offset_column = 4;
  o.csv_size_column = 5;
  o.csv_op_column = 3;
  const std::vector<KeyRun> want = {{2, 1}};
  EXPECT_EQ(ReadAll(d.File("msr.csv"), o), want);
}

TEST(TraceReaderTest, CsvKeyColumn) {
  const TempDir d("arcstore_trace_test");
  WritePlain(d.File("k.csv"), "version,time,op,size,lbn\n1,5,1,512,77\n1,6,1,512,78\n");
  TraceOptions o;
  o.csv_offset_column = 4;
  o.csv_size_column = -1;
  const std::vector<KeyRun> want = {{77, 1}, {78, 1}};
  EXPECT_EQ(ReadAll(d.File("k.csv"), o), want);
}

// The error of the first Read of `path`, "" if it reads.
std::string FirstReadError(const std::string& path) {
  auto r = TraceReader::Open(path, {});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return "cannot open";
  KeyRun buf[8];
  auto n = (*r)->Read(buf);
  return n.ok() ? "" : n.status().ToString();
}

TEST(TraceReaderTest, MalformedLineNamesTheLine) {
  const TempDir d("arcstore_trace_test");
  WritePlain(d.File("bad.lis"), "1 1 0 0\nhello\n");
  EXPECT_THAT(FirstReadError(d.File("bad.lis")), ::testing::HasSubstr("bad.lis:2"));
}

// The simulators keep 48-bit keys: the largest key reads, one past it (alone
// or as the end of a run) is an error naming the line.
TEST(TraceReaderTest, KeysBeyondTheSimulatorsKeySpaceNameTheLine) {
  const TempDir d("arcstore_trace_test");
  const uint64_t max = kMaxTraceKey;
  WritePlain(d.File("ok.lis"), std::to_string(max - 1) + " 2 0 0\n");
  const std::vector<KeyRun> want = {{max - 1, 2}};
  EXPECT_EQ(ReadAll(d.File("ok.lis")), want);
  for (const std::string& line :
       {std::to_string(max) + " 2 0 0", std::to_string(max + 1) + " 1 0 0",
        std::string("18446744073709551615 1 0 0")}) {
    SCOPED_TRACE(line);
    WritePlain(d.File("big.lis"), "1 1 0 0\n" + line + "\n");
    const std::string error = FirstReadError(d.File("big.lis"));
    EXPECT_THAT(error, ::testing::HasSubstr("big.lis:2"));
    EXPECT_THAT(error, ::testing::HasSubstr("2^48"));
  }
}

TEST(TraceReaderTest, FormatFromName) {
  EXPECT_EQ(FormatFromPath("/a/P12.lis.zst"), TraceFormat::kArcLis);
  EXPECT_EQ(FormatFromPath("loop.trace.gz"), TraceFormat::kLirs);
  EXPECT_EQ(FormatFromPath("x.csv"), TraceFormat::kCsv);
  EXPECT_EQ(FormatFromPath("x.bin"), TraceFormat::kAuto);
  EXPECT_FALSE(TraceReader::Open("x.bin", {}).ok());
}

TEST(TraceReaderTest, RefusesXz) {
  const std::string path = testing::SharedTrace("block-samples/cloudphysics-w106.trace.xz");
  ASSERT_FALSE(path.empty());
  TraceOptions o;
  o.format = TraceFormat::kLirs;
  auto r = TraceReader::Open(path, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
}

// The shipped traces have the line and request counts of the README's table.
TEST(TraceReaderTest, ShippedTraceCounts) {
  struct Want {
    const char* rel;
    uint64_t lines;
    uint64_t requests;
  };
  for (const Want& w : {Want{"arc/OLTP.lis.zst", 914145, 914145},
                        Want{"arc/P3.lis.zst", 238578, 3912296},
                        Want{"lirs/loop.trace.gz", 0, 505500},
                        Want{"lirs/gli.trace.gz", 0, 6015}}) {
    SCOPED_TRACE(w.rel);
    const std::string path = testing::SharedTrace(w.rel);
    ASSERT_FALSE(path.empty());
    auto r = TraceReader::Open(path, {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    KeyRun buf[4096];
    uint64_t requests = 0;
    for (;;) {
      auto n = (*r)->Read(buf);
      ASSERT_TRUE(n.ok()) << n.status().ToString();
      if (*n == 0) break;
      for (size_t i = 0; i < *n; i++) requests += buf[i].count;
    }
    EXPECT_EQ(requests, w.requests);
    if (w.lines != 0) EXPECT_EQ((*r)->lines(), w.lines);
  }
}

}  // namespace
}  // namespace arcstore::sim
