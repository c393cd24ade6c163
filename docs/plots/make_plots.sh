#!/usr/bin/env bash
# Reproduces the figures in docs/plots/ (issue 10's closing note): the seeds'
# job (examples/jobs/seed000-randwrite-4k.fio, 4 KiB random writes at QD1 on a
# 1 GiB volume) run with real fio over NBD against `arcstore serve`, after the
# 1 MiB sequential fill of issue 5 (examples/jobs/fill-1g.fio), twice:
#
#   healthy   arcstore serve POOL                 (the ARC's default size)
#   arc256m   arcstore serve POOL --arc-max 256M  (the ARC smaller than the volume)
#
# Each run: a new pool in $WORK, serve, fill, then during the job a per-I/O
# trace (arcstore trace start|stop) and stats samples (arcstore stat --json);
# after it the txg history (arcstore txgs), teardown, and the plots
# (arcstore plot latency|arc|throttle, then sizes for the two traces).
# The images (SVG; PNG for the latency plots) go to docs/plots/ beside this script; the traces, samples,
# fio reports and plot data stay in $WORK. The figures quoted in
# docs/plots/README.md are printed at the end and kept in figures.txt.
#
# Needs: fio with its nbd engine, gnuplot-nox and jq (scripts/setup), and a
# built arcstore. About 2 x (fill + RUNTIME_S + 10 s) and 2 x POOL_SIZE of
# disk in $WORK.
#
#   docs/plots/make_plots.sh                         (from the repository root)
#   docs/plots/make_plots.sh --figures-only          (figures.txt again from $WORK)
#   ARCSTORE=/path/to/arcstore RUNTIME_S=30 docs/plots/make_plots.sh
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ARCSTORE=${ARCSTORE:-$ROOT/build/release/arcstore}
WORK=${WORK:-/var/tmp/arcstore-plots}
OUT=${OUT:-$HERE}
RUNTIME_S=${RUNTIME_S:-25}       # the job's runtime (the job file says 60 s)
SAMPLE_S=${SAMPLE_S:-0.5}        # seconds between stats samples
POOL_SIZE=${POOL_SIZE:-4G}
FILL_JOB=$ROOT/examples/jobs/fill-1g.fio
SEED_JOB=$ROOT/examples/jobs/seed000-randwrite-4k.fio
VOLUME=vol1g                     # the fill job's volume; the seed job is pointed at it

for tool in "$ARCSTORE" fio gnuplot jq; do
  command -v "$tool" >/dev/null || { echo "make_plots: $tool not found (scripts/setup; build arcstore)" >&2; exit 1; }
done
fio --enghelp=nbd >/dev/null 2>&1 || { echo "make_plots: this fio has no nbd engine" >&2; exit 1; }
mkdir -p "$WORK" "$OUT"

SERVER_PID=""
STAT_PID=""
cleanup() {
  if [[ -n $STAT_PID ]]; then kill "$STAT_PID" 2>/dev/null || true; wait "$STAT_PID" 2>/dev/null || true; fi
  if [[ -n $SERVER_PID ]]; then kill -INT "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  STAT_PID="" SERVER_PID=""
}
trap cleanup EXIT

