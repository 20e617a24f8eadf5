#!/bin/bash
#
# TAP I/O threads (`threads yes`).  Two hosts with threads on, a guest
# behind each, and a second guest on host 1: pings and a TCP flow cross the
# link, and the two guests on one host reach each other through the
# daemon's own switching; the interface counters match what the guests
# sent.  Then the threads' life: an interface removed and added again at
# run time while a flow runs (its threads stopped and started), a TAP
# device deleted under its reader (the interface goes down with a log
# line, the daemon and the other interfaces run on), a reload that would
# change `threads` refused, and SIGTERM ending a daemon mid-flow with exit
# status 0.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v python3 >/dev/null || skip "python3 is missing"

node_add t1 1
node_add t2 2
vnetd_start t2 "node t2
threads yes
listen $(addr t2):$PORT allow $UNDERLAY
interface guest tap vtap0
route $(guest_mac 2) any link t1
route not-$(guest_mac 2) any interface guest"
T1_CONF="node t1
threads yes
learn yes
interface guest tap vtap0
interface guest3 tap vtap3
link t2 $(addr t2):$PORT"
vnetd_start t1 "$T1_CONF"
guest_add g1 t1 vtap0 1
guest_add g3 t1 vtap3 3
guest_add g2 t2 vtap0 2
wait_link_up t1 t2

