#!/bin/bash
#
# Through NAT: TRIES (default 20) fresh tries of it-nat's two-NAT case.
#
# Two hosts, each behind its own NAT box (MASQUERADE, only established
# traffic let in, as a home router), and a proxy they both dial with
# `transport auto`; `routing auto`, `adapt shortcuts yes threshold 2mbit
# hold 1` (it-nat's arrangement).  Each try starts both hosts' daemons
# afresh (and their guests, whose TAPs go with them), so that a try knows
# nothing of the last one (no shortcut, no back-off, no bound of dials a
# minute), while the NAT boxes keep their state, as home routers do.  The
# hosts listen on port PORT + 1 + PORT_STEP * (try - 1): PORT_STEP 1 (the
# default) gives each try a port of its own, PORT_STEP=0 punches every try
# on the same four ports within seconds of the last try's connection on
# them (a host's restart closing it), where a socket left holding the
# pair (TIME_WAIT, or a half-open SYN-RECV on a listener) would make the
# next connect() fail with "Cannot assign requested address" (nat-tryN.log
# shows it when a try fails so).  Each try then
# waits until each host's record publishes its NAT's UDP binding, then
# runs a bulk transfer (iperf3, BULK_RATE, default 20M) from guest 1 to
# guest 2 and measures:
#   - whether a direct link host1-host2 came up within DIRECT_WAIT s
#     (default 10) of the decision to make it;
#   - the time from the decision (host1's log line "above -> dialing")
#     to host1's direct link up (its log line "link host2: ... -> UP"),
#     both stamped to the ms by the daemon;
#   - over WINDOW s (default 3) once the shortcut is up (the decision
#     "dialing -> up"), the proxy's share of the bulk traffic: the bytes
#     the proxy took in from the two hosts / the bytes the two guests
#     received.  A try that did not go direct measures the same window
#     after DIRECT_WAIT (about 1: all of it through the proxy).
#
# Writes OUT/nat.csv (try, direct, decision_to_up_ms, proxy_bytes,
# guest_bytes, proxy_share, candidate, failure: show adapt's words) and
# OUT/nat-summary.txt: the
# fraction that went direct, the median and longest time to the direct
# link, the largest proxy share after it; for a try that did not go
# direct, OUT/nat-tryN.log has what both daemons logged of the pair.
# OUT defaults to
# tests/experiments/results.  Needs root, iptables, iperf3.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_root
require_binaries
command -v iptables >/dev/null || skip "iptables is missing"
command -v iperf3 >/dev/null || skip "iperf3 is missing"

