#!/bin/bash
#
# The adaptive overlay against the star (`adapt shortcuts yes`).
#
# Six hosts behind one proxy over TLS, `routing auto`; the proxy's link to
# each host has `rate $RATE` (200mbit) both ways.  Guests 1-3 and 4-6 are
# two groups: within a group every guest sends bulk TCP to every other
# (a BSP-like all-to-all, 12 flows), and g1 -> g4, g5 -> g2 send 1 Mbit/s
# across the groups.  The first STAR seconds (default 20) run with
# `vnetctl adapt off` on every node (the star); then `adapt on`
# (threshold 10mbit, hold 3, idle 10) until DURATION (default 60).
# Shortcuts get SHORTCUT_RATE (default RATE; none: unshaped).
#
# Every second: the proxy's throughput (bytes its links sent), the
# guests' aggregate goodput (bytes their TAPs received), the shortcuts up
# (adapt_shortcuts summed over the hosts) and the RTT of a ping every
# 0.2 s from g1 to g2 (within a group).  Writes OUT/adapt.csv, OUT/adapt.png
# and OUT/adapt-summary.txt (star: seconds 5..STAR-1; adapted: the last
# third).  OUT defaults to tests/experiments/results.  Needs root, iperf3,
# gnuplot (gnuplot-nox).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"

DURATION=${DURATION:-60}
STAR=${STAR:-20}
RATE=${RATE:-200mbit}
# The shortcuts' rate (set-link by peer name on every host): a host's
# access link would limit them too; "none" leaves them unshaped.
SHORTCUT_RATE=${SHORTCUT_RATE:-$RATE}
OUT=${OUT:-$LIB_DIR/experiments/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
N=6
ADAPT="adapt shortcuts yes threshold 10mbit hold 3 idle 10"

node_add proxy 1
for ((i = 1; i <= N; i++)); do node_add "host$i" $((i + 1)); done
{
	printf 'node proxy\nlisten %s:%d tls\nrouting auto\n%s\n' \
		"$(addr proxy)" "$PORT" "$ADAPT"
	for ((i = 1; i <= N; i++)); do printf 'set-link host%d rate %s\n' "$i" "$RATE"; done
	tls_conf proxy
} >"$TMPD/proxy.conf"
vnetd_start_file proxy "$TMPD/proxy.conf"
for ((i = 1; i <= N; i++)); do
	{
		printf 'node host%d\nlisten %s:%d tls\ninterface guest tap vtap0\n' \
			"$i" "$(addr "host$i")" "$PORT"
		printf 'link proxy %s:%d tls rate %s\nrouting auto\n%s\n' \
			"$(addr proxy)" "$PORT" "$RATE" "$ADAPT"
		for ((j = 1; j <= N; j++)); do
			((i == j)) || printf 'set-link host%d rate %s\n' "$j" "$SHORTCUT_RATE"
		done
		tls_conf "host$i"
	} >"$TMPD/host$i.conf"
	vnetd_start_file "host$i" "$TMPD/host$i.conf"
	guest_add "g$i" "host$i" vtap0 "$i"
done
for ((i = 1; i <= N; i++)); do wait_link_up "host$i" proxy; done
DAEMONS=(proxy)
for ((i = 1; i <= N; i++)); do DAEMONS+=("host$i"); done
for d in "${DAEMONS[@]}"; do
	wait_for 20 nodes_reachable "$d" $((N + 1)) || fail "$d has not converged"
	vctl "$d" adapt off >/dev/null || fail "adapt off refused on $d"
done

group() { echo $(((($1 - 1) / 3))); }
# Servers: guest j listens on port 5200 + i for guest i.
for ((j = 1; j <= N; j++)); do
	for ((i = 1; i <= N; i++)); do
		((i == j)) && continue
		in_guest "g$j" iperf3 -s -p $((5200 + i)) >/dev/null 2>&1 &
		EXTRA_PIDS+=("$!")
	done
done
sleep 1	# the servers' sockets (checked below through the clients' success)

in_guest g1 ping -D -n -i 0.2 -w $((DURATION + 2)) "$(guest_ip 2)" >"$TMPD/ping" 2>&1 &
EXTRA_PIDS+=("$!")
for ((i = 1; i <= N; i++)); do
	for ((j = 1; j <= N; j++)); do
		((i == j)) && continue
		if (($(group "$i") == $(group "$j"))); then
			in_guest "g$i" iperf3 -c "$(guest_ip "$j")" -p $((5200 + i)) \
				-t "$DURATION" -J >"$TMPD/iperf-$i-$j" 2>&1 &
		elif [[ $i$j == 14 || $i$j == 52 ]]; then
			in_guest "g$i" iperf3 -c "$(guest_ip "$j")" -p $((5200 + i)) \
				-t "$DURATION" -b 1M -J >"$TMPD/iperf-$i-$j" 2>&1 &
		else
			continue
		fi
		EXTRA_PIDS+=("$!")
	done
done

# Bytes the proxy's links sent (links_sum prints large sums in floating point).
proxy_out() {
	vctl proxy -t show links all | awk -F'\t' '{ s += $8 } END { printf "%d\n", s }'
}
# Shortcuts up: two-way links between hosts in the proxy's view.
shortcuts() {
	vctl proxy -t show topology | awk -F'\t' '
		$1 != "proxy" && $2 != "proxy" && $4 == "two-way" { n++ }
		END { print int(n / 2) }'
}

# Samples as fast as two vnetctl calls go, each with its own time; the
# goodput comes from the iperf3 clients' 1 s intervals afterwards.
echo "t,proxy_mbit,shortcuts" >"$TMPD/samples.csv"
p0=$(proxy_out)
start=${EPOCHREALTIME/./}
t0=$start
switched=0
while (((now = ${EPOCHREALTIME/./}) < start + DURATION * 1000000)); do
	if ((!switched && now >= start + STAR * 1000000)); then
		for d in "${DAEMONS[@]}"; do vctl "$d" adapt on >/dev/null; done
		switched=1
	fi
	sleep 0.5
	p1=$(proxy_out)
	t1=${EPOCHREALTIME/./}
	awk -v t="$(((t1 - start) / 1000))" -v b="$((p1 - p0))" -v d="$((t1 - t0))" \
		-v n="$(shortcuts)" 'BEGIN { printf "%d,%.1f,%d\n", t / 1000 + 1, b * 8 / d, n }' \
		>>"$TMPD/samples.csv"
	p0=$p1
	t0=$t1
done
wait_for 15 bash -c "! pgrep -f 'iperf3 -c 10.77' >/dev/null" || true
# Goodput per second: the sum over the flows of their receivers' bytes.
python3 - "$TMPD" "$DURATION" >"$TMPD/goodput.csv" <<'PY'
import glob, json, sys
tot = [0.0] * (int(sys.argv[2]) + 2)
for f in glob.glob(sys.argv[1] + "/iperf-*"):
    try:
        d = json.load(open(f))
    except ValueError:
        continue
    for k, iv in enumerate(d.get("intervals", [])):
        if k + 1 < len(tot):
            tot[k + 1] += iv["sum"]["bits_per_second"] / 1e6
for t in range(1, len(tot) - 1):
    print("%d,%.1f" % (t, tot[t]))
PY

# The ping's RTT per second since the start, joined to the samples.
start_s=$((start / 1000000))
awk -v s="$start_s" -F'[][ =]+' '/time=/ {
	t = int($2) - s + 1
	for (i = 1; i <= NF; i++) if ($i == "time") v = $(i + 1)
	sum[t] += v; n[t]++ }
	END { for (t in n) printf "%d,%.3f\n", t, sum[t] / n[t] }' "$TMPD/ping" |
	sort -t, -k1n >"$TMPD/ping.csv"
