#!/bin/bash
#
# it-nat with host1 behind two NAT boxes in a row, a home router behind a
# carrier-grade NAT (lib.sh nat2_host_add): the home router masquerades
# host1's LAN to its address in the carrier's shared space (100.64.0.2),
# the carrier's box masquerades that to the underlay (10.66.0.11), each
# letting in only established traffic; host2 is behind one box, as in
# it-nat.  Both keep the source port while it is free, so host1's
# listener's port is the same at each level:
#   - host1's record publishes the outer box's address, where the proxy
#     sees its connection (seen-out) and its listener's UDP binding
#     (seen-udp, 10.66.0.11:7870);
#   - the bulk transfer makes host1 dial host2's binding from its
#     listener's port while host2 punches toward host1's outer binding:
#     host1's SYN makes an entry in both of its boxes, host2's SYN answers
#     it through both, and the two meet (a TCP simultaneous open);
#   - the proxy then carries under 5% of the guests' bytes, and a ping
#     every 10 ms across the switch loses nothing.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iptables >/dev/null || skip "iptables is missing"
command -v iperf3 >/dev/null || skip "iperf3 is missing"

ROUTING="routing auto
keepalive 2
adapt shortcuts yes threshold 2mbit hold 1 idle 30"
PINGS=1200


node_add proxy 1
nat2_host_add host1 11 192.168.51
nat_host_add host2 12 192.168.52
nat_pair_start

# Each host's record has its outermost NAT's address; host1's has neither
# the home router's 100.64.0.2 nor any other address of the carrier's
# space as seen (only its own LAN address, as a host candidate).
for i in 1 2; do
	box=10.66.0.$((10 + i))
	wait_for 10 has_cand "host$((3 - i))" "host$i" "$box:$PORT/seen-udp" ||
		fail "host$i's record has not its NAT's UDP binding: $(cands proxy "host$i")"
	has_cand proxy "host$i" "$box:[0-9]+/seen-out" ||
		fail "host$i's record has not its NAT's address: $(cands proxy "host$i")"
	say "host$i: $(cands proxy "host$i")"
done
has_cand proxy host1 '100\.64\.[0-9.]+:[0-9]+/.*' &&
	fail "host1's record names the carrier's inner space: $(cands proxy host1)"

shortcut_up() { link_up host1 host2 && [[ $(link_field host1 host2 origin) == auto ]]; }
# The frames the proxy took in from both hosts (nat_proxy_in: the bytes).
proxy_frames() { echo $(($(link_field proxy host1 frames_in) + $(link_field proxy host2 frames_in))); }
logged() { grep -q -e "$2" "$TMPD/$1.log"; }

G2=$(guest_ip 2)
wait_for 10 gping g1 "$G2" || fail "guest 1 cannot ping guest 2"
iperf_server g2
in_guest g1 ping -n -q -i 0.01 -c "$PINGS" "$G2" >"$TMPD/ping" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
in_guest g1 iperf3 -c "$G2" -t 10 -b 20M -J >"$TMPD/iperf.json" 2>&1 &
IPERF_PID=$!
EXTRA_PIDS+=("$IPERF_PID")
t0=$SECONDS
wait_for 8 shortcut_up ||
	fail "no direct link host1-host2 through two NATs: $(grep adapt "$TMPD/host1.log" "$TMPD/host2.log" | tail -n 8)"
say "direct link up $((SECONDS - t0)) s after the transfer began: $(vctl host1 -t show links | awk -F'\t' '$1 == "host2" { print $3 }')"
line=$(grep -o 'adapt: dialling host2 at .*' "$TMPD/host1.log" | head -n 1)
say "$line"
[[ $line == *"10.66.0.12:$PORT"*"punching its NAT's binding"* ]] ||
	fail "host1 did not dial host2's NAT binding: $line"
wait_for 3 logged host1 'adapt: pair host1-host2 .*dialing -> up, ' ||
	fail "host1 did not decide the shortcut is up: $(vctl host1 show adapt)"
