#!/usr/bin/env bash
# The second cache level, measured with `arcstore bench` (bench/l2arc/README.md):
# 4 KiB random reads over a working set four times the ARC, with and without a
# cache device, on a pool whose reads take at least LATENCY (an injected
# device latency: io/slow_device.h), and on this machine's disk as it is.
#   bench/l2arc/run.sh [WORK_DIR] [LATENCY]     (defaults: a new /tmp dir, 8ms)
# Prints one line per phase: IOPS, and the ARC's and the cache device's hits.
set -euo pipefail
A=$(realpath "${ARCSTORE:-$(dirname "$0")/../../build/release/arcstore}")
HERE=$(cd "$(dirname "$0")" && pwd)
W=${1:-$(mktemp -d /tmp/arcstore-l2bench.XXXXXX)}
LAT=${2:-8ms}
mkdir -p "$W"
cd "$W"
rm -f pool c1 c2 ./*.log
"$A" bench "$HERE/fill.fio" --pool "$W/pool" --sparse >fill.out 2>&1 || { cat fill.out >&2; exit 1; }
truncate -s 512M c1 c2

# phase NAME RUNTIME [bench options...]: one run of the random reads.
phase() {
  local name=$1 rt=$2
  shift 2
  RUNTIME=$rt LOG=$name "$A" bench "$HERE/randread-4k-qd16.fio" --pool "$W/pool" --arc-max 64M \
    --stats "$@" >"$name.out" 2>"$name.err"
  local iops hits misses l2h l2m l2s hdr
  iops=$(sed -n 's/.*read: IOPS=\([^,]*\),.*/\1/p' "$name.out")
  hits=$(awk '$1 == "hits" { print $3; exit }' "$name.err")
  misses=$(awk '$1 == "misses" { print $3; exit }' "$name.err")
  l2h=$(awk '$1 == "l2_hits" { print $3; exit }' "$name.err")
  l2m=$(awk '$1 == "l2_misses" { print $3; exit }' "$name.err")
  l2s=$(awk '$1 == "l2_size" { print $3; exit }' "$name.err")
  hdr=$(awk '$1 == "l2_hdr_size" { print $3; exit }' "$name.err")
  printf '%-18s IOPS %-6s ARC hits %-7s misses %-7s L2 hits %-7s misses %-7s size %-10s headers %s\n' \
    "$name" "$iops" "$hits" "$misses" "${l2h:--}" "${l2m:--}" "${l2s:--}" "${hdr:--}"
}
# Per-second IOPS of a phase, "second:iops ...".
series() { awk -F, '{ printf "%d:%d ", $1 / 1000, $2 } END { print "" }' "$1_iops.1.log"; }

echo "== pool reads take at least $LAT"
phase slow-nocache-warm 40 --pool-read-latency "$LAT"
phase slow-nocache 20 --pool-read-latency "$LAT"
phase slow-cache-cold 40 --pool-read-latency "$LAT" --cache-device "$W/c1"
phase slow-cache 20 --pool-read-latency "$LAT"
echo "per second, a cold cache device:   $(series slow-cache-cold)"
echo "per second, after a restart:       $(series slow-cache)"
"$A" pool remove-cache "$W/pool" "$W/c1" >/dev/null
echo "== this machine's disk"
phase disk-cache-cold 40 --cache-device "$W/c2"
phase disk-cache 20
"$A" pool remove-cache "$W/pool" "$W/c2" >/dev/null
phase disk-nocache-warm 20
phase disk-nocache 20
"$A" pool info "$W/pool" | tail -n +1 >/dev/null
echo "work dir: $W"
