#!/bin/bash
#
# Two proxies on one home LAN (segment home), each capturing it through a
# pcap interface on a veth into the LAN's bridge, and a host whose guest
# is linked to both, under routing auto.  One proxy forwards the segment
# (the designated forwarder, elected through the records): the other
# captures and drops, injecting nothing, so each frame crosses once: no
# DUP! in pings either way, broadcast pings included, and the standby's
# interface forwards nothing.  Then the forwarder fails silently: iptables
# DROP in and out of its namespace (the underlay), and its bridge port
# dropped by ebtables in the LAN (a capture sits below iptables, so only
# the bridge can silence it there; the port's learned MACs stay, as a
# switch's would for a dead machine).  The other takes over, announces the
# guest's MAC on the LAN, and the LAN host's ping to the guest resumes
# within 1 s, with no duplicate and no loop.  When the failed proxy comes
# back it stands by: the forwarder keeps the segment.  Then the forwarder
# stops, the other takes over, and the stopped one started again stands by.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iptables >/dev/null || skip "iptables is missing"
command -v ebtables >/dev/null || skip "ebtables is missing"

LANPC_MAC=02:00:00:00:01:0a
LANPC_IP=$(guest_ip 10)
IP1=$(guest_ip 1)

node_add p1 1
node_add p2 2
node_add host1 3
mkns lan
LAN_NS=$(ns lan)
ip -n "$LAN_NS" link add br0 type bridge
ip -n "$LAN_NS" link set br0 up
mkns lanpc
G_NS[lanpc]=$(ns lanpc)
ip -n "$LAN_NS" link add pc0 type veth peer name eth0 netns "${G_NS[lanpc]}"
ip -n "$LAN_NS" link set pc0 master br0 up
in_guest lanpc ip link set eth0 address "$LANPC_MAC"
in_guest lanpc ip link set eth0 up
in_guest lanpc ip addr add "$LANPC_IP/24" dev eth0
in_guest lanpc sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0
for p in p1 p2; do
	ip -n "$LAN_NS" link add "l$p" type veth peer name lan0 netns "$(ns "$p")"
	ip -n "$LAN_NS" link set "l$p" master br0 up
	ip -n "$(ns "$p")" link set lan0 up
	vnetd_start "$p" "node $p
listen $(addr "$p"):$PORT allow $UNDERLAY
interface lan pcap lan0 segment home
routing auto"
done
vnetd_start host1 "node host1
interface guest tap vtap0
link p1 $(addr p1):$PORT
link p2 $(addr p2):$PORT
routing auto"
guest_add g1 host1 vtap0 1
in_guest g1 sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0
for p in p1 p2; do
	wait_link_up host1 "$p"
done

seg() { [[ $(iface_field "$1" lan seg_state) == "$2" && $(iface_field "$1" lan forwarder) == "$3" ]]; }
wait_for 10 seg p1 active p1 || fail "p1 does not forward segment home: $(vctl p1 show interfaces)"
wait_for 5 seg p2 standby p1 || fail "p2 is not standing by for p1: $(vctl p2 show interfaces)"
vctl p2 show config | grep -qxF 'interface lan pcap lan0 segment home' ||
	fail "show config lost the segment: $(vctl p2 show config)"
wait_for 10 gping g1 "$LANPC_IP" || fail "the guest cannot ping the LAN host"

# once OUT: the ping output in OUT got every reply once.
once() {
	grep -q 'DUP!' "$1" && fail "duplicates: $(grep -c 'DUP!' "$1") in $(tail -n 3 "$1")"
	grep -q ' 0% packet loss' "$1" ||
		fail "replies lost: $(tail -n 3 "$1"); answered: $(grep -o 'icmp_seq=[0-9]*' "$1" | cut -d= -f2 | tr '\n' ' ')"
}
say "one copy each way, broadcasts too"
in_guest g1 ping -n -c 50 -i 0.01 -W 1 "$LANPC_IP" >"$TMPD/g-pc" 2>&1 || true
once "$TMPD/g-pc"
in_guest lanpc ping -n -c 50 -i 0.01 -W 1 "$IP1" >"$TMPD/pc-g" 2>&1 || true
once "$TMPD/pc-g"
# A broadcast ping is captured by both proxies: one forwarding it is
# one reply from the guest; it is also answered by nothing else.
in_guest lanpc ping -n -b -c 20 -i 0.05 -W 1 "$(guest_ip 255)" >"$TMPD/pc-b" 2>&1 || true
grep -q 'DUP!' "$TMPD/pc-b" && fail "a LAN broadcast reached the guest twice: $(grep -c 'DUP!' "$TMPD/pc-b") DUP!"
grep -q ' 20 received' "$TMPD/pc-b" || fail "the LAN's broadcast ping: $(tail -n 3 "$TMPD/pc-b")"
in_guest g1 ping -n -b -c 20 -i 0.05 -W 1 "$(guest_ip 255)" >"$TMPD/g-b" 2>&1 || true
grep -q 'DUP!' "$TMPD/g-b" && fail "the guest's broadcast reached the LAN twice: $(grep -c 'DUP!' "$TMPD/g-b") DUP!"
grep -q ' 20 received' "$TMPD/g-b" || fail "the guest's broadcast ping: $(tail -n 3 "$TMPD/g-b")"
for c in frames_in frames_out; do
	(($(iface_field p2 lan "$c") == 0)) || fail "standby p2's lan has $c $(iface_field p2 lan "$c")"
done
sin=$(iface_field p2 lan standby_in)
sout=$(iface_field p2 lan standby_out)
say "standby p2 dropped $sin captured frames and injected none of $sout"
((sin >= 20 && sout >= 20)) || fail "p2 counted $sin captured and $sout not injected"

