// Job file reader: lines -> sections -> Jobs (see job_file.h for the syntax).
//
//   text --lines--> [global] options fold into `defaults` (a Job)
//                   [name]   starts Job = copy of defaults, name = section
//                   include  recurses (depth <= kMaxIncludeDepth)
//   each option --ExpandValue--> ApplyJobOption (job_options.cc)
//
// Every error carries "file:line: ".

#include "bench/job_file.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace arcstore::bench {
namespace {

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open job file " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (ss.str().size() > (16u << 20)) return Status::InvalidArgument(path + ": larger than 16 MiB");
  return ss.str();
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Parser state across included files.
struct State {
  const JobEnv* env;
  JobSet out;
  Job defaults;
  bool in_global = false;
  bool in_job = false;
  int depth = 0;
};

// Removes a trailing comment that follows whitespace ("bs=4k  # note").
std::string_view StripTrailingComment(std::string_view line) {
  for (size_t i = 1; i < line.size(); i++) {
    if ((line[i] == '#' || line[i] == ';') && (line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return TrimSpace(line.substr(0, i));
    }
  }
  return line;
}

Status ApplyOption(State* st, std::string_view line, const std::string& where) {
  size_t eq = line.find('=');
  std::string key(TrimSpace(line.substr(0, eq)));
  bool has_value = eq != std::string_view::npos;
  std::string raw = has_value ? std::string(TrimSpace(line.substr(eq + 1))) : "";
  if (key.empty()) return Status::InvalidArgument(where + ": an option without a name");
  auto value_or = ExpandValue(raw, *st->env, where);
  if (!value_or.ok()) return value_or.status();
  Job* target = st->in_job ? &st->out.jobs.back() : &st->defaults;
  Status s = ApplyJobOption(target, key, *value_or, has_value);
  if (!s.ok()) return Status(s.code(), where + ": " + s.message());
  if (st->in_job) {
    target->written.emplace_back(Lowercase(key), raw);
  } else {
    st->out.global_written.emplace_back(Lowercase(key), raw);
  }
  return Status::Ok();
}

Status ParseInto(State* st, std::string_view text, const std::string& source,
                 const std::string& base_dir) {
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    line_no++;
    line = TrimSpace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    line = StripTrailingComment(line);
    const std::string where = source + ":" + std::to_string(line_no);
    if (line.size() > 4096) return Status::InvalidArgument(where + ": line longer than 4096 bytes");
    if (line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      if (st->depth >= kMaxIncludeDepth) {
        return Status::InvalidArgument(where + ": includes nested deeper than " +
                                       std::to_string(kMaxIncludeDepth));
      }
      ARC_ASSIGN_OR_RETURN(std::string file, ExpandValue(TrimSpace(line.substr(8)), *st->env, where));
      std::string path = file[0] == '/' ? file : base_dir + "/" + file;
      auto content = st->env->read_file(path);
      if (!content.ok()) return Status(content.status().code(), where + ": " + content.status().message());
      st->depth++;
      ARC_RETURN_IF_ERROR(ParseInto(st, *content, path, DirOf(path)));
      st->depth--;
      continue;
    }
    if (line[0] == '[') {
      if (line.back() != ']') return Status::InvalidArgument(where + ": section header without ']'");
      std::string name(TrimSpace(line.substr(1, line.size() - 2)));
      if (name.empty()) return Status::InvalidArgument(where + ": a section without a name");
      if (name == "global") {
        st->in_global = true;
        st->in_job = false;
        continue;
      }
      if (st->out.jobs.size() >= kMaxJobs) return Status::InvalidArgument(where + ": too many jobs");
      Job job = st->defaults;
      job.written.clear();
      job.name = name;
      st->out.jobs.push_back(std::move(job));
      st->in_job = true;
      st->in_global = false;
      continue;
    }
    if (!st->in_job && !st->in_global) {
      return Status::InvalidArgument(where + ": option '" + std::string(line) +
                                     "' outside of any [section]");
    }
    ARC_RETURN_IF_ERROR(ApplyOption(st, line, where));
  }
  return Status::Ok();
}

Status ValidateAll(const JobSet& set, const std::string& source) {
  if (set.jobs.empty()) return Status::InvalidArgument(source + ": no jobs defined");
  for (const Job& j : set.jobs) {
    Status s = j.Validate();
    if (!s.ok()) return Status(s.code(), source + ": " + s.message());
  }
  return Status::Ok();
}

}  // namespace

