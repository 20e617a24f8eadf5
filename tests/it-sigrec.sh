#!/bin/bash
#
# Signed node records against an insider: a routing auto star (a proxy,
# two hosts, TLS) while guest 1 pings guest 2.  A rogue with a valid
# certificate of its own links to the proxy, reads host2's topology record
# off the database exchange and sends it back with the next sequence
# number and no links, unsigned, signed by itself, with host2's
# certificate and old signature, and with host2's certificate and its own
# signature; then a record of node "ghost", which does not exist, signed
# by itself.  The proxy refuses each and counts why; the rogue's link
# stays up, host2 stays reachable and its guest keeps answering, no
# daemon ever lists ghost, and host2's record on every daemon is still
# its own.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
rogue_rstar
(($(stat_value proxy records_verified) > 0)) || fail "the proxy checked no signature"
(($(stat_value proxy records_sig_unsigned) == 0)) || fail "the star's own records were refused as unsigned"
cert_issue rogue
node_add rogue 9
c2=$(link_field proxy host2 connects)
seq2=$(vctl proxy -t show nodes | awk -F'\t' '$1 == "host2" { print $2 }')

say "guest 1 pings guest 2 (every 0.1 s) while the rogue forges"
ip netns exec "${G_NS[g1]}" ping -n -i 0.1 -W 1 "$IP2" >"$TMPD/ping.out" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")

rc=0
timeout 60 ip netns exec "$(ns rogue)" python3 "$(dirname "${BASH_SOURCE[0]}")/rogue.py" \
	"$(addr proxy)" "$PORT" "$CA_DIR/ca.crt" "$CA_DIR/rogue.crt" "$CA_DIR/rogue.key" \
	sigrec >"$TMPD/rogue.out" 2>&1 || rc=$?
cat "$TMPD/rogue.out"
((rc == 0)) || fail "the rogue client failed (exit $rc)"
grep -q '^rogue: host2 sequence' "$TMPD/rogue.out" || fail "the rogue never read host2's record"

for c in records_sig_unsigned records_sig_name records_sig_bad_sig; do
	v=$(stat_value proxy "$c")
	say "proxy $c: $v"
	((v > 0)) || fail "proxy: $c did not count"
done
# Unsigned; signed by the rogue in host2's name and in ghost's; two with
# host2's certificate and a signature that is not over these bytes.
(($(stat_value proxy records_sig_name) >= 2)) || fail "the rogue's records in others' names were not both refused"
(($(stat_value proxy records_sig_bad_sig) >= 2)) || fail "the forged signatures were not both refused"
grep -q 'record of node host2, sequence .* from link rogue refused' "${D_LOG[proxy]}" ||
	fail "the proxy's log does not say it refused host2's forged record"
(($(stat_value host2 records_about_us) == 0)) || fail "host2 was given the forged record"
for d in "${DAEMONS[@]}"; do
	vctl "$d" -t show nodes | awk -F'\t' '$1 == "ghost" { exit 1 }' ||
		fail "$d lists the made-up node ghost: $(vctl "$d" show nodes)"
	nodes_reachable "$d" 3 || fail "$d: show nodes: $(vctl "$d" show nodes)"
	# host2's record is still its own: it lists its link to the proxy.
	vctl "$d" -t show nodes | awk -F'\t' '$1 == "host2" && $7 ~ /proxy/ { ok = 1 } END { exit !ok }' ||
		fail "$d: host2's record lost its links: $(vctl "$d" show nodes)"
done
say "host2's sequence on the proxy: $seq2 before, $(vctl proxy -t show nodes | awk -F'\t' '$1 == "host2" { print $2 }') after"

kill -INT "$PING_PID"
wait_for 5 proc_gone "$PING_PID" || fail "ping did not stop"
wait "$PING_PID" 2>/dev/null || true
read -r sent got < <(awk '/packets transmitted/ { print $1, $4 }' "$TMPD/ping.out")
say "ping while the rogue forged: $got of $sent replies"
((sent >= 20)) || fail "only $sent pings were sent"
((got + 1 >= sent)) || fail "ping lost $((sent - got)) of $sent while the rogue forged"
(($(link_field proxy host2 connects) == c2)) || fail "host2's link reconnected"
pass
