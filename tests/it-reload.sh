#!/bin/bash
#
# Reload: vnetctl reload and SIGHUP read the configuration again and apply
# only the difference.  A ping and an iperf3 between two guests, across links
# that did not change, run through reloads that add and remove other links,
# routes, listeners and interfaces: no echo is lost, iperf3 completes, and
# the links never reconnect.  A configuration with errors is refused whole,
# with the errors returned to vnetctl; save writes the running state as a
# configuration file that reloads to no change.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"

IP2=$(guest_ip 2)
star_start with-routes
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"

connects() {
	printf '%s %s %s\n' "$(link_field proxy host1 connects)" \
		"$(link_field proxy host2 connects)" "$(link_field host1 proxy connects)"
}
c0=$(connects)

say "traffic between the guests while the proxy and host1 reload"
in_guest g2 iperf3 -s -1 >"$TMPD/iperf3-server.log" 2>&1 &
EXTRA_PIDS+=("$!")
wait_for 10 in_guest g2 bash -c "ss -Htln | grep -q ':5201 '" || fail "iperf3 server did not start"
in_guest g1 iperf3 -c "$IP2" -t 6 >"$TMPD/iperf3.log" 2>&1 &
iperf_pid=$!
EXTRA_PIDS+=("$iperf_pid")
in_guest g1 ping -n -c 80 -i 0.1 -W 2 "$IP2" >"$TMPD/ping.log" 2>&1 &
ping_pid=$!
EXTRA_PIDS+=("$ping_pid")
wait_for 10 bash -c "(( \$(grep -c 'bytes from' '$TMPD/ping.log') >= 10 ))" ||
	fail "the ping does not get going: $(cat "$TMPD/ping.log")"

# The proxy: a link, a route, a listener and a TAP interface more; a
# keepalive changed; options for host1's link (set-link: applied to the
# connection in use, which stays).
conf=${D_CONF[proxy]}
cp "$conf" "$TMPD/proxy.conf.orig"
cat >>"$conf" <<CONF
listen $(addr proxy):$((PORT + 1))
keepalive 7
interface extra tap vx0
link ghost 10.66.0.99:$PORT
route any 02:00:00:00:00:99 link ghost
set-link host1 congestion reno
CONF
vctl proxy reload >"$TMPD/reload1.out" || fail "reload of the proxy failed"
cat "$TMPD/reload1.out"
expected="listen $(addr proxy):$((PORT + 1))
interface extra tap vx0
keepalive 7
link ghost 10.66.0.99:$PORT
set-link host1 rate none aqm fq_codel target 5ms interval 100ms congestion reno transport tcp
route any 02:00:00:00:00:99 link ghost"
[[ $(cat "$TMPD/reload1.out") == "$expected" ]] || fail "reload reported other changes than expected"
# link_cc DAEMON LINK: the congestion control its connection uses.
link_cc() { vctl "$1" -t show link "$2" | awk -F'\t' '$1 == "congestion" { print $2 }'; }
[[ $(link_cc proxy host1) == reno ]] || fail "host1's connection on the proxy uses $(link_cc proxy host1), not reno"
link_field proxy ghost state >/dev/null || fail "no link ghost after reload"
[[ $(iface_field proxy extra state) == up ]] || fail "no interface extra after reload"
vctl proxy show config | grep -qxF 'keepalive 7' || fail "keepalive did not change"

# host1, by SIGHUP: a link more.
printf 'link ghost2 10.66.0.98:%d\n' "$PORT" >>"${D_CONF[host1]}"
kill -HUP "${D_PID[host1]}"
wait_for 10 link_field host1 ghost2 state || fail "SIGHUP did not make host1 reload"
grep -q 'reload: link ghost2' "${D_LOG[host1]}" || fail "host1 did not log the change"

# And back: the proxy's additions go away again; a route the proxy had at
# start goes too, and comes back.
grep -v "ff:ff:ff:ff:ff:ff link host2" "$TMPD/proxy.conf.orig" >"$conf"
vctl proxy reload >"$TMPD/reload2.out" || fail "second reload of the proxy failed"
cat "$TMPD/reload2.out"
grep -qxF 'del-link ghost' "$TMPD/reload2.out" || fail "reload did not remove link ghost"
grep -qxF 'del-interface extra' "$TMPD/reload2.out" || fail "reload did not remove interface extra"
grep -qxF "del-listen $(addr proxy):$((PORT + 1))" "$TMPD/reload2.out" || fail "reload did not close the listener"
unset_host1="set-link host1 rate none aqm fq_codel target 5ms interval 100ms congestion default transport tcp"
grep -qxF "$unset_host1" "$TMPD/reload2.out" || fail "reload did not take host1's options back"
if grep -vxF -e 'del-route any ff:ff:ff:ff:ff:ff link host2' -e "$unset_host1" "$TMPD/reload2.out" | grep -qE 'host[12]'; then
	fail "reload touched the links in use"
