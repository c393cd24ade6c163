// Kill stress: see kill_stress.h for what it proves.
//
//   parent                                  child (one per cycle)
//   ------                                  ---------------------
//   fork ---------------------------------> open pool (ARC 16-32 MiB, txg 100 ms)
//   poll(pipe) until a random deadline      threads 0..T-1: random ops on their
//     <- kIssue   (before each mutation)      own stripes of s0, s1, s2
//     <- kDurable (after each flush: every    thread T: create / write / destroy
//        thread's completed op at submit)     churn volumes
//     <- kFua     (after each FUA write)
//   SIGKILL, drain, reopen, fsck, verify, re-base, close
//
// Ownership makes the model exact: every stable volume is cut into stripes
// of stripe_blocks blocks and thread t owns stripe s when s % T == t, so a
// block's operations are ordered by its owner's op ids. With stripes
// smaller than a record, concurrent writers share records (concurrent
// read-modify-write of one record).
//
// Op ids are unique and grow per thread: (cycle + 1) << 40 | thread << 32 |
// n. A flush submitted when thread u had completed op x makes every op of u
// up to x durable once it completes; a FUA write makes itself durable.
//
// Block contents: a written 4 KiB block starts with a stamp (magic, volume,
// block, op) and ends with a checksum of the rest; trimmed or zeroed blocks
// read as zeros. A block read after reopen must hold its newest durable
// version or any version issued after that one.
#include "testing/pool/kill_stress.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "arcstore/pool.h"
#include "base/checksum.h"
#include "base/random.h"
#include "base/units.h"
#include "format/label_io.h"
#include "io/uring_device.h"
#include "pool/pool_impl.h"

namespace arcstore::pool {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kMaxOpBlocks = 8;
constexpr uint64_t kMagic = 0x6b696c6c73747273ull;  // "killstrs"
constexpr size_t kMaxChurnVolumes = 3;
constexpr uint64_t kChurnVolumeBytes = 1 * kMiB;

struct StableVolume {
  const char* name;
  uint64_t blocks;
  uint32_t record_size;
  const char* compression;
};
constexpr StableVolume kStable[] = {
    {"s0", 1024, 4 * 1024, "off"},
    {"s1", 2048, 16 * 1024, "lz4"},
    {"s2", 2048, 64 * 1024, "zstd"},
};
constexpr size_t kNumStable = std::size(kStable);

enum class MsgKind : uint8_t { kWrite = 1, kZero, kDurable, kFua, kCreate, kDestroy, kFlush };

// One pipe message; 32 bytes, so every write(2) of one is atomic.
struct Msg {
  MsgKind kind;
  uint8_t vol;
  uint16_t thread;
  uint32_t blocks;
  uint64_t op;
  uint64_t block;     // first block (kWrite, kZero)
  uint64_t name_id;   // churn volume (kCreate, kDestroy)
};
static_assert(sizeof(Msg) == 32);

uint32_t ThreadOf(uint64_t op) { return static_cast<uint32_t>((op >> 32) & 0xff); }
std::string ChurnName(uint64_t id) { return "c" + std::to_string(id); }

void StampBlock(uint8_t vol, uint64_t block, uint64_t op, uint8_t* out) {
  SeededRandom(op ^ (block << 8) ^ vol).Fill(out, kBlock);
  const uint64_t head[3] = {kMagic, (uint64_t{vol} << 56) | block, op};
  std::memcpy(out, head, sizeof(head));
  const uint64_t sum = Xxh3_64(out, kBlock - 8);
  std::memcpy(out + kBlock - 8, &sum, 8);
}

// The op whose stamp the block holds, 0 for zeros; nullopt for junk.
std::optional<uint64_t> DecodeBlock(uint8_t vol, uint64_t block, const uint8_t* in) {
  if (std::all_of(in, in + kBlock, [](uint8_t b) { return b == 0; })) return 0;
  uint64_t head[3], sum;
  std::memcpy(head, in, sizeof(head));
  std::memcpy(&sum, in + kBlock - 8, 8);
  if (head[0] != kMagic || head[1] != ((uint64_t{vol} << 56) | block) ||
      sum != Xxh3_64(in, kBlock - 8)) {
    return std::nullopt;
  }
  return head[2];
}

PoolOptions ChildPoolOptions(const KillStressOptions& o) {
  PoolOptions po;
  po.arc_max_bytes = 32 * kMiB;
  po.arc_min_bytes = 16 * kMiB;
  po.txg_timeout_ns = 100 * kNsPerMs;
  if (o.cache_device) {
    // The smallest ARC evicts while the children run, and the cache device
    // writes what it was given every 50 ms, so that children die with
    // slots written, half written and not yet written.
    po.arc_max_bytes = 16 * kMiB;
    po.cache.feed_interval_ms = 50;
  }
  return po;
}

// ---- The child -----------------------------------------------------------------

class Child {
 public:
  Child(Pool* pool, int fd, uint64_t cycle, const KillStressOptions& o)
      : pool_(pool), fd_(fd), cycle_(cycle), threads_(o.threads), skip_flush_(o.unsafe_skip_flush),
        stripe_blocks_(o.stripe_blocks), completed_(o.threads + 1) {}

