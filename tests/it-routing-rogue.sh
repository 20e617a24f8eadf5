#!/bin/bash
#
# Hostile node records against a routing auto star (a proxy, two hosts,
# TLS) while guest 1 pings guest 2: an insider with a valid certificate
# floods records (its own, ever newer, and 9000 nodes that do not exist),
# claims a thousand MACs, sends host2's record with a huge sequence, then
# a malformed record, all signed with its own key.  Each is bounded,
# counted and logged: its own records too soon, the ones in names its
# certificate does not hold refused (records are signed on a TLS network,
# it-sigrec.sh), so neither the fakes nor host2's forgery get in; only the
# malformed record closes the rogue's link; the star's links stay up, the
# ping goes on, and once the rogue is gone its records age out.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
rogue_rstar
cert_issue rogue
node_add rogue 9
c1=$(link_field proxy host1 connects)
c2=$(link_field proxy host2 connects)
bad0=$(stat_value proxy bad_messages)

say "guest 1 pings guest 2 (every 0.1 s) while the rogue works"
ip netns exec "${G_NS[g1]}" ping -n -i 0.1 -W 1 "$IP2" >"$TMPD/ping.out" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")

rc=0
timeout 120 ip netns exec "$(ns rogue)" python3 "$(dirname "${BASH_SOURCE[0]}")/rogue.py" \
	"$(addr proxy)" "$PORT" "$CA_DIR/ca.crt" "$CA_DIR/rogue.crt" "$CA_DIR/rogue.key" \
	records >"$TMPD/rogue.out" 2>&1 || rc=$?
cat "$TMPD/rogue.out"
((rc == 0)) || fail "the rogue client failed (exit $rc)"

for c in records_delayed records_sig_name records_refused records_seq_ahead \
	records_malformed; do
	v=$(stat_value proxy "$c")
	say "proxy $c: $v"
	((v > 0)) || fail "proxy: $c did not count"
done
(($(stat_value proxy bad_messages) == bad0 + 1)) || fail "the malformed record did not count as a bad message"
(($(stat_value proxy records) <= 32768)) || fail "the proxy holds more than 32768 records (NODEDB_RECORDS_MAX)"
(($(stat_value proxy records_sig_name) >= 9000)) || fail "the fake nodes' records were not all refused"
(($(stat_value host2 records_about_us) == 0)) || fail "host2 was given the forged record"
for pat in 'too many MACs in record' 'sequence ahead of the clock' \
	'its certificate does not name the node' \
	'malformed node record: section runs past the record'; do
	grep -q "$pat" "${D_LOG[proxy]}" || fail "the proxy's log has no line '$pat'"
done

say "the rogue's and the fake records age out; the star is whole"
for d in "${DAEMONS[@]}"; do
	wait_for 15 nodes_reachable "$d" 3 || fail "$d: show nodes: $(vctl "$d" show nodes | head)"
done
wait_for 5 owner_is proxy "$(guest_mac 2)" host2 || fail "the proxy lost guest 2's MAC"
kill -INT "$PING_PID"
wait_for 5 proc_gone "$PING_PID" || fail "ping did not stop"
wait "$PING_PID" 2>/dev/null || true
read -r sent got < <(awk '/packets transmitted/ { print $1, $4 }' "$TMPD/ping.out")
say "ping during the rogue phase: $got of $sent replies"
((sent >= 30)) || fail "only $sent pings were sent"
# The forged host2 record leaves host2 unreachable until host2's own
# record overtakes it (about 0.1 s): a reply or two may go; no more.
((got * 100 >= sent * 95)) || fail "ping lost $((sent - got)) of $sent during the rogue phase"
(($(link_field proxy host1 connects) == c1 && $(link_field proxy host2 connects) == c2)) ||
	fail "the star's links reconnected during the rogue phase"
gping g2 "$(guest_ip 1)" || fail "guest 2 cannot ping guest 1 after the rogue"
pass
