// RequestPolicy: one connection's rules for where its requests run and
// when the volume's log is committed early (server.cc, "Requests run
// inline" and "Commit ahead", has the why). The connection asks; the policy
// decides from what it is told and from the commands it has seen. It does
// no I/O, so every rule is tested on its own (request_policy_test.cc).
//
//   inline (on the reader thread) or submitted:
//     alone   nothing else in flight and nothing buffered past the
//             request's payload: a short data command or a FLUSH runs
//             inline whatever it may wait for (a client at queue depth 1),
//             but a FLUSH or a FUA request whose log commit the volume says
//             would wait for a txg sync
//     hinted  otherwise a short data command, or a READ or WRITE of up
//             to kInlineMaxHintedBytes, without FUA runs inline when the
//             volume says it will not wait (Volume::MayWait)
//   replies held back by inline requests are sent at least every
//   kMaxInlineBurst inline requests, and at once after an inline request
//   longer than kInlineMaxBytes (its client waits for that reply to send
//   its next long request; the reply is small beside the request)
//
//   commit ahead, before the reader waits for the next request:
//     score   FLUSH after WRITE +1, WRITE after WRITE -2, in [0, kScoreMax];
//             at kScoreFlushing or more the client "flushes after each
//             write", and the connection counts in the server's
//             flushing_connections
//     when    the last request was an inline WRITE without FUA, its reply
//             is sent, this client flushes after each write, and it is the
//             server's only such client (several share log commits
//             already); once per WRITE
//
// Thread-safety: the reader thread only, but for `flushing_connections`,
// which the server's connections share (atomic).
#pragma once

#include <atomic>
#include <cstdint>

namespace arcstore::nbd {

class RequestPolicy {
 public:
  static constexpr uint32_t kInlineMaxBytes = 64 * 1024;  // longer: never inline
  // but READs the volume will serve from memory and WRITEs it will take
  // without waiting, up to this length.
  static constexpr uint32_t kInlineMaxHintedBytes = 1024 * 1024;
  static constexpr uint32_t kMaxInlineBurst = 16;
  static constexpr int kScoreFlushing = 4;
  static constexpr int kScoreMax = 8;

  struct Options {
    bool inline_idle_requests = true;              // the "alone" rule
    bool inline_requests_that_do_not_wait = true;  // the "hinted" rule
    bool commit_ahead = true;
  };

  // `flushing_connections`: the server's count, shared by its connections;
  // must outlive the policy.
  RequestPolicy(const Options& options, std::atomic<int>* flushing_connections);
  ~RequestPolicy();  // leaves the count if it is in it
  RequestPolicy(const RequestPolicy&) = delete;
  RequestPolicy& operator=(const RequestPolicy&) = delete;

  // A new request's command (NBD_CMD_*), before anything else is decided
  // for it: moves the score.
  void NoteCommand(uint16_t command);

  // A READ, WRITE, TRIM or WRITE_ZEROES of at most kInlineMaxBytes.
  static bool ShortDataCommand(uint16_t command, uint64_t length);
  // Whether the request commits the volume's log: a FLUSH, or a data
  // command with FUA.
  static bool Commits(uint16_t command, bool fua);
  // The "alone" rule: `idle`, nothing else of the connection in flight;
  // `buffered_bytes`, input already received past the request's header;
  // `commit_would_sync`, for a request that Commits(), the volume's hint
  // that its commit would wait for a txg sync (Volume::MayWait of a
  // flush). Such a request is submitted: a client that sends independent
  // requests on one connection (the kernel, nbdfuse) may send more while
  // it waits, and the reader must not sit out a txg sync meanwhile.
  bool RunsAlone(uint16_t command, uint64_t length, bool fua, bool idle, uint64_t buffered_bytes,
                 bool commit_would_sync) const;
  // Whether the "hinted" rule asks the volume at all (then RunsHinted
  // decides with its answer): a short data command, or a READ or WRITE of
  // up to kInlineMaxHintedBytes, without FUA.
  bool MayRunHinted(uint16_t command, uint64_t length, bool fua) const;

  // The request was dispatched: inline or not, a WRITE or not, with FUA or
  // not, of `length` bytes. True when the replies held back must be sent
  // now (the burst, or a long inline request).
  bool Dispatched(bool run_inline, bool write, bool fua, uint64_t length);
  // The replies held back were sent.
  void RepliesSent() { inline_burst_ = 0; }

  // Before the reader waits: true when the rules above call for a commit
  // ahead of the last request, which it uses up (once per WRITE). The
  // connection then commits only if that request's reply is sent.
  bool TakeCommitAhead();

  bool flushing() const { return score_ >= kScoreFlushing; }
  int score() const { return score_; }

 private:
  const Options options_;
  std::atomic<int>* const flushing_connections_;
  int score_ = 0;
  uint16_t last_command_ = 0xffff;
  bool candidate_ = false;  // the last request: an inline WRITE without FUA
  uint32_t inline_burst_ = 0;
};

}  // namespace arcstore::nbd
