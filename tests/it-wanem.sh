#!/bin/bash
#
# The WAN emulator (tests/wanem) does what it is told: a ping's round trip
# is at least the delay both ways and not much more; the loss of a seeded
# run is within statistical bounds of the setting, the report counts
# exactly what did not arrive, and the same seed loses the same datagrams
# again; frames sent out of turn arrive out of order, as many as the
# report says; jitter with --keep-order spreads the round trip without
# reordering, and reorders without it; iperf3 gets no more than the rate
# through, and the bottleneck's queue drops what does not fit.  Every
# report's counters add up (frames_in = frames_out + the drops + held).
#
# h1 (10.66.0.1) -- wa [wanem in r] wb -- h2 (10.66.0.2), static neighbours,
# so that only the test's own frames cross the emulator.
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
command -v python3 >/dev/null || skip "python3 is missing"
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v jq >/dev/null || skip "jq is missing"

A1=10.66.0.1
A2=10.66.0.2

wan_path r h1 h2 --delay 15
H1=$(ns h1)
H2=$(ns h2)
ip -n "$H1" addr add "$A1/24" dev u0
ip -n "$H2" addr add "$A2/24" dev u0
M1=$(ip -n "$H1" -br link show u0 | awk '{ print $3 }')
M2=$(ip -n "$H2" -br link show u0 | awk '{ print $3 }')
ip -n "$H1" neigh replace "$A2" lladdr "$M2" dev u0 nud permanent
ip -n "$H2" neigh replace "$A1" lladdr "$M1" dev u0 nud permanent

# counters_add_up: in each direction of a fresh report, frames_in is the
# sum of what went out, what was dropped and what is held.
counters_add_up() {
	wan_report r | awk '
		$1 == "wanem" && ($2 == "ab" || $2 == "ba") {
			for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			sum = v["frames_out"] + v["lost"] + v["queue_drops"] + v["limit_drops"]
			sum += v["oversize"] + v["tx_errors"] + v["held"]
			if (v["frames_in"] != sum) { print $2 ": frames_in " v["frames_in"] " != " sum; bad = 1 }
			if (v["kernel_drops"] != 0) { print $2 ": kernel_drops " v["kernel_drops"]; bad = 1 }
			n++
		}
		END { exit bad || n != 2 }' || fail "the report's counters do not add up: $(wan_report r)"
}

# rtts COUNT INTERVAL: the ping round trips h1 -> h2, one per line (ms).
rtts() {
	ip netns exec "$H1" ping -n -c "$1" -i "$2" -W 2 "$A2" |
		sed -n 's/.* time=\([0-9.]*\) ms$/\1/p'
}

# ---- delay: every round trip at least 2 x 15 ms, the median within 10 ms
# of it (the median: a machine shared with other work delays the odd ping)
read -r n min med max < <(rtts 20 0.05 | sort -g | awk '
	{ v[NR] = $1 }
	END { printf "%d %.3f %.3f %.3f\n", NR, v[1], v[int((NR + 1) / 2)], v[NR] }')
say "delay 15 ms each way: $n pings, rtt min $min median $med max $max ms"
((n == 20)) || fail "$n of 20 pings came back over a path without loss"
awk -v m="$min" -v a="$med" 'BEGIN { exit !(m >= 30 && a < 40) }' ||
	fail "round trip min $min ms / median $med ms, expected >= 30 and < 40"
counters_add_up

# A receiver in h2 on UDP port 9000: records each datagram's sequence
# number in arrival order until the file STOP exists, then writes them to
# OUT.  send_seq COUNT GAP: COUNT numbered datagrams from h1, GAP s apart.
receiver_start() {
	rm -f "$TMPD/stop" "$TMPD/seqs" "$TMPD/ready"
	ip netns exec "$H2" python3 - "$A2" "$TMPD/stop" "$TMPD/seqs" "$TMPD/ready" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 23)
s.bind((sys.argv[1], 9000))
s.settimeout(0.05)
open(sys.argv[4], "w").close()
got = []
while True:
    try:
        d = s.recv(2048)
        got.append(int.from_bytes(d[:4], "big"))
    except socket.timeout:
        if os.path.exists(sys.argv[2]):
            break
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write("".join("%d\n" % g for g in got))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
PY
	RECV_PID=$!
	EXTRA_PIDS+=("$RECV_PID")
	wait_for 10 test -e "$TMPD/ready" || fail "the UDP receiver did not start"
}

send_seq() {
	ip netns exec "$H1" python3 - "$A2" "$1" "$2" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 23)
