#!/usr/bin/env bash
# arcstore serve on a real pool:
#  - multi-conn durability: data written on one connection and flushed on
#    another (and a FUA write never flushed) survive a SIGKILL of the server;
#  - SIGTERM: exit status 0, the pool checks clean, the data is there.
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
require /usr/bin/python3 nbdinfo
[[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"

P=$NBD_WORK/p.pool
S=$NBD_WORK/s.sock
"$ARCSTORE" pool create "$P" --size 256M >/dev/null
"$ARCSTORE" vol create "$P" vol0 --size 32M --recordsize 64K >/dev/null

serve() {
  "$ARCSTORE" serve "$P" --socket "$S" >"$NBD_WORK/serve.out" 2>"$NBD_WORK/serve.err" &
  NBD_SERVER_PID=$!
  for _ in $(seq 1 1000); do
    grep -q '^serving ' "$NBD_WORK/serve.out" 2>/dev/null && return 0
    kill -0 "$NBD_SERVER_PID" 2>/dev/null || { cat "$NBD_WORK/serve.err" >&2; fail "serve exited at start"; }
    sleep 0.01
  done
  fail "serve did not start"
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
stop_server
echo PASS
