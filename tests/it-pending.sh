#!/bin/bash
#
# Pending connection slots, per address and in total.  An attacker holds
# silent connections from one address, reopening each as the daemon closes
# it; it gets CONN_PENDING_PER_ADDR (8) of the slots, the rest are closed at
# accept (pending_addr_full), and a restarted host that dials meanwhile links
# at once.  Then the same from 64 addresses: the total (64) holds, counted
# apart (pending_full).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing"

PER_ADDR=8
TOTAL=64

node_add p 1
node_add h 2
node_add x 9
vnetd_start p "node p
listen $(addr p):$PORT allow $UNDERLAY"

# The attacker: N silent connections from the given source addresses,
# round robin, each reopened as soon as the daemon closes it; runs until
# killed.
cat >"$TMPD/hold.py" <<'PY'
import select, socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sources = sys.argv[4:]
socks = {}
def opener():
    i = 0
    while True:
        yield sources[i % len(sources)]
        i += 1
src = opener()
while True:
    while len(socks) < n:
        try:
            s = socket.create_connection((host, port), timeout=1,
                                         source_address=(next(src), 0))
            socks[s.fileno()] = s
        except OSError:
            time.sleep(0.01)
            break
    r, _, _ = select.select(list(socks.values()), [], [], 0.05)
    for s in r:
        try:
            gone = s.recv(65536) == b""
        except OSError:
            gone = True
        if gone:
            del socks[s.fileno()]
            s.close()
PY
# attack N SOURCE...: starts the attacker in namespace x.
attack() {
	ip netns exec "$(ns x)" python3 "$TMPD/hold.py" "$(addr p)" "$PORT" "$@" \
		>"$TMPD/hold.out" 2>&1 {LIB_STDOUT}>&- {LIB_STDERR}>&- &
	ATTACKER=$!
	EXTRA_PIDS+=("$ATTACKER")
}
stop_attack() {
	kill "$ATTACKER"
	wait "$ATTACKER" 2>/dev/null || true
}
pending_is() { (($(stat_value p pending) == $1)); }

say "one address holds 80 silent connections"
attack 80 "$(addr x)"
wait_for 10 stat_at_least p pending_addr_full 10 ||
	fail "the attacker's extra connections were not refused: $(vctl p show stats | grep pending)"
pending_is "$PER_ADDR" || fail "pending is $(stat_value p pending), not $PER_ADDR"
grep -q "connections from that address are waiting for their handshake" "${D_LOG[p]}" ||
	fail "no log line for the per-address refusals"

say "a host (re)started meanwhile links at once"
vnetd_start h "node h
link p $(addr p):$PORT"
wait_link_up h p 10
wait_link_up p h 5
pending_is "$PER_ADDR" || fail "pending is $(stat_value p pending), not $PER_ADDR"
stop_attack
wait_for 15 pending_is 0 || fail "connections still pending after the attacker left"

say "64 addresses: the total limit"
srcs=()
for ((i = 100; i < 100 + TOTAL; i++)); do
	ip -n "$(ns x)" addr add "10.66.0.$i/32" dev u0
	srcs+=("10.66.0.$i")
done
full0=$(stat_value p pending_full)
attack $((TOTAL * 2)) "${srcs[@]}"
wait_for 10 stat_at_least p pending_full $((full0 + 10)) ||
	fail "past $TOTAL pending, connections were not refused: $(vctl p show stats | grep pending)"
pending_is "$TOTAL" || fail "pending is $(stat_value p pending), not $TOTAL"
link_up h p || fail "the established link went down during the flood"
stop_attack
pass
