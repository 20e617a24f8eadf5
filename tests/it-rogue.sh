#!/bin/bash
#
# A rogue peer against a running TLS star while guest 1 pings guest 2
# through it: garbage (before and after TLS), oversized lengths, a wrong
# protocol version, a frame before the hello, a flood of connections past
# the pending limit, and connections that say nothing or trickle their
# hello past the handshake deadline.  Every rogue connection is closed with
# a log line and a counter; the star's links stay up (their connect
# counters do not move) and the ping goes on.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v openssl >/dev/null || skip "openssl (the command) is missing"
command -v python3 >/dev/null || skip "python3 is missing (the rogue client)"

STAR_TLS=1
IP2=$(guest_ip 2)
star_start with-routes
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2 before the rogue comes"

# The rogue has a valid certificate: an insider, so its garbage reaches the
# link protocol behind TLS.
cert_issue rogue
node_add rogue 9

declare -A before
COUNTERS=(bad_messages refused tls_failed pending_addr_full handshake_timeouts)
for c in "${COUNTERS[@]}"; do
	before[$c]=$(stat_value proxy "$c")
done
c1=$(link_field proxy host1 connects)
c2=$(link_field proxy host2 connects)

say "guest 1 pings guest 2 (every 0.2 s) while the rogue works"
# Not through in_guest: $! must be ping itself (ip netns exec execs it).
ip netns exec "${G_NS[g1]}" ping -n -i 0.2 -W 1 "$IP2" >"$TMPD/ping.out" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")

rc=0
timeout 120 ip netns exec "$(ns rogue)" python3 "$(dirname "${BASH_SOURCE[0]}")/rogue.py" \
	"$(addr proxy)" "$PORT" "$CA_DIR/ca.crt" "$CA_DIR/rogue.crt" "$CA_DIR/rogue.key" \
	>"$TMPD/rogue.out" 2>&1 || rc=$?
kill -INT "$PING_PID"
wait_for 5 proc_gone "$PING_PID" || fail "ping did not stop"
wait "$PING_PID" 2>/dev/null || true
cat "$TMPD/rogue.out"
((rc == 0)) || fail "the rogue client failed (exit $rc): the daemon left connections open"

for c in "${COUNTERS[@]}"; do
	say "proxy $c: ${before[$c]} -> $(stat_value proxy "$c")"
done
# expect_more COUNTER N: the counter grew by N or more.
expect_more() {
	local now
	now=$(stat_value proxy "$1")
	((now - before[$1] >= $2)) || fail "proxy $1 grew by $((now - before[$1])), not $2 or more"
}
# garbage, two oversized lengths, a frame before hello; the wrong version
# is a refusal, counted once, as refused
expect_more bad_messages 4
expect_more refused 1
expect_more tls_failed 1
# the flood comes from one address: it meets the per-address limit
expect_more pending_addr_full 1
# silent TCP, silent after TLS, trickled hello
expect_more handshake_timeouts 3
for pat in 'TLS handshake failed' 'malformed message: reserved bits set' \
	'malformed message: oversized hello' 'malformed message: oversized frame' \
	'refused: unsupported protocol version' 'message before hello' \
	'connections from that address are waiting for their handshake' 'no handshake within 10 s'; do
	grep -q "$pat" "${D_LOG[proxy]}" || fail "the proxy's log has no line '$pat'"
done
no_pending() { (($(stat_value proxy pending) == 0)); }
wait_for 5 no_pending || fail "connections still pending after the rogue left"

# Ping statistics: "N packets transmitted, M received".
read -r sent got < <(awk '/packets transmitted/ { print $1, $4 }' "$TMPD/ping.out")
[[ -n $sent && -n $got ]] || fail "no ping statistics: $(tail -n 3 "$TMPD/ping.out")"
say "ping during the rogue phase: $got of $sent replies"
# A ping interrupted in flight may miss its last reply; nothing else may be lost.
((sent >= 40)) || fail "only $sent pings were sent during the rogue phase"
((got * 100 >= sent * 98)) || fail "ping lost $((sent - got)) of $sent during the rogue phase"
link_up proxy host1 && link_up proxy host2 || fail "a star link is down after the rogue"
(($(link_field proxy host1 connects) == c1 && $(link_field proxy host2 connects) == c2)) ||
	fail "the star's links reconnected during the rogue phase"
pass
