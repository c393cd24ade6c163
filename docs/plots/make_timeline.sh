#!/usr/bin/env bash
# Reproduces docs/plots/seeds-timeline.svg and timeline-figures.txt: the
# seeds' job as `arcstore bench` runs it with no job file (a temporary
# pool written once, the 1 MiB fill of its 1 GiB volume, then 4 KiB random
# writes at QD1 for 20 s), twice: with the defaults, and with
# `--arc-pretouch 3G` (the ARC's memory written once before the jobs, as a
# server that has been up a few seconds has it). Each run writes fio's
# bandwidth and latency logs in 500 ms windows, the pool's txg syncs
# (X_txg.2.log: the random-write job is fio's thread 2, after the fill) and
# the machine's stalls (X_stalls.2.log); `arcstore plot timeline` draws the
# two side by side.
#
# Needs gnuplot-nox (scripts/setup) and a built arcstore; about 2 minutes and
# 8 GiB of disk in the temporary folder for each pool (one at a time). The
# logs and the plot data stay in $WORK.
#
#   docs/plots/make_timeline.sh                  (from the repository root)
#   docs/plots/make_timeline.sh --figures-only   (timeline-figures.txt again from $WORK)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ARCSTORE=${ARCSTORE:-$ROOT/build/release/arcstore}
WORK=${WORK:-/var/tmp/arcstore-timeline}
A=$WORK/default
B=$WORK/pretouch

run() {  # PREFIX [bench options]
  local p=$1
  shift
  (cd "$WORK" && "$ARCSTORE" bench --write_bw_log="$p" --write_iops_log="$p" --write_lat_log="$p" \
    --log_avg_msec=500 "$@" >"$p.report.txt")
}

if [[ "${1:-}" != "--figures-only" ]]; then
  rm -rf "$WORK"
  mkdir -p "$WORK"
  run "$A"
  run "$B" --arc-pretouch 3G
  "$ARCSTORE" plot timeline "$A" "$B" -o "$WORK/seeds-timeline" --width 1600 --height 800 \
    --labels "defaults,--arc-pretouch 3G"
  cp "$WORK/seeds-timeline.svg" "$HERE/seeds-timeline.svg"
fi

figures() {  # PREFIX TITLE
  local p=$1
  echo "[$2]"
  # The issue's figures: windows against their mean, and the job's tail.
  python3 - "$p"_bw.2.log "$p"_lat.2.log <<'PY'
import statistics, sys
bw = [int(l.split(",")[1]) / 1024 for l in open(sys.argv[1])]
lat = [int(l.split(",")[1]) / 1e6 for l in open(sys.argv[2])]
m = statistics.mean(bw)
print(f"bandwidth windows: {len(bw)}, mean {m:.0f} MiB/s, lowest {min(bw):.0f} MiB/s "
      f"({100 * min(bw) / m:.0f}% of the mean) at {bw.index(min(bw)) * 0.5 + 0.5:.1f} s, "
      f"stdev {100 * statistics.pstdev(bw) / m:.0f}% of the mean; "
      f"from the third window on: lowest {min(bw[2:]):.0f} MiB/s ({100 * min(bw[2:]) / m:.0f}%)")
print(f"latency windows (mean per window): highest {max(lat):.3f} ms")
PY
  awk -F', ' '/^#/ { next } { n++; d += $3 - $2 } END { printf "txg syncs meeting the job: %d, mean sync %.2f s\n", n, d / n / 1000 }' "$p"_txg.2.log
  sed -n '/^randwrite-4K/,/^  cpu/p' "$p.report.txt" | grep -E "^  write: IOPS|99\.99th|^    clat \(" | sed 's/^ *//'
  # The random-write job's summary (it has a hit ratio only when it read).
  grep -E "^  arcstore     : (ARC hit|c=)" "$p.report.txt" | tail -1 | sed 's/^ *//'
  grep -E "^  machine      :" "$p.report.txt" | tail -1 | sed 's/^ *//'
}

{
  figures "$A" "seeds' job, defaults: arcstore bench --write_bw_log=P --write_lat_log=P --log_avg_msec=500"
  echo
  figures "$B" "seeds' job, arcstore bench ... --arc-pretouch 3G"
} | tee "$HERE/timeline-figures.txt"
