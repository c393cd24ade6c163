#!/bin/sh
# fio's log files end to end (ctest bench_logs_cli_smoke): a short windowed
# job on a temporary sparse pool writes DIR/r_bw.1.log, r_lat.1.log,
# r_txg.1.log and r_stalls.1.log; `plot timeline` draws them; a second run onto the same files
# is refused, naming the option, and --force replaces them. A run with
# --arc-pretouch cuts the job's new buffers from the pretouched reserve.
#
#   logs_smoke.sh ARCSTORE DIR
set -eu
arcstore=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir"
set -- --sparse --name=t --filename=v --size=16m --rw=randwrite --bs=4k --time_based --runtime=1 \
  --write_bw_log="$dir/r" --write_lat_log="$dir/r" --log_avg_msec=250
"$arcstore" bench "$@" >/dev/null
# 1 s in 250 ms windows: 4 write rows "T, KiB/s, 1, 0, 0".
rows=$(grep -c '^[0-9]*, [0-9]*, 1, 0, 0$' "$dir/r_bw.1.log")
test "$rows" -eq 4 || { echo "r_bw.1.log: $rows rows, want 4"; cat "$dir/r_bw.1.log"; exit 1; }
head -1 "$dir/r_txg.1.log" | grep -q '^# arcstore txg syncs'
head -1 "$dir/r_stalls.1.log" | grep -q '^# arcstore machine stalls'
"$arcstore" plot timeline "$dir/r" -o "$dir/t" >/dev/null
test -s "$dir/t.png" && test -s "$dir/t.svg"
if "$arcstore" bench "$@" >"$dir/again.txt" 2>&1; then
  echo "a second run replaced the logs without --force"; exit 1
fi
grep -q "option 'write_bw_log' of job 't'" "$dir/again.txt" || { cat "$dir/again.txt"; exit 1; }
"$arcstore" bench "$@" --force >/dev/null
set -- --sparse --name=p --filename=v --size=16m --rw=randwrite --bs=4k --time_based --runtime=1
"$arcstore" bench "$@" --arc-pretouch 32M --output-format json >"$dir/pretouch.json"
python3 - "$dir/pretouch.json" <<'PY'
import json, sys
arc = json.load(open(sys.argv[1]))["jobs"][0]["arcstore"]["stats_delta"]["arcstats"]
hits = arc["buf_reserve_hits"]
if hits <= 0:
    sys.exit(f"--arc-pretouch 32M: no buffer cut from the reserve (buf_reserve_hits {hits}, buf_maps {arc['buf_maps']})")
PY
echo ok
