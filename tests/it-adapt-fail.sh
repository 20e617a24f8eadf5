#!/bin/bash
#
# adapt shortcuts that fail: a proxy and two hosts in a star over TLS,
# `routing auto`, `adapt shortcuts yes` with a short hold (it-adapt's
# arrangement).  A shortcut whose underlay breaks under a transfer falls
# back to the relay within the keepalive time, the transfer survives and a
# ping every 10 ms goes without an answer for under 1 s;
# then, with the underlay between host1 and host2 blocked, no shortcut
# comes up, the traffic never stops (every 1 s of an iperf3 transfer moves
# data, a ping every 10 ms loses nothing) and the back-off grows to 40 s
# after the second failure.  it-adapt has the shortcut that works.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v iptables >/dev/null || skip "iptables is missing"

HOLD=${HOLD:-2}
KEEPALIVE=1	# a dead link is noticed after 3 keepalives without a word
RSTAR_ROUTING="routing auto
keepalive $KEEPALIVE
adapt shortcuts yes threshold 2mbit hold $HOLD idle 4"
rstar_start 2
for d in proxy host1 host2; do
	wait_for 10 nodes_reachable "$d" 3 ||
		fail "$d: show nodes: $(vctl "$d" show nodes)"
done
G2=$(guest_ip 2)
wait_for 10 gping g1 "$G2" || fail "guest 1 cannot ping guest 2"
iperf_server g2

shortcut_up() {
	link_up host1 host2 && [[ $(link_field host1 host2 origin) == auto ]]
}

say "a shortcut whose underlay breaks falls back within the keepalive time"
in_guest g1 iperf3 -c "$G2" -t 12 -b 50M >"$TMPD/iperf-dies" 2>&1 &
IPERF_PID=$!
EXTRA_PIDS+=("$IPERF_PID")
# Up, and taken by adapt: blocked before adapt looks, the link dies (the
# probes notice in under a second) while adapt still waits for it to come.
adopted() { shortcut_up && [[ $(adapt_field host1 host2 state) == up ]]; }
wait_for $((HOLD + 5)) adopted ||
	fail "no shortcut for the second transfer: $(vctl host1 show adapt)"
# A ping every 10 ms across the death: it ends by itself (-c), about 5 s.
in_guest g1 ping -D -n -i 0.01 -c 400 "$G2" >"$TMPD/ping-dies" 2>&1 &
DPING_PID=$!
EXTRA_PIDS+=("$DPING_PID")
wait_for 5 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping-dies') >= 20 ))" ||
	fail "the ping does not run: $(tail -n 3 "$TMPD/ping-dies")"
tb=$(date +%s.%N)
H1=$(ns host1)
ip netns exec "$H1" iptables -A OUTPUT -d "$(addr host2)" -j DROP
ip netns exec "$H1" iptables -A INPUT -s "$(addr host2)" -j DROP
t0=${EPOCHREALTIME/./}
not_up() { ! shortcut_up; }
wait_for $((3 * KEEPALIVE + 2)) not_up ||
	fail "the dead shortcut is still up: $(vctl host1 show links)"
say "shortcut down $((( ${EPOCHREALTIME/./} - t0) / 1000)) ms after the block"
wait "$DPING_PID" || true
gap=$(ping_gap "$TMPD/ping-dies" "$tb")
say "the longest gap in a ping every 10 ms across the death: ${gap% *} s"
# (and replies after it: a ping that went silent has no gap to measure)
last=$(awk '/bytes from/ { t = substr($1, 2, length($1) - 2) } END { print t }' "$TMPD/ping-dies")
awk -v l="$last" -v t="$tb" 'BEGIN { exit !(l > t + 2) }' ||
	fail "no echo came back 2 s after the block: $(tail -n 3 "$TMPD/ping-dies")"
awk -v g="${gap% *}" 'BEGIN { exit !(g > 0 && g < 1) }' ||
	fail "the guests lost ${gap% *} s when the shortcut died (the bound is 1 s): $(tail -n 3 "$TMPD/ping-dies")"
wait "$IPERF_PID" || fail "the transfer did not survive the dead shortcut: $(cat "$TMPD/iperf-dies")"
grep -q 'adapt: pair host1-host2 .* backoff, shortcut died' "$TMPD/host1.log" ||
	fail "host1 logged no dead shortcut"

say "underlay host1 <-> host2 blocked: traffic stays on the relay"
in_guest g1 ping -n -q -i 0.01 -c 2000 "$G2" >"$TMPD/ping2" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
in_guest g1 iperf3 -c "$G2" -t 20 -b 50M -i 1 -J >"$TMPD/iperf2.json" 2>&1 &
IPERF_PID=$!
EXTRA_PIDS+=("$IPERF_PID")
# The dead shortcut was the first failure, this dial the second.
two_failures() { (($(adapt_field host1 host2 failures) >= 2)); }
wait_for 20 two_failures ||
	fail "fewer than two failures: $(vctl host1 show adapt)"
say "after two failures: $(vctl host1 -t show adapt | awk -F'\t' '$1 == "host2"')"
nb=$(adapt_field host1 host2 next_backoff_s)
((nb == 40)) || fail "back-off did not grow to 40 s (next: $nb)"
grep -q 'adapt: pair host1-host2 .* backoff, dial failed' "$TMPD/host1.log" ||
	fail "host1 logged no failed dial"
link_up host1 host2 && fail "a shortcut came up through the block"
wait "$IPERF_PID" || fail "iperf3 over the relay failed: $(cat "$TMPD/iperf2.json")"
# Every 1 s interval moved data: the traffic never stopped.
zero=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for i in d["intervals"] if i["sum"]["bytes"] == 0))' "$TMPD/iperf2.json")
((zero == 0)) || fail "$zero intervals of 1 s without traffic"
wait "$PING_PID" || true
pings_ok "$TMPD/ping2" || fail "echoes lost while dials failed: $(cat "$TMPD/ping2")"
pass