gap = float(sys.argv[3])
t = time.monotonic()
for i in range(int(sys.argv[2])):
    s.sendto(i.to_bytes(4, "big") + bytes(996), (sys.argv[1], 9000))
    if gap > 0:
        t += gap
        d = t - time.monotonic()
        if d > 0:
            time.sleep(d)
PY
}

# shellcheck disable=SC2317 # called through wait_for
path_drained() {
	local r
	r=$(wan_report r)
	awk -v n="$1" '$2 == "ab" { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		exit !(v["frames_in"] == n && v["held"] == 0) }' <<<"$r"
}

# shellcheck disable=SC2317 # called through wait_for
udp_queue_empty() {
	ip netns exec "$H2" ss -Hun "sport = :9000" | awk '{ q += $2 } END { exit q != 0 }'
}

# receive_run COUNT GAP: sends, waits until every datagram has left the
# emulator and the receiver has read all that arrived, then stops it.
receive_run() {
	receiver_start
	send_seq "$1" "$2"
	wait_for 10 path_drained "$1" || fail "the emulator did not take and pass on all $1 datagrams: $(wan_report r)"
	wait_for 10 udp_queue_empty || fail "the receiver did not read its datagrams"
	touch "$TMPD/stop"
	wait_for 10 test -s "$TMPD/seqs" || fail "the receiver wrote no result"
	wait "$RECV_PID" 2>/dev/null || true
}

# ---- loss: 10% of 3000 datagrams h1 -> h2 with seed 7, twice
N=3000
wan_restart r --seed 7 --a2b --loss 10
receive_run "$N" 0
cp "$TMPD/seqs" "$TMPD/seqs.1"
got=$(wc -l <"$TMPD/seqs.1")
out=$(wan_stat r ab frames_out)
lost=$(wan_stat r ab lost)
say "loss 10%, seed 7: $got of $N datagrams arrived; the emulator sent $out and lost $lost"
((got == out)) || fail "$got datagrams arrived but the emulator reports $out sent"
((lost == N - got)) || fail "$((N - got)) datagrams did not arrive but the emulator reports $lost lost"
# 10% of 3000: mean 300, standard deviation 16.4; 4 of them either way.
((lost >= 234 && lost <= 366)) || fail "$lost of $N lost, outside 234-366 for 10%"
(($(wan_stat r ba frames_in) == 0)) || fail "frames went h2 -> h1 while only h1 sent: $(wan_report r)"
counters_add_up
wan_restart r --seed 7 --a2b --loss 10
receive_run "$N" 0
cmp -s "$TMPD/seqs.1" "$TMPD/seqs" || fail "the same seed lost other datagrams the second time ($(wc -l <"$TMPD/seqs") arrived)"
wan_restart r --seed 8 --a2b --loss 10
receive_run "$N" 0
! cmp -s "$TMPD/seqs.1" "$TMPD/seqs" || fail "seeds 7 and 8 lost the same datagrams"
say "the same seed lost the same datagrams again; another seed others"

# ---- offload: UDP segmentation trains (UDP_SEGMENT) cross as wire frames
# (wan_path turned the veths' offloads off: no super-frame reaches wanem)
wan_restart r
receiver_start
ip netns exec "$H1" python3 - "$A2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_UDP, 103, 1000)     # UDP_SEGMENT: 1000-byte pieces
for t in range(30):
    train = b"".join((t * 10 + k).to_bytes(4, "big") + bytes(996) for k in range(10))
    s.sendto(train, (sys.argv[1], 9000))
PY
wait_for 10 path_drained 300 || fail "30 UDP_SEGMENT trains of 10 did not cross as 300 frames: $(wan_report r)"
wait_for 10 udp_queue_empty || fail "the receiver did not read its datagrams"
touch "$TMPD/stop"
wait_for 10 test -s "$TMPD/seqs" || fail "the receiver wrote no result"
got=$(sort -un "$TMPD/seqs" | wc -l)
((got == 300)) || fail "$got of 300 segmented datagrams arrived"
(($(wan_stat r ab oversize) == 0)) || fail "super-frames reached the emulator: $(wan_report r)"
say "30 UDP_SEGMENT trains of 10 crossed as 300 frames"

# inversions: of the datagrams in $TMPD/seqs, how many arrived ahead of a
# lower-numbered one (each frame sent early that overtook another).
inversions() {
	awk '{ s[NR] = $1 } END {
		mn = 1e18; n = 0
		for (i = NR; i >= 1; i--) { if (s[i] > mn) n++; if (s[i] < mn) mn = s[i] }
		print n }' "$TMPD/seqs"
}

