#!/usr/bin/env bash
# NBD over TLS, the negative table (issue 28), over loopback TCP against
# nbd_test_server with --tls require, X.509 with peer verification and a
# CRL, PSK, and an access file. Each row is a client that must fail in the
# way the spec or TLS requires; meanwhile a well-behaved PSK client reads
# and writes the whole time and must see no error, the server must stay up,
# and the stats must name each failure's reason.
#   NBD_SERVER: the server binary (nbd_test_server).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tls/make_creds.sh"
require certtool psktool nbdinfo nbdcopy qemu-img /usr/bin/python3
PROBE="/usr/bin/python3 $(dirname "$0")/tls/probe.py"
W=$NBD_WORK
make_creds "$W" localhost 127.0.0.1
cat >"$W/access" <<'ACCESS'
# who may open what (docs/serving.md)
[alice]
vol0 = rw
[bob]
vol0 = ro
[carol]
secret = rw
[CN=client1,O=Test]
* = rw
ACCESS

start_server "$W/s.sock" --listen 127.0.0.1:0 --listen '[::1]:0' --export vol0:16M:64K --export secret:1M:4K \
  --tls require --tls-certificates "$W/srv" --tls-verify-peer --tls-psk "$W/keys.psk" \
  --access "$W/access" --handshake-timeout-ms 2000 --max-connections 600 --stats
