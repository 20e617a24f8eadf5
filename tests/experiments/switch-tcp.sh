#!/bin/bash
#
# Does the switch onto a shortcut and back cost TCP anything?
#
# A proxy and four hosts in a star over TLS, `routing auto`, as it-adapt.
# Each run: g1 sends g3 bulk TCP at BULK_RATE (default 200M) for BULK
# seconds (default 20), a slow TCP flow at 500 kbit/s for BULK + 12 s, and a ping every 10
# ms.  Two arrangements take turns, RUNS times each (default 3):
#
#   star    `adapt off` on every node: the traffic stays on the relay;
#   switch  `adapt shortcuts yes threshold 2mbit hold 2 idle 4`: the pair
#           gets a shortcut a few seconds in and loses it when only the
#           slow flow is left, so both flows cross the switch onto the
#           shortcut and the slow one the switch back.
#
# Every 0.1 s the guests' TCP counters (TcpExtTCPLossProbes,
# TcpRetransSegs, TcpExtTCPFastRetrans in g1; TcpExtTCPOFOQueue in g3)
# are sampled.  A timer retransmission (a tail-loss probe) fires when no
# ACK comes for about two round trips, at least two ticks of the kernel's
# clock; at the round trips of namespaces (well under a millisecond) a
# scheduling delay of the machine is enough.  If the switch caused them,
# they would gather at its moments; so the summary counts the probes that
# fall within WINDOW s (default 1) after a switch (host1's log: the shortcut
# up, the drain) against what the rate of probes elsewhere in the same run
# predicts for that much time, and the fast retransmissions and
# out-of-order segments in those windows.  It also counts the flows that
# host1 and host3 held for order and the frames by the relay that came
# after newer ones by the shortcut, which the holds kept in order
# (reseq_holds, reseq_old_after_new in `show stats`; 0 for a build without
# them, run as VNETD=... VNETCTL=...).
#
# Writes OUT/switch-tcp.csv (one row per run), OUT/switch-tcp-summary.txt
# and each run's samples and switch times (µs).
# OUT defaults to tests/experiments/results.  Needs root, iperf3, nstat.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v nstat >/dev/null || skip "nstat (iproute2) is missing"

RUNS=${RUNS:-3}
BULK=${BULK:-20}
WINDOW=${WINDOW:-1}
OUT=${OUT:-$LIB_DIR/experiments/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

RSTAR_ROUTING="routing auto
keepalive 1
adapt shortcuts yes threshold 2mbit hold 2 idle 4"
rstar_start 4
DAEMONS=(proxy host1 host2 host3 host4)
for d in "${DAEMONS[@]}"; do
	wait_for 10 nodes_reachable "$d" 5 || fail "$d: show nodes: $(vctl "$d" show nodes)"
done
# RELAY_RATE (e.g. 100mbit): the relay's links of host1 and host3 at that
# rate, so that its queues fill; BULK_RATE (default 200M, 0: as fast as it
# goes): the bulk flow's rate.
if [[ -n ${RELAY_RATE:-} ]]; then
	for h in host1 host3; do
		vctl "$h" set-link proxy rate "$RELAY_RATE" >/dev/null || fail "set-link on $h"
		vctl proxy set-link "$h" rate "$RELAY_RATE" >/dev/null || fail "set-link on proxy"
	done
fi
# RELAY_STALL (e.g. 3/20): the proxy stopped (SIGSTOP) that many ms in
# every so many, as a relay short of CPU stalls, so that frames wait on
# the relay path when the routes move.
if [[ -n ${RELAY_STALL:-} ]]; then
	python3 - "${D_PID[proxy]}" "${RELAY_STALL%/*}" "${RELAY_STALL#*/}" <<'PY' &
import os, signal, sys, time
pid, stop, every = int(sys.argv[1]), float(sys.argv[2]) / 1000, float(sys.argv[3]) / 1000
def done(*_):
    os.kill(pid, signal.SIGCONT)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    os.kill(pid, signal.SIGSTOP)
    time.sleep(stop)
    os.kill(pid, signal.SIGCONT)
    time.sleep(every - stop)
PY
	EXTRA_PIDS+=("$!")
fi
BULK_RATE=${BULK_RATE:-200M}
G3=$(guest_ip 3)
wait_for 10 gping g1 "$G3" || fail "guest 1 cannot ping guest 3"
iperf_server g3
iperf_server g3 5202

no_link() { ! link_field host1 host3 state >/dev/null; }
adapt_all() { local d; for d in "${DAEMONS[@]}"; do vctl "$d" adapt "$1" >/dev/null || fail "adapt $1 on $d"; done; }

# sample FILE: until killed, every 0.1 s: time (µs) and the four counters.
sample() {
	local g1=${G_NS[g1]} g3=${G_NS[g3]}
	while :; do
		printf '%s %s %s\n' "${EPOCHREALTIME/./}" \
			"$(ip netns exec "$g1" nstat -asz TcpExtTCPLossProbes TcpRetransSegs TcpExtTCPFastRetrans |
				awk '{ v[$1] = $2 } END { printf "%d %d %d", v["TcpExtTCPLossProbes"], v["TcpRetransSegs"], v["TcpExtTCPFastRetrans"] }')" \
			"$(ip netns exec "$g3" nstat -asz TcpExtTCPOFOQueue | awk '$1 == "TcpExtTCPOFOQueue" { print $2 }')"
		sleep 0.1
	done >"$1"
}

