// The NBD wire protocol: constants and big-endian field access.
//
// Numbers and names follow doc/proto.md of the NetworkBlockDevice/nbd
// repository (the protocol's specification). Everything on the wire is
// big-endian. This header holds no state; it is safe to use from any thread.
#pragma once

#include <cstdint>
#include <cstring>

namespace arcstore::nbd {

// Magic numbers.
inline constexpr uint64_t kNbdMagic = 0x4e42444d41474943ULL;     // "NBDMAGIC"
inline constexpr uint64_t kOptionMagic = 0x49484156454F5054ULL;  // "IHAVEOPT"
inline constexpr uint64_t kOptionReplyMagic = 0x3e889045565a9ULL;
inline constexpr uint32_t kRequestMagic = 0x25609513;
inline constexpr uint32_t kSimpleReplyMagic = 0x67446698;
inline constexpr uint32_t kStructuredReplyMagic = 0x668e33ef;

// Handshake flags (server) and client flags.
inline constexpr uint16_t kFlagFixedNewstyle = 1u << 0;
inline constexpr uint16_t kFlagNoZeroes = 1u << 1;
inline constexpr uint32_t kClientFlagFixedNewstyle = 1u << 0;
inline constexpr uint32_t kClientFlagNoZeroes = 1u << 1;

// Transmission flags.
inline constexpr uint16_t kTxHasFlags = 1u << 0;
inline constexpr uint16_t kTxReadOnly = 1u << 1;
inline constexpr uint16_t kTxSendFlush = 1u << 2;
inline constexpr uint16_t kTxSendFua = 1u << 3;
inline constexpr uint16_t kTxSendTrim = 1u << 5;
inline constexpr uint16_t kTxSendWriteZeroes = 1u << 6;
inline constexpr uint16_t kTxSendDf = 1u << 7;
inline constexpr uint16_t kTxCanMultiConn = 1u << 8;
inline constexpr uint16_t kTxSendCache = 1u << 10;
inline constexpr uint16_t kTxSendFastZero = 1u << 11;

// Options.
enum Option : uint32_t {
  kOptExportName = 1,
  kOptAbort = 2,
  kOptList = 3,
  kOptStartTls = 5,
  kOptInfo = 6,
  kOptGo = 7,
  kOptStructuredReply = 8,
  kOptListMetaContext = 9,
  kOptSetMetaContext = 10,
};

// Option reply types.
inline constexpr uint32_t kRepAck = 1;
inline constexpr uint32_t kRepServer = 2;
inline constexpr uint32_t kRepInfo = 3;
inline constexpr uint32_t kRepMetaContext = 4;
inline constexpr uint32_t kRepErrBit = 1u << 31;
inline constexpr uint32_t kRepErrUnsup = kRepErrBit | 1;
inline constexpr uint32_t kRepErrPolicy = kRepErrBit | 2;
inline constexpr uint32_t kRepErrInvalid = kRepErrBit | 3;
inline constexpr uint32_t kRepErrTlsReqd = kRepErrBit | 5;
inline constexpr uint32_t kRepErrUnknown = kRepErrBit | 6;
inline constexpr uint32_t kRepErrShutdown = kRepErrBit | 7;
inline constexpr uint32_t kRepErrTooBig = kRepErrBit | 9;

// NBD_INFO_* types.
inline constexpr uint16_t kInfoExport = 0;
inline constexpr uint16_t kInfoName = 1;
inline constexpr uint16_t kInfoDescription = 2;
inline constexpr uint16_t kInfoBlockSize = 3;

// Commands.
enum Command : uint16_t {
  kCmdRead = 0,
  kCmdWrite = 1,
  kCmdDisc = 2,
  kCmdFlush = 3,
  kCmdTrim = 4,
  kCmdCache = 5,
  kCmdWriteZeroes = 6,
  kCmdBlockStatus = 7,
};
inline constexpr int kNumCommands = 8;

// Command flags.
inline constexpr uint16_t kCmdFlagFua = 1u << 0;
inline constexpr uint16_t kCmdFlagNoHole = 1u << 1;
inline constexpr uint16_t kCmdFlagDf = 1u << 2;
inline constexpr uint16_t kCmdFlagReqOne = 1u << 3;
inline constexpr uint16_t kCmdFlagFastZero = 1u << 4;

// Structured reply flags and chunk types.
inline constexpr uint16_t kReplyFlagDone = 1u << 0;
inline constexpr uint16_t kReplyTypeNone = 0;
inline constexpr uint16_t kReplyTypeOffsetData = 1;
inline constexpr uint16_t kReplyTypeOffsetHole = 2;
inline constexpr uint16_t kReplyTypeBlockStatus = 5;
inline constexpr uint16_t kReplyTypeError = (1u << 15) | 1;

// base:allocation state flags.
inline constexpr uint32_t kStateHole = 1u << 0;
inline constexpr uint32_t kStateZero = 1u << 1;

// Error values.
inline constexpr uint32_t kEPerm = 1;
inline constexpr uint32_t kEIo = 5;
inline constexpr uint32_t kENoMem = 12;
inline constexpr uint32_t kEInval = 22;
inline constexpr uint32_t kENoSpc = 28;
inline constexpr uint32_t kEOverflow = 75;
inline constexpr uint32_t kENotSup = 95;
inline constexpr uint32_t kEShutdown = 108;

// Sizes of fixed messages.
inline constexpr size_t kRequestHeaderBytes = 28;
inline constexpr size_t kSimpleReplyBytes = 16;
inline constexpr size_t kChunkHeaderBytes = 20;
inline constexpr size_t kOptionHeaderBytes = 16;
inline constexpr size_t kOptionReplyHeaderBytes = 20;
// The specification's limit on every string (export names, queries,
// messages).
inline constexpr size_t kMaxStringBytes = 4096;
// The meta context id this server gives base:allocation.
inline constexpr uint32_t kAllocationContextId = 1;
inline constexpr char kAllocationContext[] = "base:allocation";

// Big-endian loads and stores.
inline uint16_t Load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t Load32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline uint64_t Load64(const uint8_t* p) { return uint64_t{Load32(p)} << 32 | Load32(p + 4); }
inline void Store16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void Store32(uint8_t* p, uint32_t v) {
  Store16(p, static_cast<uint16_t>(v >> 16));
  Store16(p + 2, static_cast<uint16_t>(v));
}
inline void Store64(uint8_t* p, uint64_t v) {
  Store32(p, static_cast<uint32_t>(v >> 32));
  Store32(p + 4, static_cast<uint32_t>(v));
}

// Names for logs and stats ("read", "write_zeroes"...; "unknown" otherwise).
const char* CommandName(uint16_t command);

}  // namespace arcstore::nbd