echo "t,proxy_mbit,goodput_mbit,shortcuts,ping_ms" >"$OUT/adapt.csv"
for ((t = 1; t <= DURATION; t++)); do
	a=$(awk -F, -v t="$t" '$1 == t { s += $2; n++; c = $3 } END { if (n) printf "%.1f,%d", s / n, c }' "$TMPD/samples.csv")
	g=$(awk -F, -v t="$t" '$1 == t { print $2 }' "$TMPD/goodput.csv")
	p=$(awk -F, -v t="$t" '$1 == t { print $2 }' "$TMPD/ping.csv")
	[[ -n $a ]] || continue
	IFS=, read -r pm sc <<<"$a"
	echo "$t,$pm,${g:-NaN},$sc,${p:-NaN}"
done >>"$OUT/adapt.csv"

awk -F, -v star="$STAR" -v dur="$DURATION" '
	NR == 1 { next }
	$1 >= 5 && $1 < star { sp += $2; sg += $3; n1++; if ($5 != "NaN") { spi += $5; m1++ } }
	$1 > dur - dur / 3 { ap += $2; ag += $3; n2++; sc = $4; if ($5 != "NaN") { api += $5; m2++ } }
	END {
		printf "star:    goodput %.0f Mbit/s, proxy %.0f Mbit/s, in-group ping %.3f ms\n", sg / n1, sp / n1, spi / m1
		printf "adapted: goodput %.0f Mbit/s, proxy %.0f Mbit/s, in-group ping %.3f ms, %d shortcuts\n", ag / n2, ap / n2, api / m2, sc
		printf "goodput x%.2f (goal >= 2), proxy share %.1f%% (goal < 10%%), ping %.3f -> %.3f ms\n",
			(ag / n2) / (sg / n1), 100 * (ap / n2) / (ag / n2), spi / m1, api / m2
	}' "$OUT/adapt.csv" | tee "$OUT/adapt-summary.txt"

if command -v gnuplot >/dev/null; then
	gnuplot <<EOF
set terminal png size 900,600
set output "$OUT/adapt.png"
set datafile separator ","
set multiplot layout 2,1 title "adapt shortcuts: six hosts, two groups, star until ${STAR} s"
set ylabel "Mbit/s"
set y2label "shortcuts"
set y2tics
set key top left
plot "$OUT/adapt.csv" using 1:3 with lines title "aggregate goodput", \
     "" using 1:2 with lines title "proxy throughput", \
     "" using 1:4 axes x1y2 with steps title "shortcuts"
set ylabel "ms"
unset y2label
unset y2tics
set xlabel "seconds"
plot "$OUT/adapt.csv" using 1:5 with lines title "ping g1 -> g2 (in a group)"
unset multiplot
EOF
else
	say "gnuplot is missing: no $OUT/adapt.png"
fi
pass
