#!/bin/bash
#
# A guest floods frames from 100,000 random source MACs into a daemon with
# `learn yes` (its table holds 65,536).  Its interface learns only its
# share, a quarter of the table, so a guest that speaks up afterwards is
# still learned: unicast to it goes to it alone, not flooded to every port
# (the flooding guest's included).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing (the flood)"

node_add h1 1
vnetd_start h1 "node h1
learn yes
interface g1 tap vtap1
interface g2 tap vtap2
interface g3 tap vtap3"
for i in 1 2 3; do
	guest_add "g$i" h1 "vtap$i" "$i"
done
IP2=$(guest_ip 2)
IP3=$(guest_ip 3)
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"

say "guest 1 sends from 100,000 random source MACs"
mac_flood g1 vtap1 100000 || fail "the flood failed"
# shellcheck disable=SC2317 # called through wait_for
macs_settled() { (($(stat_value h1 macs) > 10000)); }
wait_for 10 macs_settled || fail "the daemon learned only $(stat_value h1 macs) MACs"
say "macs $(stat_value h1 macs), macs_replaced $(stat_value h1 macs_replaced)," \
	"mac_table_full $(stat_value h1 mac_table_full)"
(($(stat_value h1 macs) <= 65536 / 4 + 8)) ||
	fail "guest 1's interface holds more than its share: $(stat_value h1 macs) MACs"

# Guest 3 speaks for the first time (its ARP), and is learned.
wait_for 15 gping g3 "$IP2" || fail "guest 3 cannot ping guest 2 after the flood"
vctl h1 -t show macs | grep -qF "$(guest_mac 3)"$'\t'interface$'\t'g3 ||
	fail "guest 3's MAC was not learned after the flood"

floods0=$(stat_value h1 floods)
out0=$(iface_field h1 g1 frames_out)
out=$(in_guest g2 ping -n -c 20 -i 0.05 -W 1 "$IP3") || fail "guest 2 cannot ping guest 3: $out"
floods=$(($(stat_value h1 floods) - floods0))
to_g1=$(($(iface_field h1 g1 frames_out) - out0))
say "20 echoes guest 2 -> guest 3: $floods floods, $to_g1 frames to guest 1"
# An ARP exchange may be flooded; the echoes and replies may not.
((floods <= 4)) || fail "unicast to guest 3 was flooded ($floods floods)"
((to_g1 <= 4)) || fail "guest 1 received $to_g1 frames of guest 2 and 3's ping"
pass
