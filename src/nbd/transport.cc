#include "nbd/transport.h"

#include <limits.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/units.h"

namespace arcstore::nbd {

SocketTransport::~SocketTransport() { ::close(fd_); }

namespace {

// recvmsg into `iov[0..count)`; `flags` MSG_DONTWAIT: kBusy when nothing
// has arrived (else EAGAIN is the read timeout).
Result<size_t> ReceiveV(int fd, const iovec* iov, int count, int flags) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = static_cast<size_t>(std::min(count, IOV_MAX));
  while (true) {
    ssize_t r = ::recvmsg(fd, &msg, flags);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (flags & MSG_DONTWAIT) return Status::Busy("nothing to read yet");
      return Status::Aborted("read timed out");
    }
    return Status::IOError(std::string("recvmsg: ") + std::strerror(errno));
  }
}

}  // namespace

Result<size_t> SocketTransport::ReadSome(uint8_t* buf, size_t n) {
  if (tls_) return tls_->Recv(buf, n);
  const iovec iov{buf, n};
  return ReceiveV(fd_, &iov, 1, 0);
}

Result<size_t> SocketTransport::ReadSomeNow(uint8_t* buf, size_t n) {
  const iovec iov{buf, n};
  return ReadSomeVNow(&iov, 1);
}

Result<size_t> SocketTransport::ReadSomeV(const iovec* iov, int count) {
  if (tls_) return tls_->Recv(static_cast<uint8_t*>(iov[0].iov_base), iov[0].iov_len);
  return ReceiveV(fd_, iov, count, 0);
}

Result<size_t> SocketTransport::ReadSomeVNow(const iovec* iov, int count) {
  if (!tls_) return ReceiveV(fd_, iov, count, MSG_DONTWAIT);
  return tls_->RecvNow(static_cast<uint8_t*>(iov[0].iov_base), iov[0].iov_len);
}

TlsOutcome SocketTransport::StartTls(const TlsCredentials* credentials, uint64_t deadline_ns) {
  auto session = std::make_unique<TlsSession>(credentials, fd_);
  TlsOutcome outcome = session->Handshake(deadline_ns);
  if (outcome.failure == TlsFailure::kNone) tls_ = std::move(session);
  return outcome;
}

