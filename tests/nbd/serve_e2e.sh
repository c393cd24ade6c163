#!/usr/bin/env bash
# arcstore serve on a real pool:
#  - multi-conn durability: data written on one connection and flushed on
#    another (and a FUA write never flushed) survive a SIGKILL of the server;
#  - SIGTERM: exit status 0, the pool checks clean, the data is there;
#  - fio with verify: 4 KiB random writes at queue depth 32, 1 MiB writes
#    received into the engine's own record buffers.
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
require /usr/bin/python3 nbdinfo
[[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"

P=$NBD_WORK/p.pool
S=$NBD_WORK/s.sock
"$ARCSTORE" pool create "$P" --size 256M >/dev/null
"$ARCSTORE" vol create "$P" vol0 --size 32M --recordsize 64K >/dev/null

serve() {
  arcstore_serve "$NBD_WORK/serve" "$P" --socket "$S"
  NBD_SERVER_PID=$ARCSTORE_PID
}

py() { /usr/bin/python3 - "$S" "$NBD_WORK" "$@"; }

serve
py write <<'PY'
import nbd, sys, random
sock, work = sys.argv[1], sys.argv[2]
def conn():
    h = nbd.NBD(); h.set_export_name("vol0"); h.connect_unix(sock); return h
a, b = conn(), conn()
assert a.can_multi_conn()
rng = random.Random(1)
data = rng.randbytes(3 << 20)
a.pwrite(data[:2 << 20], 1 << 20)             # written on A...
b.flush()                                      # ...made durable by a flush on B
a.pwrite(data[2 << 20:], 8 << 20, nbd.CMD_FLAG_FUA)   # FUA, never flushed
open(work + "/expect", "wb").write(data)
print("wrote 3 MiB over two connections")
PY
kill -KILL "$NBD_SERVER_PID"
wait "$NBD_SERVER_PID" 2>/dev/null || true
NBD_SERVER_PID=""

serve
py check <<'PY'
import nbd, sys
sock, work = sys.argv[1], sys.argv[2]
h = nbd.NBD(); h.set_export_name("vol0"); h.connect_unix(sock)
want = open(work + "/expect", "rb").read()
assert h.pread(2 << 20, 1 << 20) == want[:2 << 20], "flushed data lost after SIGKILL"
assert h.pread(1 << 20, 8 << 20) == want[2 << 20:], "FUA data lost after SIGKILL"
h.pwrite(b"\x5a" * 65536, 0)
print("durable data present after SIGKILL")
PY
kill -TERM "$NBD_SERVER_PID"
rc=0
wait "$NBD_SERVER_PID" || rc=$?
NBD_SERVER_PID=""
[[ $rc -eq 0 ]] || { cat "$NBD_WORK/serve.err" >&2; fail "serve exited $rc after SIGTERM"; }
"$ARCSTORE" fsck "$P" >"$NBD_WORK/fsck.out" || { cat "$NBD_WORK/fsck.out"; fail "fsck after SIGTERM"; }
grep -q '^clean$' "$NBD_WORK/fsck.out" || { cat "$NBD_WORK/fsck.out"; fail "pool not clean"; }

serve
py after_term <<'PY'
import nbd, sys
sock = sys.argv[1]
h = nbd.NBD(); h.set_export_name("vol0"); h.connect_unix(sock)
assert h.pread(65536, 0) == b"\x5a" * 65536, "write before SIGTERM lost"
print("data present after SIGTERM and reopen")
PY
# The engine's own choice of thread (server.cc, "Requests run inline"):
# random reads of the cold volume at queue depth 32 (misses: submitted),
# then 4 KiB random writes into 64 KiB records (partial copies) with
# verify=crc32c at queue depth 32 over 4 connections (run inline).
require fio
fio --name=cold --ioengine=nbd --uri="$(uri "$S" vol0)" --rw=randread --bs=4k \
  --iodepth=32 --size=32M --io_size=4M --output="$NBD_WORK/fio.cold" >"$NBD_WORK/fio.err" 2>&1 ||
  { cat "$NBD_WORK/fio.err"; fail "fio random reads against arcstore serve"; }
fio --name=verify --ioengine=nbd --uri="$(uri "$S" vol0)" --rw=randwrite --bs=4k \
  --iodepth=32 --numjobs=4 --size=8M --offset_increment=8M --io_size=4M \
  --verify=crc32c --verify_fatal=1 --do_verify=1 --group_reporting \
  --output-format=json --output="$NBD_WORK/fio.json" >"$NBD_WORK/fio.err" 2>&1 ||
  { cat "$NBD_WORK/fio.err"; fail "fio verify against arcstore serve"; }
/usr/bin/python3 - "$NBD_WORK/fio.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["error"]
assert j["write"]["io_bytes"] == 4 * 4 << 20, j["write"]["io_bytes"]
assert j["read"]["io_bytes"] >= j["write"]["io_bytes"] * 0.99, j["read"]["io_bytes"]
print("fio verify at iodepth 32 against arcstore serve: wrote and verified 16 MiB")
PY
# 1 MiB writes, received straight into the engine's record buffers
# (Volume::PrepareWrite), verified by reading them back.
fio --name=large --ioengine=nbd --uri="$(uri "$S" vol0)" --rw=write --bs=1M \
  --iodepth=8 --size=16M --verify=crc32c --verify_fatal=1 --do_verify=1 \
  --output="$NBD_WORK/fio.large" >"$NBD_WORK/fio.err" 2>&1 ||
  { cat "$NBD_WORK/fio.err"; fail "fio 1 MiB writes with verify against arcstore serve"; }
"$ARCSTORE" stat "$P" --live --json >"$NBD_WORK/stat.json" ||
  fail "arcstore stat --live against the running server"
/usr/bin/python3 - "$NBD_WORK/stat.json" <<'PY'
import json, sys
stats = json.loads(open(sys.argv[1]).readline())["stats"]
got = {s["module"] + "." + s["name"]: s.get("value") for s in stats}
inline, may_wait = got["nbd.requests_inline"], got["nbd.requests_may_wait"]
assert inline > 0 and may_wait > 0, (inline, may_wait)
print(f"requests run inline {inline}, submitted on the volume's may-wait {may_wait}")
assert got["txg.sync_thread_nice"] == 19, got["txg.sync_thread_nice"]  # serve's default
# serve polls by default (--poll-us 50): the queue-depth-1 requests above
# (libnbd's, fio's) were waited for, and polling caught some of them.
caught, slept = got["nbd.poll_caught"], got["nbd.poll_slept"]
assert caught > 0 and caught + slept >= 100, (caught, slept)
print(f"waits for a request: {caught} caught by polling, {slept} slept")
adopted = got["volumes.adopted_buffers"]
assert adopted >= 16 * 16, adopted  # at least the 1 MiB writes' 64 KiB records
print(f"whole records written from the buffers they were received into: {adopted}")
PY
stop_server
echo PASS
