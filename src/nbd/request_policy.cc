#include "nbd/request_policy.h"

#include "nbd/protocol.h"

namespace arcstore::nbd {

bool RequestPolicy::ShortDataCommand(uint16_t command, uint64_t length) {
  return length <= kInlineMaxBytes && (command == kCmdRead || command == kCmdWrite ||
                                       command == kCmdTrim || command == kCmdWriteZeroes);
}

bool RequestPolicy::Commits(uint16_t command, bool fua) {
  return command == kCmdFlush ||
         (fua && (command == kCmdWrite || command == kCmdTrim || command == kCmdWriteZeroes));
}

bool RequestPolicy::RunsAlone(uint16_t command, uint64_t length, bool fua, bool idle,
                              uint64_t buffered_bytes, bool commit_would_sync) const {
  const uint64_t payload = command == kCmdWrite ? length : 0;
  if (commit_would_sync && Commits(command, fua)) return false;
  return options_.inline_idle_requests && idle && buffered_bytes <= payload &&
         (ShortDataCommand(command, length) || command == kCmdFlush);
}

bool RequestPolicy::MayRunHinted(uint16_t command, uint64_t length, bool fua) const {
  const bool eligible =
      ShortDataCommand(command, length) ||
      ((command == kCmdRead || command == kCmdWrite) && length <= kInlineMaxHintedBytes);
  return options_.inline_requests_that_do_not_wait && eligible && !fua;
}

bool RequestPolicy::Dispatched(bool run_inline, uint64_t length) {
  if (!run_inline) return false;
  return ++inline_burst_ >= kMaxInlineBurst || length > kInlineMaxBytes;
}

}  // namespace arcstore::nbd
