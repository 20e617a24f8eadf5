#!/bin/bash
#
# A TAP device outlives a restart of vnetd (persist is the default): vnetd h
# has TAP device vnet0 with an address in its own namespace, linked to vnetd
# b whose guest g2 has the other end; under a ping every 10 ms, h is stopped
# (SIGTERM) and started again.  vnet0 is still there with its address after
# the restart and the ping resumes; the longest run of lost pings is printed.
# A device moved into another namespace goes with a killed vnetd (persist
# auto), so the next start's device can take its place there.  A reload of
# a configuration without the interface removes the device, and with
# persist no the device goes when vnetd stops.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

PORT=7401
UNDERLAY=10.66.0.0/24
node_add h 1
node_add b 2
H_NS=$(ns h)
IP1=$(guest_ip 1)
IP2=$(guest_ip 2)

vnetd_start b "node b
listen $(addr b):$PORT allow $UNDERLAY
learn yes
interface guest tap vtap0"
H_CONF="node h
learn yes
link b $(addr b):$PORT"
vnetd_start h "$H_CONF
interface vm tap vnet0"
guest_add g2 b vtap0 2
wait_for 10 ip -n "$H_NS" link show vnet0 || fail "vnetd h did not create vnet0"
ip -n "$H_NS" link set vnet0 address "$(guest_mac 1)"
ip -n "$H_NS" addr add "$IP1/24" dev vnet0
ip -n "$H_NS" link set vnet0 up
wait_link_up h b
h_ping() { ip netns exec "$H_NS" ping -n -c 1 -W 1 "$IP2" >/dev/null 2>&1; }
wait_for 15 h_ping || fail "h cannot ping guest 2 over the overlay"
vctl h show config | grep -qxF 'interface vm tap vnet0' ||
	fail "show config: $(vctl h show config)"

say "vnetd h restarts under a ping every 10 ms"
ip netns exec "$H_NS" ping -n -i 0.01 -W 1 -w 30 "$IP2" >"$TMPD/ping" 2>&1 &
ping_pid=$!
EXTRA_PIDS+=("$ping_pid")
wait_for 5 grep -q 'icmp_seq=50 ' "$TMPD/ping" || fail "the ping does not run: $(tail -3 "$TMPD/ping")"
vnetd_stop h || fail "vnetd h did not exit cleanly"
ip -n "$H_NS" link show vnet0 >/dev/null 2>&1 || fail "vnet0 went away with vnetd"
vnetd_restart h
ip -n "$H_NS" -o addr show dev vnet0 | grep -qF " $IP1/24 " ||
	fail "vnet0 lost its address: $(ip -n "$H_NS" addr show dev vnet0)"
wait_link_up h b 40
last=$(grep -o 'icmp_seq=[0-9]*' "$TMPD/ping" | tail -1 | cut -d= -f2)
resumed() { (($(grep -o 'icmp_seq=[0-9]*' "$TMPD/ping" | tail -1 | cut -d= -f2) > last + 50)); }
wait_for 15 resumed || fail "the ping did not resume after the restart: $(tail -3 "$TMPD/ping")"
kill -INT "$ping_pid" 2>/dev/null || true
wait "$ping_pid" || true
# The longest run of sequence numbers without a reply.
gap=$(grep -o 'icmp_seq=[0-9]*' "$TMPD/ping" | cut -d= -f2 | sort -n | uniq |
	awk 'NR > 1 && $1 - prev - 1 > max { max = $1 - prev - 1 } { prev = $1 } END { print max + 0 }')
say "restart: longest loss run $gap pings (~$((gap * 10)) ms at 10 ms intervals)"
[[ -n $gap ]] || fail "no ping output: $(tail -3 "$TMPD/ping")"

say "a device moved to another namespace goes with a killed vnetd (persist auto)"
mkns ct
CT_NS=$(ns ct)
vctl h add-interface ct tap vct0 >/dev/null || fail "add-interface ct failed"
wait_for 10 ip -n "$H_NS" link show vct0 || fail "vnetd h did not create vct0"
ip -n "$H_NS" link set vct0 netns "$CT_NS"
wait_for 5 grep -q 'device vct0 was moved to another network namespace' "${D_LOG[h]}" ||
	fail "vnetd h did not notice that vct0 moved"
kill -KILL "${D_PID[h]}"
wait "${D_PID[h]}" 2>/dev/null || true
wait_for 5 bash -c "! ip -n '$CT_NS' link show vct0 2>/dev/null" ||
	fail "vct0 outlived the killed vnetd in the other namespace"
ip -n "$H_NS" link show vnet0 >/dev/null 2>&1 || fail "vnet0 went away with the killed vnetd"
vnetd_restart h
vctl h add-interface ct tap vct0 >/dev/null || fail "add-interface ct after the restart failed"
wait_for 10 ip -n "$H_NS" link show vct0 || fail "vnetd h did not create vct0 again"
ip -n "$H_NS" link set vct0 netns "$CT_NS" || fail "the new vct0 cannot go where the old one was"
wait_link_up h b 40
wait_for 15 h_ping || fail "h cannot ping guest 2 after being killed"

say "a reload without the interface removes the device"
printf '%s\n' "$H_CONF" >"${D_CONF[h]}"
vctl h reload >/dev/null || fail "reload of h failed"
wait_for 5 bash -c "! ip -n '$H_NS' link show vnet0 2>/dev/null" ||
	fail "vnet0 is still there after a reload removed its interface"

say "with persist no, the device goes when vnetd stops"
printf '%s\ninterface vm tap vnet0 persist no\n' "$H_CONF" >"${D_CONF[h]}"
vctl h reload >/dev/null || fail "reload of h with persist no failed"
wait_for 10 ip -n "$H_NS" link show vnet0 || fail "vnetd h did not create vnet0 again"
vnetd_stop h || fail "vnetd h did not exit cleanly"
wait_for 5 bash -c "! ip -n '$H_NS' link show vnet0 2>/dev/null" ||
	fail "vnet0 (persist no) is still there after vnetd stopped"
pass