# ---- reordering: 10% of 1000 datagrams 1 ms apart go 10 ms early
N=1000
wan_restart r --seed 3 --delay 10 --reorder 10
receive_run "$N" 0.001
got=$(wc -l <"$TMPD/seqs")
early=$(inversions)
re=$(wan_stat r ab reordered)
say "reorder 10%: $re datagrams sent early by the emulator, $early arrived ahead of an earlier one ($got arrived)"
((got == N)) || fail "$got of $N datagrams arrived over a path without loss"
((re >= 55 && re <= 145)) || fail "$re of $N reordered, outside 55-145 for 10%"
# One that goes early overtakes the ~10 sent in the 10 ms before it,
# unless the sender stalled that long.
((early <= re && early * 10 >= re * 8)) || fail "$early datagrams arrived early, the emulator sent $re early"
counters_add_up

# ---- jitter: +-8 ms keeps the order with --keep-order, not without
wan_restart r --seed 5 --delay 10 --jitter 8
receive_run "$N" 0.001
inv=$(inversions)
((inv == 0)) || fail "$inv datagrams overtook others with --keep-order"
sd=$(rtts 40 0.02 | awk '{ s += $1; q += $1 * $1 } END { printf "%.2f", sqrt(q / NR - (s / NR) ^ 2) }')
say "jitter 8 ms, order kept: no datagram overtook another; ping rtt standard deviation $sd ms"
awk -v sd="$sd" 'BEGIN { exit !(sd > 1) }' || fail "ping rtt standard deviation $sd ms with jitter 8 ms"
wan_restart r --seed 5 --delay 10 --jitter 8 --no-keep-order
receive_run "$N" 0.001
inv=$(inversions)
say "jitter 8 ms, order not kept: $inv datagrams overtook others"
((inv > 50)) || fail "only $inv of $N datagrams overtook others with 8 ms of jitter and 1 ms between them"
counters_add_up

# ---- rate: 20 Mbit/s, 50 ms of queue
wan_restart r --delay 5 --rate 20mbit --queue-ms 50
ip netns exec "$H2" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
EXTRA_PIDS+=("$!")
wait_for 10 bash -c "ip netns exec '$H2' ss -Hltn 'sport = :5201' | grep -q ." || fail "iperf3 does not listen"
bps=$(ip netns exec "$H1" iperf3 -c "$A2" -t 3 -J | jq -r '.end.sum_received.bits_per_second') ||
	fail "iperf3 TCP failed"
say "rate 20 Mbit/s: iperf3 TCP got $(awk -v b="$bps" 'BEGIN { printf "%.2f", b / 1e6 }') Mbit/s through"
awk -v b="$bps" 'BEGIN { exit !(b <= 20e6 && b >= 10e6) }' ||
	fail "iperf3 TCP moved $bps bit/s through a 20 Mbit/s path"
counters_add_up
# UDP offered at twice the rate: no more than the rate arrives, the
# bottleneck's queue drops the rest.
wan_restart r --delay 5 --rate 20mbit --queue-ms 50
ip netns exec "$H2" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
EXTRA_PIDS+=("$!")
wait_for 10 bash -c "ip netns exec '$H2' ss -Hltn 'sport = :5201' | grep -q ." || fail "iperf3 does not listen"
read -r rx lostpct < <(ip netns exec "$H1" iperf3 -c "$A2" -u -b 40M -l 1400 -t 2 -J |
	jq -r '"\(.end.sum.packets - .end.sum.lost_packets) \(.end.sum.lost_percent)"') ||
	fail "iperf3 UDP failed"
drops=$(wan_stat r ab queue_drops)
say "rate 20 Mbit/s, 40 Mbit/s offered: $rx datagrams of 1400 bytes arrived in 2 s (${lostpct}% lost), $drops queue drops"
# A datagram is a frame of 1442 bytes; 2 s at 20 Mbit/s is 5 MB, and the
# queue (50 ms, 125 kB) may empty after; 2% for the sender's clock.
((rx * 1442 <= (5000000 + 125000) * 102 / 100)) ||
	fail "$rx datagrams ($((rx * 1442)) bytes of frames) arrived through 2 s of a 20 Mbit/s path"
# Not much less either; but a loaded machine makes iperf3's sending bursty,
# and a burst the queue drops leaves the bottleneck idle after it.
((rx * 1442 >= 5000000 / 2)) || fail "only $rx datagrams arrived through 2 s of a 20 Mbit/s path"
((drops > 1000)) || fail "only $drops queue drops with twice the rate offered"
counters_add_up

wan_stop r
grep -q '^wanem end$' "$(wan_report_file r)" || fail "the final report is incomplete"
pass
