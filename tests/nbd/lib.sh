# Shared helpers of the NBD end-to-end scripts (sourced, not run).
#   NBD_SERVER: the server binary (nbd_test_server), from ctest.
# A missing client program fails the test: these tests never skip.
set -euo pipefail

NBD_WORK=$(mktemp -d /tmp/nbd_e2e.XXXXXX)
NBD_SERVER_PID=""
PEER_PID=""

cleanup() {
  local rc=$?
  if [[ -n "$NBD_SERVER_PID" ]]; then kill -KILL "$NBD_SERVER_PID" 2>/dev/null || true; fi
  if [[ -n "$PEER_PID" ]]; then kill -KILL "$PEER_PID" 2>/dev/null || true; fi
  rm -rf "$NBD_WORK"
  exit $rc
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

require() {
  for p in "$@"; do
    command -v "$p" >/dev/null 2>&1 || fail "required client program '$p' is not installed (scripts/setup installs it)"
  done
}

# start_server SOCKET ARGS...: starts the server, waits for its "ready" line.
start_server() {
  local sock=$1
  shift
  [[ -x "${NBD_SERVER:-}" ]] || fail "NBD_SERVER is not set to the server binary"
  "$NBD_SERVER" --socket "$sock" "$@" >"$NBD_WORK/server.out" 2>"$NBD_WORK/server.err" &
  NBD_SERVER_PID=$!
  for _ in $(seq 1 500); do
    if grep -q '^ready ' "$NBD_WORK/server.out" 2>/dev/null; then return 0; fi
    kill -0 "$NBD_SERVER_PID" 2>/dev/null || { cat "$NBD_WORK/server.err" >&2; fail "server exited at start"; }
    sleep 0.01
  done
  fail "server did not become ready"
}

# stop_server: SIGTERM, and the server must exit 0.
stop_server() {
  kill -TERM "$NBD_SERVER_PID"
  local rc=0
  wait "$NBD_SERVER_PID" || rc=$?
  NBD_SERVER_PID=""
  [[ $rc -eq 0 ]] || { cat "$NBD_WORK/server.err" >&2; fail "server exited with status $rc after SIGTERM"; }
}

# arcstore_serve PREFIX POOL ARGS...: starts `arcstore serve POOL ARGS...`
# ($ARCSTORE) with its output in PREFIX.out and PREFIX.err, waits for its
# "serving" line, and sets ARCSTORE_PID. With SERVE_NETNS set, the server
# runs in that network namespace (`ip netns exec` execs it: the PID is the
# server's).
arcstore_serve() {
  local prefix=$1 pool=$2
  shift 2
  [[ -x "${ARCSTORE:-}" ]] || fail "ARCSTORE is not set to the arcstore binary"
  local in_ns=()
  [[ -n "${SERVE_NETNS:-}" ]] && in_ns=(ip netns exec "$SERVE_NETNS")
  # Emptied here, not only by the background start's redirection: a server
  # started again on the same PREFIX must not be taken for started by the
  # "serving" line of the one before, before its own shell has truncated it.
  : >"$prefix.out"
  "${in_ns[@]}" "$ARCSTORE" serve "$pool" "$@" >"$prefix.out" 2>"$prefix.err" &
  ARCSTORE_PID=$!
  for _ in $(seq 1 1000); do
    grep -q '^serving ' "$prefix.out" 2>/dev/null && return 0
    kill -0 "$ARCSTORE_PID" 2>/dev/null || { cat "$prefix.err" >&2; fail "serve $pool exited at start"; }
    sleep 0.01
  done
  fail "serve $pool did not start"
}

# arcstore_stop PID PREFIX: SIGTERM to the server that arcstore_serve
# PREFIX started, which must exit 0 (else its PREFIX.err is shown).
arcstore_stop() {
  local pid=$1 prefix=$2 rc=0
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  [[ $rc -eq 0 ]] || { cat "$prefix.err" >&2; fail "serve ($prefix) exited with status $rc"; }
}

# fsck_clean POOL...: `arcstore fsck` passes on each pool (else its output
# is shown).
fsck_clean() {
  local p
  for p in "$@"; do
    "$ARCSTORE" fsck "$p" >"$p.fsck" 2>&1 || { cat "$p.fsck" >&2; fail "fsck of $p"; }
  done
}

# quorum_opts CHILD...: qemu's quorum block driver over the given children,
# vote threshold 2, rewrite-corrupted on; each CHILD is the comma-separated
# options of a child's protocol node (e.g. driver=nbd,server.type=...).
quorum_opts() {
  local q="driver=quorum,vote-threshold=2,rewrite-corrupted=on" i=0 child opt
  local parts=()
  for child in "$@"; do
    q+=",children.$i.driver=raw"
    IFS=, read -ra parts <<<"$child"
    for opt in "${parts[@]}"; do q+=",children.$i.file.$opt"; done
    i=$((i + 1))
  done
  echo "$q"
}

# qemu_io_ok OPTS COMMAND...: qemu-io --image-opts OPTS with each command;
# fails on any error, since qemu-io itself exits 0 after a failed command.
# QEMU_IO_CMD, when set (an array), is the qemu-io command line to use (e.g.
# under `ip netns exec`, with --object options).
qemu_io_ok() {
  local opts=$1
  shift
  local args=() c out
  for c in "$@"; do args+=(-c "$c"); done
  local cmd=(qemu-io)
  [[ -n "${QEMU_IO_CMD+set}" ]] && cmd=("${QEMU_IO_CMD[@]}")
  out=$("${cmd[@]}" --image-opts "$opts" "${args[@]}" 2>&1) || fail "qemu-io exited non-zero: $out"
  if grep -qiE "error|fail|pattern verification" <<<"$out"; then
    fail "qemu-io ${*}: $out"
  fi
  return 0
}

# start_nbdkit_memory SOCKET SIZE: the differential peer.
start_nbdkit_memory() {
  require nbdkit
  nbdkit -f -U "$1" memory "$2" &
  PEER_PID=$!
  for _ in $(seq 1 500); do
    nbdinfo --size "nbd+unix:///?socket=$1" >/dev/null 2>&1 && return 0
    sleep 0.01
  done
  fail "nbdkit did not start"
}

uri() { echo "nbd+unix:///$2?socket=$1"; }
