#!/bin/bash
#
# Link liveness under routing auto: two proxies, two hosts each linked to
# both, no direct link.  Guest 1 pings guest 2 every 10 ms and a TCP
# transfer runs while the proxy that carries their traffic goes silent
# (iptables DROP in and out of its namespace: no FIN, no RST): the probes
# miss it, both hosts take their links to it out of the routes, and the
# longest gap in the ping must stay under 1 s; the transfer completes.
# The proxy's return must cost nothing: its links come back only after
# the hold time, and no second gap follows.  Then the same with the
# proxy deaf only (DROP in): the proxy hears nothing, says so in its
# probes, and the hosts, which still hear it, leave it too.  Last, with
# nothing to carry, every link slows to the idle pace (2 s), the proxy the
# routes go by goes silent, and a ping begins: the first frames on the
# dead link poll its peer, the link dies within the fast detection time,
# and the first reply comes within 1 s.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iptables >/dev/null || skip "iptables is missing"
command -v iperf3 >/dev/null || skip "iperf3 is missing"

node_add p1 1
node_add p2 2
node_add host1 3
node_add host2 4
failover_start plain
IP2=$(guest_ip 2)
iperf_server g2

[[ $(link_field host1 p1 liveness) == up ]] ||
	fail "host1's link p1 has liveness '$(link_field host1 p1 liveness)'"
[[ $(link_field host1 p1 probe_ms) == 200 ]] ||
	fail "host1's link p1 probes every '$(link_field host1 p1 probe_ms)' ms, not 200"

# why DAEMON LINK: why its liveness was last lost (the TSV form: blanks).
why() {
	vctl "$1" -t -H show links all | awk -F'\t' -v n="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == "liveness_why") c = i; next }
		$1 == n { print $c }'
}
# failover NAME CHAINS: the proxy carrying the traffic drops what CHAINS
# name, 3 s, then comes back.
failover() {
	local name=$1 chains=$2 p other t0 t1 ping iperf g gat c
	in_guest g1 ping -D -n -i 0.01 -W 1 "$IP2" >"$TMPD/ping-$name" 2>&1 &
	ping=$!
	EXTRA_PIDS+=("$ping")
	wait_for 5 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping-$name') >= 50 ))" ||
		fail "$name: the ping does not run: $(tail -n 5 "$TMPD/ping-$name")"
	p=$(failover_active)
	other=p1
	[[ $p == p1 ]] && other=p2
	say "$name: $p carries the ping; it drops $chains"
	in_guest g1 iperf3 -c "$IP2" -n 30M -J >"$TMPD/iperf-$name" 2>&1 &
	iperf=$!
	EXTRA_PIDS+=("$iperf")
	t0=$(date +%s.%N)
	for c in $chains; do
		ip netns exec "$(ns "$p")" iptables -A "$c" -j DROP
	done
	for i in 1 2; do
		wait_for 5 live_not "host$i" "$p" up ||
			fail "$name: host$i's link $p still alive: $(vctl "host$i" show links all)"
	done
	say "$name: host1's link $p: $(why host1 "$p"); $p's link host1: $(why "$p" host1)"
	wait_for 5 now_past "$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 3 }')" || true
	for c in $chains; do
		ip netns exec "$(ns "$p")" iptables -D "$c" -j DROP
	done
	t1=$(date +%s.%N)
	for i in 1 2; do
		wait_for 15 live_is "host$i" "$p" up ||
			fail "$name: host$i's link $p not back: $(vctl "host$i" show links all)"
	done
	say "$name: $p back in the routes $(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after its return"
	wait_for 30 proc_gone "$iperf" || fail "$name: the TCP transfer does not end"
	wait "$iperf" || fail "$name: the TCP transfer failed: $(tail -n 20 "$TMPD/iperf-$name")"
	say "$name: the TCP transfer ended at $(date +%s.%N)"
	# One more second of pings over the routes as they are again.
	wait_for 5 now_past "$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 1 }')" || true
	kill "$ping"
	wait "$ping" 2>/dev/null || true
	read -r g gat < <(ping_gap "$TMPD/ping-$name" 0)
	say "$name: longest gap in the ping: $g s (at $gat, the drop at $t0)"
	awk -v g="$g" 'BEGIN { exit !(g < 1.0) }' ||
		fail "$name: the ping stopped for $g s"
	read -r g gat < <(ping_gap "$TMPD/ping-$name" "$t1")
	say "$name: longest gap after the return: $g s"
	awk -v g="$g" 'BEGIN { exit !(g < 0.25) }' ||
		fail "$name: the proxy's return made a gap of $g s (at $gat)"
	# Routes moved back onto it: the first end to take the link back must
	# not send where the other has no route yet (one echo allowed for a
	# loaded machine; 0 in 40 returns of tests/experiments/failover.sh).
	c=$(pings_lost "$TMPD/ping-$name" "$t1")
	say "$name: echoes lost after the return: $c"
	((c <= 1)) || fail "$name: the proxy's return lost $c echoes"
	[[ $(link_field host1 "$other" liveness) == up ]] ||
		fail "$name: host1's link $other lost its liveness too"
	grep -q "link $p: liveness lost" "${D_LOG[host1]}" ||
		fail "$name: host1 logged no loss of link $p"
}

