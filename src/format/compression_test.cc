// Compression: round trips, the 1/8 rule, bounded output, hostile input.
#include <gtest/gtest.h>

#include "base/random.h"
#include "format/compression.h"

namespace arcstore::format {
namespace {

std::vector<uint8_t> Compressible(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i / 64) % 7);
  return v;
}

TEST(Compression, ParseAndName) {
  for (Compression c : {Compression::kOff, Compression::kLz4, Compression::kZstd}) {
    auto parsed = ParseCompression(CompressionName(c));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
  auto bad = ParseCompression("gzip");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'gzip'"), std::string::npos);
}

TEST(Compression, RoundTripsAndShrinks) {
  for (Compression algo : {Compression::kLz4, Compression::kZstd}) {
    std::vector<uint8_t> in = Compressible(131072), out(in.size()), back(in.size());
    auto c = CompressBlock(algo, in, out);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->used, algo);
    EXPECT_LE(c->physical_bytes, in.size() - in.size() / 8);
    ASSERT_TRUE(DecompressBlock(algo, std::span(out.data(), c->physical_bytes), back).ok());
    EXPECT_EQ(back, in);
  }
}

TEST(Compression, IncompressibleDataIsStoredUncompressed) {
  SeededRandom random = SeededRandom::FromEnvironment("Compression.Incompressible");
  std::vector<uint8_t> in(65536), out(in.size());
  random.Fill(in.data(), in.size());
  for (Compression algo : {Compression::kOff, Compression::kLz4, Compression::kZstd}) {
    auto c = CompressBlock(algo, in, out);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->used, Compression::kOff);
    EXPECT_EQ(c->physical_bytes, in.size());
    EXPECT_EQ(out, in);
  }
}

TEST(Compression, SavingLessThanAnEighthIsNotKept) {
  // Half random, half compressible: compresses to roughly 50-60%, kept;
  // 15/16 random: saves less than 1/8, stored uncompressed.
  SeededRandom random = SeededRandom::FromEnvironment("Compression.OneEighthRule");
  for (auto [random_share, expect_kept] : {std::pair{0.5, true}, std::pair{0.94, false}}) {
    std::vector<uint8_t> in(65536, 0), out(in.size());
    random.Fill(in.data(), static_cast<size_t>(in.size() * random_share));
    auto c = CompressBlock(Compression::kLz4, in, out);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->used != Compression::kOff, expect_kept) << random_share;
    if (expect_kept) EXPECT_LE(c->physical_bytes, in.size() - in.size() / 8);
  }
}