  [[noreturn]] void Run(uint64_t seed, bool churn) {
    SeededRandom seeds(seed);
    std::vector<std::thread> ts;
    for (uint32_t t = 0; t < threads_; t++) {
      ts.emplace_back([this, t, s = seeds.Next()] { Worker(t, s); });
    }
    const uint64_t churn_seed = seeds.Next();
    if (churn) ts.emplace_back([this, churn_seed] { Churn(churn_seed); });
    for (auto& t : ts) t.join();  // never: the parent kills us
    _exit(0);
  }

 private:
  [[noreturn]] static void Die(int code, const std::string& why) {
    std::fprintf(stderr, "kill stress child: %s\n", why.c_str());
    _exit(code);
  }
  void Send(const Msg& m) {
    while (write(fd_, &m, sizeof(m)) != sizeof(m)) {
      if (errno != EINTR) Die(50, std::string("pipe: ") + std::strerror(errno));
    }
  }
  uint64_t NextOp(uint32_t t, uint64_t* n) { return (cycle_ + 1) << 40 | uint64_t{t} << 32 | ++*n; }

  void Flush(Volume* v, uint32_t t) {
    std::vector<uint64_t> upto(completed_.size());
    for (size_t u = 0; u < upto.size(); u++) upto[u] = completed_[u].load();
    Status s = skip_flush_ ? Status::Ok() : v->Flush();
    if (!s.ok()) Die(31, "flush: " + s.ToString());
    for (size_t u = 0; u < upto.size(); u++) {
      if (upto[u] != 0) Send({.kind = MsgKind::kDurable, .thread = static_cast<uint16_t>(u), .op = upto[u]});
    }
    Send({.kind = MsgKind::kFlush, .thread = static_cast<uint16_t>(t)});
  }

