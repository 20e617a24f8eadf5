#!/bin/bash
#
# Costly records within the limits (routing auto, a proxy and two hosts,
# TLS): an insider with a valid certificate of its own links to the proxy
# and re-sends its own records, each round newer (a topology record of
# NODE_LINKS_MAX links and NODE_MAC_PAGES full MAC pages, signed), as fast
# as its link takes them.  Guest 1's ping to guest 2 crosses the proxy
# before and during the flood: its median round trip during must stay
# within a small multiple of the one before, measured in the same run.
# The records over the origin's rate are delayed, not lost: at the end
# every daemon holds the rogue's last round, and the proxy counts what it
# delayed, what it checked and how many computations the flood cost.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
rogue_rstar
cert_issue rogue
node_add rogue 9
FLOOD_S=8

rogue_seq() { vctl "$1" -t show nodes | awk -F'\t' '$1 == "rogue" { print $2 }'; }
rogue_seq_is() { [[ $(rogue_seq "$1") == "$2" ]]; }

# median_rtt FILE: the median of ping's time= values (ms).
median_rtt() {
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; print v[int((NR + 1) / 2)] }'
}

ip netns exec "${G_NS[g1]}" ping -n -i 0.02 -c 100 "$IP2" >"$TMPD/before.out" 2>&1 ||
	fail "guest 1's ping before the flood: $(tail -3 "$TMPD/before.out")"
before=$(median_rtt "$TMPD/before.out")
say "guest 1 to guest 2 before the flood: median $before ms"
computed0=$(stat_value proxy routes_computed)
verified0=$(stat_value proxy records_verified)

timeout 60 ip netns exec "$(ns rogue)" python3 "$(dirname "${BASH_SOURCE[0]}")/rogue.py" \
	"$(addr proxy)" "$PORT" "$CA_DIR/ca.crt" "$CA_DIR/rogue.crt" "$CA_DIR/rogue.key" \
	costly "$FLOOD_S" >"$TMPD/rogue.out" 2>&1 &
ROGUE_PID=$!
EXTRA_PIDS+=("$ROGUE_PID")
wait_for 10 nodes_reachable proxy 4 || fail "the rogue never joined: $(vctl proxy show nodes)"
ip netns exec "${G_NS[g1]}" ping -n -i 0.02 -c 200 "$IP2" >"$TMPD/during.out" 2>&1 || true
during=$(median_rtt "$TMPD/during.out") || fail "no reply during the flood: $(tail -3 "$TMPD/during.out")"
read -r sent got < <(awk '/packets transmitted/ { print $1, $4 }' "$TMPD/during.out")
rc=0
wait "$ROGUE_PID" || rc=$?
cat "$TMPD/rogue.out"
((rc == 0)) || fail "the rogue failed (exit $rc)"
last=$(sed -n 's/^rogue: last sequence \([0-9]*\)$/\1/p' "$TMPD/rogue.out")
[[ -n $last ]] || fail "the rogue did not say its last sequence"
ratio=$(awk -v a="$during" -v b="$before" 'BEGIN { printf "%.2f", a / b }')
say "during the flood: median $during ms ($ratio times the median before), $got of $sent replies"
((got * 100 >= sent * 95)) || fail "ping lost $((sent - got)) of $sent during the flood"
awk -v r="$ratio" -v d="$during" 'BEGIN { exit !(r <= 5 || d <= 2) }' ||
	fail "the flood made guest 1's ping $ratio times slower (median $during ms, $before before)"
computed=$(($(stat_value proxy routes_computed) - computed0))
verified=$(($(stat_value proxy records_verified) - verified0))
for c in records_in records_delayed records_late; do
	say "proxy $c: $(stat_value proxy "$c")"
done
say "proxy: $computed path computations and $verified signatures checked for $(($(stat_value proxy records_in))) records"
(($(stat_value proxy records_delayed) > 0)) || fail "the proxy delayed none of the rogue's records"
# The rogue's origin is held to NODEDB_ORIGIN_RATE records a second after
# its burst; the run is under 20 s.
((verified < 20 * 20)) || fail "the proxy checked $verified signatures: the flood was not held to its origin's rate"
# Delayed, not lost: the last round is what every daemon holds.
for d in "${DAEMONS[@]}"; do
	wait_for 5 rogue_seq_is "$d" "$last" ||
		fail "$d holds the rogue's sequence $(rogue_seq "$d"), not its last $last"
done
say "every daemon holds the rogue's last sequence $last"
pass
