#!/usr/bin/env python3
"""The filesystem benchmark table (issue 31, "Numbers to report"): fio and
pgbench on ext4, on a volume served by `arcstore serve` and by its peers,
through the same path as tests/fs:

  fio / PostgreSQL  ->  ext4 on $MNT
  /dev/loopN        (losetup --direct-io=on over the FUSE file)
  $FUSE/nbd         (nbdfuse: the export as a file, over a unix socket)
  the NBD server    (arcstore serve, nbdkit file, nbdkit memory, qemu-nbd)

For each server: a fresh backing file under --workdir, the server on a unix
socket, nbdfuse and a loop device over it, mkfs.ext4 (inode tables and
journal written at mkfs, so that no lazy init runs under the rows), the
mount, a --file-size file for fio (written once) and a PostgreSQL cluster
(initdb, as an unprivileged user). Every stack stays up for the whole run;
the rows run round-robin (run 1 of every row on every server, then run 2,
...), one at a time, and each figure is the median of --runs runs:

  randwrite-4k-fsync   fio: 4 KiB random writes, fsync after each (IOPS)
  randwrite-4k-qd16    fio: 4 KiB random writes, O_DIRECT, 16 in flight, no fsync (IOPS)
  randread-4k-qd16     fio: 4 KiB random reads, O_DIRECT, 16 in flight (IOPS)
  write-1m-qd8         fio: 1 MiB sequential writes, O_DIRECT, 8 in flight (MiB/s)
  read-1m-qd8          fio: 1 MiB sequential reads, O_DIRECT, 8 in flight (MiB/s)
  pgbench-init         pgbench -i -s SCALE: the load, wall seconds
  pgbench-tpcb         pgbench -c 4 -j 2 -T SECONDS: TPS, mean latency

Per row and server: the server's, nbdfuse's and the whole machine's CPU
seconds over the row, and the loop device's requests per op with their mean
time (/sys/block/loopN/stat: everything below ext4). For arcstore, where
the time goes: its own stats (`arcstore stat POOL --json --live`) before
and after each row, i.e. the NBD requests, flushes and bytes the row turned
into, the time they spent in the server, and the intent log's and txgs'
work; every run is checked for requests answered with an error, and the
kernel log for I/O errors.

  bench/fs/run.py [--runs 3] [--runtime 10] [--servers a,b] [--rows a,b]
                  [--quick] [--json OUT]

Needs root, /dev/fuse, loop devices and PostgreSQL; exits 77 saying what is
missing. See bench/fs/README.md.
"""
import argparse
import glob
import importlib.util
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# The NBD servers and their start commands are bench/nbd/run.py's.
_spec = importlib.util.spec_from_file_location("nbdbench", os.path.join(REPO, "bench/nbd/run.py"))
nbdbench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nbdbench)
BenchError = nbdbench.BenchError
run_cmd = nbdbench.run_cmd
cpu_seconds = nbdbench.cpu_seconds

FIO_ROWS = ["randwrite-4k-fsync", "randwrite-4k-qd16", "randread-4k-qd16", "write-1m-qd8",
            "read-1m-qd8"]
PG_ROWS = ["pgbench-init", "pgbench-tpcb"]
ROWS = FIO_ROWS + PG_ROWS
# What each row is measured by, its unit, and whether more is better.
METRIC = {"randwrite-4k-fsync": ("iops", "IOPS", True),
          "randwrite-4k-qd16": ("iops", "IOPS", True),
          "randread-4k-qd16": ("iops", "IOPS", True),
          "write-1m-qd8": ("mibps", "MiB/s", True),
          "read-1m-qd8": ("mibps", "MiB/s", True),
          "pgbench-init": ("seconds", "s", False),
          "pgbench-tpcb": ("tps", "TPS", True)}
# How many requests the workload keeps in flight at most: fio's iodepth,
# pgbench's clients; pgbench -i is one client.
DEPTH = {"randwrite-4k-fsync": 1, "randwrite-4k-qd16": 16, "randread-4k-qd16": 16,
         "write-1m-qd8": 8, "read-1m-qd8": 8, "pgbench-init": 1}
SERVERS = ["arcstore", "nbdkit-file", "nbdkit-memory", "qemu-raw"]
OPTIONAL_SERVERS = ["qemu-qcow2"]
# The NBD commands whose per-export stats arcstore keeps (nbd_export.VOL.*).
NBD_CMDS = ["read", "write", "flush", "trim", "write_zeroes", "cache", "block_status"]
PG_USER = "postgres"
PG_PORT = 5432
STEP_TIMEOUT_S = 60
T0 = time.monotonic()
SETTLE_TIMEOUT_S = 300
KERNEL_ERRORS = re.compile(r"I/O error|EXT4-fs error|EXT4-fs warning|Buffer I/O|"
                           r"blk_update_request|critical medium|abort", re.I)


class Skip(Exception):
    """The machine cannot run the benchmark (exit 77, as ctest's skip)."""