Status SocketTransport::WriteAll(const iovec* iov_in, int count) {
  if (tls_) return tls_->SendAll(iov_in, count);
  // Copy, so that partial writes can advance the vector; on the stack for
  // the usual few entries (no allocation per reply).
  constexpr int kSmall = 8;
  iovec small[kSmall];
  std::vector<iovec> large;
  iovec* iov = small;
  if (count > kSmall) {
    large.assign(iov_in, iov_in + count);
    iov = large.data();
  } else {
    std::copy(iov_in, iov_in + count, small);
  }
  const size_t n = static_cast<size_t>(count);
  size_t first = 0;
  while (first < n) {
    msghdr msg{};
    msg.msg_iov = &iov[first];
    msg.msg_iovlen = std::min<size_t>(n - first, IOV_MAX);
    ssize_t w = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(std::string("send: ") + std::strerror(errno));
    }
    size_t left = static_cast<size_t>(w);
    while (first < n && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      first++;
    }
    if (left > 0) {
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return Status::Ok();
}

void SocketTransport::CloseRead() { ::shutdown(fd_, SHUT_RD); }

void SocketTransport::CloseAll() { ::shutdown(fd_, SHUT_RDWR); }

void SocketTransport::SetReadTimeoutNs(uint64_t timeout_ns) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_ns / kNsPerSec);
  tv.tv_usec = static_cast<suseconds_t>((timeout_ns % kNsPerSec) / 1000);
  if (timeout_ns != 0 && tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

Result<size_t> MemoryTransport::ReadSome(uint8_t* buf, size_t n) {
  if (closed_) return size_t{0};
  size_t take = std::min(n, input_.size() - pos_);
  std::memcpy(buf, input_.data() + pos_, take);
  pos_ += take;
  return take;
}

Status MemoryTransport::WriteAll(const iovec* iov, int count) {
  if (closed_) return Status::IOError("memory transport closed");
  for (int i = 0; i < count; i++) {
    const uint8_t* p = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t room = output_cap_bytes_ - std::min(output_cap_bytes_, output_.size());
    output_.insert(output_.end(), p, p + std::min(room, iov[i].iov_len));
    written_bytes_ += iov[i].iov_len;
  }
  return Status::Ok();
}

bool Reader::Fill(Outcome* failure) {
  begin_ = end_ = 0;
  Result<size_t> r = ReadSome(buf_.data(), buf_.size());
  if (!r.ok()) {
    *failure = Failed(r.status());
    return false;
  }
  if (*r == 0) {
    *failure = Outcome::kEof;
    return false;
  }
  end_ = *r;
  return true;
}

Reader::Outcome Reader::ReadExact(uint8_t* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    if (begin_ == end_) {
      // Large reads go straight to the destination.
      if (n - done >= buf_.size()) {
        Result<size_t> r = ReadSome(out + done, n - done);
        if (!r.ok()) return Failed(r.status());
        if (*r == 0) return done == 0 ? Outcome::kEof : Outcome::kTruncated;
        done += *r;
        continue;
      }
      Outcome failure;
      if (!Fill(&failure)) {
        return failure == Outcome::kEof && done > 0 ? Outcome::kTruncated : failure;
      }
    }
    size_t take = std::min(n - done, end_ - begin_);
    std::memcpy(out + done, buf_.data() + begin_, take);
    begin_ += take;
    done += take;
  }
  return Outcome::kOk;
}

Reader::Outcome Reader::ReadExactV(std::span<const std::span<uint8_t>> pieces) {
  size_t i = 0, at = 0;  // the next byte to fill: pieces[i][at]
  // Moves on by `n` bytes, and past pieces that are full (or empty).
  auto advance = [&](size_t n) {
    while (i < pieces.size()) {
      const size_t take = std::min(n, pieces[i].size() - at);
      n -= take;
      at += take;
      if (at < pieces[i].size()) break;
      i++;
      at = 0;
    }
  };
  advance(0);
  bool any = false;  // a byte was read: an end of stream now is a truncation
  // What is buffered first.
  while (i < pieces.size() && begin_ < end_) {
    const size_t take = std::min(pieces[i].size() - at, end_ - begin_);
    std::memcpy(pieces[i].data() + at, buf_.data() + begin_, take);
    begin_ += take;
    any = true;
    advance(take);
  }
  // Then straight into the pieces, up to kMaxIov at a time.
  constexpr size_t kMaxIov = 64;
  iovec iov[kMaxIov];
  while (i < pieces.size()) {
    int count = 0;
    for (size_t j = i; j < pieces.size() && count < static_cast<int>(kMaxIov); j++) {
      const size_t skip = j == i ? at : 0;
      if (pieces[j].size() > skip) {
        iov[count++] = {pieces[j].data() + skip, pieces[j].size() - skip};
      }
    }
    Result<size_t> r = ReadSomeV(iov, count);
    if (!r.ok()) return Failed(r.status());
    if (*r == 0) return any ? Outcome::kTruncated : Outcome::kEof;
    any = true;
    advance(*r);
  }
  return Outcome::kOk;
}

Reader::Outcome Reader::Skip(uint64_t n) {
  uint64_t done = 0;
  while (done < n) {
    if (begin_ == end_) {
      Outcome failure;
      if (!Fill(&failure)) {
        return failure == Outcome::kEof && done > 0 ? Outcome::kTruncated : failure;
      }
    }
    size_t take = static_cast<size_t>(std::min<uint64_t>(n - done, end_ - begin_));
    begin_ += take;
    done += take;
  }
  return Outcome::kOk;
}

}  // namespace arcstore::nbd