  void Worker(uint32_t t, uint64_t seed) {
    SeededRandom r(seed);
    std::vector<std::shared_ptr<Volume>> vols;
    std::vector<std::vector<uint64_t>> model;  // what this thread's blocks hold now
    for (const StableVolume& sv : kStable) {
      auto v = pool_->OpenVolume(sv.name);
      if (!v.ok()) Die(21, v.status().ToString());
      vols.push_back(*v);
      model.emplace_back(sv.blocks, kUnknown);
    }
    std::vector<uint8_t> buf(kMaxOpBlocks * kBlock);
    uint64_t n = 0;
    for (;;) {
      const uint8_t vi = static_cast<uint8_t>(r.Uniform(kNumStable));
      Volume* v = vols[vi].get();
      const uint64_t stripes = kStable[vi].blocks / stripe_blocks_ / threads_;
      const uint64_t stripe = r.Uniform(stripes) * threads_ + t;
      const uint64_t skip = r.Uniform(stripe_blocks_);
      const uint64_t first = stripe * stripe_blocks_ + skip;
      const uint32_t count =
          static_cast<uint32_t>(r.Range(1, std::min(kMaxOpBlocks, stripe_blocks_ - skip)));
      const uint64_t offset = first * kBlock, length = count * kBlock;
      std::span<uint8_t> span(buf.data(), length);
      const uint64_t dice = r.Uniform(100);
      if (dice < 40) {
        const bool fua = !skip_flush_ && r.OneIn(8);
        const uint64_t op = NextOp(t, &n);
        Send({.kind = MsgKind::kWrite, .vol = vi, .thread = static_cast<uint16_t>(t), .blocks = count, .op = op, .block = first});
        for (uint32_t i = 0; i < count; i++) StampBlock(vi, first + i, op, buf.data() + i * kBlock);
        Status s = v->Write(offset, span, fua ? kFua : kWriteNone);
        if (!s.ok()) Die(30, "write: " + s.ToString());
        for (uint32_t i = 0; i < count; i++) model[vi][first + i] = op;
        completed_[t].store(op);
        if (fua) Send({.kind = MsgKind::kFua, .thread = static_cast<uint16_t>(t), .op = op});
      } else if (dice < 60) {
        const uint64_t op = NextOp(t, &n);
        Send({.kind = MsgKind::kZero, .vol = vi, .thread = static_cast<uint16_t>(t), .blocks = count, .op = op, .block = first});
        Status s = dice < 50 ? v->Trim(offset, length)
                             : v->WriteZeroes(offset, length, r.OneIn(2) ? kZeroNoHole : kZeroNone);
        if (!s.ok()) Die(32, "trim/zero: " + s.ToString());
        for (uint32_t i = 0; i < count; i++) model[vi][first + i] = 0;
        completed_[t].store(op);
      } else if (dice < 92) {
        Status s = v->Read(offset, span);
        if (!s.ok()) Die(33, "read: " + s.ToString());
        for (uint32_t i = 0; i < count; i++) {
          const uint64_t want = model[vi][first + i];
          if (want == kUnknown) continue;  // not touched by this child yet
          std::optional<uint64_t> got = DecodeBlock(vi, first + i, buf.data() + i * kBlock);
          if (!got || *got != want) {
            Die(40, std::string("read-verify: volume ") + kStable[vi].name + " block " +
                        std::to_string(first + i) + " holds " +
                        (got ? "op " + std::to_string(*got) : std::string("junk")) +
                        ", not op " + std::to_string(want));
          }
        }
      } else {
        Flush(v, t);
      }
    }
  }

  void Churn(uint64_t seed) {
    const uint32_t t = threads_;
    SeededRandom r(seed);
    std::vector<uint64_t> alive;  // churn volumes, including those of earlier children
    for (const VolumeInfo& vi : pool_->Info().volumes) {
      if (vi.name[0] == 'c') alive.push_back(std::stoull(vi.name.substr(1)));
    }
    uint64_t n = 0, k = 0;
    std::vector<uint8_t> buf(16 * 1024);
    for (;;) {
      if (alive.size() < kMaxChurnVolumes && r.OneIn(2)) {
        const uint64_t id = (cycle_ + 1) << 16 | ++k;
        const uint64_t op = NextOp(t, &n);
        Send({.kind = MsgKind::kCreate, .thread = static_cast<uint16_t>(t), .op = op, .name_id = id});
        VolumeOptions vo;
        vo.name = ChurnName(id);
        vo.size_bytes = kChurnVolumeBytes;
        vo.record_size_bytes = 4096u << r.Uniform(5);
        Status s = pool_->CreateVolume(vo);
        if (!s.ok()) Die(34, "create: " + s.ToString());
        alive.push_back(id);
        completed_[t].store(op);
      } else if (!alive.empty() && r.OneIn(3)) {
        const size_t i = r.Uniform(alive.size());
        const uint64_t op = NextOp(t, &n);
        Send({.kind = MsgKind::kDestroy, .thread = static_cast<uint16_t>(t), .op = op, .name_id = alive[i]});
        Status s = pool_->DestroyVolume(ChurnName(alive[i]));
        if (!s.ok()) Die(35, "destroy: " + s.ToString());
        alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(i));
        completed_[t].store(op);
      } else if (!alive.empty()) {
        auto v = pool_->OpenVolume(ChurnName(alive[r.Uniform(alive.size())]));
        if (!v.ok()) Die(36, "open churn volume: " + v.status().ToString());
        r.Fill(buf.data(), buf.size());
        Status s = (*v)->Write(r.Uniform(kChurnVolumeBytes / buf.size()) * buf.size(), buf);
        if (!s.ok()) Die(37, "churn write: " + s.ToString());
        if (r.OneIn(4)) Flush(v->get(), t);
      }
    }
  }

