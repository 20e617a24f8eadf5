#!/bin/bash
#
# The configuration and the control socket: `vnetd -n` accepts a valid
# config and reports every bad line as FILE:LINE: message; `show config`
# prints a config that checks and loads into the same state; a bad control
# command fails cleanly and the daemon lives on; a stale socket is replaced;
# a second daemon on a live socket is refused.  The first part needs no root.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_binaries

G1=02:00:00:00:00:01
GOOD=$TMPD/good.conf
cat >"$GOOD" <<CONF
# a host with everything in it
node alpha
network testnet
listen *:$PORT allow 10.66.0.0/24
keepalive 5
learn yes
interface guest tap vtap0
link peer 10.66.0.9:$PORT
route $G1 any link peer
route not-$G1 any interface guest
route any ff:ff:ff:ff:ff:ff interface guest
CONF

say "vnetd -n on a valid config: exit 0, one warning for the plain listener"
rc=0
err=$("$VNETD" -n -f "$GOOD" 2>&1) || rc=$?
((rc == 0)) || fail "vnetd -n rejected a valid config (exit $rc): $err"
want="$GOOD:4: warning: listen *:$PORT is plain TCP on a non-loopback address: anyone at an allowed address can join the network unauthenticated and unencrypted; use tls"
[[ $err == "$want" ]] || fail "vnetd -n printed '$err', not the warning '$want'"
LOOP=$TMPD/loopback.conf
printf 'node alpha\nlisten 127.0.0.1:%d\nlisten [::1]:%d\n' "$PORT" "$PORT" >"$LOOP"
rc=0
err=$("$VNETD" -n -f "$LOOP" 2>&1) || rc=$?
((rc == 0)) || fail "vnetd -n rejected a loopback listener (exit $rc): $err"
[[ -z $err ]] || fail "vnetd -n warned about plain listeners on loopback: $err"
NOALLOW=$TMPD/noallow.conf
printf 'node alpha\nlisten 10.1.1.1:%d\n' "$PORT" >"$NOALLOW"
rc=0
err=$("$VNETD" -n -f "$NOALLOW" 2>&1) || rc=$?
((rc == 0)) || fail "vnetd -n rejected a plain listener without allow list (exit $rc): $err"
[[ $err == "$NOALLOW:2: warning: listen 10.1.1.1:$PORT is plain TCP on a non-loopback address and has no allow list: it accepts loopback only; use tls, or allow the peers' addresses" ]] ||
	fail "vnetd -n said '$err' about a plain listener without an allow list"

say "vnetd -n on a config with bad lines"
BAD=$TMPD/bad.conf
cat >"$BAD" <<'CONF'
# line 1
node alpha
lnk foo 10.0.0.1:7870
link x 10.0.0.1:0

route any zz link x
learn maybe
keepalive 0
link y
CONF
expected="$BAD:3: unknown statement 'lnk'
$BAD:4: link: invalid port '0' (1..65535)
$BAD:6: route: invalid MAC address 'zz'
$BAD:7: learn: invalid value 'maybe' (expected yes or no)
$BAD:8: keepalive: invalid seconds '0' (1..3600)
$BAD:9: link: expected NAME HOST:PORT"
rc=0
out=$("$VNETD" -n -f "$BAD" 2>"$TMPD/bad.err") || rc=$?
((rc == 1)) || fail "vnetd -n exited $rc on a bad config, not 1"
[[ -z $out ]] || fail "vnetd -n printed on stdout: $out"
got=$(cat "$TMPD/bad.err")
[[ $got == "$expected" ]] || fail "vnetd -n reported:
$got
expected:
$expected"

say "only a regular file is a configuration"
mkfifo "$TMPD/fifo.conf"
for f in "$TMPD/fifo.conf" /dev/zero "$TMPD"; do
	rc=0
	# timeout: a FIFO read as a file would wait for a writer for ever.
	err=$(timeout 10 "$VNETD" -n -f "$f" 2>&1) || rc=$?
	((rc == 1)) || fail "vnetd -n -f $f exited $rc, not 1 ($err)"
	[[ $err == "$f: not a regular file ("*")" ]] || fail "vnetd -n -f $f said '$err'"
	say "$err"
