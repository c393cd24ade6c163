# Shared helpers of the filesystem end-to-end scripts (sourced, not run).
#
# The stack under test, from the top:
#
#   ext4 / XFS  (kernel)          mounted on $MNT
#   /dev/loopN  (kernel)          losetup --direct-io=on over the FUSE file
#   $FUSE_DIR/nbd  (nbdfuse)      an NBD client exposing the export as a file
#   arcstore serve POOL           the engine, on a unix socket
#
# Flushes travel down the whole stack: the filesystem's cache flush and FUA
# become an fsync of the FUSE file (loop), which nbdfuse sends as
# NBD_CMD_FLUSH. Discards become fallocate(PUNCH_HOLE) on the file, then
# NBD_CMD_TRIM; zeroing becomes fallocate(ZERO_RANGE), then
# NBD_CMD_WRITE_ZEROES.
#
# Every wait is bounded (timeout, or a poll with a deadline) and the EXIT
# trap takes the stack down from the top, so a failing test leaves no
# mount, loop device, FUSE mount or process behind. A test that cannot run
# here (not root, no /dev/fuse, no loop device, a tool missing) exits 77
# (ctest's skip) and says what is missing.
#    ARCSTORE: the arcstore binary.
set -euo pipefail

# The test's mounts live in a mount namespace of its own. A namespace made
# meanwhile by another process (ip netns exec in the NBD tests, unshare)
# starts as a copy of its parent's mounts and keeps them: a filesystem
# mounted here would stay mounted there after this test unmounts it, holding
# the loop device open and with it the FUSE file, so that the next mount of
# the device fails as "already mounted" and fusermount3 -u as busy.
if [[ -z "${FS_E2E_MNTNS:-}" && $(id -u) -eq 0 ]] &&
  unshare --mount --propagation private true 2>/dev/null; then
  export FS_E2E_MNTNS=1
  exec unshare --mount --propagation private -- bash "$0" "$@"
fi

FS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FS_WORK=$(mktemp -d /tmp/fs_e2e.XXXXXX)
P=$FS_WORK/p.pool
S=$FS_WORK/s.sock
VOL=vol0
MNT=$FS_WORK/mnt
FUSE_DIR=$FS_WORK/fuse
DEV=$FUSE_DIR/nbd
SERVER_PID=""
FUSE_PID=""
LOOP=""
BG_PIDS=()
mkdir -p "$MNT" "$FUSE_DIR"

log() { printf '[%3ds] %s\n' "$SECONDS" "$*"; }

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

skip() {
  echo "SKIP: $*" >&2
  exit 77
}

# is_mounted DIR: whether DIR is a mount point, read from the mount table
# (a stat could block or fail on a FUSE mount whose daemon is gone).
is_mounted() { awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/self/mounts; }

# holders_of FILE: which loop devices and processes still have FILE open, for
# a failure message.
holders_of() {
  local f=$1 out
  out=$(timeout 5 losetup -j "$f" 2>&1 | tr '\n' ' ')
  echo "loop devices on $f: ${out:-none}; open by: $(timeout 5 fuser -v "$f" 2>&1 | tr '\n' ' ')"
}

# wait_gone PID SECONDS: waits for PID to exit; SIGKILL after the deadline.
wait_gone() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.05
  done
  wait "$pid" 2>/dev/null || true
}

# Takes the stack down from the top, each step bounded; never fails.
teardown() {
  local pid
  for pid in "${BG_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${BG_PIDS[@]}"; do wait_gone "$pid" 10; done
  BG_PIDS=()
  if is_mounted "$MNT"; then
    timeout 60 umount "$MNT" 2>/dev/null || timeout 10 umount -l "$MNT" || true
  fi
  if [[ -n "$LOOP" ]]; then
    timeout 20 losetup -d "$LOOP" 2>/dev/null || true
    LOOP=""
  fi
  if is_mounted "$FUSE_DIR"; then
    local deadline=$((SECONDS + 20))
    # The loop device lets go of the file when its last user closes it.
    until timeout 10 fusermount3 -u "$FUSE_DIR" 2>/dev/null; do
      if ((SECONDS >= deadline)); then
        timeout 10 umount -l "$FUSE_DIR" || true
        break
      fi
      sleep 0.05
    done
  fi
  if [[ -n "$FUSE_PID" ]]; then
    wait_gone "$FUSE_PID" 10
    FUSE_PID=""
  fi
}

