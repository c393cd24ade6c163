#!/usr/bin/env bash
# Reproduces docs/plots/seeds-timeline.svg and timeline-figures.txt: the
# seeds' job as `arcstore bench` runs it with no job file (a temporary
# pool written once, the 1 MiB fill of its 1 GiB volume, then 4 KiB random
# writes at QD1 for 20 s), with fio's bandwidth, IOPS and latency logs in
# 500 ms windows and the pool's txg syncs (P_txg.2.log: the random-write job
# is fio's thread 2, after the fill), then `arcstore plot timeline` on them.
#
# Needs gnuplot-nox (scripts/setup) and a built arcstore; about 2 minutes and
# 8 GiB of disk in the temporary folder for the pool. The logs and the plot
# data stay in $WORK.
#
#   docs/plots/make_timeline.sh                  (from the repository root)
#   docs/plots/make_timeline.sh --figures-only   (timeline-figures.txt again from $WORK)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ARCSTORE=${ARCSTORE:-$ROOT/build/release/arcstore}
WORK=${WORK:-/var/tmp/arcstore-timeline}
P=$WORK/seed

if [[ "${1:-}" != "--figures-only" ]]; then
  rm -rf "$WORK"
  mkdir -p "$WORK"
  (cd "$WORK" && "$ARCSTORE" bench --write_bw_log="$P" --write_iops_log="$P" --write_lat_log="$P" \
    --log_avg_msec=500 >"$WORK/report.txt")
  "$ARCSTORE" plot timeline "$P" -o "$WORK/seeds-timeline" --width 1400 --height 800 \
    --labels "seeds job: 4 KiB random writes at QD1, 20 s, 500 ms windows"
  cp "$WORK/seeds-timeline.svg" "$HERE/seeds-timeline.svg"
fi

{
  echo "[seeds' job: arcstore bench --write_bw_log=P --write_iops_log=P --write_lat_log=P --log_avg_msec=500]"
  awk -F', ' '{ n++; s += $2; if (min == "" || $2 < min) { min = $2; tmin = $1 } if ($2 > max) { max = $2; tmax = $1 }
               if ($2 < 1024) low++ }
    END { printf "bandwidth windows: %d, mean %.1f MiB/s, min %.3f MiB/s at %.1f s, max %.1f MiB/s at %.1f s, %d windows below 1 MiB/s\n",
                 n, s / n / 1024, min / 1024, tmin / 1000, max / 1024, tmax / 1000, low }' "$P"_bw.2.log
  awk -F', ' '{ if ($2 > max) { max = $2; tmax = $1 } if (min == "" || $2 < min) min = $2 }
    END { printf "latency windows (mean lat per window): min %.3f ms, max %.1f ms at %.1f s\n", min / 1e6, max / 1e6, tmax / 1000 }' "$P"_lat.2.log
  awk -F', ' '/^#/ { next } { n++; d = $3 - $2; printf "txg %s (%s): quiesce %.2f s, sync %.2f s .. %.2f s (%.2f s), dirtied %.0f MiB, wrote %.0f MiB\n",
                 $4, $5, $1 / 1000, $2 / 1000, $3 / 1000, d / 1000, $6 / 1048576, $7 / 1048576 }
    END { printf "txg syncs meeting the job: %d\n", n }' "$P"_txg.2.log
  grep -E "^  write: IOPS|^   bw \(" "$WORK/report.txt" | tail -2
} | tee "$HERE/timeline-figures.txt"
