// The memory-cap workload: see memory_cap_workload.h and memory_cap_test.cc.
//
//   fill: the volume written once, 1 MiB at a time, then flushed
//   run:  clients x (read | write, 4..128 KiB, random offset) until the deadline
//         sampler: every sample_interval_ms, ARC size and VmRSS -> maxima
//
// Every 4 KiB block written carries its own index in its first 8 bytes, so
// a read can tell a block from a misplaced or foreign one without a model
// (clients overlap freely; which write wins does not matter here).
#include "testing/pool/memory_cap_workload.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "arcstore/pool.h"
#include "base/random.h"
#include "base/units.h"
#include "pool/pool_impl.h"
#include "stats/registry.h"
#include "testing/process_memory.h"

namespace arcstore::pool {
namespace {

constexpr uint64_t kStamp = 4096;

void Stamp(uint64_t offset, std::span<uint8_t> buf, uint8_t fill) {
  std::memset(buf.data(), fill, buf.size());
  for (uint64_t at = 0; at < buf.size(); at += kStamp) {
    const uint64_t index = (offset + at) / kStamp + 1;  // never 0: zeros mean unwritten
    std::memcpy(buf.data() + at, &index, 8);
  }
}

// "" when every block of `buf` read at `offset` is stamped with its index.
std::string CheckStamps(uint64_t offset, std::span<const uint8_t> buf) {
  for (uint64_t at = 0; at < buf.size(); at += kStamp) {
    uint64_t index;
    std::memcpy(&index, buf.data() + at, 8);
    if (index != (offset + at) / kStamp + 1) {
      return "block at offset " + std::to_string(offset + at) + " holds the stamp of block " +
             std::to_string(index) + " - 1";
    }
  }
  return "";
}

struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::string first_failure;
  std::atomic<uint64_t> requests{0}, reads{0}, writes{0}, failed{0}, wrong{0};
  void Fail(std::atomic<uint64_t>* counter, const std::string& what) {
    counter->fetch_add(1);
    std::lock_guard<std::mutex> l(mu);
    if (first_failure.empty()) first_failure = what;
  }
};

void Client(Volume* v, const MemoryCapOptions& o, uint64_t seed,
            std::chrono::steady_clock::time_point deadline, Shared* sh) {
  SeededRandom r(seed);
  std::vector<uint8_t> buf(o.max_request_bytes);
  const uint64_t units = o.max_request_bytes / o.min_request_bytes;
  while (std::chrono::steady_clock::now() < deadline) {
    const uint64_t len = r.Range(1, units) * o.min_request_bytes;
    const uint64_t off = r.Uniform((o.working_set_bytes - len) / kStamp + 1) * kStamp;
    std::span<uint8_t> span(buf.data(), len);
    sh->requests.fetch_add(1);
    if (r.OneIn(2)) {
      sh->reads.fetch_add(1);
      Status s = v->Read(off, span);
      if (!s.ok()) {
        sh->Fail(&sh->failed, "read: " + s.ToString());
      } else if (std::string e = CheckStamps(off, span); !e.empty()) {
        sh->Fail(&sh->wrong, "read at " + std::to_string(off) + ": " + e);
      }
    } else {
      sh->writes.fetch_add(1);
      Stamp(off, span, static_cast<uint8_t>(r.Next()));
      Status s = v->Write(off, span);
      if (!s.ok()) sh->Fail(&sh->failed, "write: " + s.ToString());
    }
  }
}

uint64_t MsSince(std::chrono::steady_clock::time_point t) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - t)
                                   .count());
}

Status Fill(Volume* v, const MemoryCapOptions& o) {
  std::vector<uint8_t> buf(kMiB);
  for (uint64_t off = 0; off < o.working_set_bytes; off += buf.size()) {
    const uint64_t n = std::min<uint64_t>(buf.size(), o.working_set_bytes - off);
    std::span<uint8_t> span(buf.data(), n);
    Stamp(off, span, 0x5c);
    ARC_RETURN_IF_ERROR(v->Write(off, span));
  }
  return v->Flush();
}

}  // namespace

