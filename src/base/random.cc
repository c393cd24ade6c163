#include "base/random.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "base/check.h"

namespace arcstore {
namespace {

uint64_t SplitMix64(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

SeededRandom::SeededRandom(uint64_t seed) : seed_(seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = SplitMix64(&x);
}

SeededRandom SeededRandom::FromEnvironment(std::string_view who) {
  uint64_t seed;
  const char* env = std::getenv("ARCSTORE_SEED");
  if (env != nullptr && *env != '\0') {
    seed = std::strtoull(env, nullptr, 0);
  } else {
    std::random_device rd;
    seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  std::fprintf(stderr, "%.*s: seed=%llu (ARCSTORE_SEED=%llu to replay)\n",
               static_cast<int>(who.size()), who.data(), static_cast<unsigned long long>(seed),
               static_cast<unsigned long long>(seed));
  return SeededRandom(seed);
}

uint64_t SeededRandom::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint64_t SeededRandom::Uniform(uint64_t n) {
  ARC_CHECK_GT(n, 0u);
  // Lemire's multiply-shift with rejection: unbiased.
  unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    uint64_t threshold = -n % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(Next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

uint64_t SeededRandom::Range(uint64_t lo, uint64_t hi) {
  ARC_CHECK_LE(lo, hi);
  if (hi - lo == UINT64_MAX) return Next();
  return lo + Uniform(hi - lo + 1);
}

double SeededRandom::NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

void SeededRandom::Fill(void* buf, size_t len) {
  auto* p = static_cast<uint8_t*>(buf);
  while (len >= 8) {
    uint64_t v = Next();
    std::memcpy(p, &v, 8);
    p += 8;
    len -= 8;
  }
  if (len > 0) {
    uint64_t v = Next();
    std::memcpy(p, &v, len);
  }
}

SeededRandom SeededRandom::Fork() { return SeededRandom(Next()); }

double TestScale() {
  const char* env = std::getenv("ARCSTORE_TEST_SCALE");
  if (env == nullptr || *env == '\0') return 1.0;
  double v = std::strtod(env, nullptr);
  return v > 0 ? v : 1.0;
}

uint64_t ScaledIterations(uint64_t base) {
  double v = static_cast<double>(base) * TestScale();
  return v < 1 ? 1 : static_cast<uint64_t>(v);
}

uint64_t NewGuid() {
  std::random_device rd;
  uint64_t g = 0;
  while (g == 0) g = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return g;
}

}  // namespace arcstore
