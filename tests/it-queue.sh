#!/bin/bash
#
# A link's `queue BYTES`: the configured size is the queue's limit (show
# link), a burst bigger than a small queue is cut by tail drops, and
# `set-link NAME queue BYTES` at run time gives a queue that takes the
# same burst whole, shown in show config.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing"

node_add a 1
node_add b 2
vnetd_start b "node b
listen $(addr b):$PORT allow $UNDERLAY
learn yes
interface guest tap vtap0"
# 10 Mbit/s and no AQM: a burst waits in the queue, or is cut by its limit.
vnetd_start a "node a
learn yes
interface guest tap vtap0
link b $(addr b):$PORT queue 256k rate 10mbit aqm off"
guest_add g1 a vtap0 1
guest_add g2 b vtap0 2
wait_link_up a b
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"

# show_link DAEMON LINK ROW: one row of `show link`.
show_link() {
	vctl "$1" -t show link "$2" | awk -F'\t' -v n="$3" '$1 == n { print $2 }'
}

limit=$(show_link a b queue_limit)
say "queue 256k: the queue's limit is $limit bytes"
((limit == 262144)) || fail "queue 256k gave a limit of $limit bytes"

say "a burst of 2.8 MB against 256 KiB"
d0=$(show_link a b tail_drops)
sent=$(udp_burst g1 "$(guest_ip 2)" 2000)
queues_drain "a b"
d1=$(show_link a b tail_drops)
say "sent $sent, tail drops $d0 -> $d1"
((d1 - d0 >= 100)) || fail "a 256 KiB queue took a 2.8 MB burst with $((d1 - d0)) drops"

say "set-link b queue 16m at run time"
vctl a set-link b queue 16m || fail "set-link queue failed"
limit=$(show_link a b queue_limit)
((limit == 16777216)) || fail "set-link queue 16m gave a limit of $limit bytes"
vctl a show config | grep -q "^link b $(addr b):$PORT queue 16m" ||
	fail "show config does not give the new queue: $(vctl a show config | grep '^link')"
link_up a b || fail "the link went down with its new queue"
sent=$(udp_burst g1 "$(guest_ip 2)" 2000)
queues_drain "a b"
d2=$(show_link a b tail_drops)
say "sent $sent, tail drops $d1 -> $d2"
((d2 == d1)) || fail "a 16 MiB queue dropped $((d2 - d1)) frames of a 2.8 MB burst"
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2 after the bursts"

say "set-link queue names a link that exists; a configuration gives it on the link"
rc=0
vctl a set-link nosuch queue 1m 2>"$TMPD/err" || rc=$?
((rc == 1)) || fail "set-link of no link: exit $rc, not 1"
grep -q "no such link" "$TMPD/err" || fail "set-link of no link: $(cat "$TMPD/err")"
printf 'node a\nlink b %s:%d\nset-link b queue 1m\n' "$(addr b)" "$PORT" >"$TMPD/sl.conf"
rc=0
err=$("$VNETD" -n -f "$TMPD/sl.conf" 2>&1) || rc=$?
((rc == 1)) || fail "vnetd -n on set-link queue: exit $rc, not 1"
[[ $err == "$TMPD/sl.conf:3: set-link b: queue is given on the link statement in a configuration" ]] ||
	fail "vnetd -n on set-link queue: '$err'"
pass
