// Bad options (label "unit"): a table per entry point. Every bad case must
// be refused with a message naming the option and the reason, and must not
// change anything on disk: the pool file's checksum is the same before and
// after, and no file appears.
//
//   PoolOptions        Validate() and Pool::Open on an existing pool
//   PoolCreateOptions  Validate() and Pool::Create, on a new path (no file
//                      may appear) and on an existing pool (unchanged)
//   VolumeOptions      Validate() and CreateVolume (the volume list stays)
//   the CLI            arcstore pool create, vol create, serve, bench and sim
//                      with bad options against an existing pool
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "arcstore/pool.h"
#include "base/checksum.h"
#include "base/units.h"
#include "format/volume_table.h"

namespace arcstore {
namespace {

uint64_t HashFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return Xxh3_64(bytes.data(), bytes.size());
}

size_t FilesIn(const std::string& dir) {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir),
                                           std::filesystem::directory_iterator()));
}

class BadOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/arcstore_bad_options_" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    pool_ = dir_ + "/pool";
    PoolCreateOptions co;
    co.size_bytes = 16 * kMiB;
    co.sparse = true;
    ASSERT_TRUE(Pool::Create(pool_, co).ok());
    auto p = Pool::Open(pool_, PoolOptions());
    ASSERT_TRUE(p.ok());
    VolumeOptions vo;
    vo.name = "v";
    vo.size_bytes = kMiB;
    ASSERT_TRUE((*p)->CreateVolume(vo).ok());
    ASSERT_TRUE((*p)->Close().ok());
    hash_ = HashFile(pool_);
    files_ = FilesIn(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The status is an error of `code` whose message holds every piece.
  static void ExpectRefused(const std::string& what, const Status& s,
                            const std::vector<std::string>& pieces,
                            StatusCode code = StatusCode::kInvalidArgument) {
    EXPECT_EQ(s.code(), code) << what << ": " << s.ToString();
    for (const std::string& p : pieces) {
      EXPECT_NE(s.message().find(p), std::string::npos)
          << what << ": the message does not say '" << p << "': " << s.ToString();
    }
  }
  void ExpectDiskUnchanged(const std::string& what) {
    EXPECT_EQ(HashFile(pool_), hash_) << what << ": the pool file changed";
    EXPECT_EQ(FilesIn(dir_), files_) << what << ": a file appeared or went";
  }

  std::string dir_, pool_;
  uint64_t hash_ = 0;
  size_t files_ = 0;
};

struct PoolCase {
  const char* what;
  std::function<void(PoolOptions&)> set;
  std::vector<std::string> pieces;
};

