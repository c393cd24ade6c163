// Transport: the byte stream one NBD connection runs over, and a buffered
// reader on top of it.
//
// The protocol code (handshake, transmission) reads and writes through this
// interface only, so the same code runs over a socket in the server and over
// a byte buffer in the fuzzer and in unit tests.
//
// A SocketTransport can be upgraded to TLS in place (StartTls, for
// NBD_OPT_STARTTLS): from then on its reads and writes go through the TLS
// session (tls.h), so the protocol code above never knows the difference.
//
// Thread-safety: Read* and StartTls are called by one thread (the
// connection's reader); WriteAll by one thread at a time (the connection
// serializes replies); StartTls only before any other thread writes.
// CloseRead/CloseAll may be called from any thread at any time, and wake a
// blocked reader.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arcstore/status.h"
#include "base/result.h"
#include "nbd/adaptive_poll.h"
#include "nbd/tls.h"

namespace arcstore::nbd {

class Transport {
 public:
  virtual ~Transport() = default;
  // Reads up to `n` bytes; 0 means the peer closed (or CloseRead was called).
  virtual Result<size_t> ReadSome(uint8_t* buf, size_t n) = 0;
  // The same into `iov[0..count)` in order (count >= 1). The default reads
  // into the first entry only.
  virtual Result<size_t> ReadSomeV(const iovec* iov, int count) {
    return ReadSome(static_cast<uint8_t*>(iov[0].iov_base), iov[0].iov_len);
  }
  // Reads what has already arrived, without waiting: kBusy when nothing
  // has (for AdaptivePoll). A transport whose reads never wait need not
  // override it.
  virtual Result<size_t> ReadSomeNow(uint8_t* buf, size_t n) { return ReadSome(buf, n); }
  // The same into `iov[0..count)`.
  virtual Result<size_t> ReadSomeVNow(const iovec* iov, int count) {
    return ReadSomeV(iov, count);
  }
  // Writes every byte of `iov[0..count)`, or fails.
  virtual Status WriteAll(const iovec* iov, int count) = 0;
  // Further reads see end of stream; writes still work.
  virtual void CloseRead() = 0;
  // Reads see end of stream and writes fail from now on.
  virtual void CloseAll() = 0;
  // Reads that wait longer than this fail (0 = wait forever).
  virtual void SetReadTimeoutNs(uint64_t timeout_ns) {}
  // Runs a TLS handshake as the server on this stream, to finish by
  // `deadline_ns` (steady clock); on success every later read and write is
  // encrypted. The caller must have dropped any plaintext it buffered.
  // A transport without a socket fails it (kOther).
  virtual TlsOutcome StartTls(const TlsCredentials* credentials, uint64_t deadline_ns) {
    return TlsOutcome::Failed(TlsFailure::kOther, "this transport cannot carry TLS");
  }
};

// A connected stream socket (unix or TCP). Owns the descriptor.
class SocketTransport final : public Transport {
 public:
  explicit SocketTransport(int fd) : fd_(fd) {}
  ~SocketTransport() override;
  Result<size_t> ReadSome(uint8_t* buf, size_t n) override;
  Result<size_t> ReadSomeV(const iovec* iov, int count) override;
  Result<size_t> ReadSomeNow(uint8_t* buf, size_t n) override;
  Result<size_t> ReadSomeVNow(const iovec* iov, int count) override;
  Status WriteAll(const iovec* iov, int count) override;
  void CloseRead() override;
  void CloseAll() override;
  void SetReadTimeoutNs(uint64_t timeout_ns) override;
  TlsOutcome StartTls(const TlsCredentials* credentials, uint64_t deadline_ns) override;

 private:
  const int fd_;
  // Set once by StartTls on success (reader thread, before any other
  // thread writes); then every read and write goes through it.
  std::unique_ptr<TlsSession> tls_;
};

// Reads from a fixed byte string; writes are appended to `output()` (up to a
// cap, past which they are counted but dropped). For the fuzzer and tests.
class MemoryTransport final : public Transport {
 public:
  explicit MemoryTransport(std::span<const uint8_t> input, size_t output_cap_bytes = 1 << 20)
      : input_(input), output_cap_bytes_(output_cap_bytes) {}
  Result<size_t> ReadSome(uint8_t* buf, size_t n) override;
  Status WriteAll(const iovec* iov, int count) override;
  void CloseRead() override { closed_ = true; }
  void CloseAll() override { closed_ = true; }