# The LAN host pings the guest every 10 ms; p1 dies silently.
in_guest lanpc ping -D -n -i 0.01 -W 1 -w 4 "$IP1" >"$TMPD/fail" 2>&1 &
ping=$!
EXTRA_PIDS+=("$ping")
wait_for 5 bash -c "(( \$(grep -c 'bytes from' '$TMPD/fail') >= 50 ))" ||
	fail "the ping does not run: $(tail -n 5 "$TMPD/fail")"
t0=$(date +%s.%N)
ip netns exec "$(ns p1)" iptables -A INPUT -j DROP
ip netns exec "$(ns p1)" iptables -A OUTPUT -j DROP
ip netns exec "$LAN_NS" ebtables -A FORWARD -i lp1 -j DROP
ip netns exec "$LAN_NS" ebtables -A FORWARD -o lp1 -j DROP
wait_for 5 seg p2 active p2 || fail "p2 did not take over: $(vctl p2 show interfaces)"
say "p2 forwards segment home $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s after the failure"
grep -c 'segment home: pending -> active' "${D_LOG[p2]}" | grep -qx 1 ||
	fail "p2 logged no single takeover: $(grep 'segment home' "${D_LOG[p2]}")"
(($(iface_field p2 lan announced) >= 1)) || fail "p2 announced no MAC on the LAN"
wait_for 6 proc_gone "$ping" || fail "the LAN host's ping does not end"
wait "$ping" 2>/dev/null || true
read -r g gat < <(awk '/bytes from/ { t = substr($1, 2, length($1) - 2) + 0
	if (last && t - last > max) { max = t - last; at = last }
	last = t }
	END { printf "%.3f %.3f\n", max, at }' "$TMPD/fail")
say "longest gap in the LAN host's ping: $g s (at $gat, the failure at $t0)"
awk -v g="$g" 'BEGIN { exit !(g < 1.0) }' || fail "the LAN host's ping stopped for $g s"
grep -q 'DUP!' "$TMPD/fail" && fail "duplicates around the takeover: $(grep -c 'DUP!' "$TMPD/fail")"

say "p1 comes back and stands by"
ip netns exec "$(ns p1)" iptables -F
ip netns exec "$LAN_NS" ebtables -F FORWARD
wait_for 15 seg p1 standby p2 || fail "p1 does not stand by for p2: $(vctl p1 show interfaces)"
seg p2 active p2 || fail "p2 gave the segment up: $(vctl p2 show interfaces)"
in_guest lanpc ping -n -c 50 -i 0.01 -W 1 "$IP1" >"$TMPD/back" 2>&1 || true
once "$TMPD/back"
in_guest lanpc ping -n -b -c 10 -i 0.05 -W 1 "$(guest_ip 255)" >"$TMPD/back-b" 2>&1 || true
grep -q 'DUP!' "$TMPD/back-b" && fail "after p1's return a broadcast reached the guest twice"

say "p2 stops; p1 takes over, and p2 started again stands by"
vnetd_stop p2 || fail "p2 exited with an error"
wait_for 5 seg p1 active p1 || fail "p1 did not take over from a stopped p2: $(vctl p1 show interfaces)"
wait_for 5 gping lanpc "$IP1" || fail "the LAN host cannot ping the guest through p1"
vnetd_restart p2
wait_link_up host1 p2
# One forwarder, p1; or p2, if p1 lost its only link meanwhile (a loaded
# machine, a sanitizer build: it had no peer, so it gave the segment up).
one_fwd() { { seg p1 active p1 && seg p2 standby p1; } || { seg p2 active p2 && seg p1 standby p2; }; }
wait_for 10 one_fwd || fail "no single forwarder after p2's start: $(vctl p1 show interfaces; vctl p2 show interfaces)"
if ! seg p1 active p1; then
	grep -c 'segment home: active -> pending: no peer left' "${D_LOG[p1]}" | grep -qx 2 ||
		fail "p1 gave the segment up on p2's start: $(grep 'segment home' "${D_LOG[p1]}")"
	say "p1 lost its peer during p2's start: p2 forwards"
elif ! grep -c 'segment home: pending -> active' "${D_LOG[p1]}" | grep -qx 2; then
	fail "p1 logged $(grep -c 'segment home: pending -> active' "${D_LOG[p1]}") takeovers, not 2"
fi
(($(stat_value p2 macs_restored) == 0)) || fail "p2 took the LAN's MACs back on its restart"
in_guest lanpc ping -n -c 50 -i 0.01 -W 1 "$IP1" >"$TMPD/restart" 2>&1 || true
once "$TMPD/restart"
in_guest lanpc ping -n -b -c 10 -i 0.05 -W 1 "$(guest_ip 255)" >"$TMPD/restart-b" 2>&1 || true
grep -q 'DUP!' "$TMPD/restart-b" && fail "after p2's restart a broadcast reached the guest twice"

# No loop: nothing went round, and the LAN is quiet once the pings stop.
for d in p1 p2 host1; do
	dup=$(stat_value "$d" duplicates)
	((dup == 0)) || fail "$d dropped $dup frames seen before"
done
f=p1
seg p1 active p1 || f=p2
a=$(iface_field $f lan frames_in)
sleep 1	# a sample: a storm would show in one idle second
b=$(iface_field $f lan frames_in)
say "$f captured $((b - a)) frames in an idle second; looped: $(iface_field p1 lan segment_looped) and $(iface_field p2 lan segment_looped); LAN MACs kept from a stale claim: $(stat_value p2 mac_claims_segment_kept) and $(stat_value p1 mac_claims_segment_kept)"
((b - a < 20)) || fail "$f captured $((b - a)) frames in an idle second"
pass
