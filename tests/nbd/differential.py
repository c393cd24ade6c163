#!/usr/bin/python3
"""Differential test: one seeded stream of random reads, writes (some FUA),
trims, zeroes (some NO_HOLE), caches and flushes, sent through libnbd to the
arcstore NBD server and to `nbdkit memory`; every read must return the same
bytes from both. Reads alternate between two connections to each server
(multi-conn). Block status from the arcstore server is checked against the
data: a range it calls zero must read as zeros.

    differential.py SERVER_BINARY
ARCSTORE_SEED replays a run; ARCSTORE_TEST_SCALE scales the operation count.
Must run under /usr/bin/python3 (Debian's, which has the nbd module).
"""
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

try:
    import nbd
except ImportError:
    sys.exit("FAIL: python3-libnbd is not installed (scripts/setup installs it)")

SIZE = 8 << 20
RECORD = 4096
MAX_IO = 256 << 10


def wait_for_socket(path, proc):
    """Waits until the server accepts connections (the socket file appears
    at bind(), before listen(), so its existence is not enough)."""
    for _ in range(1000):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            return
        except OSError:
            pass
        finally:
            probe.close()
        if proc.poll() is not None:
            sys.exit("FAIL: %s exited at start" % proc.args[0])
        time.sleep(0.01)
    sys.exit("FAIL: %s did not create its socket" % proc.args[0])


def connect(sock, name):
    h = nbd.NBD()
    h.add_meta_context("base:allocation")
    h.set_export_name(name)
    h.connect_unix(sock)
    return h


def check_block_status(h, ref, off, length):
    """Every extent the server calls zero must read as zeros on the peer."""
    extents = []

    def cb(metacontext, offset, entries, err):
        if metacontext == "base:allocation":
            extents.append((offset, entries))
        return 0

    h.block_status(length, off, cb)
    assert extents, "no base:allocation extents"
    at = off
    entries = extents[0][1]
    for i in range(0, len(entries), 2):
        n, flags = entries[i], entries[i + 1]
        n = min(n, off + length - at)
        if n <= 0:
            break
        if flags & nbd.STATE_ZERO:
            data = ref.pread(n, at)
            assert data == bytes(n), "block status says zero at %d+%d, data is not" % (at, n)
        at += n


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    server = sys.argv[1]
    if shutil.which("nbdkit") is None:
        sys.exit("FAIL: nbdkit is not installed (scripts/setup installs it)")
    seed = int(os.environ.get("ARCSTORE_SEED") or random.SystemRandom().randrange(1 << 62))
    print("differential: seed=%d (ARCSTORE_SEED=%d to replay)" % (seed, seed), flush=True)
    scale = float(os.environ.get("ARCSTORE_TEST_SCALE") or 1.0)
    ops = max(1, int(3000 * scale))
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="nbd_diff.")
    ours_sock, peer_sock = work + "/ours.sock", work + "/peer.sock"
    procs = []
    try:
        procs.append(subprocess.Popen(
            [server, "--socket", ours_sock, "--export", "vol:%d:%d" % (SIZE, RECORD),
             "--threads", "2"], stdout=subprocess.DEVNULL))
        procs.append(subprocess.Popen(["nbdkit", "-f", "-U", peer_sock, "memory", str(SIZE)]))
        wait_for_socket(ours_sock, procs[0])
        wait_for_socket(peer_sock, procs[1])
        ours = [connect(ours_sock, "vol"), connect(ours_sock, "vol")]
        peer = [connect(peer_sock, ""), connect(peer_sock, "")]
        assert ours[0].can_multi_conn() and ours[0].can_fua() and ours[0].can_zero()
        counts = {}
        for i in range(ops):
            op = rng.choices(["read", "write", "trim", "zero", "flush", "cache", "status"],
                             [35, 35, 8, 8, 5, 3, 6])[0]
            counts[op] = counts.get(op, 0) + 1
            # Record-aligned half the time, anything otherwise.
            if rng.random() < 0.5:
                off = rng.randrange(SIZE // RECORD) * RECORD
                length = min(rng.randrange(1, MAX_IO // RECORD + 1) * RECORD, SIZE - off)
            else:
                off = rng.randrange(SIZE)
                length = min(rng.randrange(1, MAX_IO + 1), SIZE - off)
            c = rng.randrange(2)
            if op == "read":
                a, b = ours[c].pread(length, off), peer[c].pread(length, off)
                if a != b:
                    first = next(k for k in range(length) if a[k] != b[k])
                    sys.exit("FAIL: op %d read %d+%d differs first at byte %d (seed %d)" %
                             (i, off, length, off + first, seed))
            elif op == "write":
                data = rng.randbytes(length)
                flags = nbd.CMD_FLAG_FUA if rng.random() < 0.2 else 0
                ours[c].pwrite(data, off, flags)
                peer[c].pwrite(data, off, flags)
            elif op == "trim":
                ours[c].trim(length, off)
                peer[c].trim(length, off)
            elif op == "zero":
                flags = nbd.CMD_FLAG_NO_HOLE if rng.random() < 0.5 else 0
                ours[c].zero(length, off, flags)
                peer[c].zero(length, off, flags)
            elif op == "flush":
                ours[c].flush()
                peer[c].flush()
            elif op == "cache":
                ours[c].cache(length, off)
            else:
                check_block_status(ours[c], peer[c], off, length)
        # Finally the whole export.
        for at in range(0, SIZE, 1 << 20):
            if ours[0].pread(1 << 20, at) != peer[1].pread(1 << 20, at):
                sys.exit("FAIL: final compare differs in MiB %d (seed %d)" % (at >> 20, seed))
        for h in ours + peer:
            h.shutdown()
        print("differential: %d operations agree %s" % (ops, sorted(counts.items())))
        print("PASS")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
