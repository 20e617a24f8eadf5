#!/bin/bash
#
# Bandwidth sharing by receive windows (vCC paper, section 4).
#
# Guest "srv" serves iperf3 on five ports, guest "cli" connects to them.
# Ports 5201-5203 are unpreferred (weight 1), 5204-5205 preferred (weight 3):
#
#   vcc share srv window $WINDOW
#   vcc class preferred match tcp-port 5204,5205 interface srv weight 3
#   vcc class unpreferred match tcp-port 5201,5202,5203 interface srv weight 1
#
# TOPO=link (the default): cli is behind a second vnetd, across a link with
# `rate $RATE aqm codel` (200mbit): a bottleneck with one queue, so that the
# flows' rates follow their windows; the default WINDOW (100000 bytes) keeps
# that queue under CoDel's 5 ms target.  TOPO=local: both guests behind one
# vnetd, as two VMs on one hypervisor's switch (the paper's setting); there
# the bottleneck is the machine's CPU, and WINDOW defaults to 300000.
#
# The unpreferred flows run for the whole DURATION (default 60 s); the
# preferred ones start at DURATION/3 and stop at 2*DURATION/3.  The server
# receives: the windows it advertises are what vnetd holds to the share.
#
# Writes OUT/sharing.csv (second, flow, Mbit/s), OUT/sharing-window.csv
# (second, active flows, sum of their windows, from `vnetctl show vcc`),
# OUT/sharing-summary.txt and OUT/sharing.png (sharing-local.* for
# TOPO=local).  OUT defaults to
# tests/experiments/results.  Needs root, iperf3, jq, gnuplot (gnuplot-nox).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v jq >/dev/null || skip "jq is missing"

DURATION=${DURATION:-60}
TOPO=${TOPO:-link}
RATE=${RATE:-200mbit}
if [[ $TOPO == local ]]; then
	WINDOW=${WINDOW:-300000}
	NAME=sharing-local
else
	WINDOW=${WINDOW:-100000}
	NAME=sharing