# Log times (HH:MM:SS.mmm, today) of host1's switches after line FROM, in µs.
switch_times() {
	tail -n +"$1" "$TMPD/host1.log" |
		{ grep -E 'adapt: pair host1-host3 .*(dialing -> up|-> draining)' || true; } |
		while read -r hms _; do
			echo $(($(date -d "$hms" +%s%N) / 1000))
		done
}

# held NAME: that counter of host1 and host3 (reseq_holds: flows held for
# order; reseq_old_after_new: frames by the relay that came after newer
# ones by the shortcut) so far; 0 for a build without it.
held() {
	local d n=0 v
	for d in host1 host3; do
		v=$(stat_value "$d" "$1") || v=0
		n=$((n + v))
	done
	echo "$n"
}
echo "arrangement,run,seconds,probes,retrans,fast,ofo,switches,probes_near,expected_near,fast_near,ofo_near,pings_lost,flows_held,old_after_new" >"$OUT/switch-tcp.csv"
for ((run = 1; run <= RUNS; run++)); do
	for arr in star switch; do
		wait_for 30 no_link || fail "a shortcut is still up before a run"
		if [[ $arr == star ]]; then adapt_all off; else adapt_all on; fi
		from=$(($(wc -l <"$TMPD/host1.log") + 1))
		held0=$(held reseq_holds)
		late0=$(held reseq_old_after_new)
		sample "$TMPD/samples" &
		SAMPLER=$!
		EXTRA_PIDS+=("$SAMPLER")
		sleep 0.3	# a first sample before the traffic
		in_guest g1 ping -n -q -i 0.01 -c $(((BULK + 12) * 100)) "$G3" >"$TMPD/ping" 2>&1 &
		ping_pid=$!
		in_guest g1 iperf3 -c "$G3" -p 5202 -l 1400 -b 500K -t $((BULK + 12)) >/dev/null 2>&1 &
		slow=$!
		in_guest g1 iperf3 -c "$G3" -t "$BULK" -b "$BULK_RATE" >/dev/null 2>&1 ||
			fail "the bulk transfer failed"
		wait "$slow" || fail "the slow flow failed"
		wait "$ping_pid" || true
		kill "$SAMPLER"
		wait "$SAMPLER" 2>/dev/null || true
		lost=$(awk '/packets transmitted/ { print $1 - $4 }' "$TMPD/ping")
		switch_times "$from" >"$TMPD/switches"
		# Probes near a switch against the rate elsewhere.
		row=$(awk -v w="$((WINDOW * 1000000))" -v sws="$(echo $(cat "$TMPD/switches"))" '
			BEGIN { ns = split(sws, sw, " ") }
			{ t[++n] = $1; p[n] = $2; r[n] = $3; f[n] = $4; o[n] = $5 }
			END {
				near = 0; nearT = 0; farP = 0; farT = 0
				for (i = 2; i <= n; i++) {
					dt = t[i] - t[i - 1]; dp = p[i] - p[i - 1]; nb = 0
					for (k = 1; k <= ns; k++)
						if (t[i] >= sw[k] && t[i - 1] <= sw[k] + w) nb = 1
					if (nb) { near += dp; nearT += dt; nf += f[i] - f[i - 1]; no += o[i] - o[i - 1] }
					else { farP += dp; farT += dt }
				}
				printf "%.1f,%d,%d,%d,%d,%d,%d,%.2f,%d,%d", (t[n] - t[1]) / 1e6,
				    p[n] - p[1], r[n] - r[1], f[n] - f[1], o[n] - o[1], ns,
				    near, (farT > 0 ? farP * nearT / farT : 0), nf, no
			}' "$TMPD/samples")
		echo "$arr,$run,$row,$lost,$(($(held reseq_holds) - held0)),$(($(held reseq_old_after_new) - late0))" >>"$OUT/switch-tcp.csv"
		cp "$TMPD/samples" "$OUT/switch-tcp-samples-$arr-$run"
		cp "$TMPD/switches" "$OUT/switch-tcp-switches-$arr-$run"
		say "$arr run $run: $row, pings lost $lost"
		for d in host1 host3; do
			say "  $d so far: $(vctl "$d" -t show stats | awk -F'\t' '$1 ~ /^reseq_/ { printf "%s %s ", $1, $2 }')"
		done
		if [[ $arr == switch ]]; then
			# The shortcut went (drained) once only the slow flow was left.
			wait_for 20 no_link || fail "the shortcut did not go: $(vctl host1 show adapt)"
		fi
	done
done

{
	echo "switch-tcp: $RUNS runs of each arrangement, bulk $BULK s (${BULK_RATE/#0/unlimited}) + a slow flow + a 10 ms ping, relay links at ${RELAY_RATE:-no rate}${RELAY_STALL:+, the relay stopped ${RELAY_STALL%/*} ms in every ${RELAY_STALL#*/}}"
	awk -F, 'NR > 1 {
		s[$1] += $3; p[$1] += $4; r[$1] += $5; f[$1] += $6; o[$1] += $7
		w[$1] += $8; near[$1] += $9; exp_[$1] += $10; nf[$1] += $11
		no[$1] += $12; l[$1] += $13; h[$1] += $14; oa[$1] += $15
	} END {
		for (a in s)
			printf "%-6s probes %.2f/s, retransmitted %d (fast %d), out of order %d, pings lost %d; switches %d, within the window after one: probes %d (%.1f expected from the rate elsewhere), fast %d, out of order %d; flows held for order %d, frames by the relay after newer ones %d\n",
			    a, p[a] / s[a], r[a], f[a], o[a], l[a], w[a], near[a], exp_[a], nf[a], no[a], h[a], oa[a]
	}' "$OUT/switch-tcp.csv" | sort
} | tee "$OUT/switch-tcp-summary.txt"
pass
