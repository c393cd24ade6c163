// fio's number formatting, so that our text output reads like fio's.
//
// Num2Str(v, max_len, pow2, unit): v with the fewest SI (k, M, G...) or IEC
// (Ki, Mi...) prefixes that make its integer part at most `max_len` digits,
// keeping as many decimals as fit in max_len (fio's num2str with base 1):
//   Num2Str(11033, 4, false, kNone)        -> "11.0k"
//   Num2Str(45200000, 4, true, kBytesPerSec) -> "43.1MiB/s"
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace arcstore::bench {

enum class N2SUnit { kNone, kPerSec, kBytes, kBits, kBytesPerSec, kBitsPerSec };

std::string Num2Str(uint64_t value, int max_len, bool pow2, N2SUnit unit);

// printf into a std::string.
std::string StrFormat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace arcstore::bench