// Stored in allocation units, compression pays only when it saves a unit:
// a one-unit block is stored as it is, however well it compresses; a
// block of two units is kept compressed when it fits in one.
TEST(Compression, ABlockIsCompressedOnlyWhenThatSavesAnAllocationUnit) {
  constexpr uint32_t kUnit = 4096;
  std::vector<uint8_t> one = Compressible(kUnit), out(kUnit);
  auto c = CompressBlock(Compression::kLz4, one, out, kDefaultZstdLevel, kUnit);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->used, Compression::kOff);
  EXPECT_EQ(out, one);
  auto t = Compressor().TryCompressBlock(Compression::kZstd, one, out, kDefaultZstdLevel, kUnit);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->used, Compression::kOff);
  // Without a unit the same block compresses.
  EXPECT_EQ(CompressBlock(Compression::kLz4, one, out)->used, Compression::kLz4);

  std::vector<uint8_t> two = Compressible(2 * kUnit), out2(two.size()), back(two.size());
  auto c2 = CompressBlock(Compression::kLz4, two, out2, kDefaultZstdLevel, kUnit);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->used, Compression::kLz4);
  EXPECT_LE(c2->physical_bytes, kUnit);
  ASSERT_TRUE(DecompressBlock(Compression::kLz4, std::span(out2.data(), c2->physical_bytes), back).ok());
  EXPECT_EQ(back, two);
  // 5 KiB that compresses to just over 4 KiB would still take two units.
  SeededRandom random = SeededRandom::FromEnvironment("Compression.Unit");
  std::vector<uint8_t> mostly(5 * 1024, 0), out3(mostly.size());
  random.Fill(mostly.data(), 4200);
  auto c3 = CompressBlock(Compression::kLz4, mostly, out3, kDefaultZstdLevel, kUnit);
  ASSERT_TRUE(c3.ok());
  EXPECT_EQ(c3->used, Compression::kOff);
  EXPECT_EQ(CompressBlock(Compression::kLz4, std::span<const uint8_t>(one), out, 3, 0).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(Compression, LargeBlocksAreSampledAtTheStartAndTheMiddle) {
  SeededRandom random = SeededRandom::FromEnvironment("Compression.EarlyAbort");
  // Random only where the samples are (4 KiB at 0 and at the middle): the
  // rest would compress, but the block is stored as is, untried.
  std::vector<uint8_t> in(131072, 0), out(in.size());
  random.Fill(in.data(), 4096);
  random.Fill(in.data() + in.size() / 2, 4096);
  for (Compression algo : {Compression::kLz4, Compression::kZstd}) {
    auto c = CompressBlock(algo, in, out);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->used, Compression::kOff);
    EXPECT_EQ(out, in);
  }
  // Random start, zeros from the middle on: the second sample compresses,
  // so the whole block is compressed.
  std::fill(in.begin() + in.size() / 2, in.begin() + in.size() / 2 + 4096, 0);
  auto c = CompressBlock(Compression::kLz4, in, out);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->used, Compression::kLz4);
  // Below 32 KiB nothing is sampled: a random first 4 KiB of 16 does not
  // stop compression.
  std::vector<uint8_t> small(16384, 0), small_out(small.size());
  random.Fill(small.data(), 4096);
  c = CompressBlock(Compression::kLz4, small, small_out);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->used, Compression::kLz4);
}

// A block whose samples (4 KiB at the start and the middle) are random and
// whose rest compresses.
std::vector<uint8_t> RandomWhereSampled(SeededRandom* random, size_t n) {
  std::vector<uint8_t> v(n, 0);
  random->Fill(v.data(), 4096);
  random->Fill(v.data() + n / 2, 4096);
  return v;
}

void ExpectRoundTrip(Compression algo, const Compressed& c, const std::vector<uint8_t>& in,
                     const std::vector<uint8_t>& out) {
  std::vector<uint8_t> back(in.size());
  ASSERT_TRUE(DecompressBlock(c.used, std::span(out.data(), c.physical_bytes), back).ok())
      << CompressionName(algo);
  EXPECT_EQ(back, in) << CompressionName(algo);
}

// One Compressor for many blocks of both algorithms, sizes and kinds: every
// block it keeps compressed decompresses to its input, compressible blocks
// are kept compressed and random ones stored as they are.
TEST(Compressor, KeptContextsCompressEveryBlockOnItsOwn) {
  SeededRandom random = SeededRandom::FromEnvironment("Compressor.Contexts");
  Compressor compressor;
  for (int i = 0; i < 200; ++i) {
    const Compression algo = random.OneIn(2) ? Compression::kLz4 : Compression::kZstd;
    const size_t n = random.Range(1, 32) * 4096;
    const bool compressible = random.OneIn(2);
    std::vector<uint8_t> in = Compressible(n), out(n);
    if (!compressible) random.Fill(in.data(), n);
    auto c = compressor.CompressBlock(algo, in, out);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->used, compressible ? algo : Compression::kOff) << i;
    ExpectRoundTrip(algo, *c, in, out);
  }
}

