#!/bin/bash
#
# virtual-ECN across a marking link.  Guest 1 has net.ipv4.tcp_ecn=0 and sits
# behind `vcc guest ecn virtual`; its flow to guest 2 crosses a link with
# `rate 10mbit` and CoDel, which marks ECN-capable packets CE and drops the
# others.  The test asserts:
#
#  - ECT on the wire: the far daemon (no policy, it only tracks) sees the
#    flow negotiate ECN (its guest answered the SYN's ECE|CWR) and its data
#    arrive ECN-capable, and the link marks CE instead of dropping;
#  - the window halves on marks: in `show flows` on guest 1's side the flow
#    is "virtual", ECE arrived and was hidden, the target window was cut and
#    windows toward the guest were lowered; the guest saw no ECN at all;
#  - no retransmission caused by the translation: the link dropped nothing
#    (AQM or tail), so every packet reached guest 2; a broken checksum or a
#    window that made the guest's sender stall into a timeout would show up
#    as a checksum error at guest 2 (TcpInCsumErrors) or as a retransmission
#    by guest 1 (TcpRetransSegs) other than a tail loss probe.  A tail loss
#    probe (TcpExtTCPLossProbes) is Linux re-sending the last segment when
#    the final ACK is late, as it does without vCC, when the receiver delays
#    that ACK: at most two are allowed.  The rest must be 0.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v nstat >/dev/null || skip "nstat (iproute2) is missing"

node_add h1 1
node_add h2 2
vnetd_start h2 "node h2
listen $(addr h2):$PORT allow $UNDERLAY
interface guest tap vtap0
route $(guest_mac 2) any link h1
route not-$(guest_mac 2) any interface guest"
vnetd_start h1 "node h1
interface guest tap vtap0
link h2 $(addr h2):$PORT rate 10mbit aqm codel
route $(guest_mac 1) any link h2
route not-$(guest_mac 1) any interface guest
vcc guest ecn virtual"
guest_add g1 h1 vtap0 1
guest_add g2 h2 vtap0 2
in_guest g1 sysctl -qw net.ipv4.tcp_ecn=0 net.ipv4.tcp_congestion_control=reno
in_guest g2 sysctl -qw net.ipv4.tcp_ecn=1 net.ipv4.tcp_congestion_control=reno
wait_link_up h1 h2
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"
vctl h1 show config | grep -qxF "vcc guest ecn virtual" ||
	fail "show config lacks the policy: $(vctl h1 show config)"

iperf_server g2

# flow_field DAEMON COLUMN: a column of `show flows` for the data flow to
# port 5201, the one with the most ECN-capable data (iperf3 opens a control
# connection too).  The flows end with the transfer: ask while it runs.
flow_field() {
	local idx=0 i=0 c
	for c in interface guest dir remote state ecn srtt_ms inflight target \
	    rwnd active ect ce ece cuts lowered wscale class idle; do
		i=$((i + 1))
		[[ $c == "$2" ]] && idx=$i
	done
	vctl "$1" -t show flows | awk -F'\t' -v i="$idx" \
		'$12 + 0 >= best { best = $12 + 0; v = $i } END { if (v == "") exit 1; print v }'
}

# marked_and_cut: the far end got ECN-capable data, the near end cut.
marked_and_cut() {
	local cuts ect
	cuts=$(flow_field h1 cuts) && ect=$(flow_field h2 ect) &&
		((cuts >= 2 && ect >= 500))
}

