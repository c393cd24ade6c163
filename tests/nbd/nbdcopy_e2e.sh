#!/usr/bin/env bash
# nbdcopy copies a random 256 MiB image (with a hole in it) into the server
# and back out over 4 connections each way; the bytes match, and the hole
# comes back as a hole in the map.
source "$(dirname "$0")/lib.sh"
require nbdcopy nbdinfo cmp head

S=$NBD_WORK/s.sock
IMG=$NBD_WORK/in.img
head -c 200M /dev/urandom >"$IMG"
truncate -s 224M "$IMG"                          # 24 MiB of zeros (sparse)
head -c 32M /dev/urandom >>"$IMG"                # then data again: 256 MiB
start_server "$S" --export vol:256M:128K --threads 2
nbdcopy --connections=4 --requests=16 "$IMG" "$(uri "$S" vol)"
nbdcopy --connections=4 --requests=16 "$(uri "$S" vol)" "$NBD_WORK/out.img"
cmp "$IMG" "$NBD_WORK/out.img" || fail "bytes differ after the round trip"
nbdinfo --map "$(uri "$S" vol)" >"$NBD_WORK/map"
grep -Eq '^ +209715200 +25165824 +3 +hole,zero$' "$NBD_WORK/map" || { cat "$NBD_WORK/map"; fail "the hole is not a hole"; }
stop_server
echo PASS
