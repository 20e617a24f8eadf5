#!/bin/bash
#
# (a) A star: a proxy and two hosts, a guest behind each host's TAP.  With
# the links up but no routes, guest 1 cannot reach guest 2; once the routes
# are added with vnetctl, it can, through the proxy.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

G1=$(guest_mac 1)
G2=$(guest_mac 2)
IP1=$(guest_ip 1)
IP2=$(guest_ip 2)

star_start no-routes
say "links up, no routes: the ping must fail"
if in_guest g1 ping -n -c 2 -W 1 "$IP2"; then
	fail "guest 1 reached guest 2 with no routes"
fi
nr=$(stat_value host1 no_route)
((nr > 0)) || fail "host1 dropped guest 1's frames but no_route is $nr"
in0=$(link_field proxy host1 frames_in)
((in0 == 0)) || fail "the proxy received $in0 frames from host1 with no routes on host1"

say "adding routes with vnetctl"
proxy_routes | add_statements proxy
host_routes 1 | add_statements host1
host_routes 2 | add_statements host2

# show routes: src dst target name active kind
expect_route() {
	local d=$1 want=$2
	vctl "$d" -t show routes | grep -qxF "$want" ||
		fail "$d: no route '$want' in: $(vctl "$d" -t show routes | tr '\t\n' ' |')"
}
T=$'\t'
expect_route proxy "any${T}$G1${T}link${T}host1${T}yes${T}static"
expect_route proxy "any${T}$G2${T}link${T}host2${T}yes${T}static"
expect_route proxy "any${T}ff:ff:ff:ff:ff:ff${T}link${T}host1${T}yes${T}static"
expect_route proxy "any${T}ff:ff:ff:ff:ff:ff${T}link${T}host2${T}yes${T}static"
expect_route host1 "$G1${T}any${T}link${T}proxy${T}yes${T}static"
expect_route host1 "not-$G1${T}any${T}interface${T}guest${T}yes${T}static"
expect_route host2 "$G2${T}any${T}link${T}proxy${T}yes${T}static"
expect_route host2 "not-$G2${T}any${T}interface${T}guest${T}yes${T}static"
n=$(vctl proxy -t show routes | wc -l)
((n == 4)) || fail "the proxy lists $n routes, not 4"

wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2 with the routes"

p1in=$(link_field proxy host1 frames_in)
p2out=$(link_field proxy host2 frames_out)
p2in=$(link_field proxy host2 frames_in)
p1out=$(link_field proxy host1 frames_out)
out=$(in_guest g1 ping -n -c 5 -i 0.2 -W 1 "$IP2") || fail "ping 1 -> 2 failed: $out"
grep -q ' 5 received' <<<"$out" || fail "ping 1 -> 2 lost replies: $out"
printf '%s\n' "$out" | tail -n 2
out=$(in_guest g2 ping -n -c 3 -i 0.2 -W 1 "$IP1") || fail "ping 2 -> 1 failed: $out"
grep -q ' 3 received' <<<"$out" || fail "ping 2 -> 1 lost replies: $out"

# Eight echo requests went 1 -> 2 and eight replies 2 -> 1, all via the proxy.
d1in=$(($(link_field proxy host1 frames_in) - p1in))
d2out=$(($(link_field proxy host2 frames_out) - p2out))
d2in=$(($(link_field proxy host2 frames_in) - p2in))
d1out=$(($(link_field proxy host1 frames_out) - p1out))
say "proxy counters grew: host1 in $d1in out $d1out, host2 in $d2in out $d2out"
((d1in >= 8 && d2out >= 8 && d2in >= 8 && d1out >= 8)) ||
	fail "the proxy's frame counters did not grow by the 8 echoes each way"
b=$(link_field proxy host1 bytes_in)
((b >= 8 * 98)) || fail "the proxy counted $b bytes from host1, less than 8 echo requests"

# A burst of UDP fills the sockets and queues: once it is over, every
# link's queue must empty by itself.
out=$(udp_burst g1 "$IP2" 20000) || fail "the UDP burst failed: $out"
say "a burst of $out UDP datagrams; the queues empty"
queues_drain "host1 proxy" "host2 proxy" "proxy host1" "proxy host2"
pass