  static constexpr uint64_t kUnknown = UINT64_MAX;
  Pool* const pool_;
  const int fd_;
  const uint64_t cycle_;
  const uint32_t threads_;
  const bool skip_flush_;
  const uint64_t stripe_blocks_;
  std::vector<std::atomic<uint64_t>> completed_;  // per thread: its last completed op
};

// ---- The parent's model -------------------------------------------------------

struct BlockModel {
  uint64_t base = 0;                                  // op held at the cycle's start; 0 = zeros
  std::vector<std::pair<uint64_t, uint64_t>> since;   // (op, content: op or 0) issued since
};

struct ChurnModel {
  bool exists_at_base = false;
  uint64_t create_op = 0, destroy_op = 0;
};

class Model {
 public:
  Model() {
    for (const StableVolume& sv : kStable) blocks_.emplace_back(sv.blocks);
  }

  void Apply(const Msg& m, KillStressResult* res) {
    switch (m.kind) {
      case MsgKind::kWrite:
      case MsgKind::kZero:
        for (uint64_t b = m.block; b < m.block + m.blocks; b++) {
          blocks_[m.vol][b].since.push_back({m.op, m.kind == MsgKind::kWrite ? m.op : 0});
        }
        res->ops_issued++;
        break;
      case MsgKind::kDurable:
        frontier_[m.thread] = std::max(frontier_[m.thread], m.op);
        break;
      case MsgKind::kFua:
        fua_.insert(m.op);
        res->fua_writes++;
        break;
      case MsgKind::kCreate:
        churn_[m.name_id].create_op = m.op;
        res->ops_issued++;
        res->volumes_created++;
        break;
      case MsgKind::kDestroy:
        churn_[m.name_id].destroy_op = m.op;
        res->ops_issued++;
        res->volumes_destroyed++;
        break;
      case MsgKind::kFlush:
        res->flushes++;
        break;
    }
  }

  bool Durable(uint64_t op) const {
    auto it = frontier_.find(ThreadOf(op));
    return (it != frontier_.end() && op <= it->second) || fua_.count(op) != 0;
  }

  // Checks one block's observed content; "" when allowed.
  std::string CheckBlock(size_t vol, uint64_t block, uint64_t got, KillStressResult* res) const {
    const BlockModel& m = blocks_[vol][block];
    size_t first_allowed = 0;  // index into since of the newest durable op, or none
    bool have_durable = false;
    for (size_t i = m.since.size(); i-- > 0;) {
      if (Durable(m.since[i].first)) {
        first_allowed = i;
        have_durable = true;
        break;
      }
    }
    if (have_durable) res->durable_blocks_checked++;
    if (!have_durable && got == m.base) return "";
    for (size_t i = first_allowed; i < m.since.size(); i++) {
      if (m.since[i].second == got) return "";
    }
    const std::string where = std::string("volume ") + kStable[vol].name + " block " +
                              std::to_string(block) + " holds " +
                              (got ? "op " + std::to_string(got) : std::string("zeros"));
    std::string history = "; base " + std::to_string(m.base) + ", then";
    for (const auto& [op, content] : m.since) {
      history += " " + std::to_string(op) + (content == 0 ? "(zero" : "(write") +
                 (fua_.count(op) ? ",fua" : "") + (Durable(op) ? ",durable)" : ")");
    }
    if (have_durable) {
      res->durable_lost++;
      return where + ", older than the durable op " + std::to_string(m.since[first_allowed].first) +
             history;
    }
    return where + ", which was never issued there" + history;
  }

  // The state the reopened pool holds becomes the next cycle's base.
  void Rebase(size_t vol, uint64_t block, uint64_t got) { blocks_[vol][block] = {got, {}}; }

