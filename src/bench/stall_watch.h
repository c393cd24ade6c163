// The bench's view of machine stalls (base/stall_watch.h): the job's slow
// I/Os that overlapped one, and the report's `machine` line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/stall_watch.h"

namespace arcstore::bench {

using arcstore::MachineStalls;
using arcstore::StallEvent;
using arcstore::StallOptions;
using arcstore::StallRecorder;
using arcstore::WatchStalls;

// An I/O of a job that took kSlowIoNs or more, on the watch's clock.
inline constexpr uint64_t kSlowIoNs = 10'000'000;
inline constexpr size_t kMaxSlowIos = 100000;
struct SlowIo {
  uint64_t start_ns = 0;
  uint64_t lat_ns = 0;
};

// How many of `ios` overlap a stall kept in `s.events`.
uint64_t IosDuringStalls(const MachineStalls& s, std::span<const SlowIo> ios);
// One line for the bench's report ("  machine      : ..."), with how many
// of the job's slow I/Os overlapped a stall.
std::string StallText(const MachineStalls& s, std::span<const SlowIo> slow_ios);

}  // namespace arcstore::bench
