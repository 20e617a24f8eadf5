#!/bin/bash
#
# Segmentation offload through the tunnel.  Two hosts, a guest behind each.
# With offload on both ends, a guest's TCP flow crosses the link as super-
# frames (far larger than the MTU) and arrives whole.  With `offload no` on
# the receiving end (it does not announce the capability), the sender cuts
# them into ordinary frames (gso_cut counts them) and the flow still runs;
# the same when the link has a rate.  Checksums are right at the far guest
# either way: iperf3 only completes if every segment is accepted.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"

# start_pair P IDX H2_OFFLOAD [LINKOPTS]: nodes P1 and P2 (underlay
# addresses IDX, IDX+1), P2 listens, P1 links to it; guests Pg1, Pg2.  The
# daemons of earlier pairs are stopped first: only one pair runs at a time.
P=""
start_pair() {
	local pid
	for pid in "${STARTED_PIDS[@]}"; do
		_stop_pid "$pid"
	done
	P=$1
	node_add "${P}1" "$2"
	node_add "${P}2" $(($2 + 1))
	vnetd_start "${P}2" "node ${P}2
offload $3
listen $(addr "${P}2"):$PORT allow $UNDERLAY
interface guest tap vtap0
route $(guest_mac 2) any link ${P}1
route not-$(guest_mac 2) any interface guest"
	vnetd_start "${P}1" "node ${P}1
interface guest tap vtap0
link ${P}2 $(addr "${P}2"):$PORT ${4:-}
route $(guest_mac 1) any link ${P}2
route not-$(guest_mac 1) any interface guest"
	guest_add "${P}g1" "${P}1" vtap0 1
	guest_add "${P}g2" "${P}2" vtap0 2
	wait_link_up "${P}1" "${P}2"
	wait_for 15 gping "${P}g1" "$(guest_ip 2)" ||
		fail "guest 1 cannot ping guest 2"
	iperf_server "${P}g2"
}

# transfer: 2 s of iperf3 from guest 1 to guest 2; fails unless it completes.
transfer() {
	local out
	out=$(in_guest "${P}g1" iperf3 -c "$(guest_ip 2)" -t 2 -f m 2>&1) ||
		fail "iperf3 failed: $out"
	grep -q receiver <<<"$out" || fail "iperf3 gave no result: $out"
}

# avg_frame DAEMON LINK: bytes per frame the link carried out.
avg_frame() {
	local f b
	f=$(link_field "$1" "$2" frames_out)
	b=$(link_field "$1" "$2" bytes_out)
	((f > 0)) || fail "no frames on link $2 of $1"
	echo $((b / f))
}

say "offload on both ends: super-frames cross the link"
start_pair a 1 yes
transfer
avg=$(avg_frame a1 a2)
say "average frame on the link: $avg bytes"
((avg > 3000)) || fail "frames averaged $avg bytes: no super-frames crossed"
cut=$(stat_value a1 gso_cut)
((cut == 0)) || fail "a1 cut $cut frames for a peer that takes them"

say "offload no on the receiver: the sender cuts"
start_pair b 3 no
transfer
avg=$(avg_frame b1 b2)
cut=$(stat_value b1 gso_cut)
say "average frame $avg bytes, $cut super-frames cut into $(stat_value b1 gso_segments)"
((cut > 0)) || fail "b1 cut nothing for a peer without the capability"
((avg <= 1514)) || fail "frames of $avg bytes went to a peer that takes none"
((avg > 1000)) || fail "frames averaged $avg bytes: were they cut too small?"
[[ $(stat_value b1 gso_bad) == 0 ]] || fail "frames could not be cut"
vctl b2 show config | grep -qx "offload no" || fail "show config lacks offload no"

say "a link with a rate carries ordinary frames"
start_pair c 5 yes "rate 200mbit"
transfer
avg=$(avg_frame c1 c2)
say "average frame $avg bytes"
((avg <= 1514)) || fail "a rated link carried frames of $avg bytes"
(($(stat_value c1 gso_cut) > 0)) || fail "nothing was cut for the rated link"
pass
