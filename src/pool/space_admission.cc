// Space admission: theory of operation.
//
// Why. A txg that rewrites a record allocates the new copy at sync time
// and frees the old one, but the old copy is reusable only once the
// allocator's deferral has passed (space/allocator.h: two more txgs). A
// pool whose live data is a third of its space can therefore run out of
// free space while most of it is merely waiting: with one txg of new data
// syncing and two txgs of frees deferred, a txg of a few hundred MiB
// already needs a gigabyte of room. Discovering that at sync time fails
// the whole pool; refusing a write up front because frees are still
// pending fails a block device that has plenty of room.
//
// The account. Every byte of new data is charged before its writer joins
// a txg, and stays charged until the txg that writes it commits:
//
//   allocated + deferred + uncommitted new data + request  <=  space - floor
//   \________ free (allocator) at the last commit _______/
//
//   uncommitted = reserved (writers admitted, not yet in a txg)
//               + charged[T] for every txg T not yet committed
//
// i.e. free_at_last_commit - uncommitted - request >= floor. The floor is
// the allocator's metadata reserve plus the slop (PoolOptions
// space_slop_shift): the indirect blocks, space log and volume table the
// txgs in flight write are not charged, and data never takes the reserve
// they may use. The free figure and the charges of a txg change together,
// at its commit (Committed), so the account is never half updated.
//
// A writer (volume_impl.cc, WritePiece) reserves one record before it takes
// its txg hold (estimate 0 when the open txg already has a copy: nothing to
// reserve), then, holding the hold, settles: the record is charged to its
// txg when the writer's piece made that txg hold a data copy of the record
// (a copy the sync will allocate), and the reservation is given back. A
// writer that made a copy without reserving (the txg turned over between
// its estimate and its hold) is charged all the same.
//
// Waiting. A request that does not fit waits when anything pending could
// make room: deferred frees (they ripen as txgs commit), uncommitted data
// (its sync frees the copies it replaces), or any txg not yet committed
// (a trim frees at sync without charging anything). It waits for the NEXT
// commit (reason `space`): the txg syncing now, with the open txg asked to
// go after it; when none is syncing, the open txg, synced even when empty
// (which ages the deferred frees). Each commit can make room, so waiting
// for one at a time keeps the wait short. It looks again after each
// commit, up to max_wait_syncs. When nothing is pending
// the pool is full of live data and the writer gets NoSpace, naming the
// volume, the request, and the pool's free and pending bytes.
//
//   request fits? --yes--> reserve, go
//        | no
//   deferred, uncommitted or txgs pending? --no--> NoSpace (space_refusals)
//        | yes
//   wait for the next commit (space), again (space_waits, space_wait_ns)
//
// The early kick keeps writers from waiting at all in the common case:
// once the new data charged to the open txg passes kick_percent of the room
// left at the last commit (free - floor), the open txg is asked to sync
// (reason `space`). With rewrites in steady state, about three txgs are in
// flight (one syncing, two of frees deferred), so 25% keeps them inside the
// room.
//
// Locking: mu_ guards the account. It is never held across a txg wait or
// a call into the txg manager, and Committed runs on the sync thread
// without the manager's lock, so it nests under nothing but a writer's
// txg hold (which is not a lock).
//
// Stats (module txg): space_waits, space_wait_ns (writers' time waiting for
// space), space_refusals (NoSpace), space_kicks (early kicks); gauge
// space_uncommitted_bytes.
#include "pool/space_admission.h"

#include <algorithm>

#include "base/check.h"
#include "base/units.h"

