#!/bin/bash
#
# Link liveness over the datagram path.  Two proxies, two hosts each
# linked to both with `transport auto` (frames by UDP), `routing auto`.
#
#   - the probes go by datagrams (DGRAM_LIVE), not by the connection,
#     once the datagram path is up: each end's count of probes received
#     by datagram keeps pace with the probes sent;
#   - UDP blocked both ways at the proxy that carries the ping: the probes
#     go by the connection too as soon as they are missed, so no link
#     loses its liveness, the routes stay, and the frames fall back to
#     the connection; the gap in a 10 ms ping is printed;
#   - UDP blocked in one direction only (what host 1 sends): the proxy
#     misses host 1's probes unless the connection brought it other
#     messages meanwhile, and says so; host 1 then doubts its datagram path
#     (dgram_doubted, printed) and its frames go by the connection too,
#     else they do once its own probes go unanswered; no liveness lost
#     either;
#   - the same proxy then silent (everything dropped): the hosts take their
#     links to it out of the routes and the longest gap stays under 1 s.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iptables >/dev/null || skip "iptables is missing"

node_add p1 1
node_add p2 2
node_add host1 3
node_add host2 4
failover_start tls "transport auto"
# row DAEMON LINK NAME: one row of `show link`.
row() {
	vctl "$1" -t show link "$2" | awk -F'\t' -v n="$3" \
		'$1 == n { print $2; found = 1; exit } END { exit !found }'
}
transport_is() { [[ $(row "$1" "$2" transport_now) == "$3" ]]; }
for i in 1 2; do
	for p in p1 p2; do
		wait_for 10 transport_is "host$i" "$p" udp ||
			fail "host$i's frames to $p do not go by datagrams: $(vctl "host$i" show link "$p")"
	done
done
IP2=$(guest_ip 2)

# Probes by datagram: over 2 s (10 probes each way at 200 ms), what p1
# received by datagram from host1 grows with what host1 sent.
wait_for 10 live_is host1 p1 up || fail "host1's link p1: liveness $(link_field host1 p1 liveness)"
s0=$(link_field host1 p1 probes_sent)
d0=$(row p1 host1 dgram_liveness_in)
o0=$(row host1 p1 dgram_liveness_out)
wait_for 5 now_past "$(later 2)" || true
s1=$(link_field host1 p1 probes_sent)
d1=$(row p1 host1 dgram_liveness_in)
o1=$(row host1 p1 dgram_liveness_out)
say "in 2 s host1 sent $((s1 - s0)) probes to p1, $((o1 - o0)) by datagram; p1 received $((d1 - d0)) by datagram"
((s1 - s0 >= 8)) || fail "host1 sent $((s1 - s0)) probes in 2 s"
((o1 - o0 >= s1 - s0 - 1)) || fail "only $((o1 - o0)) of $((s1 - s0)) probes went by datagram"
((d1 - d0 >= o1 - o0 - 2)) || fail "p1 received $((d1 - d0)) of $((o1 - o0)) datagram probes"

losses() { grep -c "liveness lost" "${D_LOG[$1]}" || true; }
ping_start() {
	in_guest g1 ping -D -n -i 0.01 -W 1 "$IP2" >"$TMPD/ping-$1" 2>&1 &
	PING=$!
	EXTRA_PIDS+=("$PING")
	wait_for 5 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping-$1') >= 30 ))" ||
		fail "$1: the ping does not run: $(tail -n 5 "$TMPD/ping-$1")"
}
ping_stop() {
	kill "$PING"
	wait "$PING" 2>/dev/null || true
}
udp_rules() {	# udp_rules -A|-D P CHAINS
	local op=$1 p=$2 c
	for c in $3; do
		ip netns exec "$(ns "$p")" iptables "$op" "$c" -p udp -j DROP
	done
}