cleanup() {
  local rc=$?
  set +e
  teardown
  if [[ -n "$SERVER_PID" ]]; then
    kill -KILL "$SERVER_PID" 2>/dev/null
    wait_gone "$SERVER_PID" 10
  fi
  if ((rc != 0 && rc != 77)); then
    for f in "$FS_WORK"/serve.err "$FS_WORK"/nbdfuse.err; do
      [[ -s "$f" ]] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
    done
  fi
  # Never remove a tree something is still mounted in.
  if awk -v w="$FS_WORK/" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
    echo "cleanup: something is still mounted under $FS_WORK; left in place" >&2
    rc=1
  else
    rm -rf "$FS_WORK"
  fi
  exit $rc
}
trap cleanup EXIT

# require_stack FS: skips (77) unless this machine can run the stack with FS.
require_stack() {
  local fs=$1 p
  [[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"
  [[ $(id -u) -eq 0 ]] || skip "needs root (loop devices and mount)"
  [[ -c /dev/fuse ]] || skip "/dev/fuse is missing (no FUSE in this kernel or container)"
  [[ -c /dev/loop-control ]] || skip "/dev/loop-control is missing (no loop devices here)"
  local tools=(nbdfuse fusermount3 losetup mount umount sha256sum /usr/bin/python3)
  case $fs in
    ext4) tools+=(mkfs.ext4 e2fsck) ;;
    xfs) tools+=(mkfs.xfs xfs_repair) ;;
    *) fail "unknown filesystem '$fs' (ext4 or xfs)" ;;
  esac
  for p in "${tools[@]}" "${@:2}"; do
    command -v "$p" >/dev/null 2>&1 || skip "'$p' is not installed (scripts/setup installs it)"
  done
  /usr/bin/python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"
  grep -qw "$fs" /proc/filesystems || modprobe "$fs" 2>/dev/null ||
    skip "the kernel has no $fs filesystem"
  grep -qw fuse /proc/filesystems || modprobe fuse 2>/dev/null || skip "the kernel has no FUSE"
  timeout 10 losetup -f >/dev/null 2>&1 || skip "no free loop device (losetup -f failed)"
}

# make_pool VOLSIZE [vol create options]: a sparse pool with one volume.
make_pool() {
  local size=$1
  shift
  # Under 1 GiB: pool info prints its sizes in MiB to a tenth (fsdata.py space).
  "$ARCSTORE" pool create "$P" --size 960M --sparse >/dev/null
  "$ARCSTORE" vol create "$P" "$VOL" --size "$size" "$@" >/dev/null 2>"$FS_WORK/vol.err" ||
    fail "vol create: $(cat "$FS_WORK/vol.err")"
}

serve() {
  : >"$FS_WORK/serve.out"
  "$ARCSTORE" serve "$P" --socket "$S" >"$FS_WORK/serve.out" 2>>"$FS_WORK/serve.err" &
  SERVER_PID=$!
  local deadline=$((SECONDS + 30))
  until grep -q '^serving ' "$FS_WORK/serve.out" 2>/dev/null; do
    kill -0 "$SERVER_PID" 2>/dev/null || fail "serve exited at start"
    ((SECONDS < deadline)) || fail "serve did not start within 30 s"
    sleep 0.02
  done
}

