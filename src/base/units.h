// Sizes and durations: parsing and printing.
//
// Sizes use binary multiples: "4K" = 4096, "1.5M", "2GiB", "1T"; "B" or no
// suffix means bytes; the suffixes K, KB, KiB (any case) all mean 1024. A
// size must fit in 63 bits and be a whole number of bytes.
// Durations: "500us", "100ms", "5s", "2m", "1h", "250ns"; a bare number is
// in the unit the caller names.
//
// (fio's own size rules, with kb_base, live in src/bench; this is the
// engine's one syntax for options and the CLI.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace arcstore {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;
inline constexpr uint64_t kTiB = 1024 * kGiB;

inline constexpr uint64_t kNsPerUs = 1000;
inline constexpr uint64_t kNsPerMs = 1000 * 1000;
inline constexpr uint64_t kNsPerSec = 1000 * 1000 * 1000;

// Parses a size; the error names the text and what is wrong with it.
Result<uint64_t> ParseSizeBytes(std::string_view text);

enum class DurationUnit { kNs, kUs, kMs, kSec };
// Parses a duration into nanoseconds; a bare number is in `bare_unit`.
Result<uint64_t> ParseDurationNs(std::string_view text, DurationUnit bare_unit = DurationUnit::kSec);

// "0 B", "4.0 KiB", "1.5 GiB" (one decimal, binary units).
std::string FormatBytes(uint64_t bytes);
// Short arcstat-style: "4.0K", "1.5G", "512".
std::string FormatBytesShort(uint64_t bytes);
// "250ns", "12.5us", "3.20ms", "1.50s".
std::string FormatDurationNs(uint64_t ns);

bool IsPowerOfTwo(uint64_t x);

}  // namespace arcstore
