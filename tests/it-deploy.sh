#!/bin/bash
#
# The README's deployment with real daemons, from the README's own lines:
# its vnet-ca lines make the certificates, its three configuration blocks
# run as they are but for what names this machine (the proxy's LAN port is
# the veth lan0 into a home LAN with a DHCP server and a home PC, the
# proxy's name is its underlay address, the qemu socket is in the test's
# directory).  vm1 is a namespace behind a veth named as the README's TAP
# device, left down as QEMU leaves it, with the MAC of the README's QEMU
# line; vm2 a namespace whose NIC tests/qemu_stream.py connects to the
# qemu socket as QEMU does.  Both VMs get their addresses from the home
# DHCP server; the home PC and the VMs reach each other; every node knows
# the three nodes; the proxy routes the home PC's MAC and the hosts their
# VMs' without a route anywhere; the README's vnetctl lines answer.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
require_home_lan_tools
command -v python3 >/dev/null || skip "python3 is missing"

ROOT=$TMPD/nodes
readme_certs "$ROOT"
readme_cmds qemu-system-x86_64 >"$TMPD/qemu.lines"
# vm_mac N: the MAC of vmN's QEMU line.
vm_mac() { grep -F "vm$1.qcow2" "$TMPD/qemu.lines" | grep -oE 'mac=[0-9a-f:]+' | cut -d= -f2; }
MAC1=$(vm_mac 1)
MAC2=$(vm_mac 2)
[[ -n $MAC1 && -n $MAC2 ]] || fail "no MACs in the README's QEMU lines: $(cat "$TMPD/qemu.lines")"
for n in proxy host1 host2; do
	readme_node_conf "$n" "$ROOT" >"$TMPD/$n.readme"
	! grep -q '^route ' "$TMPD/$n.readme" || fail "the README's $n has routes: routing auto should need none"
done
TAPDEV=$(sed -nE 's/^interface vm1 pcap ([^ ]+).*/\1/p' "$TMPD/host1.readme")
SOCKPATH=$(sed -nE 's/^interface vm2 qemu ([^ ]+).*/\1/p' "$TMPD/host2.readme")
LANDEV=$(sed -nE 's/^interface lan pcap ([^ ]+) .*/\1/p' "$TMPD/proxy.readme")
PROXYNAME=$(sed -nE 's/^link proxy ([^:]+):.*/\1/p' "$TMPD/host1.readme")
[[ -n $TAPDEV && -n $SOCKPATH && -n $LANDEV && -n $PROXYNAME ]] ||
	fail "the README's configurations lack vm1's device, vm2's socket, the LAN port or the proxy's name"
grep -q "ifname=$TAPDEV," "$TMPD/qemu.lines" || fail "vm1's QEMU line does not make $TAPDEV"
grep -q "addr.path=$SOCKPATH " "$TMPD/qemu.lines" || fail "vm2's QEMU line does not connect to $SOCKPATH"

node_add proxy 1
node_add host1 2
node_add host2 3
home_lan_init
SOCK=$TMPD/vm2.sock
sed "s| $LANDEV | lan0 |" "$TMPD/proxy.readme" >"$TMPD/proxy.conf"
sed "s|$PROXYNAME:|$(addr proxy):|" "$TMPD/host1.readme" >"$TMPD/host1.conf"
sed "s|$PROXYNAME:|$(addr proxy):|; s|$SOCKPATH|$SOCK|" "$TMPD/host2.readme" >"$TMPD/host2.conf"

# vm1: its NIC's other end is the device host1 captures, down until vnetd
# brings it up.
mkns vm1
G_NS[vm1]=$(ns vm1)
ip -n "$(ns host1)" link add "$TAPDEV" type veth peer name eth0 netns "${G_NS[vm1]}"
ip -n "${G_NS[vm1]}" link set eth0 address "$MAC1"
ip -n "${G_NS[vm1]}" link set eth0 up

vnetd_start_file proxy "$TMPD/proxy.conf"
vnetd_start_file host1 "$TMPD/host1.conf"
vnetd_start_file host2 "$TMPD/host2.conf"
wait_link_up host1 proxy
wait_link_up host2 proxy
ip -n "$(ns host1)" link show "$TAPDEV" | grep -q '[<,]UP[,>]' ||
	fail "host1 did not bring $TAPDEV up"

# vm2: QEMU's stream netdev, as the README's line makes it.
mkns vm2
G_NS[vm2]=$(ns vm2)
ip netns exec "${G_NS[vm2]}" python3 "$LIB_DIR/qemu_stream.py" relay "$SOCK" eth0 >"$TMPD/relay.out" 2>&1 &
EXTRA_PIDS+=("$!")
wait_for 10 grep -q connected "$TMPD/relay.out" || fail "vm2 did not connect to $SOCK: $(cat "$TMPD/relay.out")"
ip -n "${G_NS[vm2]}" link set eth0 address "$MAC2"
ip -n "${G_NS[vm2]}" link set eth0 up

say "each node knows the three"
for d in proxy host1 host2; do
	wait_for 10 nodes_reachable "$d" 3 || fail "$d: show nodes: $(vctl "$d" show nodes)"
done

say "the VMs get their addresses from the home DHCP server"
ip1=$(dhcp vm1 eth0)
ip2=$(dhcp vm2 eth0)
say "vm1 $ip1, vm2 $ip2"
[[ $ip1 == "$HOME_NET".* && $ip2 == "$HOME_NET".* && $ip1 != "$ip2" ]] ||
	fail "the VMs' leases are $ip1 and $ip2"

say "the home PC and the VMs reach each other"
wait_for 10 gping homepc "$ip1" || fail "the home PC cannot ping vm1"
wait_for 10 gping homepc "$ip2" || fail "the home PC cannot ping vm2"
wait_for 10 gping vm1 "$HOME_NET.10" || fail "vm1 cannot ping the home PC"
wait_for 10 gping vm1 "$ip2" || fail "vm1 cannot ping vm2"
out=$(in_guest vm2 ping -n -q -c 5 -i 0.2 -W 1 "$ip1") || fail "vm2 -> vm1 lost pings: $out"

say "routed by the records alone"
wait_for 5 owner_is host1 "$HOME_PC_MAC" proxy || fail "host1 does not route the home PC to the proxy: $(vctl host1 show macs)"
wait_for 5 owner_is proxy "$MAC1" host1 || fail "the proxy does not route vm1 to host1: $(vctl proxy show macs)"
wait_for 5 owner_is host1 "$MAC2" host2 || fail "host1 does not route vm2 to host2: $(vctl host1 show macs)"
for d in proxy host1 host2; do
	[[ $(stat_value "$d" rule_hits) == 0 ]] || fail "$d forwarded by a rule"
done

say "the README's vnetctl lines, on the proxy"
while read -r l; do
	read -r -a w <<<"$l"
	vctl proxy "${w[@]:1}" >"$TMPD/out" 2>&1 || fail "$l: $(cat "$TMPD/out")"
done < <(readme_cmds vnetctl)
pass
