#!/bin/bash
#
# A cloned host: a routing auto star over TLS (a proxy, two hosts) while
# guest 1 pings guest 2 every 50 ms; then a copy of host1 (the same node
# name, certificate and configuration, as a copied VM would have) starts
# on another machine and dials the proxy.  The proxy must keep host1's
# live connection and refuse the copy's, every time it tries, warning once
# in 10 s at most with what to do and counting it (clones_refused, show refused);
# host1's link never goes down, guest 1 loses no ping.  Before, the two
# replaced each other at every try and the guest's pings were all lost.
# Once host1 is gone (killed), the copy gets in.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
rstar_start 2
for d in proxy host1 host2; do
	wait_for 10 nodes_reachable "$d" 3 || fail "$d: show nodes: $(vctl "$d" show nodes)"
done
IP2=$(guest_ip 2)
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"
c1=$(link_field proxy host1 connects)

say "a copy of host1 dials the proxy while guest 1 pings guest 2"
in_guest g1 ping -n -q -i 0.05 -c 200 -W 1 "$IP2" >"$TMPD/ping.out" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
node_add copy 9
t0=$SECONDS
vnetd_start copy "node host1
link proxy $(addr proxy):$PORT tls
$RSTAR_ROUTING
$(tls_conf host1)"
# shellcheck disable=SC2317 # called through wait_for
refused_twice() { (($(stat_value proxy clones_refused) >= 2)); }
wait_for 20 refused_twice || fail "the proxy did not refuse the copy twice (clones_refused $(stat_value proxy clones_refused))"
wait "$PING_PID" || true
grep -q ' 200 received, 0% packet loss' "$TMPD/ping.out" ||
	fail "guest 1 lost pings to the copy: $(tail -n 3 "$TMPD/ping.out")"
(($(link_field proxy host1 connects) == c1)) || fail "host1's link to the proxy was replaced"
link_up proxy host1 || fail "host1's link is down"
warned=$(grep -c 'is connected already from' "${D_LOG[proxy]}")
((warned >= 1 && warned <= (SECONDS - t0) / 10 + 1)) ||
	fail "the proxy warned $warned times in $((SECONDS - t0)) s, not once in 10 s"
say "  $(grep -m1 -o 'refused .*cloned VM?)' "${D_LOG[proxy]}")"
vctl proxy -t show refused | grep -q "a clone" || fail "show refused: $(vctl proxy show refused)"
say "  refused $(stat_value proxy clones_refused) times; host1 kept its link, 200 of 200 pings"

say "host1 goes away: the copy gets in"
kill -KILL "${D_PID[host1]}"
wait_for 30 bash -c "[[ \$('$VNETCTL' -s '${D_SOCK[copy]}' -t show links | awk -F'\t' '\$1 == \"proxy\" { print \$2 }') == up ]]" ||
	fail "the copy did not get in after host1 went: $(vctl copy show links)"
pass