  std::string CheckChurn(Pool* pool) {
    for (auto it = churn_.begin(); it != churn_.end();) {
      ChurnModel& c = it->second;
      const bool exists = pool->OpenVolume(ChurnName(it->first)).ok();
      const bool created = c.exists_at_base || (c.create_op != 0 && Durable(c.create_op));
      const bool destroyed = c.destroy_op != 0 && Durable(c.destroy_op);
      if (exists && destroyed) return "volume " + ChurnName(it->first) + " was destroyed durably but exists";
      if (!exists && created && c.destroy_op == 0) return "volume " + ChurnName(it->first) + " was created durably but is gone";
      if (exists) {
        c = {true, 0, 0};
        ++it;
      } else {
        it = churn_.erase(it);
      }
    }
    frontier_.clear();
    fua_.clear();
    return "";
  }

 private:
  std::vector<std::vector<BlockModel>> blocks_;
  std::map<uint32_t, uint64_t> frontier_;
  std::set<uint64_t> fua_;
  std::map<uint64_t, ChurnModel> churn_;
};

// The intent log as the reopen will find it, read before the reopen
// (replay and the syncs after it move the chain): the newest uberblock's
// txg and the records of the chain it names. Only a failure's message uses
// it: it tells a change never logged from one replay skipped or a sync lost.
struct LogBeforeReopen {
  std::string error;  // why it could not be read
  uint64_t uberblock_txg = 0;
  zil::LogReplay chain;
};

LogBeforeReopen ReadLogBeforeReopen(io::Device* device) {
  LogBeforeReopen out;
  Result<LogOnDevice> log = ReadLogOnDevice(device);
  if (!log.ok()) {
    out.error = log.status().ToString();
    return out;
  }
  out.uberblock_txg = log->uberblock_txg;
  out.chain = std::move(log->chain);
  return out;
}

// What the reopen and the log say about `block` of a volume: which txg the
// pool opened at, how many records replay applied, and every record of the
// chain read before the reopen that covers the block (with its txg, seq
// and, for a write, the op stamped in the block).
std::string ExplainBlock(const LogBeforeReopen& log, const OpenReport& report, uint64_t volume_guid,
                         uint8_t vol, uint64_t block) {
  std::string out = "; reopen: uberblock txg " + std::to_string(report.txg) + " (newest seen " +
                    std::to_string(report.newest_seen_txg) + "), replayed " +
                    std::to_string(report.log_records_replayed) + " log records";
  if (!log.error.empty()) return out + "; the log before the reopen: unreadable: " + log.error;
  const auto& recs = log.chain.records;
  out += "; the log before the reopen (uberblock txg " + std::to_string(log.uberblock_txg) +
         "): " + std::to_string(recs.size()) + " records";
  if (!recs.empty()) {
    out += " (seq " + std::to_string(recs.front().seq) + ".." + std::to_string(recs.back().seq) +
           ", txgs " + std::to_string(recs.front().txg) + ".." + std::to_string(recs.back().txg) +
           ")";
  }
  out += ", ends: " + log.chain.end + "; records of this block:";
  const uint64_t begin = block * kBlock, end = begin + kBlock;
  bool any = false;
  for (const format::LogRecord& r : recs) {
    if (r.volume_guid != volume_guid || r.offset >= end || r.offset + r.length <= begin) continue;
    any = true;
    out += " seq " + std::to_string(r.seq) + " txg " + std::to_string(r.txg);
    if (r.type != format::LogRecordType::kWrite) {
      out += " (trim/zero)";
    } else if (r.offset <= begin && r.offset + r.length >= end) {
      std::optional<uint64_t> op = DecodeBlock(vol, block, r.data.data() + (begin - r.offset));
      out += op ? " (write op " + std::to_string(*op) + ")" : std::string(" (write, junk)");
    } else {
      out += " (part of a write)";
    }
    if (r.txg <= report.txg) out += " [skipped: in the uberblock's txg]";
  }
  return any ? out : out + " none";
}

// The ARC's cap while a check pushes what it read into the cache device.
constexpr uint64_t kVerifySqueezeBytes = 1 * kMiB;

