#!/bin/bash
#
# Two hosts, each behind its own NAT box (iptables MASQUERADE, only
# established traffic let in, as a home router), and a proxy they both
# dial with `transport auto`, all with `routing auto` and `adapt shortcuts
# yes`:
#   - each host's record publishes its NAT box's outer address: where the
#     proxy sees its connection (seen-out) and the binding of its
#     listener's UDP port (seen-udp, the port kept by the NAT);
#   - a bulk transfer between their guests makes host1 decide on a
#     shortcut: it dials host2's NAT binding from its listener's port
#     while host2, which sees the pair above the threshold too, dials
#     host1's binding from its own; the NATs let each other's SYN in as
#     an answer and the two meet (a TCP simultaneous open), host2 taking
#     the connection as the accepted side.  The proxy stops carrying the
#     transfer, and a ping every 10 ms across the switch loses nothing.
#   - the shortcut takes the hosts' `transport auto` (vnetd.conf(5)
#     SHORTCUTS), and its datagram path comes up through both NATs: each
#     end sends its first datagrams to the other's binding from its
#     listener's port at once, as with the SYNs; the bulk goes by
#     datagrams.
#
# With NAT_SYMMETRIC=1 (it-nat-symmetric), host2's box gives every flow a
# port of its own: no pair meets, the pair backs off, and the transfer and
# the ping stay on the proxy without a lost echo.
#
# With NAT_FLUSH=1 (it-nat-flush), host1's box then loses the bindings of
# the punched pair mid-transfer (conntrack -D, TCP and UDP, the box taking
# up no TCP connection it did not see begin): the datagram path's next
# datagram makes its UDP binding again, so the frames go on by datagrams
# (and liveness with them), but the connection is dead and its silence
# (three keepalives, 1 s each here) takes the direct link down; the relay
# carries the transfer, and the hole is punched again after the back-off;
# one ping every 10 ms loses nothing at either switch to the direct link,
# and at most 1 s at the fall-back.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iptables >/dev/null || skip "iptables is missing"
command -v iperf3 >/dev/null || skip "iperf3 is missing"
((${NAT_FLUSH:-0} == 0)) || command -v conntrack >/dev/null || skip "conntrack is missing"

ROUTING="routing auto
keepalive $( ((${NAT_FLUSH:-0})) && echo 1 || echo 2)
adapt shortcuts yes threshold 2mbit hold 1 idle 30"


node_add proxy 1
nat_host_add host1 11 192.168.51
NAT_SYMMETRIC=${NAT_SYMMETRIC:-0}
NAT_FLUSH=${NAT_FLUSH:-0}
# With NAT_FLUSH, one ping with time stamps spans both switches and the
# flush between them, and the transfer lasts until after the new punch.
PINGS=$( ((NAT_FLUSH)) && echo 2500 || echo 1200)
nat_host_add host2 12 192.168.52 "$( ((NAT_SYMMETRIC)) && echo symmetric)"
nat_pair_start

for i in 1 2; do
	box=10.66.0.$((10 + i))
	port=$PORT
	((NAT_SYMMETRIC && i == 2)) && port='[0-9]+'
	wait_for 10 has_cand "host$((3 - i))" "host$i" "$box:$port/seen-udp" ||
		fail "host$i's record has not its NAT's UDP binding: $(cands proxy "host$i")"
	has_cand proxy "host$i" "$box:[0-9]+/seen-out" ||
		fail "host$i's record has not its NAT's address: $(cands proxy "host$i")"
	say "host$i: $(cands proxy "host$i")"
done

adapt_state() {
	vctl host1 -t show adapt | awk -F'\t' '$1 == "host2" { print $2; found = 1 } END { exit !found }'
}
proxy_in() { link_field proxy host1 bytes_in; }
shortcut_up() { link_up host1 host2 && [[ $(link_field host1 host2 origin) == auto ]]; }

