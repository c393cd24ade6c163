#!/usr/bin/env bash
# nbdinfo reports the size, block sizes, contexts and flags the server
# advertises, for a writable and a read-only export, and --list lists both.
source "$(dirname "$0")/lib.sh"
require nbdinfo /usr/bin/python3

S=$NBD_WORK/s.sock
start_server "$S" --export vol:96M:64K --export ro:1M:4K:ro
nbdinfo --json "$(uri "$S" vol)" >"$NBD_WORK/vol.json"
nbdinfo --json "$(uri "$S" ro)" >"$NBD_WORK/ro.json"
nbdinfo --list --json "$(uri "$S" "")" >"$NBD_WORK/list.json"
/usr/bin/python3 - "$NBD_WORK" <<'PY'
import json, sys
w = sys.argv[1]
def export(name):
    e = json.load(open(f"{w}/{name}.json"))["exports"][0]
    return e
vol, ro = export("vol"), export("ro")
want = {"export-size": 96 << 20, "block_size_minimum": 1, "block_size_preferred": 65536,
        "block_size_maximum": 32 << 20, "is_read_only": False, "can_flush": True,
        "can_fua": True, "can_trim": True, "can_zero": True, "can_fast_zero": True,
        "can_cache": True, "can_multi_conn": True, "can_df": True}
for k, v in want.items():
    assert vol.get(k) == v, f"vol {k}: {vol.get(k)!r} != {v!r}"
assert "base:allocation" in vol["contexts"], vol["contexts"]
for k, v in {"export-size": 1 << 20, "is_read_only": True, "can_trim": False,
             "can_zero": False, "block_size_preferred": 4096, "can_multi_conn": True}.items():
    assert ro.get(k) == v, f"ro {k}: {ro.get(k)!r} != {v!r}"
names = sorted(e["export-name"] for e in json.load(open(f"{w}/list.json"))["exports"])
assert names == ["ro", "vol"], names
print("nbdinfo: sizes, block sizes, contexts and flags as advertised")
PY
# The map of an empty export is one hole.
nbdinfo --map "$(uri "$S" vol)" | grep -Eq '^ +0 +100663296 +3 +hole,zero$' || fail "map of an empty export"
stop_server
echo PASS
