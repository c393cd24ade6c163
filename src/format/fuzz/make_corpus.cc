// Writes the seed corpus of the format's fuzz targets from the sample
// structures (format/test_samples.h):
//   format_make_corpus OUT_DIR   -> OUT_DIR/<target>/<name>
// Run by hand when the format changes; the corpus lives in the repository.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "format/compression.h"
#include "format/test_samples.h"

using namespace arcstore::format;
namespace fs = std::filesystem;

static void Put(const fs::path& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  fs::path out = argv[1];
  std::vector<uint8_t> label = *EncodeLabelHeader(samples::Label());
  size_t label_used = kLabelHeaderFixedBytes + label[64] + (label[65] << 8);
  Put(out / "label", "sample", std::vector<uint8_t>(label.begin(), label.begin() + label_used));
  Put(out / "uberblock", "sample", EncodeUberblock(samples::UberblockSample()));
  Put(out / "intent_log", "sample",
      *EncodeLogBlock(samples::kLogGuidSample, 7, samples::LogRecords(), 4096));
  std::vector<uint8_t> bp(kBlockPointerBytes);
  EncodeBlockPointer(samples::DataPointer(), bp.data());
  Put(out / "block_pointer", "data", bp);
  EncodeBlockPointer({.type = BlockType::kZero, .logical_bytes = 4096, .birth_txg = 3}, bp.data());
  Put(out / "block_pointer", "zero", bp);
  std::vector<uint8_t> indirect = *EncodeIndirectBlock(samples::Indirect());
  Put(out / "volume_table", "sample", *EncodeVolumeTable(samples::Volumes()));
  Put(out / "space_log", "sample", *EncodeSpaceLogBlock(samples::SpaceLog()));
  // Indirect seeds: [compression, logical size (3 bytes LE), physical bytes].
  auto with_header = [](uint8_t algo, size_t logical, const std::vector<uint8_t>& body) {
    std::vector<uint8_t> v = {algo, static_cast<uint8_t>(logical),
                              static_cast<uint8_t>(logical >> 8),
                              static_cast<uint8_t>(logical >> 16)};
    v.insert(v.end(), body.begin(), body.end());
    return v;
  };
  Put(out / "indirect_block", "off", with_header(0, indirect.size(), indirect));
  // Decompress seeds: [algo bit, n (2 bytes BE), packed], logical = 1 + 16 n:
  // n = 512 gives 8193 bytes.
  std::vector<uint8_t> text(8193);
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<uint8_t>("arcstore "[i % 9]);
  for (Compression algo : {Compression::kLz4, Compression::kZstd}) {
    std::vector<uint8_t> packed(text.size());
    auto c = *CompressBlock(algo, text, packed);
    packed.resize(c.physical_bytes);
    std::vector<uint8_t> seed = {static_cast<uint8_t>(algo == Compression::kZstd), 0x02, 0x00};
    seed.insert(seed.end(), packed.begin(), packed.end());
    Put(out / "decompress", std::string(CompressionName(algo)), seed);
    std::vector<uint8_t> packed_indirect(indirect.size());
    auto ci = CompressBlock(algo, indirect, packed_indirect);
    if (ci.ok() && ci->used == algo) {
      packed_indirect.resize(ci->physical_bytes);
      Put(out / "indirect_block", std::string(CompressionName(algo)),
          with_header(static_cast<uint8_t>(algo), indirect.size(), packed_indirect));
    }
  }
  return 0;
}
