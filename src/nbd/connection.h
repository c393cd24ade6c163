// Connection: one NBD client session, from the greeting to the close.
//
// Serve() runs on the connection's own thread: the handshake, then the
// transmission loop that reads requests, checks them and submits them to the
// export's Volume. Completions (inline or on engine threads) send the reply,
// so replies may leave out of order; one mutex serializes writes to the
// socket. See server.cc for the whole model.
//
// Thread-safety: Serve() is called once, by one thread. StopReading() and
// ForceClose() may be called from any thread, at any time (before, during or
// after Serve). The Connection must not be destroyed before Serve() returns;
// Serve() returns only once no request is in flight, so no completion runs
// after it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "arcstore/volume.h"
#include "base/clock.h"
#include "base/thread_annotations.h"
#include "nbd/adaptive_poll.h"
#include "nbd/handshake.h"
#include "nbd/nbd_stats.h"
#include "nbd/options.h"
#include "nbd/payload_cache.h"
#include "nbd/request_policy.h"
#include "nbd/transport.h"

namespace arcstore::nbd {

// One run of a structured READ reply: data or zeros.
struct ReadSegment {
  uint64_t offset;
  uint64_t length;
  bool zero;
};

class Connection {
 public:
  // Borrows `exports`, `options` and `stats` (they must outlive it).
  // `refuse`: answer the handshake with NBD_REP_ERR_POLICY (server full).
  // `poll_budget`: the server's, for ServerOptions::poll_window_ns.
  // `security`: TLS, identity and access for the handshake (handshake.h).
  Connection(std::unique_ptr<Transport> transport, const std::vector<Export>* exports,
             const ServerOptions* options, NbdStats* stats, PollBudget* poll_budget, bool refuse,
             HandshakeSecurity security = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void Serve();
  // Reads no further request; in-flight requests complete and are answered.
  void StopReading();
  // Also fails further replies (a client that does not take them).
  void ForceClose();
  // True until the handshake ends (either way); any thread.
  bool in_handshake() const { return in_handshake_.load(std::memory_order_acquire); }

 private:
  struct Request;
  using RequestPtr = std::shared_ptr<Request>;

  void Transmit();
  // Reads the rest of a request after its header; false ends the session.
  bool HandleRequest(const uint8_t* header);
  // 0 when the request may run, else the NBD error to answer with.
  uint32_t Check(const Request& r, ErrorKind* kind) const;
  // Whether `r` runs on the reader thread (see server.cc, "Requests run
  // inline"); `idle`: nothing else of the connection is in flight. May read
  // the payload of a WRITE (into r->data, or in place when it runs inline).
  // False when the session ends instead (`*ok` false).
  bool ChooseInline(Request* r, bool idle, bool* ok);
  // The volume's hint for a short data command without FUA; a "may wait"
  // is counted in nbd.requests_may_wait.
  bool VolumeMayWait(const Request& r);
  // The volume's hint that a log commit now would wait for a txg sync
  // (Volume::MayWait of a flush); counted in requests_may_wait when so.
  bool CommitWouldSync();
  // Reads a WRITE's payload into r->data, or for a WRITE of at least a
  // record into buffers the volume lends (r->prepared), or, when
  // `in_place`, takes it where it lies in the reader's buffer if it is all
  // there. False when the client went away.
  bool ReadPayload(Request* r, bool in_place);
  void Dispatch(const RequestPtr& r);
  // Runs `vr` for `r`: on this thread when `r` runs inline (`done` has run
  // when Start returns), else submitted to the volume.
  void Start(const RequestPtr& r, VolumeRequest vr, Completion done);
  void StartStructuredRead(const RequestPtr& r);
  void FinishStructuredRead(const RequestPtr& r, Status s);
  // Sends a structured READ reply of `segs` (in order, covering the read).
  void SendReadChunks(const Request& r, std::span<const ReadSegment> segs);
  void StartBlockStatus(const RequestPtr& r);
  // FUA on a trim or write-zeroes: flush after the operation.
  void FlushThenFinish(const RequestPtr& r, Status s);
  // Sends the reply for a request without data and completes it.
  void Finish(const RequestPtr& r, Status s);
  // Accounts the end of a request: stats, then the slot. The last touch of
  // `this` by a completion.
  void Complete(const RequestPtr& r, uint32_t error);

  // Replies made on the reader thread while more requests are already
  // buffered are held in pending_ and sent together, in one write, before
  // the reader next waits (for input or for a slot): one wakeup of the
  // client per batch instead of one per reply.
  void FlushPending();
  void SendFailed();

  void SendError(const Request& r, uint32_t error, const std::string& message);
  void SendSimple(const Request& r, uint32_t error, const uint8_t* data, size_t length);
  void Send(const iovec* iov, int count);

  // Takes a slot for a request of `bytes`; `idle`: no other request was in
  // flight. False when the session ends instead.
  bool AcquireSlot(uint64_t bytes, bool* idle);
  void ReleaseSlot(uint64_t bytes);
  void WaitIdle();

  const std::unique_ptr<Transport> transport_;
  Reader reader_;
  const std::vector<Export>& exports_;
  const ServerOptions& options_;
  NbdStats* const stats_;
  const bool refuse_;
  HandshakeSecurity security_;  // moved into the Handshake by Serve
  std::atomic<bool> in_handshake_{true};
  Clock* const clock_;
  // How long the reader polls before it sleeps (reader thread only).
  AdaptivePoll poll_;

  // Fixed once the handshake is done.
  Negotiated negotiated_;
  Volume* volume_ = nullptr;
  uint64_t size_bytes_ = 0;
  // WRITEs at least this long are received into the volume's buffers
  // (Volume::PrepareWrite).
  uint64_t record_bytes_ = 0;
  ExportStats* export_stats_ = nullptr;

  // Data buffers of this connection's requests, reused: at most 1 MiB of
  // small ones and 8 MiB of large ones kept (eight 1 MiB READs in flight).
  PayloadCache buffers_{1 << 20, 8 << 20};

  std::atomic<bool> stopping_{false};
  std::atomic<bool> broken_{false};
  Mutex send_mu_;  // serializes replies on the transport
  std::vector<uint8_t> pending_ ARC_GUARDED_BY(send_mu_);
  std::thread::id reader_thread_;
  // Inline requests and reply batches (reader thread only).
  RequestPolicy policy_;

  Mutex mu_;
  CondVar cv_;
  uint32_t in_flight_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t in_flight_bytes_ ARC_GUARDED_BY(mu_) = 0;
};

}  // namespace arcstore::nbd
