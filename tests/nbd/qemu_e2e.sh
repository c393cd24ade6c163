#!/usr/bin/env bash
# qemu-img convert into the server and back, qemu-img compare, and qemu-io
# writes and pattern-checked reads, unaligned ones included.
source "$(dirname "$0")/lib.sh"
require qemu-img qemu-io cmp head

S=$NBD_WORK/s.sock
IMG=$NBD_WORK/in.img
head -c 40M /dev/urandom >"$IMG"
truncate -s 64M "$IMG"
start_server "$S" --export vol:64M:64K --threads 2
qemu-img convert -n -f raw -O raw "$IMG" "$(uri "$S" vol)"
qemu-img compare -f raw -F raw "$IMG" "$(uri "$S" vol)" || fail "qemu-img compare after convert in"
qemu-img convert -f raw -O raw "$(uri "$S" vol)" "$NBD_WORK/out.img"
cmp "$IMG" "$NBD_WORK/out.img" || fail "bytes differ after convert out"
qemu-io -f raw "$(uri "$S" vol)" \
  -c 'write -P 0xab 1000 70000' -c 'read -P 0xab 1000 70000' \
  -c 'write -z 4096 8192' -c 'read -P 0 4096 8192' \
  -c 'write -f -P 0x11 65536 65536' -c 'read -P 0x11 65536 65536' \
  -c 'discard 1048576 1048576' -c 'read -P 0 1048576 1048576' \
  -c 'flush' >"$NBD_WORK/qemu-io.out" 2>&1 || { cat "$NBD_WORK/qemu-io.out"; fail "qemu-io"; }
if grep -Eiq 'fail|error|mismatch' "$NBD_WORK/qemu-io.out"; then
  cat "$NBD_WORK/qemu-io.out"
  fail "qemu-io reported a problem"
fi
stop_server
echo PASS
