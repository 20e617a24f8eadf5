#!/bin/bash
#
# A reflector (routing auto, `adapt shortcuts yes`, a proxy and two hosts,
# TLS): six insiders, each with a valid certificate of its own, publish in
# their signed records a bystander's TCP listener (no vnet node) as their
# only address, and claim 100 MB/s of traffic toward both hosts, so that
# each host wants a shortcut to each of them.  Every dial goes to the
# bystander, which counts the connections it is offered: at most three a
# minute per host (shortcut.c's bound per address, whatever node names
# it), against the two per pair (twelve per host) that the pairs'
# back-off alone lets through in 30 s.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
ROGUES=6
RUN_S=25
BOUND=3			# SHORTCUT_TARGET_DIALS a minute, per dialling node
RSTAR_ROUTING="routing auto
adapt shortcuts yes threshold 1mbit hold 1"
rogue_rstar
node_add rogues 9
node_add bystander 20
BYSTANDER=$(addr bystander):7999

# The bystander: accepts, counts and holds every connection, and writes
# the count after each.
ip netns exec "$(ns bystander)" python3 - "$(addr bystander)" 7999 "$TMPD/bystander.count" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(64)
held, n = [], 0
open(sys.argv[3], "w").write("0\n")
while True:
    c, _ = s.accept()
    held.append(c)
    n += 1
    with open(sys.argv[3], "w") as f:
        f.write("%d\n" % n)
PY
EXTRA_PIDS+=("$!")
wait_for 5 test -s "$TMPD/bystander.count" || fail "the bystander did not start"

pids=()
for ((i = 1; i <= ROGUES; i++)); do
	cert_issue "rogue$i"
	timeout 60 ip netns exec "$(ns rogues)" python3 "$(dirname "${BASH_SOURCE[0]}")/rogue.py" \
		"$(addr proxy)" "$PORT" "$CA_DIR/ca.crt" "$CA_DIR/rogue$i.crt" "$CA_DIR/rogue$i.key" \
		reflect "rogue$i" "$BYSTANDER" "$RUN_S" host1 host2 >"$TMPD/rogue$i.out" 2>&1 &
	pids+=("$!")
	EXTRA_PIDS+=("$!")
done
wait_for 10 nodes_reachable host1 $((3 + ROGUES)) || fail "host1 does not see the rogues: $(vctl host1 show nodes)"
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=$?
done
cat "$TMPD"/rogue*.out
((rc == 0)) || fail "a rogue failed (exit $rc)"
n=$(cat "$TMPD/bystander.count")
for d in host1 host2; do
	say "$d: adapt_dials $(stat_value "$d" adapt_dials), adapt_dials_bounded $(stat_value "$d" adapt_dials_bounded)"
done
say "the bystander was offered $n connections in $RUN_S s by 2 hosts for $ROGUES insiders naming it"
((n > 0)) || fail "no host dialled the bystander: the rogues' claims made no shortcut wanted"
((n <= 2 * BOUND)) || fail "the bystander was offered $n connections, more than $BOUND per host"
(($(stat_value host1 adapt_dials_bounded) > 0)) || fail "host1 bounded no dial"
pass