# UDP blocked both ways, then one way, at the proxy carrying the ping.
for how in "INPUT OUTPUT" "INPUT"; do
	name="udp blocked (${how// /+} at the proxy)"
	ping_start "${how// /-}"
	p=$(failover_active)
	l1=$(losses host1)
	l2=$(losses host2)
	lp=$(losses "$p")
	doubt0=$(row host1 "$p" dgram_doubted)
	t0=$(date +%s.%N)
	udp_rules -A "$p" "$how"
	wait_for 10 bash -c "[[ \$('$VNETCTL' -s '${D_SOCK[host1]}' -t show link $p | awk -F'\t' '\$1 == \"transport_now\" { print \$2 }') != udp ]]" ||
		fail "$name: host1's frames to $p still go by datagrams only"
	wait_for 5 now_past "$(later 2)" || true
	udp_rules -D "$p" "$how"
	for i in 1 2; do
		wait_for 15 transport_is "host$i" "$p" udp ||
			fail "$name: host$i's frames to $p are not back on datagrams"
	done
	wait_for 5 now_past "$(later 0.5)" || true
	ping_stop
	read -r g _ < <(ping_gap "$TMPD/ping-${how// /-}" "$t0")
	say "$name: $p; host1's frames to $p went by '$(row host1 "$p" transport_now)' again; longest gap in the ping $g s; host1 doubted its path $(($(row host1 "$p" dgram_doubted) - doubt0)) times"
	(($(losses host1) == l1 && $(losses host2) == l2 && $(losses "$p") == lp)) ||
		fail "$name: a link lost its liveness: $(grep "liveness lost" "${D_LOG[host1]}" "${D_LOG[host2]}" "${D_LOG[$p]}")"
	awk -v g="$g" 'BEGIN { exit !(g < 2.0) }' || fail "$name: the ping stopped for $g s"
done

# Idle: no frames for 10 s.  The probes slow to 2 s, the datagram paths'
# own to one in 10 s; the first frames go by both ways until a probe is
# answered, then by datagrams again, nothing lost, no liveness lost.
ip netns pids "${G_NS[g1]}" 2>/dev/null | xargs -r kill 2>/dev/null || true
slow() { [[ $(link_field host1 p1 probe_ms) == 2000 && $(link_field host1 p2 probe_ms) == 2000 ]]; }
# A window counts only if no frame crossed the link meanwhile: a guest's
# stray broadcast (IPv6 neighbour discovery) wakes the path for 10 s.
lframes() { echo $(($(link_field host1 p1 frames_in) + $(link_field host1 p1 frames_out))); }
for try in 1 2 3 4 5; do
	wait_for 25 slow || fail "idle: host1's links still probe fast: $(vctl host1 show links all)"
	f0=$(lframes) a=$(row host1 p1 dgram_probes)
	wait_for 6 now_past "$(later 3)" || true
	f1=$(lframes) b=$(row host1 p1 dgram_probes)
	((f1 == f0)) && break
	say "idle: $((f1 - f0)) frames crossed host1's link p1 in the window: again"
done
((f1 == f0)) || fail "idle: frames kept crossing host1's link p1"
say "idle: host1 sent $((b - a)) path probes to p1 in 3 s"
((b - a <= 1)) || fail "idle: host1 sent $((b - a)) path probes to p1 in 3 s (one a second when busy)"
l1=$(losses host1)
ping_start idle
p=$(failover_active)
wait_for 5 transport_is host1 "$p" udp ||
	fail "idle: host1's frames to $p are not on datagrams: $(row host1 "$p" transport_now)"
wait_for 5 now_past "$(later 1)" || true
ping_stop
read -r g _ < <(ping_gap "$TMPD/ping-idle" 0)
say "idle: the ping by $p after the idle time: longest gap $g s, frames by $(row host1 "$p" transport_now)"
awk -v g="$g" 'BEGIN { exit !(g < 0.5) }' || fail "idle: the ping stopped for $g s"
(($(losses host1) == l1)) || fail "idle: a link lost its liveness: $(grep "liveness lost" "${D_LOG[host1]}")"

# Then silent: everything dropped.
ping_start silent
p=$(failover_active)
t0=$(date +%s.%N)
for c in INPUT OUTPUT; do ip netns exec "$(ns "$p")" iptables -A "$c" -j DROP; done
lost_it() { [[ $(link_field "$1" "$2" liveness) != up ]]; }
for i in 1 2; do
	wait_for 5 lost_it "host$i" "$p" || fail "silent: host$i's link $p still alive"
done
wait_for 5 now_past "$(later 1.5)" || true
ping_stop
read -r g _ < <(ping_gap "$TMPD/ping-silent" "$t0")
say "silent: $p dropped everything; longest gap in the ping $g s"
awk -v g="$g" 'BEGIN { exit !(g < 1.0) }' || fail "silent: the ping stopped for $g s"
for c in INPUT OUTPUT; do ip netns exec "$(ns "$p")" iptables -D "$c" -j DROP; done
pass