TEST_F(BadOptionsTest, PoolOptions) {
  const PoolCase cases[] = {
      {"memory limit too small", [](PoolOptions& o) { o.memory_limit_bytes = kMiB; },
       {"memory_limit_bytes", "below 64 MiB"}},
      {"ARC max too small", [](PoolOptions& o) { o.arc_max_bytes = kMiB; },
       {"arc_max_bytes", "below 16 MiB"}},
      {"ARC min above max",
       [](PoolOptions& o) {
         o.arc_max_bytes = 32 * kMiB;
         o.arc_min_bytes = 64 * kMiB;
       },
       {"arc_min_bytes", "exceeds arc_max_bytes"}},
      {"ARC pretouch too large", [](PoolOptions& o) { o.arc_pretouch_bytes = 65 * kGiB; },
       {"arc_pretouch_bytes", "exceeds 64 GiB"}},
      {"ARC grow-ahead too large", [](PoolOptions& o) { o.arc_grow_ahead_bytes = 2 * kGiB; },
       {"arc_grow_ahead_bytes", "exceeds 1 GiB"}},
      {"dirty max too small", [](PoolOptions& o) { o.dirty_max_bytes = 4096; },
       {"dirty_max_bytes", "below 1 MiB"}},
      {"too many work threads", [](PoolOptions& o) { o.work_threads = 1000; },
       {"work_threads", "limit of 256"}},
      {"work queue limit 0", [](PoolOptions& o) { o.work_queue_limit = 0; },
       {"work_queue_limit", "[1, 1000000]"}},
      {"work queue limit too large", [](PoolOptions& o) { o.work_queue_limit = 2'000'000; },
       {"work_queue_limit", "[1, 1000000]"}},
      {"txg timeout 0", [](PoolOptions& o) { o.txg_timeout_ns = 0; },
       {"txg_timeout_ns", "[1 ms, 600 s]"}},
      {"txg timeout too long", [](PoolOptions& o) { o.txg_timeout_ns = 601 * kNsPerSec; },
       {"txg_timeout_ns", "[1 ms, 600 s]"}},
      {"txg sync kick 0", [](PoolOptions& o) { o.txg_sync_kick_percent = 0; },
       {"txg_sync_kick_percent", "[1, 100]"}},
      {"log spill past the cap", [](PoolOptions& o) { o.intent_log_spill_percent = 101; },
       {"intent_log_spill_percent", "[0, 100]"}},
      {"early log writes for a window over a second",
       [](PoolOptions& o) { o.intent_log_early_write_window_ns = 1'000'000'001; },
       {"intent_log_early_write_window_ns", "[0, 1 s]"}},
      {"cache write max too small", [](PoolOptions& o) { o.cache.write_max_bytes = 4096; },
       {"cache.write_max_bytes", "[1 MiB, 1 GiB]"}},
      {"cache write boost too large", [](PoolOptions& o) { o.cache.write_boost_bytes = 2 * kGiB; },
       {"cache.write_boost_bytes", "[0, 1 GiB]"}},
      {"cache feed interval too short", [](PoolOptions& o) { o.cache.feed_interval_ms = 1; },
       {"cache.feed_interval_ms", "[10, 60000]"}},
  };
  for (const PoolCase& c : cases) {
    PoolOptions o;
    c.set(o);
    ExpectRefused(c.what, o.Validate(), c.pieces);
    auto p = Pool::Open(pool_, o);
    ExpectRefused(std::string(c.what) + " (open)", p.status(), c.pieces);
    ExpectDiskUnchanged(c.what);
  }
}

// A pool open takes a lock on its file: a writable open needs it alone,
// read-only opens share it. A refused open changes nothing.
TEST_F(BadOptionsTest, APoolInUseIsRefused) {
  PoolOptions ro;
  ro.read_only = true;
  {
    auto writer = Pool::Open(pool_, PoolOptions());
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ExpectRefused("a second writable open", Pool::Open(pool_, PoolOptions()).status(),
                  {"device " + pool_, "in use"}, StatusCode::kBusy);
    ExpectRefused("a read-only open beside a writer", Pool::Open(pool_, ro).status(),
                  {"device " + pool_, "in use"}, StatusCode::kBusy);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  hash_ = HashFile(pool_);  // the writer's close rewrote the pool
  {
    auto reader = Pool::Open(pool_, ro);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto other = Pool::Open(pool_, ro);
    EXPECT_TRUE(other.ok()) << "read-only opens share the lock: " << other.status().ToString();
    ExpectRefused("a writable open beside readers", Pool::Open(pool_, PoolOptions()).status(),
                  {"in use"}, StatusCode::kBusy);
  }
  ExpectDiskUnchanged("opens refused for a lock");
  auto again = Pool::Open(pool_, PoolOptions());
  EXPECT_TRUE(again.ok()) << "the lock goes with the pool: " << again.status().ToString();
}

TEST_F(BadOptionsTest, PoolCreateOptions) {
  struct Case {
    const char* what;
    std::function<void(PoolCreateOptions&)> set;
    std::vector<std::string> pieces;
  };
  const Case cases[] = {
      {"size too small", [](PoolCreateOptions& o) { o.size_bytes = kMiB; },
       {"pool size 1048576", "at least 16 MiB"}},
      {"size not a multiple of 4 KiB", [](PoolCreateOptions& o) { o.size_bytes = 16 * kMiB + 1; },
       {"pool size 16777217", "multiple of 4 KiB"}},
      {"empty name", [](PoolCreateOptions& o) { o.name = ""; }, {"pool name ''", "1 to 64"}},
      {"name too long", [](PoolCreateOptions& o) { o.name = std::string(65, 'n'); },
       {"pool name", "1 to 64 characters"}},
  };
  for (const Case& c : cases) {
    PoolCreateOptions o;
    o.size_bytes = 32 * kMiB;
    o.sparse = true;
    c.set(o);
    ExpectRefused(c.what, o.Validate(), c.pieces);
    ExpectRefused(std::string(c.what) + " (new path)", Pool::Create(dir_ + "/new", o), c.pieces);
    ExpectRefused(std::string(c.what) + " (existing pool)", Pool::Create(pool_, o), c.pieces);
    ExpectDiskUnchanged(c.what);
  }
  PoolCreateOptions no_size;
  ExpectRefused("a file without a size", Pool::Create(dir_ + "/new", no_size),
                {"a file-backed pool needs a size"});
  ExpectDiskUnchanged("a file without a size");
}

TEST_F(BadOptionsTest, VolumeOptions) {
  struct Case {
    const char* what;
    std::function<void(VolumeOptions&)> set;
    std::vector<std::string> pieces;
  };
  const Case cases[] = {
      {"empty name", [](VolumeOptions& o) { o.name = ""; }, {"name must be 1 to 63"}},
      {"name too long",
       [](VolumeOptions& o) { o.name = std::string(format::kMaxVolumeNameBytes + 1, 'x'); },
       {"name must be 1 to 63 characters"}},
      {"name with a slash", [](VolumeOptions& o) { o.name = "a/b"; },
       {"volume 'a/b'", "letters, digits and _.:-"}},
      {"size 0", [](VolumeOptions& o) { o.size_bytes = 0; }, {"size 0", "multiple of 512"}},
      {"size not a multiple of 512", [](VolumeOptions& o) { o.size_bytes = 1000; },
       {"size 1000", "multiple of 512"}},
      {"size past 1 EiB", [](VolumeOptions& o) { o.size_bytes = 2ull << 60; },
       {"size 2305843009213693952", "up to 1 EiB"}},
      {"record size not a power of two", [](VolumeOptions& o) { o.record_size_bytes = 3072; },
       {"record size 3072", "power of two from 4 KiB to 1 MiB"}},
      {"record size too small", [](VolumeOptions& o) { o.record_size_bytes = 2048; },
       {"record size 2048", "4 KiB to 1 MiB"}},
      {"record size too large", [](VolumeOptions& o) { o.record_size_bytes = 2 * 1024 * 1024; },
       {"record size 2097152", "4 KiB to 1 MiB"}},
      {"unknown compression", [](VolumeOptions& o) { o.compression = "gzip"; },
       {"compression 'gzip'", "off, lz4 or zstd"}},
  };
  auto p = Pool::Open(pool_, PoolOptions());
  ASSERT_TRUE(p.ok());
  for (const Case& c : cases) {
    VolumeOptions o;
    o.name = "w";
    o.size_bytes = kMiB;
    c.set(o);
    ExpectRefused(c.what, o.Validate(), c.pieces);
    ExpectRefused(std::string(c.what) + " (create)", (*p)->CreateVolume(o), c.pieces);
  }
  VolumeOptions taken;
  taken.name = "v";
  taken.size_bytes = kMiB;
  ExpectRefused("a taken name", (*p)->CreateVolume(taken), {"volume v already exists"},
                StatusCode::kAlreadyExists);
  ASSERT_EQ((*p)->Info().volumes.size(), 1u) << "only the volume made in SetUp";
  ASSERT_TRUE((*p)->Close().ok());
}

// ---- The CLI --------------------------------------------------------------

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CliRun RunCli(const std::string& args) {
  const std::string cmd = "timeout 60 " + std::string(ARCSTORE_BINARY) + " " + args + " 2>&1";
  CliRun r;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) r.output.append(buf, n);
  const int status = pclose(f);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct CliCase {
  std::string args;  // POOL and DIR are replaced by the pool's path and the test dir
  std::vector<std::string> pieces;
};

std::string Expand(std::string s, const std::string& pool, const std::string& dir) {
  for (size_t at; (at = s.find("POOL")) != std::string::npos;) s.replace(at, 4, pool);
  for (size_t at; (at = s.find("DIR")) != std::string::npos;) s.replace(at, 3, dir);
  return s;
}

TEST_F(BadOptionsTest, CommandLine) {
  const CliCase cases[] = {
      // pool create
      {"pool create DIR/new --size 1M", {"pool size 1048576", "at least 16 MiB"}},
      {"pool create DIR/new --size abc", {"--size", "size 'abc' does not start with a number"}},
      {"pool create DIR/new --size 16777217", {"pool size 16777217", "multiple of 4 KiB"}},
      {"pool create DIR/new --size 32M --name ''", {"pool name ''", "1 to 64 characters"}},
      {"pool create POOL --size 1M", {"pool size 1048576", "at least 16 MiB"}},
      // vol create
      {"vol create POOL w --size 0", {"volume 'w'", "size 0", "multiple of 512"}},
      {"vol create POOL w --size 1000", {"size 1000", "multiple of 512"}},
      {"vol create POOL w --size abc", {"--size", "'abc'"}},
      {"vol create POOL w --size 1M --recordsize 3K", {"record size 3072", "power of two"}},
      {"vol create POOL w --size 1M --recordsize 2M", {"record size 2097152", "4 KiB to 1 MiB"}},
      {"vol create POOL w --size 1M --recordsize abc", {"--recordsize", "'abc'"}},
      {"vol create POOL w --size 1M --compression gzip", {"compression 'gzip'", "off, lz4 or zstd"}},
      {"vol create POOL bad/name --size 1M", {"volume 'bad/name'", "letters, digits"}},
      {"vol create DIR/missing w --size 1M", {"DIR/missing"}},
      // serve
      {"serve POOL --socket DIR/s --max-connections 0", {"max_connections", "[1, 65536]"}},
      {"serve POOL --socket DIR/s --max-in-flight 0", {"max_in_flight_per_connection", "[1, 4096]"}},
      {"serve POOL --socket DIR/s --max-payload 1K", {"max_payload_bytes", "[1 MiB, 256 MiB]"}},
      {"serve POOL --socket DIR/s --max-payload abc", {"--max-payload", "abc"}},
      {"serve POOL --socket DIR/s --socket-mode 999", {"--socket-mode", "not an octal mode"}},
      {"serve POOL --listen 8.8.8.8:10809", {"listen_address", "not a loopback address"}},
      // bench, on the existing pool
      {"bench --pool POOL --arc-max 1K", {"arc_max_bytes 1024", "below 16 MiB"}},
      {"bench --pool POOL --arc-pretouch 65G", {"arc_pretouch_bytes", "exceeds 64 GiB"}},
      {"bench --pool POOL --arc-pretouch abc", {"--arc-pretouch", "'abc'"}},
      {"serve POOL --socket DIR/s --arc-pretouch 65G", {"arc_pretouch_bytes", "exceeds 64 GiB"}},
      {"serve POOL --socket DIR/s --arc-grow-ahead 2G", {"arc_grow_ahead_bytes", "exceeds 1 GiB"}},
      {"bench --pool POOL --arc-grow-ahead 2G", {"arc_grow_ahead_bytes", "exceeds 1 GiB"}},
      {"bench --pool POOL --output-format xml", {"output format 'xml'", "normal, json or json+"}},
      {"bench --pool POOL DIR/nosuch.fio", {"cannot open job file", "nosuch.fio"}},
      // sim
      {"sim DIR/t.lis --cache-size 0", {"cache size", "at least one page"}},
      {"sim DIR/t.lis --cache-size 10 --policy foo", {"policy 'foo'", "arc, lru, 2q"}},
      {"sim DIR/t.lis --cache-size 10 --format xyz", {"trace format 'xyz'", "auto, lis, lirs or csv"}},
      {"sim DIR/nosuch.lis --cache-size 10", {"nosuch.lis", "no such file"}},
  };
  for (const CliCase& c : cases) {
    const std::string args = Expand(c.args, pool_, dir_);
    hash_ = HashFile(pool_);  // each case against the state before it
    CliRun r = RunCli(args);
    EXPECT_NE(r.exit_code, 0) << args << ": accepted";
    EXPECT_NE(r.exit_code, 124) << args << ": did not finish in 60 s";
    for (const std::string& p : c.pieces) {
      const std::string piece = Expand(p, pool_, dir_);
      EXPECT_NE(r.output.find(piece), std::string::npos)
          << args << ": the message does not say '" << piece << "':\n" << r.output;
    }
    ExpectDiskUnchanged(args);
  }
}

// A refused `vol create` (name taken), `vol destroy` (no such volume),
// `serve --export nosuch`, or `bench --pool` with a bad --recordsize,
// --max-runtime or --max-size leaves the pool file as it was. A writable
// open rewrites the pool at Close (the intent log's new guid, a last txg),
// so the CLI checks names on a read-only open and parses every option
// before it opens the pool writable (cli/cmd_pool.cc, cmd_serve.cc,
// cmd_bench.cc); this test failed when they did not.
TEST_F(BadOptionsTest, RefusedVolumeCommandsLeaveThePoolUnchanged) {
  const std::vector<CliCase> cases = {
      {"vol create POOL v --size 1M", {"vol create v", "'v' already exists"}},
      {"vol destroy POOL nosuch", {"vol destroy nosuch", "no volume named 'nosuch'"}},
      {"serve POOL --socket DIR/s --export nosuch", {"--export nosuch", "no volume named 'nosuch'"}},
      {"bench --pool POOL --recordsize 3K", {"--recordsize 3K", "record size 3072", "power of two"}},
      {"bench --pool POOL --max-runtime abc", {"--max-runtime", "abc"}},
      {"bench --pool POOL --max-size abc", {"--max-size", "abc"}},
  };
  for (const CliCase& c : cases) {
    hash_ = HashFile(pool_);
    const std::string a = Expand(c.args, pool_, dir_);
    CliRun r = RunCli(a);
    EXPECT_NE(r.exit_code, 0) << a;
    for (const std::string& p : c.pieces) {
      EXPECT_NE(r.output.find(p), std::string::npos)
          << a << ": the message does not say '" << p << "':\n" << r.output;
    }
    ExpectDiskUnchanged(a);
  }
}

}  // namespace
}  // namespace arcstore
