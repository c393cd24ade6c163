#!/usr/bin/env bash
# A kernel filesystem (ext4 or XFS, the argument) on an arcstore volume,
# through nbdfuse and a loop device (tests/fs/lib.sh), round trip:
#  - mkfs, mount, a tree of files with known sha256 sums and a SQLite
#    database of many transactions (synchronous=FULL, WAL);
#  - unmount, detach, SIGTERM the server: it exits 0, arcstore fsck clean;
#  - serve again, attach: the filesystem's own check (e2fsck -fn,
#    xfs_repair -n) finds nothing, every sum and every row is back.
#    ARCSTORE: the arcstore binary.
source "$(dirname "$0")/lib.sh"
FS=${1:?usage: roundtrip_e2e.sh ext4|xfs}
require_stack "$FS"

make_pool 512M
serve
attach
log "attached $VOL as $LOOP ($FS)"
mkfs_dev "$FS"
mount_fs "$FS"
fsdata tree "$MNT/tree" "$FS_WORK/manifest" 1 300 48
fsdata db-fill "$MNT/db.sqlite" "$FS_WORK/db.expect" WAL 1500
log "wrote the tree and the database"
umount_fs
detach
fsdata server-check "$ARCSTORE" "$P" write flush
stop_server
pool_fsck
log "server stopped, pool clean"

serve
attach
check_fs "$FS"
mount_fs "$FS" ro
(cd "$MNT/tree" && sha256sum --check --strict --quiet "$FS_WORK/manifest") ||
  fail "file contents differ after the round trip"
[[ $(find "$MNT/tree" -type f | wc -l) -eq $(wc -l <"$FS_WORK/manifest") ]] ||
  fail "the tree has a different number of files"
# Read-only: SQLite opens a WAL database read-only only with its -shm, so copy it.
cp "$MNT"/db.sqlite* "$FS_WORK/"
fsdata db-check "$FS_WORK/db.sqlite" "$FS_WORK/db.expect"
log "every checksum and every row back"
umount_fs
detach
fsdata server-check "$ARCSTORE" "$P" read
stop_server
pool_fsck
echo PASS
