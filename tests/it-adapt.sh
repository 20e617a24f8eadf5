#!/bin/bash
#
# adapt shortcuts: a proxy and four hosts in a star over TLS, `routing
# auto`, `adapt shortcuts yes` with a short hold and idle.  A bulk transfer
# between guests behind host1 and host3 gets a direct link within hold + 5
# s, after which the proxy no longer carries it; when the transfer stops
# the link goes after idle.  A ping every 10 ms and a slow TCP flow beside
# the bulk one cross the switch onto the shortcut and back: nothing is
# lost, the receiver's daemon holds the flows that changed links until the
# old one is drained, so TCP makes no fast retransmission, and reordering
# at the receiver stays bounded (at most 20 out-of-order events).  With
# adapt off, no shortcut comes up.  it-adapt-fail has the shortcuts that
# fail (it runs beside other tests; this one runs alone).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v iptables >/dev/null || skip "iptables is missing"
command -v nstat >/dev/null || skip "nstat (iproute2) is missing"

HOLD=${HOLD:-2}
IDLE=4
KEEPALIVE=1	# a dead link is noticed after 3 keepalives without a word
RSTAR_ROUTING="routing auto
keepalive $KEEPALIVE
adapt shortcuts yes threshold 2mbit hold $HOLD idle $IDLE"
rstar_start 4
for d in proxy host1 host2 host3 host4; do
	wait_for 10 nodes_reachable "$d" 5 ||
		fail "$d: show nodes: $(vctl "$d" show nodes)"
done
G3=$(guest_ip 3)
wait_for 10 gping g1 "$G3" || fail "guest 1 cannot ping guest 3"
iperf_server g3
# A second server for the slow flow.
iperf_server g3 5202

shortcut_up() {
	link_up host1 host3 && [[ $(link_field host1 host3 origin) == auto ]]
}
no_link() { ! link_field host1 host3 state; }
proxy_in() { link_field proxy host1 frames_in; }

say "bulk transfer guest 1 -> guest 3, a ping every 10 ms beside it"
PINGS=3200	# 32 s: past the switch back (about 25 s in)
in_guest g1 ping -n -q -i 0.01 -c "$PINGS" "$G3" >"$TMPD/ping1" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
retrans0=$(guest_counter g1 TcpRetransSegs)
dsack0=$(guest_counter g1 TcpExtTCPDSACKRecv)
fast0=$(guest_counter g1 TcpExtTCPFastRetrans)
probes0=$(guest_counter g1 TcpExtTCPLossProbes)
rto0=$(guest_counter g1 TcpExtTCPTimeouts)
ofo0=$(guest_counter g3 TcpExtTCPOFOQueue)
drops0=0
for d in proxy host1 host3; do drops0=$((drops0 + $(links_sum "$d" drops))); done
in_guest g1 iperf3 -c "$G3" -t 15 -b 200M -J >"$TMPD/iperf1.json" 2>&1 &
IPERF_PID=$!
EXTRA_PIDS+=("$IPERF_PID")
# The slow flow (500 kbit/s, under half the threshold) outlasts the bulk
# one by idle + drain + some, so it crosses the switch back as well.
in_guest g1 iperf3 -c "$G3" -p 5202 -l 1400 -b 500K -t $((15 + IDLE + 10)) \
	>"$TMPD/iperf-slow" 2>&1 &
SLOW_PID=$!
EXTRA_PIDS+=("$SLOW_PID")
wait_for $((HOLD + 5)) shortcut_up ||
	fail "no shortcut host1-host3 within hold + 5 s: $(vctl host1 show links; vctl host1 show adapt)"
say "shortcut up: $(vctl host1 -t show links | awk -F'\t' '$1 == "host3"')"
grep -q 'adapt: pair host1-host3 .* dialing' "$TMPD/host1.log" ||
	fail "host1 logged no decision to dial"
peer_auto() { [[ $(link_field host3 host1 origin) == auto ]]; }
wait_for 3 peer_auto ||
	fail "host3 does not show the incoming shortcut as auto"
# The hosts dialled their links to the proxy by hand: to the proxy they
# are not shortcuts, though the hosts' names sort first.
for h in host1 host3; do
	[[ $(link_field proxy "$h" origin) != auto ]] ||
		fail "the proxy shows the link host $h dialled by hand as a shortcut"
