#!/usr/bin/env bash
# Discard through a kernel filesystem (ext4 or XFS, the argument) on an
# arcstore volume returns the space to the pool, as `arcstore pool info`
# shows it while the server runs (through its control socket):
#  - fstrim after deleting most files (run again while the test waits, see
#    RETRIM): allocated bytes go down, and free (plus pending free: freed,
#    reusable two txgs later) up, by at least 90% of what was deleted; the
#    files kept are intact;
#  - mount -o discard does the same online, without fstrim;
#  - fallocate --zero-range on a file reads back as zeros; XFS frees the
#    range (and, mounted with discard, discards it); ext4 keeps the blocks
#    as unwritten extents without telling the device, so there punching the
#    hole is what returns the space;
#  - where the kernel does not send a filesystem's online discards in time
#    (see online_discards), the test says so and trims with fstrim;
#  - blkdiscard --zeroout on the loop device reads back as zeros and takes
#    no data space (NBD_CMD_WRITE_ZEROES).
# The volume has compression off and the data is random, so bytes written
# are bytes allocated, and a record the filesystem's discards zero in parts
# (ext4's block groups are not record-aligned) must take no space at all
# rather than compress to little.
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
FS=${1:?usage: discard_e2e.sh ext4|xfs}
require_stack "$FS" fstrim blkdiscard fallocate cmp
MiB=$((1 << 20))

# space: ALLOC FREE PEND of the served pool, in bytes.
space() { read -r ALLOC FREE PEND < <(fsdata space "$ARCSTORE" "$P"); }

# RETRIM=1 while the space being waited for was trimmed with fstrim:
# wait_space runs fstrim again every 2 s, since fstrim skips what the
# filesystem has freed but not yet settled (XFS passes over extents freed by
# a transaction whose log checkpoint has not completed, even after a sync).
# FSTRIMS counts the runs since the baseline, LAST_TRIM is when the last one
# ended.
RETRIM=0 FSTRIMS=0 LAST_TRIM=0

# trim_fs: fstrim on the mounted filesystem, counted in FSTRIMS.
trim_fs() {
  timeout 120 fstrim "$@" "$MNT" || fail "fstrim $MNT"
  FSTRIMS=$((FSTRIMS + 1)) LAST_TRIM=$SECONDS
}

# wait_space WHAT CONDITION: polls the pool's space until the arithmetic
# CONDITION (on ALLOC, FREE, PEND) holds; fails after 90 s. Data reaches
# the pool's space accounting when its txg syncs (at most a txg timeout).
# Each round syncs the filesystem too: XFS issues online discards when a
# log checkpoint completes, which otherwise waits for its periodic log work.
wait_space() {
  local deadline=$((SECONDS + 90))
  while space; ! (($2)); do
    ((SECONDS < deadline)) || fail "$1: after 90 s allocated $ALLOC, free $FREE, pending free $PEND"
    if is_mounted "$MNT"; then
      timeout 30 sync -f "$MNT" || fail "sync -f $MNT"
      ((RETRIM == 0 || SECONDS < LAST_TRIM + 2)) || trim_fs
    fi
    sleep 0.2
  done
}

# trimmed: TRIMMED, the bytes the server has answered trims for.
trimmed() { TRIMMED=$(fsdata trimmed "$ARCSTORE" "$P"); }

# written BYTES: waits until BYTES more are allocated than ALLOC_BASE, and
# takes the baseline A0, FP0 (free plus pending), T0 (bytes trimmed).
baseline_after_write() {
  local want=$(($1 * 95 / 100))
  wait_space "waiting for $(($1 / MiB)) MiB written to be allocated" "ALLOC >= ALLOC_BASE + $want"
  A0=$ALLOC FP0=$((FREE + PEND)) FSTRIMS=0
  trimmed
  T0=$TRIMMED
}

# returned WHAT BYTES: waits until at least 90% of BYTES left the
# allocated bytes and joined free or pending free since the baseline. The
# failure says how much the server was asked to trim meanwhile, which tells
# a discard the kernel never sent from space the engine did not give back.
returned() {
  local want=$(($2 * 90 / 100))
  trimmed
  wait_space "$1: $(($2 / MiB)) MiB not returned (before: allocated $A0, free+pending $FP0; trims answered since: $((TRIMMED - T0)) bytes; fstrim runs: $FSTRIMS)" \
    "ALLOC <= A0 - $want && FREE + PEND >= FP0 + $want"
  trimmed
  log "$1: allocated $(((A0 - ALLOC) / MiB)) MiB less, free+pending $(((FREE + PEND - FP0) / MiB)) MiB more (of $(($2 / MiB)) MiB; trims answered $(((TRIMMED - T0) / MiB)) MiB, fstrim runs $FSTRIMS)"
  RETRIM=0
}

