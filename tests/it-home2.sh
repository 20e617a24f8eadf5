#!/bin/bash
#
# Two guests behind two hosts, both put on the home LAN by the proxy's pcap
# interface: each gets its address from the home DHCP server, they talk to
# each other (through the proxy, never through the LAN), and both reach the
# home machine.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
require_home_lan_tools

vnet_home_start 2
ip1=$(dhcp g1)
ip2=$(dhcp g2)
say "guest 1 got $ip1, guest 2 got $ip2"
[[ $ip1 != "$ip2" ]] || fail "both guests got $ip1"

wait_for 10 gping g1 "$ip2" || fail "guest 1 cannot ping guest 2"
lan0=$(iface_field proxy lan frames_out)
h2=$(link_field proxy host2 frames_out)
out=$(in_guest g1 ping -n -c 10 -i 0.2 -W 1 "$ip2") || fail "ping failed: $out"
grep -q ' 10 received' <<<"$out" || fail "guest 1 -> guest 2 lost replies: $out"
out=$(in_guest g2 ping -n -c 10 -i 0.2 -W 1 "$ip1") || fail "ping failed: $out"
grep -q ' 10 received' <<<"$out" || fail "guest 2 -> guest 1 lost replies: $out"
dlan=$(($(iface_field proxy lan frames_out) - lan0))
dh2=$(($(link_field proxy host2 frames_out) - h2))
say "40 echoes between the guests: proxy -> host2 +$dh2 frames, proxy -> LAN +$dlan"
((dh2 >= 20)) || fail "the proxy sent only $dh2 frames to host2"
((dlan <= 2)) || fail "the guests' unicast traffic went onto the LAN ($dlan frames)"

for g in g1 g2; do
	out=$(in_guest "$g" ping -n -c 3 -i 0.2 -W 1 "$HOME_NET.10") || fail "$g -> home machine: $out"
	grep -q ' 3 received' <<<"$out" || fail "$g -> home machine lost replies: $out"
done
for ip in "$ip1" "$ip2"; do
	out=$(in_guest homepc ping -n -c 3 -i 0.2 -W 1 "$ip") || fail "home machine -> $ip: $out"
	grep -q ' 3 received' <<<"$out" || fail "home machine -> $ip lost replies: $out"
done
pass
