// The table of supported fio options (issue 8's list) and Job's checks.
//
// Each option is one row: its names (fio's aliases included) and a setter
// that parses the value with fio's rules (fio_values.h). Anything else is
// NotSupported: a benchmark that silently ignored "rw=randwrite" would
// measure the wrong thing.

#include <algorithm>
#include <functional>

#include "bench/job.h"

namespace arcstore::bench {
namespace {

using Setter = std::function<Status(Job*, std::string_view value, bool has_value)>;

struct OptionRow {
  std::vector<std::string_view> names;
  Setter set;
};

Status NeedsValue(std::string_view value, bool has_value, std::string_view name) {
  if (!has_value || TrimSpace(value).empty()) {
    return Status::InvalidArgument("option '" + std::string(name) + "' needs a value");
  }
  return Status::Ok();
}

Setter Bool(bool Job::*field) {
  return [field](Job* j, std::string_view v, bool) -> Status {
    ARC_ASSIGN_OR_RETURN(j->*field, ParseFioBool(v));
    return Status::Ok();
  };
}

Setter Uint32(uint32_t Job::*field, uint32_t min, uint32_t max) {
  return [=](Job* j, std::string_view v, bool has) -> Status {
    ARC_RETURN_IF_ERROR(NeedsValue(v, has, "integer option"));
    ARC_ASSIGN_OR_RETURN(int64_t n, ParseFioInt(v));
    if (n < min || n > max) {
      return Status::InvalidArgument("value " + std::string(v) + " outside " +
                                     std::to_string(min) + ".." + std::to_string(max));
    }
    j->*field = static_cast<uint32_t>(n);
    return Status::Ok();
  };
}

Setter Text(std::string Job::*field) {
  return [field](Job* j, std::string_view v, bool) -> Status {
    j->*field = std::string(TrimSpace(v));
    return Status::Ok();
  };
}

Setter Time(uint64_t Job::*field, TimeUnit unit) {
  return [=](Job* j, std::string_view v, bool has) -> Status {
    ARC_RETURN_IF_ERROR(NeedsValue(v, has, "time option"));
    ARC_ASSIGN_OR_RETURN(j->*field, ParseFioTimeNs(v, unit));
    return Status::Ok();
  };
}

Setter SizeOrPct(SizeValue Job::*field) {
  return [=](Job* j, std::string_view v, bool has) -> Status {
    ARC_RETURN_IF_ERROR(NeedsValue(v, has, "size option"));
    ARC_ASSIGN_OR_RETURN(j->*field, ParseFioSizeOrPercent(v, j->kb_base));
    return Status::Ok();
  };
}

Setter Count(uint64_t Job::*field) {
  return [=](Job* j, std::string_view v, bool has) -> Status {
    ARC_RETURN_IF_ERROR(NeedsValue(v, has, "count option"));
    ARC_ASSIGN_OR_RETURN(int64_t n, ParseFioInt(v));
    if (n < 0) return Status::InvalidArgument("negative value " + std::string(v));
    j->*field = static_cast<uint64_t>(n);
    return Status::Ok();
  };
}

Setter LogPrefix(std::optional<std::string> Job::*field) {
  return [field](Job* j, std::string_view v, bool) -> Status {
    std::string prefix(TrimSpace(v));
    if (prefix.size() > 4000) return Status::InvalidArgument("log file prefix longer than 4000 bytes");
    if (!prefix.empty() && prefix.back() == '/') {
      return Status::InvalidArgument("'" + prefix + "' is a folder; the prefix needs a file name part");
    }
    j->*field = prefix;
    return Status::Ok();
  };
}

Status SetRw(Job* j, std::string_view v, bool has) {
  ARC_RETURN_IF_ERROR(NeedsValue(v, has, "rw"));
  std::string text = Lowercase(TrimSpace(v));
  std::string mod;
  if (size_t colon = text.find(':'); colon != std::string::npos) {
    mod = text.substr(colon + 1);
    text.resize(colon);
  }
  static const std::pair<std::string_view, RwPattern> kPatterns[] = {
      {"read", RwPattern::kRead},          {"write", RwPattern::kWrite},
      {"randread", RwPattern::kRandRead},  {"randwrite", RwPattern::kRandWrite},
      {"rw", RwPattern::kReadWrite},       {"readwrite", RwPattern::kReadWrite},
      {"randrw", RwPattern::kRandRw},      {"trim", RwPattern::kTrim},
      {"randtrim", RwPattern::kRandTrim},
  };
  auto it = std::find_if(std::begin(kPatterns), std::end(kPatterns),
                         [&](const auto& p) { return p.first == text; });
  if (it == std::end(kPatterns)) {
    return Status::NotSupported("rw=" + std::string(v) + " is not supported");
  }
  j->rw = it->second;
  j->rw_text = text;
  j->rw_random_run = 1;
  j->rw_seq_skip_bytes = 0;
  if (!mod.empty()) {
    if (j->IsRandom()) {
      ARC_ASSIGN_OR_RETURN(int64_t n, ParseFioInt(mod));
      if (n < 1 || n > (1 << 20)) return Status::InvalidArgument("rw modifier out of range: " + mod);
      j->rw_random_run = static_cast<uint64_t>(n);
    } else {
      ARC_ASSIGN_OR_RETURN(j->rw_seq_skip_bytes, ParseFioSize(mod, j->kb_base));
    }
  }
  return Status::Ok();
}

Status SetBs(Job* j, std::string_view v, bool has) {
  ARC_RETURN_IF_ERROR(NeedsValue(v, has, "bs"));
  auto fields = SplitPerDirection(v);
  for (int d = 0; d < kNumDirs; d++) {
    if (fields[d].empty()) continue;
    ARC_ASSIGN_OR_RETURN(uint64_t bs, ParseFioSize(fields[d], j->kb_base));
    if (bs == 0) return Status::InvalidArgument("bs must not be 0");
    j->bs_bytes[d] = bs;
  }
  return Status::Ok();
}

Status SetBsRange(Job* j, std::string_view v, bool has) {
  ARC_RETURN_IF_ERROR(NeedsValue(v, has, "bsrange"));
  auto fields = SplitPerDirection(v);
  for (int d = 0; d < kNumDirs; d++) {
    if (fields[d].empty()) continue;
    ARC_ASSIGN_OR_RETURN(j->bsrange[d], ParseBsRangeOne(fields[d], j->kb_base));
  }
  return Status::Ok();
}

Status SetBsSplit(Job* j, std::string_view v, bool has) {
  ARC_RETURN_IF_ERROR(NeedsValue(v, has, "bssplit"));
  auto fields = SplitPerDirection(v);
  for (int d = 0; d < kNumDirs; d++) {
    if (fields[d].empty()) continue;
    ARC_ASSIGN_OR_RETURN(j->bssplit[d], ParseBsSplitList(fields[d], j->kb_base));
  }
  return Status::Ok();
}

Status SetDistribution(Job* j, std::string_view v, bool has) {
  ARC_RETURN_IF_ERROR(NeedsValue(v, has, "random_distribution"));
  std::string text = Lowercase(TrimSpace(v));
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? colon : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts[0] == "random") {
    if (parts.size() != 1) return Status::InvalidArgument("random takes no parameter");
    j->distribution = Distribution::kRandom;
    return Status::Ok();
  }
  if (parts.size() < 2 || parts.size() > 3) {
    return Status::InvalidArgument("expected " + parts[0] + ":PARAM[:CENTER]");
  }
  ARC_ASSIGN_OR_RETURN(double param, ParseFioDouble(parts[1]));
  if (parts[0] == "zipf") {
    if (param <= 0 || param == 1.0) return Status::InvalidArgument("zipf theta must be > 0, != 1");
    j->distribution = Distribution::kZipf;
  } else if (parts[0] == "pareto") {
    if (param <= 0 || param >= 1) return Status::InvalidArgument("pareto h must be in (0, 1)");
    j->distribution = Distribution::kPareto;
  } else if (parts[0] == "normal" || parts[0] == "gauss") {
    if (param <= 0 || param > 100) return Status::InvalidArgument("normal dev % must be in (0, 100]");
    j->distribution = Distribution::kNormal;
  } else {
    return Status::NotSupported("random_distribution=" + parts[0] + " is not supported");
  }
  j->distribution_param = param;
  j->distribution_center = 0.5;
  if (parts.size() == 3) {
    ARC_ASSIGN_OR_RETURN(double c, ParseFioDouble(parts[2]));
    if (c < 0 || c > 1) return Status::InvalidArgument("center must be in [0, 1]");
    j->distribution_center = c;
  }
  return Status::Ok();
}

Status SetVerify(Job* j, std::string_view v, bool has) {
  std::string t = Lowercase(TrimSpace(v));
  if (t == "0" || t == "null" || t == "none") {
    j->verify = VerifyKind::kNone;
  } else if (t == "crc32c" || t == "crc32c-intel") {
    j->verify = VerifyKind::kCrc32c;
  } else if (t == "md5") {
    j->verify = VerifyKind::kMd5;
  } else {
    return Status::NotSupported("verify=" + std::string(v) + " is not supported (crc32c, md5)");
  }
  return Status::Ok();
}

Status SetSync(Job* j, std::string_view v, bool has) {
  std::string t = Lowercase(TrimSpace(v));
  if (t == "sync" || t == "dsync") {
    j->sync = true;
    return Status::Ok();
  }
  if (t == "none") {
    j->sync = false;
    return Status::Ok();
  }
  ARC_ASSIGN_OR_RETURN(j->sync, ParseFioBool(v));
  return Status::Ok();
}

Status SetRate(std::array<uint64_t, kNumDirs>* out, const Job& j, std::string_view v, bool has,
               bool iops) {
  ARC_RETURN_IF_ERROR(NeedsValue(v, has, iops ? "rate_iops" : "rate"));
  auto fields = SplitPerDirection(v);
  for (int d = 0; d < kNumDirs; d++) {
    if (fields[d].empty()) continue;
    if (iops) {
      ARC_ASSIGN_OR_RETURN(int64_t n, ParseFioInt(fields[d]));
      if (n < 0) return Status::InvalidArgument("negative rate_iops");
      (*out)[d] = static_cast<uint64_t>(n);
    } else {
      ARC_ASSIGN_OR_RETURN((*out)[d], ParseFioSize(fields[d], j.kb_base));
    }
  }
  return Status::Ok();
}

Status SetRwmix(Job* j, std::string_view v, bool has, bool read) {
  ARC_RETURN_IF_ERROR(NeedsValue(v, has, "rwmix"));
  ARC_ASSIGN_OR_RETURN(int64_t n, ParseFioInt(v));
  if (n < 0 || n > 100) return Status::InvalidArgument("rwmix must be within 0..100");
  j->rwmixread = static_cast<uint32_t>(read ? n : 100 - n);
  return Status::Ok();
}

Status SetFallocate(Job* j, std::string_view v, bool) {
  std::string t = Lowercase(TrimSpace(v));
  static const char* kOk[] = {"none", "native", "posix", "keep", "truncate", "0", "1"};
  for (const char* k : kOk) {
    if (t == k) {
      j->fallocate = t;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("fallocate=" + std::string(v) + " is not a fallocate mode");
}

const std::vector<OptionRow>& Table() {
  static const std::vector<OptionRow> kTable = {
      {{"name"}, Text(&Job::name)},
      {{"description"}, Text(&Job::description)},
      {{"rw", "readwrite"}, SetRw},
      {{"bs", "blocksize"}, SetBs},
      {{"bsrange", "blocksize_range"}, SetBsRange},
      {{"bssplit"}, SetBsSplit},
      {{"size"}, SizeOrPct(&Job::size)},
      {{"filesize"}, SizeOrPct(&Job::filesize)},
      {{"offset"}, SizeOrPct(&Job::offset)},
      {{"filename"}, Text(&Job::filename)},
      {{"directory"}, Text(&Job::directory)},
      {{"filename_format"}, Text(&Job::filename_format)},
      {{"ioengine"}, Text(&Job::ioengine)},
      {{"iodepth"}, Uint32(&Job::iodepth, 1, 4096)},
      {{"numjobs"}, Uint32(&Job::numjobs, 1, 1024)},
      {{"thread"}, Bool(&Job::thread)},
      {{"direct"}, Bool(&Job::direct)},
      {{"buffered"},
       [](Job* j, std::string_view v, bool) -> Status {
         ARC_ASSIGN_OR_RETURN(bool b, ParseFioBool(v));
         j->direct = !b;
         return Status::Ok();
       }},
      {{"time_based"}, Bool(&Job::time_based)},
      {{"runtime", "timeout"}, Time(&Job::runtime_ns, TimeUnit::kSec)},
      {{"ramp_time"}, Time(&Job::ramp_time_ns, TimeUnit::kSec)},
      {{"startdelay"}, Time(&Job::startdelay_ns, TimeUnit::kSec)},
      {{"stonewall", "wait_for_previous"}, Bool(&Job::stonewall)},
      {{"new_group"}, Bool(&Job::new_group)},
      {{"group_reporting"}, Bool(&Job::group_reporting)},
      {{"rwmixread"}, [](Job* j, std::string_view v, bool h) { return SetRwmix(j, v, h, true); }},
      {{"rwmixwrite"}, [](Job* j, std::string_view v, bool h) { return SetRwmix(j, v, h, false); }},
      {{"randrepeat"}, Bool(&Job::randrepeat)},
      {{"randseed"},
       [](Job* j, std::string_view v, bool h) -> Status {
         ARC_RETURN_IF_ERROR(NeedsValue(v, h, "randseed"));
         ARC_ASSIGN_OR_RETURN(int64_t n, ParseFioInt(v));
         j->randseed = static_cast<uint64_t>(n);
         j->randseed_set = true;
         return Status::Ok();
       }},
      {{"norandommap"}, Bool(&Job::norandommap)},
      {{"random_distribution"}, SetDistribution},
      {{"fsync"}, Count(&Job::fsync_every)},
      {{"fdatasync"}, Count(&Job::fdatasync_every)},
      {{"end_fsync"}, Bool(&Job::end_fsync)},
      {{"sync"}, SetSync},
      {{"verify"}, SetVerify},
      {{"do_verify"}, Bool(&Job::do_verify)},
      {{"verify_fatal"}, Bool(&Job::verify_fatal)},
      {{"fallocate"}, SetFallocate},
      {{"overwrite"}, Bool(&Job::overwrite)},
      {{"invalidate"}, Bool(&Job::invalidate)},
      {{"refill_buffers"}, Bool(&Job::refill_buffers)},
      {{"zero_buffers"}, Bool(&Job::zero_buffers)},
      {{"buffer_compress_percentage"}, Uint32(&Job::buffer_compress_percentage, 0, 100)},
      {{"thinktime"}, Time(&Job::thinktime_ns, TimeUnit::kUs)},
      {{"rate"},
       [](Job* j, std::string_view v, bool h) {
         return SetRate(&j->rate_bytes_per_sec, *j, v, h, false);
       }},
      {{"rate_iops"},
       [](Job* j, std::string_view v, bool h) { return SetRate(&j->rate_iops, *j, v, h, true); }},
      {{"loops"}, Count(&Job::loops)},
      {{"percentile_list"},
       [](Job* j, std::string_view v, bool h) -> Status {
         ARC_RETURN_IF_ERROR(NeedsValue(v, h, "percentile_list"));
         ARC_ASSIGN_OR_RETURN(j->percentile_list, ParsePercentileList(v));
         return Status::Ok();
       }},
      {{"kb_base"}, Uint32(&Job::kb_base, 1000, 1024)},
      {{"write_bw_log"}, LogPrefix(&Job::bw_log_prefix)},
      {{"write_iops_log"}, LogPrefix(&Job::iops_log_prefix)},
      {{"write_lat_log"}, LogPrefix(&Job::lat_log_prefix)},
      {{"log_avg_msec"},
       [](Job* j, std::string_view v, bool h) -> Status {
         ARC_RETURN_IF_ERROR(NeedsValue(v, h, "log_avg_msec"));
         ARC_ASSIGN_OR_RETURN(int64_t n, ParseFioInt(v));
         if (n < 0 || n > kMaxLogAvgMs) {
           return Status::InvalidArgument("value " + std::string(v) + " outside 0.." +
                                          std::to_string(kMaxLogAvgMs) + " (milliseconds)");
         }
         j->log_avg_ms = static_cast<uint64_t>(n);
         return Status::Ok();
       }},
      {{"log_max_value"}, Bool(&Job::log_max_value)},
      {{"log_offset"}, Bool(&Job::log_offset)},
      {{"per_job_logs"}, Bool(&Job::per_job_logs)},
  };
  return kTable;
}

}  // namespace

Status ApplyJobOption(Job* job, std::string_view name, std::string_view value, bool has_value) {
  std::string key = Lowercase(TrimSpace(name));
  for (const OptionRow& row : Table()) {
    if (std::find(row.names.begin(), row.names.end(), key) == row.names.end()) continue;
    Status s = row.set(job, value, has_value);
    if (!s.ok()) return s.WithContext("option '" + key + "'");
    if (key == "kb_base" && job->kb_base != 1000 && job->kb_base != 1024) {
      return Status::InvalidArgument("option 'kb_base': must be 1000 or 1024");
    }
    return Status::Ok();
  }
  return Status::NotSupported("option '" + key + "' is not supported by arcstore bench");
}

bool Job::IsRandom() const {
  return rw == RwPattern::kRandRead || rw == RwPattern::kRandWrite || rw == RwPattern::kRandRw ||
         rw == RwPattern::kRandTrim;
}
bool Job::Reads() const {
  return rw == RwPattern::kRead || rw == RwPattern::kRandRead || rw == RwPattern::kReadWrite ||
         rw == RwPattern::kRandRw;
}
bool Job::Writes() const {
  return rw == RwPattern::kWrite || rw == RwPattern::kRandWrite || rw == RwPattern::kReadWrite ||
         rw == RwPattern::kRandRw;
}
bool Job::Trims() const { return rw == RwPattern::kTrim || rw == RwPattern::kRandTrim; }

uint64_t Job::MaxBlockBytes() const {
  uint64_t m = 0;
  for (int d = 0; d < kNumDirs; d++) {
    m = std::max(m, bs_bytes[d]);
    m = std::max(m, bsrange[d].max_bytes);
    for (const auto& e : bssplit[d]) m = std::max(m, e.bs_bytes);
  }
  return m;
}

uint64_t Job::MinBlockBytes(Dir d) const {
  if (!bssplit[d].empty()) {
    uint64_t m = UINT64_MAX;
    for (const auto& e : bssplit[d]) m = std::min(m, e.bs_bytes);
    return m;
  }
  if (bsrange[d].min_bytes != 0) return bsrange[d].min_bytes;
  return bs_bytes[d];
}

Status Job::Validate() const {
  auto bad = [&](const std::string& option, const std::string& why) {
    return Status::InvalidArgument("job '" + name + "': option '" + option + "' " + why);
  };
  if (name.empty()) return Status::InvalidArgument("a job has no name");
  constexpr uint64_t kMaxBlock = 128ull << 20;
  if (MaxBlockBytes() > kMaxBlock) return bad("bs", "above the 128 MiB limit");
  if (time_based && runtime_ns == 0) return bad("time_based", "needs a runtime");
  if (verify != VerifyKind::kNone) {
    if (!Writes()) return bad("verify", "needs a job that writes");
    if (!bssplit[kWrite].empty() || bsrange[kWrite].min_bytes != 0) {
      return bad("verify", "needs a fixed write block size (no bsrange/bssplit)");
    }
    if (bs_bytes[kWrite] < 64) return bad("verify", "needs bs of at least 64 bytes");
    if (Reads() && (bs_bytes[kRead] != bs_bytes[kWrite] || !bssplit[kRead].empty() ||
                    bsrange[kRead].min_bytes != 0)) {
      return bad("verify", "needs the same fixed block size for reads and writes");
    }
  }
  if (zero_buffers && buffer_compress_percentage != 0) {
    return bad("zero_buffers", "conflicts with buffer_compress_percentage");
  }
  if (loops == 0) return bad("loops", "must be at least 1");
  if (fsync_every != 0 && fdatasync_every != 0) return bad("fsync", "conflicts with fdatasync");
  return Status::Ok();
}

}  // namespace arcstore::bench
