#!/usr/bin/python3
"""Data for the filesystem end-to-end tests (tests/fs): trees of files with
known sha256 sums, SQLite databases with known contents, and the pool's
space as `arcstore pool info` prints it.

  tree DIR MANIFEST SEED FILES MIB   write FILES files (MIB in all) under DIR,
                                     their sums to MANIFEST (sha256sum format)
  db-fill DB EXPECT MODE TXNS        TXNS transactions (inserts, updates,
                                     deletes), synchronous=FULL, journal MODE;
                                     the expected contents' digest to EXPECT
  db-check DB EXPECT                 integrity_check ok, contents as expected
  db-writer DB LOG MODE              one row per transaction until killed;
                                     each committed id appended to LOG after
                                     COMMIT returned
  db-crash-check DB LOG              every id in LOG present with its payload,
                                     nothing beyond the one in flight
  space ARCSTORE POOL                "allocated free pending" in bytes
  server-check ARCSTORE POOL CMD...  the served pool's NBD stats: no request
                                     or protocol error, and at least one
                                     request of each CMD (e.g. trim, flush)
  trimmed ARCSTORE POOL              bytes the served pool's exports have
                                     answered NBD_CMD_TRIM for, in all
"""
import hashlib
import json
import os
import random
import re
import sqlite3
import subprocess
import sys


def payload(i):
    # Deterministic per id, 32 B to 1.6 KiB.
    return hashlib.sha256(b"%d" % i).digest() * (1 + i % 50)


def tree(root, manifest, seed, files, mib):
    rng = random.Random(int(seed))
    files, total = int(files), int(mib) << 20
    # Sizes: a few empty and tiny files, the rest sharing the total.
    sizes = [0, 1, 4095, 4097] + [rng.randint(1, 100) for _ in range(files - 4)]
    scale = (total - 8193) / sum(sizes[4:])
    sizes = sizes[:4] + [int(s * scale) for s in sizes[4:]]
    lines = []
    for n, size in enumerate(sizes):
        rel = "d%02d/s%d/f%04d" % (n % 7, n % 3, n)
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = rng.randbytes(size)
        with open(path, "wb") as f:
            f.write(data)
        lines.append("%s  %s\n" % (hashlib.sha256(data).hexdigest(), rel))
    with open(manifest, "w") as f:
        f.writelines(lines)
    print("tree: %d files, %d bytes" % (len(sizes), sum(sizes)))


def connect(db, mode=None):
    con = sqlite3.connect(db, isolation_level=None)
    if mode:
        got = con.execute("PRAGMA journal_mode=%s" % mode).fetchone()[0]
        assert got.lower() == mode.lower(), "journal_mode %s refused: %s" % (mode, got)
    # In WAL mode FULL makes each commit durable before COMMIT returns. In
    # DELETE mode the commit is the journal's unlink, which FULL does not
    # sync: a crash right after may roll the last commit back (SQLite's
    # documented behaviour); EXTRA syncs the directory after the unlink.
    sync = "EXTRA" if (mode or "").upper() == "DELETE" else "FULL"
    con.execute("PRAGMA synchronous=%s" % sync)
    return con


def digest(con):
    h = hashlib.sha256()
    n = 0
    for row in con.execute("SELECT id, n, body FROM t ORDER BY id"):
        h.update(repr(row).encode())
        n += 1
    return n, h.hexdigest()


def db_fill(db, expect, mode, txns):
    con = connect(db, mode)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, body BLOB)")
    rng = random.Random(3)
    for i in range(1, int(txns) + 1):
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (?, ?, ?)", (i, i, payload(i)))
        if i % 10 == 0:
            con.execute("UPDATE t SET n = n + 1000000 WHERE id = ?", (rng.randint(1, i),))
        if i % 17 == 0:
            con.execute("DELETE FROM t WHERE id = ?", (rng.randint(1, i),))
        con.execute("COMMIT")
    n, d = digest(con)
    con.close()
    with open(expect, "w") as f:
        f.write("%d %s\n" % (n, d))
    print("db-fill: %s transactions, %d rows, journal_mode=%s" % (txns, n, mode))