TRIES=${TRIES:-20}
WINDOW=${WINDOW:-3}
DIRECT_WAIT=${DIRECT_WAIT:-10}
PORT_STEP=${PORT_STEP:-1}
BULK_RATE=${BULK_RATE:-20M}
OUT=${OUT:-$LIB_DIR/experiments/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

ROUTING="routing auto
keepalive 2
adapt shortcuts yes threshold 2mbit hold 1 idle 30"

node_add proxy 1
nat_host_add host1 11 192.168.51
nat_host_add host2 12 192.168.52
vnetd_start proxy "$(nat_node_conf proxy)
set-link host1 transport auto
set-link host2 transport auto"

shortcut_up() { link_up host1 host2 && [[ $(link_field host1 host2 origin) == auto ]]; }
# since_start D PATTERN: the first line of D's log since its last start
# that matches PATTERN.
since_start() {
	awk -v from="${LOG_AT[$1]}" 'NR > from' "$TMPD/$1.log" | grep -m 1 -e "$2"
}
logged() { since_start "$1" "$2" >/dev/null; }

declare -A LOG_AT
echo "try,direct,decision_to_up_ms,proxy_bytes,guest_bytes,proxy_share,candidate,failure" >"$OUT/nat.csv"
rm -f "$OUT"/nat-try*.log
for ((k = 1; k <= TRIES; k++)); do
	lport=$((PORT + 1 + PORT_STEP * (k - 1)))
	for i in 1 2; do
		[[ -n ${D_PID[host$i]:-} ]] && { vnetd_stop "host$i" || true; }
	done
	for i in 1 2; do
		LOG_AT[host$i]=$( [[ -f $TMPD/host$i.log ]] && wc -l <"$TMPD/host$i.log" || echo 0)
		vnetd_start "host$i" "$(nat_node_conf "host$i" "$lport")
interface guest tap vtap0
link proxy $(addr proxy):$PORT tls transport auto"
		guest_add "g$i-$k" "host$i" vtap0 "$i"
	done
	for i in 1 2; do
		wait_link_up "host$i" proxy
	done
	for d in host1 host2; do
		wait_for 10 nodes_reachable "$d" 3 || fail "try $k: $d: show nodes: $(vctl "$d" show nodes)"
	done
	for i in 1 2; do
		wait_for 10 has_cand "host$((3 - i))" "host$i" "10.66.0.$((10 + i)):$lport/seen-udp" ||
			fail "try $k: host$i's record has not its NAT's UDP binding: $(cands "host$((3 - i))" "host$i")"
	done
	wait_for 10 gping "g1-$k" "$(guest_ip 2)" || fail "try $k: guest 1 cannot ping guest 2"
	iperf_server "g2-$k"
	in_guest "g1-$k" iperf3 -c "$(guest_ip 2)" -t 60 -b "$BULK_RATE" >/dev/null 2>&1 &
	iperf=$!
	EXTRA_PIDS+=("$iperf")
	wait_for 15 logged host1 'pair host1-host2 .*above -> dialing' ||
		fail "try $k: host1 decided nothing: $(vctl host1 show adapt)"
	decision=$(since_start host1 'pair host1-host2 .*above -> dialing')
	direct=0 ms=- cand=-
	if wait_for "$DIRECT_WAIT" shortcut_up; then
		direct=1
		up=$(since_start host1 'link host2: .*-> UP')
		ms=$(($(log_ms "$up") - $(log_ms "$decision")))
		wait_for 5 logged host1 'pair host1-host2 .*dialing -> up' ||
			fail "try $k: host1 did not decide the shortcut is up: $(vctl host1 show adapt)"
		cand=$(since_start host1 'pair host1-host2 .*dialing -> up' | sed -n 's/.* by candidate \(.*\)$/\1/p')
	fi
	why=-
	if ((!direct)); then
		# show adapt's words, and what both logs said of the pair.
		why=$(vctl host1 -t show adapt | awk -F'\t' '$1 == "host2" { print $12 }' | tr , ';')
		for d in host1 host2; do
			awk -v from="${LOG_AT[$d]}" 'NR > from' "$TMPD/$d.log" |
				grep -e 'adapt: \(pair host1-host2\|pair host2-host1\|dialling\|punching\|hole\|no hole\)' \
				-e 'link host2:' -e 'link host1:' | sed "s/^/$d: /"
			echo "$d: sockets on port $lport:"
			ip netns exec "$(ns "$d")" ss -tan "sport = :$lport" | sed "s/^/$d:   /"
		done >"$OUT/nat-try$k.log"
	fi
	p0=$(nat_proxy_in) r0=$(guest_rx "g1-$k" "g2-$k")
	sleep "$WINDOW"	# the window measured, not a wait for a state
	p1=$(nat_proxy_in) r1=$(guest_rx "g1-$k" "g2-$k")
	kill "$iperf" 2>/dev/null || true
	wait "$iperf" 2>/dev/null || true
	# Whatever else runs in this try's guests (the server; a client that
	# outlived the shell that started it): gone with the try.
	for g in "g1-$k" "g2-$k"; do
		ip netns pids "${G_NS[$g]}" 2>/dev/null | xargs -r kill 2>/dev/null || true
	done
	share=$(awk -v p=$((p1 - p0)) -v r=$((r1 - r0)) 'BEGIN { printf "%.4f", (r > 0 ? p / r : 1) }')
	echo "$k,$direct,$ms,$((p1 - p0)),$((r1 - r0)),$share,$cand,$why" >>"$OUT/nat.csv"
	say "try $k: direct $direct, decision to link up $ms ms, proxy share $share ($cand)"
done

# The median without gawk's asort (mawk has none): the times sorted first.
med=$(tail -n +2 "$OUT/nat.csv" | awk -F, '$2 == 1 { print $3 }' | sort -n |
	awk '{ t[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print t[(NR + 1) / 2]; else print (t[NR / 2] + t[NR / 2 + 1]) / 2 }')
tail -n +2 "$OUT/nat.csv" | awk -F, -v tries="$TRIES" -v med="$med" '
	$2 == 1 { d++; if ($3 > max) max = $3; if ($6 > smax) smax = $6 }
	END {
		printf "tries %d: %d went direct (%.2f)\n", tries, d, d / tries
		printf "decision to direct link up: median %d ms, longest %d ms\n", med, max
		printf "proxy share of the bulk traffic after it: at most %.2f%%\n", smax * 100
	}' | tee "$OUT/nat-summary.txt"
pass
