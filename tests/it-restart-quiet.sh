#!/bin/bash
#
# A restart that keeps a quiet guest: a routing auto star over TLS; host2's
# guest is host2's own namespace, with its address on vnetd's TAP device
# vtap0 (which outlives the daemon: persist auto, the device stays in
# vnetd's namespace), and it is quiet: static ARP entries both ways, no
# IPv6, so it sends nothing unless asked.  host2's vnetd restarts; guest 1
# pings it straight after.  The restarted daemon takes the guest's MAC back
# from its own record of before the restart, which the proxy hands back in
# the database exchange (macs_restored), so the ping is answered within a
# few seconds, not once the guest happens to send (over 60 s with static
# ARP entries before).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
node_add proxy 1
node_add host1 2
node_add host2 3
vnetd_start proxy "$(rstar_proxy_conf)"
vnetd_start host1 "$(rstar_host_conf 1)"
guest_add g1 host1 vtap0 1
vnetd_start host2 "node host2
link proxy $(addr proxy):$PORT tls
interface guest tap vtap0
$RSTAR_ROUTING
$(tls_conf host2)"
H2=$(ns host2)
IP1=$(guest_ip 1)
IP2=$(guest_ip 2)
wait_for 10 ip -n "$H2" link show vtap0 || fail "host2 made no vtap0"
ip -n "$H2" link set vtap0 address "$(guest_mac 2)"
ip -n "$H2" addr add "$IP2/24" dev vtap0
ip -n "$H2" link set vtap0 up
# Quiet: nothing sent unless answering.
ip -n "$H2" neigh replace "$IP1" lladdr "$(guest_mac 1)" dev vtap0 nud permanent
in_guest g1 ip neigh replace "$IP2" lladdr "$(guest_mac 2)" dev vtap0 nud permanent
wait_link_up host2 proxy
# Each speaks once, so that the nodes learn the MACs; then host2's guest
# only answers.
in_guest g1 ping -n -c 1 -W 1 "$IP2" >/dev/null 2>&1 || true
h2_ping() { ip netns exec "$H2" ping -n -c 1 -W 1 "$IP1" >/dev/null 2>&1; }
wait_for 15 h2_ping || fail "host2's guest cannot ping guest 1"
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping host2's guest"
for d in proxy host1; do
	wait_for 10 owner_is "$d" "$(guest_mac 2)" host2 || fail "$d: guest 2 not at host2: $(vctl "$d" show macs)"
done

say "host2's vnetd restarts; guest 1 pings the quiet guest at once"
vnetd_stop host2 || fail "vnetd host2 did not exit cleanly"
ip -n "$H2" link show vtap0 >/dev/null 2>&1 || fail "vtap0 went with the daemon"
t0=${EPOCHREALTIME/./}
vnetd_restart host2
wait_link_up host2 proxy
wait_for 20 gping g1 "$IP2" || fail "the quiet guest is unreachable after the restart: $(vctl proxy show macs)"
say "  answered $(((${EPOCHREALTIME/./} - t0) / 1000)) ms after the restart began"
(($(stat_value host2 macs_restored) >= 1)) || fail "host2 took no MAC back (macs_restored $(stat_value host2 macs_restored))"
grep -q "taken back from our record of before the restart" "${D_LOG[host2]}" ||
	fail "host2 did not log the MAC it took back"
owner_is proxy "$(guest_mac 2)" host2 || fail "the proxy does not route guest 2 to host2"
pass
