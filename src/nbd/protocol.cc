#include "nbd/protocol.h"

namespace arcstore::nbd {

const char* CommandName(uint16_t command) {
  switch (command) {
    case kCmdRead: return "read";
    case kCmdWrite: return "write";
    case kCmdDisc: return "disc";
    case kCmdFlush: return "flush";
    case kCmdTrim: return "trim";
    case kCmdCache: return "cache";
    case kCmdWriteZeroes: return "write_zeroes";
    case kCmdBlockStatus: return "block_status";
    default: return "unknown";
  }
}

}  // namespace arcstore::nbd
