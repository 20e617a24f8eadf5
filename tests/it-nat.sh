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
#
# With NAT_SYMMETRIC=1 (it-nat-symmetric), host2's box gives every flow a
# port of its own: no pair meets, the pair backs off, and the transfer and
# the ping stay on the proxy without a lost echo.
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

node_conf() {
	printf 'node %s\nlisten *:%d tls\n%s\n' "$1" "$PORT" "$ROUTING"
	tls_conf "$1"
}

node_add proxy 1
nat_host_add host1 11 192.168.51
NAT_SYMMETRIC=${NAT_SYMMETRIC:-0}
nat_host_add host2 12 192.168.52 "$( ((NAT_SYMMETRIC)) && echo symmetric)"
vnetd_start proxy "$(node_conf proxy)
set-link host1 transport auto
set-link host2 transport auto"
for i in 1 2; do
	vnetd_start "host$i" "$(node_conf "host$i")
interface guest tap vtap0
link proxy $(addr proxy):$PORT tls transport auto"
	guest_add "g$i" "host$i" vtap0 "$i"
done
for d in host1 host2; do
	wait_link_up "$d" proxy
done
for d in proxy host1 host2; do
	wait_for 10 nodes_reachable "$d" 3 ||
		fail "$d: show nodes: $(vctl "$d" show nodes)"
done

cands() {
	vctl "$1" -t show nodes | awk -F'\t' -v n="$2" \
		'$1 == n { print $10; found = 1 } END { exit !found }'
}
has_cand() { cands "$1" "$2" | tr , '\n' | grep -Eqx "$3"; }
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
in_guest g1 ping -n -q -i 0.01 -c 1200 "$G2" >"$TMPD/ping" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
in_guest g1 iperf3 -c "$G2" -t 10 -b 20M -J >"$TMPD/iperf.json" 2>&1 &
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
	wait "$IPERF_PID" || fail "iperf3 failed: $(cat "$TMPD/iperf.json")"
	wait "$PING_PID" || true
	sent=$(awk '/packets transmitted/ { print $1 }' "$TMPD/ping")
	got=$(awk '/packets transmitted/ { print $4 }' "$TMPD/ping")
	p1=$(proxy_in)
	say "ping every 10 ms: $sent sent, $got received; $((p1 - p0)) bytes host1 -> proxy"
	[[ -n $sent ]] && ((sent == 1200 && got == sent)) || fail "echoes lost: $(cat "$TMPD/ping")"
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
grep -q "adapt: hole toward host1 punched: a connection with 10.66.0.11:$PORT" "$TMPD/host2.log" ||
	fail "host2 did not punch toward host1: $(grep adapt "$TMPD/host2.log" | tail -n 5)"
grep -h 'adapt: \(pair host1-host2\|dialling\|punching\|hole\)' "$TMPD/host1.log" "$TMPD/host2.log" |
	sort | head -n 8 | while read -r l; do say "  $l"; done
moved() {
	local a b
	a=$(proxy_in)
	sleep 1
	b=$(proxy_in)
	((b - a < 100000))
}
wait_for 5 moved || fail "the proxy still carries the transfer"
p0=$(proxy_in)
d0=$(link_field host1 host2 bytes_out)
sleep 2
p1=$(proxy_in)
d1=$(link_field host1 host2 bytes_out)
say "in 2 s: $((d1 - d0)) bytes on the direct link, $((p1 - p0)) host1 -> proxy"
((d1 - d0 > 2000000)) || fail "the transfer is not on the direct link"
wait "$IPERF_PID" || fail "iperf3 failed: $(cat "$TMPD/iperf.json")"
wait "$PING_PID" || true
sent=$(awk '/packets transmitted/ { print $1 }' "$TMPD/ping")
got=$(awk '/packets transmitted/ { print $4 }' "$TMPD/ping")
say "ping every 10 ms across the switch: $sent sent, $got received"
[[ -n $sent ]] && ((sent == 1200 && got == sent)) || fail "echoes lost: $(cat "$TMPD/ping")"
pass
