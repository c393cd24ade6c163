#!/usr/bin/env bash
# A volume replicated across three hosts by qemu's quorum driver, over TLS
# (docs/serving.md, "Replicas with qemu's quorum driver"). Three network
# namespaces made by this test are the replicas' hosts, each running
# `arcstore serve --tls require` on a pool of its own; a fourth, the client
# host, joined to each by a veth pair, runs qemu-nbd exporting the quorum of
# the three (vote-threshold=2, rewrite-corrupted=on, X.509 to each child),
# and fio's nbd engine writes through that export.
#  1. fio writes 48 MiB in 64 KiB random writes, a flush after every 16,
#     and verifies them (crc32c); replica 2's server is SIGKILLed mid-run,
#     after it has taken 8 MiB. The job ends with no error and every block
#     verified.
#  2. Replica 2 starts again on its pool: its intent log replays, and it
#     has every block it took before its last flush; it lacks what was
#     written while it was down. Replicas 0 and 1 agree.
#  3. The quorum repairs only what is read through it: a read of the first
#     16 MiB rewrites replica 2's stale blocks there and leaves the rest
#     stale; a read of the whole volume (the resync) heals the rest. fsck
#     is clean on all three pools.
# Exits 77 (ctest: skipped) with the reason where network namespaces cannot
# be made (not root, no CAP_SYS_ADMIN, no veth).
#   ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tls/make_creds.sh"
require ip certtool psktool qemu-nbd qemu-io nbdcopy nbdinfo fio /usr/bin/python3
[[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"
W=$NBD_WORK
NS_C=arcq_cli_$$
NS=(arcq_0_$$ arcq_1_$$ arcq_2_$$)
IP=(10.232.0.1 10.232.1.1 10.232.2.1)
PIDS=(0 0 0)
QEMU_NBD=0
VOL_MIB=48
BLOCK=65536

remove_namespaces() {
  for ns in "$NS_C" "${NS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
}
kill_all() {
  for p in "${PIDS[@]}" "$QEMU_NBD"; do
    if [[ $p != 0 ]]; then kill -KILL "$p" 2>/dev/null || true; fi
  done
}
trap 'rc=$?; kill_all; remove_namespaces; (exit $rc); cleanup' EXIT

skip() {
  echo "SKIP: $* (network namespaces are needed for the replicas' hosts)"
  exit 77
}
ip netns add "$NS_C" 2>"$W/ns.err" || skip "ip netns add: $(cat "$W/ns.err")"
ip -n "$NS_C" link set lo up
for i in 0 1 2; do
  ip netns add "${NS[$i]}" 2>"$W/ns.err" || skip "ip netns add: $(cat "$W/ns.err")"
  ip link add "aqs$i$$" type veth peer name "aqc$i$$" 2>"$W/ns.err" ||
    skip "veth pair: $(cat "$W/ns.err")"
  ip link set "aqs$i$$" netns "${NS[$i]}"
  ip link set "aqc$i$$" netns "$NS_C"
  ip -n "${NS[$i]}" addr add "${IP[$i]}/24" dev "aqs$i$$"
  ip -n "$NS_C" addr add "10.232.$i.2/24" dev "aqc$i$$"
  ip -n "${NS[$i]}" link set lo up
  ip -n "${NS[$i]}" link set "aqs$i$$" up
  ip -n "$NS_C" link set "aqc$i$$" up
done
in_cli() { ip netns exec "$NS_C" "$@"; }

make_creds "$W" "${IP[@]}"
for i in 0 1 2; do
  "$ARCSTORE" pool create "$W/p$i.pool" --size 256M >/dev/null
  "$ARCSTORE" vol create "$W/p$i.pool" vol0 --size "${VOL_MIB}M" --recordsize 64K >/dev/null
done

# serve I: replica I's server on its host, TLS required, client certificates
# verified; its control socket (for the stats below) is the pool's.
serve() {
  local i=$1
  SERVE_NETNS=${NS[$i]} arcstore_serve "$W/serve$i" "$W/p$i.pool" \
    --listen "${IP[$i]}:10809" --tls require --tls-certificates "$W/srv" --tls-verify-peer
  PIDS[$i]=$ARCSTORE_PID
}
stop() {
  arcstore_stop "${PIDS[$1]}" "$W/serve$1"
  PIDS[$1]=0
}
# stat_value I MODULE NAME: one counter of replica I's running server.
stat_value() {
  "$ARCSTORE" stat "$W/p$1.pool" --live --json | /usr/bin/python3 -c '
import json, sys
d = json.loads(sys.stdin.readline())
print(next(s["value"] for s in d["stats"]
           if s["module"] == sys.argv[1] and s["name"] == sys.argv[2]))' "$2" "$3"
}
written_bytes() { stat_value "$1" nbd_export.vol0 write_bytes; }

OX="tls-creds-x509,id=t0,dir=$W/good,endpoint=client"
child() {
  echo "driver=nbd,server.type=inet,server.host=${IP[$1]},server.port=10809,export=vol0,tls-creds=t0"
}
Q=$(quorum_opts "$(child 0)" "$(child 1)" "$(child 2)")

# quorum_read OFFSET LENGTH: reads through a quorum opened for the purpose,
# on the client host.
QEMU_IO_CMD=(ip netns exec "$NS_C" qemu-io --object "$OX")
quorum_read() { qemu_io_ok "$Q" "read $1 $2"; }

# replica_copies: each replica's whole volume, read from the client host
# over TLS straight from its server, into $W/rI.
replica_copies() {
  for i in 0 1 2; do
    in_cli nbdcopy "nbds://${IP[$i]}:10809/vol0?tls-certificates=$W/good" "$W/r$i" ||
      fail "nbdcopy from replica $i"
  done
}
# stale FROM_MIB TO_MIB: 64 KiB blocks of replica 2 that differ from replica
# 0's within [FROM, TO) MiB.
stale() {
  /usr/bin/python3 - "$W/r0" "$W/r2" "$1" "$2" "$BLOCK" <<'PY'
import sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
lo, hi, n = int(sys.argv[3]) << 20, int(sys.argv[4]) << 20, int(sys.argv[5])
print(sum(a[o:o + n] != b[o:o + n] for o in range(lo, hi, n)))
PY
}

for i in 0 1 2; do serve "$i"; done

# The quorum's export on the client host (`ip netns exec` execs qemu-nbd:
# the PID is qemu-nbd's).
ip netns exec "$NS_C" qemu-nbd --object "$OX" --image-opts "$Q" --socket "$W/q.sock" \
  --persistent --shared=4 >"$W/qemu-nbd.out" 2>&1 &
QEMU_NBD=$!
for _ in $(seq 1 1000); do
  nbdinfo --size "nbd+unix:///?socket=$W/q.sock" >/dev/null 2>&1 && break
  kill -0 "$QEMU_NBD" 2>/dev/null || fail "qemu-nbd exited: $(cat "$W/qemu-nbd.out")"
  sleep 0.01
done
[[ $(nbdinfo --size "nbd+unix:///?socket=$W/q.sock") == $((VOL_MIB << 20)) ]] ||
  fail "the quorum's export is not ${VOL_MIB} MiB: $(cat "$W/qemu-nbd.out")"

# 1. fio through the quorum, replica 2 killed mid-run. The rate keeps the
#    writes going for about four seconds, so that the kill lands in them.
#    fio runs in the work directory, where it leaves its verify state.
(cd "$W" && exec fio --name=quorum --ioengine=nbd --uri="nbd+unix:///?socket=$W/q.sock" \
  --rw=randwrite --bs=64k --size="${VOL_MIB}M" --iodepth=8 --fsync=16 --rate=12m --verify=crc32c \
  --verify_fatal=1 --output-format=json --output="$W/fio.json") &
FIO=$!
for _ in $(seq 1 1000); do
  (($(written_bytes 2) >= 8 << 20)) && break
  kill -0 "$FIO" 2>/dev/null || fail "fio ended before replica 2 took 8 MiB"
  sleep 0.02
done
(($(written_bytes 2) >= 8 << 20)) || fail "replica 2 did not take 8 MiB of fio's writes"
kill -0 "$FIO" 2>/dev/null || fail "fio ended before the kill"
at_kill=$(written_bytes 2)
((at_kill < VOL_MIB << 20)) || fail "replica 2 had taken all of fio's writes before the kill"
kill -KILL "${PIDS[2]}"
wait "${PIDS[2]}" 2>/dev/null || true
PIDS[2]=0
rc=0
wait "$FIO" || rc=$?
[[ $rc -eq 0 ]] || { cat "$W/fio.json" >&2; fail "fio exited with status $rc"; }
/usr/bin/python3 - "$W/fio.json" "$((VOL_MIB << 20))" <<'PY' || fail "fio's report"
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
want = int(sys.argv[2])
assert job["error"] == 0, f"fio error {job['error']}"
assert job["write"]["io_bytes"] == want, f"wrote {job['write']['io_bytes']} of {want}"
assert job["read"]["io_bytes"] == want, f"verified {job['read']['io_bytes']} of {want}"
PY
echo "ok   fio: ${VOL_MIB} MiB written and verified through the quorum, replica 2 killed mid-run"
kill -TERM "$QEMU_NBD"
wait "$QEMU_NBD" || true
QEMU_NBD=0
pgrep -f "qemu-nbd.*$W/q.sock" >/dev/null && fail "qemu-nbd is still running after SIGTERM"

# 2. Replica 2 back on its pool: what it had flushed is there, from its
#    txgs or its intent log (fio writes each block once, so a block it kept
#    equals replica 0's); the rest is stale. Of the 8 MiB (128 blocks) it
#    took, at most the writes after its last flush (16) and those in flight
#    (8) may be missing.
serve 2
replayed=$(stat_value 2 zil replayed_records)
replica_copies
cmp -s "$W/r0" "$W/r1" || fail "replicas 0 and 1 differ"
before_head=$(stale 0 16)
before_tail=$(stale 16 "$VOL_MIB")
kept=$((VOL_MIB * 16 - before_head - before_tail))
((kept >= 128 - 16 - 8)) || fail "replica 2 kept $kept blocks of the 128 it took before the kill"
((before_head > 0 && before_tail > 0)) ||
  fail "replica 2 is not stale after the kill ($before_head, $before_tail blocks)"
echo "ok   replica 2 restarted: $replayed log records replayed, $kept blocks kept," \
  "$before_head + $before_tail of $((VOL_MIB * 16)) stale"

# 3. What a read through the quorum repairs, and what only a resync does.
quorum_read 0 16M
replica_copies
after_head=$(stale 0 16)
after_tail=$(stale 16 "$VOL_MIB")
((after_head == 0)) || fail "the quorum's read left $after_head stale blocks in what it read"
((after_tail == before_tail)) ||
  fail "blocks the quorum did not read changed ($before_tail stale before, $after_tail after)"
echo "ok   a read of the first 16 MiB through the quorum rewrote them; $after_tail blocks beyond stay stale"
quorum_read 0 "${VOL_MIB}M"
replica_copies
cmp -s "$W/r0" "$W/r2" || fail "the resync left replica 2 different: $(stale 0 "$VOL_MIB") blocks"
cmp -s "$W/r0" "$W/r1" || fail "replicas 0 and 1 differ after the resync"
echo "ok   a read of the whole volume through the quorum (the resync) healed replica 2"

for i in 0 1 2; do stop "$i"; done
fsck_clean "$W"/p{0,1,2}.pool
echo "PASS: three replicas on three hosts under qemu's quorum driver, over TLS"
