#!/bin/bash
#
# A link's TCP congestion control (`congestion` among the link options):
# set from the config on the dialled and on the accepted end, changed and
# reset at run time, refused when the kernel has no such algorithm (the
# daemon runs on), and set again on the connection that replaces one after
# the peer restarts.  Checked on the sockets themselves with ss(8), and in
# `show link`; the guests' ping crosses the links throughout.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v ss >/dev/null || skip "ss (iproute2) is not installed"

IP2=$(guest_ip 2)

# reno is built into every kernel; ALT is another one this kernel has
# (reno again if it has no other), DEF the namespaces' default.
DEF=$(sysctl -n net.ipv4.tcp_congestion_control)
ALT=reno
read -ra have </proc/sys/net/ipv4/tcp_available_congestion_control
for cc in "${have[@]}"; do
	if [[ $cc != reno && $cc != "$DEF" ]]; then
		ALT=$cc
		break
	fi
done
say "default $DEF; the links get reno and $ALT"

# sock_cc DAEMON PEER: the congestion control of each established TCP
# connection between daemon DAEMON and node PEER's underlay address (the
# first word of ss's info line that is not a TCP option ss may show).
sock_cc() {
	ip netns exec "$(ns "$1")" ss -tinH state established dst "$(addr "$2")" |
		awk 'NR % 2 == 0 {
			for (i = 1; i <= NF; i++)
				if ($i !~ /^(ts|sack|ecn|ecnseen|fastopen)$/) { print $i; break }
		}'
}

# cc_is DAEMON PEER CC: exactly one such connection, and it uses CC.
# shellcheck disable=SC2317 # called by wait_for
cc_is() {
	[[ $(sock_cc "$1" "$2") == "$3" ]]
}

# expect_cc DAEMON LINK PEER CC: the socket and `show link` say CC.
expect_cc() {
	local shown
	wait_for 10 cc_is "$1" "$3" "$4" ||
		fail "$1's connection to $3 uses '$(sock_cc "$1" "$3" | tr '\n' ' ')', not $4"
	shown=$(vctl "$1" -t show link "$2" | awk -F'\t' '$1 == "congestion" { print $2 }')
	[[ $shown == "$4" ]] || fail "$1: show link $2 says congestion '$shown', not $4"
}

node_add proxy 1
node_add host1 2
node_add host2 3
vnetd_start proxy "$(proxy_conf with-routes)
set-link host1 congestion $ALT"
vnetd_start host1 "$(host_conf 1 with-routes | sed 's/^link proxy .*/& congestion reno/')"
vnetd_start host2 "$(host_conf 2 with-routes)"
guest_add g1 host1 vtap0 1
guest_add g2 host2 vtap0 2
wait_link_up host1 proxy
wait_link_up proxy host1
wait_link_up host2 proxy
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2 through the proxy"

say "from the config: host1 dials with reno, the proxy takes it with $ALT"
expect_cc host1 proxy proxy reno
expect_cc proxy host1 host1 "$ALT"
expect_cc host2 proxy proxy "$DEF"
vctl host1 show config | grep -qx "link proxy $(addr proxy):$PORT congestion reno" ||
	fail "host1's show config lacks the link's congestion: $(vctl host1 show config | grep '^link')"

say "at run time: set-link on both ends, then back to the default"
vctl host1 set-link proxy congestion "$ALT" || fail "set-link proxy congestion $ALT failed"
expect_cc host1 proxy proxy "$ALT"
vctl proxy set-link host1 congestion reno || fail "set-link host1 congestion reno failed"
expect_cc proxy host1 host1 reno
vctl host1 set-link proxy congestion default || fail "set-link proxy congestion default failed"
expect_cc host1 proxy proxy "$DEF"

say "a congestion control the kernel does not have"
out=$(vctl host1 set-link proxy congestion nosuchcc 2>&1) &&
	fail "set-link with an unknown congestion control succeeded: $out"
grep -q "the kernel has no TCP congestion control of that name" <<<"$out" ||
	fail "unexpected error for an unknown congestion control: $out"
proc_running "${D_PID[host1]}" || fail "host1's vnetd died on a bad set-link"
link_up host1 proxy || fail "host1's link went down on a bad set-link"
expect_cc host1 proxy proxy "$DEF"
# At start it is a configuration error, with file and line.
printf 'node x\nlink y 127.0.0.1:1 congestion nosuchcc\n' >"$TMPD/bad.conf"
out=$("$VNETD" -n -f "$TMPD/bad.conf" 2>&1) && fail "vnetd -n accepted an unknown congestion control"
grep -q "bad.conf:2: link y: congestion nosuchcc: the kernel has no TCP congestion control" <<<"$out" ||
	fail "vnetd -n: unexpected message: $out"

say "a new connection gets the link's congestion control too"
vctl host1 set-link proxy congestion reno || fail "set-link proxy congestion reno failed"
vnetd_stop proxy || fail "the proxy's vnetd did not exit cleanly"
vnetd_restart proxy
wait_link_up host1 proxy 40
wait_link_up proxy host1 5
# The restarted proxy's config has set-link host1 congestion ALT again.
expect_cc host1 proxy proxy reno
expect_cc proxy host1 host1 "$ALT"
wait_link_up host2 proxy 40
out=$(in_guest g1 ping -n -c 5 -i 0.2 -W 1 "$IP2") || fail "ping failed: $out"
grep -q ' 5 received' <<<"$out" || fail "ping lost replies: $out"
pass