# Waits (at most 30 s) for the server's NBD and control sockets.
wait_for_sockets() {
  local i
  for ((i = 0; i < 300; i++)); do
    [[ -S $1 && -S $2 ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "make_plots: arcstore serve exited" >&2; return 1; }
    sleep 0.1
  done
  echo "make_plots: no sockets $1 $2 after 30 s" >&2
  return 1
}

# run NAME [serve options...]
run() {
  local name=$1
  shift
  local pool=$WORK/$name.pool sock=$WORK/$name.sock ctl=$WORK/$name.ctl
  local uri="nbd+unix:///$VOLUME?socket=$sock"
  echo "== $name: arcstore serve $* =="
  rm -f "$pool" "$sock" "$ctl" "$WORK/$name".*
  "$ARCSTORE" pool create "$pool" --size "$POOL_SIZE"
  "$ARCSTORE" vol create "$pool" "$VOLUME" --size 1G --recordsize 128K

  "$ARCSTORE" serve "$pool" --socket "$sock" --control "$ctl" "$@" 2>"$WORK/$name.serve.log" &
  SERVER_PID=$!
  wait_for_sockets "$sock" "$ctl"

  # The fill, as `arcstore bench --print-fio-command` writes it for this server.
  local fill
  fill=$("$ARCSTORE" bench "$FILL_JOB" --print-fio-command --nbd-socket "$sock")
  eval "$fill --output-format=json --output=$WORK/$name.fill.json"

  "$ARCSTORE" trace start "$pool" --control "$ctl" --output "$WORK/$name.trace"
  "$ARCSTORE" stat "$pool" --control "$ctl" --live --json "$SAMPLE_S" >"$WORK/$name.samples.jsonl" &
  STAT_PID=$!
  # The seeds' job; options after the job's own override them: the runtime,
  # and the volume (the job file names the seeds' raw.bin).
  local job
  job=$("$ARCSTORE" bench "$SEED_JOB" --print-fio-command --nbd-socket "$sock")
  # fio's latency log keeps the largest latency of every 100 ms (NAME_lat.1.log).
  eval "$job --runtime=$RUNTIME_S '--uri=$uri' --output-format=json --output=$WORK/$name.job.json" \
    "--write_lat_log=$WORK/$name --log_avg_msec=100 --log_max_value=1"
  # Two samples after the job: the last txg sync shows.
  sleep "$SAMPLE_S"; sleep "$SAMPLE_S"
  kill "$STAT_PID"; wait "$STAT_PID" || true; STAT_PID=""
  "$ARCSTORE" trace stop "$pool" --control "$ctl"

  "$ARCSTORE" txgs "$pool" --control "$ctl" --live >"$WORK/$name.txgs.txt"
  "$ARCSTORE" txgs "$pool" --control "$ctl" --live --json >"$WORK/$name.txgs.json"
  kill -INT "$SERVER_PID"; wait "$SERVER_PID"; SERVER_PID=""
  rm -f "$pool"

  "$ARCSTORE" plot latency "$WORK/$name.trace" -o "$WORK/$name-latency" --title "I/O latency, $name"
  "$ARCSTORE" plot arc "$WORK/$name.samples.jsonl" -o "$WORK/$name-arc" --title "ARC size and c, $name"
  "$ARCSTORE" plot throttle "$WORK/$name.samples.jsonl" -o "$WORK/$name-throttle" \
    --title "dirty data and throttle, $name"
}

# The figures quoted in README.md, for one run.
figures() {
  local name=$1 w=$WORK/$1
  echo "[$name]"
  jq -r '.jobs[0].write | "job: \(.iops | floor) IOPS (4 KiB writes), latency mean \(.lat_ns.mean / 1000 | floor) us, " +
    "p99 \(.clat_ns.percentile."99.000000" / 1000 | floor) us, p99.9 \(.clat_ns.percentile."99.900000" / 1000 | floor) us, " +
    "max \(.lat_ns.max / 1000000 * 10 | floor / 10) ms"' "$w.job.json"
  sort -t, -k2,2 -n -r "${w}_lat.1.log" | head -3 |
    awk -F', *' '{ printf "%s%.0f ms at %.1f s", (NR > 1 ? ", " : "largest 100 ms-window latencies: "), $2 / 1e6, $1 / 1e3 } END { print "" }'

  jq -r '.jobs[0].write | "fill: \(.bw_bytes / 1048576 | floor) MiB/s"' "$w.fill.json"
  # Syncs during the traced job, by the reason the txg history gives.
  # (and the writers' waits in those txgs: the throttle's delay and the ARC's dirty limit)
  jq -r '.[] | "\(.txg) \(.reason) \(.delay_ns) \(.arc_limit_wait_ns) \(.stime_ns)"' "$w.txgs.json" |
    awk 'NR == FNR { if ($1 == "T" && $3 == "sync_start") traced[$4] = 1; next }
         $1 in traced { n[$2]++; t++; delay += $3; arcwait += $4; stime += $5 }
         END {
           printf "txg syncs during the job: %d", t; for (r in n) printf ", %s %d", r, n[r]
           printf "; mean sync time %.0f ms\n", t ? stime / t / 1e6 : 0
           printf "writers waited in those txgs: throttle delay %.0f ms, ARC dirty limit %.0f ms\n", delay / 1e6, arcwait / 1e6
         }' FS='\t' "$w.trace" FS=' ' -
  awk -F'\t' '$1 == "I" {
      n[$5]++; b[$5] += $8; all += $8; if ($8 >= 524288) big += $8
      if ($6 == "write") { wall += $8; if ($8 >= 524288) wbig += $8 }
      lat = ($4 - $2) / 1e6; if (lat > max) { max = lat; what = $5 " " $8 " B" }
    }
    END {
      printf "device I/Os: "; sep = ""
      for (c in n) { printf "%s%s %d (%.0f MiB)", sep, c, n[c], b[c] / 1048576; sep = ", " }
      printf "\nshare of bytes in I/Os >= 512 KiB: %.1f%% of all bytes, %.1f%% of written bytes\n",
        all ? 100 * big / all : 0, wall ? 100 * wbig / wall : 0
      printf "largest device I/O latency: %.1f ms (%s)\n", max, what
    }' "$w.trace"
  jq -rs '"ARC size at the end \(.[-1].stats[] | select(.module == "arcstats" and .name == "size") | .value / 1048576 | floor) MiB, c \(.[-1].stats[] | select(.module == "arcstats" and .name == "c") | .value / 1048576 | floor) MiB"' "$w.samples.jsonl"
}

if [[ ${1:-} != --figures-only ]]; then
  run healthy
  run arc256m --arc-max 256M
  "$ARCSTORE" plot sizes "$WORK/healthy.trace" "$WORK/arc256m.trace" -o "$WORK/sizes" \
    --labels "healthy,--arc-max 256M" --title "device I/O sizes during the job"
  # The latency plots have one point per device I/O: tens of thousands, too
  # many for a small SVG, so those two are PNG.
  for plot in healthy-latency arc256m-latency; do cp "$WORK/$plot.png" "$OUT/"; done
  for plot in healthy-arc arc256m-arc healthy-throttle arc256m-throttle sizes; do cp "$WORK/$plot.svg" "$OUT/"; done
fi
{ figures healthy; figures arc256m; } | tee "$OUT/figures.txt"