def prerequisites(cfg):
    """Raises Skip naming what is missing: root, FUSE, loop devices, a tool,
    PostgreSQL's programs or its user."""
    if os.geteuid() != 0:
        raise Skip("needs root (loop devices and mount)")
    if not os.path.exists("/dev/fuse"):
        raise Skip("/dev/fuse is missing (no FUSE in this kernel or container)")
    if not os.path.exists("/dev/loop-control"):
        raise Skip("/dev/loop-control is missing (no loop devices here)")
    tools = ["nbdfuse", "fusermount3", "losetup", "mount", "umount", "mkfs.ext4", "fio",
             "nbdinfo", "setpriv", "sync"]
    if any(s.startswith("nbdkit") for s in cfg.servers):
        tools.append("nbdkit")
    if any(s.startswith("qemu") for s in cfg.servers):
        tools += ["qemu-nbd", "qemu-img"]
    for t in tools:
        if not shutil.which(t):
            raise Skip(f"'{t}' is not installed (scripts/setup installs it)")
    if not os.access(cfg.arcstore, os.X_OK) and "arcstore" in cfg.servers:
        raise Skip(f"no arcstore binary at {cfg.arcstore} (a release build, or --arcstore)")
    if cfg.pg_rows:
        for p in ("initdb", "pg_ctl", "pgbench"):
            if not os.access(os.path.join(cfg.pg_bin, p), os.X_OK):
                raise Skip(f"no {p} in {cfg.pg_bin} (scripts/setup installs postgresql)")
        try:
            import pwd
            pwd.getpwnam(cfg.pg_user)
        except KeyError:
            raise Skip(f"no user {cfg.pg_user!r} to run PostgreSQL as (initdb refuses root)")
    with open("/proc/filesystems") as f:
        have = f.read()
    for fs in ("ext4", "fuse"):
        if fs not in have and subprocess.run(["modprobe", fs], capture_output=True).returncode:
            raise Skip(f"the kernel has no {fs}")
    if subprocess.run(["losetup", "-f"], capture_output=True, timeout=10).returncode != 0:
        raise Skip("no free loop device (losetup -f failed)")


def default_pg_bin():
    """The newest PostgreSQL's programs (/usr/lib/postgresql/N/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else "/usr/lib/postgresql/15/bin"


def is_mounted(path):
    """Whether `path` is a mount point, from the mount table (a stat could
    block on a FUSE mount whose daemon is gone)."""
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == path for line in f)


def machine_busy_seconds():
    """CPU seconds the whole machine spent not idle (all CPUs) since boot."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    # user nice system idle iowait irq softirq steal
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


# /sys/block/loopN/stat, in order (the kernel's Documentation/block/stat.rst):
# requests, merges, sectors and milliseconds spent per direction, then
# discards and flushes; the milliseconds are the sum of every request's
# time from its start to its completion.
LOOP_STAT_FIELDS = ("read_ios", "read_merges", "read_sectors", "read_ms", "write_ios",
                    "write_merges", "write_sectors", "write_ms", "in_flight", "io_ms",
                    "queue_ms", "discard_ios", "discard_merges", "discard_sectors", "discard_ms",
                    "flush_ios", "flush_ms")


def loop_stat(loop):
    """The loop device's counters ({} where the kernel keeps fewer than
    LOOP_STAT_FIELDS or none)."""
    if not loop:
        return {}
    try:
        with open(f"/sys/block/{os.path.basename(loop)}/stat") as f:
            vals = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return {}
    return dict(zip(LOOP_STAT_FIELDS, vals)) if len(vals) >= len(LOOP_STAT_FIELDS) else {}


def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def kernel_errors_since(t, devices):
    """Kernel log lines since uptime `t` that look like an I/O or
    filesystem error on one of `devices` (loop device paths; others'
    loop devices are not this run's), from dmesg ([] where it cannot be
    read)."""
    names = re.compile(r"\b(%s)\b" % "|".join(re.escape(os.path.basename(d)) for d in devices))
    p = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"\[\s*(\d+\.\d+)\]\s*(.*)", line)
        if m and float(m.group(1)) >= t and KERNEL_ERRORS.search(m.group(2)) and \
                devices and names.search(m.group(2)):
            out.append(line)
    return out


def flat_stats(server):
    """Every stat of the running arcstore serve, histograms as NAME.sum and
    NAME.count."""
    out = run_cmd([server.binary, "stat", server.pool, "--json", "--live"],
                  f"{server.label}: stat", timeout_s=STEP_TIMEOUT_S)
    flat = {}
    for s in json.loads(out.splitlines()[0])["stats"]:
        k = f"{s['module']}.{s['name']}"
        if s.get("kind") == "histogram":
            flat[k + ".sum"], flat[k + ".count"] = s.get("sum", 0), s.get("count", 0)
        elif isinstance(s.get("value"), (int, float)):
            flat[k] = s["value"]
    return flat


class FsServer(nbdbench.Server):
    """bench/nbd's server, with a sparse pool for arcstore (written once, a
    pool of several times the export would take a minute to make)."""

    command_line = None

    def command(self):
        self.command_line = self.make_command()
        return self.command_line

    def make_command(self):
        if self.name != "arcstore":
            return super().command()
        c = self.cfg
        self.pool = os.path.join(self.dir, "bench.pool")
        run_cmd([c.arcstore, "pool", "create", self.pool, "--size", str(c.pool_size),
                 "--sparse"], "pool create")
        run_cmd([c.arcstore, "vol", "create", self.pool, "vol", "--size", str(c.size),
                 "--recordsize", c.recordsize, "--compression", c.compression], "vol create")
        self.export = "vol"
        cmd = [c.arcstore, "serve", self.pool, "--socket", self.sock]
        if c.arc_pretouch:
            cmd += ["--arc-pretouch", c.arc_pretouch]
        return cmd