  const std::vector<uint8_t>& output() const { return output_; }
  uint64_t written_bytes() const { return written_bytes_; }

 private:
  std::span<const uint8_t> input_;
  size_t pos_ = 0;
  bool closed_ = false;
  const size_t output_cap_bytes_;
  std::vector<uint8_t> output_;
  uint64_t written_bytes_ = 0;
};

// Buffered exact reads over a Transport.
class Reader {
 public:
  enum class Outcome {
    kOk,
    kEof,        // the stream ended before the first byte
    kTruncated,  // the stream ended part way
    kError,      // the transport failed (reset)
    kTimeout,    // no byte came within the read timeout
  };

  explicit Reader(Transport* transport, size_t buffer_bytes = 64 * 1024)
      : transport_(transport), buf_(buffer_bytes) {}

  // Called before every read that may block (the buffer is empty), so the
  // owner can flush replies it held back while requests were buffered.
  void set_before_wait(std::function<void()> fn) { before_wait_ = std::move(fn); }
  // From now on, waits for more input poll first (see adaptive_poll.h);
  // nullptr: they sleep at once. Borrowed.
  void set_poll(AdaptivePoll* poll) { poll_ = poll; }
  // Bytes received and not yet consumed.
  size_t buffered() const { return end_ - begin_; }

  // Reads exactly `n` bytes into `out`.
  Outcome ReadExact(uint8_t* out, size_t n);
  // Reads exactly the pieces' bytes into them, in order: what is buffered
  // is copied, the rest received straight into the pieces (a WRITE
  // payload into the volume's record buffers, without a copy).
  Outcome ReadExactV(std::span<const std::span<uint8_t>> pieces);
  // When at least `n` bytes are buffered, consumes `n` and returns where
  // they lie: valid until the buffer is next refilled (a read that finds
  // it empty). Otherwise nullptr, nothing read.
  const uint8_t* TakeBuffered(size_t n) {
    if (end_ - begin_ < n) return nullptr;
    const uint8_t* p = buf_.data() + begin_;
    begin_ += n;
    return p;
  }
  // Reads and drops exactly `n` bytes.
  Outcome Skip(uint64_t n);
  // Drops every byte received and not consumed; returns how many (STARTTLS:
  // nothing sent before the TLS handshake may be read as if sent after).
  size_t DiscardBuffered() {
    const size_t n = end_ - begin_;
    begin_ = end_ = 0;
    return n;
  }

 private:
  // Refills the buffer; false at end of stream or on error.
  bool Fill(Outcome* failure);
  // Receives into `iov[0..count)` (a payload's pieces).
  Result<size_t> ReadSomeV(const iovec* iov, int count) {
    return AwaitInput([&] { return transport_->ReadSomeVNow(iov, count); },
                      [&] { return transport_->ReadSomeV(iov, count); });
  }

  // A read that may wait: the owner's before_wait first, then the poll
  // (when set) or straight to the waiting read.
  template <typename TryNow, typename Wait>
  Result<size_t> AwaitInput(TryNow try_now, Wait wait) {
    if (before_wait_) before_wait_();
    if (poll_ == nullptr) return wait();
    return poll_->Await(try_now, wait);
  }
  Result<size_t> ReadSome(uint8_t* buf, size_t n) {
    return AwaitInput([&] { return transport_->ReadSomeNow(buf, n); },
                      [&] { return transport_->ReadSome(buf, n); });
  }
  // The outcome of a failed transport read.
  static Outcome Failed(const Status& s) {
    return s.code() == StatusCode::kAborted ? Outcome::kTimeout : Outcome::kError;
  }

  Transport* const transport_;
  std::function<void()> before_wait_;
  AdaptivePoll* poll_ = nullptr;
  std::vector<uint8_t> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace arcstore::nbd
