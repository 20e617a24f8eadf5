#!/bin/bash
#
# The VNET scenario end to end: a home LAN with a DHCP server (dnsmasq) and
# a home machine; the proxy captures on its LAN side with pcap; a guest
# behind host 1, across the overlay, gets its address from the home DHCP
# server, pings the home machine, and the home machine pings it back.  The
# frames the proxy injects on the LAN never come back into vnetd.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
require_home_lan_tools

vnet_home_start 1
[[ $(iface_field proxy lan type) == pcap ]] || fail "the proxy's lan interface is not pcap"
[[ $(iface_field proxy lan state) == up ]] || fail "the proxy's lan interface is not up"

say "guest 1 asks the home DHCP server for an address"
ip1=$(dhcp g1)
say "guest 1 got $ip1"
[[ $ip1 == "$HOME_NET".1[0-5][0-9] ]] || fail "guest 1 got $ip1, not an address of the home range"
grep -qi "$(guest_mac 1)" "$TMPD/dnsmasq.leases" || fail "dnsmasq has no lease for guest 1"

say "guest 1 pings the home machine"
wait_for 10 gping g1 "$HOME_NET.10" || fail "guest 1 cannot ping the home machine"
in0=$(iface_field proxy lan frames_in)
out0=$(iface_field proxy lan frames_out)
out=$(in_guest g1 ping -n -c 10 -i 0.2 -W 1 "$HOME_NET.10") || fail "ping failed: $out"
grep -q ' 10 received' <<<"$out" || fail "guest 1 -> home machine lost replies: $out"
din=$(($(iface_field proxy lan frames_in) - in0))
dout=$(($(iface_field proxy lan frames_out) - out0))
say "proxy lan interface: $dout frames injected, $din captured"
((dout >= 10)) || fail "the proxy injected only $dout frames for 10 echo requests"
# The replies and perhaps an ARP exchange; the injected requests must not
# come back as captured frames.
((din >= 10 && din <= 14)) || fail "the proxy captured $din frames for 10 echo replies"

say "the home machine pings guest 1"
out=$(in_guest homepc ping -n -c 10 -i 0.2 -W 1 "$ip1") || fail "ping failed: $out"
grep -q ' 10 received' <<<"$out" || fail "home machine -> guest 1 lost replies: $out"

looped=$(stat_value proxy looped)
((looped == 0)) || fail "the proxy saw $looped of its own frames come back"
nr=$(stat_value proxy no_route)
((nr <= 2)) || fail "the proxy dropped $nr frames for want of a route"
pass