done
# The routes move once both records list the link.
moved() {
	local a b
	a=$(proxy_in)
	sleep 1
	b=$(proxy_in)
	say "frames host1 -> proxy in 1 s: $((b - a))"
	((b - a < 50))
}
wait_for 5 moved || fail "the proxy still carries the transfer"
before=$(link_field host1 host3 frames_out)
p0=$(proxy_in)
sleep 2
p1=$(proxy_in)
after=$(link_field host1 host3 frames_out)
say "in 2 s: $((after - before)) frames on the shortcut, $((p1 - p0)) host1 -> proxy"
((after - before > 1000)) || fail "the transfer is not on the shortcut"
((p1 - p0 < 100)) || fail "the proxy still carries the transfer ($((p1 - p0)) frames)"
vctl host1 show config | grep -q '^link host3' &&
	fail "show config (and so save) lists the shortcut"
vctl host1 save "$TMPD/saved.conf" >/dev/null || fail "save failed"
grep -q '^link host3' "$TMPD/saved.conf" && fail "save wrote the shortcut"

wait "$IPERF_PID" || fail "iperf3 failed: $(cat "$TMPD/iperf1.json")"
say "transfer over; the shortcut must go after idle ($IDLE s)"
wait_for $((IDLE + 10)) no_link ||
	fail "shortcut still there: $(vctl host1 show adapt)"
proc_running "$SLOW_PID" ||
	fail "the slow flow ended before the switch back: $(cat "$TMPD/iperf-slow")"
proc_running "$PING_PID" || fail "the ping ended before the switch back"
wait "$SLOW_PID" || fail "the slow flow failed: $(cat "$TMPD/iperf-slow")"
grep -q 'adapt: pair host1-host3 .* idle' "$TMPD/host1.log" ||
	fail "host1 logged no idle decision"
wait "$PING_PID" || true
pings_ok "$TMPD/ping1" || fail "echoes lost across the switch: $(cat "$TMPD/ping1")"
retrans=$(($(guest_counter g1 TcpRetransSegs) - retrans0))
dsack=$(($(guest_counter g1 TcpExtTCPDSACKRecv) - dsack0))
fast=$(($(guest_counter g1 TcpExtTCPFastRetrans) - fast0))
probes=$(($(guest_counter g1 TcpExtTCPLossProbes) - probes0))
rto=$(($(guest_counter g1 TcpExtTCPTimeouts) - rto0))
ofo=$(($(guest_counter g3 TcpExtTCPOFOQueue) - ofo0))
drops=0
for d in proxy host1 host3; do drops=$((drops + $(links_sum "$d" drops))); done
drops=$((drops - drops0))
say "TCP: $retrans segments retransmitted ($fast fast, $probes loss probes, $rto timeouts; $dsack reported needless by D-SACK), $ofo times out of order at the receiver; $drops frames dropped by the daemons"
reseq() { stat_value "$1" "$2" || echo "?"; }
for d in host1 host3; do
	say "$d: $(reseq "$d" reseq_holds) flows held for order ($(reseq "$d" reseq_held) frames; $(reseq "$d" reseq_old_after_new) by the relay came after them), released: $(reseq "$d" reseq_released_quiet) old link quiet, $(reseq "$d" reseq_released_max) at 100 ms, $(reseq "$d" reseq_released_full) full, $(reseq "$d" reseq_released_other) other; $(reseq "$d" reseq_lost) lost"
done
# What the switch could cause: a lost frame (the daemons' drops, the
# ping) or reordering, which the receiver queues out of order and answers
# with duplicate ACKs that make the sender retransmit fast.  Timer
# retransmissions (loss probes, timeouts) at a round trip of a fraction of
# a millisecond come from scheduling delays on a busy machine, and happen
# in the star without any switch as well.
# Frames still queued on the relay when the routes move would arrive after
# the first ones on the shortcut, and the sender's RACK (its reordering
# window is a quarter of the smallest round trip, tens of microseconds
# here) would retransmit what was still on the relay, needlessly.  So
# host3 holds each flow's first frames by the shortcut until the relay
# falls quiet for it (reseq.h): it must have held at least one flow, lost
# no held frame, and TCP must see no fast retransmission.
((drops == 0)) || fail "the daemons dropped $drops frames"
((ofo <= 20)) || fail "reordering not bounded: $ofo out-of-order events"
holds=$(stat_value host3 reseq_holds) || fail "host3 has no reseq_holds"
((holds >= 1)) || fail "host3 held no flow for order across the switch"
((fast == 0)) || fail "$fast fast retransmissions across the switch"
for d in host1 host3; do
	[[ $(stat_value "$d" reseq_lost) == 0 ]] || fail "$d lost frames it held for order"
done

say "adapt off: no shortcut however much traffic"
vctl host1 adapt off >/dev/null || fail "adapt off refused"
in_guest g1 iperf3 -c "$G3" -t $((HOLD + 4)) -b 200M >/dev/null 2>&1 ||
	fail "iperf3 with adapt off failed"
no_link || fail "a shortcut came up with adapt off"
vctl host1 adapt on >/dev/null || fail "adapt on refused"
pass
