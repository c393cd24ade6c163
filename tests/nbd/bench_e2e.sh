#!/usr/bin/env bash
# The NBD benchmark runner (bench/nbd/run.py) in quick mode: every server of
# the table starts, is filled and serves fio's nbd engine, and the runner
# prints a row of figures for each. Then the same over TCP between two
# network namespaces, plaintext and with TLS required (--transport
# tcp-netns --tls both), for arcstore and nbdkit file. Not a performance
# assertion. Exits 77 with the reason, after the unix socket part, where
# network namespaces cannot be made (not root, no CAP_SYS_ADMIN, no veth).
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
        # fio's one-second samples: the slowest is at most the mean.
        low = m["low_second_pct"]
        assert low != low or 0 <= low <= 100.5, (row, s, low)
        # The runner's machine-stall watch (one run: the median is the run).
        assert m["machine_stall_worst_ms"] <= m["machine_stall_ms"] + 1e-6, (row, s, m)
        assert (m["machine_stalls"] == 0) == (m["machine_stall_ms"] == 0), (row, s, m)
        line = re.search(rf"^\| {row} \| {s} \| [0-9,.]+ \| [0-9,.]+ \| [0-9,.]+ \| [0-9,.]+ \| "
                         rf"[0-9,.]+ \| ([0-9]+|-) \| [0-9.]+ \| [0-9.]+ \|$", out, re.M)
        assert line, f"no table row for {row} {s}"
for p in servers[1:]:
    assert re.search(rf"^\| row \|.*\b{p}\b", out, re.M), f"no ratio column for {p}"
assert len(re.findall(r"^run 1/1 .*, machine stalls of 10 ms or more [0-9]+ \(", out, re.M)) == \
    len(rows) * len(servers), "a run line without its machine stalls"
assert "### goals" in out and "randwrite-4k-qd1 within 10% of nbdkit-memory" in out
print(f"every server's rows printed: {len(rows)} rows x {len(servers)} servers")
PY

# TCP between two namespaces, plaintext and TLS.
PROBE=nbdbench_probe_$$
if ! ip netns add "$PROBE" 2>"$NBD_WORK/ns.err"; then
  echo "SKIP: the tcp-netns transport: ip netns add: $(cat "$NBD_WORK/ns.err")"
  exit 77
fi
ip -n "$PROBE" link add probe0 type veth peer name probe1 2>"$NBD_WORK/ns.err" ||
  { ip netns del "$PROBE"; echo "SKIP: the tcp-netns transport: veth pair: $(cat "$NBD_WORK/ns.err")"; exit 77; }
ip netns del "$PROBE"
require ip setpriv certtool psktool
ip netns list | grep -o '^nbdbench_[sc]_[0-9]*' | sort >"$NBD_WORK/ns.before" || true
/usr/bin/python3 "$RUNNER" --quick --transport tcp-netns --tls both --servers arcstore,nbdkit-file \
  --rows randwrite-4k-qd1 --arcstore "$ARCSTORE" --workdir "$NBD_WORK" \
  --json "$NBD_WORK/tls.json" >"$NBD_WORK/tls.out" 2>&1 ||
  { cat "$NBD_WORK/tls.out"; fail "the runner failed over tcp-netns"; }
cat "$NBD_WORK/tls.out"
ip netns list | grep -o '^nbdbench_[sc]_[0-9]*' | sort >"$NBD_WORK/ns.after" || true
cmp -s "$NBD_WORK/ns.before" "$NBD_WORK/ns.after" ||
  fail "namespaces left behind: $(comm -13 "$NBD_WORK/ns.before" "$NBD_WORK/ns.after")"
/usr/bin/python3 - "$NBD_WORK/tls.json" "$NBD_WORK/tls.out" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
labels = ["arcstore", "arcstore+tls", "nbdkit-file", "nbdkit-file+tls"]
assert j["config"]["labels"] == labels, j["config"]["labels"]
row = "randwrite-4k-qd1"
for s in labels:
    m = j["median"][row][s]
    assert m["iops"] > 0 and m["p50_us"] > 0 and m["cpu_us_per_req"] > 0, (s, m)
    assert re.search(rf"^\| {row} \| {re.escape(s)} \| [0-9,.]+ \|", out, re.M), s
for s in ["arcstore", "nbdkit-file"]:
    assert re.search(rf"^\| {row} \| {s} \| [0-9,.]+ \| [0-9,.]+ \| -?[0-9.]+% \| [0-9.]+ \| "
                     rf"[0-9.]+ \| [0-9.]+ \|$", out, re.M), f"no TLS row for {s}"
assert "### goals (issue 28)" in out
assert "TLS costs arcstore at most 10%" in out and "at least as fast as the faster TLS peer" in out
# The TLS server really negotiated TLS: its own stats say so.
m = re.search(r"^arcstore\+tls TLS sessions \(arcstore stat, nbd_tls\): (.*)$", out, re.M)
assert m and re.search(r"version_TLS1_[23] [1-9]", m.group(1)), "arcstore+tls had no TLS session"
assert re.search(r"ktls_\w+ [1-9]", m.group(1)), "no kernel TLS offload stat"
print("tcp-netns: plaintext and TLS rows printed for arcstore and nbdkit-file; TLS negotiated")
PY
echo PASS
