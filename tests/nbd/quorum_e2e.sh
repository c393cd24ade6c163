#!/usr/bin/env bash
# Three arcstore servers under qemu's quorum block driver (docs/serving.md,
# "Replicas with qemu's quorum driver"): each server serves vol0 of its own
# pool, and qemu-io writes and reads through a quorum of the three with
# vote-threshold=2 and rewrite-corrupted=on.
#  - a write through the quorum reaches all three replicas, byte for byte;
#  - a replica whose bytes differ (written behind the quorum's back) is
#    outvoted on read, and the quorum rewrites it;
#  - a replica killed while the quorum is open does not stop a quorum
#    write; served again, its stale bytes are outvoted and rewritten on the
#    next read;
#  - a replica whose pool has a damaged block answers the read with an
#    error (arcstore's checksum caught it), the quorum still returns the
#    right bytes from the other two, and a rewrite through the quorum heals
#    the damaged replica (fsck clean afterwards).
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
require qemu-io /usr/bin/python3
[[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"

PIDS=(0 0 0)
stop_replicas() {
  for i in 0 1 2; do
    if [[ ${PIDS[$i]} != 0 ]]; then
      kill -TERM "${PIDS[$i]}" 2>/dev/null || true
      wait "${PIDS[$i]}" 2>/dev/null || true
      PIDS[$i]=0
    fi
  done
}
trap 'rc=$?; stop_replicas; rm -rf "$NBD_WORK"; exit $rc' EXIT

for i in 0 1 2; do
  "$ARCSTORE" pool create "$NBD_WORK/p$i.pool" --size 128M >/dev/null
  # Uncompressed, so that the test can find a record's bytes in the pool file.
  "$ARCSTORE" vol create "$NBD_WORK/p$i.pool" vol0 --size 16M --recordsize 64K \
    --compression off >/dev/null
done

# serve I [ARGS...]: replica I on its own socket, started and waited for.
serve() {
  local i=$1
  shift
  arcstore_serve "$NBD_WORK/serve$i" "$NBD_WORK/p$i.pool" --socket "$NBD_WORK/s$i.sock" "$@"
  PIDS[$i]=$ARCSTORE_PID
}

stop() {
  arcstore_stop "${PIDS[$1]}" "$NBD_WORK/serve$1"
  PIDS[$1]=0
}

replica() { echo "driver=nbd,server.type=unix,server.path=$NBD_WORK/s$1.sock,export=vol0"; }
QUORUM=$(quorum_opts "$(replica 0)" "$(replica 1)" "$(replica 2)")
io() { qemu_io_ok "$@"; }

# expect_pattern I OFFSET LENGTH BYTE: replica I holds BYTE over the range.
expect_pattern() { io "$(replica "$1")" "read -P $4 $2 $3"; }

for i in 0 1 2; do serve "$i"; done

# 1. A quorum write reaches every replica.
io "$QUORUM" "write -P 0x5a 0 4M" "read -P 0x5a 0 4M"
for i in 0 1 2; do expect_pattern "$i" 0 4M 0x5a; done
echo "quorum write: 4 MiB on all three replicas"

# 2. A replica that differs is outvoted and rewritten.
io "$(replica 1)" "write -P 0xa5 1M 1M"
expect_pattern 1 1M 1M 0xa5
io "$QUORUM" "read -P 0x5a 0 4M"
expect_pattern 1 0 4M 0x5a
echo "divergent replica outvoted and rewritten"

# 3. A replica that dies while the quorum is open: the quorum's write
#    still succeeds on the other two; back in service, the stale replica
#    is outvoted on read and rewritten.
mkfifo "$NBD_WORK/qemu-io.in"
qemu-io --image-opts "$QUORUM" <"$NBD_WORK/qemu-io.in" >"$NBD_WORK/qemu-io.out" 2>&1 &
QEMU_IO=$!
exec 9>"$NBD_WORK/qemu-io.in"
echo "read -P 0x5a 0 4k" >&9
for _ in $(seq 1 1000); do
  grep -q "read 4096/4096" "$NBD_WORK/qemu-io.out" && break
  kill -0 "$QEMU_IO" 2>/dev/null || fail "qemu-io exited: $(cat "$NBD_WORK/qemu-io.out")"
  sleep 0.01
done
grep -q "read 4096/4096" "$NBD_WORK/qemu-io.out" || fail "qemu-io did not open the quorum"
kill -KILL "${PIDS[2]}"
wait "${PIDS[2]}" 2>/dev/null || true
PIDS[2]=0
echo "write -P 0x3c 4M 2M" >&9
echo "quit" >&9
exec 9>&-
wait "$QEMU_IO" || fail "qemu-io exited non-zero: $(cat "$NBD_WORK/qemu-io.out")"
grep -q "wrote 2097152/2097152 bytes at offset 4194304" "$NBD_WORK/qemu-io.out" ||
  fail "the quorum write failed with one replica down: $(cat "$NBD_WORK/qemu-io.out")"
serve 2
expect_pattern 2 4M 2M 0x00
io "$QUORUM" "read -P 0x3c 4M 2M"
expect_pattern 2 4M 2M 0x3c
echo "replica down: quorum wrote 2 of 3, then healed the third"

# 4. A damaged block on replica 0's pool: arcstore's checksum turns it into
#    a read error on that replica, the quorum answers from the other two,
#    and a rewrite through the quorum heals it.
io "$QUORUM" "write -P 0x77 8M 64K"
stop 0
/usr/bin/python3 - "$NBD_WORK/p0.pool" <<'PY'
import sys
path = sys.argv[1]
data = open(path, "rb").read()
record = b"\x77" * 65536
# Every whole copy (the data block, and the intent log's if it kept one).
found = []
at = data.find(record)
while at >= 0:
    found.append(at)
    at = data.find(record, at + 65536)
assert found, "the record's bytes are not in the pool file"
with open(path, "r+b") as f:
    for at in found:
        f.seek(at + 4096)
        f.write(b"\x00")
print(f"damaged one byte in each of {len(found)} copies of the record")
PY
serve 0
out=$(qemu-io --image-opts "$(replica 0)" -c "read -P 0x77 8M 64K" 2>&1) || true
grep -q "read failed: Input/output error" <<<"$out" ||
  fail "replica 0 served a damaged record without an error: $out"
echo "replica 0 reports the damaged record as an I/O error"
io "$QUORUM" "read -P 0x77 8M 64K"
io "$QUORUM" "write -P 0x77 8M 64K"
expect_pattern 0 8M 64K 0x77
echo "damaged replica: quorum read from the other two, rewrite healed it"

for i in 0 1 2; do stop "$i"; done
fsck_clean "$NBD_WORK"/p{0,1,2}.pool
echo "PASS: three replicas under qemu's quorum driver"
