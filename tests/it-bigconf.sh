#!/bin/bash
#
# A big configuration: 50,000 routes besides the four between two guests.
# vnetd -n accepts it and names a repeated route by both its lines; the
# daemon starts with it; while guest 1 pings guest 2 through the daemon
# every 5 ms, the file is reloaded three times (1% of the routes replaced
# with vnetctl reload, the same file again by SIGHUP, and back by vnetctl
# reload with a SIGHUP during it): no echo is lost, vnetctl reports exactly
# the changes, and afterwards the daemon's routes are the file's, no more,
# no fewer.  (How long each part takes is bench/config-scale's business.)
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

ROUTES=50000
CHANGED=$((ROUTES / 100))

# conf VARIANT: the file; in variant 1 every 100th route has another MAC.
conf() {
	awk -v n="$ROUTES" -v changed="$1" 'BEGIN {
		print "node big"
		print "interface i1 tap vb1"
		print "interface i2 tap vb2"
		print "route any 02:00:00:00:00:01 interface i1"
		print "route any 02:00:00:00:00:02 interface i2"
		print "route any ff:ff:ff:ff:ff:ff interface i1"
		print "route any ff:ff:ff:ff:ff:ff interface i2"
		for (i = 0; i < n; i++)
			printf "route any 02:%02x:00:%02x:%02x:%02x link l%d\n",
			    (changed && i % 100 == 0) ? 2 : 1,
			    int(i / 65536) % 256, int(i / 256) % 256, i % 256,
			    i % 50
	}'
}
conf 0 >"$TMPD/a.conf"
conf 1 >"$TMPD/b.conf"

say "vnetd -n: the file is fine; a route given twice is named by its lines"
"$VNETD" -n -f "$TMPD/a.conf" || fail "vnetd -n refused the big file"
cp "$TMPD/a.conf" "$TMPD/dup.conf"
sed -n 30000p "$TMPD/a.conf" >>"$TMPD/dup.conf"
last=$(wc -l <"$TMPD/dup.conf")
if "$VNETD" -n -f "$TMPD/dup.conf" 2>"$TMPD/dup.err"; then
	fail "vnetd -n accepted a route given twice"
fi
# The one error, beside the file's warnings (-n says everything in one run).
[[ $(grep -v ': warning: ' "$TMPD/dup.err") == "$TMPD/dup.conf:$last: route: same as line 30000" ]] ||
	fail "vnetd -n said: $(grep -v ': warning: ' "$TMPD/dup.err" | head -n 3)"

say "the daemon starts with $ROUTES routes"
mkns big
cp "$TMPD/a.conf" "$TMPD/big.conf"
D_NS[big]=$(ns big)
D_SOCK[big]=$TMPD/big.sock
D_CONF[big]=$TMPD/big.conf
D_LOG[big]=$TMPD/big.log
ip netns exec "${D_NS[big]}" "$VNETD" -F -f "$TMPD/big.conf" -s "$TMPD/big.sock" \
	>"$TMPD/big.log" 2>&1 {LIB_STDOUT}>&- {LIB_STDERR}>&- &
D_PID[big]=$!
STARTED_PIDS+=("${D_PID[big]}")
wait_for 60 vctl_daemon_ready big || fail "vnetd did not start with the big file"
guest_add g1 big vb1 1
guest_add g2 big vb2 2
wait_for 10 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"

# routes_are FILE: the daemon's routes are exactly FILE's.
routes_are() {
	diff <(grep '^route ' "$1" | sort) <(vctl big show config | grep '^route ' | sort) \
		>"$TMPD/routes.diff"
}
routes_are "$TMPD/a.conf" || fail "the routes at start are not the file's: $(head -n 4 "$TMPD/routes.diff")"

