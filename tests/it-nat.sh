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
#     shortcut and dial host2's candidate, logging that host2 is seen
#     behind a NAT; the dial fails (a private address out of reach), the
#     pair backs off, and the transfer and a ping every 10 ms beside it
#     stay on the proxy without a lost echo.
# No hole is punched yet: this is the relayed case that punching is to
# improve on.
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
nat_host_add host2 12 192.168.52
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
	wait_for 10 has_cand "host$((3 - i))" "host$i" "$box:$PORT/seen-udp" ||
		fail "host$i's record has not its NAT's UDP binding: $(cands proxy "host$i")"
	has_cand proxy "host$i" "$box:[0-9]+/seen-out" ||
		fail "host$i's record has not its NAT's address: $(cands proxy "host$i")"
	say "host$i: $(cands proxy "host$i")"
done

adapt_state() {
	vctl host1 -t show adapt | awk -F'\t' '$1 == "host2" { print $2; found = 1 } END { exit !found }'
}
proxy_in() { link_field proxy host1 bytes_in; }

G2=$(guest_ip 2)
wait_for 10 gping g1 "$G2" || fail "guest 1 cannot ping guest 2"
iperf_server g2
p0=$(proxy_in)
in_guest g1 ping -n -q -i 0.01 -c 800 "$G2" >"$TMPD/ping" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
in_guest g1 iperf3 -c "$G2" -t 6 -b 20M -J >"$TMPD/iperf.json" 2>&1 &
IPERF_PID=$!
EXTRA_PIDS+=("$IPERF_PID")
dialled() { grep -q 'adapt: dialling host2 at ' "$TMPD/host1.log"; }
wait_for 6 dialled || fail "host1 did not dial host2: $(vctl host1 show adapt)"
line=$(grep -o 'adapt: dialling host2 at .*' "$TMPD/host1.log" | head -n 1)
say "$line"
[[ $line == *"192.168.52.2:$PORT"*"seen behind a NAT at 10.66.0.12:"* ]] ||
	fail "the dial does not say host2 is behind a NAT: $line"
backoff() { [[ $(adapt_state) == backoff ]]; }
wait_for 10 backoff || fail "the pair did not back off: $(vctl host1 show adapt)"
say "host1's adapt: $(vctl host1 -t show adapt | awk -F'\t' '$1 == "host2"')"
wait "$IPERF_PID" || fail "iperf3 failed: $(cat "$TMPD/iperf.json")"
wait "$PING_PID" || true
sent=$(awk '/packets transmitted/ { print $1 }' "$TMPD/ping")
got=$(awk '/packets transmitted/ { print $4 }' "$TMPD/ping")
p1=$(proxy_in)
say "ping every 10 ms: $sent sent, $got received; $((p1 - p0)) bytes host1 -> proxy"
[[ -n $sent ]] && ((sent == 800 && got == sent)) || fail "echoes lost: $(cat "$TMPD/ping")"
link_up host1 host2 && fail "a direct link host1-host2 is up"
# 6 s at 20 Mbit/s: 15 MB.
((p1 - p0 > 14000000)) || fail "the proxy did not carry the transfer ($((p1 - p0)) bytes)"
pass
