#!/bin/bash
#
# (b) Run-time changes: on the working star, vnetctl add-link + add-route
# make a direct host1 - host2 path and the proxy stops carrying the guests'
# traffic; del-link takes the path away and the traffic falls back to the
# proxy.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

G1=$(guest_mac 1)
G2=$(guest_mac 2)
IP2=$(guest_ip 2)

star_start with-routes
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2 through the proxy"

proxy_frames() {
	echo $(($(link_field proxy host1 frames_in) + $(link_field proxy host1 frames_out) +
		$(link_field proxy host2 frames_in) + $(link_field proxy host2 frames_out)))
}

# ping_ok COUNT: COUNT echoes from guest 1 to guest 2, every one answered.
ping_ok() {
	local out
	out=$(in_guest g1 ping -n -c "$1" -i 0.1 -W 1 "$IP2") || fail "ping failed: $out"
	grep -q " $1 received" <<<"$out" || fail "ping lost replies: $out"
}

say "direct link host1 -> host2 at run time"
vctl host1 add-link host2 "$(addr host2):$PORT" || fail "add-link failed"
vctl host1 add-route any "$G2" link host2 || fail "add-route on host1 failed"
vctl host2 add-route any "$G1" link host1 || fail "add-route on host2 failed"
wait_link_up host1 host2
wait_link_up host2 host1
[[ $(link_field host1 host2 dir) == out ]] || fail "host1's link host2 is not outgoing"
[[ $(link_field host2 host1 dir) == in ]] || fail "host2's link host1 is not incoming"

ping_ok 2 # the first echoes may still be in flight through the proxy
before=$(proxy_frames)
h1out=$(link_field host1 host2 frames_out)
ping_ok 20
after=$(proxy_frames)
direct=$(($(link_field host1 host2 frames_out) - h1out))
say "20 pings: proxy frames +$((after - before)), direct link host1 -> host2 frames +$direct"
((after - before <= 2)) || fail "the proxy still carried $((after - before)) frames with the direct link up"
((direct >= 20)) || fail "only $direct frames went over the direct link"

say "del-link: back through the proxy"
vctl host1 del-link host2 || fail "del-link failed"
if link_field host1 host2 state >/dev/null 2>&1; then
	fail "host1 still lists link host2 after del-link"
fi
wait_for 15 link_not_up host2 host1 || fail "host2's link from host1 stays up after del-link"
wait_for 15 gping g1 "$IP2" || fail "no fallback through the proxy after del-link"
before=$(proxy_frames)
ping_ok 10
after=$(proxy_frames)
say "10 pings after del-link: proxy frames +$((after - before))"
((after - before >= 40)) || fail "the proxy carried only $((after - before)) frames (expected 40: 10 echoes in and out, each way)"
pass
