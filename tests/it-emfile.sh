#!/bin/bash
#
# A daemon out of file descriptors: connections arriving faster than it may
# take them make accept() fail with EMFILE.  The listener pauses for a
# second and resumes, instead of spinning or failing; the daemon keeps
# answering vnetctl and accepts again once descriptors are free.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v prlimit >/dev/null || skip "prlimit (util-linux) is missing"
command -v python3 >/dev/null || skip "python3 is missing"

node_add e 1
vnetd_start e "node e
listen $(addr e):$PORT allow $UNDERLAY"
prlimit --pid "${D_PID[e]}" --nofile=24:24 || fail "prlimit failed"

# hold N: opens N connections to the daemon, holds them 3 s, closes them.
hold() {
	ip netns exec "$(ns e)" python3 - "$(addr e)" "$PORT" "$1" <<'PY'
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
held = []
for _ in range(n):
    try:
        held.append(socket.create_connection((host, port), timeout=1))
    except OSError:
        pass
time.sleep(3)
for s in held:
    s.close()
PY
}

say "40 connections against a limit of 24 descriptors"
hold 40
grep -q "accept: Too many open files" "${D_LOG[e]}" ||
	fail "accept never ran out of descriptors: the test proves nothing"
vctl e show stats >/dev/null || fail "the daemon does not answer any more"
# Descriptors are free again: a peer gets its link.
node_add f 2
vnetd_start f "node f
link e $(addr e):$PORT"
wait_link_up f e 15
pass