decision=$(grep -m 1 'pair host1-host2 .*above -> dialing' "$TMPD/host1.log")
up=$(grep -m 1 'link host2: .*-> UP' "$TMPD/host1.log")
say "decision to direct link up: $(($(log_ms "$up") - $(log_ms "$decision"))) ms"
up=$(grep -o 'adapt: pair host1-host2 .*dialing -> up, .*' "$TMPD/host1.log" | head -n 1)
say "$up"
[[ $up == *"by candidate 10.66.0.12:$PORT (seen-udp)" ]] ||
	fail "the decision does not name the seen-udp candidate that won: $up"
# host2's hole goes to the outer NAT's binding of host1's listener.
grep -q "adapt: hole toward host1 punched: a connection with 10.66.0.11:$PORT" "$TMPD/host2.log" ||
	fail "host2 did not punch toward host1's outer NAT: $(grep adapt "$TMPD/host2.log" | tail -n 5)"
cand=$(vctl host1 -t show adapt | awk -F'\t' '$1 == "host2" { print $11 }')
peer=$(vctl host2 -t show links | awk -F'\t' '$1 == "host1" { print $3 }')
say "host1's show adapt: candidate $cand; host2's link to host1: $peer"
[[ $cand == "10.66.0.12:$PORT (seen-udp)" ]] || fail "show adapt does not name the candidate: $cand"
[[ $peer == "10.66.0.11:$PORT" ]] || fail "host2's link is not with host1's outer NAT: $peer"
# What each of host1's boxes tracks of the punched pair: the listener's
# port kept at both levels, which is what lets host2's SYN in as an answer.
if command -v conntrack >/dev/null; then
	for b in home-host1:100.64.0.2 nat-host1:10.66.0.11; do
		e=$(ip netns exec "$(ns "${b%%:*}")" conntrack -L -p tcp --orig-dst 10.66.0.12 2>/dev/null |
			grep -m 1 "dport=$PORT .*src=10.66.0.12 dst=${b#*:} sport=$PORT dport=$PORT " | tr -s ' ') ||
			fail "${b%%:*} has no entry keeping port $PORT: $(ip netns exec "$(ns "${b%%:*}")" conntrack -L -p tcp 2>/dev/null)"
		say "${b%%:*}: $e"
	done
fi

wait_for 5 proxy_quiet nat_proxy_in || fail "the proxy still carries the transfer"
# The window measured (not a wait for a state): the proxy's share of
# the bulk traffic once the pair is direct.
p0=$(nat_proxy_in) f0=$(proxy_frames) r0=$(guest_rx g1 g2) d0=$(link_field host1 host2 bytes_out)
sleep 2
p1=$(nat_proxy_in) f1=$(proxy_frames) r1=$(guest_rx g1 g2) d1=$(link_field host1 host2 bytes_out)
share=$(awk -v p=$((p1 - p0)) -v r=$((r1 - r0)) 'BEGIN { printf "%.2f", (r > 0 ? p * 100 / r : 100) }')
say "in 2 s: guests received $((r1 - r0)) bytes, $((d1 - d0)) on the direct link, the proxy took in $((p1 - p0)) bytes in $((f1 - f0)) frames ($share%)"
((d1 - d0 > 2000000)) || fail "the transfer is not on the direct link"
(((p1 - p0) * 20 < r1 - r0)) || fail "the proxy carries $share% of the guests' bytes"
wait "$PING_PID" || true
sent=$(awk '/packets transmitted/ { print $1 }' "$TMPD/ping")
got=$(awk '/packets transmitted/ { print $4 }' "$TMPD/ping")
say "ping every 10 ms across the switch: $sent sent, $got received"
[[ -n $sent ]] && ((sent == PINGS && got == sent)) || fail "echoes lost: $(cat "$TMPD/ping")"
wait "$IPERF_PID" || fail "iperf3 failed: $(cat "$TMPD/iperf.json")"
pass
