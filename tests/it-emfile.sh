#!/bin/bash
#
# A daemon out of file descriptors: connections arriving faster than it may
# take them make accept() fail with EMFILE.  The listener pauses for a
# second and resumes, instead of spinning or failing; the daemon keeps
# answering vnetctl and accepts again once descriptors are free.
#
# Then a listener removed while it is paused: its resume timer goes with it.
# That daemon runs under valgrind (when installed), which sees a timer that
# outlives its listener touch freed memory inside libevent, where ASan does
# not look; valgrind's errors make the daemon exit non-zero on SIGTERM.
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

# The connections come from many addresses (10.66.0.100-163, local to
# every node namespace): from one, most would be refused before accept()
# runs out (CONN_PENDING_PER_ADDR).
many_sources() {
	local i
	for ((i = 100; i < 164; i++)); do
		ip -n "$(ns "$1")" addr add "10.66.0.$i/32" dev u0
	done
}
many_sources e

# hold N: opens N connections to the daemon, holds them 3 s, closes them.
hold() {
	ip netns exec "$(ns e)" python3 - "$(addr e)" "$PORT" "$1" <<'PY'
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
held = []
for i in range(n):
    try:
        held.append(socket.create_connection((host, port), timeout=1,
                    source_address=("10.66.0.%d" % (100 + i % 64), 0)))
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

# A daemon whose two listeners are paused; one of them is removed during
# the pause, the other takes a peer once it resumes.
node_add v 3
vnetd_conf_v() {
	printf 'node v\nlisten %s:%d allow %s\nlisten %s:%d allow %s\n' \
		"$(addr v)" "$PORT" "$UNDERLAY" "$(addr v)" $((PORT + 1)) "$UNDERLAY"
}
# valgrind cannot run a sanitizer build; ASan sees nothing of this bug.
if command -v valgrind >/dev/null && ! grep -qa __asan_init "$VNETD"; then
	say "under valgrind"
	cat >"$TMPD/vg-vnetd" <<WRAP
#!/bin/sh
exec prlimit --nofile=48:48 valgrind -q --error-exitcode=99 --log-file=$TMPD/valgrind.log $VNETD "\$@"
WRAP
else
	say "no valgrind, or a sanitizer build: the removed listener is checked without valgrind"
	cat >"$TMPD/vg-vnetd" <<WRAP
#!/bin/sh
exec prlimit --nofile=32:32 $VNETD "\$@"
WRAP
fi
chmod +x "$TMPD/vg-vnetd"
VNETD_PLAIN=$VNETD
VNETD=$TMPD/vg-vnetd
vnetd_start v "$(vnetd_conf_v)"
many_sources v
VNETD=$VNETD_PLAIN

# Fills the descriptors from both listeners, waits for both to pause, lets
# go, and removes the first listener at once, within its second of pause.
ip netns exec "$(ns v)" python3 - "$(addr v)" "$PORT" "${D_LOG[v]}" "$VNETCTL" "${D_SOCK[v]}" <<'PY' ||
import socket, subprocess, sys, time
host, port, log, vnetctl, sock = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
held = []
n = 0
def paused():
    with open(log, errors="replace") as f:
        return f.read().count("accept: Too many open files")
base = paused()
deadline = time.time() + 20
for p in (port, port + 1):
    while paused() < base + (1 if p == port else 2):
        if time.time() > deadline:
            sys.exit("listener %d never ran out of descriptors" % p)
        try:
            held.append(socket.create_connection((host, p), timeout=1,
                        source_address=("10.66.0.%d" % (100 + n % 64), 0)))
            n += 1
        except OSError:
            time.sleep(0.05)
for s in held:
    s.close()
r = subprocess.run([vnetctl, "-s", sock, "del-listen", "%s:%d" % (host, port)])
sys.exit(r.returncode)
PY
	fail "could not pause both listeners and remove one"
say "the paused listener was removed; the other one resumes and takes a peer"
node_add w 4
vnetd_start w "node w
link v $(addr v):$((PORT + 1))"
wait_link_up w v 30
vctl v show stats >/dev/null || fail "v does not answer after the pause"
if [[ -f $TMPD/valgrind.log ]] && [[ -s $TMPD/valgrind.log ]]; then
	fail "valgrind: $(head -n 30 "$TMPD/valgrind.log")"
fi
pass