G2=$(guest_ip 2)
wait_for 10 gping g1 "$G2" || fail "guest 1 cannot ping guest 2"
iperf_server g2
in_guest g1 ping -n "$( ((NAT_FLUSH)) && echo -D || echo -q)" -i 0.01 -c "$PINGS" "$G2" >"$TMPD/ping" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
in_guest g1 iperf3 -c "$G2" -t "$( ((NAT_FLUSH)) && echo 26 || echo 10)" -b 20M -J >"$TMPD/iperf.json" 2>&1 &
IPERF_PID=$!
EXTRA_PIDS+=("$IPERF_PID")
t0=$SECONDS
if ((NAT_SYMMETRIC)); then
	p0=$(proxy_in)
	dialled() { grep -q 'adapt: dialling host2 at ' "$TMPD/host1.log"; }
	wait_for 6 dialled || fail "host1 did not dial host2: $(vctl host1 show adapt)"
	say "$(grep -o 'adapt: dialling host2 at .*' "$TMPD/host1.log" | head -n 1)"
	backoff() { [[ $(adapt_state) == backoff ]]; }
	wait_for 10 backoff || fail "the pair did not back off: $(vctl host1 show adapt)"
	say "host1's adapt: $(vctl host1 -t show adapt | awk -F'\t' '$1 == "host2"')"
	# Why, in words, naming the NAT's binding that never answered.
	why=$(vctl host1 -t show adapt | awk -F'\t' '$1 == "host2" { print $12 }')
	[[ $why == "no answer from 10.66.0.12:"[0-9]*" after "[0-9]*" tr"*": a symmetric NAT or a firewall on one side" ]] ||
		fail "show adapt does not say why the dial failed: $why"
	vctl host1 -j show adapt | grep -q '"failure": *"no answer from 10.66.0.12:' ||
		fail "show adapt's JSON does not say why: $(vctl host1 -j show adapt)"
	grep -q 'adapt: pair host1-host2 .*dialing -> backoff, dial failed or timed out: no answer from 10.66.0.12:' "$TMPD/host1.log" ||
		fail "the decision's log line does not say why: $(grep 'dialing -> backoff' "$TMPD/host1.log")"
	wait "$IPERF_PID" || fail "iperf3 failed: $(cat "$TMPD/iperf.json")"
	wait "$PING_PID" || true
	sent=$(awk '/packets transmitted/ { print $1 }' "$TMPD/ping")
	got=$(awk '/packets transmitted/ { print $4 }' "$TMPD/ping")
	p1=$(proxy_in)
	say "ping every 10 ms: $sent sent, $got received; $((p1 - p0)) bytes host1 -> proxy"
	[[ -n $sent ]] && ((sent == PINGS && got == sent)) || fail "echoes lost: $(cat "$TMPD/ping")"
	link_up host1 host2 && fail "a direct link host1-host2 is up through a symmetric NAT"
	# 10 s at 20 Mbit/s: 25 MB, all of it through the proxy.
	((p1 - p0 > 24000000)) || fail "the proxy did not carry the transfer ($((p1 - p0)) bytes)"
	pass
fi
wait_for 8 shortcut_up ||
	fail "no direct link host1-host2: $(grep adapt "$TMPD/host1.log" "$TMPD/host2.log" | tail -n 8)"
say "direct link up $((SECONDS - t0)) s after the transfer began: $(vctl host1 -t show links | awk -F'\t' '$1 == "host2" { print $3 }')"
line=$(grep -o 'adapt: dialling host2 at .*' "$TMPD/host1.log" | head -n 1)
say "$line"
[[ $line == *"10.66.0.12:$PORT"*"punching its NAT's binding"* ]] ||
	fail "host1 did not dial host2's NAT binding: $line"
# The decision names the candidate that won, and its kind (at the round
# after the link came up).
decided_up() { grep -q 'adapt: pair host1-host2 .*dialing -> up, ' "$TMPD/host1.log"; }
wait_for 3 decided_up || fail "host1 did not decide the shortcut is up: $(vctl host1 show adapt)"
up=$(grep -o 'adapt: pair host1-host2 .*dialing -> up, .*' "$TMPD/host1.log" | head -n 1)
say "$up"
[[ $up == *"by candidate 10.66.0.12:$PORT (seen-udp)" ]] ||
	fail "the decision does not name the seen-udp candidate that won: $up"
