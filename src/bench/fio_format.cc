#include "bench/fio_format.h"

#include <cstdarg>
#include <cstdio>

namespace arcstore::bench {

std::string StrFormat(const char* fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if (n < 0) return {};
  if (static_cast<size_t>(n) < sizeof(small)) return std::string(small, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  big.resize(static_cast<size_t>(n));
  return big;
}

std::string Num2Str(uint64_t num, int max_len, bool pow2, N2SUnit unit) {
  static const char* const kSi[] = {"", "k", "M", "G", "T", "P"};
  static const char* const kIec[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  static const char* const kUnit[] = {"", "/s", "B", "bit", "B/s", "bit/s"};
  const char* const* prefix = pow2 ? kIec : kSi;
  const uint64_t thousand = pow2 ? 1024 : 1000;
  if (unit == N2SUnit::kBits || unit == N2SUnit::kBitsPerSec) num *= 8;
  int post = 0;
  bool divided = false;
  uint64_t modulo = 0;
  bool carry = false;
  while (post < 6) {
    if (static_cast<int>(std::to_string(num).size()) <= max_len) break;
    modulo = num % thousand;
    num /= thousand;
    carry = modulo >= thousand / 2;
    divided = true;
    post++;
  }
  if (post >= 6) post = 0;
  const char* u = kUnit[static_cast<int>(unit)];
  int digits = static_cast<int>(std::to_string(num).size());
  if (!divided || max_len - digits <= 1) {
    if (divided && carry) num++;
    return StrFormat("%llu%s%s", static_cast<unsigned long long>(num), prefix[post], u);
  }
  int decimals = max_len - digits - 1;
  std::string frac = StrFormat("%.*f", decimals, static_cast<double>(modulo) / static_cast<double>(thousand));
  // "0.xx" -> "xx"; a rounding up to "1.00" carries into the integer part.
  if (frac[0] == '1') {
    num++;
    frac = std::string(static_cast<size_t>(decimals) + 2, '0');
  }
  return StrFormat("%llu.%s%s%s", static_cast<unsigned long long>(num), frac.c_str() + 2,
                   prefix[post], u);
}

}  // namespace arcstore::bench
