#!/bin/bash
#
# vnetd as a service: without -F it detaches (a new session, no controlling
# terminal, not a session leader, in /, standard descriptors on /dev/null),
# and returns only once the daemon runs and its pid file is written; a
# daemon that cannot start says so and exits 1.  SIGHUP reloads a
# configuration given by a relative path; SIGTERM removes the pid file and
# the socket.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

node_add svc 1
NS=$(ns svc)
mkdir "$TMPD/etc"
printf 'node svc\nlisten %s:%d\n' "$(addr svc)" "$PORT" >"$TMPD/etc/svc.conf"
SOCK=$TMPD/svc.sock
PIDFILE=$TMPD/svc.pid

say "start as a daemon"
rc=0
(cd "$TMPD" && ip netns exec "$NS" "$VNETD" -f etc/svc.conf -s "$SOCK" -p "$PIDFILE") \
	</dev/null >"$TMPD/start.out" 2>&1 || rc=$?
((rc == 0)) || fail "vnetd exited $rc: $(cat "$TMPD/start.out")"
# Only the configuration's warning (a plain listener without allow list).
[[ $(grep -cv ': warning: ' "$TMPD/start.out") == 0 ]] ||
	fail "vnetd printed at start: $(cat "$TMPD/start.out")"
grep -q '^vnetd: etc/svc.conf:2: warning: listen' "$TMPD/start.out" ||
	fail "vnetd did not print its configuration's warning at start"
# No waiting: the pid file and the socket are there once vnetd returns.
[[ -s $PIDFILE ]] || fail "no pid file when vnetd returned"
pid=$(cat "$PIDFILE")
STARTED_PIDS+=("$pid")
proc_running "$pid" || fail "the daemon (pid $pid) is not running"
vctl_ok "$SOCK" || fail "the daemon does not answer on its socket"
read -r tty sid <<<"$(ps -o tty=,sid= -p "$pid")"
[[ $tty == '?' ]] || fail "the daemon has the controlling terminal $tty"
((sid != pid)) || fail "the daemon is a session leader (it could acquire a terminal)"
[[ $(readlink "/proc/$pid/cwd") == / ]] || fail "the daemon runs in $(readlink "/proc/$pid/cwd"), not /"
for fd in 0 1 2; do
	[[ $(readlink "/proc/$pid/fd/$fd") == /dev/null ]] ||
		fail "the daemon's descriptor $fd is $(readlink "/proc/$pid/fd/$fd")"
done

say "SIGHUP reloads the configuration named by a relative path"
printf 'link other 10.66.0.9:%d\n' "$PORT" >>"$TMPD/etc/svc.conf"
kill -HUP "$pid"
wait_for 10 bash -c "'$VNETCTL' -s '$SOCK' -t show links | grep -q '^other'" ||
	fail "SIGHUP did not make the daemon reload"
proc_running "$pid" || fail "the daemon died of SIGHUP"

say "a daemon that cannot start says why and exits 1"
rc=0
ip netns exec "$NS" "$VNETD" -f "$TMPD/etc/svc.conf" -s "$SOCK" -p "$TMPD/second.pid" \
	</dev/null >"$TMPD/second.out" 2>&1 || rc=$?
((rc == 1)) || fail "a second daemon on the same socket exited $rc"
grep -q '^vnetd: ' "$TMPD/second.out" || fail "no reason given: $(cat "$TMPD/second.out")"
[[ ! -e $TMPD/second.pid ]] || fail "the refused daemon wrote a pid file"

say "SIGTERM"
kill -TERM "$pid"
wait_for 10 proc_gone "$pid" || fail "the daemon did not exit on SIGTERM"
[[ ! -e $PIDFILE ]] || fail "the pid file is left behind"
[[ ! -e $SOCK ]] || fail "the socket is left behind"
pass
