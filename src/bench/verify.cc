// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, table-driven) and
// MD5 written from RFC 1321, plus the verify block layout of verify.h.

#include "bench/verify.h"

#include <array>
#include <cmath>
#include <cstring>

namespace arcstore::bench {
namespace {

std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

uint32_t Rotl(uint32_t x, uint32_t c) { return (x << c) | (x >> (32 - c)); }

struct Md5State {
  uint32_t a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;
};

const std::array<uint32_t, 64>& Md5K() {
  static const std::array<uint32_t, 64> k = [] {
    std::array<uint32_t, 64> t{};
    for (int i = 0; i < 64; i++) {
      t[i] = static_cast<uint32_t>(std::floor(std::fabs(std::sin(i + 1.0)) * 4294967296.0));
    }
    return t;
  }();
  return k;
}

void Md5Block(Md5State* s, const uint8_t* p) {
  static constexpr uint32_t kShift[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                          5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                          4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                          6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
  uint32_t m[16];
  for (int i = 0; i < 16; i++) {
    m[i] = uint32_t{p[i * 4]} | uint32_t{p[i * 4 + 1]} << 8 | uint32_t{p[i * 4 + 2]} << 16 |
           uint32_t{p[i * 4 + 3]} << 24;
  }
  uint32_t a = s->a, b = s->b, c = s->c, d = s->d;
  for (int i = 0; i < 64; i++) {
    uint32_t f;
    int g;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) % 16;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) % 16;
    }
    uint32_t tmp = d;
    d = c;
    c = b;
    b = b + Rotl(a + f + Md5K()[i] + m[g], kShift[i]);
    a = tmp;
  }
  s->a += a;
  s->b += b;
  s->c += c;
  s->d += d;
}

void Put64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint64_t Get64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Checksum of bytes [0, 16) and [32, n): 16 bytes.
void Digest(VerifyKind kind, std::span<const uint8_t> block, uint8_t out[16]) {
  std::memset(out, 0, 16);
  if (kind == VerifyKind::kCrc32c) {
    uint32_t crc = Crc32c(0, block.data(), 16);
    crc = Crc32c(crc, block.data() + kVerifyHeaderBytes, block.size() - kVerifyHeaderBytes);
    std::memcpy(out, &crc, 4);
    return;
  }
  // MD5(prefix || MD5(payload)): covers the same bytes without a copy.
  uint8_t inner[16];
  Md5(block.data() + kVerifyHeaderBytes, block.size() - kVerifyHeaderBytes, inner);
  uint8_t both[32];
  std::memcpy(both, block.data(), 16);
  std::memcpy(both + 16, inner, 16);
  Md5(both, sizeof(both), out);
}

}  // namespace

uint32_t Crc32c(uint32_t crc, const void* data, size_t len) {
  static const std::array<uint32_t, 256> kTable = MakeCrcTable();
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < len; i++) crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void Md5(const void* data, size_t len, uint8_t out[16]) {
  Md5State s;
  const auto* p = static_cast<const uint8_t*>(data);
  size_t full = len / 64;
  for (size_t i = 0; i < full; i++) Md5Block(&s, p + i * 64);
  uint8_t tail[128] = {};
  size_t rest = len % 64;
  std::memcpy(tail, p + full * 64, rest);
  tail[rest] = 0x80;
  size_t tail_len = rest < 56 ? 64 : 128;
  uint64_t bits = static_cast<uint64_t>(len) * 8;
  for (int i = 0; i < 8; i++) tail[tail_len - 8 + i] = static_cast<uint8_t>(bits >> (8 * i));
  Md5Block(&s, tail);
  if (tail_len == 128) Md5Block(&s, tail + 64);
  const uint32_t words[4] = {s.a, s.b, s.c, s.d};
  for (int i = 0; i < 4; i++) {
    for (int k = 0; k < 4; k++) out[i * 4 + k] = static_cast<uint8_t>(words[i] >> (8 * k));
  }
}

void FillVerifyBlock(VerifyKind kind, uint64_t offset, uint64_t sequence, std::span<uint8_t> block) {
  Put64(block.data(), offset);
  Put64(block.data() + 8, sequence);
  // Payload: a splitmix64 stream seeded by (offset, sequence).
  uint64_t x = offset * 0x9E3779B97F4A7C15ull ^ sequence;
  size_t i = kVerifyHeaderBytes;
  for (; i + 8 <= block.size(); i += 8) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    Put64(block.data() + i, z ^ (z >> 31));
  }
  for (; i < block.size(); i++) block[i] = static_cast<uint8_t>(i);
  uint8_t d[16];
  Digest(kind, block, d);
  std::memcpy(block.data() + 16, d, 16);
}

Status CheckVerifyBlock(VerifyKind kind, uint64_t offset, std::span<const uint8_t> block) {
  uint8_t d[16];
  Digest(kind, block, d);
  const char* name = kind == VerifyKind::kMd5 ? "md5" : "crc32c";
  if (std::memcmp(d, block.data() + 16, 16) != 0) {
    return Status::Corruption("verify " + std::string(name) + " mismatch at offset " +
                              std::to_string(offset) + " (" + std::to_string(block.size()) +
                              " bytes)");
  }
  uint64_t stored = Get64(block.data());
  if (stored != offset) {
    return Status::Corruption("verify: block at offset " + std::to_string(offset) +
                              " holds the data written for offset " + std::to_string(stored));
  }
  return Status::Ok();
}

}  // namespace arcstore::bench
