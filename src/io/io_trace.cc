// The per-I/O trace: a ring of records drained to a text file.
//
//   completion / sync marker / application write --Push (mu_, copy one record)--> ring_[head_+count_]
//        ring full: dropped_++ ; count_ reaches wake_at_: cv_.Signal
//   writer thread: wait for wake_at_ or stop --swap the ring out (mu_)-->
//        format and fwrite (file_mu_, without mu_)
//
// Invariants: count_ <= ring_.size(); records leave the ring in the order
// they entered; every record is written once or counted as dropped.
// Locking: mu_ (the ring) is never held while writing the file; file_mu_
// orders the writer thread and Stop's final drain. Lock order: file_mu_
// before mu_.
// Limits: kMinTraceRingEntries..kMaxTraceRingEntries records.
#include "io/io_trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/thread_name.h"

namespace arcstore::io {

namespace {
const char* MarkerName(TraceMarker m) {
  return m == TraceMarker::kSyncStart ? "sync_start" : "sync_end";
}
uint64_t Since(uint64_t start, uint64_t t) { return t > start ? t - start : 0; }
const char* WriteOpName(TracedWriteOp op) {
  switch (op) {
    case TracedWriteOp::kWrite: return "write";
    case TracedWriteOp::kTrim: return "trim";
    case TracedWriteOp::kZero: return "zero";
  }
  return "write";
}
}  // namespace

int IoTrace::WriteLine(const TracedWrite& w) {
  using ull = unsigned long long;
  return std::fprintf(file_, "W\t%llu\t%llu\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%s\n",
                      static_cast<ull>(Since(start_ns_, w.start_ns)),
                      static_cast<ull>(Since(start_ns_, w.done_ns)), WriteOpName(w.op),
                      static_cast<ull>(w.offset), static_cast<ull>(w.bytes),
                      static_cast<ull>(w.wait_ns[0]), static_cast<ull>(w.wait_ns[1]),
                      static_cast<ull>(w.wait_ns[2]), static_cast<ull>(w.wait_ns[3]),
                      static_cast<ull>(w.wait_ns[4]), w.ok ? "ok" : "error");
}

Result<int> CreateNewTraceFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("trace file " + path + ": " + std::strerror(errno));
  return fd;
}

Result<std::unique_ptr<IoTrace>> IoTrace::Start(const std::string& path, uint64_t ring_entries,
                                                Clock* clock, stats::Counter* dropped,
                                                const TraceFileOpener& open) {
  if (ring_entries < kMinTraceRingEntries || ring_entries > kMaxTraceRingEntries) {
    return Status::InvalidArgument("trace ring of " + std::to_string(ring_entries) +
                                   " entries: must be from " +
                                   std::to_string(kMinTraceRingEntries) + " to " +
                                   std::to_string(kMaxTraceRingEntries));
  }
  if (path.empty()) return Status::InvalidArgument("trace file: empty path");
  ARC_ASSIGN_OR_RETURN(int fd, open ? open(path) : CreateNewTraceFile(path));
  std::FILE* f = ::fdopen(fd, "w");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    return Status::IOError("trace file " + path + ": " + std::strerror(err));
  }
  if (std::fputs("# arcstore io trace v3\n", f) < 0) {
    const int err = errno;
    std::fclose(f);
    return Status::IOError("trace file " + path + ": " + std::strerror(err));
  }
  std::unique_ptr<IoTrace> t(new IoTrace(path, f, ring_entries, clock, dropped));
  t->writer_ = std::thread([p = t.get()] {
    NameThisThread("io_trace");
    p->WriterLoop();
  });
  return t;
}

IoTrace::IoTrace(std::string path, std::FILE* file, uint64_t ring_entries, Clock* clock,
                 stats::Counter* dropped)
    : path_(std::move(path)),
      clock_(clock),
      dropped_(dropped),
      start_ns_(clock->NowNs()),
      wake_at_(std::max<uint64_t>(1, ring_entries / 4)),
      ring_(ring_entries),
      file_(file) {}

IoTrace::~IoTrace() { (void)Stop(); }

void IoTrace::Push(const Record& r) {
  MutexLock l(&mu_);
  if (stopping_) return;
  if (count_ == ring_.size()) {
    if (dropped_ != nullptr) dropped_->Add();
    return;
  }
  ring_[(head_ + count_) % ring_.size()] = r;
  if (++count_ == wake_at_) cv_.Signal();
}

