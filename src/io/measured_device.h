// MeasuredDevice: counts and times every request to a device in a stats
// module of its own, and reports each completed read and write to an
// optional observer (the pool's per-I/O trace). The pool's own device is
// measured by its IoQueue per scheduling class; a device without a queue (a
// cache device, which its L2 cache drives directly) is measured here, so
// that `arcstore iostat` has a row for it all the same.
//
//   caller --Submit/Execute--> MeasuredDevice --> inner device
//                                    |  done: ops, bytes, latency (per op)
//                                    +--> observer(TracedIo)
//
// Stats, in the module given (names under "<module>."):
//   device_reads, device_read_bytes, device_read_latency_ns (histogram)
//   device_writes, device_write_bytes, device_write_latency_ns (histogram)
//   device_flushes, device_errors
// Latency is from submission to completion. Discards count as writes of no
// bytes. Execute is forwarded as Execute, so an inner device that runs a
// request on the caller's thread still does.
//
// Thread-safety: as Device. The observer, fixed at construction, is
// called on the completing thread and must not block.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "io/forwarding_device.h"
#include "io/io_trace.h"
#include "stats/registry.h"

namespace arcstore::io {

class MeasuredDevice final : public ForwardingDevice {
 public:
  using Observer = std::function<void(const TracedIo&)>;

  // `inner`, `clock` and `registry` must outlive the device; the module's
  // names must not be declared in `registry` yet. Each completed read and
  // write goes to `observer` (empty: none).
  MeasuredDevice(Device* inner, Clock* clock, stats::Registry* registry, std::string_view module,
                 Observer observer = {});

  void Submit(IoRequest request) override;
  Status Execute(IoRequest request) override;

 private:
  struct Started {
    uint64_t submit_ns;
    IoOp op;
    IoClass cls;
    uint64_t offset;
    uint64_t bytes;
  };
  Started Start(const IoRequest& request) const;
  void Finish(const Started& s, const Status& status);

  Clock* const clock_;
  stats::Counter* reads_;
  stats::Counter* read_bytes_;
  stats::Histogram* read_latency_ns_;
  stats::Counter* writes_;
  stats::Counter* write_bytes_;
  stats::Histogram* write_latency_ns_;
  stats::Counter* flushes_;
  stats::Counter* errors_;
  const Observer observer_;
};

}  // namespace arcstore::io