done

say "a line is bounded while it is read"
# 100 MB without a newline, read with less than 64 MB resident (the most
# the process ever held, from getrusage); the line is reported where it
# stands and the lines after it are still checked.
LONG=$TMPD/long.conf
{
	echo "node alpha"
	head -c $((100 * 1024 * 1024)) /dev/zero | tr '\0' x
	echo
	echo "keepalive 0"
} >"$LONG"
rc=0
maxrss=$(python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stderr=open(sys.argv[-1] + ".err", "w"))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r.returncode)' "$VNETD" -n -f "$LONG") || rc=$?
err=$(cat "$LONG.err")
((rc == 1)) || fail "vnetd -n on a 100 MB line exited $rc, not 1 ($err)"
expected="$LONG:2: line too long (more than 4096 characters)
$LONG:3: keepalive: invalid seconds '0' (1..3600)"
[[ $err == "$expected" ]] || fail "vnetd -n on a 100 MB line said '$err'"
say "it held at most $maxrss KiB"
((maxrss < 65536)) || fail "vnetd -n held $maxrss KiB to read a 100 MB line"

require_root

say "show config of a running daemon"
node_add c1 1
node_add c2 2
vnetd_start_file c1 "$GOOD"
vctl c1 show config >"$TMPD/shown.conf" || fail "show config failed"
cat "$TMPD/shown.conf"
# Every statement of the file is in the running state, in the same form.
mapfile -t lines < <(grep -v '^#' "$GOOD")
for line in "${lines[@]}"; do
	grep -qxF "$line" "$TMPD/shown.conf" || fail "show config lacks '$line'"
done
grep -qxF "control ${D_SOCK[c1]}" "$TMPD/shown.conf" || fail "show config lacks the control socket"
rc=0
err=$("$VNETD" -n -f "$TMPD/shown.conf" 2>&1) || rc=$?
((rc == 0)) || fail "vnetd -n rejected the output of show config (exit $rc): $err"

mode=$(stat -c %a "${D_SOCK[c1]}")
[[ $mode == 600 ]] || fail "the control socket has mode $mode, not 600"

say "a plain statement over vnetctl is the add- form"
vctl c1 link other 10.66.0.8:$PORT || fail "vnetctl link other ... failed"
[[ $(link_field c1 other peer) == "10.66.0.8:$PORT" ]] || fail "link other is not listed"
vctl c1 del-link other || fail "del-link other failed"
if link_field c1 other state >/dev/null 2>&1; then
	fail "link other is still listed after del-link"
fi

