#!/bin/bash
#
# routing auto, when guests move and nodes fail.
#
# Migration: guest 1's MAC and address move from host1 to host4 (its TAP
# on host1 removed, a new one on host4 with the same MAC and address, one
# gratuitous ARP); guest 2's ping to it, running all along, has its replies
# back within a second of the gratuitous ARP, and every node says host4
# owns the MAC.
#
# A double claim: the same MAC sending behind host1 and host4 at once is
# logged and counted, and the guest is back at host4 once its twin goes.
#
# Failure: host3's daemon killed; its record ages out everywhere and guest
# 3's MAC with it.  Started again: the node, its MAC and the pings return.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing"

N=4
RSTAR_ROUTING="routing auto refresh 2"	# records live 6 s
rstar_start "$N"
DAEMONS=(proxy host1 host2 host3 host4)
for d in "${DAEMONS[@]}"; do
	wait_for 10 nodes_reachable "$d" 5 || fail "$d: show nodes: $(vctl "$d" show nodes)"
done
for i in 2 3 4; do
	wait_for 10 gping g1 "$(guest_ip "$i")" || fail "guest 1 cannot ping guest $i"
done
G1=$(guest_mac 1)
for d in "${DAEMONS[@]}"; do
	wait_for 5 owner_is "$d" "$G1" host1 || fail "$d: guest 1 not at host1: $(vctl "$d" show macs)"
done

say "migration: guest 2 pings guest 1 all along"
in_guest g2 ping -D -n -i 0.1 -W 1 "$(guest_ip 1)" >"$TMPD/ping" 2>&1 &
PING=$!
EXTRA_PIDS+=("$PING")
replies() { grep -c 'bytes from' "$TMPD/ping" || true; }
wait_for 5 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping') >= 5 ))" ||
	fail "the ping does not run: $(cat "$TMPD/ping")"

# The move: the TAP on host1 goes, a new one behind host4 takes guest 1's
# MAC and address.
in_guest g1 ip link del vtap0
vctl host4 add-interface moved tap vtap9
wait_for 10 ip -n "${D_NS[host4]}" link show vtap9 || fail "host4 made no vtap9"
ip -n "${D_NS[host4]}" link set vtap9 netns "${G_NS[g1]}"
in_guest g1 ip link set vtap9 address "$G1"
in_guest g1 ip addr add "$(guest_ip 1)/24" dev vtap9
in_guest g1 ip link set vtap9 up
GARP='
import socket, sys, time
dev, mac, ip = sys.argv[1:4]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
m = bytes.fromhex(mac.replace(":", ""))
a = socket.inet_aton(ip)
arp = b"\x00\x01\x08\x00\x06\x04\x00\x01" + m + a + b"\x00" * 6 + a
print("%.6f" % time.time())
s.send(b"\xff" * 6 + m + b"\x08\x06" + arp + b"\x00" * 18)'
T0=$(in_guest g1 python3 -c "$GARP" vtap9 "$G1" "$(guest_ip 1)") ||
	fail "no gratuitous ARP"
say "gratuitous ARP sent at $T0"

first_after() {
	awk -v t0="$T0" '/bytes from/ { ts = substr($1, 2, length($1) - 2);
		if (ts + 0 > t0 + 0) { print ts - t0; found = 1; exit } }
		END { exit !found }' "$TMPD/ping"
}
wait_for 10 first_after || fail "no reply after the move: $(tail -n 20 "$TMPD/ping")"
gap=$(first_after)
say "first reply $gap s after the gratuitous ARP"
awk -v g="$gap" 'BEGIN { exit !(g <= 1.0) }' ||
	fail "replies came back $gap s after the gratuitous ARP, not within 1 s"
for d in "${DAEMONS[@]}"; do
	wait_for 5 owner_is "$d" "$G1" host4 || fail "$d: guest 1 not at host4: $(vctl "$d" show macs)"
done
# host1 withdrew the MAC when its interface went down with the device, or
# host4 claimed it over host1's record if its frames came first: once.
moves=$(($(stat_value host4 mac_claims) + $(stat_value host1 macs_withdrawn_down)))
((moves == 1)) || fail "host4 claimed $(stat_value host4 mac_claims) MACs and host1 withdrew $(stat_value host1 macs_withdrawn_down), not 1 in all"
# host1 gave it up either way: withdrawn with its device, or moved away
# under host4's claim.
(($(stat_value host1 macs_moved_away) + $(stat_value host1 macs_withdrawn_down) == 1)) ||
	fail "host1 did not give guest 1's MAC up once (moved away $(stat_value host1 macs_moved_away), withdrawn $(stat_value host1 macs_withdrawn_down))"
n=$(replies)
wait_for 5 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping') >= $n + 10 ))" ||
	fail "the ping stopped after the move"
kill "$PING"

