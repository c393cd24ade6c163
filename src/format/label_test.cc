// Label header, config and device layout.
#include <gtest/gtest.h>

#include "base/random.h"
#include "format/encoding.h"
#include "format/label.h"
#include "format/test_samples.h"
#include "format/uberblock.h"

namespace arcstore::format {
namespace {

TEST(Label, RoundTrip) {
  LabelHeader h = samples::Label();
  auto bytes = EncodeLabelHeader(h);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(bytes->size(), kLabelHeaderRegionBytes);
  auto back = DecodeLabelHeader(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, h);
  EXPECT_EQ(back->config.Get("pool_name"), "tank");
  EXPECT_FALSE(back->config.Get("nope").has_value());
}

TEST(Label, EverySingleBitFlipOfTheEncodedPartIsDetected) {
  auto bytes = EncodeLabelHeader(samples::Label());
  ASSERT_TRUE(bytes.ok());
  size_t encoded = kLabelHeaderFixedBytes + LoadLe32(bytes->data() + 64);
  for (size_t bit = 0; bit < encoded * 8; ++bit) {
    (*bytes)[bit / 8] ^= 1u << (bit % 8);
    auto got = DecodeLabelHeader(*bytes);
    ASSERT_FALSE(got.ok()) << "flip of bit " << bit << " undetected";
    EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
    (*bytes)[bit / 8] ^= 1u << (bit % 8);
  }
}

TEST(Label, FlipsInThePaddingAreDetectedToo) {
  SeededRandom random = SeededRandom::FromEnvironment("Label.PaddingFlips");
  auto bytes = EncodeLabelHeader(samples::Label());
  ASSERT_TRUE(bytes.ok());
  size_t encoded = kLabelHeaderFixedBytes + LoadLe32(bytes->data() + 64);
  for (uint64_t i = 0; i < ScaledIterations(500); ++i) {
    size_t bit = encoded * 8 + random.Uniform((bytes->size() - encoded) * 8);
    (*bytes)[bit / 8] ^= 1u << (bit % 8);
    ASSERT_FALSE(DecodeLabelHeader(*bytes).ok()) << bit;
    (*bytes)[bit / 8] ^= 1u << (bit % 8);
  }
}

TEST(Label, TruncatedAndOversizedInputsAreRejected) {
  auto bytes = EncodeLabelHeader(samples::Label());
  ASSERT_TRUE(bytes.ok());
  auto tiny = DecodeLabelHeader(std::span(bytes->data(), 100));
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.status().message().find("100 bytes"), std::string::npos);
  // Cut inside the config: the config length no longer fits.
  auto cut = DecodeLabelHeader(std::span(bytes->data(), kLabelHeaderFixedBytes + 4));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("config length"), std::string::npos);
  bytes->push_back(0);
  EXPECT_FALSE(DecodeLabelHeader(*bytes).ok());
  // The exact encoded part alone decodes (no padding needed).
  bytes->pop_back();
  size_t encoded = kLabelHeaderFixedBytes + LoadLe32(bytes->data() + 64);
  EXPECT_TRUE(DecodeLabelHeader(std::span(bytes->data(), encoded)).ok());
}

TEST(Label, VersionMismatchNamesBothVersions) {
  auto bytes = EncodeLabelHeader(samples::Label());
  ASSERT_TRUE(bytes.ok());
  StoreLe32(bytes->data() + 8, 7);
  auto got = DecodeLabelHeader(*bytes);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "label header: format version 7 is not supported (this build reads version 2)");
}

TEST(Label, EncodeRefusesBadGeometryAndConfig) {
  LabelHeader h = samples::Label();
  h.allocation_unit = 6000;
  EXPECT_FALSE(EncodeLabelHeader(h).ok());
  h = samples::Label();
  h.device_size_bytes = 1 << 20;  // too small for two labels and data
  EXPECT_FALSE(EncodeLabelHeader(h).ok());
  h = samples::Label();
  h.pool_guid = 0;
  EXPECT_FALSE(EncodeLabelHeader(h).ok());
  h = samples::Label();
  h.config.entries.push_back({"pool_name", "again"});
  auto dup = EncodeLabelHeader(h);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("repeated"), std::string::npos);
  h = samples::Label();
  h.config.Set("Bad Key", "x");
  EXPECT_FALSE(EncodeLabelHeader(h).ok());
  h = samples::Label();
  h.config.Set("big", std::string(2000, 'x'));
  EXPECT_FALSE(EncodeLabelHeader(h).ok());
  h = samples::Label();
  for (int i = 0; i < 70; ++i) h.config.Set("k" + std::to_string(i), "v");
  EXPECT_FALSE(EncodeLabelHeader(h).ok());
}

TEST(Layout, LabelsAtBothEndsAndDataBetween) {
  uint64_t raw = (64ull << 20) + 12345;  // not a multiple of 64 KiB
  auto l = ComputeLayout(raw, 4096);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->end_bytes, 64ull << 20);
  EXPECT_EQ(l->front_ring, 65536u);
  EXPECT_EQ(l->ring_bytes, 128u * 4096);
  EXPECT_EQ(l->data_begin, 65536u + 128 * 4096);
  EXPECT_EQ(l->back_header, (64ull << 20) - 65536);
  EXPECT_EQ(l->back_header, BackHeaderOffset(raw));
  EXPECT_EQ(l->back_ring, l->back_header - 128 * 4096);
  EXPECT_EQ(l->data_end, l->back_ring);
  EXPECT_EQ(l->data_units(), (l->data_end - l->data_begin) / 4096);
  EXPECT_EQ(l->SlotOffset(LabelPosition::kFront, 3), 65536u + 3 * 4096);
  EXPECT_EQ(l->SlotOffset(LabelPosition::kBack, 130), l->back_ring + 2 * 4096);
  EXPECT_EQ(l->data_begin % 4096, 0u);
  auto big_unit = ComputeLayout(raw, 65536);
  ASSERT_TRUE(big_unit.ok());
  EXPECT_EQ(big_unit->data_begin % 65536, 0u);
  EXPECT_EQ(big_unit->data_end % 65536, 0u);
  EXPECT_FALSE(ComputeLayout(2 << 20, 4096).ok());
  EXPECT_FALSE(ComputeLayout(raw, 8192 + 1).ok());
  EXPECT_EQ(*AllocationUnitFor(512), 4096u);
  EXPECT_EQ(*AllocationUnitFor(16384), 16384u);
  EXPECT_FALSE(AllocationUnitFor(1 << 20).ok());
}

}  // namespace
}  // namespace arcstore::format