failover silent "INPUT OUTPUT"
failover deaf "INPUT"
grep -c "liveness lost" "${D_LOG[host1]}" | grep -qx 2 ||
	fail "host1 logged $(grep -c "liveness lost" "${D_LOG[host1]}") losses, not 2: $(grep liveness "${D_LOG[host1]}")"

say "idle: no frames for 10 s, every link at the slow pace"
# Whatever still runs in guest 1 (a ping outlives the shell killed above).
ip netns pids "${G_NS[g1]}" 2>/dev/null | xargs -r kill 2>/dev/null || true
slow_all() {
	local i p
	for i in 1 2; do
		for p in p1 p2; do
			[[ $(link_field "host$i" "$p" probe_ms) == 2000 ]] || return 1
		done
	done
}
wait_for 25 slow_all || fail "idle links still probe fast: $(vctl host1 show links all)"
via=$(vctl host1 -t show routes | awk -F'\t' -v m="$(guest_mac 2)" '$2 == m { print $4 }')
[[ $via == p1 || $via == p2 ]] || fail "host1 routes guest 2 by '$via': $(vctl host1 show routes)"
for c in INPUT OUTPUT; do
	ip netns exec "$(ns "$via")" iptables -A "$c" -j DROP
done
t0=$(date +%s.%N)
in_guest g1 ping -D -n -i 0.01 -W 1 "$IP2" >"$TMPD/ping-idle" 2>&1 &
ping=$!
EXTRA_PIDS+=("$ping")
wait_for 5 live_not host1 "$via" up ||
	fail "idle: host1's link $via still alive: $(vctl host1 show links all)"
say "idle: host1's link $via: $(why host1 "$via")"
wait_for 5 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping-idle') >= 20 ))" ||
	fail "idle: no replies by the other proxy: $(tail -n 5 "$TMPD/ping-idle")"
kill "$ping"
wait "$ping" 2>/dev/null || true
first=$(awk -v t0="$t0" '/bytes from/ { printf "%.3f\n", substr($1, 2, length($1) - 2) - t0; exit }' "$TMPD/ping-idle")
say "idle: $via silent and the ping begun at $t0: first reply after $first s"
awk -v g="$first" 'BEGIN { exit !(g < 1.0) }' || fail "idle: the first reply took $first s"
grep -q "link $via: liveness lost: no answer to a poll" "${D_LOG[host1]}" ||
	fail "idle: host1 did not find $via dead by a poll: $(grep "link $via" "${D_LOG[host1]}" | tail -n 5)"
pass
