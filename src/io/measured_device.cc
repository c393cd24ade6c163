// MeasuredDevice; see measured_device.h.
#include "io/measured_device.h"

#include <utility>

namespace arcstore::io {

MeasuredDevice::MeasuredDevice(Device* inner, Clock* clock, stats::Registry* registry,
                               std::string_view module, Observer observer)
    : ForwardingDevice(inner), clock_(clock), observer_(std::move(observer)) {
  using stats::Unit;
  reads_ = registry->AddCounter(module, "device_reads", Unit::kOps, "reads of the device");
  read_bytes_ = registry->AddCounter(module, "device_read_bytes", Unit::kBytes, "bytes read");
  read_latency_ns_ = registry->AddHistogram(module, "device_read_latency_ns", Unit::kNanoseconds,
                                            "read latency, submission to completion");
  writes_ = registry->AddCounter(module, "device_writes", Unit::kOps,
                                 "writes (and discards) to the device");
  write_bytes_ = registry->AddCounter(module, "device_write_bytes", Unit::kBytes, "bytes written");
  write_latency_ns_ = registry->AddHistogram(module, "device_write_latency_ns", Unit::kNanoseconds,
                                             "write latency, submission to completion");
  flushes_ = registry->AddCounter(module, "device_flushes", Unit::kOps, "cache flushes");
  errors_ = registry->AddCounter(module, "device_errors", Unit::kOps, "requests that failed");
}

MeasuredDevice::Started MeasuredDevice::Start(const IoRequest& request) const {
  return {clock_->NowNs(), request.op, request.EffectiveClass(), request.offset, request.length()};
}

void MeasuredDevice::Finish(const Started& s, const Status& status) {
  const uint64_t done_ns = clock_->NowNs();
  const uint64_t latency_ns = done_ns > s.submit_ns ? done_ns - s.submit_ns : 0;
  if (!status.ok()) errors_->Add();
  switch (s.op) {
    case IoOp::kRead:
      reads_->Add();
      read_bytes_->Add(s.bytes);
      read_latency_ns_->Record(latency_ns);
      break;
    case IoOp::kWrite:
      writes_->Add();
      write_bytes_->Add(s.bytes);
      write_latency_ns_->Record(latency_ns);
      break;
    case IoOp::kDiscard:
      writes_->Add();
      write_latency_ns_->Record(latency_ns);
      return;
    case IoOp::kFlush:
      flushes_->Add();
      return;
  }
  if (!observer_) return;
  TracedIo io;
  io.submit_ns = s.submit_ns;
  io.issue_ns = s.submit_ns;
  io.done_ns = done_ns;
  io.cls = s.cls;
  io.op = s.op;
  io.offset = s.offset;
  io.bytes = s.bytes;
  io.ok = status.ok();
  observer_(io);
}

void MeasuredDevice::Submit(IoRequest request) {
  const Started s = Start(request);
  IoCallback done = std::move(request.done);
  request.done = [this, s, done = std::move(done)](const Status& status) {
    Finish(s, status);
    if (done) done(status);
  };
  inner()->Submit(std::move(request));
}

Status MeasuredDevice::Execute(IoRequest request) {
  const Started s = Start(request);
  Status status = inner()->Execute(std::move(request));
  Finish(s, status);
  return status;
}

}  // namespace arcstore::io
