#include "nbd/handshake.h"

#include <cstring>
#include <set>

#include "base/clock.h"
#include "nbd/protocol.h"

namespace arcstore::nbd {
namespace {

// A bounds-checked cursor over an option's data.
class Cursor {
 public:
  explicit Cursor(const std::vector<uint8_t>& data) : data_(data) {}
  bool U16(uint16_t* v) { return Take(2) && (*v = Load16(&data_[pos_ - 2]), true); }
  bool U32(uint32_t* v) { return Take(4) && (*v = Load32(&data_[pos_ - 4]), true); }
  bool String(uint32_t length, std::string* s) {
    if (!Take(length)) return false;
    s->assign(reinterpret_cast<const char*>(&data_[pos_ - length]), length);
    return true;
  }
  size_t left() const { return data_.size() - pos_; }

 private:
  bool Take(uint64_t n) {
    if (n > left()) return false;
    pos_ += n;
    return true;
  }
  const std::vector<uint8_t>& data_;
  size_t pos_ = 0;
};

std::vector<uint8_t> Info(uint16_t type, size_t body_bytes) {
  std::vector<uint8_t> v(2 + body_bytes);
  Store16(v.data(), type);
  return v;
}

}  // namespace

uint16_t TransmissionFlags(bool read_only, bool structured_replies) {
  uint16_t f = kTxHasFlags | kTxSendFlush | kTxSendFua | kTxCanMultiConn | kTxSendCache;
  if (read_only) {
    f |= kTxReadOnly;
  } else {
    f |= kTxSendTrim | kTxSendWriteZeroes | kTxSendFastZero;
  }
  if (structured_replies) f |= kTxSendDf;
  return f;
}

Handshake::Handshake(Transport* transport, Reader* reader, const std::vector<Export>* exports,
                     const ServerOptions* options, NbdStats* stats, bool refuse,
                     HandshakeSecurity security)
    : transport_(transport),
      reader_(reader),
      exports_(*exports),
      options_(*options),
      stats_(stats),
      refuse_(refuse),
      security_(std::move(security)),
      identity_(security_.unix_socket ? kUnixIdentity : kAnonymousIdentity) {}

Status Handshake::SendGreeting() {
  uint8_t g[18];
  Store64(g, kNbdMagic);
  Store64(g + 8, kOptionMagic);
  Store16(g + 16, kFlagFixedNewstyle | kFlagNoZeroes);
  iovec iov{g, sizeof(g)};
  Status s = transport_->WriteAll(&iov, 1);
  if (!s.ok()) stats_->Error(Ended(false));
  return s;
}

ErrorKind Handshake::Ended(bool timed_out) const {
  return timed_out || DefaultClock()->NowNs() >= security_.deadline_ns
             ? ErrorKind::kHandshakeTimeout
             : ErrorKind::kHandshakeDisconnect;
}

Status Handshake::ReadClientFlags() {
  uint8_t f[4];
  Reader::Outcome o = reader_->ReadExact(f, sizeof(f));
  if (o != Reader::Outcome::kOk) {
    stats_->Error(Ended(o == Reader::Outcome::kTimeout));
    return Status::Aborted("client left before sending its flags");
  }
  uint32_t flags = Load32(f);
  if ((flags & ~(kClientFlagFixedNewstyle | kClientFlagNoZeroes)) != 0) {
    stats_->Error(ErrorKind::kBadClientFlags);
    return Status::InvalidArgument("unknown client flags " + std::to_string(flags));
  }
  no_zeroes_ = (flags & kClientFlagNoZeroes) != 0;
  return Status::Ok();
}

Status Handshake::Run(Negotiated* out) {
  ARC_RETURN_IF_ERROR(SendGreeting());
  ARC_RETURN_IF_ERROR(ReadClientFlags());
  for (uint32_t n = 0;; n++) {
    if (n == kMaxOptionsPerHandshake) {
      stats_->Error(ErrorKind::kTooManyOptions);
      return Status::ResourceExhausted("more than " + std::to_string(n) + " options");
    }
    uint8_t h[kOptionHeaderBytes];
    Reader::Outcome o = reader_->ReadExact(h, sizeof(h));
    if (o != Reader::Outcome::kOk) {
      stats_->Error(Ended(o == Reader::Outcome::kTimeout));
      return Status::Aborted("client left during the handshake");
    }
    if (Load64(h) != kOptionMagic) {
      stats_->Error(ErrorKind::kBadMagic);
      return Status::InvalidArgument("option without IHAVEOPT magic");
    }
    uint32_t option = Load32(h + 8);
    uint32_t length = Load32(h + 12);
    if (length > kMaxOptionDataBytes) {
      stats_->Error(ErrorKind::kOversizedOption);
      return Status::InvalidArgument("option " + std::to_string(option) + " carries " +
                                     std::to_string(length) + " bytes");
    }
    std::vector<uint8_t> data(length);
    Reader::Outcome od = length > 0 ? reader_->ReadExact(data.data(), length) : Reader::Outcome::kOk;
    if (od != Reader::Outcome::kOk) {
      stats_->Error(Ended(od == Reader::Outcome::kTimeout));
      return Status::Aborted("client left inside an option");
    }
    switch (HandleOption(option, data, out)) {
      case Next::kContinue: break;
      case Next::kTransmit: return Status::Ok();
      case Next::kClose:
        return close_reason_.ok() ? Status::Aborted("option reply could not be sent")
                                  : close_reason_;
    }
    if (send_failed_) return Status::Aborted("option reply could not be sent");
  }
}

Handshake::Next Handshake::HandleOption(uint32_t option, const std::vector<uint8_t>& data,
                                        Negotiated* out) {
  if (option == kOptAbort) {
    quiet_send_failure_ = true;  // clients may close without reading the ACK
    Reply(option, kRepAck);
    close_reason_ = Status::Aborted("client sent NBD_OPT_ABORT");
    return Next::kClose;
  }
  if (refuse_) {
    if (option == kOptExportName) {
      close_reason_ = Status::ResourceExhausted("refused: max_connections reached");
      return Next::kClose;
    }
    Error(option, kRepErrPolicy, ErrorKind::kCount,
          "server busy: max_connections (" + std::to_string(options_.max_connections) +
              ") reached");
    return Next::kContinue;
  }
  if (option == kOptStartTls) return HandleStartTls(data);
  Next refused;
  if (RefuseWithoutTls(option, &refused)) return refused;
  switch (option) {
    case kOptExportName: return HandleExportName(data, out);
    case kOptInfo:
    case kOptGo: return HandleInfoOrGo(option, data, out);
    case kOptList: return HandleList(data);
    case kOptStructuredReply: return HandleStructuredReply(data);
    case kOptListMetaContext:
    case kOptSetMetaContext: return HandleMetaContext(option, data);
    default:
      return Error(option, kRepErrUnsup, ErrorKind::kUnknownOption,
                   "option " + std::to_string(option) + " is not supported");
  }
}

Negotiated Handshake::Agree(size_t export_index) const {
  Negotiated n;
  n.export_index = export_index;
  n.structured_replies = structured_;
  n.allocation_context = meta_allocation_ && meta_export_ == static_cast<int>(export_index);
  n.read_only = AccessTo(export_index) != Access::kReadWrite;
  n.transmission_flags = TransmissionFlags(n.read_only, structured_);
  n.tls = tls_active_;
  n.identity = identity_;
  return n;
}

bool Handshake::Reply(uint32_t option, uint32_t type, const void* payload, size_t length) {
  uint8_t h[kOptionReplyHeaderBytes];
  Store64(h, kOptionReplyMagic);
  Store32(h + 8, option);
  Store32(h + 12, type);
  Store32(h + 16, static_cast<uint32_t>(length));
  iovec iov[2] = {{h, sizeof(h)}, {const_cast<void*>(payload), length}};
  if (!transport_->WriteAll(iov, length > 0 ? 2 : 1).ok()) {
    if (!send_failed_ && !quiet_send_failure_) stats_->Error(Ended(false));
    send_failed_ = true;
    return false;
  }
  return true;
}

Handshake::Next Handshake::Error(uint32_t option, uint32_t type, ErrorKind kind,
                                 const std::string& message) {
  if (kind != ErrorKind::kCount) stats_->Error(kind);
  Reply(option, type, message.data(), message.size());
  return Next::kContinue;
}

Handshake::Next Handshake::HandleExportName(const std::vector<uint8_t>& data, Negotiated* out) {
  // This option cannot be answered with an error: a bad one ends the session.
  std::string name(data.begin(), data.end());
  int index = data.size() > kMaxStringBytes ? -1 : FindExport(name);
  if (index < 0) {
    stats_->Error(data.size() > kMaxStringBytes ? ErrorKind::kInvalidOption
                                                : ErrorKind::kUnknownExport);
    close_reason_ = Status::NotFound("NBD_OPT_EXPORT_NAME: no export '" + name.substr(0, 64) + "'");
    return Next::kClose;
  }
  *out = Agree(static_cast<size_t>(index));
  uint8_t r[10 + 124] = {};
  Store64(r, exports_[index].volume->info().size_bytes);
  Store16(r + 8, out->transmission_flags);
  iovec iov{r, no_zeroes_ ? size_t{10} : sizeof(r)};
  if (!transport_->WriteAll(&iov, 1).ok()) {
    stats_->Error(Ended(false));
    close_reason_ = Status::Aborted("export reply could not be sent");
    return Next::kClose;
  }
  return Next::kTransmit;
}

Handshake::Next Handshake::HandleInfoOrGo(uint32_t option, const std::vector<uint8_t>& data,
                                          Negotiated* out) {
  Cursor c(data);
  uint32_t name_length = 0;
  std::string name;
  if (!c.U32(&name_length) || name_length > kMaxStringBytes) {
    return Error(option, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "export name missing or longer than 4096 bytes");
  }
  uint16_t count = 0;
  if (!c.String(name_length, &name) || !c.U16(&count) || c.left() != 2u * count) {
    return Error(option, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "option length does not match its contents");
  }
  std::set<uint16_t> wanted;
  for (uint16_t i = 0; i < count; i++) {
    uint16_t type = 0;
    c.U16(&type);
    wanted.insert(type);
  }
  int index = FindExport(name);
  if (index < 0) {
    return Error(option, kRepErrUnknown, ErrorKind::kUnknownExport,
                 "no export named '" + name + "'");
  }
  const Export& e = exports_[index];
  const VolumeInfo info = e.volume->info();
  Negotiated agreed = Agree(static_cast<size_t>(index));

  std::vector<uint8_t> ex = Info(kInfoExport, 10);
  Store64(&ex[2], info.size_bytes);
  Store16(&ex[10], agreed.transmission_flags);
  if (!Reply(option, kRepInfo, ex.data(), ex.size())) return Next::kClose;
  // Sent whether asked or not: the constraints are the defaults' superset.
  std::vector<uint8_t> bs = Info(kInfoBlockSize, 12);
  Store32(&bs[2], 1);
  Store32(&bs[6], std::max<uint32_t>(512, info.record_size_bytes));
  Store32(&bs[10], options_.max_payload_bytes);
  if (!Reply(option, kRepInfo, bs.data(), bs.size())) return Next::kClose;
  if (wanted.count(kInfoName) != 0) {
    std::vector<uint8_t> nm = Info(kInfoName, e.name.size());
    std::memcpy(&nm[2], e.name.data(), e.name.size());
    if (!Reply(option, kRepInfo, nm.data(), nm.size())) return Next::kClose;
  }
  if (wanted.count(kInfoDescription) != 0 && !e.description.empty()) {
    std::vector<uint8_t> d = Info(kInfoDescription, e.description.size());
    std::memcpy(&d[2], e.description.data(), e.description.size());
    if (!Reply(option, kRepInfo, d.data(), d.size())) return Next::kClose;
  }
  if (!Reply(option, kRepAck)) return Next::kClose;
  if (option == kOptInfo) return Next::kContinue;
  *out = agreed;
  return Next::kTransmit;
}

Handshake::Next Handshake::HandleList(const std::vector<uint8_t>& data) {
  if (!data.empty()) {
    return Error(kOptList, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "NBD_OPT_LIST carries no data");
  }
  for (size_t i = 0; i < exports_.size(); i++) {
    const Export& e = exports_[i];
    if (AccessTo(i) == Access::kNone) continue;  // not even its name
    std::vector<uint8_t> s(4 + e.name.size() + e.description.size());
    Store32(s.data(), static_cast<uint32_t>(e.name.size()));
    std::memcpy(&s[4], e.name.data(), e.name.size());
    std::memcpy(&s[4 + e.name.size()], e.description.data(), e.description.size());
    if (!Reply(kOptList, kRepServer, s.data(), s.size())) return Next::kClose;
  }
  Reply(kOptList, kRepAck);
  return Next::kContinue;
}

Handshake::Next Handshake::HandleStructuredReply(const std::vector<uint8_t>& data) {
  if (!data.empty()) {
    return Error(kOptStructuredReply, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "NBD_OPT_STRUCTURED_REPLY carries no data");
  }
  if (structured_) {
    return Error(kOptStructuredReply, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "structured replies already negotiated");
  }
  structured_ = true;
  Reply(kOptStructuredReply, kRepAck);
  return Next::kContinue;
}

Handshake::Next Handshake::HandleMetaContext(uint32_t option, const std::vector<uint8_t>& data) {
  const bool set = option == kOptSetMetaContext;
  if (set) {  // a SET replaces the selection even when it fails
    meta_export_ = -1;
    meta_allocation_ = false;
  }
  if (!structured_) {
    return Error(option, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "negotiate structured replies before meta contexts");
  }
  Cursor c(data);
  uint32_t name_length = 0, count = 0;
  std::string name;
  if (!c.U32(&name_length) || name_length > kMaxStringBytes || !c.String(name_length, &name) ||
      !c.U32(&count)) {
    return Error(option, kRepErrInvalid, ErrorKind::kInvalidOption, "malformed meta context option");
  }
  if (count > kMaxMetaQueries) {
    return Error(option, kRepErrTooBig, ErrorKind::kInvalidOption, "too many queries");
  }
  bool match = !set && count == 0;  // LIST with no query lists everything
  for (uint32_t i = 0; i < count; i++) {
    uint32_t qlen = 0;
    std::string q;
    if (!c.U32(&qlen) || qlen > kMaxStringBytes || !c.String(qlen, &q)) {
      return Error(option, kRepErrInvalid, ErrorKind::kInvalidOption,
                   "query missing or longer than 4096 bytes");
    }
    if (q.find(':') == std::string::npos) {
      return Error(option, kRepErrInvalid, ErrorKind::kInvalidOption,
                   "query '" + q.substr(0, 64) + "' has no namespace");
    }
    if (q == kAllocationContext || (!set && q == "base:")) match = true;
  }
  if (c.left() != 0) {
    return Error(option, kRepErrInvalid, ErrorKind::kInvalidOption,
                 "option length does not match its contents");
  }
  int index = FindExport(name);
  if (index < 0) {
    return Error(option, kRepErrUnknown, ErrorKind::kUnknownExport,
                 "no export named '" + name + "'");
  }
  if (match) {
    std::vector<uint8_t> r(4 + sizeof(kAllocationContext) - 1);
    Store32(r.data(), set ? kAllocationContextId : 0);
    std::memcpy(&r[4], kAllocationContext, sizeof(kAllocationContext) - 1);
    if (!Reply(option, kRepMetaContext, r.data(), r.size())) return Next::kClose;
  }
  if (set) {
    meta_export_ = index;
    meta_allocation_ = match;
  }
  Reply(option, kRepAck);
  return Next::kContinue;
}

}  // namespace arcstore::nbd
