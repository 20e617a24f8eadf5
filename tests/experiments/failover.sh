#!/bin/bash
#
# Silent failures of the active path, TRIES (default 20) in a row, with
# the defaults (`routing auto`, liveness on, nothing tuned).
#
# Two proxies, two hosts each linked to both over TLS, no direct link
# (it-failover's arrangement).  Guest 1 pings guest 2 every 10 ms for the
# whole run.  Each try: find the proxy that carries the ping, drop all its
# traffic (iptables DROP in and out of its namespace: no FIN, no RST) for
# DOWN seconds (default 2), restore it, wait until both hosts' links to it
# are back in the routes (after the hold time, which grows to 32 s, since
# each proxy fails again within a minute of its return: the dampening of
# a flapping link), then SETTLE seconds (default 1).  The gap of a
# try is the longest time between two replies from the drop to the end of
# its settling, so a return that costs something shows too.
#
# Before the tries, once the links are idle (no frame for 10 s: the slow
# pace), WINDOW seconds (default 10) of an idle link: the bytes
# of IP packets host 1 and proxy 1 exchange (probes, keepalives), counted
# on host 1's underlay by an iptables chain: the probes' cost per link.
#
# The gaps are lib.sh's ping_gap: the time without an echo, the pinger's
# own stalls left out.  gap_after_return_s runs from the proxy's return to
# the end of the try (the hold time included); gap_routes_back_s from 0.3 s
# before the first host took the link back into its routes (its log line).
#
# Writes OUT/failover.csv (try, proxy, gap_s, gap_after_return_s,
# gap_routes_back_s) and
# OUT/failover-summary.txt: the longest gap, the median, how many tries
# stayed under 1 s, and the idle link's bytes/s.  OUT defaults to
# tests/experiments/results.  Needs root, iptables.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_root
require_binaries
command -v iptables >/dev/null || skip "iptables is missing"