// Reopens the pool (replaying whatever it replays), runs fsck, and checks
// every block and churn volume against the model.
std::string Verify(const std::string& path, uint64_t cycle, Model* model, KillStressResult* res) {
  io::UringDeviceOptions uo;
  auto dev = io::OpenBestDevice(path, uo);
  if (!dev.ok()) return dev.status().ToString();
  const LogBeforeReopen log = ReadLogBeforeReopen(dev->get());
  auto p = PoolImpl::OpenOnDevice(std::move(*dev), PoolOptions());
  if (!p.ok()) return "the pool does not open: " + p.status().ToString();
  // Reads below go to the cache device first, once it is rebuilt.
  if (CacheDevices* c = (*p)->cache_devices(); c != nullptr) c->WaitRebuilt();
  PoolImpl::Census census = (*p)->Check();
  if (!census.problems.empty()) return "fsck: " + census.problems[0];
  std::string failure;
  for (size_t vi = 0; vi < kNumStable; vi++) {
    auto v = (*p)->OpenVolume(kStable[vi].name);
    if (!v.ok()) return v.status().ToString();
    std::vector<uint8_t> all(kStable[vi].blocks * kBlock);
    Status s = (*v)->Read(0, all);
    if (!s.ok()) return "reading " + std::string(kStable[vi].name) + ": " + s.ToString();
    for (uint64_t b = 0; b < kStable[vi].blocks; b++) {
      std::optional<uint64_t> got = DecodeBlock(static_cast<uint8_t>(vi), b, all.data() + b * kBlock);
      res->blocks_checked++;
      if (!got) {
        if (failure.empty()) failure = std::string("volume ") + kStable[vi].name + " block " + std::to_string(b) + " is junk";
        continue;
      }
      std::string e = model->CheckBlock(vi, b, *got, res);
      if (!e.empty() && failure.empty()) {
        failure = e + ExplainBlock(log, (*p)->open_report(), (*v)->info().guid,
                                   static_cast<uint8_t>(vi), b);
      }
      model->Rebase(vi, b, *got);
    }
  }
  if (std::string e = model->CheckChurn(p->get()); !e.empty() && failure.empty()) failure = e;
  res->l2_hits += static_cast<uint64_t>(
      std::max<int64_t>(0, (*p)->stats().TakeSnapshot().Get("arcstats", "l2_hits", 0)));
  if (CacheDevices* c = (*p)->cache_devices(); c != nullptr && failure.empty()) {
    // What was just read leaves the ARC into the cache device and is
    // written out, so the next check reads copies that the next child
    // either left alone (they must be served) or rewrote (they must not).
    // However slowly the children run, the cache device then holds blocks.
    (*p)->arc().SetMaxBytes(kVerifySqueezeBytes);
    (*p)->arc().RunEvictionPass();
    (*p)->arc().SetMaxBytes(0);
    if (Status s = c->Flush(); !s.ok()) failure = "writing the cache device: " + s.ToString();
  }
  Status closed = (*p)->Close();
  if (!closed.ok() && failure.empty()) failure = "close after reopen: " + closed.ToString();
  if (!failure.empty()) failure = "cycle " + std::to_string(cycle) + ": " + failure;
  return failure;
}

std::string CachePathOf(const std::string& pool_path) { return pool_path + ".cache"; }

Status CreatePool(const std::string& path, bool cache_device) {
  PoolCreateOptions co;
  co.size_bytes = 256 * kMiB;
  co.sparse = true;
  ARC_RETURN_IF_ERROR(Pool::Create(path, co));
  ARC_ASSIGN_OR_RETURN(std::unique_ptr<Pool> p, Pool::Open(path, PoolOptions()));
  if (cache_device) {
    const std::string cache = CachePathOf(path);
    std::error_code ec;
    std::filesystem::remove(cache, ec);
    { std::ofstream(cache, std::ios::binary).close(); }
    std::filesystem::resize_file(cache, 64 * kMiB, ec);
    if (ec) return Status::IOError("cache device " + cache + ": " + ec.message());
    ARC_RETURN_IF_ERROR(p->AddCache(cache));
  }
  for (const StableVolume& sv : kStable) {
    VolumeOptions vo;
    vo.name = sv.name;
    vo.size_bytes = sv.blocks * kBlock;
    vo.record_size_bytes = sv.record_size;
    vo.compression = sv.compression;
    ARC_RETURN_IF_ERROR(p->CreateVolume(vo));
  }
  return p->Close();
}

