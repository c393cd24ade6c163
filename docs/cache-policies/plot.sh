#!/bin/sh
# Draws the hit-ratio curve of an `arcstore sim ... --json FILE` as an SVG
# next to it (FILE.svg): one line per policy, cache size (pages, log scale)
# across, hit ratio (percent) up. Needs python3 and gnuplot.
#   docs/cache-policies/plot.sh docs/cache-policies/p12.json
set -eu
for json in "$@"; do
  data=$(mktemp)
  python3 - "$json" > "$data" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
by_policy = {}
for row in doc["curve"]:
    by_policy.setdefault(row["policy"], []).append((row["cache_pages"], 100.0 * row["ratio"]))
for policy, rows in by_policy.items():
    print(f'"{policy}"')
    for c, r in sorted(rows):
        print(c, r)
    print()
    print()
PY
  last=$(($(grep -c '^"' "$data") - 1))
  gnuplot <<GP
set terminal svg size 720,440 dynamic
set output "$json.svg"
set title "$(basename "$json" .json): hit ratio by cache size"
set xlabel "cache size (pages)"
set ylabel "hit ratio (%)"
set logscale x 2
set key outside right
set grid
plot for [i=0:$last] "$data" index i using 1:2 with linespoints title columnheader(1)
GP
  rm -f "$data"
done
