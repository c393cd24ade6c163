#!/usr/bin/env bash
# The NBD benchmark runner (bench/nbd/run.py) in quick mode: every server of
# the table starts, is filled and serves fio's nbd engine, and the runner
# prints a row of figures for each. Not a performance assertion.
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
require /usr/bin/python3 fio nbdkit nbdcopy nbdinfo qemu-nbd qemu-img
[[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"
RUNNER=$(cd "$(dirname "$0")/../../bench/nbd" && pwd)/run.py

/usr/bin/python3 "$RUNNER" --quick --arcstore "$ARCSTORE" --workdir "$NBD_WORK" \
  --json "$NBD_WORK/bench.json" >"$NBD_WORK/bench.out" 2>&1 ||
  { cat "$NBD_WORK/bench.out"; fail "the runner failed"; }
cat "$NBD_WORK/bench.out"
/usr/bin/python3 - "$NBD_WORK/bench.json" "$NBD_WORK/bench.out" <<'PY'
import json, os, re, sys
j = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
servers = ["arcstore", "nbdkit-file", "nbdkit-memory", "qemu-qcow2", "qemu-raw"]
rows = ["randwrite-4k-qd1", "randread-4k-qd32"]
assert j["config"]["servers"] == servers, j["config"]["servers"]
assert j["config"]["rows"] == rows, j["config"]["rows"]
for row in rows:
    for s in servers:
        m = j["median"][row][s]
        assert m["iops"] > 0 and m["p50_us"] > 0 and m["p99_us"] >= m["p50_us"], (row, s, m)
        # Serving takes some CPU; no more than the machine has.
        assert 0 < m["server_cpus"] <= os.cpu_count() + 0.5, (row, s, m["server_cpus"])
        line = re.search(rf"^\| {row} \| {s} \| [0-9,.]+ \| [0-9,.]+ \| [0-9,.]+ \| [0-9,.]+ \| "
                         rf"[0-9,.]+ \| [0-9.]+ \| [0-9.]+ \|$", out, re.M)
        assert line, f"no table row for {row} {s}"
for p in servers[1:]:
    assert re.search(rf"^\| row \|.*\b{p}\b", out, re.M), f"no ratio column for {p}"
assert "### goals" in out and "randwrite-4k-qd1 within 10% of nbdkit-memory" in out
print(f"every server's rows printed: {len(rows)} rows x {len(servers)} servers")
PY
echo PASS
