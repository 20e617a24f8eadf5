#!/bin/bash
#
# Plain listeners: without an allow list one takes loopback alone; with one,
# exactly the addresses it names (loopback included only if named).  A
# refused connection is closed before anything is read, logged, and counted
# as not_allowed.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

P2=$((PORT + 1))
node_add proxy 1
node_add host1 2
node_add host2 3
vnetd_start proxy "node proxy
listen *:$PORT
listen *:$P2 allow 10.66.0.2/32,192.0.2.0/24"

# hello_from NS PORT: connects from namespace NS to the proxy and succeeds
# if the daemon sends its hello (a plain listener speaks first).
hello_from() {
	ip netns exec "$(ns "$1")" timeout 5 bash -c '
		exec 3<>"/dev/tcp/$0/$1" || exit 1
		head -c 8 <&3 | od -An -tx1 | grep -q "^ *01 00"' "$3" "$2"
}

say "no allow list: loopback is let in"
hello_from proxy "$PORT" 127.0.0.1 || fail "a loopback client got no hello on a plain listener"
n0=$(stat_value proxy not_allowed)
((n0 == 0)) || fail "not_allowed is $n0 after a loopback connection"

say "no allow list: a peer on the underlay is refused"
vnetd_start host1 "node host1
link proxy $(addr proxy):$PORT"
wait_for 10 stat_at_least proxy not_allowed 1 || fail "the proxy let host1 in without an allow list"
link_not_up host1 proxy || fail "host1's link came up through a listener without an allow list"
grep -q "connection from $(addr host1) refused: not allowed on listen \*:$PORT (no allow list: loopback only)" \
	"${D_LOG[proxy]}" || fail "the proxy's log does not say why host1 was refused"

say "an allow list naming host1 lets host1 in"
vctl host1 del-link proxy || fail "del-link failed"
vctl host1 add-link proxy "$(addr proxy):$P2" || fail "add-link failed"
wait_link_up host1 proxy
wait_link_up proxy host1

say "... and nobody else: not host2, not even loopback"
n1=$(stat_value proxy not_allowed)
vnetd_start host2 "node host2
link proxy $(addr proxy):$P2"
wait_for 10 stat_at_least proxy not_allowed $((n1 + 1)) || fail "the proxy let host2 in"
link_not_up host2 proxy || fail "host2's link came up though the allow list does not name it"
if hello_from proxy "$P2" 127.0.0.1; then
	fail "a loopback client got in though the allow list does not name loopback"
fi
wait_for 5 stat_at_least proxy not_allowed $((n1 + 2)) || fail "the refused loopback client was not counted"
link_up proxy host1 || fail "host1's link went down"
pass
