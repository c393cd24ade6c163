// Tests of the device contract shared by every device (checked on the
// memory device), the synchronous helpers, iovec helpers and AlignedBuffer.
#include <gtest/gtest.h>

#include <numeric>

#include "io/aligned_buffer.h"
#include "io/memory_device.h"

namespace arcstore::io {
namespace {

std::unique_ptr<MemoryDevice> NewMemory(uint64_t size = 1 << 20, uint32_t block = 4096) {
  auto d = MemoryDevice::Create({.name = "mem0", .size_bytes = size, .logical_block_size = block});
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return std::move(*d);
}

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + i / 251);
  return v;
}

TEST(AlignedBuffer, AlignedZeroFilledAndMovable) {
  AlignedBuffer b(10000, 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 4096, 0u);
  EXPECT_EQ(b.size(), 10000u);
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b.data()[i], 0);
  uint8_t* p = b.data();
  AlignedBuffer c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_TRUE(b.empty());
}

TEST(MemoryDevice, OptionsValidated) {
  EXPECT_FALSE(MemoryDevice::Create({.size_bytes = 4096, .logical_block_size = 1000}).ok());
  EXPECT_FALSE(MemoryDevice::Create({.size_bytes = 5000, .logical_block_size = 4096}).ok());
  auto big = MemoryDevice::Create({.size_bytes = 1ull << 40});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("max_size_bytes"), std::string::npos);
}

TEST(MemoryDevice, VectoredWriteThenReadRoundTrips) {
  auto d = NewMemory();
  std::vector<uint8_t> a = Pattern(4096, 1), b = Pattern(8192, 2);
  IoRequest w{
      .op = IoOp::kWrite, .offset = 8192, .iov = {{a.data(), a.size()}, {b.data(), b.size()}}};
  ASSERT_TRUE(SubmitAndWait(*d, std::move(w)).ok());
  std::vector<uint8_t> out(12288);
  ASSERT_TRUE(ReadSync(*d, 8192, out).ok());
  EXPECT_TRUE(std::equal(a.begin(), a.end(), out.begin()));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), out.begin() + 4096));
  // Scattered read into three pieces of unequal size.
  std::vector<uint8_t> p1(4096), p2(4096), p3(4096);
  IoRequest r{.op = IoOp::kRead,
              .offset = 8192,
              .iov = {{p1.data(), 4096}, {p2.data(), 4096}, {p3.data(), 4096}}};
  ASSERT_TRUE(SubmitAndWait(*d, std::move(r)).ok());
  EXPECT_EQ(p1, a);
  EXPECT_TRUE(std::equal(p2.begin(), p2.end(), b.begin()));
  EXPECT_TRUE(std::equal(p3.begin(), p3.end(), b.begin() + 4096));
}

TEST(MemoryDevice, CompletesInlineExactlyOnce) {
  auto d = NewMemory();
  std::vector<uint8_t> buf(4096);
  int calls = 0;
  d->Submit({.op = IoOp::kRead,
             .offset = 0,
             .iov = {{buf.data(), buf.size()}},
             .done = [&](const Status& s) {
               ++calls;
               EXPECT_TRUE(s.ok());
             }});
  EXPECT_EQ(calls, 1);
}

TEST(MemoryDevice, RejectsMisalignedAndOutOfRangeNamingTheRequest) {
  auto d = NewMemory(1 << 20);
  std::vector<uint8_t> buf(8192);
  Status s = WriteSync(*d, 100, std::span<const uint8_t>(buf.data(), 4096));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("device mem0: write offset 100 length 4096"), std::string::npos)
      << s.message();
  s = ReadSync(*d, 0, std::span<uint8_t>(buf.data(), 1000));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = ReadSync(*d, (1 << 20) - 4096, buf);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("past the end"), std::string::npos);
  s = ReadSync(*d, UINT64_MAX - 4095, std::span<uint8_t>(buf.data(), 4096));
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  IoRequest empty{.op = IoOp::kWrite, .offset = 0};
  EXPECT_EQ(SubmitAndWait(*d, std::move(empty)).code(), StatusCode::kInvalidArgument);
  IoRequest many{.op = IoOp::kRead, .offset = 0};
  for (size_t i = 0; i < kMaxIoVecs + 1; ++i) many.iov.push_back({buf.data(), 4096});
  EXPECT_EQ(SubmitAndWait(*d, std::move(many)).code(), StatusCode::kInvalidArgument);
}

TEST(MemoryDevice, DiscardZeroesAndFlushSucceeds) {
  auto d = NewMemory();
  std::vector<uint8_t> a = Pattern(8192, 9);
  ASSERT_TRUE(WriteSync(*d, 0, a).ok());
  ASSERT_TRUE(DiscardSync(*d, 4096, 4096).ok());
  ASSERT_TRUE(FlushSync(*d).ok());
  std::vector<uint8_t> out(8192);
  ASSERT_TRUE(ReadSync(*d, 0, out).ok());
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 4096, out.begin()));
  EXPECT_EQ(std::accumulate(out.begin() + 4096, out.end(), 0), 0);
  std::vector<uint8_t> all = d->Contents();
  ASSERT_EQ(all.size(), 1u << 20);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), all.begin()));
}

TEST(MemoryDevice, FromImageKeepsTheBytes) {
  std::vector<uint8_t> image = Pattern(16384, 3);
  auto d = MemoryDevice::FromImage({.name = "img"}, image);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->size_bytes(), 16384u);
  EXPECT_EQ((*d)->Contents(), image);
}

TEST(IovHelpers, GatherScatterSliceAcrossPieces) {
  std::vector<uint8_t> x(10), y(5), z(7);
  std::vector<IoVec> iov = {{x.data(), 10}, {y.data(), 5}, {z.data(), 7}};
  std::vector<uint8_t> in = Pattern(22, 5), out(22);
  ScatterIov(iov, 0, 22, in.data());
  GatherIov(iov, 0, 22, out.data());
  EXPECT_EQ(in, out);
  std::vector<uint8_t> mid(9);
  GatherIov(iov, 8, 9, mid.data());
  EXPECT_TRUE(std::equal(mid.begin(), mid.end(), in.begin() + 8));
  std::vector<IoVec> s = SliceIov(iov, 8, 9);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].data, x.data() + 8);
  EXPECT_EQ(s[0].size_bytes, 2u);
  EXPECT_EQ(s[1].size_bytes, 5u);
  EXPECT_EQ(s[2].size_bytes, 2u);
}

}  // namespace
}  // namespace arcstore::io