say "a double claim: guest 1's MAC also sends from host1"
vctl host1 add-interface twin tap vtap8
wait_for 10 ip -n "${D_NS[host1]}" link show vtap8 || fail "host1 made no vtap8"
mkns twin
ip -n "${D_NS[host1]}" link set vtap8 netns "$(ns twin)"
ip -n "$(ns twin)" link set vtap8 address "$G1"
ip -n "$(ns twin)" addr add 10.77.0.201/24 dev vtap8
ip -n "$(ns twin)" link set vtap8 up
# Both send for a while: each frame from the other place is a new claim.
ip netns exec "$(ns twin)" ping -n -c 20 -i 0.1 -W 1 "$(guest_ip 2)" >/dev/null 2>&1 &
TWIN=$!
in_guest g1 ping -n -c 20 -i 0.1 -W 1 "$(guest_ip 3)" >/dev/null 2>&1 || true
wait "$TWIN" || true
conflicts() { (($(stat_value host1 mac_conflicts) + $(stat_value host4 mac_conflicts) > 0)); }
wait_for 5 conflicts || fail "no MAC conflict counted on host1 or host4"
grep -q "while it still sends here" "${D_LOG[host1]}" "${D_LOG[host4]}" ||
	fail "the double claim was not logged"
say "conflicts counted: host1 $(stat_value host1 mac_conflicts), host4 $(stat_value host4 mac_conflicts)"
wd=$(stat_value host1 macs_withdrawn_down)
ip netns del "$(ns twin)"
# The twin has stopped sending and its device is gone, so host1's interface
# twin is down: host1 withdraws the MAC if it still holds it.  If host4's
# claim came after the twin's last one, host1 gave the MAC up already.
given_up() {
	vctl_daemon_ready host1 || fail "vnetd host1 died: $(tail -n 30 "${D_LOG[host1]}")"
	stat_at_least host1 macs_withdrawn_down $((wd + 1)) || ! owner_is host1 "$G1" host1
}
wait_for 5 given_up ||
	fail "host1 did not withdraw the MAC of its downed interface: $(vctl host1 show macs)"
if (($(stat_value host1 macs_withdrawn_down) > wd)); then
	say "host1 withdrew the MAC of its downed interface"
else
	say "host4 claimed the MAC last; host1 had nothing to withdraw"
fi
# The twin is gone: the guest's next frames claim its MAC back for host4.
# The guest keeps sending while we wait: the twin's last claim may reach
# host4 after the guest's last frame, and only a frame claims a MAC back.
wait_for 10 gping g1 "$(guest_ip 2)" || fail "guest 1 lost after the double claim"
back_at_host4() { gping g1 "$(guest_ip 2)" >/dev/null 2>&1; owner_is "$1" "$G1" host4; }
for d in "${DAEMONS[@]}"; do
	wait_for 10 back_at_host4 "$d" || fail "$d: guest 1 not back at host4: $(vctl "$d" show macs)"
done

say "failure: host3 killed"
seq_before=$(vctl proxy -t show nodes | awk -F'\t' '$1 == "host3" { print $2 }')
G3=$(guest_mac 3)
kill -KILL "${D_PID[host3]}"
wait "${D_PID[host3]}" 2>/dev/null || true
no_node() { ! vctl "$1" -t show nodes | awk -F'\t' '$1 == "host3" { f = 1 } END { exit !f }'; }
no_mac() { ! vctl "$1" -t show macs | grep -qF "$G3"; }
for d in proxy host1 host2 host4; do
	# Unreachable at once (its links are gone), aged out within 6 s.
	wait_for 15 no_node "$d" || fail "$d still holds host3's record: $(vctl "$d" show nodes)"
	wait_for 2 no_mac "$d" || fail "$d still lists guest 3's MAC: $(vctl "$d" show macs)"
	(($(stat_value "$d" records_aged) >= 1)) || fail "$d: host3's record did not age out"
done
if gping g1 "$(guest_ip 3)"; then fail "guest 3 answers with its host down"; fi

say "host3 started again"
vnetd_restart host3
guest_retap() {
	wait_for 10 ip -n "${D_NS[host3]}" link show vtap0 || fail "host3 made no vtap0"
	ip -n "${D_NS[host3]}" link set vtap0 netns "${G_NS[g3]}"
	in_guest g3 ip link set vtap0 address "$G3"
	in_guest g3 ip addr add "$(guest_ip 3)/24" dev vtap0
	in_guest g3 ip link set vtap0 up
}
guest_retap
for d in "${DAEMONS[@]}"; do
	wait_for 10 nodes_reachable "$d" 5 || fail "$d: show nodes: $(vctl "$d" show nodes)"
done
wait_for 10 gping g3 "$(guest_ip 1)" || fail "guest 3 cannot ping guest 1 after the restart"
wait_for 10 gping g2 "$(guest_ip 3)" || fail "guest 2 cannot ping guest 3 after the restart"
for d in "${DAEMONS[@]}"; do
	wait_for 5 owner_is "$d" "$G3" host3 || fail "$d: guest 3 not at host3: $(vctl "$d" show macs)"
done
seq_after=$(vctl proxy -t show nodes | awk -F'\t' '$1 == "host3" { print $2 }')
say "host3's sequence: $seq_before before, $seq_after after the restart"
((seq_after > seq_before)) || fail "host3 restarted below its old sequence"
pass
