#!/usr/bin/env python3
"""Writes the seed corpus of nbd_fuzzer (src/nbd/fuzz_corpus): client byte
streams of whole NBD sessions, one file per seed. Run from anywhere:
    python3 tests/nbd/make_fuzz_corpus.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "nbd", "fuzz_corpus")
IHAVEOPT = 0x49484156454F5054
REQ = 0x25609513


def flags(f=3):
    return struct.pack(">I", f)


def opt(o, data=b""):
    return struct.pack(">QII", IHAVEOPT, o, len(data)) + data


def go_data(name, infos=()):
    n = name.encode()
    return struct.pack(">I", len(n)) + n + struct.pack(">H", len(infos)) + b"".join(
        struct.pack(">H", i) for i in infos)


def meta_data(name, queries):
    n = name.encode()
    d = struct.pack(">I", len(n)) + n + struct.pack(">I", len(queries))
    for q in queries:
        d += struct.pack(">I", len(q)) + q.encode()
    return d


def req(cmd, off, length, cookie=1, fl=0, payload=b""):
    return struct.pack(">IHHQQI", REQ, fl, cmd, cookie, off, length) + payload


def session_commands():
    s = req(1, 0, 4096, 1, 0, bytes(range(256)) * 16)
    s += req(1, 5000, 100, 2, 1, b"x" * 100)
    s += req(0, 0, 8192, 3)
    s += req(0, 0, 8192, 4, 4)
    s += req(7, 0, 65536, 5)
    s += req(7, 0, 65536, 6, 8)
    s += req(4, 8192, 8192, 7, 1)
    s += req(6, 0, 4096, 8, 2)
    s += req(6, 0, 4096, 9, 16)
    s += req(5, 0, 65536, 10)
    s += req(3, 0, 0, 11)
    s += req(2, 0, 0, 12)
    return s


SEEDS = {
    "list_abort": flags() + opt(3) + opt(2),
    "structured_go": flags() + opt(8) + opt(10, meta_data("a", ["base:allocation"]))
    + opt(7, go_data("a", (3, 1, 2))) + session_commands(),
    "export_name_simple": flags(1) + opt(1, b"a") + session_commands(),
    "info_then_go_ro": flags() + opt(6, go_data("ro", (3,))) + opt(8) + opt(7, go_data("ro"))
    + req(1, 0, 512, 1, 0, b"\0" * 512) + req(0, 0, 512, 2) + req(2, 0, 0, 3),
    "list_meta": flags() + opt(8) + opt(9, meta_data("a", [])) + opt(9, meta_data("a", ["base:"]))
    + opt(42, b"zz") + opt(5) + opt(7, go_data("nope")) + opt(2),
    "bad_requests": flags() + opt(8) + opt(7, go_data(""))
    + req(99, 0, 0, 1) + req(0, 1 << 40, 4096, 2) + req(1, (256 << 10) - 10, 20, 3, 0, b"y" * 20)
    + req(0, 0, 2 << 20, 4) + req(7, 0, 4096, 5) + req(3, 1, 0, 6),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("wrote %d seeds to %s" % (len(SEEDS), os.path.normpath(OUT)))
