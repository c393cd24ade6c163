#!/usr/bin/env bash
# The same verifying job (4 KiB random writes, verify=crc32c) through
# `arcstore bench` in-process, and through real fio's nbd engine against
# `arcstore serve` on the same pool: both must verify clean, and the pool
# must check clean afterwards.
#   $1: the arcstore binary.
set -euo pipefail
ARCSTORE=$1
command -v fio >/dev/null || { echo "FAIL: fio is not installed (scripts/setup installs it)"; exit 1; }
W=$(mktemp -d)
trap 'kill $SERVE 2>/dev/null || true; rm -rf "$W"' EXIT
SERVE=
P=$W/pool
JOB=(--name=verify --size=32m --rw=randwrite --bs=4k --verify=crc32c --do_verify=1
     --verify_fatal=1)

"$ARCSTORE" bench --pool "$P" --sparse "${JOB[@]}" --filename=vol --output-format=json --output="$W/bench.json" \
  >"$W/bench.out" 2>&1 || { cat "$W/bench.out"; echo "FAIL: arcstore bench"; exit 1; }
/usr/bin/python3 - "$W/bench.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["error"]
assert j["write"]["io_bytes"] == 32 << 20, j["write"]["io_bytes"]
print("arcstore bench: wrote and verified 32 MiB, %.0f write IOPS" % j["write"]["iops"])
PY

S=$W/s.sock
"$ARCSTORE" serve "$P" --socket "$S" >"$W/serve.out" 2>"$W/serve.err" &
SERVE=$!
for _ in $(seq 1 2000); do
  grep -q '^serving ' "$W/serve.out" 2>/dev/null && break
  kill -0 "$SERVE" 2>/dev/null || { cat "$W/serve.err"; echo "FAIL: serve exited"; exit 1; }
  sleep 0.01
done
fio "${JOB[@]}" --ioengine=nbd --uri="nbd+unix:///vol?socket=$S" \
  --output-format=json --output="$W/fio.json" >"$W/fio.out" 2>&1 ||
  { cat "$W/fio.out"; echo "FAIL: fio against arcstore serve"; exit 1; }
/usr/bin/python3 - "$W/fio.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["error"]
assert j["read"]["io_bytes"] == 32 << 20, j["read"]["io_bytes"]
print("fio over NBD: wrote and verified 32 MiB, %.0f write IOPS" % j["write"]["iops"])
PY
kill -TERM "$SERVE"
wait "$SERVE" || { echo "FAIL: serve exited non-zero after SIGTERM"; exit 1; }
SERVE=
"$ARCSTORE" fsck "$P" >"$W/fsck.out" || { cat "$W/fsck.out"; echo "FAIL: fsck"; exit 1; }
echo PASS