TRIES=${TRIES:-20}
DOWN=${DOWN:-2}
SETTLE=${SETTLE:-1}
WINDOW=${WINDOW:-10}
OUT=${OUT:-$LIB_DIR/experiments/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

node_add p1 1
node_add p2 2
node_add host1 3
node_add host2 4
failover_start tls
IP2=$(guest_ip 2)

now() { date +%s.%N; }
plus() { awk -v t="$1" -v d="$2" 'BEGIN { printf "%.3f", t + d }'; }
# routes_back P: when the first host took its link to P back into its
# routes (its log line's stamp, as seconds since the epoch).
routes_back() {
	local i l day first=
	day=$(date -u -d "$(date -u +%F)" +%s)
	for i in 1 2; do
		l=$(grep "link $1: alive for .* back in the routes" "${D_LOG[host$i]}" | tail -n 1)
		l=$(awk -v d="$day" -v ms="$(log_ms "$l")" 'BEGIN { printf "%.3f", d + ms / 1000 }')
		if [[ -z $first ]] || awk -v a="$l" -v b="$first" 'BEGIN { exit !(a < b) }'; then first=$l; fi
	done
	echo "$first"
}
# wait_until T: until the clock passes T (a point in time, not a state).
wait_until() { wait_for 60 now_past "$1" || true; }

# The idle link's cost: what host 1 and proxy 1 exchange, nothing else
# on the link (no guest traffic yet).
ipt() { ip netns exec "$(ns host1)" iptables "$@"; }
ipt -N FAILOVER_BYTES
ipt -A FAILOVER_BYTES -s "$(addr p1)"
ipt -A FAILOVER_BYTES -d "$(addr p1)"
ipt -I INPUT -j FAILOVER_BYTES
ipt -I OUTPUT -j FAILOVER_BYTES
idle_bytes() { ipt -nvx -L FAILOVER_BYTES | awk '$1 ~ /^[0-9]+$/ { b += $2 } END { print b + 0 }'; }
# Idle: the dialler at the slow pace (no frame for LIVENESS_IDLE_MS; the
# listener's end answers at the pace it is asked), then a window of that.
slow() { [[ $(link_field host1 p1 probe_ms) == 2000 ]]; }
wait_for 30 slow || fail "the idle link host1-p1 is not at the slow pace: $(link_field host1 p1 probe_ms) ms"
ipt -Z FAILOVER_BYTES
b0=$(idle_bytes)
t0=$(now)
wait_until "$(plus "$t0" "$WINDOW")"
b1=$(idle_bytes)
idle_bps=$(awk -v b=$((b1 - b0)) -v t0="$t0" -v t1="$(now)" 'BEGIN { printf "%.0f", b / (t1 - t0) }')
say "idle link host1-p1: $idle_bps B/s (probes every $(link_field host1 p1 probe_ms) ms, keepalives, both ways)"

in_guest g1 ping -D -n -i 0.01 -W 1 "$IP2" >"$TMPD/ping" 2>&1 &
ping=$!
EXTRA_PIDS+=("$ping")
wait_for 5 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping') >= 50 ))" ||
	fail "the ping does not run: $(tail -n 5 "$TMPD/ping")"

echo "try,proxy,gap_s,gap_after_return_s,gap_routes_back_s" >"$OUT/failover.csv"
declare -a drop back rt endt who
for ((k = 1; k <= TRIES; k++)); do
	p=$(failover_active)
	who[k]=$p
	drop[k]=$(now)
	ip netns exec "$(ns "$p")" iptables -A INPUT -j DROP
	ip netns exec "$(ns "$p")" iptables -A OUTPUT -j DROP
	for i in 1 2; do
		wait_for 5 live_not "host$i" "$p" up ||
			fail "try $k: host$i's link $p still alive"
	done
	wait_until "$(plus "${drop[k]}" "$DOWN")"
	ip netns exec "$(ns "$p")" iptables -D INPUT -j DROP
	ip netns exec "$(ns "$p")" iptables -D OUTPUT -j DROP
	back[k]=$(now)
	# Its links come back after the hold time, which doubles (to 32 s)
	# for a link that fails again within a minute of its return: the
	# dampening that each try here sets off.
	for i in 1 2; do
		wait_for 45 live_is "host$i" "$p" up ||
			fail "try $k: host$i's link $p not back"
	done
	rt[k]=$(routes_back "$p")
	wait_until "$(plus "$(now)" "$SETTLE")"
	endt[k]=$(now)
	say "try $k: $p dropped, back in the routes $(awk -v a="${back[k]}" -v b="${endt[k]}" -v s="$SETTLE" 'BEGIN { printf "%.1f", b - a - s }') s after its return"
done
kill "$ping"
wait "$ping" 2>/dev/null || true

for ((k = 1; k <= TRIES; k++)); do
	echo "$k,${who[k]},$(ping_gap "$TMPD/ping" "${drop[k]}" "${endt[k]}" | cut -d" " -f1),$(ping_gap "$TMPD/ping" "${back[k]}" "${endt[k]}" | cut -d" " -f1),$(ping_gap "$TMPD/ping" "$(plus "${rt[k]}" -0.3)" "${endt[k]}" | cut -d" " -f1)" >>"$OUT/failover.csv"
done
# The replies, and the last sequence number: what was sent, about.
sent="$(grep -o 'icmp_seq=[0-9]*' "$TMPD/ping" | tail -n 1 | cut -d= -f2) $(grep -c 'bytes from' "$TMPD/ping")"
med=$(tail -n +2 "$OUT/failover.csv" | cut -d, -f3 | sort -n | awk '{ g[NR] = $1 }
	END { printf "%.3f", (NR % 2) ? g[(NR + 1) / 2] : (g[NR / 2] + g[NR / 2 + 1]) / 2 }')
tail -n +2 "$OUT/failover.csv" | awk -F, -v tries="$TRIES" -v bps="$idle_bps" -v sent="$sent" -v med="$med" '
	{ if ($3 > max) max = $3; if ($3 < 1) under++; if ($4 > rmax) rmax = $4; if ($5 > bmax) bmax = $5; n++ }
	END {
		printf "tries %d: longest gap %.3f s, median %.3f s, %d of %d under 1 s\n", n, max, med, under, tries
		printf "after the returns: longest gap %.3f s; from 0.3 s before the routes took the link back: %.3f s\n", rmax, bmax
		split(sent, s, " ")
		printf "pings: %d sent, %d answered\n", s[1], s[2]
		printf "idle link: %d B/s (both ways, IP bytes)\n", bps
	}' | tee "$OUT/failover-summary.txt"
awk -F, 'NR > 1 && $3 >= 1 { bad = 1 } END { exit bad }' "$OUT/failover.csv" ||
	say "some tries went over 1 s: see $OUT/failover.csv"
pass
