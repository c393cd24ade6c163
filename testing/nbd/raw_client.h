// RawClient: a byte-level NBD client for tests only. It sends exactly what a
// test asks, well-formed or not, and decodes what comes back, so tests can
// walk the protocol's negative cases that real clients never produce.
//
// Thread-safety: none; one thread per client. Every call fails the current
// gtest (ADD_FAILURE) instead of returning errors; reads give up after a
// timeout so a test never hangs.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbd/protocol.h"

namespace arcstore::nbd::testing {

struct OptionReply {
  uint32_t option = 0;
  uint32_t type = 0;
  std::vector<uint8_t> data;
};

struct Chunk {
  bool simple = false;  // a simple reply (error in `error`)
  uint16_t flags = 0;
  uint16_t type = 0;
  uint64_t cookie = 0;
  uint32_t error = 0;
  std::vector<uint8_t> payload;
};

class RawClient {
 public:
  explicit RawClient(const std::string& socket_path, bool expect_connect = true) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, socket_path.c_str(), sizeof(a.sun_path) - 1);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    if (expect_connect) {
      EXPECT_TRUE(connected_) << "connect " << socket_path << ": " << std::strerror(errno);
    }
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  // Adopts a connected socket (a TCP connection, say).
  explicit RawClient(int connected_fd) : fd_(connected_fd), connected_(true) {
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawClient() { ::close(fd_); }

  void Send(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    while (n > 0) {
      ssize_t w = ::send(fd_, b, n, MSG_NOSIGNAL);
      if (w <= 0) {
        send_failed_ = true;
        return;
      }
      b += w;
      n -= static_cast<size_t>(w);
    }
  }
  void Send(const std::vector<uint8_t>& v) { Send(v.data(), v.size()); }

  // Reads exactly n bytes; false at end of stream or timeout.
  bool Recv(void* p, size_t n) {
    uint8_t* b = static_cast<uint8_t*>(p);
    while (n > 0) {
      ssize_t r = ::recv(fd_, b, n, 0);
      if (r <= 0) return false;
      b += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
  // True when the server closed the connection (end of stream, or reset).
  bool Closed() {
    uint8_t b;
    ssize_t r = ::recv(fd_, &b, 1, 0);
    return r == 0 || (r < 0 && errno == ECONNRESET);
  }

  // Reads the greeting and sends the client flags.
  void Greet(uint32_t client_flags = kClientFlagFixedNewstyle | kClientFlagNoZeroes) {
    uint8_t g[18];
    ASSERT_TRUE(Recv(g, sizeof(g)));
    EXPECT_EQ(Load64(g), kNbdMagic);
    EXPECT_EQ(Load64(g + 8), kOptionMagic);
    EXPECT_EQ(Load16(g + 16), kFlagFixedNewstyle | kFlagNoZeroes);
    uint8_t f[4];
    Store32(f, client_flags);
    Send(f, 4);
  }

  void SendOption(uint32_t option, const std::vector<uint8_t>& data,
                  uint64_t magic = kOptionMagic) {
    uint8_t h[16];
    Store64(h, magic);
    Store32(h + 8, option);
    Store32(h + 12, static_cast<uint32_t>(data.size()));
    Send(h, 16);
    Send(data);
  }

  bool ReadOptionReply(OptionReply* r) {
    uint8_t h[20];
    if (!Recv(h, sizeof(h))) return false;
    EXPECT_EQ(Load64(h), kOptionReplyMagic);
    r->option = Load32(h + 8);
    r->type = Load32(h + 12);
    r->data.resize(Load32(h + 16));
    return r->data.empty() || Recv(r->data.data(), r->data.size());
  }

  // Reads option replies up to the final one (ACK or an error).
  std::vector<OptionReply> ReadOptionReplies() {
    std::vector<OptionReply> all;
    OptionReply r;
    while (ReadOptionReply(&r)) {
      all.push_back(r);
      if (r.type == kRepAck || (r.type & kRepErrBit) != 0) break;
    }
    return all;
  }

  static std::vector<uint8_t> GoData(const std::string& name, std::vector<uint16_t> infos = {}) {
    std::vector<uint8_t> d(4 + name.size() + 2 + 2 * infos.size());
    Store32(d.data(), static_cast<uint32_t>(name.size()));
    std::memcpy(&d[4], name.data(), name.size());
    Store16(&d[4 + name.size()], static_cast<uint16_t>(infos.size()));
    for (size_t i = 0; i < infos.size(); i++) Store16(&d[6 + name.size() + 2 * i], infos[i]);
    return d;
  }

  static std::vector<uint8_t> MetaData(const std::string& name,
                                       const std::vector<std::string>& queries) {
    std::vector<uint8_t> d(4 + name.size() + 4);
    Store32(d.data(), static_cast<uint32_t>(name.size()));
    std::memcpy(&d[4], name.data(), name.size());
    Store32(&d[4 + name.size()], static_cast<uint32_t>(queries.size()));
    for (const std::string& q : queries) {
      size_t at = d.size();
      d.resize(at + 4 + q.size());
      Store32(&d[at], static_cast<uint32_t>(q.size()));
      std::memcpy(&d[at + 4], q.data(), q.size());
    }
    return d;
  }

  // Greets, optionally negotiates structured replies and base:allocation,
  // and enters transmission with NBD_OPT_GO. Returns the export's
  // transmission flags (0 on failure).
  uint16_t Connect(const std::string& name, bool structured, bool meta = false) {
    Greet();
    if (structured) {
      SendOption(kOptStructuredReply, {});
      auto r = ReadOptionReplies();
      EXPECT_EQ(r.size(), 1u);
      if (r.empty() || r.back().type != kRepAck) return 0;
    }
    if (meta) {
      SendOption(kOptSetMetaContext, MetaData(name, {kAllocationContext}));
      auto r = ReadOptionReplies();
      EXPECT_EQ(r.size(), 2u);
      if (r.empty() || r.back().type != kRepAck) return 0;
    }
    SendOption(kOptGo, GoData(name));
    uint16_t flags = 0;
    for (const OptionReply& r : ReadOptionReplies()) {
      if (r.type == kRepInfo && r.data.size() == 12 && Load16(r.data.data()) == kInfoExport) {
        size_bytes_ = Load64(&r.data[2]);
        flags = Load16(&r.data[10]);
      }
      if (r.type != kRepInfo && r.type != kRepAck) return 0;
    }
    structured_ = structured;
    return flags;
  }

  void SendRequest(uint16_t type, uint64_t offset, uint32_t length, uint64_t cookie,
                   uint16_t flags = 0, const void* payload = nullptr, size_t payload_bytes = 0,
                   uint32_t magic = kRequestMagic) {
    uint8_t h[kRequestHeaderBytes];
    Store32(h, magic);
    Store16(h + 4, flags);
    Store16(h + 6, type);
    Store64(h + 8, cookie);
    Store64(h + 16, offset);
    Store32(h + 24, length);
    Send(h, sizeof(h));
    if (payload_bytes > 0) Send(payload, payload_bytes);
  }

  // Reads one reply message (a simple reply or one structured chunk).
  // `read_length`: the data length that follows a successful simple reply
  // to a READ (the client must know it; the protocol does not say it).
  bool ReadChunk(Chunk* c, size_t read_length = 0) {
    uint8_t m[4];
    if (!Recv(m, 4)) return false;
    uint32_t magic = Load32(m);
    if (magic == kSimpleReplyMagic) {
      uint8_t h[12];
      if (!Recv(h, 12)) return false;
      c->simple = true;
      c->error = Load32(h);
      c->cookie = Load64(h + 4);
      c->flags = kReplyFlagDone;
      c->payload.resize(c->error == 0 ? read_length : 0);
      return c->payload.empty() || Recv(c->payload.data(), c->payload.size());
    }
    EXPECT_EQ(magic, kStructuredReplyMagic);
    uint8_t h[16];
    if (!Recv(h, 16)) return false;
    c->simple = false;
    c->flags = Load16(h);
    c->type = Load16(h + 2);
    c->cookie = Load64(h + 4);
    c->payload.resize(Load32(h + 12));
    if (!c->payload.empty() && !Recv(c->payload.data(), c->payload.size())) return false;
    c->error = (c->type & 0x8000) && c->payload.size() >= 4 ? Load32(c->payload.data()) : 0;
    return true;
  }

  // Sends a request and returns its error (0 = OK); a READ's data (holes
  // filled with zeros) goes to `data` when given. Fails the test if the
  // connection ends first.
  uint32_t Do(uint16_t type, uint64_t offset, uint32_t length, uint16_t flags = 0,
              const std::vector<uint8_t>* payload = nullptr, std::vector<uint8_t>* data = nullptr) {
    uint64_t cookie = next_cookie_++;
    SendRequest(type, offset, length, cookie, flags, payload ? payload->data() : nullptr,
                payload ? payload->size() : 0);
    return Await(cookie, type == kCmdRead ? length : 0, offset, data);
  }

  // Reads the reply of `cookie` (replies of other cookies are not expected).
  uint32_t Await(uint64_t cookie, uint32_t read_length, uint64_t offset,
                 std::vector<uint8_t>* data) {
    if (data) data->assign(read_length, 0xEE);
    uint32_t error = 0;
    while (true) {
      Chunk c;
      if (!ReadChunk(&c, structured_ ? 0 : read_length)) {
        ADD_FAILURE() << "connection ended while waiting for cookie " << cookie;
        return UINT32_MAX;
      }
      EXPECT_EQ(c.cookie, cookie);
      if (c.simple) {
        if (data && c.error == 0) *data = c.payload;
        return c.error;
      }
      if (c.error != 0 && error == 0) error = c.error;
      if (data && c.type == kReplyTypeOffsetData) {
        uint64_t at = Load64(c.payload.data()) - offset;
        std::memcpy(data->data() + at, &c.payload[8], c.payload.size() - 8);
      }
      if (data && c.type == kReplyTypeOffsetHole) {
        uint64_t at = Load64(c.payload.data()) - offset;
        std::memset(data->data() + at, 0, Load32(&c.payload[8]));
      }
      last_chunks_.push_back(c);
      if (c.flags & kReplyFlagDone) return error;
    }
  }

  std::vector<Chunk>& last_chunks() { return last_chunks_; }
  uint64_t size_bytes() const { return size_bytes_; }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool send_failed_ = false;
  bool structured_ = false;
  uint64_t size_bytes_ = 0;
  uint64_t next_cookie_ = 1;
  std::vector<Chunk> last_chunks_;
};

}  // namespace arcstore::nbd::testing