say "bad control commands"
c1pid=${D_PID[c1]}
rc=0
out=$(vctl c1 add-route any zz link x 2>"$TMPD/ctl.err") || rc=$?
((rc == 1)) || fail "vnetctl add-route with a bad MAC exited $rc, not 1"
[[ -z $out ]] || fail "vnetctl printed on stdout: $out"
got=$(cat "$TMPD/ctl.err")
[[ $got == "vnetctl: add-route: invalid MAC address 'zz'
usage: vnetctl add-route SRC DST link|interface NAME" ]] ||
	fail "vnetctl's error was '$got'"
vctl_daemon_ready c1 || fail "the daemon does not answer after a bad command"
proc_running "$c1pid" || fail "the daemon died"

# one_error WHAT: the last vnetctl failed with exit 1 and one line on stderr
# (a syntax error adds the verb's usage on a second).
one_error() {
	((rc == 1)) || fail "$1 exited $rc, not 1"
	if (($(grep -vc '^usage: vnetctl ' "$TMPD/ctl.err") != 1)) || ! grep -q '^vnetctl: ' "$TMPD/ctl.err"; then
		fail "$1: the error is not one line: $(cat "$TMPD/ctl.err")"
	fi
	say "$1: $(cat "$TMPD/ctl.err")"
}
rc=0
vctl c1 del-route any 02:00:00:00:00:99 link peer 2>"$TMPD/ctl.err" || rc=$?
one_error "del-route of a route that does not exist"
rc=0
vctl c1 del-link nosuchlink 2>"$TMPD/ctl.err" || rc=$?
one_error "del-link of a link that does not exist"
rc=0
vctl c1 show nonsense 2>"$TMPD/ctl.err" || rc=$?
one_error "show nonsense"
vctl_daemon_ready c1 || fail "the daemon does not answer after the bad commands"
vctl c1 show config >"$TMPD/after.conf" || fail "show config failed"
diff -u "$TMPD/shown.conf" "$TMPD/after.conf" || fail "the failed commands changed the state"

say "SIGTERM: exit 0, socket removed"
rc=0
vnetd_stop c1 || rc=$?
((rc == 0)) || fail "vnetd exited $rc on SIGTERM"
[[ ! -e ${D_SOCK[c1]} ]] || fail "vnetd left its socket behind"

say "show config loaded into a second daemon"
# On the same socket path as the first: -s overrides `control`, and the
# output must match line for line.
vnetd_start_file c2 "$TMPD/shown.conf" "${D_SOCK[c1]}"
vctl c2 show config >"$TMPD/shown2.conf" || fail "show config on the second daemon failed"
diff -u "$TMPD/shown.conf" "$TMPD/shown2.conf" ||
	fail "a daemon loaded from show config shows another config"

say "a stale socket is replaced"
c2pid=${D_PID[c2]}
kill -KILL "$c2pid"
# 2>/dev/null: bash reports "Killed" when it reaps the job.
wait_for 10 proc_gone "$c2pid" 2>/dev/null || fail "vnetd did not die of SIGKILL"
wait "$c2pid" 2>/dev/null || true
[[ -S ${D_SOCK[c2]} ]] || fail "no socket left behind by the killed daemon"
if vctl_ok "${D_SOCK[c2]}"; then
	fail "a dead daemon's socket answers"
fi
vnetd_restart c2

say "a second daemon on a live socket is refused"
printf 'node other\n' >"$TMPD/other.conf"
rc=0
timeout 10 ip netns exec "$(ns c1)" "$VNETD" -F -f "$TMPD/other.conf" -s "${D_SOCK[c2]}" \
	>"$TMPD/second.out" 2>&1 || rc=$?
((rc == 1)) || fail "a second daemon on a live socket exited $rc, not 1: $(cat "$TMPD/second.out")"
[[ -s $TMPD/second.out ]] || fail "the refused daemon said nothing"
say "refused: $(head -n 1 "$TMPD/second.out")"
vctl_daemon_ready c2 || fail "the first daemon stopped answering"
vctl c2 show config | grep -qxF 'node alpha' || fail "the socket now leads to another daemon"

say "peers of another network, or with our own name, are refused"
node_add c3 3
vnetd_start c3 "node beta
network othernet
link alpha $(addr c2):$PORT"
wait_for 10 stat_at_least c2 refused 1 || fail "alpha did not refuse a peer of another network"
link_not_up c3 alpha || fail "a link between two networks came up"
grep -q 'refused.*network' "${D_LOG[c2]}" || fail "no log line says why the peer was refused"
node_add c4 4
vnetd_start c4 "node alpha
network testnet
link other $(addr c2):$PORT"
wait_for 10 stat_at_least c2 refused 2 || fail "alpha did not refuse a peer named alpha"
link_not_up c4 other || fail "a link to a peer with the same node name came up"
n=$(vctl c2 -t show links | awk -F'\t' '$2 == "up"' | wc -l)
((n == 0)) || fail "alpha has $n links up after refusing its peers"
pass
