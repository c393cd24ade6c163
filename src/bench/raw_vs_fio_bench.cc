// The bench's raw-file target against real fio on the same file, same job:
// 4 KiB random writes, QD1, direct=1 (fio: ioengine=psync), time based.
// The file is laid out first, then fio runs, then ours. Reports both IOPS so that a difference in how the two measure shows up.
// Set ARCSTORE_BENCH_DIR to put the file on the disk to measure (default:
// the system temp folder) and ARCSTORE_BENCH_SECONDS for the runtime
// (default 2).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/file_volume.h"
#include "bench/job_file.h"
#include "bench/runner.h"

namespace arcstore::bench {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
  return v != nullptr ? v : fallback;
}

void BM_RawFileVsFio(benchmark::State& state) {
  const std::string bs = state.range(0) == 4 ? "4k" : "1m";
  const std::string rw = state.range(0) == 4 ? "randwrite" : "write";
  const std::string iodepth = state.range(0) == 4 ? "1" : "8";
  fs::path dir = fs::path(Env("ARCSTORE_BENCH_DIR", fs::temp_directory_path().string())) /
                 ("arcstore-rawbench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string seconds = Env("ARCSTORE_BENCH_SECONDS", "2");
  const std::vector<std::string> job = {"--name=raw", "--filename=raw.bin", "--size=1g", "--bs=" + bs,
                                        "--rw=" + rw, "--direct=1", "--time_based",
                                        "--runtime=" + seconds, "--iodepth=" + iodepth};
  double ours_iops = 0, fio_iops = 0;
  for (auto _ : state) {
    // Lay the file out once (written, no holes), then fio, then ours.
    auto set = ParseCommandLineJobs(job, JobEnv::FromSystem());
    FileVolumeProvider provider(dir.string());
    if (!provider.OpenVolume({"raw.bin", "", 1ull << 30, false}).ok()) {
      state.SkipWithError("cannot lay out the file");
      break;
    }
    std::string out = (dir / "fio.json").string();
    std::string cmd = "/usr/bin/fio --output-format=json --output=" + out + " --ioengine=" +
                      (iodepth == "1" ? "psync" : "io_uring");
    for (const auto& a : job) cmd += " " + (a == "--filename=raw.bin" ? "--filename=" + (dir / "raw.bin").string() : a);
    if (std::system((cmd + " >/dev/null 2>&1").c_str()) != 0) {
      state.SkipWithError("fio failed");
      break;
    }
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    auto j = nlohmann::json::parse(text.substr(text.find('{')), nullptr, false);
    if (!j.is_discarded()) fio_iops = j["jobs"][0]["write"]["iops"].get<double>();
    RunnerOptions o;
    o.provider = &provider;
    auto r = RunJobs(*set, o);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    ours_iops = Iops(r->jobs[0].dirs[kWrite]);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  state.counters["ours_iops"] = ours_iops;
  state.counters["fio_iops"] = fio_iops;
  state.counters["ours_MiBps"] = ours_iops * (state.range(0) == 4 ? 4.0 / 1024 : 1.0);
  state.counters["fio_MiBps"] = fio_iops * (state.range(0) == 4 ? 4.0 / 1024 : 1.0);
}
// 4: 4 KiB random writes QD1 (issue 5's baseline); 1024: 1 MiB sequential
// QD8 (ours is synchronous per I/O on a file; fio uses io_uring).
BENCHMARK(BM_RawFileVsFio)->Arg(4)->Arg(1024)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace arcstore::bench