def integrity(con):
    got = con.execute("PRAGMA integrity_check").fetchall()
    assert got == [("ok",)], "integrity_check: %r" % got[:10]


def db_check(db, expect):
    con = connect(db)
    integrity(con)
    want = open(expect).read().split()
    n, d = digest(con)
    assert [str(n), d] == want, "contents differ: %d rows %s, want %s" % (n, d, want)
    print("db-check: integrity ok, %d rows as written" % n)


def db_writer(db, log, mode):
    con = connect(db, mode)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)")
    out = open(log, "a")
    i = 0
    while True:
        i += 1
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (?, ?)", (i, payload(i)))
        con.execute("COMMIT")
        out.write("%d\n" % i)
        out.flush()


def db_crash_check(db, log):
    logged = [int(x) for x in open(log).read().split()]
    assert logged, "no commit was logged"
    last = logged[-1]
    con = connect(db)
    integrity(con)
    ids = []
    for i, body in con.execute("SELECT id, body FROM t ORDER BY id"):
        assert body == payload(i), "row %d has the wrong payload" % i
        ids.append(i)
    missing = sorted(set(logged) - set(ids))
    assert not missing, "%d committed rows lost, first %d (last logged %d, %d rows)" % (
        len(missing), missing[0], last, len(ids))
    # Beyond the last logged commit only the one in flight may be there.
    assert ids == list(range(1, len(ids) + 1)), "ids not contiguous"
    assert len(ids) <= last + 1, "%d rows but %d commits logged" % (len(ids), last)
    print("db-crash-check: integrity ok, all %d logged commits present (%d rows)" % (last, len(ids)))


UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def run_tool(args):
    """The stdout of `args` (an arcstore command that asks the running
    server), tried up to three times: on a machine loaded by other tests a
    control call can time out. Each failure is said on stderr."""
    for attempt in range(3):
        try:
            return subprocess.run(args, capture_output=True, text=True, timeout=30,
                                  check=True).stdout
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            err = getattr(e, "stderr", "") or ""
            print("fsdata: %s failed (attempt %d of 3): %s %s" % (" ".join(args[1:3]), attempt + 1,
                                                               e, err.strip()), file=sys.stderr)
            if attempt == 2:
                raise


def space(arcstore, pool):
    out = run_tool([arcstore, "pool", "info", pool])
    vals = {}
    for key in ("allocated", "free", "pending free"):
        m = re.search(r"^%s: +([0-9.]+) (\w+)" % key, out, re.M)
        assert m, "pool info has no '%s' line:\n%s" % (key, out)
        vals[key] = int(float(m.group(1)) * UNITS[m.group(2)])
    print(vals["allocated"], vals["free"], vals["pending free"])


def live_stats(arcstore, pool):
    """{(module, name): value} of the served pool's counters and gauges."""
    out = run_tool([arcstore, "stat", pool, "--live", "--json"])
    stats = json.loads(out.splitlines()[0])["stats"]
    return {(s["module"], s["name"]): s.get("value") for s in stats if "value" in s}


def trimmed(arcstore, pool):
    got = live_stats(arcstore, pool)
    print(sum(v for k, v in got.items() if k[0].startswith("nbd_export.") and k[1] == "trim_bytes"))


def server_check(arcstore, pool, *need):
    got = live_stats(arcstore, pool)
    # A filesystem ignores a failed discard: errors are looked for here.
    bad = {"%s.%s" % k: v for k, v in got.items()
           if k[0].startswith("nbd") and (k[1].startswith("err_") or k[1].endswith("_errors")) and v}
    assert not bad, "the server answered requests with errors: %r" % bad
    ops = {k[1]: v for k, v in got.items() if k[0].startswith("nbd_export.") and k[1].endswith("_ops")}
    print("server: " + ", ".join("%s %d" % (k, v) for k, v in sorted(ops.items()) if v))
    for cmd in need:
        assert ops.get(cmd + "_ops", 0) > 0, "no %s request reached the server" % cmd


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"tree": tree, "db-fill": db_fill, "db-check": db_check, "db-writer": db_writer,
     "db-crash-check": db_crash_check, "space": space,
     "server-check": server_check, "trimmed": trimmed}[cmd](*args)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
