#!/bin/bash
#
# The pcap interface's life: it captures promiscuously; a frame it injected
# that the LAN hands back (a bridge port in hairpin mode) is recognised and
# dropped; when its device goes away the interface goes down with a log
# line, and it comes back up with the device; an interface whose device
# does not exist yet waits for it.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
require_home_lan_tools

vnet_home_start 1
IP1=$HOME_NET.201
in_guest g1 ip addr add "$IP1/24" dev vtap0
PROXY_NS=$(ns proxy)

iface_state() { [[ $(iface_field proxy "$1" state) == "$2" ]]; }

ip -n "$PROXY_NS" -d link show lan0 | grep -q 'promiscuity [1-9]' ||
	fail "lan0 is not in promiscuous mode: $(ip -n "$PROXY_NS" -d link show lan0)"

say "hairpin on the proxy's bridge port: injected broadcasts come back"
ip -n "$HOME_NS" link set px0 type bridge_slave hairpin on
in_guest g1 ip neigh flush dev vtap0
wait_for 10 gping g1 "$HOME_NET.10" || fail "guest 1 cannot ping the home machine"
looped=$(stat_value proxy looped)
say "looped frames recognised: $looped"
((looped >= 1)) || fail "the proxy did not recognise its own ARP request coming back"
ip -n "$HOME_NS" link set px0 type bridge_slave hairpin off

say "the device goes away"
home_lan_unplug
wait_for 5 iface_state lan down || fail "the lan interface is not down after its device went away"
grep -q 'interface lan: .*interface down' "${D_LOG[proxy]}" || fail "no log line says that lan went down"
if gping g1 "$HOME_NET.10"; then
	fail "guest 1 reached the home machine without the proxy's LAN device"
fi

say "the device comes back"
home_lan_plug
wait_for 5 iface_state lan up || fail "the lan interface did not come back up with its device"
grep -q 'interface lan: device lan0 is back' "${D_LOG[proxy]}" || fail "no log line says that lan came back"
wait_for 10 gping g1 "$HOME_NET.10" || fail "guest 1 cannot ping the home machine after the device came back"
out=$(in_guest homepc ping -n -c 5 -i 0.2 -W 1 "$IP1") || fail "home machine -> guest 1: $out"
grep -q ' 5 received' <<<"$out" || fail "home machine -> guest 1 lost replies: $out"

say "an interface whose device does not exist yet waits for it"
vctl proxy add-interface later pcap lan9 promisc no || fail "add-interface of a missing device failed"
iface_state later down || fail "interface later is not down without its device"
ip -n "$PROXY_NS" link add lan9 type veth peer name lan9p
ip -n "$PROXY_NS" link set lan9 up
wait_for 5 iface_state later up || fail "interface later did not come up with its device"
vctl proxy show config | grep -qxF 'interface later pcap lan9 promisc no' ||
	fail "show config does not show interface later as given"
vctl proxy del-interface later || fail "del-interface later failed"

say "a bad filter is refused"
rc=0
vctl proxy add-interface bad pcap lan9 filter "ether hst 1" 2>"$TMPD/err" || rc=$?
((rc == 1)) || fail "add-interface with a bad filter exited $rc"
grep -q 'filter' "$TMPD/err" || fail "the error does not mention the filter: $(cat "$TMPD/err")"
printf 'interface bad pcap lan9 filter "ether hst 1"\n' >"$TMPD/bad.conf"
rc=0
"$VNETD" -n -f "$TMPD/bad.conf" 2>"$TMPD/err" || rc=$?
((rc == 1)) || fail "vnetd -n accepted a bad filter"
grep -q "^$TMPD/bad.conf:1: interface bad: filter: " "$TMPD/err" || fail "vnetd -n said: $(cat "$TMPD/err")"
pass