fi
CC=${CC:-reno}
OUT=${OUT:-$LIB_DIR/experiments/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
T1=$((DURATION / 3))
T2=$((2 * DURATION / 3))

POLICY="vcc share srv window $WINDOW
vcc class preferred match tcp-port 5204,5205 interface srv weight 3
vcc class unpreferred match tcp-port 5201,5202,5203 interface srv weight 1"
node_add host 1
if [[ $TOPO == local ]]; then
	vnetd_start host "node host
learn yes
interface srv tap srv
interface cli tap cli
$POLICY"
	guest_add srv host srv 1
	guest_add cli host cli 2
else
	node_add far 2
	vnetd_start host "node host
learn yes
listen $(addr host):$PORT allow $UNDERLAY
interface srv tap srv
$POLICY"
	vnetd_start far "node far
learn yes
interface cli tap cli
link host $(addr host):$PORT rate $RATE aqm codel"
	wait_link_up far host
	guest_add srv host srv 1
	guest_add cli far cli 2
fi
for g in srv cli; do
	in_guest "$g" sysctl -qw net.ipv4.tcp_congestion_control="$CC" >/dev/null
done
wait_for 15 gping cli "$(guest_ip 1)" || fail "cli cannot reach srv"

listening() { in_guest "$1" ss -Hltn "sport = :$2" | grep -q .; }

for p in 5201 5202 5203 5204 5205; do
	in_guest srv iperf3 -s -1 -J -p "$p" >/dev/null 2>&1 &
	EXTRA_PIDS+=($!)
done
for p in 5201 5202 5203 5204 5205; do
	wait_for 5 listening srv "$p" || fail "no iperf3 server on port $p"
done
WHAT="share $WINDOW bytes, $CC, $([[ $TOPO == local ]] && echo "one vnetd" || echo "link rate $RATE")"
say "$WHAT, $DURATION s; preferred flows from $T1 s to $T2 s"

T0=$EPOCHREALTIME
client() {	# PORT SECONDS
	echo "$EPOCHREALTIME" >"$TMPD/start-$1"
	in_guest cli iperf3 -c "$(guest_ip 1)" -p "$1" -t "$2" -i 1 -J \
		--get-server-output \
		>"$TMPD/flow-$1.json" 2>&1
}
pids=()
for p in 5201 5202 5203; do
	client "$p" "$DURATION" &
	pids+=($!)
done

# Once a second, the interface's active flows and the sum of their windows;
# flow snapshots with the preferred flows on and off.
echo "second,active,window" >"$OUT/$NAME-window.csv"
for ((s = 1; s <= DURATION; s++)); do
	# A fixed schedule, not a condition: sleep until second s.
	now=$EPOCHREALTIME
	d=$(awk -v a="$T0" -v b="$now" -v s="$s" 'BEGIN { d = a + s - b; print (d > 0 ? d : 0) }')
	sleep "$d"
	vctl host -t show vcc | awk -F'\t' -v s="$s" \
		'$1 == "srv" { print s "," $5 "," $7 }' >>"$OUT/$NAME-window.csv"
	if ((s == T1)); then
		for p in 5204 5205; do
			client "$p" $((T2 - T1)) &
			pids+=($!)
		done
	fi
	((s == T1 - 2)) && vctl host show flows >"$OUT/$NAME-flows-before.txt"
	if ((s == (T1 + T2) / 2)); then
		vctl host show flows >"$OUT/$NAME-flows-during.txt"
		[[ $TOPO == local ]] ||
			vctl far show flows >"$OUT/$NAME-flows-during-sender.txt"
	fi
	((s == T2 + 5)) && vctl host show flows >"$OUT/$NAME-flows-after.txt"
done
for pid in "${pids[@]}"; do
	wait "$pid" || fail "an iperf3 client failed"
done
vctl host show config | grep '^vcc' >"$OUT/$NAME-config.txt"

echo "second,flow,mbps" >"$OUT/$NAME.csv"
for p in 5201 5202 5203 5204 5205; do
	# What the receiver got, each second (the sender's figures count what
	# went into its socket buffer).
	# Times from the client's start (iperf3's own are whole seconds); a
	# last, partial interval is left out.
	jq -r --arg t0 "$T0" --arg p "$p" --arg ts "$(cat "$TMPD/start-$p")" '
		.server_output_json.intervals[] | select(.sum.seconds > 0.5) |
		[(((($ts | tonumber) + .sum.end) - ($t0 | tonumber)) | round),
		($p | tonumber), (.sum.bits_per_second / 1e6 * 100 | round / 100)] | @csv' \
		"$TMPD/flow-$p.json" >>"$OUT/$NAME.csv" ||
		fail "no results for port $p: $(tail -n 3 "$TMPD/flow-$p.json")"
done

# Steady parts of each phase: a few seconds after every change.
awk -F, -v t1="$T1" -v t2="$T2" -v d="$DURATION" -v w="$WINDOW" '
FILENAME ~ /window/ {
	if (FNR > 1 && $2 > 0) {
		n++; if (!wmin || $3 < wmin) wmin = $3; if ($3 > wmax) wmax = $3
		sum += $3
	}
	next
}
FNR > 1 {
	ph = ($1 > 3 && $1 <= t1) ? "A" : ($1 > t1 + 3 && $1 <= t2) ? "B" : ($1 > t2 + 3 && $1 <= d) ? "C" : ""
	if (ph == "") next
	tot[ph, $2] += $3; cnt[ph, $2]++
}
END {
	for (k = 0; k < 3; k++) {
		ph = substr("ABC", k + 1, 1)
		u = 0
		for (p = 5201; p <= 5203; p++) { a[p] = tot[ph, p] / cnt[ph, p]; u += a[p] }
		u /= 3
		dev = 0
		for (p = 5201; p <= 5203; p++) { x = (a[p] - u) / u; if (x < 0) x = -x; if (x > dev) dev = x }
		printf "phase %s (%s): unpreferred %.1f %.1f %.1f Mbit/s, largest deviation from their mean %.1f%%", \
		    ph, ph == "B" ? "preferred active" : "unpreferred only", a[5201], a[5202], a[5203], dev * 100
		if (ph == "B")
			printf "; preferred %.1f %.1f Mbit/s = %.2f and %.2f x an unpreferred flow", \
			    tot[ph, 5204] / cnt[ph, 5204], tot[ph, 5205] / cnt[ph, 5205], \
			    tot[ph, 5204] / cnt[ph, 5204] / u, tot[ph, 5205] / cnt[ph, 5205] / u
		printf "\n"
	}
	printf "sum of the active flows'"'"' windows: set %d, sampled %d to %d (mean %.0f) over %d seconds\n", w, wmin, wmax, sum / n, n
}' "$OUT/$NAME-window.csv" "$OUT/$NAME.csv" | tee "$OUT/$NAME-summary.txt"
echo "$WHAT, $DURATION s" >>"$OUT/$NAME-summary.txt"

if command -v gnuplot >/dev/null; then
	for p in 5201 5202 5203 5204 5205; do
		awk -F, -v p="$p" 'NR > 1 && $2 == p { print $1, $3 }' \
			"$OUT/$NAME.csv" >"$TMPD/p$p.dat"
	done
	gnuplot <<EOF
set terminal pngcairo size 900,650 font ",11"
set output "$OUT/$NAME.png"
set multiplot layout 2,1 title "Bandwidth sharing by receive windows ($WHAT; preferred weight 3)"
set size 1,0.68
set origin 0,0.3
set ylabel "throughput (Mbit/s)"
set grid
set key outside right
set xrange [0:$DURATION]
set yrange [0:*]
plot "$TMPD/p5201.dat" w lp pt 7 ps 0.5 lw 2 title "5201 unpreferred", \
     "$TMPD/p5202.dat" w lp pt 7 ps 0.5 lw 2 title "5202 unpreferred", \
     "$TMPD/p5203.dat" w lp pt 7 ps 0.5 lw 2 title "5203 unpreferred", \
     "$TMPD/p5204.dat" w lp pt 5 ps 0.5 lw 2 title "5204 preferred", \
     "$TMPD/p5205.dat" w lp pt 5 ps 0.5 lw 2 title "5205 preferred"
set size 1,0.3
set origin 0,0
set ylabel "window sum (bytes)"
set xlabel "time (s)"
set yrange [0:$((WINDOW * 3 / 2))]
set datafile separator ","
plot "$OUT/$NAME-window.csv" every ::1 using 1:3 w lp pt 7 ps 0.5 lw 2 lc rgb "#444444" title "active flows' windows", \
     $WINDOW w l dt 2 lc rgb "#cc4444" title "vcc share"
unset multiplot
EOF
	say "plot: $OUT/$NAME.png"
else
	say "gnuplot is missing: no plot (apt-get install gnuplot-nox)"
fi
pass