fi
[[ $(link_cc proxy host1) == "$(ip netns exec "$(ns proxy)" sysctl -n net.ipv4.tcp_congestion_control)" ]] ||
	fail "host1's connection on the proxy kept $(link_cc proxy host1) after its option went"
# Unchanged, the same file (with a link's options given by set-link) is no change.
printf 'set-link proxy aqm codel
' >>"${D_CONF[host1]}"
kill -HUP "${D_PID[host1]}"
wait_for 10 grep -q 'reload: set-link proxy' "${D_LOG[host1]}" || fail "host1 did not reload the set-link"
[[ -z $(vctl host1 reload) ]] || fail "host1's unchanged file reloads to changes: $(vctl host1 reload)"
cp "$TMPD/proxy.conf.orig" "$conf"
vctl proxy reload >"$TMPD/reload3.out" || fail "third reload of the proxy failed"
[[ $(cat "$TMPD/reload3.out") == "route any ff:ff:ff:ff:ff:ff link host2" ]] ||
	fail "the third reload did: $(cat "$TMPD/reload3.out")"

wait "$ping_pid" || fail "ping failed: $(tail -n 3 "$TMPD/ping.log")"
grep -q ' 80 received, 0% packet loss' "$TMPD/ping.log" || fail "echoes were lost: $(tail -n 3 "$TMPD/ping.log")"
tail -n 2 "$TMPD/ping.log"
rc=0
wait "$iperf_pid" || rc=$?
((rc == 0)) || fail "iperf3 failed (exit $rc): $(tail -n 5 "$TMPD/iperf3.log")"
grep -q 'iperf Done' "$TMPD/iperf3.log" || fail "iperf3 did not complete: $(tail -n 5 "$TMPD/iperf3.log")"
grep -E 'sender|receiver' "$TMPD/iperf3.log"
c1=$(connects)
[[ $c1 == "$c0" ]] || fail "links reconnected during the reloads (connects $c0 -> $c1)"

say "a configuration with errors is refused whole"
before=$(vctl proxy show config)
cp "$conf" "$TMPD/proxy.conf.good"
printf 'link ghost 10.66.0.99:%d\nlnk typo\nroute any zz link x\n' "$PORT" >>"$conf"
rc=0
vctl proxy reload >"$TMPD/bad.out" 2>"$TMPD/bad.err" || rc=$?
((rc == 1)) || fail "reload of a bad configuration exited $rc"
cat "$TMPD/bad.err"
n=$(wc -l <"$conf")
grep -qxF "$conf:$((n - 1)): unknown statement 'lnk'" "$TMPD/bad.err" || fail "the first error is not reported"
grep -qxF "$conf:$n: route: invalid MAC address 'zz'" "$TMPD/bad.err" || fail "the second error is not reported"
grep -q "^vnetctl: reload: 2 errors in $conf; nothing changed$" "$TMPD/bad.err" || fail "no summary line"
[[ $(vctl proxy show config) == "$before" ]] || fail "the refused reload changed the running state"
grep -q "reload: $conf:$((n - 1)): unknown statement" "${D_LOG[proxy]}" || fail "the errors were not logged"
printf 'node renamed\n' >"$conf"
rc=0
vctl proxy reload 2>"$TMPD/bad.err" || rc=$?
((rc == 1)) || fail "reload with another node name exited $rc"
grep -q "cannot change at run time" "$TMPD/bad.err" || fail "the rename was not refused clearly: $(cat "$TMPD/bad.err")"
[[ $(vctl proxy show config) == "$before" ]] || fail "the refused rename changed the running state"
cp "$TMPD/proxy.conf.good" "$conf"

say "save"
vctl proxy add-route any 02:00:00:00:00:77 link host1 || fail "add-route failed"
mkdir "$TMPD/cwd"
(cd "$TMPD/cwd" && "$VNETCTL" -s "${D_SOCK[proxy]}" save saved.conf) || fail "save to a relative path failed"
[[ -f $TMPD/cwd/saved.conf ]] || fail "save did not write the file where vnetctl was"
"$VNETD" -n -f "$TMPD/cwd/saved.conf" || fail "the saved file does not check"
# A file there is none of yet: the configuration as written, the new route
# at its end (the reload below finds nothing else to do).
diff <(cat "$conf"; echo 'route any 02:00:00:00:00:77 link host1') "$TMPD/cwd/saved.conf" ||
	fail "the saved file is not the configuration with the new route"
vctl proxy save || fail "save to the configuration file failed"
grep -qxF 'route any 02:00:00:00:00:77 link host1' "$conf" || fail "save did not write the configuration file"
[[ -z $(vctl proxy reload) ]] || fail "reload after save changed something"
for f in "$TMPD"/.proxy.conf.*; do
	[[ ! -e $f ]] || fail "save left a temporary file: $f"
done
rc=0
vctl proxy save /nonexistent/dir/x.conf 2>"$TMPD/save.err" || rc=$?
((rc == 1)) || fail "save to a directory that does not exist exited $rc"
say "$(cat "$TMPD/save.err")"
pass
