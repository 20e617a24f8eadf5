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
# the non-ECN sender's interface (set at run time with vnetctl, taken back
# with del-vcc for the next pair).  REPEAT (default 3) pairs of runs: with
# every flow at a window of two or three segments, a flow's goodput depends
# much on the few retransmission timeouts it happens to suffer, so one run
# says little; the figures are the means over the repetitions.
#
# Writes OUT/fairness.csv (repetition, run, flow, ecn, goodput in Mbit/s,
# retransmits, seconds counted),
# OUT/fairness-summary.txt and OUT/fairness.png (gnuplot).  OUT defaults to
# tests/experiments/results.  Needs root, iperf3, gnuplot (gnuplot-nox).
# By hand; takes about REPEAT x (2 x DURATION + 20) seconds.
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
REPEAT=${REPEAT:-3}
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
	echo "listen $(addr rcv):$PORT allow $UNDERLAY"
	for i in $(seq 1 $N); do echo "interface r$i tap r$i"; done
} >"$TMPD/rcv.conf"
vnetd_start_file rcv "$TMPD/rcv.conf"
vnetd_start_file snd "$TMPD/snd.conf"
wait_link_up snd rcv

# No TCP metrics kept between connections: each run starts afresh, not
# from the ssthresh and RTT the previous run left for the same receiver.
guest_sysctl() {
	in_guest "$1" sysctl -qw net.ipv4.tcp_congestion_control="$CC" \
		net.ipv4.tcp_ecn="$2" net.ipv4.tcp_no_metrics_save=1 >/dev/null
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

# run NAME: all ten flows at once; appends to the CSV.  A flow's SYN can be
# dropped (SYNs are not ECN-capable) and start it a second or three late:
# goodput is counted over the seconds in which all ten flows ran (from the
# receivers' per-second reports), from 3 s after the last one started.
run() {
	local name=$1 i pids=() r0 r1
	declare -A R0
	for i in $(seq 1 $N); do
		in_guest "gr$i" iperf3 -s -1 -p 5201 -J >"$TMPD/$name-srv-$i.json" 2>&1 &
		EXTRA_PIDS+=($!)
	done
	for i in $(seq 1 $N); do
		wait_for 5 listening "gr$i" 5201 || fail "no iperf3 server in gr$i"
		R0[$i]=$(retrans "gs$i")
	done
	for i in $(seq 1 $N); do
		in_guest "gs$i" iperf3 -c "$(guest_ip $((100 + i)))" -p 5201 \
			-t "$DURATION" -J >"$TMPD/$name-$i.json" 2>&1 &
		pids+=($!)
	done
	if ! wait_for 4 all_started "$name"; then
		# A SYN lost (SYNs are not ECN-capable: the AQM drops them) starts
		# a flow seconds late, and Linux retries it without ECN.
		say "$name: not every flow started at once: $(vctl snd -t show flows | cut -f1,5,6 | sort | uniq -c | tr '\n' ' '); again"
		kill "${pids[@]}" 2>/dev/null || true
		for i in "${!pids[@]}"; do wait "${pids[$i]}" 2>/dev/null || true; done
		in_guest_all_kill_servers
		return 1
	fi
	# Half way (a fixed time, not a condition): what vnetd sees.
	sleep $((DURATION / 2))
	vctl snd show flows >"$OUT/fairness-$name-$REP-flows.txt" 2>&1 || true
	vctl snd show link rcv >"$OUT/fairness-$name-$REP-link.txt" 2>&1 || true
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || fail "iperf3 of sender $((i + 1)) failed: $(tail -n 3 "$TMPD/$name-$((i + 1)).json")"
	done
	wait_for 10 all_servers_done "$name" || fail "iperf3 servers did not finish"
	vctl snd show stats >"$OUT/fairness-$name-$REP-stats.txt" 2>&1 || true
	vctl snd show link rcv >>"$OUT/fairness-$name-$REP-link.txt" 2>&1 || true
	: >"$TMPD/$name.intervals"
	for i in $(seq 1 $N); do
		jq -r --arg f "$i" '.start.timestamp.timesecs as $t | .intervals[] |
			"\($f) \($t + .sum.start) \($t + .sum.end) \(.sum.bytes)"' \
			"$TMPD/$name-srv-$i.json" >>"$TMPD/$name.intervals" ||
			fail "no report from receiver $i"
	done
	awk -v n=$N '
	{ f[NR] = $1; s[NR] = $2; e[NR] = $3; b[NR] = $4
	  if (!($1 in first) || $2 < first[$1]) first[$1] = $2
	  if (!($1 in last) || $3 > last[$1]) last[$1] = $3 }
	END {
		lo = 0; hi = 1e18
		for (i in first) { if (first[i] > lo) lo = first[i]; if (last[i] < hi) hi = last[i] }
		lo += 3
		for (k = 1; k <= NR; k++)
			if (s[k] >= lo - 0.01 && e[k] <= hi + 0.01) { bytes[f[k]] += b[k]; secs[f[k]] += e[k] - s[k] }
		for (i = 1; i <= n; i++) printf "%d %.3f %.1f\n", i, bytes[i] * 8 / secs[i] / 1e6, secs[i]
	}' "$TMPD/$name.intervals" >"$TMPD/$name.goodput"
	for i in $(seq 1 $N); do
		r1=$(retrans "gs$i")
		r0=${R0[$i]}
		awk -v rep="$REP" -v run="$name" -v i="$i" -v ecn="$([[ $i == "$N" ]] && echo 0 || echo 1)" \
			-v rt=$((r1 - r0)) '$1 == i { print rep "," run "," i "," ecn "," $2 "," rt "," $3 }' \
			"$TMPD/$name.goodput" >>"$OUT/fairness.csv"
	done
}

# all_started RUN: every sender has its control and data connections up,
# with ECN as its guest asked (or virtual for the last one in run 2).
all_started() {
	vctl snd -t show flows | awk -F'\t' -v n=$N -v run="$1" '
	$5 == "established" && $19 < 3 {
		c[$1]++
		want = $1 != "s" n ? "native" : run == "virtual" ? "virtual" : "off"
		if ($6 != want) bad = 1
	}
	END { for (i = 1; i <= n; i++) if (c["s" i] < 2) exit 1; exit bad }'
}

in_guest_all_kill_servers() {
	local i
	for i in $(seq 1 $N); do
		ip netns pids "${G_NS[gr$i]}" | xargs -r kill 2>/dev/null || true
	done
	for i in $(seq 1 $N); do
		wait_for 5 not_listening "gr$i" 5201 || fail "iperf3 in gr$i does not stop"
	done
}

not_listening() { ! listening "$1" "$2"; }

all_servers_done() {
	local i
	for i in $(seq 1 $N); do
		jq -e '.end' "$TMPD/$1-srv-$i.json" >/dev/null 2>&1 || return 1
	done
}

# try RUN: a run, again when its flows did not all start together.
try() {
	local n
	for n in 1 2 3 4 5; do
		run "$1" && return 0
		wait_for 10 no_flows || say "flows of the failed run linger"
	done
	fail "$1: five runs in a row with a flow that did not start"
}

no_flows() { [[ -z $(vctl snd -t show flows | awk -F'\t' '$5 == "established"') ]]; }

echo "rep,run,flow,ecn,goodput_mbps,retransmits,seconds" >"$OUT/fairness.csv"
for ((REP = 1; REP <= REPEAT; REP++)); do
	say "$REP/$REPEAT, run 1: without vCC"
	try none
	say "$REP/$REPEAT, run 2: vcc s$N ecn virtual"
	vctl snd vcc "s$N" ecn virtual || fail "vcc s$N ecn virtual failed"
	try virtual
	vctl snd show config | grep '^vcc' >"$OUT/fairness-virtual-config.txt"
	vctl snd del-vcc "s$N" ecn || fail "del-vcc s$N ecn failed"
done

# The non-ECN flow's goodput over the ECN flows' average (the paper's
# figure) and over their median, per repetition and over all of them.
awk -F, -v n=$N '
function median(a, m,   i, j, t) {
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
NR > 1 {
	if ($4 == 1) { s[$1, $2] += $5; c[$1, $2]++; v[$1, $2, c[$1, $2]] = $5 } else ne[$1, $2] = $5
	tot[$1, $2] += $5; rt[$1, $2] = $6
	if ($1 > reps) reps = $1
}
END {
	for (r = 0; r < 2; r++) {
		run = r == 0 ? "none" : "virtual"
		S = 0; NE = 0; T = 0; M = 0
		for (k = 1; k <= reps; k++) {
			avg = s[k, run] / c[k, run]
			split("", a)
			for (i = 1; i <= c[k, run]; i++) a[i] = v[k, run, i]
			med = median(a, c[k, run])
			printf "%s, repetition %d: total %.2f Mbit/s, ECN flows average %.3f (median %.3f), non-ECN flow %.3f, share %.3f (of the median %.3f), its retransmits %d\n", \
			    run == "none" ? "without vCC" : "with virtual-ECN", k, tot[k, run], avg, med, ne[k, run], ne[k, run] / avg, ne[k, run] / med, rt[k, run]
			S += avg; NE += ne[k, run]; T += tot[k, run]; M += med
		}
		printf "%s, mean of %d: total %.2f Mbit/s, ECN flows average %.3f (median %.3f), non-ECN flow %.3f, share %.3f (of the median %.3f)\n", \
		    run == "none" ? "without vCC" : "with virtual-ECN", reps, T / reps, S / reps, M / reps, NE / reps, NE / S, NE / M
	}
}' "$OUT/fairness.csv" | tee "$OUT/fairness-summary.txt"
printf 'cc %s, link rate %s, aqm %s, %s s per run, %d repetitions\n' "$CC" "$RATE" \
	"$AQM" "$DURATION" "$REPEAT" >>"$OUT/fairness-summary.txt"

if command -v gnuplot >/dev/null; then
	awk -F, 'NR > 1 { v[$3, $2] += $5; c[$3, $2]++ }
	    END { print "flow none virtual"; for (i = 1; i <= 10; i++) print i, v[i, "none"] / c[i, "none"], v[i, "virtual"] / c[i, "virtual"] }' \
		"$OUT/fairness.csv" >"$TMPD/fair.dat"
	gnuplot <<EOF
set terminal pngcairo size 900,500 font ",11"
set output "$OUT/fairness.png"
set title "9 ECN flows and 1 non-ECN flow (flow 10), $RATE bottleneck, $AQM, $CC; mean of $REPEAT x $DURATION s"
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
