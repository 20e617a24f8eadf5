#!/bin/bash
#
# routing auto: a proxy and four hosts over TLS, five guests (two behind
# host1), not one route statement.  Every guest reaches every other; once
# the network has converged no unicast frame goes anywhere but toward its
# destination; a broadcast reaches every guest exactly once.  Then a cycle
# of links (host1-host2, host2-host3) is added, and all of that holds again.
# Without adapt configured, no adapt line is logged for those links.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing"

N=4
RSTAR_SECOND=1
GUESTS=5
rstar_start "$N"
NODES=$((N + 1))
DAEMONS=(proxy host1 host2 host3 host4)

say "every node's database holds all $NODES nodes, all reachable"
for d in "${DAEMONS[@]}"; do
	wait_for 10 nodes_reachable "$d" "$NODES" ||
		fail "$d: show nodes: $(vctl "$d" show nodes)"
done

# dev GUEST: the guest's interface (g5 is behind host1's second TAP).
dev() { [[ $1 == g5 ]] && echo vtap1 || echo vtap0; }

all_pings() {
	local i j
	for ((i = 1; i <= GUESTS; i++)); do
		for ((j = 1; j <= GUESTS; j++)); do
			((i == j)) && continue
			wait_for 10 gping "g$i" "$(guest_ip "$j")" ||
				fail "guest $i cannot ping guest $j"
		done
	done
}

# Every guest has spoken: every node knows every MAC's owner.
check_owners() {
	local d i owner
	for d in "${DAEMONS[@]}"; do
		for ((i = 1; i <= GUESTS; i++)); do
			owner=host$i
			((i == 5)) && owner=host1
			wait_for 5 owner_is "$d" "$(guest_mac "$i")" "$owner" ||
				fail "$d: MAC of guest $i not owned by $owner: $(vctl "$d" show macs)"
		done
	done
}

# A unicast conversation between guests 1 and 2 sends nothing toward
# hosts 3 and 4, and no node floods or drops for want of a route.
no_unicast_flood() {
	local d before3 before4 a3 a4 nr=() fl=() k=0 i j
	for d in "${DAEMONS[@]}"; do
		nr+=("$(stat_value "$d" no_route)")
		fl+=("$(stat_value "$d" floods)")
	done
	# Fixed neighbours everywhere: no ARP requests or probes (which go
	# to other guests) in the window.
	for ((i = 1; i <= GUESTS; i++)); do
		for ((j = 1; j <= GUESTS; j++)); do
			((i == j)) && continue
			in_guest "g$i" ip neigh replace "$(guest_ip "$j")" \
				lladdr "$(guest_mac "$j")" dev "$(dev "g$i")" nud permanent
		done
	done
	before3=$(link_field proxy host3 frames_out)
	before4=$(link_field proxy host4 frames_out)
	out=$(in_guest g1 ping -n -c 10 -i 0.05 -W 1 "$(guest_ip 2)") ||
		fail "ping 1 -> 2 failed: $out"
	grep -q ' 10 received' <<<"$out" || fail "ping 1 -> 2 lost replies: $out"
	a3=$(($(link_field proxy host3 frames_out) - before3))
	a4=$(($(link_field proxy host4 frames_out) - before4))
	say "frames toward host3 and host4 during 10 echoes 1 <-> 2: $a3, $a4"
	((a3 == 0 && a4 == 0)) ||
		fail "unicast between guests 1 and 2 reached host3 ($a3) or host4 ($a4)"
	for d in "${DAEMONS[@]}"; do
		(($(stat_value "$d" no_route) == nr[k])) ||
			fail "$d dropped frames for want of a route"
		(($(stat_value "$d" floods) == fl[k])) || fail "$d flooded frames"
		(($(stat_value "$d" auto_hits) > 0)) || fail "$d: no auto_hits"
		k=$((k + 1))
	done
}

# bcast_once FROM: one broadcast frame (ethertype 0x88b5, a marker) sent
# by guest FROM arrives exactly once at every other guest.  Each listener
# counts copies until a second after the stop file appears, which is made
# once every listener has its first copy.
LISTEN='
import os, socket, sys, time
dev, marker, ready, stop = sys.argv[1:5]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88b5))
s.bind((dev, 0))
s.settimeout(0.1)
open(ready, "w").close()
n, until, deadline = 0, None, time.time() + 60
while time.time() < deadline and (until is None or time.time() < until):
    if until is None and os.path.exists(stop):
        until = time.time() + 1
    try:
        f = s.recv(2048)
    except socket.timeout:
        continue
    if marker.encode() in f:
        n += 1
        with open(ready, "w") as r:
            r.write(str(n))
