#!/usr/bin/env bash
# fio's nbd engine: random 4 KiB writes with verify=crc32c over 4
# connections (one per job, each on its own quarter), at queue depths 1, 8
# and 32, against a server completing out of order on 2 threads.
source "$(dirname "$0")/lib.sh"
require fio

S=$NBD_WORK/s.sock
start_server "$S" --export vol:64M:16K --threads 2
for depth in 1 8 32; do
  fio --name=verify --ioengine=nbd --uri="$(uri "$S" vol)" --rw=randwrite --bs=4k \
    --iodepth=$depth --numjobs=4 --size=16M --offset_increment=16M --io_size=8M \
    --verify=crc32c --verify_fatal=1 --do_verify=1 --group_reporting \
    --output-format=json --output="$NBD_WORK/fio.$depth.json" >"$NBD_WORK/fio.$depth.err" 2>&1 ||
    { cat "$NBD_WORK/fio.$depth.err"; fail "fio at iodepth $depth"; }
  /usr/bin/python3 - "$NBD_WORK/fio.$depth.json" "$depth" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["error"]
written = j["write"]["io_bytes"]
read = j["read"]["io_bytes"]
assert written == 4 * 8 << 20, written  # 8 MiB per job
assert read >= written * 0.99, (read, written)  # verify read back what it wrote
print(f"fio iodepth {sys.argv[2]}: wrote {written >> 20} MiB, verified {read >> 20} MiB")
PY
done
stop_server
echo PASS