PORT=$(sed -n 's/^listening 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$NBD_WORK/server.out")
[[ -n "$PORT" ]] || fail "no TCP port in the server's output"
PORT6=$(sed -n 's/^listening \[::1\]:\([0-9]*\)$/\1/p' "$NBD_WORK/server.out")
[[ -n "$PORT6" ]] || fail "no IPv6 port in the server's output"
H=localhost:$PORT
psk() { echo "nbds://$1@$H/$2?tls-psk-file=$W/${3:-keys.psk}"; }
x509() { echo "nbds://$H/$2?tls-certificates=$W/$1"; }

# The well-behaved client, connected before the first row and busy until
# the last.
$PROBE steady "$(psk alice vol0)" "$W/stop" "$W/steady.out" &
STEADY_PID=$!
PEER_PID=$STEADY_PID  # lib.sh kills it if the test fails

alive() { kill -0 "$NBD_SERVER_PID" 2>/dev/null || fail "server died during: $1"; }
# must_fail ROW CMD...: the command fails and the server stays up.
must_fail() {
  local row=$1
  shift
  if "$@" >"$W/row.out" 2>&1; then cat "$W/row.out" >&2; fail "$row: the client succeeded"; fi
  alive "$row"
  echo "ok   $row: $(grep -m1 -i -E 'error|fail|tls|denied|such' "$W/row.out" | cut -c1-110)"
}

# Positive controls: each credential kind works.
nbdinfo --size "$(x509 good vol0)" >/dev/null || fail "X.509 client refused"
nbdinfo --size "$(psk alice vol0)" >/dev/null || fail "PSK client refused"
qemu-img info --object "tls-creds-x509,id=t0,dir=$W/good,endpoint=client" \
  --image-opts "driver=nbd,host=localhost,port=$PORT,export=vol0,tls-creds=t0" >/dev/null ||
  fail "qemu-img with tls-creds-x509 refused"
qemu-img info --object "tls-creds-psk,id=t0,dir=$W/pskdir,username=carol,endpoint=client" \
  --image-opts "driver=nbd,host=localhost,port=$PORT,export=secret,tls-creds=t0" >/dev/null ||
  fail "qemu-img with tls-creds-psk refused"

# IPv6 through qemu: libnbd 1.14 sends an IPv6 literal as the TLS server
# name (SNI), which GnuTLS servers refuse as a disallowed name.
qemu-img info --object "tls-creds-psk,id=t0,dir=$W/pskdir,username=alice,endpoint=client" \
  --image-opts "driver=nbd,host=::1,port=$PORT6,export=vol0,tls-creds=t0" >/dev/null ||
  fail "PSK client over IPv6 refused"
must_fail "plaintext client against require over IPv6" nbdinfo "nbd://[::1]:$PORT6/vol0"
must_fail "plaintext client against require (nbdinfo)" nbdinfo "nbd://$H/vol0"
must_fail "plaintext client against require (qemu-img)" qemu-img info "nbd://$H/vol0"
must_fail "client certificate from another CA" nbdinfo "$(x509 wrongca vol0)"
must_fail "expired client certificate" nbdinfo "$(x509 expired vol0)"
must_fail "not yet valid client certificate" nbdinfo "$(x509 notyet vol0)"
must_fail "revoked client certificate (CRL)" nbdinfo "$(x509 revoked vol0)"
must_fail "unknown PSK user" nbdinfo "$(psk mallory vol0 unknown.psk)"
must_fail "wrong PSK key" nbdinfo "$(psk alice vol0 wrongkey.psk)"

# Denied volume: absent from LIST, GO refused; the other identity the reverse.
nbdinfo --list --json "$(psk alice '')" >"$W/list.json" || fail "alice cannot list"
grep -q '"export-name": "vol0"' "$W/list.json" || fail "alice's LIST lacks vol0"
grep -q '"secret"' "$W/list.json" && fail "alice's LIST shows secret, which she may not open"
nbdinfo --list --json "$(psk carol '')" >"$W/list.json" || fail "carol cannot list"
grep -q '"vol0"' "$W/list.json" && fail "carol's LIST shows vol0"
must_fail "denied volume: GO refused" nbdinfo "$(psk alice secret)"
echo "ok   denied volume absent from LIST"

# Each refusal above is reported with the client's address and the reason.
for reason in "(bad_certificate)" "(unknown_psk_identity)" "may not open volume 'secret'"; do
  grep -q "^refused [^ ]*: .*$reason" "$NBD_WORK/server.out" ||
    fail "no refusal reported for $reason: $(grep '^refused' "$NBD_WORK/server.out" | head -5)"
done
echo "ok   refusals reported with the peer and the reason"

$PROBE readonly "$(psk bob vol0)" || fail "read-only identity writing"
alive "read-only identity writing"
$PROBE inject "$PORT" "$W/good" || fail "plaintext injected after STARTTLS"
$PROBE garbage "$PORT" || fail "garbage after STARTTLS"
$PROBE stall "$PORT" 6 || fail "client stopping mid-handshake"
alive "mid-handshake stall"
$PROBE many "$(psk alice vol0)" 500 || fail "500 TLS clients at once"
alive "500 clients"

# SIGHUP reloads the access file; the open connection (the well-behaved
# client's) is not dropped; a bad file keeps the policy in force.
await_line() {  # await_line PATTERN: the server printed it (bounded)
  for _ in $(seq 1 500); do
    grep -q "$1" "$NBD_WORK/server.out" && return 0
    sleep 0.01
  done
  fail "server never printed '$1'"
}
cp "$W/access" "$W/access.orig"
printf '[alice]\nsecret = rw\n[CN=client1,O=Test]\n* = rw\n' >"$W/access"
kill -HUP "$NBD_SERVER_PID"
await_line '^access reloaded'
must_fail "after reload: alice's old volume" nbdinfo "$(psk alice vol0)"
nbdinfo --size "$(psk alice secret)" >/dev/null || fail "after reload: alice's new volume refused"
printf '[alice]\nsecret = rw\nvol0 = maybe\n' >"$W/access"
kill -HUP "$NBD_SERVER_PID"
await_line '^access reload failed'
grep -q "access:3: access of 'vol0' is 'maybe'" "$NBD_WORK/server.out" ||
  fail "reload error does not name file:line: $(grep 'reload failed' "$NBD_WORK/server.out")"
nbdinfo --size "$(psk alice secret)" >/dev/null || fail "a bad file replaced the policy in force"
echo "ok   SIGHUP: new policy in force, bad file refused with file:line, old one kept"

# The well-behaved client saw no error and its data is intact.
touch "$W/stop"
wait "$STEADY_PID" || true
grep -q '^ok [1-9]' "$W/steady.out" || fail "well-behaved client: $(cat "$W/steady.out")"
echo "ok   well-behaved client: $(cat "$W/steady.out") rounds, no error"
nbdcopy "$(x509 good vol0)" "$W/after" || fail "read back"
/usr/bin/python3 -c '
import sys
p = bytes((i * 7 + 3) % 251 for i in range(1 << 20))
d = open(sys.argv[1], "rb").read(1 << 20)
sys.exit(0 if d == p else "well-behaved client data damaged")' "$W/after"

stop_server
grep -E "^(tls_|err_)" "$NBD_WORK/server.err" | grep -v " 0$" >&2
stat() { awk -v n="$1" '$1 == n { print $3; exit }' "$NBD_WORK/server.err"; }
check_stat() {  # check_stat NAME MIN
  local v
  v=$(stat "$1")
  [[ -n "$v" && "$v" -ge "$2" ]] || fail "stat $1 is '${v}', expected at least $2"
  echo "ok   stat $1 = $v"
}
check_stat err_tls_required 2
check_stat tls_fail_bad_certificate 4
check_stat tls_fail_unknown_psk_identity 1
check_stat tls_fail_other 2  # wrong key, garbage
check_stat err_handshake_timeout 1
check_stat err_denied_volume 1
check_stat err_read_only 1
check_stat starttls_plaintext_dropped_bytes 1
check_stat alice 500
check_stat CN_client1_O_Test 1
check_stat tls_handshakes 506
# Every TLS session's kernel offload state is counted (off, duplex, recv, send).
ktls=$(awk '$1 ~ /^ktls_/ { n += $3 } END { print n + 0 }' "$NBD_WORK/server.err")
[[ $ktls -eq $(stat tls_handshakes) ]] || fail "ktls_* count $ktls sessions, not $(stat tls_handshakes)"
echo "ok   ktls state counted for all $ktls sessions"
echo "PASS"
