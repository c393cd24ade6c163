#!/usr/bin/env bash
# NBD over TLS between two hosts: two network namespaces made by this test
# and joined by a veth pair; `arcstore serve` on a real pool in one, the
# clients in the other over real TCP: nbdinfo and nbdcopy (nbds:// with
# tls-certificates= and tls-psk-file=), qemu-img convert and qemu-io with
# tls-creds-x509 / tls-creds-psk, and fio's nbd engine (nbds://). Data moves both ways and is compared
# byte for byte. Exits 77 (ctest: skipped) with the reason where network
# namespaces cannot be made (not root, no CAP_SYS_ADMIN, no veth).
#   ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tls/make_creds.sh"
require ip certtool psktool nbdinfo nbdcopy qemu-img qemu-io cmp fio setpriv
[[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"
W=$NBD_WORK
NS_S=arcstore_srv_$$
NS_C=arcstore_cli_$$
VS=arcs$$
VC=arcc$$
SRV_IP=10.231.0.1
CLI_IP=10.231.0.2

remove_namespaces() {
  ip netns del "$NS_S" 2>/dev/null || true
  ip netns del "$NS_C" 2>/dev/null || true
}
trap 'rc=$?; [[ -n "$NBD_SERVER_PID" ]] && kill -KILL "$NBD_SERVER_PID" 2>/dev/null; NBD_SERVER_PID=""; remove_namespaces; (exit $rc); cleanup' EXIT

skip() {
  echo "SKIP: $* (network namespaces are needed for the two-host test)"
  exit 77
}
ip netns add "$NS_S" 2>"$W/ns.err" || skip "ip netns add: $(cat "$W/ns.err")"
ip netns add "$NS_C" 2>"$W/ns.err" || skip "ip netns add: $(cat "$W/ns.err")"
ip link add "$VS" type veth peer name "$VC" 2>"$W/ns.err" || skip "veth pair: $(cat "$W/ns.err")"
ip link set "$VS" netns "$NS_S"
ip link set "$VC" netns "$NS_C"
ip -n "$NS_S" addr add "$SRV_IP/24" dev "$VS"
ip -n "$NS_C" addr add "$CLI_IP/24" dev "$VC"
for ns in "$NS_S" "$NS_C"; do ip -n "$ns" link set lo up; done
ip -n "$NS_S" link set "$VS" up
ip -n "$NS_C" link set "$VC" up
in_cli() { ip netns exec "$NS_C" "$@"; }

make_creds "$W" "$SRV_IP"
printf '[alice]\nvol0 = rw\n[CN=client1,O=Test]\nvol0 = rw\n' >"$W/access"
P=$W/p.pool
"$ARCSTORE" pool create "$P" --size 256M >/dev/null
"$ARCSTORE" vol create "$P" vol0 --size 32M --recordsize 64K >/dev/null

# A non-loopback address without --tls require is refused, saying why.
if "$ARCSTORE" serve "$P" --listen "0.0.0.0:0" --no-control >"$W/refused.out" 2>&1; then
  fail "serve on 0.0.0.0 without TLS started"
fi
grep -q -- "--tls require" "$W/refused.out" || fail "refusal does not say why: $(cat "$W/refused.out")"

SERVE_NETNS=$NS_S arcstore_serve "$W/serve" "$P" --listen "$SRV_IP:10809" --tls require \
  --tls-certificates "$W/srv" --tls-verify-peer --tls-psk "$W/keys.psk" --access "$W/access" \
  --no-control
NBD_SERVER_PID=$ARCSTORE_PID

H=$SRV_IP:10809
X509="nbds://$H/vol0?tls-certificates=$W/good"
PSK="nbds://alice@$H/vol0?tls-psk-file=$W/keys.psk"
QX="driver=nbd,host=$SRV_IP,port=10809,export=vol0,tls-creds=t0"
OX="tls-creds-x509,id=t0,dir=$W/good,endpoint=client"
OP="tls-creds-psk,id=t0,dir=$W/pskdir,username=alice,endpoint=client"

in_cli nbdinfo "nbd://$H/vol0" >/dev/null 2>&1 && fail "plaintext client from the other host got in"
[[ $(in_cli nbdinfo --size "$X509") == 33554432 ]] || fail "nbdinfo over X.509: wrong size"
head -c 32M /dev/urandom >"$W/a"
in_cli nbdcopy "$W/a" "$X509" || fail "nbdcopy up over X.509"
in_cli nbdcopy "$PSK" "$W/a.back" || fail "nbdcopy down over PSK"
cmp "$W/a" "$W/a.back" || fail "nbdcopy: data differs"
echo "ok   nbdcopy: 32 MiB up over X.509, down over PSK, byte for byte"

in_cli qemu-img convert -O raw --object "$OP" --image-opts "$QX" "$W/q.back" ||
  fail "qemu-img convert down over PSK"
cmp "$W/a" "$W/q.back" || fail "qemu-img (PSK): data differs"
head -c 32M /dev/urandom >"$W/b"
in_cli qemu-img convert -n -f raw "$W/b" --object "$OX" --target-image-opts "$QX" ||
  fail "qemu-img convert up over X.509"
in_cli nbdcopy "$PSK" "$W/b.back" || fail "nbdcopy down after qemu-img"
cmp "$W/b" "$W/b.back" || fail "qemu-img (X.509): data differs"
echo "ok   qemu-img convert: 32 MiB down over PSK, up over X.509, byte for byte"

in_cli qemu-io --object "$OX" --image-opts "$QX" -c "write -P 0x5a 1M 3M" -c "read -P 0x5a 1M 3M" \
  -c "read -P 0x00 0 0" >"$W/qio.out" 2>&1 || { cat "$W/qio.out" >&2; fail "qemu-io"; }
grep -q "Pattern verification failed" "$W/qio.out" && fail "qemu-io: pattern differs"
in_cli nbdcopy "$PSK" "$W/c.back"
/usr/bin/python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
b = open(sys.argv[2], "rb").read()
ok = d[1 << 20:4 << 20] == b"\x5a" * (3 << 20) and d[:1 << 20] == b[:1 << 20] and d[4 << 20:] == b[4 << 20:]
sys.exit(0 if ok else "qemu-io write not seen byte for byte")' "$W/c.back" "$W/b"
echo "ok   qemu-io: 3 MiB pattern written and verified over X.509"

# fio's nbd engine takes no certificate options: libnbd reads the client's
# certificate from $HOME/.pki/libnbd when not root, so fio runs as nobody
# with a HOME of its own.
FH=$W/fiohome
mkdir -p "$FH/.pki/libnbd"
cp "$W/good/"*.pem "$FH/.pki/libnbd/"
chmod 755 "$W"
chmod -R a+rwX "$FH"
(cd "$FH" && in_cli setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$FH" \
  fio --name=tls --ioengine=nbd --uri="nbds://$H/vol0" --rw=randwrite --bs=4k --size=16M \
  --iodepth=16 --verify=crc32c --verify_fatal=1 --output="$FH/fio.out") ||
  { cat "$FH/fio.out" >&2; fail "fio over nbds"; }
grep -q "err= 0" "$FH/fio.out" || { cat "$FH/fio.out" >&2; fail "fio reported an error"; }
echo "ok   fio nbd engine: 16 MiB of 4 KiB random writes over X.509, verified (crc32c)"

kill -TERM "$NBD_SERVER_PID"
rc=0
wait "$NBD_SERVER_PID" || rc=$?
NBD_SERVER_PID=""
[[ $rc -eq 0 ]] || { cat "$W/serve.err" >&2; fail "serve exited $rc after SIGTERM"; }
echo "PASS"
