#!/usr/bin/env bash
# Cache devices from the command line, end to end: `pool add-cache` and
# `pool remove-cache` on a pool at rest and through a running server's
# control socket, the config keeping them across restarts, `pool info`
# listing them (read-only opens say they do not use them), arcstat's l2
# columns, iostat's cache rows, and the refusals (the pool's own file, a device added twice, one
# the pool does not have).
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/../nbd/lib.sh"
[[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"

P=$NBD_WORK/p.pool
S=$NBD_WORK/s.sock
cd "$NBD_WORK"
"$ARCSTORE" pool create "$P" --size 256M --sparse >/dev/null
"$ARCSTORE" vol create "$P" vol0 --size 32M >/dev/null
truncate -s 64M c1
truncate -s 32M c2

# serve: starts arcstore serve on the pool, waits for its control socket.
serve() {
  "$ARCSTORE" serve "$P" --socket "$S" >serve.out 2>serve.err &
  NBD_SERVER_PID=$!
  for _ in $(seq 1 1000); do
    grep -q '^control socket ' serve.out 2>/dev/null && return 0
    kill -0 "$NBD_SERVER_PID" 2>/dev/null || { cat serve.err >&2; fail "serve exited at start"; }
    sleep 0.01
  done
  fail "serve printed no control socket line"
}
# stop: SIGTERM; the server must exit 0.
stop() {
  local rc=0
  kill -TERM "$NBD_SERVER_PID"
  wait "$NBD_SERVER_PID" || rc=$?
  NBD_SERVER_PID=""
  ((rc == 0)) || fail "serve exited with $rc after SIGTERM"
}

# At rest: a relative path is recorded absolute.
"$ARCSTORE" pool add-cache "$P" c1 >out 2>&1 || fail "add-cache c1: $(cat out)"
grep -q "^added cache device $NBD_WORK/c1\$" out || fail "add-cache said: $(cat out)"
"$ARCSTORE" pool info "$P" >info || fail "pool info"
grep -q "^$NBD_WORK/c1 .*not in use: the pool is open read-only\$" info || fail "info: $(cat info)"

serve

# Through the server: another device, the refusals, a removal.
"$ARCSTORE" pool add-cache "$P" "$NBD_WORK/c2" >out 2>&1 || fail "add-cache c2: $(cat out)"
grep -q "(through the server)" out || fail "add-cache c2 did not go through the server: $(cat out)"
"$ARCSTORE" pool info "$P" >info || fail "pool info (served)"
for c in c1 c2; do
  grep -q "^$NBD_WORK/$c .* online\$" info || fail "$c not online: $(cat info)"
done
# iostat has a row per cache device under a "cache" line, with its
# capacity (alloc, free).
"$ARCSTORE" iostat "$P" -l 0.2 2 >iostat 2>&1 || fail "iostat: $(cat iostat)"
grep -q '^cache  ' iostat || fail "iostat has no cache line: $(cat iostat)"
for c in c1 c2; do
  grep -Eq "^  $c +[0-9.]+[KMG]? +[0-9.]+[KMG]? " iostat || fail "iostat has no row for $c: $(cat iostat)"
done
if "$ARCSTORE" pool add-cache "$P" "$P" >out 2>&1; then fail "the pool's own file was taken"; fi
grep -q "pool's own device" out || fail "own-device refusal: $(cat out)"
if "$ARCSTORE" pool add-cache "$P" c2 >out 2>&1; then fail "c2 was added twice"; fi
grep -q "already the pool's" out || fail "twice refusal: $(cat out)"
if "$ARCSTORE" pool remove-cache "$P" c3 >out 2>&1; then fail "c3 was removed"; fi
grep -q "not one of the pool's" out || fail "unknown removal: $(cat out)"
"$ARCSTORE" pool remove-cache "$P" c1 >out 2>&1 || fail "remove-cache c1: $(cat out)"
"$ARCSTORE" stat "$P" -f l2hits,l2miss,l2read,l2hit%,l2size,l2asize,l2bytes >stat 2>&1 ||
  fail "stat l2 columns: $(cat stat)"
head -1 stat | grep -q "l2hits *l2miss *l2read *l2hit% *l2size *l2asize *l2bytes" ||
  fail "stat header: $(cat stat)"
stop

# fsck reads the cache device and reports it, and the pool stays clean.
"$ARCSTORE" fsck "$P" >fsck.out 2>&1 || fail "fsck: $(cat fsck.out)"
grep -q "^cache device $NBD_WORK/c2: label ok (epoch [0-9]*); .* 0 bad copies\$" fsck.out ||
  fail "fsck's cache line: $(cat fsck.out)"
grep -q '^clean$' fsck.out || fail "fsck: $(cat fsck.out)"

# The config kept c2 alone; a new server uses it at once.
"$ARCSTORE" pool info "$P" >info || fail "pool info after the server"
grep -q "^$NBD_WORK/c2 " info || fail "c2 not in the config: $(cat info)"
if grep -q "^$NBD_WORK/c1 " info; then fail "c1 still in the config: $(cat info)"; fi
serve
"$ARCSTORE" pool info "$P" >info || fail "pool info (served again)"
grep -q "^$NBD_WORK/c2 .* online\$" info || fail "c2 not online after a restart: $(cat info)"
stop
echo PASS
