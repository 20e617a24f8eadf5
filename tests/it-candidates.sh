#!/bin/bash
#
# Candidates (node.h NODE_SEC_CANDS): where each node may be reached, in its
# topology record.  A proxy and two hosts on the underlay, each with the
# README's wildcard listener (`listen *:7870 tls`) and `routing auto`, no
# advertise; host3 sits behind a NAT box (iptables MASQUERADE, only
# established traffic let in) and dials the proxy with `transport auto`
# (the proxy's `set-link host3 transport auto`).
#   - every wildcard listener is published as the node's real interface
#     addresses (kind host), never as `*`;
#   - host3's record has where the proxy sees its connection and its
#     datagrams come from: the NAT box's outer address (seen-out,
#     seen-udp), and the proxy's has where host3 dialled it (seen-in);
#   - a bulk transfer between the guests of host1 and host2 makes a
#     shortcut, dialled to host2's published candidate;
#   - `vnetd -n` warns of a wildcard listener with nothing to publish.
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
NAT_OUT=10.66.0.9	# host3's NAT box on the underlay
NAT_IN=192.168.50	# behind it


node_add proxy 1
node_add host1 2
node_add host2 3
# host3 behind its own NAT box (lib.sh nat_host_add).
nat_host_add host3 9 "$NAT_IN"

vnetd_start proxy "$(nat_node_conf proxy)
set-link host3 transport auto"
for i in 1 2; do
	vnetd_start "host$i" "$(nat_node_conf "host$i")
interface guest tap vtap0
link proxy $(addr proxy):$PORT tls"
	guest_add "g$i" "host$i" vtap0 "$i"
done
vnetd_start host3 "$(nat_node_conf host3)
link proxy $(addr proxy):$PORT tls transport auto"
for d in host1 host2 host3; do
	wait_link_up "$d" proxy
done
for d in proxy host1 host2 host3; do
	wait_for 10 nodes_reachable "$d" 4 ||
		fail "$d: show nodes: $(vctl "$d" show nodes)"
done

for n in proxy host1 host2; do
	has_cand host3 "$n" "$(addr "$n"):$PORT/host" ||
		fail "$n's record lists no interface address: $(cands host3 "$n")"
done
vctl host3 -t show nodes | awk -F'\t' '$9 ~ /\*/ || $10 ~ /\*/ { bad = 1 } END { exit bad }' ||
	fail "a record lists a wildcard: $(vctl host3 show nodes)"
has_cand proxy host3 "$NAT_IN.2:$PORT/host" ||
	fail "host3's own interface address is not published: $(cands proxy host3)"
say "host3 behind the NAT: $(cands proxy host3)"
wait_for 5 has_cand proxy host3 "$NAT_OUT:[0-9]+/seen-out" ||
	fail "host3's record has no address the proxy sees its connection come from: $(cands proxy host3)"
wait_for 10 has_cand proxy host3 "$NAT_OUT:[0-9]+/seen-udp" ||
	fail "host3's record has no address the proxy sees its datagrams come from: $(cands proxy host3); $(vctl host3 show links)"
# The proxy was dialled at its underlay address: the same as its host
# candidate, so published once, as host.
has_cand host3 proxy "$(addr proxy):$PORT/(host|seen-in)" ||
	fail "the proxy's record: $(cands host3 proxy)"
vctl host1 -j show nodes | python3 -c '
import json, sys
n = {r["node"]: r for r in json.load(sys.stdin)}
sys.exit(0 if {"addr": sys.argv[1], "kind": "host"} in n["host2"]["candidates"] else 1)' \
	"$(addr host2):$PORT" || fail "show nodes -j has no candidates: $(vctl host1 -j show nodes)"

say "bulk transfer guest 1 -> guest 2: a shortcut to host2's candidate"
G2=$(guest_ip 2)
wait_for 10 gping g1 "$G2" || fail "guest 1 cannot ping guest 2"
iperf_server g2
in_guest g1 iperf3 -c "$G2" -t 6 -b 20M >"$TMPD/iperf" 2>&1 &
EXTRA_PIDS+=($!)
shortcut_up() { link_up host1 host2 && [[ $(link_field host1 host2 origin) == auto ]]; }
wait_for 8 shortcut_up ||
	fail "no shortcut host1-host2: $(grep adapt "$TMPD/host1.log" | tail -n 5)"
grep -q "adapt: dialling host2 at $(addr host2):$PORT over TLS (candidate" "$TMPD/host1.log" ||
	fail "host1 did not dial host2's candidate: $(grep adapt "$TMPD/host1.log" | tail -n 5)"
grep -q 'gives no address to dial' "$TMPD"/host*.log &&
	fail "a node logged no address to dial"
say "$(grep -o 'adapt: dialling host2 at .*' "$TMPD/host1.log" | head -n 1)"

# A candidate list that stays the same sends no new record.
n3=$(grep -c 'topology record of node host3' "$TMPD/proxy.log")
say "host3's topology records at the proxy: $n3 in $SECONDS s"
((n3 <= 6)) || fail "host3 sent $n3 topology records"
vctl host1 show nodes

say "vnetd -n: a wildcard listener with nothing to publish"
mkns lonely
printf 'node lonely\nlisten *:%d tls\nrouting auto\n%s\n' "$PORT" "$(tls_conf lonely)" \
	>"$TMPD/lonely.conf"
ip netns exec "$(ns lonely)" "$VNETD" -n -f "$TMPD/lonely.conf" >"$TMPD/lonely.out" 2>&1 || true
grep -q 'listen \*:7870 under routing auto: this machine has no interface address' "$TMPD/lonely.out" ||
	fail "vnetd -n did not warn: $(cat "$TMPD/lonely.out")"
printf 'advertise 192.0.2.1:%d\n' "$PORT" >>"$TMPD/lonely.conf"
ip netns exec "$(ns lonely)" "$VNETD" -n -f "$TMPD/lonely.conf" >"$TMPD/lonely.out" 2>&1 || true
grep -q 'under routing auto' "$TMPD/lonely.out" &&
	fail "vnetd -n warned though advertise is there: $(cat "$TMPD/lonely.out")"
ip netns exec "$(ns host1)" "$VNETD" -n -f "$TMPD/host1.conf" >"$TMPD/host1.n" 2>&1 || true
grep -q 'under routing auto' "$TMPD/host1.n" &&
	fail "vnetd -n warned on a machine with an address: $(cat "$TMPD/host1.n")"
pass