# online_discards BYTES: waits (30 s, syncing the filesystem each round)
# until the server has answered trims for 90% of BYTES since the baseline.
# When and whether a filesystem mounted with discard sends them is the
# kernel's choice: ext4 queues them to a workqueue after the journal commit
# and gives them up under memory or space pressure, XFS sends them after a
# log checkpoint. If they have not come by the deadline, the test says so
# and trims the rest with fstrim, so that the engine's part (every trimmed
# byte back as free space) is still checked.
online_discards() {
  local want=$(($1 * 90 / 100)) deadline=$((SECONDS + 30))
  while trimmed; ((TRIMMED - T0 < want)); do
    if ((SECONDS >= deadline)); then
      log "NOTE: $FS mounted with discard sent $(((TRIMMED - T0) / MiB)) of $(($1 / MiB)) MiB as discards in 30 s"
      log "  mount: $(awk -v m="$MNT" '$2 == m' /proc/self/mounts)"
      local q=/sys/block/${LOOP##*/}/queue
      log "  $LOOP: discard_granularity $(cat "$q/discard_granularity" 2>/dev/null), discard_max_bytes $(cat "$q/discard_max_bytes" 2>/dev/null)"
      log "  the kernel's log:"
      dmesg 2>/dev/null | tail -5 || true
      trim_fs -v
      RETRIM=1
      return
    fi
    timeout 30 sync -f "$MNT" || fail "sync -f $MNT"
    sleep 0.2
  done
  log "online discards: the server answered trims for $(((TRIMMED - T0) / MiB)) MiB"
}

bytes_of() { find "$@" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }

# zeros FILE OFFSET BYTES: the range reads as zeros, bypassing the page cache.
zeros() {
  cmp -n "$3" <(dd if="$1" iflag=direct,skip_bytes,count_bytes skip="$2" count="$3" bs=1M status=none) /dev/zero ||
    fail "$1 [$2, +$3) does not read as zeros"
}

make_pool 512M --compression off
serve
attach
# The filesystem leaves the volume's last 112 MiB alone: blkdiscard's part.
mkfs_dev "$FS" 400
mount_fs "$FS"
space
ALLOC_BASE=$ALLOC

# fstrim after deleting most of a tree.
fsdata tree "$MNT/a" "$FS_WORK/manifest" 3 60 64
sync -f "$MNT"
baseline_after_write $((64 * MiB))
ALLOC_BASE=$A0
D=$(bytes_of "$MNT"/a/d0[1-6])
rm -r "$MNT"/a/d0[1-6]
sync -f "$MNT"
trim_fs -v
RETRIM=1
returned "fstrim" "$D"
grep ' d00/' "$FS_WORK/manifest" >"$FS_WORK/kept"
(cd "$MNT/a" && sha256sum --check --strict --quiet "$FS_WORK/kept") || fail "files kept differ after fstrim"

# Online discard.
umount_fs
mount_fs "$FS" discard
space
ALLOC_BASE=$ALLOC
fsdata tree "$MNT/b" "$FS_WORK/manifest.b" 4 20 32
sync -f "$MNT"
baseline_after_write $((32 * MiB))
D=$(bytes_of "$MNT/b")
rm -r "$MNT/b"
sync -f "$MNT"
online_discards "$D"
returned "mount -o discard" "$D"

# fallocate --zero-range on a file.
ALLOC_BASE=$ALLOC
dd if=/dev/urandom of="$MNT/z" bs=1M count=16 conv=fsync status=none
baseline_after_write $((16 * MiB))
fallocate --zero-range --offset 0 --length $((16 * MiB)) "$MNT/z"
sync -f "$MNT"
zeros "$MNT/z" 0 $((16 * MiB))
if [[ $FS == ext4 ]]; then
  fallocate --punch-hole --offset 0 --length $((16 * MiB)) "$MNT/z"
  sync -f "$MNT"
  online_discards $((16 * MiB))
  returned "fallocate --zero-range then --punch-hole" $((16 * MiB))
else
  online_discards $((16 * MiB))
  returned "fallocate --zero-range" $((16 * MiB))
fi
umount_fs
mount_fs "$FS" ro
zeros "$MNT/z" 0 $((16 * MiB))
(cd "$MNT/a" && sha256sum --check --strict --quiet "$FS_WORK/kept") || fail "files kept differ"
umount_fs
check_fs "$FS"

# blkdiscard --zeroout on the device, past the filesystem's end.
OFF=$((448 * MiB)) LEN=$((32 * MiB))
space
ALLOC_BASE=$ALLOC
dd if=/dev/urandom of="$LOOP" bs=1M seek=$((OFF / MiB)) count=$((LEN / MiB)) oflag=direct conv=fsync status=none
baseline_after_write $LEN
timeout 60 blkdiscard -f --zeroout --offset $OFF --length $LEN "$LOOP" || fail "blkdiscard --zeroout"
zeros "$LOOP" $OFF $LEN
returned "blkdiscard --zeroout" $LEN
fsdata server-check "$ARCSTORE" "$P" trim write_zeroes flush

detach
stop_server
pool_fsck
echo PASS
