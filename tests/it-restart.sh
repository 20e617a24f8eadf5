#!/bin/bash
#
# (c) The proxy's vnetd is stopped and started again: both hosts' links come
# back by themselves and the ping resumes; the hosts' daemons keep running.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

IP2=$(guest_ip 2)

star_start with-routes
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2 through the proxy"
h1pid=${D_PID[host1]}
h2pid=${D_PID[host2]}
ppid=${D_PID[proxy]}

say "SIGTERM to the proxy (pid $ppid)"
rc=0
vnetd_stop proxy || rc=$?
((rc == 0)) || fail "the proxy's vnetd exited with status $rc on SIGTERM"
[[ ! -e ${D_SOCK[proxy]} ]] || fail "the proxy's vnetd left its socket ${D_SOCK[proxy]}"
wait_for 15 link_not_up host1 proxy || fail "host1's link proxy stays up with the proxy gone"
wait_for 15 link_not_up host2 proxy || fail "host2's link proxy stays up with the proxy gone"
if in_guest g1 ping -n -c 1 -W 1 "$IP2" >/dev/null; then
	fail "guest 1 reached guest 2 with the proxy stopped"
fi

say "starting the proxy again"
vnetd_restart proxy
# Reconnects back off 1 s doubling (to 30 s), so allow a few rounds.
wait_link_up host1 proxy 40
wait_link_up host2 proxy 40
wait_link_up proxy host1 5
wait_link_up proxy host2 5
wait_for 15 gping g1 "$IP2" || fail "the ping did not resume after the proxy restarted"
out=$(in_guest g1 ping -n -c 3 -i 0.2 -W 1 "$IP2") || fail "ping failed: $out"
grep -q ' 3 received' <<<"$out" || fail "ping lost replies: $out"

# The hosts' daemons are the same processes as before.
for p in "$h1pid" "$h2pid"; do
	if ! proc_running "$p" || [[ $(cat /proc/"$p"/comm) != vnetd ]]; then
		fail "a host's vnetd (pid $p) is gone"
	fi
done
pass
