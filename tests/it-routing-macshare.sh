#!/bin/bash
#
# `routing auto`: a node's record names at most 256 local MACs, and each
# interface holds only its share of them (256 over the interfaces).  Guest
# 1 floods 2,000 random source MACs into host1's first interface; guest 3,
# behind host1's second, speaks only afterwards and is still claimed: host2
# routes to it, and host1 counts the MACs it refused.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing (the flood)"

RSTAR_SECOND=1
rstar_start 2
for d in proxy host1 host2; do
	wait_for 10 nodes_reachable "$d" 3 || fail "$d: show nodes: $(vctl "$d" show nodes)"
done
wait_for 10 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"

say "guest 1 sends from 2,000 random source MACs"
mac_flood g1 vtap0 2000 || fail "the flood failed"
refused() { stat_at_least host1 macs_refused 1000; }
wait_for 10 refused || fail "host1 refused only $(stat_value host1 macs_refused) MACs"
say "host1: macs_local $(stat_value host1 macs_local), macs_refused $(stat_value host1 macs_refused)"
(($(stat_value host1 macs_local) <= 128)) ||
	fail "guest 1's interface holds more than its share (128): $(stat_value host1 macs_local) MACs"

say "guest 3, behind host1's second interface, speaks up and is claimed"
G3MAC=$(guest_mac 3)
wait_for 10 gping g3 "$(guest_ip 2)" || fail "guest 3 cannot ping guest 2 after the flood"
claimed() {
	vctl host2 -t show routes | awk -F'\t' -v m="$G3MAC" \
		'$2 == m && $3 == "link" && $4 == "proxy" && $6 == "auto" { f = 1 } END { exit !f }'
}
wait_for 10 claimed || fail "host2 has no route to guest 3: $(vctl host2 show routes)"
pass
