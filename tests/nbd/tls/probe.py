"""Protocol-level clients for the TLS tests (tls_e2e.sh, netns_e2e.sh).

  probe.py steady URI STOPFILE OUT   a well-behaved client: writes a pattern,
                                     then reads it back and rewrites it until
                                     STOPFILE exists (at most 300 s); writes
                                     "ok ROUNDS" or "error WHAT" to OUT
  probe.py inject PORT CREDDIR       STARTTLS followed, in the same packet, by
                                     a plaintext NBD_OPT_EXPORT_NAME; then a
                                     real TLS handshake and NBD_OPT_LIST: the
                                     first reply must answer LIST
  probe.py garbage PORT              STARTTLS then garbage instead of a
                                     ClientHello: the server must close
  probe.py stall PORT LIMIT_S        STARTTLS, half a TLS record, then
                                     silence: the server must close within
                                     LIMIT_S
  probe.py readonly URI              a write on a read-only grant (the
                                     client's own checks off): EPERM
  probe.py many URI N                N clients connect and read at once;
                                     prints the seconds it took
Every socket read has a timeout, so nothing here waits forever.
"""
import errno
import os
import socket
import ssl
import struct
import sys
import threading
import time

import nbd

IHAVEOPT = 0x49484156454F5054
REPLY_MAGIC = 0x3E889045565A9
OPT_EXPORT_NAME, OPT_LIST, OPT_STARTTLS = 1, 3, 5
REP_ACK = 1


def recv_exact(s, n):
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise EOFError("server closed after %d of %d bytes" % (len(out), n))
        out += chunk
    return out


def option(opt, data=b""):
    return struct.pack(">QII", IHAVEOPT, opt, len(data)) + data


def read_reply(s):
    magic, opt, typ, length = struct.unpack(">QIII", recv_exact(s, 20))
    assert magic == REPLY_MAGIC, hex(magic)
    return opt, typ, recv_exact(s, length)


def greet(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    recv_exact(s, 18)  # NBDMAGIC, IHAVEOPT, handshake flags
    s.sendall(struct.pack(">I", 3))  # fixed newstyle, no zeroes
    return s


def closed_within(s, limit_s):
    """True if the server closes the connection within limit_s."""
    s.settimeout(limit_s)
    try:
        while s.recv(4096):
            pass
        return True
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


def connect(uri, strict=True):
    h = nbd.NBD()
    h.set_uri_allow_local_file(True)  # tls-psk-file= / tls-certificates=
    if not strict:
        h.set_strict_mode(0)  # let requests the server refuses reach it
    h.connect_uri(uri)
    return h


def steady(uri, stopfile, out):
    h = connect(uri)
    size = 1 << 20
    pattern = bytes((i * 7 + 3) % 251 for i in range(size))
    rounds = 0
    try:
        h.pwrite(pattern, 0)
        h.flush()
        deadline = time.monotonic() + 300
        while not os.path.exists(stopfile) and time.monotonic() < deadline:
            got = h.pread(size, 0)
            if got != pattern:
                raise RuntimeError("data differs in round %d" % rounds)
            h.pwrite(pattern[:65536], 0)
            rounds += 1
        h.shutdown()
        result = "ok %d" % rounds
    except Exception as e:  # noqa: BLE001 - reported to the test
        result = "error after %d rounds: %s" % (rounds, e)
    with open(out, "w") as f:
        f.write(result + "\n")


def inject(port, creddir):
    s = greet(port)
    # The attack: plaintext after STARTTLS, before the TLS handshake.
    s.sendall(option(OPT_STARTTLS) + option(OPT_EXPORT_NAME, b"vol0"))
    opt, typ, _ = read_reply(s)
    assert (opt, typ) == (OPT_STARTTLS, REP_ACK), (opt, typ)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(creddir, "ca-cert.pem"))
    ctx.load_cert_chain(os.path.join(creddir, "client-cert.pem"),
                        os.path.join(creddir, "client-key.pem"))
    t = ctx.wrap_socket(s, server_hostname="localhost")
    t.sendall(option(OPT_LIST))
    opt, typ, _ = read_reply(t)
    if opt != OPT_LIST:
        sys.exit("FAIL: first reply after TLS answers option %d, not LIST: the "
                 "injected plaintext was read as an option" % opt)
    print("inject: injected option ignored, LIST answered")


def garbage(port):
    s = greet(port)
    s.sendall(option(OPT_STARTTLS))
    opt, typ, _ = read_reply(s)
    assert (opt, typ) == (OPT_STARTTLS, REP_ACK), (opt, typ)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n" + bytes(range(256)) * 4)
    if not closed_within(s, 10):
        sys.exit("FAIL: server kept a connection that sent garbage for a ClientHello")
    print("garbage: closed")


def stall(port, limit_s):
    s = greet(port)
    s.sendall(option(OPT_STARTTLS))
    read_reply(s)
    s.sendall(b"\x16\x03\x01\x02\x00\x01")  # a record header and one byte, no more
    start = time.monotonic()
    if not closed_within(s, limit_s):
        sys.exit("FAIL: a stalled TLS handshake was still open after %.1f s" % limit_s)
    print("stall: closed after %.2f s" % (time.monotonic() - start))


def readonly(uri):
    h = connect(uri, strict=False)
    assert h.is_read_only(), "a read-only grant must set NBD_FLAG_READ_ONLY"
    try:
        h.pwrite(b"x" * 4096, 0)
    except nbd.Error as e:
        if e.errnum != errno.EPERM:
            sys.exit("FAIL: write on a read-only grant failed with %s, not EPERM" % e)
        print("readonly: EPERM")
        return
    sys.exit("FAIL: a write on a read-only grant succeeded")


def many(uri, n):
    errors = []
    barrier = threading.Barrier(n)

    def one(i):
        try:
            barrier.wait(timeout=60)
            h = connect(uri)
            h.pread(4096, (i * 4096) % (1 << 20))
            h.shutdown()
        except Exception as e:  # noqa: BLE001
            errors.append(str(e))

    start = time.monotonic()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    took = time.monotonic() - start
    if errors:
        sys.exit("FAIL: %d of %d clients failed, first: %s" % (len(errors), n, errors[0]))
    print("many: %d TLS clients connected and read in %.2f s" % (n, took))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "steady":
        steady(*args)
    elif cmd == "inject":
        inject(int(args[0]), args[1])
    elif cmd == "garbage":
        garbage(int(args[0]))
    elif cmd == "stall":
        stall(int(args[0]), float(args[1]))
    elif cmd == "readonly":
        readonly(args[0])
    elif cmd == "many":
        many(args[0], int(args[1]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
