#!/usr/bin/env bash
# Benchmark: 4 KiB random writes and reads at iodepth 1 and 32 through
# fio's nbd engine over a unix socket, against the arcstore NBD server on an
# in-memory volume (nbd_test_server) and against `nbdkit memory` (the
# protocol's ceiling: data in RAM, nothing persisted), in one run. Both
# exports are 1 GiB and filled with random data first. Runs alternate
# between the servers; each row is the median of REPS runs.
#
#   nbd_fio.sh NBD_TEST_SERVER [RUNTIME_S=10] [RAMP_S=2] [REPS=3]
# SERVER_ARGS adds arguments to the server (e.g. "--threads 2" to complete
# on worker threads as the engine does, instead of inline).
set -euo pipefail
SERVER=$1
RUNTIME=${2:-10}
RAMP=${3:-2}
REPS=${4:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /tmp/nbd_bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"' EXIT

"$SERVER" --socket "$W/ours.sock" --export vol:1G:128K ${SERVER_ARGS:-} >"$W/ours.out" &
pids+=($!)
nbdkit -f -U "$W/peer.sock" memory 1G &
pids+=($!)
for _ in $(seq 500); do
  nbdinfo --size "nbd+unix:///vol?socket=$W/ours.sock" >/dev/null 2>&1 &&
    nbdinfo --size "nbd+unix:///?socket=$W/peer.sock" >/dev/null 2>&1 && break
  sleep 0.01
done
head -c 1G /dev/urandom >"$W/fill.img"
nbdcopy -C 4 "$W/fill.img" "nbd+unix:///vol?socket=$W/ours.sock"
nbdcopy -C 4 "$W/fill.img" "nbd+unix:///?socket=$W/peer.sock"
rm -f "$W/fill.img"

for row in "randwrite 1" "randwrite 32" "randread 1" "randread 32"; do
  set -- $row
  for rep in $(seq "$REPS"); do
    for target in ours peer; do
      if [[ $target == ours ]]; then uri="nbd+unix:///vol?socket=$W/ours.sock";
      else uri="nbd+unix:///?socket=$W/peer.sock"; fi
      NBD_URI=$uri RW=$1 DEPTH=$2 RUNTIME=$RUNTIME RAMP=$RAMP \
        fio --output-format=json --output="$W/$target.$1.$2.$rep.json" "$HERE/rand4k.fio" >/dev/null
    done
  done
done

/usr/bin/python3 - "$W" "$REPS" <<'PY'
import json, statistics, sys
w, reps = sys.argv[1], int(sys.argv[2])
def row(target, rw, depth):
    runs = []
    for rep in range(1, reps + 1):
        j = json.load(open(f"{w}/{target}.{rw}.{depth}.{rep}.json"))["jobs"][0]
        d = j["write" if rw == "randwrite" else "read"]
        pct = d["clat_ns"]["percentile"]
        runs.append((d["iops"], pct["50.000000"] / 1000, pct["99.000000"] / 1000))
    runs.sort()
    return runs[len(runs) // 2]
print(f"{'row':<16} {'arcstore IOPS':>14} {'p50 us':>8} {'p99 us':>8} "
      f"{'nbdkit IOPS':>12} {'p50 us':>8} {'p99 us':>8} {'ratio':>6}")
for rw in ("randwrite", "randread"):
    for depth in (1, 32):
        o, p = row("ours", rw, depth), row("peer", rw, depth)
        print(f"{rw + ' QD' + str(depth):<16} {o[0]:>14.0f} {o[1]:>8.1f} {o[2]:>8.1f} "
              f"{p[0]:>12.0f} {p[1]:>8.1f} {p[2]:>8.1f} {o[0] / p[0]:>6.2f}")
PY