MemoryCapResult RunMemoryCapWorkload(const MemoryCapOptions& o) {
  MemoryCapResult res;
  const std::string path = o.dir + "/memcap_pool_" + std::to_string(getpid());
  PoolCreateOptions co;
  co.size_bytes = 2 * o.working_set_bytes + 256 * kMiB;
  co.sparse = true;
  if (res.setup = Pool::Create(path, co); !res.setup.ok()) return res;
  struct Remove {
    std::string p;
    ~Remove() { std::filesystem::remove(p); }
  } remove{path};
  PoolOptions po;
  po.arc_max_bytes = o.arc_max_bytes;
  po.arc_min_bytes = o.arc_max_bytes;
  auto opened = Pool::Open(path, po);
  if (!opened.ok()) return res.setup = opened.status(), res;
  std::unique_ptr<Pool> pool = std::move(*opened);
  arc::Arc& arc = static_cast<PoolImpl&>(*pool).arc();
  VolumeOptions vo;
  vo.name = "ws";
  vo.size_bytes = o.working_set_bytes;
  vo.record_size_bytes = o.record_size_bytes;
  vo.compression = "off";
  if (res.setup = pool->CreateVolume(vo); !res.setup.ok()) return res;
  auto v = pool->OpenVolume("ws");
  if (!v.ok()) return res.setup = v.status(), res;
  const uint64_t ovf_bytes = std::max<uint64_t>(o.record_size_bytes, arc.c_max() / 256);
  res.arc_bound_bytes = arc.c_max() + ovf_bytes * 3 / 2;
  res.rss_bound_bytes = res.arc_bound_bytes + o.clients * o.max_request_bytes + o.rss_slack_bytes;

  Shared sh;
  auto sampler = std::thread([&] {
    std::unique_lock<std::mutex> l(sh.mu);
    while (!sh.stop) {
      res.max_arc_bytes = std::max(res.max_arc_bytes, arc.size_bytes());
      res.peak_rss_bytes = std::max(res.peak_rss_bytes, arcstore::testing::ResidentBytes());
      res.samples++;
      sh.cv.wait_for(l, std::chrono::milliseconds(o.sample_interval_ms));  // pacing
    }
  });
  auto start = std::chrono::steady_clock::now();
  res.setup = Fill(v->get(), o);
  res.fill_ms = MsSince(start);

  if (res.setup.ok()) {
    start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::milliseconds(o.duration_ms);
    SeededRandom seeds = SeededRandom::FromEnvironment("MemoryCap");
    std::vector<std::thread> clients;
    for (uint32_t i = 0; i < o.clients; i++) {
      clients.emplace_back(Client, v->get(), std::cref(o), seeds.Next(), deadline, &sh);
    }
    for (auto& t : clients) t.join();
    res.run_ms = MsSince(start);
  }
  {
    std::lock_guard<std::mutex> l(sh.mu);
    sh.stop = true;
  }
  sh.cv.notify_all();
  sampler.join();
  if (getenv("ARCSTORE_MEMCAP_STATS") != nullptr) {  // every pool stat, for diagnosis
    std::fprintf(stderr, "%s\n", stats::ToKstatText(pool->stats().TakeSnapshot()).c_str());
  }
  v->reset();
  Status closed = pool->Close();
  if (res.setup.ok() && !closed.ok()) res.setup = closed;
  res.peak_rss_bytes = std::max(res.peak_rss_bytes, arcstore::testing::PeakResidentBytes());
  res.requests = sh.requests;
  res.reads = sh.reads;
  res.writes = sh.writes;
  res.failed_requests = sh.failed;
  res.wrong_reads = sh.wrong;
  res.first_failure = sh.first_failure;
  return res;
}

void PrintMemoryCapResult(const MemoryCapOptions& o, const MemoryCapResult& r) {
  auto mib = [](uint64_t b) { return static_cast<double>(b) / kMiB; };
  std::printf(
      "memory caps: %u clients, %.0f MiB working set, ARC c_max %.0f MiB; fill %llu ms, run %llu "
      "ms: %llu requests (%llu reads, %llu writes), %llu failed, %llu wrong; %llu samples: max "
      "ARC %.1f MiB (bound %.1f), peak RSS %.1f MiB (bound %.1f)\n",
      o.clients, mib(o.working_set_bytes), mib(o.arc_max_bytes),
      static_cast<unsigned long long>(r.fill_ms), static_cast<unsigned long long>(r.run_ms),
      static_cast<unsigned long long>(r.requests), static_cast<unsigned long long>(r.reads),
      static_cast<unsigned long long>(r.writes),
      static_cast<unsigned long long>(r.failed_requests),
      static_cast<unsigned long long>(r.wrong_reads), static_cast<unsigned long long>(r.samples),
      mib(r.max_arc_bytes), mib(r.arc_bound_bytes), mib(r.peak_rss_bytes),
      mib(r.rss_bound_bytes));
}

}  // namespace arcstore::pool
