#!/usr/bin/env bash
# SIGKILL of the server under a kernel filesystem (ext4 or XFS) while SQLite
# commits one row per transaction (journal mode WAL with synchronous=FULL,
# or DELETE with synchronous=EXTRA: FULL leaves the unlink that commits a
# DELETE-mode transaction unsynced), each commit that returned logged to a
# file outside the volume:
#  - the dead stack is taken down (the kernel sees I/O errors), bounded;
#  - the server restarts (replaying its intent log), the stack re-attaches,
#    mounting replays the filesystem's journal and then its own check
#    (e2fsck -fn, xfs_repair -n) finds nothing to repair;
#  - the tree written and synced before the crash is intact, every logged
#    commit is in the database, integrity_check is ok;
#  - after a clean stop, arcstore fsck finds the pool clean.
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
FS=${1:?usage: crash_e2e.sh ext4|xfs WAL|DELETE}
MODE=${2:?usage: crash_e2e.sh ext4|xfs WAL|DELETE}
COMMITS=${FS_CRASH_COMMITS:-400}
require_stack "$FS"

make_pool 512M
serve
attach
mkfs_dev "$FS"
mount_fs "$FS"
fsdata tree "$MNT/tree" "$FS_WORK/manifest" 2 120 16
sync -f "$MNT"
log "tree written and synced; starting the writer ($MODE)"

: >"$FS_WORK/commits"
fsdata db-writer "$MNT/db.sqlite" "$FS_WORK/commits" "$MODE" 2>"$FS_WORK/writer.err" &
WRITER=$!
BG_PIDS+=("$WRITER")
deadline=$((SECONDS + 120))
until (($(wc -l <"$FS_WORK/commits") >= COMMITS)); do
  kill -0 "$WRITER" 2>/dev/null || fail "the writer died: $(cat "$FS_WORK/writer.err")"
  ((SECONDS < deadline)) || fail "fewer than $COMMITS commits in 120 s"
  sleep 0.01
done
kill_server
log "server killed after $(wc -l <"$FS_WORK/commits") logged commits"
# The writer fails on the I/O errors or is killed; nothing it logs from now
# on can be a commit the server acknowledged.
teardown
log "stack taken down"

serve
attach
# Mounting replays the journal; then the filesystem must check clean.
mount_fs "$FS"
umount_fs
check_fs "$FS"
mount_fs "$FS"
(cd "$MNT/tree" && sha256sum --check --strict --quiet "$FS_WORK/manifest") ||
  fail "files synced before the crash differ"
fsdata db-crash-check "$MNT/db.sqlite" "$FS_WORK/commits"
umount_fs
detach
fsdata server-check "$ARCSTORE" "$P" read write flush
stop_server
pool_fsck
log "pool clean after the crash and a clean stop"
echo PASS