class Stack:
    """One server and everything above it: nbdfuse, the loop device, ext4,
    the fio file and a PostgreSQL cluster. teardown() takes it down from the
    top, every step bounded, and never raises."""

    def __init__(self, name, cfg, net):
        self.name, self.cfg = name, cfg
        self.server = FsServer(name, cfg, net)
        # The server's directory is private (mkdtemp); PostgreSQL's user
        # must pass through it to the mount and its socket directory.
        os.chmod(self.server.dir, 0o711)
        d = self.server.dir
        self.fuse_dir, self.mnt = os.path.join(d, "fuse"), os.path.join(d, "mnt")
        self.dev = os.path.join(self.fuse_dir, "nbd")
        self.pg_sock = os.path.join(d, "pgsock")
        self.pg_data = os.path.join(self.mnt, "pgdata")
        self.pg_log = os.path.join(d, "postgres.log")
        self.fio_file = os.path.join(self.mnt, "fio.dat")
        os.makedirs(self.fuse_dir)
        os.makedirs(self.mnt)
        self.fuse = None
        self.fuse_log = open(os.path.join(d, "nbdfuse.log"), "w")
        self.loop = None
        self.pg_running = False
        self.connections = None

    @property
    def label(self):
        return self.server.label

    def log(self, msg):
        print(f"[{time.monotonic() - T0:5.0f} s] {self.label}: {msg}", flush=True)

    def up(self):
        """Server, nbdfuse, loop device, ext4, the fio file, initdb."""
        c = self.cfg
        self.server.start()
        self.attach()
        self.log(f"serving, {self.loop} over {self.dev}")
        run_cmd(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                 self.loop], f"{self.label}: mkfs.ext4", timeout_s=600)
        run_cmd(["mount", self.loop, self.mnt], f"{self.label}: mount", timeout_s=STEP_TIMEOUT_S)
        t0 = time.monotonic()
        run_cmd(["fio", "--name=layout", "--filename=" + self.fio_file,
                 "--size=" + str(c.file_size), "--rw=write", "--bs=1m", "--direct=1",
                 "--ioengine=libaio", "--iodepth=8",
                 "--end_fsync=1"], f"{self.label}: fio layout", timeout_s=1800)
        self.log(f"ext4 on {self.mnt}, {c.file_size >> 20} MiB fio file written in "
                 f"{time.monotonic() - t0:.1f} s")
        if c.pg_rows:
            self.initdb()
            self.log("initdb done")
        # nbdfuse opens several connections where the server allows
        # multi-conn: its sockets are those connections.
        fds = os.listdir(f"/proc/{self.fuse.pid}/fd")
        self.connections = sum(1 for fd in fds if os.readlink(
            f"/proc/{self.fuse.pid}/fd/{fd}").startswith("socket:"))
        self.log(f"nbdfuse holds {self.connections} connection(s) to the server")

    def attach(self):
        uri = self.server.uri
        self.fuse = subprocess.Popen(["nbdfuse", self.dev, uri], stdout=self.fuse_log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while not (is_mounted(self.fuse_dir) and os.path.isfile(self.dev)):
            if self.fuse.poll() is not None:
                raise BenchError(f"{self.label}: nbdfuse exited {self.fuse.returncode} at start")
            if time.monotonic() > deadline:
                raise BenchError(f"{self.label}: nbdfuse did not mount within {STEP_TIMEOUT_S} s")
            time.sleep(0.02)
        self.loop = run_cmd(["losetup", "--find", "--show", "--direct-io=on", self.dev],
                            f"{self.label}: losetup", timeout_s=STEP_TIMEOUT_S).strip()
        if not self.loop.startswith("/dev/loop"):
            raise BenchError(f"{self.label}: losetup gave {self.loop!r}")

    def as_pg(self, args):
        """`args` run as PostgreSQL's user (initdb refuses root)."""
        u = self.cfg.pg_user
        return ["setpriv", f"--reuid={u}", f"--regid={u}", "--init-groups",
                "env", "-i", "PATH=/usr/bin:/bin", "LANG=C", "HOME=" + self.server.dir, *args]

    def pg(self, prog):
        return os.path.join(self.cfg.pg_bin, prog)

    def initdb(self):
        u = self.cfg.pg_user
        for d in (self.pg_data, self.pg_sock):
            os.makedirs(d, mode=0o700)
            shutil.chown(d, u, u)
        run_cmd(self.as_pg([self.pg("initdb"), "-D", self.pg_data, "--auth=trust", "--locale=C",
                            "-E", "UTF8", "-U", u]), f"{self.label}: initdb", timeout_s=600)
        # Unix socket in the workdir only, no TCP listener.
        with open(os.path.join(self.pg_data, "postgresql.conf"), "a") as f:
            f.write(f"\nlisten_addresses = ''\nunix_socket_directories = '{self.pg_sock}'\n"
                    f"port = {PG_PORT}\n")
        with open(self.pg_log, "w"):
            pass
        shutil.chown(self.pg_log, u, u)

    def pg_start(self):
        run_cmd(self.as_pg([self.pg("pg_ctl"), "-D", self.pg_data, "-l", self.pg_log, "-w",
                            "-t", str(STEP_TIMEOUT_S), "start"]), f"{self.label}: pg_ctl start",
                timeout_s=STEP_TIMEOUT_S + 30)
        self.pg_running = True

    def pg_stop(self, mode="fast"):
        run_cmd(self.as_pg([self.pg("pg_ctl"), "-D", self.pg_data, "-m", mode, "-w",
                            "-t", str(STEP_TIMEOUT_S * 2), "stop"]),
                f"{self.label}: pg_ctl stop", timeout_s=STEP_TIMEOUT_S * 2 + 30)
        self.pg_running = False

    def pgbench(self, args, timeout_s):
        return subprocess.run(self.as_pg([self.pg("pgbench"), "-h", self.pg_sock, "-p",
                                          str(PG_PORT), *args, "postgres"]),
                              capture_output=True, text=True, timeout=timeout_s)

    def settle(self):
        """Before a row: the filesystem's dirty data sent (syncfs), arcstore's
        dirty data synced (txg.dirty_bytes 0), and the host filesystem of the
        backing files synced, so that no row pays for the one before it."""
        run_cmd(["sync", "-f", self.mnt], f"{self.label}: sync", timeout_s=SETTLE_TIMEOUT_S)
        if self.server.pool is not None:
            deadline = time.monotonic() + SETTLE_TIMEOUT_S
            while flat_stats(self.server).get("txg.dirty_bytes", 0) != 0:
                if time.monotonic() > deadline:
                    raise BenchError(f"{self.label}: dirty data not synced in {SETTLE_TIMEOUT_S} s")
                time.sleep(0.2)
        run_cmd(["sync", "-f", self.cfg.workdir], "sync workdir", timeout_s=SETTLE_TIMEOUT_S)

    def teardown(self):
        """Stops PostgreSQL, unmounts, detaches the loop device, unmounts
        the FUSE file, stops the server: each step bounded, never raises."""
        def quiet(what, fn):
            try:
                fn()
            except (BenchError, OSError, subprocess.SubprocessError) as e:
                print(f"fs bench: {self.label}: {what}: {e}", file=sys.stderr)

        if self.pg_running:
            quiet("pg_ctl stop", lambda: self.pg_stop("fast"))
            if self.pg_running:
                quiet("pg_ctl stop immediate", lambda: self.pg_stop("immediate"))
            if self.pg_running:
                quiet("postmaster kill", self.kill_postmaster)
        self.log("tearing down")
        quiet("umount", self.umount)
        if self.loop:
            quiet("losetup -d", lambda: run_cmd(["losetup", "-d", self.loop], "losetup -d",
                                                timeout_s=20))
            self.loop = None
        quiet("fusermount3 -u", self.unmount_fuse)
        quiet("nbdfuse exit", self.wait_fuse)
        self.fuse_log.close()
        self.log("detached; stopping the server")
        # Nothing may be left mounted in the tree the server's cleanup removes.
        if is_mounted(self.mnt) or is_mounted(self.fuse_dir):
            print(f"fs bench: {self.label}: still mounted under {self.server.dir}; left in place",
                  file=sys.stderr)
            self.cfg.keep = True
        quiet("server stop", self.server.cleanup)
        self.log("torn down")

    def umount(self):
        if not is_mounted(self.mnt):
            return
        try:
            if subprocess.run(["umount", self.mnt], capture_output=True,
                              timeout=STEP_TIMEOUT_S).returncode == 0:
                return
        except subprocess.TimeoutExpired:
            pass
        subprocess.run(["umount", "-l", self.mnt], capture_output=True, timeout=10)

    def unmount_fuse(self):
        """fusermount3 -u, retried for 20 s (the loop device lets go of the
        file when its last user closes it), then a lazy unmount."""
        deadline = time.monotonic() + 20
        while is_mounted(self.fuse_dir):
            try:
                if subprocess.run(["fusermount3", "-u", self.fuse_dir], capture_output=True,
                                  timeout=10).returncode == 0:
                    return
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() > deadline:
                subprocess.run(["umount", "-l", self.fuse_dir], capture_output=True, timeout=10)
                return
            time.sleep(0.05)

    def wait_fuse(self):
        if self.fuse is None:
            return
        try:
            self.fuse.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.fuse.kill()
            self.fuse.wait(timeout=10)
        self.fuse = None

    def kill_postmaster(self):
        with open(os.path.join(self.pg_data, "postmaster.pid")) as f:
            pid = int(f.readline())
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            time.sleep(0.05)
        self.pg_running = False


def measured(stack, fn):
    """Runs `fn` (a row) and returns its figures with what it cost: wall
    time, the server's, nbdfuse's and the machine's CPU seconds, and for
    arcstore the difference of its stats."""
    srv = stack.server
    before = flat_stats(srv) if srv.pool is not None else None
    load = os.getloadavg()[0]
    l0 = loop_stat(stack.loop)
    c0, f0, m0 = cpu_seconds(srv.proc.pid), cpu_seconds(stack.fuse.pid), machine_busy_seconds()
    t0 = time.monotonic()
    m = fn()
    wall = time.monotonic() - t0
    m.update(wall_s=wall, load1=load, server_cpu_s=cpu_seconds(srv.proc.pid) - c0,
             nbdfuse_cpu_s=cpu_seconds(stack.fuse.pid) - f0,
             machine_cpu_s=machine_busy_seconds() - m0)
    l1 = loop_stat(stack.loop)
    if l0 and l1:
        m["loop"] = {k: l1[k] - l0[k] for k in LOOP_STAT_FIELDS if k != "in_flight"}
    if before is not None:
        after = flat_stats(srv)
        m["stats"] = {k: after[k] - before.get(k, 0) for k in after
                      if isinstance(after[k], (int, float)) and after[k] != before.get(k, 0)}
    return m


def fio_row(stack, row, cfg):
    env = dict(os.environ, FILE=stack.fio_file, SIZE=str(cfg.file_size),
               RUNTIME=str(cfg.runtime))
    out = run_cmd(["fio", "--output-format=json", os.path.join(HERE, row + ".fio")],
                  f"{stack.label} {row}", timeout_s=cfg.runtime + 120, env=env)
    j = json.loads(out[out.index("{"):])["jobs"][0]
    if j["error"] != 0:
        raise BenchError(f"{stack.label} {row}: fio job error {j['error']}")
    d = j["read" if "read" in row else "write"]
    lat_us = d["lat_ns"]["mean"] / 1000.0
    if "fsync" in row:
        # A commit is the write and the fsync after it.
        lat_us += j["sync"]["lat_ns"]["mean"] / 1000.0
    return {"iops": d["iops"], "mibps": d["bw_bytes"] / (1 << 20), "ops": d["total_ios"],
            "bytes": d["io_bytes"], "lat_us": lat_us, "depth": DEPTH[row]}


def pgbench_init(stack, cfg):
    t0 = time.monotonic()
    p = stack.pgbench(["-i", "-s", str(cfg.scale)], timeout_s=1800)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        raise BenchError(f"{stack.label} pgbench -i: exit {p.returncode}: "
                         f"{p.stderr.strip()[-800:]}")
    return {"seconds": secs, "ops": 1, "lat_us": secs * 1e6, "depth": 1}


def pgbench_tpcb(stack, cfg):
    p = stack.pgbench(["-c", str(cfg.clients), "-j", str(cfg.threads), "-T", str(cfg.pg_time)],
                      timeout_s=cfg.pg_time + 300)
    if p.returncode != 0:
        raise BenchError(f"{stack.label} pgbench: exit {p.returncode}: {p.stderr.strip()[-800:]}")
    tps = re.search(r"^tps = ([\d.]+) \(without initial", p.stdout, re.M)
    lat = re.search(r"^latency average = ([\d.]+) ms", p.stdout, re.M)
    n = re.search(r"^number of transactions actually processed: (\d+)", p.stdout, re.M)
    failed = re.search(r"^number of failed transactions: (\d+)", p.stdout, re.M)
    if not (tps and lat and n):
        raise BenchError(f"{stack.label} pgbench: no tps/latency in its output: {p.stdout[-800:]}")
    if failed and int(failed.group(1)):
        raise BenchError(f"{stack.label} pgbench: {failed.group(1)} failed transactions")
    return {"tps": float(tps.group(1)), "lat_us": float(lat.group(1)) * 1000.0,
            "ops": int(n.group(1)), "depth": cfg.clients}


def nbd_errors(st):
    """Requests arcstore answered with an error, and its protocol errors,
    in a row's stats difference: {name: count}."""
    return {k: v for k, v in st.items()
            if v and (re.match(r"nbd_export\.[^.]+\.\w+_errors$", k) or k.startswith("nbd.err_"))}


def export_sum(st, what):
    """The stat nbd_export.*.`what` summed over exports."""
    return sum(v for k, v in st.items()
               if k.startswith("nbd_export.") and k.split(".", 2)[2] == what)


def where(m):
    """Where a row's time went on arcstore: per application op (a fio I/O,
    the whole pgbench -i load, a pgbench transaction), the NBD requests and
    bytes, the server's time, the intent log's and txgs' work."""
    st, ops, wall = m["stats"], max(m["ops"], 1), m["wall_s"]
    w = {}
    for cmd in NBD_CMDS:
        n = export_sum(st, f"{cmd}_ops")
        w[f"{cmd}_ops"] = n
        w[f"{cmd}_bytes"] = export_sum(st, f"{cmd}_bytes")
        lat = export_sum(st, f"{cmd}_latency_ns.sum")
        w[f"{cmd}_lat_ns_sum"] = lat
        w[f"{cmd}_mean_us"] = lat / n / 1000.0 if n else 0.0
    w["requests"] = sum(w[f"{c}_ops"] for c in NBD_CMDS)
    w["server_ns"] = sum(w[f"{c}_lat_ns_sum"] for c in NBD_CMDS)
    # The share of the workload's waiting that was inside the server: the
    # requests' time in the server over the wall time times the workload's
    # concurrency (fio's iodepth, pgbench's clients).
    w["server_share"] = w["server_ns"] / 1e9 / (wall * m["depth"])
    # The same per application op, against the op's latency at the top.
    w["server_us_per_op"] = w["server_ns"] / 1000.0 / ops
    w["per_op"] = {k: w[f"{k}_ops"] / ops for k in ("read", "write", "flush", "trim",
                                                      "write_zeroes")}
    w["write_kib_per_op"] = w["write_bytes"] / 1024.0 / ops
    w["read_kib_per_op"] = w["read_bytes"] / 1024.0 / ops
    w["zil_commits"] = st.get("zil.commits", 0)
    w["zil_commit_requests"] = st.get("zil.commit_requests", 0)
    w["txg_syncs"] = sum(v for k, v in st.items() if k.startswith("txg.syncs_"))
    w["device_write_bytes"] = st.get("io.write_bytes", 0)
    w["device_read_bytes"] = st.get("io.read_bytes", 0)
    w["device_flushes"] = st.get("io.flushes", 0)
    w["connections"] = st.get("nbd.connections_accepted", 0)
    w["errors"] = sum(nbd_errors(st).values())
    return w


def median(vals):
    return statistics.median(vals) if vals else 0.0


def fmt(v):
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def print_loop_table(med, cfg):
    """What the filesystem asked of the stack below it, for every server:
    the loop device's requests per application op and their mean time,
    from the loop's start of a request to its completion (FUSE, nbdfuse,
    the socket and the server). Beside arcstore's, the server's own mean
    time per NBD request: the difference is the path above the server."""
    if not any("loop" in m for row in med.values() for m in row.values()):
        print("\nLoop device: the kernel keeps no request counters for it (/sys/block/loopN/stat).")
        return
    print("\n### At the loop device, every server (/sys/block/loopN/stat before and after each "
          "row)\n")
    print("Per application op: the loop device's read, write and flush requests and KiB read "
          "and written; mean us: each request's time from its start at the loop device to its "
          "completion, i.e. FUSE, nbdfuse, the socket and the server. For arcstore, its own "
          "mean time per NBD read, write and flush (received to reply sent) in brackets.\n")
    print("| row | server | reads/op | writes/op | flushes/op | KiB read/op | KiB written/op | "
          "mean us read | mean us write | mean us flush |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for row in cfg.rows:
        for s in cfg.servers:
            m = med[row].get(s)
            if m is None or "loop" not in m:
                continue
            lp, ops = m["loop"], max(m["ops"], 1)
            means = []
            for kind in ("read", "write", "flush"):
                n = lp[f"{kind}_ios"]
                txt = f"{lp[f'{kind}_ms'] * 1000.0 / n:,.0f}" if n else "-"
                if "where" in m and n:
                    txt += f" ({m['where'][f'{kind}_mean_us']:,.0f})"
                means.append(txt)
            print(f"| {row} | {s} | {lp['read_ios'] / ops:.2f} | {lp['write_ios'] / ops:.2f} | "
                  f"{lp['flush_ios'] / ops:.2f} | {fmt(lp['read_sectors'] / 2.0 / ops)} | "
                  f"{fmt(lp['write_sectors'] / 2.0 / ops)} | {' | '.join(means)} |")


def report(runs, cfg, kernel, stacks):
    """Prints the tables; returns the medians."""
    med = {}
    for row in cfg.rows:
        med[row] = {}
        for s in cfg.servers:
            rs = runs[row][s]
            if not rs:
                continue
            keys = [k for k in rs[0] if isinstance(rs[0][k], (int, float))]
            med[row][s] = {k: median([r[k] for r in rs]) for k in keys}
            if all("loop" in r for r in rs):
                med[row][s]["loop"] = {k: median([r["loop"][k] for r in rs])
                                       for k in rs[0]["loop"]}
            if "where" in rs[0]:
                wk = [k for k in rs[0]["where"] if isinstance(rs[0]["where"][k], (int, float))]
                med[row][s]["where"] = {k: median([r["where"][k] for r in rs]) for k in wk}
                med[row][s]["where"]["errors_total"] = sum(r["where"]["errors"] for r in rs)
    print(f"\n## Filesystem benchmark: ext4 on nbdfuse + loop (direct I/O), median of "
          f"{cfg.runs} run(s); export {cfg.size >> 20} MiB, fio file {cfg.file_size >> 20} MiB, "
          f"fio runtime {cfg.runtime} s, pgbench -s {cfg.scale}, -c {cfg.clients} -j "
          f"{cfg.threads} -T {cfg.pg_time}\n")
    print("| row | server | figure | mean latency | arcstore / this | server CPU s | "
          "nbdfuse CPU s | machine CPU s | wall s | load avg (1 min) |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for row in cfg.rows:
        key, unit, more = METRIC[row]
        a = med[row].get("arcstore")
        for s in cfg.servers:
            m = med[row].get(s)
            if m is None:
                continue
            ratio = f"{a[key] / m[key]:.2f}" if a and m[key] else ""
            lat = m["lat_us"]
            lat_txt = f"{lat / 1e6:.1f} s" if row == "pgbench-init" else \
                f"{lat / 1000:.2f} ms" if lat >= 1000 else f"{lat:.0f} us"
            print(f"| {row} ({unit}{'' if more else ', lower is better'}) | {s} | "
                  f"{fmt(m[key])} | {lat_txt} | {ratio} | {m['server_cpu_s']:.1f} | "
                  f"{m['nbdfuse_cpu_s']:.1f} | {m['machine_cpu_s']:.1f} | {m['wall_s']:.1f} | "
                  f"{m['load1']:.1f} |")
    print_loop_table(med, cfg)
    if "arcstore" in cfg.servers:
        print("\n### Where the time goes on arcstore (its stats before and after each row)\n")
        print("Per application op (a fio I/O; pgbench -i: the whole load; pgbench: a "
              "transaction): NBD requests and KiB written/read. Server share: the requests' "
              "time in the server (received to reply sent) over wall time x the workload's "
              "concurrency (iodepth, clients); the rest is the filesystem, the loop device, "
              "FUSE, nbdfuse and the socket.\n")
        print("| row | app ops | NBD requests | writes/op | flushes/op | reads/op | "
              "KiB written/op | KiB read/op | server us/op | app us/op | server share | "
              "mean us write / flush / read | log commits | txg syncs | device MiB written | "
              "NBD errors (all runs) |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for row in cfg.rows:
            m = med[row].get("arcstore")
            if m is None or "where" not in m:
                continue
            w = m["where"]
            print(f"| {row} | {m['ops']:,.0f} | {w['requests']:,.0f} | "
                  f"{w['write_ops'] / max(m['ops'], 1):.2f} | "
                  f"{w['flush_ops'] / max(m['ops'], 1):.2f} | "
                  f"{w['read_ops'] / max(m['ops'], 1):.2f} | {fmt(w['write_kib_per_op'])} | "
                  f"{fmt(w['read_kib_per_op'])} | {fmt(w['server_us_per_op'])} | "
                  f"{fmt(m['lat_us'])} | {w['server_share']:.0%} | "
                  f"{w['write_mean_us']:.0f} / {w['flush_mean_us']:.0f} / "
                  f"{w['read_mean_us']:.0f} | "
                  f"{w['zil_commits']:,.0f} | {w['txg_syncs']:,.0f} | "
                  f"{w['device_write_bytes'] / (1 << 20):,.0f} | {w['errors_total']:.0f} |")
    print("\n### Servers\n")
    print("Each on a fresh backing file in the run's directory, on a unix socket; nbdfuse's "
          "connections to it (several where the server allows multi-conn):\n")
    for st in stacks:
        cmd = " ".join(st.server.command_line or []).replace(st.server.dir + "/", "")
        print(f"- {st.label}: `{cmd}`; nbdfuse connections: {st.connections}")
    if kernel:
        print("\n### Kernel log lines that look like I/O or filesystem errors\n")
        for line in kernel[:40]:
            print(f"    {line}")
    else:
        print("\nKernel log: no I/O or filesystem error lines during the run.")
    print(f"\nload average at end: {os.getloadavg()} on {os.cpu_count()} CPUs")
    return med


def parse_args(argv):
    size = nbdbench.parse_size
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs per row and server (median)")
    ap.add_argument("--runtime", type=int, default=10, help="fio runtime per run, seconds")
    ap.add_argument("--size", type=size, default=4 << 30, help="export size (4G)")
    ap.add_argument("--file-size", type=size, default=1 << 30, help="fio's file (1G)")
    ap.add_argument("--scale", type=int, default=20, help="pgbench -i -s (20: about 300 MiB)")
    ap.add_argument("--clients", type=int, default=4, help="pgbench -c")
    ap.add_argument("--threads", type=int, default=2, help="pgbench -j")
    ap.add_argument("--pg-time", type=int, default=20, help="pgbench -T, seconds")
    ap.add_argument("--rows", default=",".join(ROWS), help="rows, comma-separated, of "
                    + ", ".join(ROWS) + " (pgbench-tpcb needs pgbench-init)")
    ap.add_argument("--servers", default=",".join(SERVERS),
                    help="servers, comma-separated, of " + ", ".join(SERVERS + OPTIONAL_SERVERS))
    ap.add_argument("--quick", action="store_true",
                    help="1 run, fio 2 s on a 32 MiB file of a 512 MiB export, pgbench -s 1 -T 3")
    ap.add_argument("--arcstore", default=os.path.join(REPO, "build/release/arcstore"))
    ap.add_argument("--recordsize", default="64K", help="record size of the arcstore volume")
    ap.add_argument("--arc-pretouch", default="",
                    help="arcstore serve --arc-pretouch SIZE (ARC memory written once at start)")
    ap.add_argument("--compression", default="lz4", choices=["lz4", "zstd", "off"],
                    help="compression of the arcstore volume (lz4, the engine's default)")
    ap.add_argument("--pool-size", type=size, default=None,
                    help="arcstore pool file size, sparse (default: 4 x the export)")
    ap.add_argument("--pg-bin", default=default_pg_bin(), help="PostgreSQL's programs")
    ap.add_argument("--pg-user", default=PG_USER, help="the user PostgreSQL runs as")
    ap.add_argument("--workdir", default="/var/tmp", help="where backing files go")
    ap.add_argument("--keep", action="store_true", help="keep backing files and logs")
    ap.add_argument("--json", help="write every run and the configuration here")
    cfg = ap.parse_args(argv)
    if cfg.quick:
        cfg.runs, cfg.runtime, cfg.size, cfg.file_size = 1, 2, 512 << 20, 32 << 20
        cfg.scale, cfg.pg_time = 1, 3
    cfg.rows = [r for r in cfg.rows.split(",") if r]
    cfg.servers = [s for s in cfg.servers.split(",") if s]
    for r in cfg.rows:
        if r not in ROWS:
            ap.error(f"--rows: unknown row {r!r} (known: {', '.join(ROWS)})")
    if "pgbench-tpcb" in cfg.rows and "pgbench-init" not in cfg.rows:
        ap.error("--rows: pgbench-tpcb needs pgbench-init")
    cfg.rows = [r for r in ROWS if r in cfg.rows]
    for s in cfg.servers:
        if s not in SERVERS + OPTIONAL_SERVERS:
            ap.error(f"--servers: unknown server {s!r} (known: "
                     f"{', '.join(SERVERS + OPTIONAL_SERVERS)})")
    if cfg.runs < 1 or cfg.runtime < 1 or cfg.pg_time < 1 or cfg.scale < 1:
        ap.error("--runs, --runtime, --pg-time and --scale must be >= 1")
    if cfg.file_size > cfg.size // 2:
        ap.error("--file-size: at most half the export (the filesystem and PostgreSQL need room)")
    if cfg.pool_size is None:
        cfg.pool_size = 4 * cfg.size
    cfg.pg_rows = [r for r in cfg.rows if r in PG_ROWS]
    # What bench/nbd's Server reads from its configuration.
    cfg.arcstore_b, cfg.nbd_test_server, cfg.transport = None, None, "unix"
    return cfg


def stop_on_signal(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def own_mount_namespace():
    """Runs this process again in a mount namespace of its own (as root,
    where unshare works). A namespace made meanwhile by another process (ip
    netns exec, unshare) starts as a copy of its parent's mounts and keeps
    them: a filesystem mounted here would stay mounted there after the run
    unmounts it, holding the loop device and the FUSE file busy."""
    if os.environ.get("FS_BENCH_MNTNS") or os.geteuid() != 0 or not shutil.which("unshare"):
        return
    probe = ["unshare", "--mount", "--propagation", "private", "true"]
    if subprocess.run(probe, capture_output=True, timeout=10).returncode != 0:
        return
    os.environ["FS_BENCH_MNTNS"] = "1"
    sys.stdout.flush()
    os.execvp("unshare", probe[:-1] + ["--", sys.executable, os.path.abspath(sys.argv[0])]
              + sys.argv[1:])


def main(argv):
    cfg = parse_args(argv)
    try:
        prerequisites(cfg)
    except Skip as e:
        print(f"SKIP: {e}", file=sys.stderr)
        return 77
    print(f"fs bench: servers {','.join(cfg.servers)}; rows {','.join(cfg.rows)}; runs "
          f"{cfg.runs}; fio runtime {cfg.runtime} s; export {cfg.size} bytes; fio file "
          f"{cfg.file_size} bytes; pgbench -s {cfg.scale} -c {cfg.clients} -j {cfg.threads} "
          f"-T {cfg.pg_time}; arcstore {cfg.arcstore} recordsize {cfg.recordsize}, "
          f"compression {cfg.compression}; PostgreSQL {cfg.pg_bin}; load average at start "
          f"{os.getloadavg()}", flush=True)
    os.makedirs(cfg.workdir, exist_ok=True)
    # Everything of this run in one directory; PostgreSQL's user passes
    # through it to its mount and socket directory.
    top = cfg.workdir
    cfg.workdir = tempfile.mkdtemp(prefix="fsbench.", dir=top)
    os.chmod(cfg.workdir, 0o711)
    net = nbdbench.Network(cfg)
    stacks = []
    runs = {r: {s: [] for s in cfg.servers} for r in cfg.rows}
    t_start = uptime()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop_on_signal)
    rc = 0
    try:
        for name in cfg.servers:
            st = Stack(name, cfg, net)
            stacks.append(st)
            st.up()
            st.log(f"{' '.join(st.server.command_line)}")
        fio_rows = [r for r in cfg.rows if r in FIO_ROWS]
        for i in range(cfg.runs):
            for row in fio_rows:
                for st in stacks:
                    st.settle()
                    m = measured(st, lambda: fio_row(st, row, cfg))
                    record(runs, row, st, m, i, cfg)
            if cfg.pg_rows:
                for st in stacks:
                    st.pg_start()
                    st.settle()
                    m = measured(st, lambda: pgbench_init(st, cfg))
                    record(runs, "pgbench-init", st, m, i, cfg)
                    if "pgbench-tpcb" in cfg.rows:
                        st.settle()
                        m = measured(st, lambda: pgbench_tpcb(st, cfg))
                        record(runs, "pgbench-tpcb", st, m, i, cfg)
                    st.pg_stop()
        kernel = kernel_errors_since(t_start, [st.loop for st in stacks if st.loop])
        med = report(runs, cfg, kernel, stacks)
        errors = sum(r["where"]["errors"] for row in runs.values() for rs in row.values()
                     for r in rs if "where" in r)
        if errors:
            print(f"fs bench: arcstore answered {errors} request(s) with an error", file=sys.stderr)
            rc = 1
        if cfg.json:
            conf = {k: v for k, v in vars(cfg).items() if k != "json"}
            with open(cfg.json, "w") as f:
                json.dump({"config": conf, "runs": runs, "median": med,
                           "kernel_errors": kernel,
                           "servers": {s.label: s.server.command_line for s in stacks},
                           "nbdfuse_connections": {s.label: s.connections for s in stacks}},
                          f, indent=1)
        for st in stacks:
            if st.pg_running:
                st.pg_stop()
    except BenchError as e:
        print(f"fs bench: FAILED: {e}", file=sys.stderr)
        for st in stacks:
            if st.server.proc is not None and st.server.proc.poll() is not None:
                print(f"{st.label} log: {st.server.log_text()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(f"fs bench: interrupted ({e or 'SIGINT'}); cleaning up", file=sys.stderr)
        return 130
    finally:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        for st in reversed(stacks):
            st.teardown()
        if not cfg.keep:
            shutil.rmtree(cfg.workdir, ignore_errors=True)
    for st in stacks:
        p = st.server.proc
        if st.server.pool is not None and p is not None and p.returncode not in (0, None):
            print(f"fs bench: {st.label} exited {p.returncode} after SIGTERM", file=sys.stderr)
            rc = 1
    return rc


def record(runs, row, st, m, i, cfg):
    if "stats" in m:
        m["where"] = where(m)
    runs[row][st.label].append(m)
    key, unit, _ = METRIC[row]
    extra = ""
    if "where" in m:
        w = m["where"]
        extra = (f"; arcstore: {w['requests']:,} NBD requests ({w['write_ops']:,} writes, "
                 f"{w['flush_ops']:,} flushes, {w['read_ops']:,} reads), server share "
                 f"{w['server_share']:.0%}, errors {w['errors']}")
    print(f"[{time.monotonic() - T0:5.0f} s] run {i + 1}/{cfg.runs} {row} {st.label}: "
          f"{m[key]:,.1f} {unit}, "
          f"latency {m['lat_us']:,.0f} us, server CPU {m['server_cpu_s']:.1f} s, wall "
          f"{m['wall_s']:.1f} s (load {m['load1']:.1f}){extra}", flush=True)


if __name__ == "__main__":
    own_mount_namespace()
    sys.exit(main(sys.argv[1:]))