// Samples are taken only after a block that did not compress: a block
// whose samples are random is stored raw when sampled, and compressed whole
// when it follows a compressed block.
TEST(Compressor, SamplesOnlyAfterABlockThatDidNotCompress) {
  SeededRandom random = SeededRandom::FromEnvironment("Compressor.Samples");
  Compressor compressor;
  const std::vector<uint8_t> tricky = RandomWhereSampled(&random, 131072);
  const std::vector<uint8_t> plain = Compressible(131072);
  std::vector<uint8_t> noise(131072), out(131072);
  random.Fill(noise.data(), noise.size());
  struct Step {
    const std::vector<uint8_t>* in;
    Compression expect;
    uint64_t sampled, unsampled;  // the counters after the step
  };
  const Step steps[] = {
      {&tricky, Compression::kOff, 1, 0},  // first block: sampled, aborted
      {&plain, Compression::kLz4, 2, 0},   // sampled, compressed
      {&tricky, Compression::kLz4, 2, 1},  // after a compressed block: whole
      {&noise, Compression::kOff, 2, 2},   // whole, does not pay
      {&tricky, Compression::kOff, 3, 2},  // sampled again, aborted
  };
  for (const Step& step : steps) {
    auto c = compressor.CompressBlock(Compression::kLz4, *step.in, out);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->used, step.expect);
    EXPECT_EQ(compressor.sampled_blocks(), step.sampled);
    EXPECT_EQ(compressor.unsampled_blocks(), step.unsampled);
    ExpectRoundTrip(Compression::kLz4, *c, *step.in, out);
  }
  // Below 32 KiB nothing is sampled or counted.
  std::vector<uint8_t> small = Compressible(16384), small_out(small.size());
  ASSERT_EQ(compressor.CompressBlock(Compression::kLz4, small, small_out)->used, Compression::kLz4);
  EXPECT_EQ(compressor.sampled_blocks(), 3u);
  EXPECT_EQ(compressor.unsampled_blocks(), 2u);
}

TEST(Compression, ArgumentsAreChecked) {
  std::vector<uint8_t> in(4096), small(100);
  EXPECT_EQ(CompressBlock(Compression::kLz4, in, small).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(CompressBlock(Compression::kLz4, {}, small).ok());
}

TEST(Compression, DecompressDemandsTheExactLogicalSize) {
  for (Compression algo : {Compression::kLz4, Compression::kZstd}) {
    std::vector<uint8_t> in = Compressible(65536), out(in.size());
    auto c = CompressBlock(algo, in, out);
    ASSERT_TRUE(c.ok());
    std::span<const uint8_t> packed(out.data(), c->physical_bytes);
    std::vector<uint8_t> smaller(in.size() - 4096), larger(in.size() + 4096);
    Status s = DecompressBlock(algo, packed, smaller);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << CompressionName(algo);
    EXPECT_NE(s.message().find(std::string(CompressionName(algo))), std::string::npos);
    EXPECT_EQ(DecompressBlock(algo, packed, larger).code(), StatusCode::kCorruption);
    EXPECT_FALSE(DecompressBlock(algo, packed, std::span<uint8_t>(out.data(), 0)).ok());
  }
  std::vector<uint8_t> a(10), b(20);
  EXPECT_EQ(DecompressBlock(Compression::kOff, a, b).code(), StatusCode::kCorruption);
  EXPECT_EQ(DecompressBlock(static_cast<Compression>(9), a, b).code(), StatusCode::kCorruption);
}

TEST(Compression, RandomGarbageIsRefusedAsCorruptionWithoutCrashing) {
  SeededRandom random = SeededRandom::FromEnvironment("Compression.Garbage");
  std::vector<uint8_t> out(65536);
  for (uint64_t i = 0; i < ScaledIterations(2000); ++i) {
    std::vector<uint8_t> junk(random.Range(1, 512));
    random.Fill(junk.data(), junk.size());
    if (random.OneIn(2) && junk.size() >= 4) {  // a zstd frame magic, to get past it
      junk[0] = 0x28, junk[1] = 0xb5, junk[2] = 0x2f, junk[3] = 0xfd;
    }
    for (Compression algo : {Compression::kLz4, Compression::kZstd}) {
      size_t want = random.Range(1, out.size());
      Status s = DecompressBlock(algo, junk, std::span(out.data(), want));
      if (!s.ok()) EXPECT_EQ(s.code(), StatusCode::kCorruption);
    }
  }
}

}  // namespace
}  // namespace arcstore::format
