#!/bin/bash
#
# Spoofed frames against the resequencer: a routing auto star (a proxy, two
# hosts, TLS) while guest 1 pings guest 2 every 10 ms.  A rogue with a
# valid certificate of its own links straight to host2 and sends 3000 ICMP
# echo requests from guest 1's MAC and address to guest 2, 500 a second:
# frames of the flow g1 -> g2 by a link that is neither to guest 1's node
# nor host2's route to it.  host2 must pass each on without holding the
# real frames behind them (reseq_off_path counts them, reseq_holds stays),
# and guest 1's pings lose nothing.  Before, each spoofed burst started a
# hold of the real frames (ping 0.9 ms -> 56 ms on average).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing (the rogue peer)"
rstar_start 2
DAEMONS=(proxy host1 host2)
for d in "${DAEMONS[@]}"; do
	wait_for 10 nodes_reachable "$d" 3 || fail "$d: show nodes: $(vctl "$d" show nodes)"
done
IP1=$(guest_ip 1)
IP2=$(guest_ip 2)
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2 before the rogue comes"
cert_issue rogue
node_add rogue 9

holds0=$(stat_value host2 reseq_holds)
off0=$(stat_value host2 reseq_off_path)
say "guest 1 pings guest 2 every 10 ms; the rogue sends 3000 frames of that flow to host2"
ip netns exec "${G_NS[g1]}" ping -n -i 0.01 -W 1 -c 800 "$IP2" >"$TMPD/ping.out" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
timeout 60 ip netns exec "$(ns rogue)" python3 "$(dirname "${BASH_SOURCE[0]}")/rogue.py" \
	"$(addr host2)" "$PORT" "$CA_DIR/ca.crt" "$CA_DIR/rogue.crt" "$CA_DIR/rogue.key" \
	spoof "$(guest_mac 1)" "$(guest_mac 2)" "$IP1" "$IP2" 3000 >"$TMPD/rogue.out" 2>&1 ||
	fail "the rogue failed: $(cat "$TMPD/rogue.out")"
grep -q '^rogue: spoofed 3000' "$TMPD/rogue.out" || fail "the rogue did not send: $(cat "$TMPD/rogue.out")"
wait "$PING_PID" || true
off=$(($(stat_value host2 reseq_off_path) - off0))
holds=$(($(stat_value host2 reseq_holds) - holds0))
say "  host2: $off frames off their path passed on, $holds flows held"
((off >= 2000)) || fail "host2 counted $off of the rogue's 3000 frames as off their path"
((holds == 0)) || fail "host2 held $holds flows for the rogue's frames"
grep -q ' 800 received, 0% packet loss' "$TMPD/ping.out" ||
	fail "guest 1's pings were lost: $(tail -n 3 "$TMPD/ping.out")"
say "  $(grep -o 'rtt.*' "$TMPD/ping.out")"
link_up proxy host2 || fail "host2's link to the proxy went down"
pass
