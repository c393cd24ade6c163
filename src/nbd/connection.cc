#include "nbd/connection.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "nbd/protocol.h"

namespace arcstore::nbd {

// A WRITE longer than the maximum payload is drained (and answered EINVAL)
// up to this size; a longer one is a hard disconnect. The specification asks
// servers to treat payloads up to 2^25 bytes as legitimate.
inline constexpr uint64_t kDrainLimitBytes = 32 * kMiB;
// Replies up to this size made on the reader thread are held back and sent
// in batches; larger ones (read data) go out at once, without a copy.
inline constexpr size_t kCoalesceMaxBytes = 16 * 1024;
inline constexpr size_t kPendingFlushBytes = 128 * 1024;
// Structured READs up to this size skip the hole map (one volume operation
// instead of two) and are sent as one hole chunk when they read as zeros.
inline constexpr uint32_t kHoleMapMinBytes = 64 * 1024;
// Block status descriptors per reply (the specification: at most 2^20).
inline constexpr size_t kMaxDescriptors = 1 << 16;

struct Connection::Request {
  uint16_t flags = 0;
  uint16_t type = 0;
  uint64_t cookie = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
  uint64_t start_ns = 0;
  uint64_t charged_bytes = 0;        // held against max_in_flight_bytes
  bool run_inline = false;           // on the reader thread, done before Start returns
  std::unique_ptr<uint8_t[]> data;   // WRITE payload or READ result
  const uint8_t* payload = nullptr;  // WRITE payload: data, or the reader's buffer
  std::unique_ptr<PreparedWrite> prepared;  // or: a WRITE payload in the volume's buffers
  std::vector<Extent> extents;       // hole map of a structured READ
};

namespace {

uint32_t ErrnoOf(const Status& s, uint16_t type) {
  switch (s.code()) {
    case StatusCode::kOk: return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: return kEInval;
    case StatusCode::kNoSpace: return kENoSpc;
    case StatusCode::kNotSupported: return type == kCmdWriteZeroes ? kENotSup : kEInval;
    case StatusCode::kAborted: return kEShutdown;
    default: return kEIo;
  }
}

void ChunkHeader(uint8_t* h, uint16_t flags, uint16_t type, uint64_t cookie, uint32_t length) {
  Store32(h, kStructuredReplyMagic);
  Store16(h + 4, flags);
  Store16(h + 6, type);
  Store64(h + 8, cookie);
  Store32(h + 16, length);
}

using Segment = ReadSegment;

// Clips `extents` to [offset, offset + length), merges neighbours of one
// kind, and covers what they leave out as data.
std::vector<Segment> Segments(const std::vector<Extent>& extents, uint64_t offset,
                              uint64_t length) {
  std::vector<Segment> out;
  uint64_t at = offset;
  const uint64_t end = offset + length;
  auto add = [&out](uint64_t o, uint64_t n, bool zero) {
    if (n == 0) return;
    if (!out.empty() && out.back().zero == zero && out.back().offset + out.back().length == o) {
      out.back().length += n;
    } else {
      out.push_back(Segment{o, n, zero});
    }
  };
  for (const Extent& e : extents) {
    if (e.offset != at || at >= end) break;  // not contiguous: stop trusting the map
    uint64_t n = std::min(e.length, end - at);
    if (n == 0) break;
    add(at, n, e.zero);
    at += n;
  }
  add(at, end - at, false);
  return out;
}

RequestPolicy::Options PolicyOptions(const ServerOptions& o) {
  RequestPolicy::Options p;
  p.inline_idle_requests = o.inline_idle_requests;
  p.inline_requests_that_do_not_wait = o.inline_requests_that_do_not_wait;
  return p;
}

}  // namespace

Connection::Connection(std::unique_ptr<Transport> transport, const std::vector<Export>* exports,
                       const ServerOptions* options, NbdStats* stats, PollBudget* poll_budget,
                       bool refuse, HandshakeSecurity security)
    : transport_(std::move(transport)),
      reader_(transport_.get()),
      exports_(*exports),
      options_(*options),
      stats_(stats),
      refuse_(refuse),
      security_(std::move(security)),
      clock_(DefaultClock()),
      poll_(options->poll_window_ns, poll_budget, clock_, stats->poll),
      policy_(PolicyOptions(*options)) {}

Connection::~Connection() = default;

void Connection::StopReading() {
  stopping_ = true;
  transport_->CloseRead();
}

void Connection::ForceClose() {
  stopping_ = true;
  transport_->CloseAll();
}

void Connection::Serve() {
  transport_->SetReadTimeoutNs(options_.handshake_timeout_ns);
  Handshake handshake(transport_.get(), &reader_, &exports_, &options_, stats_, refuse_,
                      std::move(security_));
  const Status agreed = handshake.Run(&negotiated_);
  in_handshake_.store(false, std::memory_order_release);
  if (!agreed.ok()) {
    transport_->CloseAll();
    return;
  }
  transport_->SetReadTimeoutNs(0);
  stats_->handshakes_completed->Add();
  stats_->NoteIdentity(negotiated_.identity);
  const Export& e = exports_[negotiated_.export_index];
  volume_ = e.volume.get();
  const VolumeInfo info = volume_->info();
  size_bytes_ = info.size_bytes;
  record_bytes_ = std::max<uint64_t>(info.record_size_bytes, 1);
  export_stats_ = stats_->export_stats(negotiated_.export_index);
  export_stats_->connections->Add(1);
  reader_thread_ = std::this_thread::get_id();
  volume_->SetCallerThread(true);
  reader_.set_before_wait([this] {
    FlushPending();
    volume_->BeforeCallerWaits();  // after the replies: the client's next request is on its way
  });
  if (options_.poll_window_ns > 0) reader_.set_poll(&poll_);
  Transmit();
  volume_->SetCallerThread(false);
  FlushPending();
  WaitIdle();
  export_stats_->connections->Add(-1);
  transport_->CloseAll();
}

void Connection::Transmit() {
  while (!broken_) {
    uint8_t h[kRequestHeaderBytes];
    Reader::Outcome o = reader_.ReadExact(h, sizeof(h));
    if (o == Reader::Outcome::kEof) return;  // the client closed between requests
    if (o != Reader::Outcome::kOk) {
      if (!stopping_) stats_->Error(ErrorKind::kRequestDisconnect);
      return;
    }
    if (Load32(h) != kRequestMagic) {
      stats_->Error(ErrorKind::kBadMagic);
      return;
    }
    if (!HandleRequest(h)) return;
  }
}

bool Connection::HandleRequest(const uint8_t* h) {
  auto r = std::make_shared<Request>();
  r->flags = Load16(h + 4);
  r->type = Load16(h + 6);
  r->cookie = Load64(h + 8);
  r->offset = Load64(h + 16);
  r->length = Load32(h + 24);
  r->start_ns = clock_->NowNs();
  const bool write = r->type == kCmdWrite;

  if (write && r->length > options_.max_payload_bytes && r->length > kDrainLimitBytes) {
    stats_->Error(ErrorKind::kOversizedPayload);
    return false;  // too large to drain: hard disconnect
  }
  ErrorKind kind = ErrorKind::kCount;
  uint32_t error = Check(*r, &kind);
  if (error != 0) {
    stats_->Error(kind);
    if (write && reader_.Skip(r->length) != Reader::Outcome::kOk) {
      if (!stopping_) stats_->Error(ErrorKind::kRequestDisconnect);
      return false;
    }
    if (r->type < kNumCommands && r->type != kCmdDisc) {
      export_stats_->commands[r->type].errors->Add();
    }
    SendError(*r, error, std::string(ErrorKindName(kind)) + " (" + CommandName(r->type) + ")");
    return true;
  }
  if (r->type == kCmdDisc) return false;
  if (write || r->type == kCmdRead) r->charged_bytes = r->length;
  bool idle = false;
  if (!AcquireSlot(r->charged_bytes, &idle)) return false;
  bool ok = true;
  const bool run_inline = ChooseInline(r.get(), idle, &ok);
  if (!ok) {
    if (!stopping_) stats_->Error(ErrorKind::kRequestDisconnect);
    ReleaseSlot(r->charged_bytes);
    return false;
  }
  r->run_inline = run_inline;
  if (run_inline) stats_->requests_inline->Add();
  Dispatch(r);
  // (A WRITE to a read-only export was refused above.) A long run of
  // inline requests (a client keeping its queue full of cache hits) still
  // gets its replies in bounded batches, and a long inline request its
  // reply at once.
  if (policy_.Dispatched(run_inline, r->length)) {
    FlushPending();
  }
  return true;
}

bool Connection::ChooseInline(Request* r, bool idle, bool* ok) {
  // Alone (a client at queue depth 1): inline whatever it may wait for,
  // FLUSH and FUA included, unless more input arrives with its payload or
  // the commit would wait for a txg sync.
  const bool fua = (r->flags & kCmdFlagFua) != 0;
  const bool commit_would_sync = idle && RequestPolicy::Commits(r->type, fua) && CommitWouldSync();
  const bool alone =
      policy_.RunsAlone(r->type, r->length, fua, idle, reader_.buffered(), commit_would_sync);
  if (alone) {
    // In place only when the payload is exactly what is buffered: then
    // nothing is left behind it and it runs inline.
    if (!ReadPayload(r, /*in_place=*/true)) {
      *ok = false;
      return false;
    }
    if (reader_.buffered() == 0) return true;
  }
  // Otherwise: only what the volume says will not wait.
  const bool hinted = policy_.MayRunHinted(r->type, r->length, fua) && !VolumeMayWait(*r);
  if (!alone && !ReadPayload(r, /*in_place=*/hinted)) {
    *ok = false;
    return false;
  }
  return hinted;
}

bool Connection::VolumeMayWait(const Request& r) {
  VolumeOp op = VolumeOp::kRead;
  switch (r.type) {
    case kCmdWrite: op = VolumeOp::kWrite; break;
    case kCmdTrim: op = VolumeOp::kTrim; break;
    case kCmdWriteZeroes: op = VolumeOp::kWriteZeroes; break;
    default: break;
  }
  const bool wait = volume_->MayWait(op, r.offset, r.length);
  if (wait) stats_->requests_may_wait->Add();
  return wait;
}

bool Connection::CommitWouldSync() {
  const bool wait = volume_->MayWait(VolumeOp::kFlush, 0, 0);
  if (wait) stats_->requests_may_wait->Add();
  return wait;
}

bool Connection::ReadPayload(Request* r, bool in_place) {
  if (r->type != kCmdWrite || r->length == 0) return true;
  // In place, the payload is used where it lies: an inline request
  // completes before the reader reads (and may refill its buffer) again.
  r->payload = in_place ? reader_.TakeBuffered(r->length) : nullptr;
  if (r->payload != nullptr) return true;
  if (r->length >= record_bytes_) {
    // It may hold whole records: received straight into the volume's own
    // record buffers, which its records then adopt without a copy.
    r->prepared = volume_->PrepareWrite(r->offset, r->length);
    return reader_.ReadExactV(r->prepared->pieces()) == Reader::Outcome::kOk;
  }
  r->data = buffers_.Take(r->length);
  r->payload = r->data.get();
  return reader_.ReadExact(r->data.get(), r->length) == Reader::Outcome::kOk;
}

uint32_t Connection::Check(const Request& r, ErrorKind* kind) const {
  const bool ro = negotiated_.read_only;
  const bool structured = negotiated_.structured_replies;
  uint16_t allowed = kCmdFlagFua;
  switch (r.type) {
    case kCmdRead: allowed |= structured ? kCmdFlagDf : 0; break;
    case kCmdWrite:
    case kCmdFlush:
    case kCmdTrim:
    case kCmdCache: break;
    case kCmdWriteZeroes: allowed |= kCmdFlagNoHole | kCmdFlagFastZero; break;
    case kCmdBlockStatus: allowed |= kCmdFlagReqOne; break;
    case kCmdDisc: return 0;  // no reply; the session ends
    default: *kind = ErrorKind::kUnknownCommand; return kEInval;
  }
  if ((r.flags & ~allowed) != 0) {
    *kind = ErrorKind::kBadFlags;
    return kEInval;
  }
  if (ro && (r.type == kCmdWrite || r.type == kCmdTrim || r.type == kCmdWriteZeroes)) {
    *kind = ErrorKind::kReadOnly;
    return kEPerm;
  }
  if (r.type == kCmdFlush) {
    if (r.offset != 0 || r.length != 0) {
      *kind = ErrorKind::kOutOfRange;
      return kEInval;
    }
    return 0;
  }
  if (r.type == kCmdBlockStatus && (!negotiated_.allocation_context || r.length == 0)) {
    *kind = ErrorKind::kNotNegotiated;
    return kEInval;
  }
  if ((r.type == kCmdRead || r.type == kCmdWrite) && r.length > options_.max_payload_bytes) {
    *kind = ErrorKind::kOversizedPayload;
    return r.type == kCmdRead && structured ? kEOverflow : kEInval;
  }
  if (r.offset > size_bytes_ || r.length > size_bytes_ - r.offset) {
    *kind = ErrorKind::kOutOfRange;
    return r.type == kCmdWrite || r.type == kCmdWriteZeroes ? kENoSpc : kEInval;
  }
  return 0;
}

void Connection::Dispatch(const RequestPtr& r) {
  switch (r->type) {
    case kCmdRead:
      if (r->length > 0) r->data = buffers_.Take(r->length);
      if (negotiated_.structured_replies) {
        StartStructuredRead(r);
        return;
      }
      Start(r, VolumeRequest::Read(r->offset, std::span<uint8_t>(r->data.get(), r->length)),
            [this, r](Status s) {
              uint32_t error = ErrnoOf(s, r->type);
              SendSimple(*r, error, r->data.get(), error == 0 ? r->length : 0);
              Complete(r, error);
            });
      return;
    case kCmdWrite: {
      const uint32_t wf = (r->flags & kCmdFlagFua) ? kFua : kWriteNone;
      Start(r,
            r->prepared != nullptr
                ? VolumeRequest::Prepared(std::move(r->prepared), wf)
                : VolumeRequest::Write(r->offset,
                                       std::span<const uint8_t>(r->payload, r->length), wf),
            [this, r](Status s) { Finish(r, std::move(s)); });
      return;
    }
    case kCmdFlush:
      Start(r, VolumeRequest::Flush(), [this, r](Status s) { Finish(r, std::move(s)); });
      return;
    case kCmdTrim:
      Start(r, VolumeRequest::Trim(r->offset, r->length),
            [this, r](Status s) { FlushThenFinish(r, std::move(s)); });
      return;
    case kCmdWriteZeroes: {
      uint32_t zf = ((r->flags & kCmdFlagNoHole) ? kZeroNoHole : kZeroNone) |
                    ((r->flags & kCmdFlagFastZero) ? kZeroFastOnly : kZeroNone);
      Start(r, VolumeRequest::WriteZeroes(r->offset, r->length, zf),
            [this, r](Status s) { FlushThenFinish(r, std::move(s)); });
      return;
    }
    case kCmdCache:
      Start(r, VolumeRequest::Cache(r->offset, r->length),
            [this, r](Status s) { Finish(r, std::move(s)); });
      return;
    case kCmdBlockStatus:
      StartBlockStatus(r);
      return;
    default:
      ARC_CHECK(false) << "unchecked command " << r->type;
  }
}

void Connection::Start(const RequestPtr& r, VolumeRequest vr, Completion done) {
  if (r->run_inline) {
    done(volume_->SubmitAndWait(std::move(vr)));
    return;
  }
  volume_->Submit(std::move(vr), std::move(done));
}

void Connection::FlushThenFinish(const RequestPtr& r, Status s) {
  if (!s.ok() || (r->flags & kCmdFlagFua) == 0) {
    Finish(r, std::move(s));
    return;
  }
  Start(r, VolumeRequest::Flush(), [this, r](Status fs) { Finish(r, std::move(fs)); });
}

void Connection::Finish(const RequestPtr& r, Status s) {
  uint32_t error = ErrnoOf(s, r->type);
  if (error != 0) {
    SendError(*r, error, s.message());
  } else {
    SendSimple(*r, 0, nullptr, 0);
  }
  Complete(r, error);
}

void Connection::StartStructuredRead(const RequestPtr& r) {
  if (r->length <= kHoleMapMinBytes || (r->flags & kCmdFlagDf) != 0) {
    // Small, or one content chunk wanted: no hole map.
    Start(r, VolumeRequest::Read(r->offset, std::span<uint8_t>(r->data.get(), r->length)),
          [this, r](Status s) { FinishStructuredRead(r, std::move(s)); });
    return;
  }
  uint64_t span = std::min<uint64_t>(r->length, options_.max_block_status_bytes);
  Start(r, VolumeRequest::BlockStatus(r->offset, span, &r->extents), [this, r](Status s) {
    if (!s.ok()) r->extents.clear();  // no map: all data
    bool all_zero = true;
    for (const Segment& seg : Segments(r->extents, r->offset, r->length)) {
      all_zero = all_zero && seg.zero;
    }
    if (all_zero) {
      FinishStructuredRead(r, Status::Ok());
      return;
    }
    Start(r, VolumeRequest::Read(r->offset, std::span<uint8_t>(r->data.get(), r->length)),
          [this, r](Status rs) { FinishStructuredRead(r, std::move(rs)); });
  });
}

void Connection::FinishStructuredRead(const RequestPtr& r, Status s) {
  uint32_t error = ErrnoOf(s, r->type);
  if (error != 0) {
    SendError(*r, error, s.message());
    Complete(r, error);
    return;
  }
  if (r->length == 0) {
    uint8_t h[kChunkHeaderBytes];
    ChunkHeader(h, kReplyFlagDone, kReplyTypeNone, r->cookie, 0);
    iovec iov{h, sizeof(h)};
    Send(&iov, 1);
    Complete(r, 0);
    return;
  }
  if (r->extents.empty()) {
    // No hole map: one chunk. A short read of zeros without DF (no hole
    // map was asked for) is sent as a hole.
    const uint8_t* d = r->data.get();
    const bool zero = (r->flags & kCmdFlagDf) == 0 && r->length <= kHoleMapMinBytes &&
                      d[0] == 0 && std::memcmp(d, d + 1, r->length - 1) == 0;
    const Segment one{r->offset, r->length, zero};
    SendReadChunks(*r, std::span<const Segment>(&one, 1));
  } else {
    SendReadChunks(*r, Segments(r->extents, r->offset, r->length));
  }
  Complete(r, 0);
}

void Connection::SendReadChunks(const Request& r, std::span<const Segment> segs) {
  // Headers: 20 bytes + offset (8) + hole size (4) at most. A few segments
  // (every read without a hole map) need no allocation.
  constexpr size_t kOnStack = 4;
  std::array<std::array<uint8_t, 32>, kOnStack> stack_headers;
  std::array<iovec, 2 * kOnStack> stack_iov;
  std::vector<std::array<uint8_t, 32>> heap_headers;
  std::vector<iovec> heap_iov;
  std::array<uint8_t, 32>* headers = stack_headers.data();
  iovec* iov = stack_iov.data();
  if (segs.size() > kOnStack) {
    heap_headers.resize(segs.size());
    heap_iov.resize(2 * segs.size());
    headers = heap_headers.data();
    iov = heap_iov.data();
  }
  int count = 0;
  for (size_t i = 0; i < segs.size(); i++) {
    const Segment& seg = segs[i];
    uint8_t* h = headers[i].data();
    uint16_t flags = i + 1 == segs.size() ? kReplyFlagDone : 0;
    if (seg.zero) {
      ChunkHeader(h, flags, kReplyTypeOffsetHole, r.cookie, 12);
      Store64(h + 20, seg.offset);
      Store32(h + 28, static_cast<uint32_t>(seg.length));
      iov[count++] = {h, 32};
    } else {
      ChunkHeader(h, flags, kReplyTypeOffsetData, r.cookie, static_cast<uint32_t>(8 + seg.length));
      Store64(h + 20, seg.offset);
      iov[count++] = {h, 28};
      iov[count++] = {r.data.get() + (seg.offset - r.offset), seg.length};
    }
  }
  Send(iov, count);
}

void Connection::StartBlockStatus(const RequestPtr& r) {
  uint64_t span = std::min<uint64_t>(r->length, options_.max_block_status_bytes);
  Start(r, VolumeRequest::BlockStatus(r->offset, span, &r->extents), [this, r, span](Status s) {
        const std::vector<Extent>& extents = r->extents;
        uint32_t error = ErrnoOf(s, r->type);
        if (error != 0) {
          SendError(*r, error, s.message());
          Complete(r, error);
          return;
        }
        // Descriptors: (length, flags), neighbours of one state merged.
        std::vector<std::pair<uint64_t, uint32_t>> d;
        uint64_t at = r->offset;
        for (const Extent& e : extents) {
          if (e.offset != at || at >= r->offset + span || d.size() >= kMaxDescriptors) break;
          uint64_t n = std::min(e.length, r->offset + span - at);
          if (n == 0) break;
          uint32_t st = (e.hole ? kStateHole : 0) | (e.zero ? kStateZero : 0);
          if (!d.empty() && d.back().second == st) {
            d.back().first += n;
          } else {
            d.push_back({n, st});
          }
          at += n;
        }
        if (d.empty()) d.push_back({span, 0});  // nothing known: "allocated, data"
        if (r->flags & kCmdFlagReqOne) d.resize(1);
        std::vector<uint8_t> payload(4 + 8 * d.size());
        Store32(payload.data(), kAllocationContextId);
        for (size_t i = 0; i < d.size(); i++) {
          Store32(&payload[4 + 8 * i], static_cast<uint32_t>(d[i].first));
          Store32(&payload[8 + 8 * i], d[i].second);
        }
        uint8_t h[kChunkHeaderBytes];
        ChunkHeader(h, kReplyFlagDone, kReplyTypeBlockStatus, r->cookie,
                    static_cast<uint32_t>(payload.size()));
        iovec iov[2] = {{h, sizeof(h)}, {payload.data(), payload.size()}};
        Send(iov, 2);
        Complete(r, 0);
      });
}

void Connection::SendError(const Request& r, uint32_t error, const std::string& message) {
  if (!negotiated_.structured_replies) {
    SendSimple(r, error, nullptr, 0);
    return;
  }
  size_t mlen = std::min(message.size(), kMaxStringBytes);
  uint8_t h[kChunkHeaderBytes + 6];
  ChunkHeader(h, kReplyFlagDone, kReplyTypeError, r.cookie, static_cast<uint32_t>(6 + mlen));
  Store32(h + 20, error);
  Store16(h + 24, static_cast<uint16_t>(mlen));
  iovec iov[2] = {{h, sizeof(h)}, {const_cast<char*>(message.data()), mlen}};
  Send(iov, mlen > 0 ? 2 : 1);
}

void Connection::SendSimple(const Request& r, uint32_t error, const uint8_t* data, size_t length) {
  uint8_t h[kSimpleReplyBytes];
  Store32(h, kSimpleReplyMagic);
  Store32(h + 4, error);
  Store64(h + 8, r.cookie);
  iovec iov[2] = {{h, sizeof(h)}, {const_cast<uint8_t*>(data), length}};
  Send(iov, length > 0 ? 2 : 1);
}

void Connection::Send(const iovec* iov, int count) {
  if (broken_) return;
  size_t total = 0;
  for (int i = 0; i < count; i++) total += iov[i].iov_len;
  Status s;
  {
    MutexLock l(&send_mu_);
    if (std::this_thread::get_id() == reader_thread_ && total <= kCoalesceMaxBytes) {
      for (int i = 0; i < count; i++) {
        const uint8_t* p = static_cast<const uint8_t*>(iov[i].iov_base);
        pending_.insert(pending_.end(), p, p + iov[i].iov_len);
      }
      if (pending_.size() < kPendingFlushBytes) return;
      iovec all{pending_.data(), pending_.size()};
      s = transport_->WriteAll(&all, 1);
      pending_.clear();
    } else if (!pending_.empty()) {
      std::vector<iovec> all;
      all.push_back({pending_.data(), pending_.size()});
      all.insert(all.end(), iov, iov + count);
      s = transport_->WriteAll(all.data(), static_cast<int>(all.size()));
      pending_.clear();
    } else {
      s = transport_->WriteAll(iov, count);
    }
  }
  if (!s.ok()) SendFailed();
}

void Connection::FlushPending() {
  policy_.RepliesSent();
  Status s;
  {
    MutexLock l(&send_mu_);
    if (pending_.empty()) return;
    if (!broken_) {
      iovec all{pending_.data(), pending_.size()};
      s = transport_->WriteAll(&all, 1);
    }
    pending_.clear();
  }
  if (!s.ok()) SendFailed();
}

void Connection::SendFailed() {
  if (!broken_.exchange(true)) {
    stats_->Error(ErrorKind::kSendFailed);
    transport_->CloseAll();  // wakes the reader: the session is over
  }
}

void Connection::Complete(const RequestPtr& r, uint32_t error) {
  CommandStats& cs = export_stats_->commands[r->type];
  cs.ops->Add();
  if (error != 0) {
    cs.errors->Add();
    stats_->Error(ErrorKind::kVolumeError);
  } else {
    cs.bytes->Add(r->length);
  }
  cs.latency_ns->Record(clock_->NowNs() - r->start_ns);
  // The reply is sent (or copied): the buffer goes back before the slot,
  // while the connection surely still exists.
  buffers_.Give(std::move(r->data), r->length);
  ReleaseSlot(r->charged_bytes);
}

bool Connection::AcquireSlot(uint64_t bytes, bool* idle) {
  // Before waiting for a slot, send what is held back: the client may be
  // waiting for those replies before it can take more of ours.
  bool flushed = false;
  while (true) {
    {
      MutexLock l(&mu_);
      auto full = [&]() ARC_REQUIRES(mu_) {
        return in_flight_ >= options_.max_in_flight_per_connection ||
               (in_flight_ > 0 &&
                in_flight_bytes_ + bytes > options_.max_in_flight_bytes_per_connection);
      };
      if (flushed || !full()) {
        while (full()) cv_.Wait(&mu_);
        *idle = in_flight_ == 0;
        in_flight_++;
        in_flight_bytes_ += bytes;
        return true;
      }
    }
    FlushPending();
    flushed = true;
  }
}

void Connection::ReleaseSlot(uint64_t bytes) {
  MutexLock l(&mu_);
  in_flight_--;
  in_flight_bytes_ -= bytes;
  cv_.SignalAll();
}

void Connection::WaitIdle() {
  MutexLock l(&mu_);
  while (in_flight_ > 0) cv_.Wait(&mu_);
}

}  // namespace arcstore::nbd