namespace arcstore::pool {

Status SpaceAdmissionOptions::Validate() const {
  if (kick_percent > 100) {
    return Status::InvalidArgument("space admission: kick_percent " +
                                   std::to_string(kick_percent) + " must be in [0, 100]");
  }
  if (max_wait_syncs < 1 || max_wait_syncs > 10000) {
    return Status::InvalidArgument("space admission: max_wait_syncs " +
                                   std::to_string(max_wait_syncs) + " must be in [1, 10000]");
  }
  return Status::Ok();
}

SpaceAdmission::SpaceAdmission(const SpaceAdmissionOptions& options, txg::TxgManager* txg,
                               Clock* clock, stats::Registry* registry,
                               const space::SpaceUsage& usage, uint64_t committed_txg)
    : options_(options), txg_(txg), clock_(clock), usage_(usage), committed_txg_(committed_txg) {
  ARC_CHECK(options_.Validate().ok()) << options_.Validate().ToString();
  const char* m = "txg";
  stats_.waits = registry->AddCounter(m, "space_waits", stats::Unit::kOps,
                                      "writes that waited for txgs to free pool space");
  stats_.wait_ns = registry->AddCounter(m, "space_wait_ns", stats::Unit::kNanoseconds,
                                        "time writers spent waiting for pool space");
  stats_.refusals = registry->AddCounter(m, "space_refusals", stats::Unit::kOps,
                                         "writes refused with NoSpace: nothing pending could "
                                         "make room");
  stats_.kicks = registry->AddCounter(m, "space_kicks", stats::Unit::kOps,
                                      "open txgs asked to sync because their new data passed "
                                      "a share of the pool's room");
  registry->AddGaugeFn(m, "space_uncommitted_bytes", stats::Unit::kBytes,
                       "new data admitted and not yet committed",
                       [this] { return static_cast<int64_t>(uncommitted_bytes()); });
}

bool SpaceAdmission::Fits(uint64_t bytes) const {
  const uint64_t need = options_.floor_bytes + reserved_bytes_ + charged_bytes_ + bytes;
  return usage_.free_bytes >= need;
}

std::string SpaceAdmission::Describe(uint64_t bytes, const std::string& volume,
                                     uint32_t syncs) const {
  std::string s = "volume " + volume + ": no space for " + FormatBytes(bytes) +
                  " of new data in pool " + options_.pool_name + ": " +
                  FormatBytes(usage_.free_bytes) + " free of " + FormatBytes(usage_.total_bytes) +
                  " (" + FormatBytes(options_.floor_bytes) +
                  " of it reserved for metadata and slop), " +
                  FormatBytes(reserved_bytes_ + charged_bytes_) +
                  " of writes not yet committed, " + FormatBytes(usage_.deferred_bytes) +
                  " freed and waiting for txgs to commit";
  if (syncs > 0) s += "; waited for " + std::to_string(syncs) + " txg syncs";
  return s;
}

Status SpaceAdmission::Reserve(uint64_t bytes, const std::string& volume) {
  {
    // The common case, on every write: room, and no need to ask the txg
    // manager what is pending.
    MutexLock l(&mu_);
    if (Fits(bytes)) {
      reserved_bytes_ += bytes;
      return Status::Ok();
    }
  }
  uint64_t wait_start_ns = 0;
  for (uint32_t syncs = 0;; syncs++) {
    // Asked before the account is read: a txg that commits in between
    // shows in the account's figures.
    const bool txgs_pending = txg_->HasUncommittedWork();
    {
      MutexLock l(&mu_);
      if (Fits(bytes)) {
        reserved_bytes_ += bytes;
        break;
      }
      const bool pending = txgs_pending || usage_.deferred_bytes > 0 ||
                           reserved_bytes_ + charged_bytes_ > 0;
      if (!pending || syncs >= options_.max_wait_syncs) {
        stats_.refusals->Add();
        if (syncs > 0) stats_.wait_ns->Add(clock_->NowNs() - wait_start_ns);
        return Status::NoSpace(Describe(bytes, volume, syncs));
      }
    }
    if (syncs == 0) {
      stats_.waits->Add();
      wait_start_ns = clock_->NowNs();
    }
    Status s = txg_->WaitNextCommit(txg::SyncReason::kSpace);
    if (!s.ok()) {
      stats_.wait_ns->Add(clock_->NowNs() - wait_start_ns);
      return s.WithContext("volume " + volume + ": waiting for pool space");
    }
  }
  if (wait_start_ns != 0) stats_.wait_ns->Add(clock_->NowNs() - wait_start_ns);
  return Status::Ok();
}

void SpaceAdmission::Settle(uint64_t reserved_bytes, uint64_t txg, uint64_t used_bytes) {
  bool kick = false;
  {
    MutexLock l(&mu_);
    ARC_CHECK_LE(reserved_bytes, reserved_bytes_) << "settling more than was reserved";
    reserved_bytes_ -= reserved_bytes;
    // A txg that committed already cannot be charged (the writer's hold
    // keeps its txg from committing; txg 0 settles a failed assignment).
    if (used_bytes == 0 || txg <= committed_txg_) return;
    uint64_t& charged = charged_[txg];
    charged += used_bytes;
    charged_bytes_ += used_bytes;
    const uint64_t room =
        usage_.free_bytes > options_.floor_bytes ? usage_.free_bytes - options_.floor_bytes : 0;
    if (options_.kick_percent > 0 && txg != kicked_txg_ &&
        charged > room / 100 * options_.kick_percent) {
      kicked_txg_ = txg;
      kick = true;
    }
  }
  if (kick) {
    stats_.kicks->Add();
    txg_->RequestSync(txg, txg::SyncReason::kSpace);
  }
}

void SpaceAdmission::Committed(uint64_t txg, const space::SpaceUsage& usage) {
  MutexLock l(&mu_);
  usage_ = usage;
  committed_txg_ = std::max(committed_txg_, txg);
  while (!charged_.empty() && charged_.begin()->first <= txg) {
    charged_bytes_ -= charged_.begin()->second;
    charged_.erase(charged_.begin());
  }
}

uint64_t SpaceAdmission::uncommitted_bytes() {
  MutexLock l(&mu_);
  return reserved_bytes_ + charged_bytes_;
}

}  // namespace arcstore::pool