print(n)'
SEND='
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
mac = open("/sys/class/net/%s/address" % sys.argv[1]).read().strip()
src = bytes(int(x, 16) for x in mac.split(":"))
s.send(b"\xff" * 6 + src + b"\x88\xb5" + sys.argv[2].encode().ljust(46, b"."))'
got_one() { [[ -s $1 ]]; }
dups() {
	local d s=0
	for d in "${DAEMONS[@]}"; do
		s=$((s + $(stat_value "$d" duplicates)))
	done
	echo "$s"
}
bcast_once() {
	local from=$1 marker="vnet-bcast-$RANDOM-$1" i pids=() got stop=$TMPD/stop$1 dup0
	rm -f "$stop"
	dup0=$(dups)
	for ((i = 1; i <= GUESTS; i++)); do
		((i == from)) && continue
		rm -f "$TMPD/ready$i"
		in_guest "g$i" python3 -c "$LISTEN" "$(dev "g$i")" "$marker" \
			"$TMPD/ready$i" "$stop" >"$TMPD/bcast$i" 2>"$TMPD/bcast$i.err" &
		pids+=("$!")
	done
	for ((i = 1; i <= GUESTS; i++)); do
		((i == from)) && continue
		wait_for 30 test -e "$TMPD/ready$i" ||
			fail "listener in g$i did not start: $(cat "$TMPD/bcast$i.err")"
	done
	in_guest "g$from" python3 -c "$SEND" "$(dev "g$from")" "$marker" ||
		fail "guest $from could not send a broadcast"
	for ((i = 1; i <= GUESTS; i++)); do
		((i == from)) && continue
		wait_for 10 got_one "$TMPD/ready$i" || break
	done
	touch "$stop"
	wait "${pids[@]}"
	for ((i = 1; i <= GUESTS; i++)); do
		((i == from)) && continue
		got=$(<"$TMPD/bcast$i")
		((got == 1)) || fail "a broadcast from guest $from reached guest $i $got times"
	done
	# Exactly once to each node, too: no node saw a second copy.
	(($(dups) == dup0)) || fail "nodes dropped $(($(dups) - dup0)) second copies of the broadcast"
	say "a broadcast from guest $from reached every other guest, and every node, exactly once"
}

check_all() {
	all_pings
	check_owners
	no_unicast_flood
	bcast_once 1
	bcast_once 3
	bcast_once 5
}

say "star"
check_all
T=$'\t'
vctl host3 -t show routes | grep -qxF "any${T}$(guest_mac 1)${T}link${T}proxy${T}yes${T}auto" ||
	fail "host3 has no automatic route to guest 1 via the proxy: $(vctl host3 show routes)"
n=$(vctl host3 -t show routes | grep -c "${T}auto\$" || true)
((n == GUESTS - 1)) || fail "host3 lists $n automatic routes, not $((GUESTS - 1))"

say "adding the cycle host1-host2, host2-host3"
vctl host1 add-link host2 "$(addr host2):$PORT" tls
vctl host2 add-link host3 "$(addr host3):$PORT" tls
wait_link_up host1 host2
wait_link_up host2 host3
two_way() {
	vctl "$1" -t show topology | grep -qF "$2${T}$3${T}" &&
		vctl "$1" -t show topology | awk -F'\t' -v a="$2" -v b="$3" \
			'$1 == a && $2 == b && $4 == "two-way" { f = 1 } END { exit !f }'
}
for d in "${DAEMONS[@]}"; do
	wait_for 10 two_way "$d" host1 host2 || fail "$d: no host1-host2 in: $(vctl "$d" show topology)"
	wait_for 10 two_way "$d" host2 host3 || fail "$d: no host2-host3 in: $(vctl "$d" show topology)"
done
check_all
# host1 reaches host2's guest directly now.
wait_for 5 bash -c "'$VNETCTL' -s '${D_SOCK[host1]}' -t show routes | grep -qxF 'any${T}$(guest_mac 2)${T}link${T}host2${T}yes${T}auto'" ||
	fail "host1 does not route guest 2 over the new link: $(vctl host1 show routes)"

say "a hand-written rule ranks above the automatic route"
vctl host1 add-route any "$(guest_mac 2)" link proxy
via_proxy0=$(link_field proxy host2 frames_out)
direct0=$(link_field host1 host2 frames_out)
out=$(in_guest g1 ping -n -c 5 -i 0.05 -W 1 "$(guest_ip 2)") || fail "ping 1 -> 2 with the rule failed: $out"
via_proxy=$(($(link_field proxy host2 frames_out) - via_proxy0))
direct=$(($(link_field host1 host2 frames_out) - direct0))
say "with the rule: $via_proxy echoes via the proxy, $direct direct"
((via_proxy >= 5 && direct == 0)) || fail "the rule did not take guest 1's echoes via the proxy"
vctl host1 del-route any "$(guest_mac 2)" link proxy
direct0=$(link_field host1 host2 frames_out)
out=$(in_guest g1 ping -n -c 5 -i 0.05 -W 1 "$(guest_ip 2)") || fail "ping 1 -> 2 without the rule failed: $out"
direct=$(($(link_field host1 host2 frames_out) - direct0))
((direct >= 5)) || fail "without the rule, the echoes did not take the direct link again"

say "without adapt configured: show adapt follows the hand-written links, the log says nothing of them"
wait_for 5 bash -c "'$VNETCTL' -s '${D_SOCK[host1]}' -t show adapt | grep -q '^host2${T}manual'" ||
	fail "host1's show adapt does not list host2 as manual: $(vctl host1 show adapt)"
for d in "${DAEMONS[@]}"; do
	! grep -q 'adapt:' "${D_LOG[$d]}" || fail "$d logged: $(grep 'adapt:' "${D_LOG[$d]}" | head -n 3)"
done
pass
