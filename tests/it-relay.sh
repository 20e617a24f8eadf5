#!/bin/bash
#
# relay no: a ring of five under `routing auto`, plain links.  Guest 1 is
# behind a, guest 2 behind d; a's short way to d is through r (two hops),
# the long one through x and y (three).  r says `relay no`: every node
# still reaches r, the path a-d goes the long way, guest 1 pings guest 2,
# and r's links carry none of their frames.  Then `vnetctl relay yes` on
# r is taken, and the ping moves to the short way, through r.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

DAEMONS=(a r x y d)
i=1
for n in "${DAEMONS[@]}"; do
	node_add "$n" "$i"
	i=$((i + 1))
done
# conf NAME LINKS... [-- MORE STATEMENTS]
conf() {
	local name=$1 l
	shift
	printf 'node %s\nlisten %s:%d allow %s\nrouting auto\n' "$name" \
		"$(addr "$name")" "$PORT" "$UNDERLAY"
	for l in "$@"; do
		printf 'link %s %s:%d\n' "$l" "$(addr "$l")" "$PORT"
	done
}
vnetd_start a "$(conf a r x)
interface guest tap vtap0"
vnetd_start r "$(conf r d)
relay no"
vnetd_start x "$(conf x y)"
vnetd_start y "$(conf y d)"
vnetd_start d "$(conf d)
interface guest tap vtap0"
guest_add g1 a vtap0 1
guest_add g2 d vtap0 2

# node_col DAEMON NODE hops|relay: that column of DAEMON's `show nodes`
# row of NODE.
node_col() {
	local idx
	case $3 in hops) idx=6 ;; relay) idx=11 ;; *) fail "node_col: no column '$3'" ;; esac
	vctl "$1" -t show nodes | awk -F'\t' -v n="$2" -v i="$idx" '
		$1 == n { print $i; found = 1 } END { exit !found }'
}
node_col_is() { [[ $(node_col "$1" "$2" "$3") == "$4" ]]; }

for n in "${DAEMONS[@]}"; do
	wait_for 10 nodes_reachable "$n" 5 || fail "$n: show nodes: $(vctl "$n" show nodes)"
done
node_col_is a r relay no || fail "a: r's record does not say relay no: $(vctl a show nodes)"
wait_for 5 node_col_is a d hops 3 || fail "a: d is not 3 hops away: $(vctl a show nodes)"
say "every node reaches the other four; from a, d is 3 hops away (not through r)"

IP2=$(guest_ip 2)
wait_for 10 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"
# Fixed neighbours: no ARP in the window, only the echoes.
in_guest g1 ip neigh replace "$IP2" lladdr "$(guest_mac 2)" dev vtap0 nud permanent
in_guest g2 ip neigh replace "$(guest_ip 1)" lladdr "$(guest_mac 1)" dev vtap0 nud permanent

# r_frames: every data frame in and out of r's links.
r_frames() {
	echo $(($(links_sum r frames_in) + $(links_sum r frames_out)))
}
# echoes COUNT: COUNT echoes from guest 1 to guest 2, each answered.
echoes() {
	local out
	out=$(in_guest g1 ping -n -c "$1" -i 0.05 -W 1 "$IP2") ||
		fail "ping 1 -> 2 failed: $out"
	grep -q " $1 received" <<<"$out" || fail "ping 1 -> 2 lost replies: $out"
}
r0=$(r_frames)
x0=$(link_field a x frames_out)
echoes 20
rn=$(($(r_frames) - r0))
xn=$(($(link_field a x frames_out) - x0))
say "20 echoes guest 1 -> guest 2: r's links carried $rn frames, a's link to x $xn"
((rn == 0)) || fail "r (relay no) carried $rn frames between a and d"
((xn >= 20)) || fail "a sent only $xn frames toward x"
(($(stat_value r relay_refused) == 0)) ||
	fail "r refused $(stat_value r relay_refused) frames: a path through it was used"

say "vnetctl relay yes on r"
vctl r relay yes >/dev/null || fail "vnetctl relay yes was refused"
vctl r show config | grep -qx 'relay yes' || fail "r: show config: $(vctl r show config)"
wait_for 5 node_col_is a r relay yes || fail "a: r's record still says relay no: $(vctl a show nodes)"
wait_for 5 node_col_is a d hops 2 || fail "a: d is not 2 hops away: $(vctl a show nodes)"
r0=$(link_field r d frames_out)
echoes 20
rn=$(($(link_field r d frames_out) - r0))
say "20 echoes after relay yes: r sent $rn frames toward d"
((rn >= 20)) || fail "the echoes did not go through r after relay yes ($rn frames)"
pass