rt0=$(guest_counter g1 TcpRetransSegs)
tlp0=$(guest_counter g1 TcpExtTCPLossProbes)
cs0=$(guest_counter g2 TcpInCsumErrors)
ecn0=$(guest_counter g1 TcpExtTCPDeliveredCE)
say "guest 1 (tcp_ecn=0) sends 8 s across the 10mbit link"
in_guest g1 iperf3 -c "$(guest_ip 2)" -t 8 -f k >"$TMPD/iperf.out" 2>&1 &
ipid=$!
EXTRA_PIDS+=("$ipid")
wait_for 8 marked_and_cut || fail "no marks and cuts: $(vctl h1 show flows; vctl h2 show flows)"
near=$(vctl h1 show flows)
far=$(vctl h2 show flows)
h2ecn=$(flow_field h2 ecn)
ect=$(flow_field h2 ect)
h1ecn=$(flow_field h1 ecn)
ece=$(flow_field h1 ece)
cuts=$(flow_field h1 cuts)
lowered=$(flow_field h1 lowered)
target=$(flow_field h1 target)
printf '%s\n%s\n' "$near" "$far"
wait "$ipid" || fail "iperf3 failed: $(cat "$TMPD/iperf.out")"
grep -E 'sender|receiver' "$TMPD/iperf.out"

rt=$(($(guest_counter g1 TcpRetransSegs) - rt0))
tlp=$(($(guest_counter g1 TcpExtTCPLossProbes) - tlp0))
cs=$(($(guest_counter g2 TcpInCsumErrors) - cs0))
gce=$(($(guest_counter g1 TcpExtTCPDeliveredCE) - ecn0))
marks=$(link_field h1 h2 ce_marks)
aqmd=$(link_field h1 h2 aqm_drops)
tail=$(link_field h1 h2 tail_drops)
say "link: ce_marks $marks aqm_drops $aqmd tail_drops $tail;" \
	"guest 1: TcpRetransSegs +$rt (loss probes +$tlp), TCPDeliveredCE +$gce;" \
	"guest 2: TcpInCsumErrors +$cs"

# ECT on the wire, seen at the far end.
[[ $h2ecn == native ]] || fail "guest 2's side did not see ECN negotiated: $far"
((ect >= 500)) || fail "guest 2 received only $ect ECN-capable data segments"
((marks > 0)) || fail "the link marked nothing"
# A dropped data segment would be retransmitted, which is checked below;
# what else the AQM may drop while it signals is what is not ECN-capable
# at all (an ARP request, a SYN, the iperf3 control connection's ACKs):
# one or two such in a run.
((aqmd <= 2)) || fail "the AQM dropped $aqmd packets: the data was not ECN-capable"

# The window halved on marks, on guest 1's side; the guest saw none of it.
[[ $h1ecn == virtual ]] || fail "the flow is not virtual-ECN: $near"
say "guest 1's flow: ece $ece, cuts $cuts, windows lowered $lowered, target $target"
((ece > 0 && cuts > 0 && lowered > 0)) || fail "no ECE, cut or window lowered: $near"
((cuts <= ece)) || fail "more cuts ($cuts) than ECE ($ece)"
[[ $target =~ ^[0-9]+$ ]] || fail "no target window: $near"
((gce == 0)) || fail "guest 1 without ECN saw $gce CE echoes"
((cs == 0)) || fail "guest 2 counted $cs TCP checksum errors"
stat_at_least h1 vcc_ect_set 1000 || fail "vcc_ect_set: $(stat_value h1 vcc_ect_set)"

# No retransmissions: nothing was lost on the way.
((tail == 0)) || fail "$tail frames dropped at the link's tail"
((tlp <= 2)) || fail "guest 1 sent $tlp tail loss probes"
# A loss probe may carry new data, and then counts as no retransmission.
((rt <= tlp)) || fail "guest 1 retransmitted $((rt - tlp)) segments (besides $tlp loss probes) with nothing dropped"

say "without the policy: guest 1's next flow leaves untouched"
vctl h1 del-vcc guest ecn || fail "del-vcc failed"
w0=$(stat_value h1 vcc_rewritten)
out=$(in_guest g1 iperf3 -c "$(guest_ip 2)" -t 2 -f k) || fail "iperf3 failed: $out"
w1=$(stat_value h1 vcc_rewritten)
((w1 == w0)) || fail "$((w1 - w0)) frames rewritten without a policy"
pass