JobEnv JobEnv::FromSystem() {
  JobEnv env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  env.ncpus = std::max<uint64_t>(1, std::thread::hardware_concurrency());
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) env.pagesize = static_cast<uint64_t>(page);
  if (pages > 0 && page > 0) {
    env.mb_memory = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / (1024 * 1024);
  }
  env.read_file = ReadWholeFile;
  return env;
}

Result<std::string> ExpandValue(std::string_view value, const JobEnv& env, const std::string& where) {
  std::string out;
  for (size_t i = 0; i < value.size();) {
    if (value[i] != '$') {
      out += value[i++];
      continue;
    }
    if (i + 1 < value.size() && value[i + 1] == '{') {
      size_t close = value.find('}', i + 2);
      if (close == std::string_view::npos) {
        return Status::InvalidArgument(where + ": '${' without '}' in '" + std::string(value) + "'");
      }
      std::string var(value.substr(i + 2, close - i - 2));
      std::optional<std::string> v = env.getenv ? env.getenv(var) : std::nullopt;
      if (!v) {
        return Status::InvalidArgument(where + ": environment variable '" + var + "' is not set");
      }
      out += *v;
      i = close + 1;
      continue;
    }
    static const std::pair<std::string_view, uint64_t JobEnv::*> kKeywords[] = {
        {"$ncpus", &JobEnv::ncpus},
        {"$mb_memory", &JobEnv::mb_memory},
        {"$pagesize", &JobEnv::pagesize},
    };
    bool matched = false;
    for (const auto& [kw, field] : kKeywords) {
      if (value.substr(i, kw.size()) == kw) {
        out += std::to_string(env.*field);
        i += kw.size();
        matched = true;
        break;
      }
    }
    if (!matched) out += value[i++];  // $jobname etc. stay for filename_format
  }
  return out;
}

Result<JobSet> ParseJobText(std::string_view text, const std::string& source_name,
                            const std::string& base_dir, const JobEnv& env) {
  JobEnv local = env;
  if (!local.read_file) local.read_file = ReadWholeFile;
  State st;
  st.env = &local;
  ARC_RETURN_IF_ERROR(ParseInto(&st, text, source_name, base_dir));
  ARC_RETURN_IF_ERROR(ValidateAll(st.out, source_name));
  return std::move(st.out);
}

Result<JobSet> ParseJobFile(const std::string& path, const JobEnv& env) {
  auto read = env.read_file ? env.read_file : ReadWholeFile;
  ARC_ASSIGN_OR_RETURN(std::string text, read(path));
  return ParseJobText(text, path, DirOf(path), env);
}

Result<JobSet> ParseJobFiles(const std::vector<std::string>& paths, const JobEnv& env) {
  JobSet all;
  for (const std::string& p : paths) {
    ARC_ASSIGN_OR_RETURN(JobSet one, ParseJobFile(p, env));
    if (all.global_written.empty()) all.global_written = one.global_written;
    for (Job& j : one.jobs) all.jobs.push_back(std::move(j));
  }
  return all;
}

Result<JobSet> ParseCommandLineJobs(const std::vector<std::string>& args, const JobEnv& env) {
  JobEnv local = env;
  if (!local.read_file) local.read_file = ReadWholeFile;
  State st;
  st.env = &local;
  st.in_global = true;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string where = "command line argument " + std::to_string(i + 1);
    std::string_view a = args[i];
    if (a.rfind("--", 0) != 0) {
      return Status::InvalidArgument(where + ": '" + std::string(a) + "' is not --option[=value]");
    }
    a.remove_prefix(2);
    if (a.rfind("name=", 0) == 0) {
      if (st.out.jobs.size() >= kMaxJobs) return Status::InvalidArgument(where + ": too many jobs");
      Job job = st.defaults;
      job.written.clear();
      st.out.jobs.push_back(std::move(job));
      st.in_job = true;
      st.in_global = false;
    }
    ARC_RETURN_IF_ERROR(ApplyOption(&st, a, where));
  }
  ARC_RETURN_IF_ERROR(ValidateAll(st.out, "command line"));
  return std::move(st.out);
}

}  // namespace arcstore::bench
