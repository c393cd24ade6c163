// Table-driven tests of fio's value syntaxes and of job files and
// command-line jobs, valid and invalid.
#include <gtest/gtest.h>

#include <map>

#include "bench/job_file.h"

namespace arcstore::bench {
namespace {

JobEnv TestEnv(std::map<std::string, std::string> vars = {},
               std::map<std::string, std::string> files = {}) {
  JobEnv env;
  env.getenv = [vars](const std::string& n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  env.ncpus = 6;
  env.mb_memory = 2048;
  env.pagesize = 4096;
  env.read_file = [files](const std::string& p) -> Result<std::string> {
    auto it = files.find(p);
    if (it == files.end()) return Status::NotFound("no file " + p);
    return it->second;
  };
  return env;
}

struct SizeCase {
  const char* text;
  uint32_t kb_base;
  uint64_t bytes;
};

TEST(FioValues, SizesFollowFioIncludingKbBase) {
  // fio 3.33 checked by hand: with kb_base=1024 "10KiB" is 10000 bytes.
  const SizeCase cases[] = {
      {"4096", 1024, 4096},        {"4k", 1024, 4096},          {"4K", 1024, 4096},
      {"4kb", 1024, 4096},         {"4KB", 1024, 4096},         {"10KiB", 1024, 10000},
      {"10kib", 1024, 10000},      {"1m", 1024, 1048576},       {"1MiB", 1024, 1000000},
      {"1g", 1024, 1073741824},    {"2T", 1024, 2199023255552}, {"1p", 1024, 1125899906842624},
      {"10k", 1000, 10000},        {"10KiB", 1000, 10240},      {"10kb", 1000, 10000},
      {"1MiB", 1000, 1048576},     {"0x2000", 1024, 8192},      {"512b", 1024, 512},
      {" 8k ", 1024, 8192},
  };
  for (const auto& c : cases) {
    auto r = ParseFioSize(c.text, c.kb_base);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(*r, c.bytes) << c.text << " kb_base=" << c.kb_base;
  }
}

TEST(FioValues, BadSizesAreErrors) {
  for (const char* t : {"", "k", "1.5k", "4x", "-4k", "99999999999999999999", "10000000p", "4 k b"}) {
    EXPECT_FALSE(ParseFioSize(t, 1024).ok()) << t;
  }
  EXPECT_FALSE(ParseFioSize("4k", 512).ok());
  auto pct = ParseFioSizeOrPercent("50%", 1024);
  ASSERT_TRUE(pct.ok());
  EXPECT_TRUE(pct->percent);
  EXPECT_EQ(pct->Resolve(1000), 500u);
  EXPECT_FALSE(ParseFioSizeOrPercent("101%", 1024).ok());
  EXPECT_FALSE(ParseFioSize("50%", 1024).ok());
}

TEST(FioValues, Times) {
  const std::pair<const char*, uint64_t> secs[] = {
      {"60", 60'000'000'000ull}, {"500ms", 500'000'000ull}, {"10us", 10'000ull},
      {"2m", 120'000'000'000ull}, {"1h", 3'600'000'000'000ull}, {"3s", 3'000'000'000ull},
      {"1d", 86'400'000'000'000ull}, {"7ns", 7}};
  for (const auto& [t, ns] : secs) {
    auto r = ParseFioTimeNs(t, TimeUnit::kSec);
    ASSERT_TRUE(r.ok()) << t;
    EXPECT_EQ(*r, ns) << t;
  }
  EXPECT_EQ(*ParseFioTimeNs("250", TimeUnit::kUs), 250'000u);
  EXPECT_FALSE(ParseFioTimeNs("5 fortnights", TimeUnit::kSec).ok());
  EXPECT_FALSE(ParseFioTimeNs("", TimeUnit::kSec).ok());
}

TEST(FioValues, BsSplitAndRange) {
  auto s = ParseBsSplitList("4k/10:64k/50:32k/40", 1024);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[1].bs_bytes, 65536u);
  EXPECT_EQ((*s)[1].percent, 50u);
  auto blank = ParseBsSplitList("4k/50:8k:16k", 1024);
  ASSERT_TRUE(blank.ok());
  EXPECT_EQ((*blank)[1].percent + (*blank)[2].percent, 50u);
  EXPECT_FALSE(ParseBsSplitList("4k/60:8k/60", 1024).ok());
  EXPECT_FALSE(ParseBsSplitList("4k/10:8k/10", 1024).ok());
  EXPECT_FALSE(ParseBsSplitList("4k/10::8k/90", 1024).ok());
  auto r = ParseBsRangeOne("1k-16k", 1024);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->min_bytes, 1024u);
  EXPECT_EQ(r->max_bytes, 16384u);
  EXPECT_FALSE(ParseBsRangeOne("16k-1k", 1024).ok());
  EXPECT_FALSE(ParseBsRangeOne("16k", 1024).ok());
  auto p = ParsePercentileList("50:99:99.9");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->size(), 3u);
  EXPECT_FALSE(ParsePercentileList("50:101").ok());
}

TEST(JobFile, SeedJobParses) {
  const char* text =
      "[global]\nfilename=/FILE/PATH/raw.bin\ntime_based\nruntime=60\nnumjobs=1\ndirect=1\n"
      "stonewall=1\n\n[randwrite-4K]\nbs=4K\nrw=randwrite\n";
  auto set = ParseJobText(text, "seed.fio", ".", TestEnv());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->jobs.size(), 1u);
  const Job& j = set->jobs[0];
  EXPECT_EQ(j.name, "randwrite-4K");
  EXPECT_EQ(j.rw, RwPattern::kRandWrite);
  EXPECT_EQ(j.bs_bytes[kWrite], 4096u);
  EXPECT_TRUE(j.time_based);
  EXPECT_EQ(j.runtime_ns, 60 * 1'000'000'000ull);
  EXPECT_TRUE(j.direct);
  EXPECT_TRUE(j.stonewall);
  EXPECT_EQ(j.filename, "/FILE/PATH/raw.bin");
  EXPECT_EQ(set->global_written.size(), 6u);
  ASSERT_EQ(j.written.size(), 2u);
  EXPECT_EQ(j.written[0].first, "bs");
  EXPECT_EQ(j.written[0].second, "4K");
}

TEST(JobFile, ManyOptionsWithFioSemantics) {
  const char* text =
      "; comment\n# another\n[global]\nkb_base=1000\nbs=4k,8k\nrw=randrw:8\nrwmixwrite=30\n"
      "size=${SIZE}\nnumjobs=$ncpus\noffset=10%\n"
      "[a]\nbssplit=4k/50:8k/50,16k/100\nrandom_distribution=zipf:1.2\nverify=0\n"
      "rate=1m,2m\nrate_iops=100\nthinktime=50\nramp_time=2s\nstartdelay=1\nloops=3\n"
      "percentile_list=50:99\nfsync=4\nsync=1\nnorandommap\nrandseed=42\nrandrepeat=0\n"
      "buffer_compress_percentage=30\nrefill_buffers\nfallocate=none\noverwrite=1\n"
      "invalidate=0\ndirectory=/tmp\nioengine=libaio\niodepth=32\nthread\ngroup_reporting\n"
      "description=a job  # trailing comment\n"
      "[b]\nrw=write:64k\nbsrange=1k-4k,,\nrandom_distribution=pareto:0.9\nend_fsync=1\n"
      "new_group\nverify=crc32c\nbs=4k\ndo_verify=0\nverify_fatal=1\nfdatasync=2\nzero_buffers=1\n"
      "[c]\nrw=randtrim\nrandom_distribution=normal:20:0.25\nfilesize=1m\n"
      "filename_format=f.$jobnum\n";
  auto set = ParseJobText(text, "x.fio", ".", TestEnv({{"SIZE", "64m"}}));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->jobs.size(), 3u);
  const Job& a = set->jobs[0];
  EXPECT_EQ(a.kb_base, 1000u);
  EXPECT_EQ(a.bs_bytes[kRead], 4000u);
  EXPECT_EQ(a.bs_bytes[kWrite], 8000u);
  EXPECT_EQ(a.bs_bytes[kTrim], 8000u);
  EXPECT_EQ(a.rw, RwPattern::kRandRw);
  EXPECT_EQ(a.rw_random_run, 8u);
  EXPECT_EQ(a.rwmixread, 70u);
  EXPECT_EQ(a.size.bytes, 64'000'000u);
  EXPECT_EQ(a.numjobs, 6u);
  EXPECT_TRUE(a.offset.percent);
  EXPECT_EQ(a.bssplit[kRead].size(), 2u);
  EXPECT_EQ(a.bssplit[kWrite][0].bs_bytes, 16000u);
  EXPECT_EQ(a.distribution, Distribution::kZipf);
  EXPECT_DOUBLE_EQ(a.distribution_param, 1.2);
  EXPECT_EQ(a.rate_bytes_per_sec[kRead], 1'000'000u);
  EXPECT_EQ(a.rate_bytes_per_sec[kWrite], 2'000'000u);
  EXPECT_EQ(a.rate_iops[kTrim], 100u);
  EXPECT_EQ(a.thinktime_ns, 50'000u);
  EXPECT_EQ(a.ramp_time_ns, 2'000'000'000u);
  EXPECT_EQ(a.startdelay_ns, 1'000'000'000u);
  EXPECT_EQ(a.loops, 3u);
  EXPECT_EQ(a.percentile_list.size(), 2u);
  EXPECT_EQ(a.fsync_every, 4u);
  EXPECT_TRUE(a.sync);
  EXPECT_TRUE(a.norandommap);
  EXPECT_EQ(a.randseed, 42u);
  EXPECT_FALSE(a.randrepeat);
  EXPECT_EQ(a.buffer_compress_percentage, 30u);
  EXPECT_TRUE(a.refill_buffers);
  EXPECT_EQ(a.iodepth, 32u);
  EXPECT_EQ(a.ioengine, "libaio");
  EXPECT_TRUE(a.group_reporting);
  EXPECT_EQ(a.description, "a job");
  const Job& b = set->jobs[1];
  EXPECT_EQ(b.rw, RwPattern::kWrite);
  EXPECT_EQ(b.rw_seq_skip_bytes, 64'000u);
  EXPECT_EQ(b.bsrange[kRead].max_bytes, 4000u);
  EXPECT_EQ(b.verify, VerifyKind::kCrc32c);
  EXPECT_FALSE(b.do_verify);
  EXPECT_TRUE(b.new_group);
  EXPECT_EQ(b.fdatasync_every, 2u);
  const Job& c = set->jobs[2];
  EXPECT_EQ(c.rw, RwPattern::kRandTrim);
  EXPECT_EQ(c.distribution, Distribution::kNormal);
  EXPECT_DOUBLE_EQ(c.distribution_center, 0.25);
  EXPECT_EQ(c.filesize.bytes, 1'000'000u);
  EXPECT_EQ(c.filename_format, "f.$jobnum");
}

TEST(JobFile, IncludeAndKeywords) {
  auto env = TestEnv({}, {{"/jobs/common.fio", "bs=$pagesize\nsize=$mb_memory\n"},
                          {"/jobs/sub/more.fio", "[two]\nrw=read\n"}});
  const char* text = "[global]\ninclude common.fio\n[one]\nrw=write\ninclude sub/more.fio\n";
  auto set = ParseJobText(text, "/jobs/main.fio", "/jobs", env);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->jobs.size(), 2u);
  EXPECT_EQ(set->jobs[0].bs_bytes[kWrite], 4096u);
  EXPECT_EQ(set->jobs[0].size.bytes, 2048u);
  EXPECT_EQ(set->jobs[1].name, "two");
  EXPECT_EQ(set->jobs[1].rw, RwPattern::kRead);
}

struct BadCase {
  const char* text;
  const char* expect;  // a substring of the error
};

TEST(JobFile, InvalidFilesNameFileLineAndOption) {
  const BadCase cases[] = {
      {"[a]\nrw=write\nbogus=1\n", "bad.fio:3: option 'bogus' is not supported"},
      {"[a]\nrw=sideways\n", "bad.fio:2"},
      {"[a]\nbs=4q\n", "bad.fio:2: option 'bs'"},
      {"bs=4k\n[a]\n", "bad.fio:1: option 'bs=4k' outside of any [section]"},
      {"[a\nbs=4k\n", "bad.fio:1: section header without ']'"},
      {"[]\n", "bad.fio:1: a section without a name"},
      {"[a]\nsize=${NOPE}\n", "bad.fio:2: environment variable 'NOPE' is not set"},
      {"[a]\nsize=${NOPE\n", "bad.fio:2: '${' without '}'"},
      {"[a]\ninclude missing.fio\n", "bad.fio:2: no file"},
      {"[a]\ntime_based\n", "option 'time_based' needs a runtime"},
      {"[a]\nverify=sha256\nrw=write\n", "bad.fio:2: option 'verify'"},
      {"[a]\nrw=read\nverify=md5\n", "option 'verify' needs a job that writes"},
      {"[a]\nrandom_distribution=zipf\n", "bad.fio:2"},
      {"[a]\niodepth=0\n", "bad.fio:2: option 'iodepth'"},
      {"[a]\nrwmixread=101\n", "bad.fio:2"},
      {"[a]\nnumjobs\n", "bad.fio:2: option 'numjobs'"},
      {"[global]\nbs=4k\n", "no jobs defined"},
      {"[a]\nioengine=libaio\nkb_base=999\n", "bad.fio:3: option 'kb_base'"},
      {"[a]\nzero_buffers=1\nbuffer_compress_percentage=50\n", "zero_buffers"},
      {"[a]\nrw=randrw\nbs=4k,8k\nverify=md5\n", "same fixed block size"},
  };
  for (const auto& c : cases) {
    auto r = ParseJobText(c.text, "bad.fio", ".", TestEnv());
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << "got: " << r.status().message() << "\nwanted: " << c.expect;
  }
}

TEST(JobFile, IncludeLoopIsBounded) {
  auto env = TestEnv({}, {{"./self.fio", "include self.fio\n"}});
  auto r = ParseJobText("include self.fio\n[a]\n", "self.fio", ".", env);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nested deeper"), std::string::npos);
}

TEST(JobFile, CommandLineJobs) {
  auto set = ParseCommandLineJobs({"--bs=8k", "--name=x", "--rw=randwrite", "--bs=4k",
                                   "--time_based", "--runtime=5", "--name=y", "--rw=read"},
                                  TestEnv());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->jobs.size(), 2u);
  EXPECT_EQ(set->jobs[0].name, "x");
  EXPECT_EQ(set->jobs[0].bs_bytes[kWrite], 4096u);
  EXPECT_TRUE(set->jobs[0].time_based);
  EXPECT_EQ(set->jobs[1].name, "y");
  EXPECT_EQ(set->jobs[1].bs_bytes[kRead], 8192u);  // the global --bs
  EXPECT_FALSE(set->jobs[1].time_based);
  EXPECT_EQ(set->global_written.size(), 1u);

  auto bad = ParseCommandLineJobs({"--name=x", "--frobnicate=1"}, TestEnv());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("command line argument 2: option 'frobnicate'"),
            std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(ParseCommandLineJobs({"name=x"}, TestEnv()).ok());
  EXPECT_FALSE(ParseCommandLineJobs({"--bs=4k"}, TestEnv()).ok());
}

}  // namespace
}  // namespace arcstore::bench
