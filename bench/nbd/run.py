#!/usr/bin/env python3
"""The NBD benchmark table (issue 6, "Numbers to report"): fio's nbd engine
over a unix socket against `arcstore serve` and its peers.

For each server: a fresh backing file under --workdir, the server started on
a unix socket, the export filled with random data (nbdcopy), then every row
(bench/nbd/*.fio) --runs times. Runs go round-robin (run 1 of every row on
every server, then run 2, ...), so that a slow minute of a shared machine
does not land on one server only. Each figure of the table is the median of
its runs, figure by figure. Prints a markdown table, the ratios of arcstore
to each peer, whether each goal of the issue is met, and the load average
seen; --json writes every run with the configuration.

  bench/nbd/run.py [--runs 3] [--runtime 30] [--ramp 5] [--rows a,b]
                   [--servers a,b] [--quick] [--json OUT]

See bench/nbd/README.md.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

ROWS = ["randwrite-4k-qd1", "randwrite-4k-qd32", "randread-4k-qd1", "randread-4k-qd32",
        "write-1m-qd8", "randwrite-4k-fsync", "randwrite-4k-fsync-8j"]
QUICK_ROWS = ["randwrite-4k-qd1", "randread-4k-qd32"]
# Every server the issue names; "arcstore-mem" (nbd_test_server: the same
# NBD server over an in-memory volume) is there to tell the protocol
# server's cost from the engine's, and runs only when asked for.
SERVERS = ["arcstore", "nbdkit-file", "nbdkit-memory", "qemu-qcow2", "qemu-raw"]
OPTIONAL_SERVERS = ["arcstore-mem"]
DISK_PEERS = ["nbdkit-file", "qemu-qcow2", "qemu-raw"]
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 300
SETTLE_TIMEOUT_S = 600
# Where arcstore serve ran each request (src/nbd/server.cc, "Requests run
# inline"): printed per run as a share of the row's requests.
INLINE_STATS = ["nbd.requests_inline", "nbd.requests_may_wait"]


class BenchError(Exception):
    pass


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().rstrip("B").rstrip("I")
    try:
        if t and t[-1] in units:
            return int(t[:-1]) * units[t[-1]]
        return int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 1G, 64M)")


def run_cmd(args, what, timeout_s=600, env=None):
    """Runs a command to completion; a failure names the command and its stderr."""
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s, env=env)
    except FileNotFoundError:
        raise BenchError(f"{what}: program not found: {args[0]} (scripts/setup installs it)")
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what}: {' '.join(args)} did not finish within {timeout_s} s")
    if p.returncode != 0:
        raise BenchError(f"{what}: {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


class Server:
    """One NBD server on a unix socket with a fresh backing file."""

    def __init__(self, name, cfg):
        self.name, self.cfg = name, cfg
        self.dir = tempfile.mkdtemp(prefix=f"nbdbench.{name}.", dir=cfg.workdir)
        self.sock = os.path.join(self.dir, "nbd.sock")
        self.export = ""
        self.proc = None
        self.pool = None
        self.log = open(os.path.join(self.dir, "server.log"), "w")

    @property
    def uri(self):
        return f"nbd+unix:///{self.export}?socket={self.sock}"

    def command(self):
        c, d = self.cfg, self.dir
        size = str(c.size)
        if self.name == "arcstore":
            pool = os.path.join(d, "bench.pool")
            run_cmd([c.arcstore, "pool", "create", pool, "--size", str(c.pool_size)], "pool create")
            run_cmd([c.arcstore, "vol", "create", pool, "vol", "--size", size,
                     "--recordsize", c.recordsize, "--compression", c.compression], "vol create")
            self.export = "vol"
            self.pool = pool
            return [c.arcstore, "serve", pool, "--socket", self.sock]
        if self.name == "arcstore-mem":
            self.export = "vol"
            return [c.nbd_test_server, "--socket", self.sock, "--export",
                    f"vol:{size}:{c.recordsize}", "--threads", "2"]
        if self.name == "nbdkit-file":
            img = os.path.join(d, "disk.img")
            with open(img, "wb") as f:
                f.truncate(c.size)
            return ["nbdkit", "-f", "-U", self.sock, "file", img]
        if self.name == "nbdkit-memory":
            return ["nbdkit", "-f", "-U", self.sock, "memory", size]
        fmt, cache = {"qemu-qcow2": ("qcow2", "writeback"), "qemu-raw": ("raw", "none")}[self.name]
        img = os.path.join(d, "disk." + fmt)
        run_cmd(["qemu-img", "create", "-q", "-f", fmt, img, size], "qemu-img create")
        return ["qemu-nbd", "--persistent", "--shared=16", "--socket", self.sock,
                "--format", fmt, "--cache", cache, img]

    def start(self):
        cmd = self.command()
        if not shutil.which(cmd[0]) and not os.access(cmd[0], os.X_OK):
            raise BenchError(f"{self.name}: program not found: {cmd[0]} "
                             "(scripts/setup installs it)")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.name}: exited {self.proc.returncode} at start: "
                                 f"{self.log_text()}")
            if os.path.exists(self.sock) and subprocess.run(
                    ["nbdinfo", "--size", self.uri], capture_output=True).returncode == 0:
                return
            time.sleep(0.05)
        raise BenchError(f"{self.name}: not serving on {self.sock} after {START_TIMEOUT_S} s")

    def fill(self, image):
        run_cmd(["nbdcopy", "--flush", image, self.uri], f"{self.name}: fill", timeout_s=1800)

    def settle(self):
        """Waits until arcstore has synced what the fill left dirty (its
        control socket's txg.dirty_bytes is 0), so that the first rows do
        not pay for the fill. The other servers have nothing to wait for
        that a client could see."""
        if self.pool is None:
            return
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while time.monotonic() < deadline:
            dirty = self.live_stats(["txg.dirty_bytes"])["txg.dirty_bytes"]
            if dirty == 0:
                return
            time.sleep(0.5)
        raise BenchError(f"{self.name}: dirty data not synced {SETTLE_TIMEOUT_S} s after the fill")

    def live_stats(self, names, required=True):
        """The running arcstore serve's stats `names` ("module.name"), read
        through its control socket; None when one is missing and not
        `required`."""
        out = run_cmd([self.cfg.arcstore, "stat", self.pool, "--json", "--live"],
                      f"{self.name}: stat")
        stats = json.loads(out.splitlines()[0])["stats"]
        got = {f"{s['module']}.{s['name']}": s.get("value") for s in stats}
        missing = [n for n in names if n not in got]
        if missing and not required:
            return None
        if missing:
            raise BenchError(f"{self.name}: no {', '.join(missing)} in arcstore stat --json")
        return {n: got[n] for n in names}

    def inline_counters(self):
        """Requests run on the connection thread and requests submitted on
        the volume's "may wait" so far (None: not arcstore, or a binary
        older than these stats)."""
        if self.pool is None:
            return None
        return self.live_stats(INLINE_STATS, required=False)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise BenchError(f"{self.name}: did not exit within {STOP_TIMEOUT_S} s of SIGTERM")

    def log_text(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read().strip()[-2000:]

    def cleanup(self):
        try:
            self.stop()
        finally:
            self.log.close()
            if not self.cfg.keep:
                shutil.rmtree(self.dir, ignore_errors=True)


def cpu_seconds(pid):
    """User plus system CPU time of process `pid` (all its threads) so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fio_run(server, row, cfg):
    """One fio run of one row; returns the figures the table shows."""
    env = dict(os.environ, NBD_URI=server.uri, RUNTIME=str(cfg.runtime), RAMP=str(cfg.ramp),
               SIZE=str(cfg.size))
    job = os.path.join(HERE, row + ".fio")
    load = os.getloadavg()[0]
    cpu0, t0 = cpu_seconds(server.proc.pid), time.monotonic()
    out = run_cmd(["fio", "--output-format=json", job], f"{server.name} {row}",
                  timeout_s=cfg.runtime + cfg.ramp + 120, env=env)
    # The server's CPU over the whole fio run (ramp included), in CPUs.
    cpus = (cpu_seconds(server.proc.pid) - cpu0) / (time.monotonic() - t0)
    j = json.loads(out[out.index("{"):])["jobs"][0]
    if j["error"] != 0:
        raise BenchError(f"{server.name} {row}: fio job error {j['error']}")
    d = j["read" if "read" in row else "write"]
    pct = d["clat_ns"].get("percentile", {})
    us = lambda key: pct.get(key, 0) / 1000.0
    return {"iops": d["iops"], "mibps": d["bw_bytes"] / (1 << 20), "p50_us": us("50.000000"),
            "p99_us": us("99.000000"), "p999_us": us("99.900000"), "server_cpus": cpus,
            "load1": load}


