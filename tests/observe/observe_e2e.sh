#!/usr/bin/env bash
# The observability tools against a running `arcstore serve`, end to end:
# stat / iostat / txgs / summary / doctor read it through its control socket
# while it serves, stat --json samples make a plot, and its --metrics
# endpoint passes `promtool check metrics`. SIGTERM removes the socket.
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/../nbd/lib.sh"
require /usr/bin/python3 promtool gnuplot
[[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"

P=$NBD_WORK/p.pool
S=$NBD_WORK/s.sock
"$ARCSTORE" pool create "$P" --size 256M --sparse >/dev/null
"$ARCSTORE" vol create "$P" vol0 --size 32M --recordsize 64K >/dev/null
# Thin provisioning is allowed, and said so.
"$ARCSTORE" vol create "$P" big --size 1G 2>"$NBD_WORK/big.err" >/dev/null || fail "vol create big"
grep -q "larger than the pool's free space" "$NBD_WORK/big.err" || fail "no thin warning: $(cat "$NBD_WORK/big.err")"
"$ARCSTORE" vol destroy "$P" big >/dev/null || fail "vol destroy big"

"$ARCSTORE" serve "$P" --socket "$S" --metrics 127.0.0.1:0 >"$NBD_WORK/serve.out" 2>"$NBD_WORK/serve.err" &
NBD_SERVER_PID=$!
for _ in $(seq 1 1000); do
  grep -q '^metrics http://' "$NBD_WORK/serve.out" 2>/dev/null && break
  kill -0 "$NBD_SERVER_PID" 2>/dev/null || { cat "$NBD_WORK/serve.err" >&2; fail "serve exited at start"; }
  sleep 0.01
done
grep -q "^control socket $P.ctl\$" "$NBD_WORK/serve.out" || fail "no control socket line: $(cat "$NBD_WORK/serve.out")"
URL=$(sed -n 's/^metrics \(http:.*\)$/\1/p' "$NBD_WORK/serve.out")
[[ -n "$URL" ]] || fail "serve did not print its metrics address"

# The per-I/O trace: a pool built without Pool::StartTrace says so; with it,
# the writes below land in the file and plot latency draws them.
TRACING=0
if "$ARCSTORE" trace start "$P" --output "$NBD_WORK/t.trace" >"$NBD_WORK/trace.out" 2>&1; then
  TRACING=1
else
  grep -q 'no per-I/O trace' "$NBD_WORK/trace.out" || fail "trace start: $(cat "$NBD_WORK/trace.out")"
fi

/usr/bin/python3 - "$S" <<'PY'
import nbd, sys
h = nbd.NBD(); h.set_export_name("vol0"); h.connect_unix(sys.argv[1])
h.pwrite(b"\xa5" * (4 << 20), 0)
h.pwrite(b"\x5a" * 4096, 100 * 4096)   # a partial record: read-modify-write
h.flush()
assert h.pread(4096, 100 * 4096) == b"\x5a" * 4096
PY

if [[ $TRACING -eq 1 ]]; then
  "$ARCSTORE" trace stop "$P" >/dev/null || fail "trace stop"
  [[ $(head -1 "$NBD_WORK/t.trace") == "# arcstore io trace v3" ]] || fail "trace header"
  n=$(grep -c '^I	' "$NBD_WORK/t.trace" || true)
  [[ $n -gt 0 ]] || fail "no I/O in the trace"
  # The application's two writes, as the volume ran them (W lines).
  w=$(grep -c '^W	' "$NBD_WORK/t.trace" || true)
  [[ $w -ge 2 ]] || fail "the trace has $w application writes, want at least 2"
  grep -q '^W	[0-9]*	[0-9]*	write	409600	4096	' "$NBD_WORK/t.trace" || fail "no W line for the 4 KiB write"
  "$ARCSTORE" plot latency "$NBD_WORK/t.trace" -o "$NBD_WORK/lat" | grep -q "($((n + w)) points" || fail "plot latency"
fi

# stat: header, then one row per interval.
out=$("$ARCSTORE" stat "$P" -f time,read,hit%,arcsz,c,dirty,dlim,txg 0.1 2)
[[ $(wc -l <<<"$out") -eq 3 ]] || fail "stat printed: $out"
head -1 <<<"$out" | grep -Eq '^ +time +read +hit% +arcsz +c +dirty +dlim +txg$' || fail "stat header: $out"

# stat --json: samples (the first at once), which plot reads.
"$ARCSTORE" stat "$P" --json 0.1 3 >"$NBD_WORK/samples"
[[ $(grep -c '"format":"arcstore-stats-v1"' "$NBD_WORK/samples") -eq 4 ]] || fail "stat --json samples"
# Without INTERVAL: one snapshot, and no second one after it.
[[ $("$ARCSTORE" stat "$P" --json | grep -c '"format":"arcstore-stats-v1"') -eq 1 ]] ||
  fail "stat --json without INTERVAL printed other than one snapshot"
"$ARCSTORE" plot arc "$NBD_WORK/samples" -o "$NBD_WORK/arc" | grep -q '(4 points' || fail "plot arc"
[[ -s "$NBD_WORK/arc.png" && -s "$NBD_WORK/arc.svg" ]] || fail "plot arc wrote no image"

"$ARCSTORE" iostat "$P" -l -q 0.1 1 | grep -q '^p.pool ' || fail "iostat has no pool row"
"$ARCSTORE" txgs "$P" | head -1 | grep -Eq '^txg +birth +state +ndirty' || fail "txgs header"
"$ARCSTORE" summary "$P" --live | grep -q '^Dirty data and throttle' || fail "summary POOL"
"$ARCSTORE" doctor --pool "$P" --live >"$NBD_WORK/doctor" || fail "doctor --live: $(cat "$NBD_WORK/doctor")"
grep -q 'source: arcstore stats registry' "$NBD_WORK/doctor" || fail "doctor did not read the server"

# Prometheus: promtool's linter passes on the endpoint's output.
/usr/bin/python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "$URL" >"$NBD_WORK/metrics"
grep -q '^# TYPE arcstore_arcstats_size_bytes gauge$' "$NBD_WORK/metrics" || fail "no arcstats size gauge"
grep -q '^arcstore_volumes_rmw_reads_total ' "$NBD_WORK/metrics" || fail "no rmw counter"
promtool check metrics <"$NBD_WORK/metrics" || fail "promtool check metrics"

# Nothing a command writes lands on the served pool: pool create (even with
# --force) and a trace aimed at the pool's own file are refused, exit 3.
pool_bytes=$(stat -c %s "$P")
rc=0; "$ARCSTORE" pool create "$P" --force >"$NBD_WORK/create.out" 2>&1 || rc=$?
[[ $rc -eq 3 ]] || fail "pool create over the served pool: exit $rc: $(cat "$NBD_WORK/create.out")"
grep -q 'in use' "$NBD_WORK/create.out" || fail "pool create over the served pool: $(cat "$NBD_WORK/create.out")"
rc=0; "$ARCSTORE" trace start "$P" --output "$P" --force >"$NBD_WORK/trace2.out" 2>&1 || rc=$?
[[ $rc -eq 3 ]] || fail "trace onto the pool: exit $rc: $(cat "$NBD_WORK/trace2.out")"
[[ $(stat -c %s "$P") -eq $pool_bytes ]] || fail "the served pool's file changed size"
# With --control the pool may be left out: INTERVAL COUNT stay what they are.
out=$(timeout 30 "$ARCSTORE" stat --control "$P.ctl" -f time,read 0.1 2) || fail "stat --control 0.1 2"
[[ $(wc -l <<<"$out") -eq 3 ]] || fail "stat --control 0.1 2 printed: $out"
rc=0; "$ARCSTORE" stat 1 2 >/dev/null 2>&1 || rc=$?
[[ $rc -eq 64 ]] || fail "stat 1 2 (no pool named 1): exit $rc, want the usage code 64"
# pool info and vol list read the served pool through its control socket.
"$ARCSTORE" pool info "$P" >"$NBD_WORK/info" || fail "pool info of the served pool: $(cat "$NBD_WORK/info")"
grep -q '^pending free:' "$NBD_WORK/info" || fail "pool info: $(cat "$NBD_WORK/info")"
"$ARCSTORE" vol list "$P" | grep -q '^vol0 ' || fail "vol list of the served pool"
"$ARCSTORE" doctor --control "$P.ctl" >"$NBD_WORK/doctor2" || fail "doctor --control: $(cat "$NBD_WORK/doctor2")"
# Plot outputs are new files: the same prefix again needs --force.
rc=0; "$ARCSTORE" plot arc "$NBD_WORK/samples" -o "$NBD_WORK/arc" >"$NBD_WORK/plot2" 2>&1 || rc=$?
[[ $rc -eq 3 ]] || fail "plot over existing outputs: exit $rc: $(cat "$NBD_WORK/plot2")"
"$ARCSTORE" plot arc "$NBD_WORK/samples" -o "$NBD_WORK/arc" --force | grep -q '(4 points' || fail "plot --force"

kill -TERM "$NBD_SERVER_PID"
wait "$NBD_SERVER_PID" || fail "serve exited with $?"
NBD_SERVER_PID=""
[[ ! -e "$P.ctl" ]] || fail "control socket left behind"
"$ARCSTORE" doctor --live --pool "$P" >/dev/null 2>&1 && fail "doctor --live without a server succeeded"
# Without a server the tools open the pool in-process, read-only.
"$ARCSTORE" doctor --pool "$P" >"$NBD_WORK/doctor" || fail "doctor --pool at rest: $(cat "$NBD_WORK/doctor")"
grep -q 'cold_cache' "$NBD_WORK/doctor" || fail "doctor --pool at rest: not a cold cache"
"$ARCSTORE" txgs "$P" | grep -Eq '^[0-9]+ +[0-9]+ +O ' || fail "txgs at rest: no open txg"
echo "observe e2e: ok"