// Reads messages until the deadline (or EOF when deadline is nullopt).
void Drain(int fd, std::optional<std::chrono::steady_clock::time_point> deadline, Model* model,
           KillStressResult* res) {
  Msg buf[128];
  size_t have = 0;  // bytes of a partial message carried over
  for (;;) {
    int timeout_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      timeout_ms = static_cast<int>(left.count());
    }
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, timeout_ms) <= 0) continue;
    const ssize_t n = read(fd, reinterpret_cast<uint8_t*>(buf) + have, sizeof(buf) - have);
    if (n <= 0) return;  // EOF: the child is gone
    have += static_cast<size_t>(n);
    const size_t whole = have / sizeof(Msg);
    for (size_t i = 0; i < whole; i++) model->Apply(buf[i], res);
    have -= whole * sizeof(Msg);
    std::memmove(buf, reinterpret_cast<uint8_t*>(buf) + whole * sizeof(Msg), have);
  }
}

}  // namespace

KillStressResult RunKillStress(const KillStressOptions& o) {
  KillStressResult res;
  const std::string path = o.dir + "/kill_stress_pool_" + std::to_string(getpid());
  if (Status s = CreatePool(path, o.cache_device); !s.ok()) {
    res.first_failure = "creating the pool: " + s.ToString();
    return res;
  }
  SeededRandom rnd = SeededRandom::FromEnvironment(o.seed_name);
  Model model;
  for (uint64_t cycle = 0; cycle < o.cycles && res.first_failure.empty(); cycle++) {
    const uint64_t child_seed = rnd.Next();
    const auto run_ms = rnd.Range(o.min_run_ms, o.max_run_ms);
    int fds[2];
    if (pipe(fds) != 0) {
      res.first_failure = std::string("pipe: ") + std::strerror(errno);
      break;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      auto p = Pool::Open(path, ChildPoolOptions(o));
      if (!p.ok()) {
        std::fprintf(stderr, "kill stress child: open: %s\n", p.status().ToString().c_str());
        _exit(20);
      }
      Child(p->get(), fds[1], cycle, o).Run(child_seed, o.churn);
    }
    close(fds[1]);
    Drain(fds[0], std::chrono::steady_clock::now() + std::chrono::milliseconds(run_ms), &model, &res);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    Drain(fds[0], std::nullopt, &model, &res);
    close(fds[0]);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
      res.first_failure = "cycle " + std::to_string(cycle) + ": the child ended by itself (exit " +
                          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                          "; its stderr says why)";
      break;
    }
    res.cycles++;
    res.first_failure = Verify(path, cycle, &model, &res);
  }
  std::filesystem::remove(path);
  if (o.cache_device) std::filesystem::remove(CachePathOf(path));
  return res;
}

void PrintKillStressResult(const KillStressResult& r) {
  std::printf(
      "kill stress: %llu kill/reopen cycles, %llu ops issued (%llu flushes, %llu FUA writes, %llu "
      "volumes created, %llu destroyed), %llu blocks checked (%llu with a durable version since the "
      "last cycle), durable writes lost: %llu\n",
      static_cast<unsigned long long>(r.cycles), static_cast<unsigned long long>(r.ops_issued),
      static_cast<unsigned long long>(r.flushes), static_cast<unsigned long long>(r.fua_writes),
      static_cast<unsigned long long>(r.volumes_created),
      static_cast<unsigned long long>(r.volumes_destroyed),
      static_cast<unsigned long long>(r.blocks_checked),
      static_cast<unsigned long long>(r.durable_blocks_checked),
      static_cast<unsigned long long>(r.durable_lost));
  if (r.l2_hits > 0) {
    std::printf("kill stress: %llu blocks read back from the cache device\n",
                static_cast<unsigned long long>(r.l2_hits));
  }
  if (!r.first_failure.empty()) std::printf("first failure: %s\n", r.first_failure.c_str());
}

}  // namespace arcstore::pool