grep -q "adapt: hole toward host1 punched: a connection with 10.66.0.11:$PORT" "$TMPD/host2.log" ||
	fail "host2 did not punch toward host1: $(grep adapt "$TMPD/host2.log" | tail -n 5)"
grep -h 'adapt: \(pair host1-host2\|dialling\|punching\|hole\)' "$TMPD/host1.log" "$TMPD/host2.log" |
	sort | head -n 8 | while read -r l; do say "  $l"; done
# ping_gaps FILE: each run of lost echoes in `ping -D` output, as "TS LOST
# GAP_MS": the time of the last echo before it, how many, and the time
# from that echo to the next one that came back.
ping_gaps() {
	awk '/icmp_seq=/ {
		ts = substr($1, 2, length($1) - 2)
		for (i = 2; i <= NF; i++)
			if ($i ~ /^icmp_seq=/) { split($i, q, "="); seq = q[2] }
		t[seq] = ts; if (seq > max) max = seq
	}
	END {
		for (s = 1; s <= max; s++) {
			if (s in t) {
				if (lost) printf "%s %d %.0f\n", last, lost, (t[s] - last) * 1000
				lost = 0; last = t[s]
			} else if (last != "")
				lost++
		}
	}' "$1"
}

# The NAT box in front of host1 loses the bindings of the punched pair in
# the middle of the transfer (as an eviction or a reboot loses them) and
# takes up no TCP connection it did not see begin (nf_conntrack_tcp_loose
# 0, as a NAT that tracks TCP only from its SYN; with Linux's default, 1,
# it adopts the next segment and nothing is lost): the datagrams make
# their binding again as they go out, the connection cannot, its silence
# takes the punched link down, the pair is back on the relay, and after
# the back-off the hole is punched again on the same pair of ports.
flush_phase() {
	local box t_flush t_dead t_back ts k ms lost_first=0 lost_flush=0 lost_back=0 gap_flush=0 sent got
	box=$(ns nat-host1)
	ip netns exec "$box" sysctl -qw net.netfilter.nf_conntrack_tcp_loose="${NAT_LOOSE:-0}"
	t_flush=$EPOCHREALTIME
	ip netns exec "$box" conntrack -D --orig-dst 10.66.0.12 >/dev/null 2>&1 ||
		fail "conntrack -D found no binding toward host2 in host1's NAT box"
	direct_gone() { ! link_up host1 host2; }
	# Three keepalives of silence, 3 s, and a round.
	wait_for 5 direct_gone || fail "the direct link outlived its NAT's binding: $(vctl host1 show links)"
	t_dead=$EPOCHREALTIME
	say "binding flushed; the direct link down $(ms_since "$t_flush" "$t_dead") ms later: $(grep -o 'adapt: pair host1-host2 .*shortcut died.*' "$TMPD/host1.log" | tail -n 1)"
	# The back-off (10 s), the hold (1 s), a punch (under 4 s) and a
	# round's lag each way: 17 s.
	wait_for 17 shortcut_up || fail "the hole was not punched again: $(vctl host1 show adapt)"
	t_back=$EPOCHREALTIME
	say "direct link up again $(ms_since "$t_flush" "$t_back") ms after the flush: $(grep -o 'adapt: dialling host2 at .*' "$TMPD/host1.log" | tail -n 1)"
	wait_for 5 proxy_quiet proxy_in || fail "the proxy still carries the transfer after the new punch"
	wait_for 5 udp_now || fail "the new shortcut's frames do not go by datagrams: $(vctl host1 show link host2 | grep -E 'transport|dgram_state')"
	wait "$PING_PID" || true
	sent=$(awk '/packets transmitted/ { print $1 }' "$TMPD/ping")
	got=$(awk '/packets transmitted/ { print $4 }' "$TMPD/ping")
	while read -r ts k ms; do
		[[ -n $ts ]] || continue
		say "  $k echoes lost after $ts (a gap of $ms ms)"
		if [[ $(awk -v a="$ts" -v b="$t_flush" 'BEGIN { print (a < b - 0.1) }') == 1 ]]; then
			lost_first=$((lost_first + k))
		elif [[ $(awk -v a="$ts" -v b="$t_back" 'BEGIN { print (a < b - 1) }') == 1 ]]; then
			lost_flush=$((lost_flush + k))
			((ms > gap_flush)) && gap_flush=$ms
		else
			lost_back=$((lost_back + k))
		fi
	done <<<"$(ping_gaps "$TMPD/ping")"
	say "ping every 10 ms: $sent sent, $got received; lost $lost_first at the first switch to the direct link, $lost_flush at the fall-back to the relay (longest gap $gap_flush ms), $lost_back at the switch to the new direct link"
	((lost_first == 0 && lost_back == 0)) || fail "echoes lost across a switch to the direct link"
	# What was on the dead link until liveness took it out of the routes:
	# its detection time, 3 x 200 ms, and a round for the routes.
	((gap_flush <= 1000)) || fail "the fall-back to the relay took $gap_flush ms"
}