say "reloads while guest 1 pings guest 2 every 5 ms"
in_guest g1 ping -n -i 0.005 -c 3000 -W 2 "$(guest_ip 2)" >"$TMPD/ping.log" 2>&1 &
ping_pid=$!
EXTRA_PIDS+=("$ping_pid")
replies() { grep -c 'bytes from' "$TMPD/ping.log" || true; }
wait_for 10 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping.log') >= 20 ))" ||
	fail "the ping does not get going: $(tail -n 3 "$TMPD/ping.log")"

# 1% of the routes replaced: each old one removed, each new one added.
cp "$TMPD/b.conf" "$TMPD/big.conf"
vctl big reload >"$TMPD/reload1.out" || fail "reload 1 failed: $(tail -n 3 "$TMPD/reload1.out")"
[[ $(grep -c '^del-route ' "$TMPD/reload1.out") == "$CHANGED" ]] ||
	fail "reload 1 removed $(grep -c '^del-route ' "$TMPD/reload1.out") routes, not $CHANGED"
[[ $(grep -c '^route ' "$TMPD/reload1.out") == "$CHANGED" ]] ||
	fail "reload 1 added $(grep -c '^route ' "$TMPD/reload1.out") routes, not $CHANGED"
[[ $(wc -l <"$TMPD/reload1.out") == $((2 * CHANGED)) ]] ||
	fail "reload 1 reported more than the routes: $(grep -v route "$TMPD/reload1.out" | head -n 3)"
diff <(grep '^del-route ' "$TMPD/reload1.out" | sed 's/^del-//' | sort) \
	<(grep '^route any 02:01:' "$TMPD/a.conf" | grep -vxFf "$TMPD/b.conf" | sort) >/dev/null ||
	fail "reload 1 removed other routes than those the file lost"
routes_are "$TMPD/big.conf" || fail "after reload 1 the routes are not the file's: $(head -n 4 "$TMPD/routes.diff")"
n=$(replies)
wait_for 10 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping.log') >= $n + 20 ))" ||
	fail "the ping stopped after reload 1"

# The same file by SIGHUP: nothing changes.
kill -HUP "${D_PID[big]}"
wait_for 60 grep -q "big.conf: 0 changes" "$TMPD/big.log" || fail "the SIGHUP reload did not finish"
routes_are "$TMPD/big.conf" || fail "after the SIGHUP the routes are not the file's"

# Back, with a SIGHUP during the reload: it is done once more afterwards.
cp "$TMPD/a.conf" "$TMPD/big.conf"
vctl big reload >"$TMPD/reload2.out" &
reload_pid=$!
wait_for 10 bash -c "(( \$(grep -c 'control: reload' '$TMPD/big.log') >= 2 ))" ||
	fail "reload 2 did not start"
kill -HUP "${D_PID[big]}"
wait "$reload_pid" || fail "reload 2 failed: $(tail -n 3 "$TMPD/reload2.out")"
[[ $(grep -c '^route ' "$TMPD/reload2.out") == "$CHANGED" ]] ||
	fail "reload 2 added $(grep -c '^route ' "$TMPD/reload2.out") routes, not $CHANGED"
wait_for 60 bash -c "(( \$(grep -c 'big.conf: 0 changes' '$TMPD/big.log') >= 2 ))" ||
	fail "the SIGHUP during reload 2 was not followed by a reload"
routes_are "$TMPD/a.conf" || fail "after reload 2 the routes are not the file's: $(head -n 4 "$TMPD/routes.diff")"
vctl big reload >"$TMPD/reload3.out" || fail "reload 3 failed"
[[ ! -s $TMPD/reload3.out ]] || fail "a reload of the same file changed: $(head -n 3 "$TMPD/reload3.out")"

wait_for 30 proc_gone "$ping_pid" || fail "the ping did not end"
wait "$ping_pid" || true
tail -n 2 "$TMPD/ping.log"
grep -q '3000 packets transmitted, 3000 received' "$TMPD/ping.log" ||
	fail "echoes were lost during the reloads: $(grep 'packets transmitted' "$TMPD/ping.log")"
wait_for 5 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2 after the reloads"
pass
