// arcstore pool create|info, vol create|list|destroy, fsck.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "arcstore/pool.h"
#include "base/units.h"
#include "cli/commands.h"
#include "cli/observe.h"
#include "cli/progress.h"
#include "io/file_device.h"
#include "l2arc/l2_check.h"
#include "pool/pool_impl.h"

namespace arcstore::cli {
namespace {

bool IsBlockDevice(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
}

void Check(const Status& s, const std::string& what) {
  if (!s.ok()) throw CommandFailed(what + ": " + s.ToString());
}

std::unique_ptr<Pool> OpenPool(const std::string& path, bool read_only) {
  PoolOptions o;
  o.read_only = read_only;
  Result<std::unique_ptr<Pool>> p = Pool::Open(path, o);
  if (!p.ok()) throw CommandFailed("cannot open pool " + path + ": " + p.status().ToString());
  return std::move(*p);
}

// A writable open rewrites the pool at Close (the intent log's new guid,
// a last txg), so a command that may be refused checks its volume names on
// a read-only open first: a refused command leaves the pool untouched.
bool HasVolume(const std::string& path, const std::string& name) {
  for (const VolumeInfo& v : OpenPool(path, true)->Info().volumes) {
    if (v.name == name) return true;
  }
  return false;
}

// A pool's info from its server when one answers on the control socket,
// else from the pool opened read-only (cli/observe.h).
PoolInfo InfoOf(const SourceArgs& source) {
  tools::OpenedSource src = OpenSource(source);
  return OrFail(src.source->Info(), src.source->Describe());
}

void PrintVolumes(const std::vector<VolumeInfo>& vols) {
  std::printf("%-24s %12s %10s %-6s\n", "NAME", "SIZE", "RECORDSIZE", "COMPRESSION");
  for (const auto& v : vols) {
    std::printf("%-24s %12s %10s %-6s\n", v.name.c_str(), FormatBytes(v.size_bytes).c_str(),
                FormatBytesShort(v.record_size_bytes).c_str(), v.compression.c_str());
  }
}

void PrintCacheDevices(const std::vector<PoolInfo::CacheDevice>& caches) {
  if (caches.empty()) return;
  std::printf("cache devices:\n%-32s %10s %10s %10s %10s %10s  %s\n", "PATH", "SIZE", "USED",
              "CACHED", "BLOCKS", "HEADERS", "STATE");
  for (const auto& d : caches) {
    std::printf("%-32s %10s %10s %10s %10llu %10s  %s\n", d.path.c_str(),
                FormatBytes(d.size_bytes).c_str(), FormatBytes(d.used_bytes).c_str(),
                FormatBytes(d.cached_bytes).c_str(), static_cast<unsigned long long>(d.blocks),
                FormatBytes(d.header_bytes).c_str(), d.state.c_str());
  }
}

int Fsck(const std::string& path) {
  io::FileDeviceOptions fo;
  fo.read_only = true;
  Result<std::unique_ptr<io::FileDevice>> dev = io::FileDevice::Open(path, fo);
  if (!dev.ok()) throw NoInput("fsck: cannot open " + path + ": " + dev.status().ToString());
  PoolOptions po;
  po.read_only = true;
  auto p = pool::PoolImpl::OpenOnDevice(std::move(*dev), po);
  if (!p.ok()) {
    std::printf("fsck %s: cannot open: %s\n", path.c_str(), p.status().ToString().c_str());
    return kExitNoInput;
  }
  const pool::OpenReport& report = (*p)->open_report();
  for (const auto& n : report.notes) std::printf("note: %s\n", n.c_str());
  pool::PoolImpl::Census c = (*p)->Check();
  PoolInfo info = (*p)->Info();
  std::printf("pool %s at txg %llu: %llu blocks (%llu data, %llu indirect, %llu space log), "
              "%s referenced, %s allocated\n",
              info.name.c_str(), static_cast<unsigned long long>(info.txg),
              static_cast<unsigned long long>(c.blocks),
              static_cast<unsigned long long>(c.data_blocks),
              static_cast<unsigned long long>(c.indirect_blocks),
              static_cast<unsigned long long>(c.log_blocks),
              FormatBytes(c.referenced_bytes).c_str(), FormatBytes(info.allocated_bytes).c_str());
  for (const auto& problem : c.problems) std::printf("PROBLEM: %s\n", problem.c_str());
  // Cache devices hold nothing the pool needs: what they hold is reported,
  // never a problem of the pool.
  for (const PoolInfo::CacheDevice& d : info.cache_devices) {
    Result<std::unique_ptr<io::FileDevice>> cd = io::FileDevice::Open(d.path, fo);
    if (!cd.ok()) {
      std::printf("cache device %s: cannot open (%s): the pool serves without it\n",
                  d.path.c_str(), cd.status().ToString().c_str());
      continue;
    }
    Result<l2arc::CacheDeviceCheck> check = l2arc::CheckCacheDevice(**cd, info.guid);
    std::printf("cache device %s: %s\n", d.path.c_str(),
                check.ok() ? l2arc::DescribeCheck(*check).c_str()
                           : ("unreadable (" + check.status().ToString() + ")").c_str());
  }
  std::printf("%s\n", c.problems.empty() ? "clean" : "problems found");
  return c.problems.empty() ? kExitOk : kExitFindings;
}

}  // namespace

void AddPoolCommands(CLI::App& app) {
  auto* pool = app.add_subcommand("pool", "Create and describe pools")->require_subcommand(1);
  {
    auto* c = pool->add_subcommand(
        "create",
        "Create a pool on a new file or a block device. It refuses a device or file in use "
        "(served, open, mounted) always, and an existing file or a device holding a pool, a "
        "filesystem or a partition table unless --force");
    static std::string path, size, name = "arcstore";
    static bool sparse = false, force = false;
    c->add_option("POOL", path, "a new file, or a block device")->required();
    c->add_option("--size", size,
                  "size of a new file (e.g. 8G, at least 16M); a device is used whole");
    c->add_option("--name", name, "the pool's name");
    c->add_flag("--sparse", sparse,
                "leave the file sparse instead of writing it once (the intent log's arena, "
                "1/16 of it, is still written, at the first open)");
    c->add_flag("--force", force,
                "format an existing file, or a device holding a pool or another signature "
                "(never one in use)");
    c->callback([] {
      PoolCreateOptions o;
      o.size_bytes = size.empty() ? 0 : SizeArg("--size", size);
      if (!size.empty() && o.size_bytes == 0) {
        throw UsageError("--size 0: a pool needs at least 16M (e.g. --size 8G)");
      }
      o.sparse = sparse;
      o.name = name;
      o.force = force;
      ProgressLine progress("writing " + path + " once");
      o.progress = progress.callback();
      Status s = Pool::Create(path, o);
      progress.Done();
      Check(s, "pool create " + path);
      PoolInfo info = OpenPool(path, true)->Info();
      std::printf("created pool %s: %s (%s)\n", path.c_str(), FormatBytes(info.size_bytes).c_str(),
                  IsBlockDevice(path) ? "block device"
                  : sparse            ? "file, sparse"
                                      : "file, written once");
    });
  }
  {
    auto* c = pool->add_subcommand(
        "info", "Describe a pool (through its server's control socket while one serves it)");
    static SourceArgs source;
    c->add_option("POOL", source.pool)->required();
    AddSourceOptions(c, &source);
    c->callback([] {
      PoolInfo i = InfoOf(source);
      std::printf("pool:         %s\npath:         %s\nguid:         %016llx\nformat:       %u\n"
                  "txg:          %llu\nsize:         %s\nallocated:    %s\nfree:         %s\n"
                  "pending free: %s (freed; reusable two txgs after the txg that freed it)\n"
                  "volumes:      %zu\n",
                  i.name.c_str(), i.path.c_str(), static_cast<unsigned long long>(i.guid),
                  i.format_version, static_cast<unsigned long long>(i.txg),
                  FormatBytes(i.size_bytes).c_str(), FormatBytes(i.allocated_bytes).c_str(),
                  FormatBytes(i.free_bytes).c_str(), FormatBytes(i.pending_free_bytes).c_str(),
                  i.volumes.size());
      if (!i.volumes.empty()) PrintVolumes(i.volumes);
      PrintCacheDevices(i.cache_devices);
    });
  }
  // Cache devices: through the server while one serves the pool, else on
  // the pool opened here.
  for (const bool add : {true, false}) {
    auto* c = pool->add_subcommand(
        add ? "add-cache" : "remove-cache",
        add ? "Add a cache device (second cache level; its contents are overwritten), "
              "recorded in the pool's config; through the pool's server while one serves it"
            : "Stop using a cache device and take it out of the pool's config");
    static SourceArgs source[2];
    static std::string device[2];
    SourceArgs* src = &source[add ? 0 : 1];
    std::string* dev = &device[add ? 0 : 1];
    c->add_option("POOL", src->pool)->required();
    c->add_option("DEVICE", *dev, "a file or a block device")->required();
    AddSourceOptions(c, src);
    c->callback([src, dev, add] {
      const std::string path = std::filesystem::absolute(*dev).lexically_normal().string();
      tools::OpenedSource s = OpenSource(*src, /*writable=*/true);
      const std::string what = std::string(add ? "pool add-cache " : "pool remove-cache ") + path;
      Check(add ? s.source->AddCache(path) : s.source->RemoveCache(path), what);
      if (s.pool) Check(s.pool->Close(), "closing pool " + src->pool);
      std::printf("%s %s%s\n", add ? "added cache device" : "removed cache device",
                  path.c_str(), s.live ? " (through the server)" : "");
    });
  }
  auto* vol = app.add_subcommand("vol", "Create, list and destroy volumes")->require_subcommand(1);
  {
    auto* c = vol->add_subcommand("create", "Create a volume");
    static std::string path, name, size, recordsize = "128K", compression = "lz4";
    c->add_option("POOL", path)->required();
    c->add_option("NAME", name)->required();
    c->add_option("--size", size, "volume size (e.g. 1G)")->required();
    c->add_option("--recordsize", recordsize, "4K to 1M, a power of two");
    c->add_option("--compression", compression, "off, lz4 or zstd");
    c->callback([] {
      VolumeOptions o;
      o.name = name;
      o.size_bytes = SizeArg("--size", size);
      const uint64_t rs = SizeArg("--recordsize", recordsize);
      if (rs > UINT32_MAX) throw UsageError("--recordsize: " + recordsize + " is too large");
      o.record_size_bytes = static_cast<uint32_t>(rs);
      o.compression = compression;
      Check(o.Validate(), "vol create");
      if (HasVolume(path, name)) {
        throw CommandFailed("vol create " + name + ": a volume named '" + name +
                            "' already exists in " + path);
      }
      auto p = OpenPool(path, false);
      Check(p->CreateVolume(o), "vol create " + name);
      const PoolInfo info = p->Info();
      Check(p->Close(), "closing pool " + path);
      std::printf("created volume %s (%s)\n", name.c_str(), FormatBytes(o.size_bytes).c_str());
      if (o.size_bytes > info.free_bytes) {
        std::fprintf(stderr,
                     "warning: volume %s (%s) is larger than the pool's free space (%s): "
                     "volumes are thin, so this is allowed, but writes fail with no space "
                     "once the pool is full\n",
                     name.c_str(), FormatBytes(o.size_bytes).c_str(),
                     FormatBytes(info.free_bytes).c_str());
      }
    });
  }
  {
    auto* c = vol->add_subcommand(
        "list", "List volumes (through the pool's server's control socket while one serves it)");
    static SourceArgs source;
    c->add_option("POOL", source.pool)->required();
    AddSourceOptions(c, &source);
    c->callback([] { PrintVolumes(InfoOf(source).volumes); });
  }
  {
    auto* c = vol->add_subcommand("destroy", "Destroy a volume and free its space");
    static std::string path, name;
    c->add_option("POOL", path)->required();
    c->add_option("NAME", name)->required();
    c->callback([] {
      if (!HasVolume(path, name)) {
        throw CommandFailed("vol destroy " + name + ": no volume named '" + name + "' in " + path);
      }
      auto p = OpenPool(path, false);
      Check(p->DestroyVolume(name), "vol destroy " + name);
      Check(p->Close(), "closing pool " + path);
      std::printf("destroyed volume %s\n", name.c_str());
    });
  }
  {
    auto* c = app.add_subcommand("fsck", "Verify every block and the space accounting of a pool");
    static std::string path;
    c->add_option("POOL", path)->required();
    c->callback([] {
      int rc = Fsck(path);
      if (rc != 0) throw CommandExit{rc};
    });
  }
}

}  // namespace arcstore::cli