void IoTrace::AddIo(const TracedIo& io) {
  Record r;
  r.io = io;
  Push(r);
}

void IoTrace::AddMarker(TraceMarker marker, uint64_t txg) {
  Record r;
  r.type = Record::Type::kMarker;
  r.kind = marker;
  r.txg = txg;
  r.io.done_ns = clock_->NowNs();
  Push(r);
}

void IoTrace::AddCacheIo(uint32_t cache, const TracedIo& io) {
  Record r;
  r.type = Record::Type::kCacheIo;
  r.io = io;
  r.cache = cache;
  Push(r);
}

void IoTrace::AddWrite(const TracedWrite& write) {
  Record r;
  r.type = Record::Type::kWrite;
  r.write = write;
  Push(r);
}

Status IoTrace::DrainToFile() {
  MutexLock f(&file_mu_);
  std::vector<Record> out;
  {
    MutexLock l(&mu_);
    out.reserve(count_);
    for (; count_ > 0; count_--, head_ = (head_ + 1) % ring_.size()) out.push_back(ring_[head_]);
  }
  if (file_ != nullptr) WriteRecords(out);
  return write_error_;
}

void IoTrace::WriteRecords(const std::vector<Record>& records) {
  for (const Record& r : records) {
    int n;
    if (r.type == Record::Type::kMarker) {
      n = std::fprintf(file_, "T\t%llu\t%s\t%llu\n",
                       static_cast<unsigned long long>(Since(start_ns_, r.io.done_ns)),
                       MarkerName(r.kind), static_cast<unsigned long long>(r.txg));
    } else if (r.type == Record::Type::kWrite) {
      n = WriteLine(r.write);
    } else if (r.type == Record::Type::kCacheIo) {
      const TracedIo& io = r.io;
      n = std::fprintf(file_, "C\t%llu\t%llu\t%u\t%s\t%s\t%llu\t%llu\t%s\n",
                       static_cast<unsigned long long>(Since(start_ns_, io.submit_ns)),
                       static_cast<unsigned long long>(Since(start_ns_, io.done_ns)), r.cache,
                       std::string(IoClassName(io.cls)).c_str(),
                       std::string(IoOpName(io.op)).c_str(),
                       static_cast<unsigned long long>(io.offset),
                       static_cast<unsigned long long>(io.bytes), io.ok ? "ok" : "error");
    } else {
      const TracedIo& io = r.io;
      n = std::fprintf(file_, "I\t%llu\t%llu\t%llu\t%s\t%s\t%llu\t%llu\t%u\t%s\n",
                       static_cast<unsigned long long>(Since(start_ns_, io.submit_ns)),
                       static_cast<unsigned long long>(Since(start_ns_, io.issue_ns)),
                       static_cast<unsigned long long>(Since(start_ns_, io.done_ns)),
                       std::string(IoClassName(io.cls)).c_str(),
                       std::string(IoOpName(io.op)).c_str(),
                       static_cast<unsigned long long>(io.offset),
                       static_cast<unsigned long long>(io.bytes), io.parts,
                       io.ok ? "ok" : "error");
    }
    if (n < 0 && write_error_.ok()) {
      write_error_ = Status::IOError("trace file " + path_ + ": " + std::strerror(errno));
    }
  }
}

void IoTrace::WriterLoop() {
  for (;;) {
    bool stop;
    {
      MutexLock l(&mu_);
      while (!stopping_ && (hold_writer_ || count_ < wake_at_)) cv_.Wait(&mu_);
      stop = stopping_;
    }
    if (stop) return;  // Stop drains what is left
    (void)DrainToFile();
  }
}

void IoTrace::HoldWriterForTest(bool hold) {
  MutexLock l(&mu_);
  hold_writer_ = hold;
  cv_.SignalAll();
}

Status IoTrace::Stop() {
  {
    MutexLock l(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  if (writer_.joinable()) writer_.join();
  Status s = DrainToFile();
  MutexLock f(&file_mu_);
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0 && write_error_.ok()) {
      write_error_ = Status::IOError("trace file " + path_ + ": " + std::strerror(errno));
    }
    file_ = nullptr;
  }
  return write_error_;
}

}  // namespace arcstore::io
