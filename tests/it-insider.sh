#!/bin/bash
#
# An insider peer against the duplicate check: a rogue links to the proxy
# of a plain star, reads an (origin, sequence) pair off a broadcast of
# host 1's, and sends the next sequence numbers under host 1's origin with
# frames of its own before host 1 does.  Guest 1's pings to guest 2, which
# the proxy forwards under those pairs, must all still arrive: a pair is a
# copy only with the same frame, and the proxy counts the conflicts.
# The rogue also sends TCP super-frames with segment size 1: the proxy drops
# and counts each (offload_bad), and cuts or passes on none of them.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing (the rogue peer)"

IP2=$(guest_ip 2)
star_start with-routes
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2 before the rogue comes"

# Broadcasts from the guests reach the rogue too, as they would any peer.
node_add rogue 9
vctl proxy add-route any ff:ff:ff:ff:ff:ff link rogue || fail "add-route to the rogue"
conflicts0=$(stat_value proxy seen_conflicts)
bad0=$(stat_value proxy offload_bad)
segments0=$(stat_value proxy gso_segments)

timeout 60 ip netns exec "$(ns rogue)" python3 "$(dirname "${BASH_SOURCE[0]}")/rogue.py" \
	--poison "$(addr proxy)" "$PORT" "$(guest_mac 1)" 15 >"$TMPD/rogue.out" 2>&1 &
ROGUE_PID=$!
EXTRA_PIDS+=("$ROGUE_PID")
wait_link_up proxy rogue

# Guest 1 broadcasts (ARP) again, the rogue reads host 1's pair off it.
# shellcheck disable=SC2317 # called through wait_for
poisoned() { grep -q '^rogue: poisoned' "$TMPD/rogue.out"; }
# shellcheck disable=SC2317 # called through wait_for
arp_again() {
	in_guest g1 ip neigh flush all
	gping g1 "$IP2" || true
	poisoned
}
wait_for 15 arp_again || fail "the rogue never saw host 1's frames: $(cat "$TMPD/rogue.out")"
cat "$TMPD/rogue.out"

say "guest 1 pings guest 2 under the pairs the rogue sent first"
in_guest g1 ping -n -c 30 -i 0.2 -W 1 "$IP2" >"$TMPD/ping.out" 2>&1 || true
read -r sent got < <(awk '/packets transmitted/ { print $1, $4 }' "$TMPD/ping.out")
[[ -n $sent && -n $got ]] || fail "no ping statistics: $(tail -n 3 "$TMPD/ping.out")"
conflicts=$(($(stat_value proxy seen_conflicts) - conflicts0))
say "ping: $got of $sent replies; the proxy saw $conflicts pairs reused by other frames"
((got * 100 >= sent * 95)) || fail "guest 1's pings were blackholed: $got of $sent replies"
# The forged pairs did meet host 1's frames (else the test proved nothing).
((conflicts >= 20)) || fail "only $conflicts conflicting pairs: the rogue's pairs missed host 1's frames"
bad=$(($(stat_value proxy offload_bad) - bad0))
segments=$(($(stat_value proxy gso_segments) - segments0))
say "super-frames with segment size 1: $bad dropped, $segments segments cut"
((bad >= 10)) || fail "the proxy dropped $bad of the 10 bad offload frames"
((segments < 1000)) || fail "the proxy cut $segments segments"
grep -q 'link rogue: offload frame dropped: segment size below the floor' "${D_LOG[proxy]}" ||
	fail "the proxy's log does not say why it dropped the offload frames"
link_up proxy host1 || fail "host 1's link went down"
wait "$ROGUE_PID" || fail "the rogue failed: $(cat "$TMPD/rogue.out")"
pass
