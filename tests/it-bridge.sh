#!/bin/bash
#
# The libvirt layout: on host h, a bridge br0 holds the VM's device (here a
# veth into namespace g1) and vnetd's TAP device vnet0, made with `persist
# yes bridge br0`; guest 2 sits behind host b's TAP device.
#
#   - vnetd puts vnet0 into br0, and guest 1 reaches guest 2;
#   - when vnetd stops, vnet0 stays, still in br0; a restart attaches to it
#     again, and a ping every 0.2 s across the restart loses at most a few;
#   - a device that went while vnetd was down is made anew and put into the
#     bridge again;
#   - del-interface removes the persistent device.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

node_add h 1
node_add b 2
H_NS=$(ns h)
ip -n "$H_NS" link add br0 type bridge
ip -n "$H_NS" link set br0 up
mkns g1
G_NS[g1]=$(ns g1)
ip -n "$H_NS" link add vm0 type veth peer name eth0 netns "${G_NS[g1]}"
ip -n "$H_NS" link set vm0 master br0 up
ip -n "${G_NS[g1]}" link set eth0 address "$(guest_mac 1)"
ip -n "${G_NS[g1]}" addr add "$(guest_ip 1)/24" dev eth0
ip -n "${G_NS[g1]}" link set eth0 up

vnetd_start b "node b
listen $(addr b):$PORT allow $UNDERLAY
learn yes
interface guest tap vtap0"
vnetd_start h "node h
learn yes
interface vm tap vnet0 persist yes bridge br0
link b $(addr b):$PORT"
guest_add g2 b vtap0 2
wait_link_up h b

in_bridge() {
	ip -n "$H_NS" -o link show "$1" 2>/dev/null | grep -q ' master br0 '
}

in_bridge vnet0 || fail "vnetd did not put vnet0 into br0: $(ip -n "$H_NS" link show vnet0 2>&1)"
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2 through the bridge"
vctl h show config | grep -qxF 'interface vm tap vnet0 persist yes bridge br0' ||
	fail "show config: $(vctl h show config)"

say "vnetd restarts under a ping every 0.2 s"
in_guest g1 ping -n -i 0.2 -c 40 -W 1 "$(guest_ip 2)" >"$TMPD/ping" 2>&1 &
ping_pid=$!
EXTRA_PIDS+=("$ping_pid")
wait_for 5 grep -q 'icmp_seq=3 ' "$TMPD/ping" || fail "the ping does not run: $(cat "$TMPD/ping")"
vnetd_stop h || fail "vnetd h did not exit cleanly"
ip -n "$H_NS" link show vnet0 >/dev/null 2>&1 || fail "vnet0 went away with vnetd"
in_bridge vnet0 || fail "vnet0 left br0 when vnetd stopped"
vnetd_restart h
wait_link_up h b
wait "$ping_pid" || true
sent=$(awk '/packets transmitted/ { print $1 }' "$TMPD/ping")
got=$(awk '/packets transmitted/ { print $4 }' "$TMPD/ping")
say "restart: $got of $sent replies"
[[ -n $sent && -n $got ]] || fail "no ping summary: $(cat "$TMPD/ping")"
((sent - got <= 5)) || fail "a restart lost $((sent - got)) of $sent pings: $(tail -n 3 "$TMPD/ping")"
grep -q "interface vm: tap device vnet0" "${D_LOG[h]}" || fail "no log line for interface vm"

say "a device gone while vnetd was down is made again, in the bridge"
vnetd_stop h || fail "vnetd h did not exit cleanly"
ip -n "$H_NS" link del vnet0
vnetd_restart h
in_bridge vnet0 || fail "vnet0 made anew is not in br0"
wait_link_up h b
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2 after vnet0 was made anew"

say "del-interface removes the persistent device"
vctl h del-interface vm || fail "del-interface vm failed"
wait_for 5 bash -c "! ip -n '$H_NS' link show vnet0" || fail "vnet0 is still there after del-interface"

say "a bridge that does not exist is an error"
rc=0
vctl h add-interface vm tap vnet0 bridge nobr0 2>"$TMPD/err" || rc=$?
((rc == 1)) || fail "add-interface with a missing bridge exited $rc"
grep -q 'nobr0' "$TMPD/err" || fail "the error does not name the bridge: $(cat "$TMPD/err")"
pass