# ms_since T0 T1 (EPOCHREALTIME): whole ms between them.
ms_since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }

wait_for 5 proxy_quiet proxy_in || fail "the proxy still carries the transfer"
# The punched pair's datagram path, up at both ends through both NATs.
udp_now() { [[ $(link_row host1 host2 transport_now) == udp && $(link_row host2 host1 transport_now) == udp ]]; }
wait_for 5 udp_now ||
	fail "the shortcut's frames do not go by datagrams: $(vctl host1 show link host2 | grep -E 'transport|dgram_(state|endpoint)'; grep 'punched pair\|datagram path' "$TMPD/host1.log" "$TMPD/host2.log")"
for e in "host1 host2 10.66.0.12" "host2 host1 10.66.0.11"; do
	read -r a b box <<<"$e"
	[[ $(link_row "$a" "$b" transport) == auto && $(link_row "$a" "$b" dgram_state) == up &&
		$(link_row "$a" "$b" dgram_endpoint) == "$box:$PORT" ]] ||
		fail "$a's shortcut is not a datagram link to $b's NAT binding: $(vctl "$a" show link "$b" | grep -E 'transport|dgram_(state|endpoint)')"
	say "$a: $(grep -o "link $b: a punched pair: .*" "$TMPD/$a.log" | head -n 1)"
	grep -h "link $b: \(up\|datagram path\|frames go\)" "$TMPD/$a.log" | head -n 4 | while read -r l; do say "  $l"; done
done
p0=$(proxy_in)
d0=$(link_field host1 host2 bytes_out)
g0=$(link_row host1 host2 dgram_sent)
sleep 2
p1=$(proxy_in)
d1=$(link_field host1 host2 bytes_out)
g1=$(link_row host1 host2 dgram_sent)
say "in 2 s: $((d1 - d0)) bytes on the direct link in $((g1 - g0)) datagrams, $((p1 - p0)) host1 -> proxy"
((d1 - d0 > 2000000)) || fail "the transfer is not on the direct link"
# A datagram carries at most 1472 bytes of frame: the bulk went by them.
(((g1 - g0) * 1472 >= (d1 - d0) * 95 / 100)) || fail "the bulk did not go by datagrams: $((g1 - g0)) for $((d1 - d0)) bytes"
(((p1 - p0) * 20 < d1 - d0)) || fail "the proxy carries 5% or more of the transfer: $((p1 - p0)) of $((d1 - d0)) bytes"
if ((NAT_FLUSH)); then
	flush_phase
	wait "$IPERF_PID" || fail "iperf3 failed: $(cat "$TMPD/iperf.json")"
	pass
fi
wait "$PING_PID" || true
sent=$(awk '/packets transmitted/ { print $1 }' "$TMPD/ping")
got=$(awk '/packets transmitted/ { print $4 }' "$TMPD/ping")
say "ping every 10 ms across the switch: $sent sent, $got received"
[[ -n $sent ]] && ((sent == PINGS && got == sent)) || fail "echoes lost: $(cat "$TMPD/ping")"
wait "$IPERF_PID" || fail "iperf3 failed: $(cat "$TMPD/iperf.json")"
pass
