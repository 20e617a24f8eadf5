#!/bin/bash
#
# routing auto beside a peer without the control plane: a proxy and host1
# run `routing auto`, host2 runs `routing static` (as a daemon from before
# the control plane would), all three with `learn yes`.  host2 gets no
# records and is not in the database, yet its guest and host1's reach each
# other: broadcasts reach host2 along with the tree, and learning covers
# its guest's MAC.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

node_add proxy 1
node_add host1 2
node_add host2 3
ca_init
vnetd_start proxy "$(printf 'node proxy\nlisten %s:%d tls\nrouting auto\nlearn yes\n' \
	"$(addr proxy)" "$PORT"; tls_conf proxy)"
vnetd_start host1 "$(printf 'node host1\ninterface guest tap vtap0\nlink proxy %s:%d tls\nrouting auto\nlearn yes\n' \
	"$(addr proxy)" "$PORT"; tls_conf host1)"
vnetd_start host2 "$(printf 'node host2\ninterface guest tap vtap0\nlink proxy %s:%d tls\nrouting static\nlearn yes\n' \
	"$(addr proxy)" "$PORT"; tls_conf host2)"
guest_add g1 host1 vtap0 1
guest_add g2 host2 vtap0 2
wait_link_up host1 proxy
wait_link_up host2 proxy

wait_for 10 nodes_reachable proxy 2 || fail "proxy: show nodes: $(vctl proxy show nodes)"
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"
wait_for 5 gping g2 "$(guest_ip 1)" || fail "guest 2 cannot ping guest 1"
# The control plane never talked to host2.
n=$(vctl proxy -t show nodes | wc -l)
((n == 2)) || fail "the proxy's database holds $n nodes, not 2: $(vctl proxy show nodes)"
vctl host2 show nodes | grep -q "routing is static" || fail "host2 shows nodes"
(($(stat_value host2 bad_messages) == 0)) || fail "host2 saw bad messages"
# The proxy routes guest 1 automatically (once host1's record with its MAC
# has come: the ping may have been answered by learning before it did) and
# learned guest 2.
T=$'\t'
wait_for 5 owner_is proxy "$(guest_mac 1)" host1 ||
	fail "the proxy does not route guest 1 to host1: $(vctl proxy show macs)"
vctl proxy -t show macs | grep -q "^$(guest_mac 2)${T}link${T}host2${T}.*${T}learning${T}" ||
	fail "the proxy did not learn guest 2: $(vctl proxy show macs)"
pass