# io_threads DAEMON: how many I/O threads the daemon runs.
io_threads() { cat /proc/"${D_PID[$1]}"/task/*/comm | grep -c '^vnetd-' || true; }

# iface_above DAEMON IFACE COLUMN N: that counter is above N.
# shellcheck disable=SC2317 # called through wait_for
iface_above() {
	local v
	v=$(iface_field "$1" "$2" "$3") || return 1
	((v > $4))
}

vctl t1 show config | grep -qx "threads yes" || fail "show config lacks 'threads yes'"
grep -q "no threads" "${D_LOG[t1]}" && fail "t1 runs without its threads: $(grep "no threads" "${D_LOG[t1]}")"
# Each TAP device is read and written by two threads of its own.
n=$(io_threads t1)
((n == 4)) || fail "t1 has $n I/O threads for two interfaces, not 4"
n=$(io_threads t2)
((n == 2)) || fail "t2 has $n I/O threads for one interface, not 2"

say "pings across the link and between the two guests of t1"
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"
wait_for 15 gping g3 "$(guest_ip 1)" || fail "guest 3 cannot ping guest 1"
out=$(in_guest g1 ping -n -q -c 50 -i 0.01 "$(guest_ip 2)") || fail "pings lost: $out"
grep -q " 0% packet loss" <<<"$out" || fail "pings lost: $out"

# rx_packets GUEST: frames the guest's vtap0 has taken from the daemon.
# shellcheck disable=SC2317 # called through wait_for
rx_packets() { in_guest "$1" cat /sys/class/net/vtap0/statistics/rx_packets; }
# counters: frames t2 took from link t1, wrote to guest 2 and dropped there,
# and frames guest 2's device received.
# shellcheck disable=SC2317 # called through wait_for
counters() {
	printf '%s %s %s %s\n' "$(link_field t2 t1 frames_in)" \
		"$(iface_field t2 guest frames_out)" "$(iface_field t2 guest drops)" \
		"$(rx_packets g2)"
}
# counters_steady: the same twice, 0.2 s apart (no frame in between, such
# as a guest's own IPv6 multicast); sets SNAP.
# shellcheck disable=SC2317 # called through wait_for
counters_steady() {
	local a
	a=$(counters) || return 1
	sleep 0.2
	SNAP=$(counters) || return 1
	[[ $SNAP == "$a" ]]
}

say "a TCP flow: what guest 1 sent arrives, and the counters agree"
iperf_server g2
wait_for 10 counters_steady || fail "t2's counters do not settle"
read -r link0 out0 drops0 rx0 <<<"$SNAP"
out=$(in_guest g1 iperf3 -c "$(guest_ip 2)" -t 3 -J) || fail "iperf3 failed"
bytes=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["end"]["sum_received"]["bytes"])' <<<"$out") ||
	fail "iperf3 gave no result: $out"
say "guest 2 received $bytes bytes"
((bytes > 10000000)) || fail "only $bytes bytes arrived"
# Once quiet, every frame t2 took from the link went to guest 2's device
# (or was counted as dropped), and the device has it.
wait_for 10 counters_steady || fail "t2's counters do not settle after the flow"
read -r link after drops rx <<<"$SNAP"
link=$((link - link0))
out=$((after - out0))
drops=$((drops - drops0))
rx=$((rx - rx0))
say "t2 took $link frames from the link, wrote $out to guest 2 ($drops dropped); the device received $rx"
((out > 1000)) || fail "t2 wrote only $out frames into guest 2's device"
((out + drops >= link && out <= link)) || fail "link frames $link, written $out, dropped $drops: some went missing"
((rx + drops >= out && rx <= out)) || fail "written $out, the device received $rx, dropped $drops: some went missing"
((drops * 100 <= out)) || fail "$drops of $out frames dropped"

say "the interface removed and added again while a flow runs"
in_guest g1 iperf3 -c "$(guest_ip 2)" -t 6 >/dev/null 2>&1 &
flow=$!
EXTRA_PIDS+=("$flow")
wait_for 5 iface_above t2 guest frames_out $((after + 100)) ||
	fail "the flow did not start"
vctl t2 del-interface guest >/dev/null || fail "del-interface failed"
vctl_ok "${D_SOCK[t2]}" || fail "t2 does not answer after del-interface"
n=$(io_threads t2)
((n == 0)) || fail "t2 still runs $n I/O threads without interfaces"
# The device went with the interface: the guest gets a new one.
ip -n "$(ns g2)" link show vtap0 >/dev/null 2>&1 && fail "vtap0 survived its interface"
vctl t2 add-interface guest tap vtap0 >/dev/null || fail "add-interface failed"
ip netns pids "$(ns g2)" | xargs -r kill -KILL
ip netns del "$(ns g2)"
guest_add g2 t2 vtap0 2
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 2 unreachable after the interface came back"
n=$(io_threads t2)
((n == 2)) || fail "t2 has $n I/O threads after add-interface, not 2"
iperf_server g2
wait "$flow" 2>/dev/null || true

say "a TAP device deleted under its reader"
ip -n "$(ns g3)" link del vtap3
wait_for 10 grep -q "interface guest3: read from vtap3" "${D_LOG[t1]}" ||
	fail "t1 did not notice vtap3 was gone"
state=$(iface_field t1 guest3 state)
[[ $state == down ]] || fail "guest3 is $state, not down"
n=$(io_threads t1)
((n == 2)) || fail "t1 runs $n I/O threads, not 2, after guest3 went down"
gping g1 "$(guest_ip 2)" || fail "guest 1 lost guest 2 with guest 3's device"

say "a reload may not change threads"
printf '%s\n' "${T1_CONF/threads yes/threads no}" >"${D_CONF[t1]}"
out=$(vctl t1 reload 2>&1) && fail "a reload changed threads: $out"
grep -q "restart" <<<"$out" || fail "reload refused without saying why: $out"
vctl t1 show config | grep -qx "threads yes" || fail "threads changed by a refused reload"

say "SIGTERM mid-flow: a clean exit"
in_guest g1 iperf3 -c "$(guest_ip 2)" -t 5 >/dev/null 2>&1 &
EXTRA_PIDS+=("$!")
wait_for 5 iface_above t1 guest frames_in $(($(iface_field t1 guest frames_in) + 200)) ||
	fail "the flow did not start"
rc=0
vnetd_stop t1 || rc=$?
((rc == 0)) || fail "t1 exited with status $rc on SIGTERM"
pass