def median_row(runs):
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def fmt(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def print_table(results, cfg):
    print(f"\n## NBD benchmark: median of {cfg.runs} run(s), runtime {cfg.runtime} s, "
          f"ramp {cfg.ramp} s, export {cfg.size >> 20} MiB\n")
    print("| row | server | IOPS | MiB/s | p50 us | p99 us | p99.9 us | server CPUs | "
          "load avg (1 min) |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for row in cfg.rows:
        for s in cfg.servers:
            m = results[row][s]
            print(f"| {row} | {s} | {fmt(m['iops'])} | {fmt(m['mibps'])} | {fmt(m['p50_us'])} | "
                  f"{fmt(m['p99_us'])} | {fmt(m['p999_us'])} | {m['server_cpus']:.2f} | "
                  f"{m['load1']:.1f} |")


def print_ratios(results, cfg):
    if "arcstore" not in cfg.servers:
        return
    peers = [s for s in cfg.servers if s != "arcstore"]
    if not peers:
        return
    print("\n### arcstore / peer (IOPS; p50 latency in brackets, lower is better)\n")
    print("| row | " + " | ".join(peers) + " |")
    print("|---|" + "--:|" * len(peers))
    for row in cfg.rows:
        a = results[row]["arcstore"]
        cells = []
        for p in peers:
            b = results[row][p]
            iops = a["iops"] / b["iops"] if b["iops"] else float("inf")
            lat = a["p50_us"] / b["p50_us"] if b["p50_us"] else float("inf")
            cells.append(f"{iops:.2f} ({lat:.2f})")
        print(f"| {row} | " + " | ".join(cells) + " |")


def goals(results, cfg):
    """The issue's goals that the rows and servers run can decide: (text, met)."""
    out = []
    have = lambda row, *servers: row in cfg.rows and all(s in cfg.servers for s in servers)
    disk = [p for p in DISK_PEERS if p in cfg.servers]
    iops = lambda row, s: results[row][s]["iops"]
    if have("randwrite-4k-qd32", "arcstore") and disk:
        best = max(disk, key=lambda p: iops("randwrite-4k-qd32", p))
        a, b = iops("randwrite-4k-qd32", "arcstore"), iops("randwrite-4k-qd32", best)
        out.append((f"randwrite-4k-qd32 ahead of every disk-backed peer: {a:,.0f} vs {best} "
                    f"{b:,.0f} IOPS", a > b))
    if have("randwrite-4k-qd1", "arcstore", "nbdkit-memory"):
        a, b = iops("randwrite-4k-qd1", "arcstore"), iops("randwrite-4k-qd1", "nbdkit-memory")
        out.append((f"randwrite-4k-qd1 within 10% of nbdkit-memory: {a:,.0f} vs {b:,.0f} IOPS "
                    f"({a / b:.2f})", a >= 0.9 * b))
    if have("write-1m-qd8", "arcstore", "nbdkit-file"):
        a = results["write-1m-qd8"]["arcstore"]["mibps"]
        b = results["write-1m-qd8"]["nbdkit-file"]["mibps"]
        out.append((f"write-1m-qd8 at least 90% of nbdkit-file: {a:,.0f} vs {b:,.0f} MiB/s "
                    f"({a / b:.2f})", a >= 0.9 * b))
    for row in ("randread-4k-qd1", "randread-4k-qd32", "randwrite-4k-fsync"):
        if have(row, "arcstore") and disk:
            best = max(disk, key=lambda p: iops(row, p))
            a, b = iops(row, "arcstore"), iops(row, best)
            out.append((f"{row} at least as fast as the fastest disk-backed peer: {a:,.0f} vs "
                        f"{best} {b:,.0f} IOPS", a >= b))
    # The intent log issue's goal: flushes from one client and from eight.
    for row in ("randwrite-4k-fsync", "randwrite-4k-fsync-8j"):
        if have(row, "arcstore", "nbdkit-file"):
            a, b = iops(row, "arcstore"), iops(row, "nbdkit-file")
            out.append((f"{row} at least 1.5x nbdkit-file: {a:,.0f} vs {b:,.0f} IOPS "
                        f"({a / b:.2f})", a >= 1.5 * b))
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs per row and server (median)")
    ap.add_argument("--runtime", type=int, default=30, help="fio runtime per run, seconds")
    ap.add_argument("--ramp", type=int, default=5, help="fio ramp_time per run, seconds")
    ap.add_argument("--size", type=parse_size, default=1 << 30, help="export size (1G)")
    ap.add_argument("--rows", default=",".join(ROWS), help="rows (job file names), comma-separated")
    ap.add_argument("--servers", default=",".join(SERVERS),
                    help="servers, comma-separated, of " + ", ".join(SERVERS + OPTIONAL_SERVERS))
    ap.add_argument("--quick", action="store_true",
                    help="runtime 2 s, no ramp, 1 run, rows " + ",".join(QUICK_ROWS) + ", 64 MiB")
    ap.add_argument("--arcstore", default=os.path.join(REPO, "build/release/arcstore"))
    ap.add_argument("--nbd-test-server",
                    default=os.path.join(REPO, "build/release/testing/nbd/nbd_test_server"))
    ap.add_argument("--recordsize", default="64K",
                    help="record size of the arcstore volume (64K: see README.md)")
    ap.add_argument("--compression", default="lz4", choices=["lz4", "zstd", "off"],
                    help="compression of the arcstore volume (lz4, the engine's default)")
    ap.add_argument("--pool-size", type=parse_size, default=None,
                    help="arcstore pool file size (default: 8 x the export, at least 256M)")
    ap.add_argument("--workdir", default="/var/tmp", help="where backing files go")
    ap.add_argument("--keep", action="store_true", help="keep backing files and server logs")
    ap.add_argument("--json", help="write every run and the configuration here")
    cfg = ap.parse_args(argv)
    if cfg.quick:
        cfg.runtime, cfg.ramp, cfg.runs, cfg.size = 2, 0, 1, 64 << 20
        if cfg.rows == ",".join(ROWS):
            cfg.rows = ",".join(QUICK_ROWS)
    cfg.rows = [r for r in cfg.rows.split(",") if r]
    cfg.servers = [s for s in cfg.servers.split(",") if s]
    for r in cfg.rows:
        if not os.path.exists(os.path.join(HERE, r + ".fio")):
            ap.error(f"--rows: no job file {r}.fio in {HERE}")
    for s in cfg.servers:
        if s not in SERVERS + OPTIONAL_SERVERS:
            known = ", ".join(SERVERS + OPTIONAL_SERVERS)
            ap.error(f"--servers: unknown server {s!r} (known: {known})")
    if cfg.runs < 1 or cfg.runtime < 1 or cfg.ramp < 0:
        ap.error("--runs and --runtime must be >= 1, --ramp >= 0")
    if cfg.size < (1 << 20) or cfg.size % 4096:
        ap.error(f"--size: {cfg.size} bytes is not a multiple of 4 KiB of at least 1 MiB")
    if cfg.pool_size is None:
        # Copy-on-write with frees deferred two txgs: rewriting the whole
        # export within a txg (the 1 MiB row does) needs the live copy, the
        # new one and two deferred ones at once. With 3x the pool ran out of
        # space (ENOSPC) in the fsync row after the 1 MiB row.
        cfg.pool_size = max(8 * cfg.size, 256 << 20)
    return cfg


def make_image(cfg):
    """A file of random bytes, the size of the export, to fill every export with."""
    os.makedirs(cfg.workdir, exist_ok=True)  # a --workdir that does not exist yet
    fd, path = tempfile.mkstemp(prefix="nbdbench.fill.", dir=cfg.workdir)
    with os.fdopen(fd, "wb") as f:
        left = cfg.size
        while left > 0:
            n = min(left, 8 << 20)
            f.write(os.urandom(n))
            left -= n
    return path


def main(argv):
    cfg = parse_args(argv)
    print(f"nbd bench: servers {','.join(cfg.servers)}; rows {','.join(cfg.rows)}; "
          f"runs {cfg.runs}; runtime {cfg.runtime} s; ramp {cfg.ramp} s; export {cfg.size} "
          f"bytes; arcstore recordsize {cfg.recordsize}, compression {cfg.compression}; "
          f"load average at start {os.getloadavg()}", flush=True)
    servers, image = [], None
    runs = {r: {s: [] for s in cfg.servers} for r in cfg.rows}
    try:
        image = make_image(cfg)
        for name in cfg.servers:
            s = Server(name, cfg)
            servers.append(s)
            s.start()
            t0 = time.monotonic()
            s.fill(image)
            s.settle()
            print(f"{name}: serving {s.uri}, filled in {time.monotonic() - t0:.1f} s", flush=True)
        for i in range(cfg.runs):
            for row in cfg.rows:
                for s in servers:
                    before = s.inline_counters()
                    m = fio_run(s, row, cfg)
                    where = ""
                    if before is not None:
                        after = s.inline_counters()
                        m["inline"], m["may_wait"] = (after[k] - before[k] for k in INLINE_STATS)
                        where = f", inline {m['inline']:,}, submitted on may-wait {m['may_wait']:,}"
                    runs[row][s.name].append(m)
                    print(f"run {i + 1}/{cfg.runs} {row} {s.name}: {m['iops']:,.0f} IOPS "
                          f"{m['mibps']:,.1f} MiB/s p50 {m['p50_us']:.1f} us "
                          f"p99 {m['p99_us']:.1f} us (load {m['load1']:.1f}){where}", flush=True)
        # Report before stopping: arcstore syncs what is dirty on the way out.
        report(runs, cfg)
        for s in servers:
            s.stop()
    except BenchError as e:
        print(f"nbd bench: FAILED: {e}", file=sys.stderr)
        for s in servers:
            if s.proc is not None and s.proc.poll() is not None:
                print(f"{s.name} log: {s.log_text()}", file=sys.stderr)
        return 1
    finally:
        for s in servers:
            try:
                s.cleanup()
            except BenchError as e:
                print(f"nbd bench: {e}", file=sys.stderr)
        if image:
            os.unlink(image)
    return 0


def report(runs, cfg):
    results = {r: {s: median_row(runs[r][s]) for s in cfg.servers} for r in cfg.rows}
    print_table(results, cfg)
    print_ratios(results, cfg)
    met = goals(results, cfg)
    if met:
        print("\n### goals (issue 6)\n")
        for text, ok in met:
            print(f"- {'met' if ok else 'NOT met'}: {text}")
    print(f"\nload average at end: {os.getloadavg()} on {os.cpu_count()} CPUs")
    if cfg.json:
        conf = {k: v for k, v in vars(cfg).items() if k != "json"}
        with open(cfg.json, "w") as f:
            json.dump({"config": conf, "runs": runs, "median": results,
                       "goals": [{"goal": t, "met": ok} for t, ok in met]}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
