// See stall_watch.h.
#include "bench/stall_watch.h"

#include <algorithm>
#include <string>

#include "bench/fio_format.h"

namespace arcstore::bench {

uint64_t IosDuringStalls(const MachineStalls& s, std::span<const SlowIo> ios) {
  // Both lists are in time order (events as seen, I/Os by start within a
  // job, clones appended): a binary search per I/O keeps it exact for any
  // order.
  uint64_t n = 0;
  for (const SlowIo& io : ios) {
    const uint64_t begin = io.start_ns, end = io.start_ns + io.lat_ns;
    auto first_ending_after = std::lower_bound(
        s.events.begin(), s.events.end(), begin, [&s](const StallEvent& e, uint64_t t) {
          return s.start_ns + e.at_ns + e.duration_ns <= t;
        });
    if (first_ending_after != s.events.end() && s.start_ns + first_ending_after->at_ns < end) n++;
  }
  return n;
}

std::string StallText(const MachineStalls& s, std::span<const SlowIo> slow_ios) {
  auto ms = [](uint64_t ns) { return StrFormat("%.1f ms", static_cast<double>(ns) / 1e6); };
  std::string line = "  machine      : ";
  const std::string over = StrFormat(" in %.1f s", static_cast<double>(s.watched_ns) / 1e9);
  if (s.stalls == 0) {
    line += "no stall of " + ms(s.threshold_ns) + " or more" + over;
  } else {
    line += StrFormat("%llu stalls of ", static_cast<unsigned long long>(s.stalls)) +
            ms(s.threshold_ns) + " or more" + over + " (" + ms(s.stall_ns) + " in all, worst " +
            ms(s.worst_ns) + "): no CPU ran the process (the host's CPU limit, or steal)";
  }
  if (!slow_ios.empty()) {
    line += StrFormat("; I/Os of %s or more: %zu, %llu of them during a stall",
                      ms(kSlowIoNs).c_str(), slow_ios.size(),
                      static_cast<unsigned long long>(IosDuringStalls(s, slow_ios)));
  }
  return line + "\n";
}

}  // namespace arcstore::bench
