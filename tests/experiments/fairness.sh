#!/bin/bash
#
# Fairness with virtual-ECN (vCC paper, section 3.3, figure 11).
#
# Ten sender guests behind vnetd "snd" send to ten receiver guests behind
# vnetd "rcv" over one link, the bottleneck: `rate 10mbit` and an
# ECN-marking AQM (CoDel on one queue, as a switch port; AQM=fq_codel to try
# the other).  Every guest runs the same congestion control (CC, default
# reno).  Senders 1-9 have net.ipv4.tcp_ecn=1, sender 10 has tcp_ecn=0.
# Each sender runs iperf3 for DURATION seconds (default 60) to its receiver,
# all at once, twice: first without vCC, then with `vcc s10 ecn virtual` on
# the non-ECN sender's interface (set at run time with vnetctl).
#
# Writes OUT/fairness.csv (run, flow, ecn, goodput in Mbit/s, retransmits),
# OUT/fairness-summary.txt and OUT/fairness.png (gnuplot).  OUT defaults to
# tests/experiments/results.  Needs root, iperf3, gnuplot (gnuplot-nox).
# By hand; takes about 2 x DURATION + 30 seconds.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v jq >/dev/null || skip "jq is missing"

DURATION=${DURATION:-60}
CC=${CC:-reno}
AQM=${AQM:-codel}
RATE=${RATE:-10mbit}
N=10
OUT=${OUT:-$LIB_DIR/experiments/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

node_add snd 1
node_add rcv 2
{
	echo "node snd"
	echo "learn yes"
	for i in $(seq 1 $N); do echo "interface s$i tap s$i"; done
	echo "link rcv $(addr rcv):$PORT rate $RATE aqm $AQM"
} >"$TMPD/snd.conf"
{
	echo "node rcv"
	echo "learn yes"
	echo "listen $(addr rcv):$PORT"
	for i in $(seq 1 $N); do echo "interface r$i tap r$i"; done
} >"$TMPD/rcv.conf"
vnetd_start_file rcv "$TMPD/rcv.conf"
vnetd_start_file snd "$TMPD/snd.conf"
wait_link_up snd rcv

guest_sysctl() {
	in_guest "$1" sysctl -qw net.ipv4.tcp_congestion_control="$CC" \
		net.ipv4.tcp_ecn="$2" >/dev/null
}

for i in $(seq 1 $N); do
	guest_add "gs$i" snd "s$i" "$i"
	guest_add "gr$i" rcv "r$i" $((100 + i))
	guest_sysctl "gs$i" $((i == N ? 0 : 1))
	guest_sysctl "gr$i" 1
done
for i in $(seq 1 $N); do
	wait_for 15 gping "gs$i" "$(guest_ip $((100 + i)))" ||
		fail "sender $i cannot reach its receiver"
done
say "cc $CC, link rate $RATE, aqm $AQM, $DURATION s per run"

listening() { in_guest "$1" ss -Hltn "sport = :$2" | grep -q .; }

retrans() { in_guest "$1" nstat -az TcpRetransSegs | awk '$1 == "TcpRetransSegs" { print $2 }'; }

# run NAME: all ten flows at once; appends to the CSV.
run() {
	local name=$1 i pids=() r0 r1
	for i in $(seq 1 $N); do
		in_guest "gr$i" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
		EXTRA_PIDS+=($!)
	done
	for i in $(seq 1 $N); do
		wait_for 5 listening "gr$i" 5201 || fail "no iperf3 server in gr$i"
	done
	declare -A R0
	for i in $(seq 1 $N); do R0[$i]=$(retrans "gs$i"); done
	for i in $(seq 1 $N); do
		in_guest "gs$i" iperf3 -c "$(guest_ip $((100 + i)))" -p 5201 \
			-t "$DURATION" -J >"$TMPD/$name-$i.json" 2>&1 &
		pids+=($!)
	done
	# Half way (a fixed time, not a condition): what vnetd sees.
	sleep $((DURATION / 2))
	vctl snd show flows >"$OUT/fairness-$name-flows.txt" 2>&1 || true
	vctl snd show link rcv >"$OUT/fairness-$name-link.txt" 2>&1 || true
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || fail "iperf3 of sender $((i + 1)) failed: $(tail -n 3 "$TMPD/$name-$((i + 1)).json")"
	done
	vctl snd show stats >"$OUT/fairness-$name-stats.txt" 2>&1 || true
	for i in $(seq 1 $N); do
		r1=$(retrans "gs$i")
		r0=${R0[$i]}
		jq -r --arg run "$name" --arg flow "$i" \
			--arg ecn "$([[ $i == "$N" ]] && echo 0 || echo 1)" \
			--arg rt $((r1 - r0)) \
			'[$run, $flow, $ecn, (.end.sum_received.bits_per_second / 1e6 * 1000 | round / 1000), $rt] | @csv' \
			"$TMPD/$name-$i.json" | tr -d '"' >>"$OUT/fairness.csv"
	done
}

echo "run,flow,ecn,goodput_mbps,retransmits" >"$OUT/fairness.csv"
say "run 1: without vCC"
run none
say "run 2: vcc s$N ecn virtual"
vctl snd vcc "s$N" ecn virtual || fail "vcc s$N ecn virtual failed"
run virtual
vctl snd show config | grep '^vcc' >"$OUT/fairness-virtual-config.txt"

summary() {
	awk -F, -v n=$N '
	NR > 1 {
		g[$1, $2] = $4; rt[$1, $2] = $5
		if ($3 == 1) { s[$1] += $4; c[$1]++ } else ne[$1] = $4
		tot[$1] += $4
	}
	END {
		for (r = 0; r < 2; r++) {
			run = r == 0 ? "none" : "virtual"
			avg = s[run] / c[run]
			printf "%s: total %.2f Mbit/s, ECN flows average %.3f, non-ECN flow %.3f, share %.3f, non-ECN retransmits %d\n", \
			    run == "none" ? "without vCC" : "with virtual-ECN", tot[run], avg, ne[run], ne[run] / avg, rt[run, n]
		}
	}' "$OUT/fairness.csv"
}
summary | tee "$OUT/fairness-summary.txt"
printf 'cc %s, link rate %s, aqm %s, %s s per run\n' "$CC" "$RATE" "$AQM" \
	"$DURATION" >>"$OUT/fairness-summary.txt"

if command -v gnuplot >/dev/null; then
	awk -F, 'NR > 1 { v[$2, $1] = $4 } END { print "flow none virtual"; for (i = 1; i <= 10; i++) print i, v[i, "none"], v[i, "virtual"] }' \
		"$OUT/fairness.csv" >"$TMPD/fair.dat"
	gnuplot <<EOF
set terminal pngcairo size 900,500 font ",11"
set output "$OUT/fairness.png"
set title "9 ECN flows and 1 non-ECN flow (flow 10), $RATE bottleneck, $AQM, $CC"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "goodput (Mbit/s)"
set xlabel "flow"
set yrange [0:*]
set key top left
set grid ytics
plot "$TMPD/fair.dat" using 2:xtic(1) title "without vCC" lc rgb "#cc4444", \
     "" using 3 title "with virtual-ECN on flow 10" lc rgb "#4477aa"
EOF
	say "plot: $OUT/fairness.png"
else
	say "gnuplot is missing: no plot (apt-get install gnuplot-nox)"
fi
pass
