// SeededRandom: a fast, reproducible random source (xoshiro256**).
//
// Randomized tests and workloads take their seed from ARCSTORE_SEED when set,
// otherwise from the system, and print it ("seed=123 (ARCSTORE_SEED=123 to
// replay)") so that any failure replays exactly.
//
// Thread-safety: none; give each thread its own instance (Fork()).
#pragma once

#include <cstdint>
#include <string_view>

namespace arcstore {

// A non-zero 64-bit identifier from the system's entropy source (pool,
// device, volume and log guids).
uint64_t NewGuid();

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed);

  // Seed from ARCSTORE_SEED or the system; prints "<who>: seed=N" to stderr.
  static SeededRandom FromEnvironment(std::string_view who);

  uint64_t seed() const { return seed_; }
  uint64_t Next();
  // Uniform in [0, n); n > 0.
  uint64_t Uniform(uint64_t n);
  // Uniform in [lo, hi]; lo <= hi.
  uint64_t Range(uint64_t lo, uint64_t hi);
  // True with probability num/den.
  bool OneIn(uint64_t den) { return Uniform(den) == 0; }
  double NextDouble();  // [0, 1)
  void Fill(void* buf, size_t len);
  // An independent stream derived from this one (for another thread).
  SeededRandom Fork();

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

// Scales iteration counts of randomized and torture tests: ARCSTORE_TEST_SCALE
// (a positive number, default 1.0). CI's sanitizer runs set it below 1.
double TestScale();
// max(1, base * TestScale()).
uint64_t ScaledIterations(uint64_t base);

}  // namespace arcstore
