// Kill test (label "crash"): a child process writes verifiable blocks and
// flushes, telling the parent after every completed flush which blocks are
// durable; the parent SIGKILLs it at a random moment, reopens the pool,
// checks it, and requires every durable block (or a newer version of it).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "arcstore/pool.h"
#include "base/checksum.h"
#include "base/random.h"
#include "io/file_device.h"
#include "pool/pool_impl.h"

namespace arcstore::pool {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kBlocks = 2048;  // an 8 MiB volume

struct Durable {
  uint32_t block;
  uint32_t generation;
};

// A block's contents: its index, its generation, a fill, and a checksum.
void FillBlock(uint32_t block, uint32_t gen, uint8_t* out) {
  SeededRandom r((uint64_t{block} << 32) | gen);
  r.Fill(out, kBlock);
  std::memcpy(out, &block, 4);
  std::memcpy(out + 4, &gen, 4);
  const uint64_t sum = Xxh3_64(out, kBlock - 8);
  std::memcpy(out + kBlock - 8, &sum, 8);
}

// The generation a block holds: 0 for never written (zeros), -1 for junk.
int64_t Decode(uint32_t block, const uint8_t* in) {
  bool zero = true;
  for (uint64_t i = 0; i < kBlock && zero; i++) zero = in[i] == 0;
  if (zero) return 0;
  uint32_t b, gen;
  uint64_t sum;
  std::memcpy(&b, in, 4);
  std::memcpy(&gen, in + 4, 4);
  std::memcpy(&sum, in + kBlock - 8, 8);
  if (b != block || sum != Xxh3_64(in, kBlock - 8)) return -1;
  return gen;
}

// The child: never returns.
[[noreturn]] void Child(const std::string& path, int fd, uint64_t seed, uint32_t first_gen) {
  PoolOptions po;
  po.txg_timeout_ns = 200 * kNsPerMs;
  auto p = Pool::Open(path, po);
  if (!p.ok()) _exit(3);
  auto v = (*p)->OpenVolume("v");
  if (!v.ok()) _exit(4);
  SeededRandom rnd(seed);
  std::vector<Durable> since_flush;
  std::vector<uint8_t> buf(kBlock);
  for (uint32_t gen = first_gen;; gen++) {
    const uint32_t block = static_cast<uint32_t>(rnd.Uniform(kBlocks));
    FillBlock(block, gen, buf.data());
    if (!(*v)->Write(block * kBlock, buf).ok()) _exit(5);
    since_flush.push_back({block, gen});
    if (rnd.OneIn(16)) {
      if (!(*v)->Flush().ok()) _exit(6);
      // Everything written before the flush is durable now.
      for (size_t i = 0; i < since_flush.size(); i += 512) {
        const size_t n = std::min<size_t>(512, since_flush.size() - i);
        if (write(fd, since_flush.data() + i, n * sizeof(Durable)) < 0) _exit(7);
      }
      since_flush.clear();
    }
  }
}

TEST(KillTest, NothingFlushedIsLostWhenTheProcessDies) {
  const std::string dir = ::testing::TempDir() + "/arcstore_kill_test_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/pool";
  PoolCreateOptions co;
  co.size_bytes = 64 * kMiB;
  co.sparse = true;
  ASSERT_TRUE(Pool::Create(path, co).ok());
  {
    auto p = *Pool::Open(path, PoolOptions());
    VolumeOptions vo;
    vo.name = "v";
    vo.size_bytes = kBlocks * kBlock;
    vo.record_size_bytes = 16 * 1024;
    ASSERT_TRUE(p->CreateVolume(vo).ok());
    ASSERT_TRUE(p->Close().ok());
  }
  SeededRandom rnd = SeededRandom::FromEnvironment("KillTest");
  std::map<uint32_t, uint32_t> durable;  // block -> newest durable generation
  const uint64_t cycles = ScaledIterations(25);
  uint64_t kills = 0, durable_writes = 0;
  for (uint64_t cycle = 0; cycle < cycles; cycle++) {
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    const uint64_t child_seed = rnd.Next();
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(pipefd[0]);
      // Generations grow across children, so a durable block from an
      // earlier cycle can be checked in every later one.
      Child(path, pipefd[1], child_seed, static_cast<uint32_t>((cycle + 1) * 10'000'000));
    }
    close(pipefd[1]);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    std::vector<Durable> got;
    auto drain = [&] {
      Durable d[512];
      ssize_t n;
      while ((n = read(pipefd[0], d, sizeof(d))) > 0) {
        got.insert(got.end(), d, d + n / static_cast<ssize_t>(sizeof(Durable)));
      }
    };
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(rnd.Range(30, 400));
    while (std::chrono::steady_clock::now() < until) {
      drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // pacing, not synchronisation
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    drain();
    close(pipefd[0]);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited by itself with status "
                                     << WEXITSTATUS(status) << " (cycle " << cycle << ")";
    kills++;
    for (const Durable& d : got) {
      durable[d.block] = std::max(durable[d.block], d.generation);
      durable_writes++;
    }
    // Reopen, check, verify.
    {
      io::FileDeviceOptions fo;
      fo.read_only = true;
      auto dev = io::FileDevice::Open(path, fo);
      ASSERT_TRUE(dev.ok());
      PoolOptions po;
      po.read_only = true;
      auto p = PoolImpl::OpenOnDevice(std::move(*dev), po);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      PoolImpl::Census c = (*p)->Check();
      for (const auto& problem : c.problems) ADD_FAILURE() << "cycle " << cycle << ": " << problem;
      auto v = *(*p)->OpenVolume("v");
      std::vector<uint8_t> all(kBlocks * kBlock);
      ASSERT_TRUE(v->Read(0, all).ok());
      for (uint32_t b = 0; b < kBlocks; b++) {
        const int64_t gen = Decode(b, all.data() + b * kBlock);
        ASSERT_GE(gen, 0) << "block " << b << " is torn or foreign (cycle " << cycle << ")";
        auto it = durable.find(b);
        if (it != durable.end()) {
          ASSERT_GE(gen, it->second) << "block " << b << " lost durable generation " << it->second
                                     << " (cycle " << cycle << ")";
        }
      }
    }
  }
  std::printf("kill test: %llu kill/reopen cycles, %llu durable writes verified\n",
              static_cast<unsigned long long>(kills),
              static_cast<unsigned long long>(durable_writes));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace arcstore::pool