# stop_server: SIGTERM; the server must exit 0 within 60 s.
stop_server() {
  kill -TERM "$SERVER_PID"
  local deadline=$((SECONDS + 60))
  while kill -0 "$SERVER_PID" 2>/dev/null; do
    ((SECONDS < deadline)) || fail "serve did not exit within 60 s of SIGTERM"
    sleep 0.02
  done
  local rc=0
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=""
  ((rc == 0)) || fail "serve exited with status $rc after SIGTERM"
}

kill_server() {
  kill -KILL "$SERVER_PID"
  wait_gone "$SERVER_PID" 10
  SERVER_PID=""
}

# attach: nbdfuse exposes the export as $DEV, a loop device ($LOOP) over it.
attach() {
  nbdfuse "$DEV" "nbd+unix:///$VOL?socket=$S" >>"$FS_WORK/nbdfuse.err" 2>&1 &
  FUSE_PID=$!
  local deadline=$((SECONDS + 20))
  until is_mounted "$FUSE_DIR" && [[ -f "$DEV" ]]; do
    kill -0 "$FUSE_PID" 2>/dev/null || fail "nbdfuse exited at start: $(cat "$FS_WORK/nbdfuse.err")"
    ((SECONDS < deadline)) || fail "nbdfuse did not mount within 20 s"
    sleep 0.02
  done
  LOOP=$(timeout 20 losetup --find --show --direct-io=on "$DEV") || fail "losetup over $DEV"
  [[ -b "$LOOP" ]] || fail "losetup gave '$LOOP', not a block device"
}

# detach: the normal path, every step must succeed.
detach() {
  timeout 20 losetup -d "$LOOP" || fail "losetup -d $LOOP"
  LOOP=""
  local deadline=$((SECONDS + 20))
  until timeout 10 fusermount3 -u "$FUSE_DIR" 2>"$FS_WORK/fusermount.err"; do
    ((SECONDS < deadline)) || fail "fusermount3 -u $FUSE_DIR kept failing for 20 s: $(cat "$FS_WORK/fusermount.err"); $(holders_of "$DEV")"
    sleep 0.05
  done
  wait_gone "$FUSE_PID" 20
  FUSE_PID=""
}

# mkfs_dev FS [MIB]: the filesystem on the loop device, or its first MIB MiB.
mkfs_dev() {
  case $1 in
    ext4) timeout 120 mkfs.ext4 -q -F "$LOOP" ${2:+"${2}M"} ;;
    xfs) timeout 120 mkfs.xfs -q -f ${2:+-d size="${2}m"} "$LOOP" ;;
  esac || fail "mkfs.$1 on $LOOP"
}

mount_fs() {
  timeout 60 mount ${2:+-o "$2"} "$LOOP" "$MNT" || fail "mount $1 ${2:-} on $LOOP"
}

umount_fs() { timeout 120 umount "$MNT" || fail "umount $MNT"; }

# check_fs FS: the filesystem's own read-only check must find nothing.
check_fs() {
  local rc=0
  case $1 in
    ext4) timeout 120 e2fsck -fn "$LOOP" >"$FS_WORK/fsck.out" 2>&1 || rc=$? ;;
    xfs) timeout 120 xfs_repair -n "$LOOP" >"$FS_WORK/fsck.out" 2>&1 || rc=$? ;;
  esac
  ((rc == 0)) || { cat "$FS_WORK/fsck.out" >&2; fail "$1 check of $LOOP: exit $rc"; }
}

# pool_fsck: the pool (no server) checks clean.
pool_fsck() {
  "$ARCSTORE" fsck "$P" >"$FS_WORK/pfsck.out" || { cat "$FS_WORK/pfsck.out" >&2; fail "arcstore fsck"; }
  grep -q '^clean$' "$FS_WORK/pfsck.out" || { cat "$FS_WORK/pfsck.out" >&2; fail "pool not clean"; }
}

fsdata() { /usr/bin/python3 "$FS_LIB_DIR/fsdata.py" "$@"; }
