#!/usr/bin/env python3
"""The engine's replacement policies side by side (bench/cache-policy/README.md).

Runs each scenario with `arcstore bench --arc-policy arc` and `--arc-policy
duet` on a fresh sparse pool, pairs alternating (arc, duet, arc, duet, ...),
and prints per job: IOPS and the share of reads that hit. A pool whose reads
take at least --read-latency (bench --pool-read-latency) makes every miss at
least that slow, so a job's hits are its reads completed faster than that,
counted from fio's latency histogram (json+ bins). The seed's job (4 KiB
random writes) runs with each policy too, without the latency floor: its
IOPS should not depend on the policy.

    bench/cache-policy/run.py [--pairs N] [--runtime S] [--scenarios mix,loop,seed] [--arcstore PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run_bench(arcstore, job, policy, env, workdir, tag, extra):
    out = os.path.join(workdir, f"{tag}-{policy}.json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [arcstore, "bench", job, "--sparse", "--arc-policy", policy,
           "--output-format", "json+", "--output", out, "--stats"] + extra
    proc = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    stats = {}
    for line in proc.stderr.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].lstrip("-").isdigit():
            stats.setdefault(parts[0], int(parts[2]))  # the first module listing it: arcstats
    with open(out) as f:
        return json.load(f), stats


def job_figures(report, name, floor_ns):
    for j in report["jobs"]:
        if j["jobname"] != name:
            continue
        side = j["read"] if j["read"]["io_bytes"] > 0 else j["write"]
        bins = side.get("clat_ns", {}).get("bins", {})
        total = sum(bins.values())
        fast = sum(c for v, c in bins.items() if int(v) < floor_ns)
        return side["iops"], (fast / total if total else float("nan"))
    sys.exit(f"job {name} not in the report")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arcstore", default=os.path.join(ROOT, "build/release/arcstore"))
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=30)
    ap.add_argument("--arc-max", default="256M")
    ap.add_argument("--read-latency", default="2ms")
    ap.add_argument("--seed-runtime", type=int, default=20)
    ap.add_argument("--scenarios", default="mix,loop,seed",
                    help="comma-separated, of mix, loop and seed")
    args = ap.parse_args()
    wanted = args.scenarios.split(",")
    for w in wanted:
        if w not in ("mix", "loop", "seed"):
            ap.error(f"--scenarios: unknown scenario '{w}' (mix, loop, seed)")
    floor_ns = int(args.read_latency.rstrip("ms")) * 1_000_000
    workdir = tempfile.mkdtemp(prefix="arcstore-policy-bench.")
    env = {"RUNTIME": str(args.runtime), "HOT": "128M", "SCAN": "1G", "LOOP": "384M"}
    slow = ["--arc-max", args.arc_max, "--pool-read-latency", args.read_latency]
    scenarios = [
        ("mix", os.path.join(HERE, "mix.fio"), ["hot", "scan"], slow),
        ("loop", os.path.join(HERE, "loop.fio"), ["loop"], slow),
        ("seed", os.path.join(ROOT, "examples/jobs/seed000-randwrite-4k.fio"), ["randwrite-4K"],
         ["--max-runtime", f"{args.seed_runtime}s"]),
    ]
    scenarios = [s for s in scenarios if s[0] in wanted]
    results = {}  # (scenario, job, policy) -> [(iops, hit share)]
    for tag, job, names, extra in scenarios:
        for _ in range(args.pairs):
            for policy in ("arc", "duet"):
                report, stats = run_bench(args.arcstore, job, policy, env, workdir, tag, extra)
                for n in names:
                    results.setdefault((tag, n, policy), []).append(job_figures(report, n, floor_ns))
                if tag == "seed":
                    print(f"# seed {policy}: IOPS {results[(tag, names[0], policy)][-1][0]:.0f}",
                          flush=True)
                else:
                    print(f"# {tag} {policy}: arcstats hits {stats.get('hits')} misses {stats.get('misses')}"
                          f" duet_leader {stats.get('duet_leader', '-')}"
                          f" duet_evict_lirs {stats.get('duet_evict_lirs', '-')}", flush=True)
    print(f"\nmedian of {args.pairs} pairs; ARC max {args.arc_max}; pool reads >= {args.read_latency}"
          " (seed: this machine's disk)")
    print(f"{'scenario':8} {'job':13} {'arc IOPS':>10} {'duet IOPS':>10} {'ratio':>6}"
          f" {'arc hit%':>9} {'duet hit%':>9}")
    for tag, _, names, _ in scenarios:
        for n in names:
            a = results[(tag, n, "arc")]
            d = results[(tag, n, "duet")]
            ai = statistics.median(x[0] for x in a)
            di = statistics.median(x[0] for x in d)
            hits = ""
            if tag != "seed":
                hits = (f" {100 * statistics.median(x[1] for x in a):9.1f}"
                        f" {100 * statistics.median(x[1] for x in d):9.1f}")
            print(f"{tag:8} {n:13} {ai:10.0f} {di:10.0f} {di / ai:6.2f}{hits}")
    print(f"work dir: {workdir}")


if __name__ == "__main__":
    main()
