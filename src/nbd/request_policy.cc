#include "nbd/request_policy.h"

#include <algorithm>

#include "nbd/protocol.h"

namespace arcstore::nbd {

RequestPolicy::RequestPolicy(const Options& options, std::atomic<int>* flushing_connections)
    : options_(options), flushing_connections_(flushing_connections) {}

RequestPolicy::~RequestPolicy() {
  if (flushing()) flushing_connections_->fetch_sub(1, std::memory_order_relaxed);
}

void RequestPolicy::NoteCommand(uint16_t command) {
  candidate_ = false;
  const bool was_flushing = flushing();
  if (command == kCmdFlush && last_command_ == kCmdWrite) {
    score_ = std::min(score_ + 1, kScoreMax);
  } else if (command == kCmdWrite && last_command_ == kCmdWrite) {
    score_ = std::max(score_ - 2, 0);
  }
  last_command_ = command;
  if (flushing() != was_flushing) {
    flushing_connections_->fetch_add(flushing() ? 1 : -1, std::memory_order_relaxed);
  }
}

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

bool RequestPolicy::Dispatched(bool run_inline, bool write, bool fua, uint64_t length) {
  candidate_ = run_inline && write && !fua;
  if (!run_inline) return false;
  return ++inline_burst_ >= kMaxInlineBurst || length > kInlineMaxBytes;
}

bool RequestPolicy::TakeCommitAhead() {
  if (!options_.commit_ahead || !candidate_ || !flushing() ||
      flushing_connections_->load(std::memory_order_relaxed) > 1) {
    return false;
  }
  candidate_ = false;
  return true;
}

}  // namespace arcstore::nbd
