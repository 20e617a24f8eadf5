#!/bin/bash
#
# `vnetctl reload -n` prints the changes a reload would apply and applies
# none; `show config` says (on standard error) when the running state is
# not the file's, so that a reload would undo changes made at run time.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

node_add a 1
vnetd_start a "node a
network rn
route any 02:00:00:00:00:01 link far"
CONF=${D_CONF[a]}

say "the running state is the file's: nothing to say"
[[ -z $(vctl a reload -n) ]] || fail "reload -n right after start: $(vctl a reload -n)"
vctl a show config 2>"$TMPD/note" >/dev/null
[[ ! -s $TMPD/note ]] || fail "show config notes a difference at start: $(cat "$TMPD/note")"

say "a change at run time: show config says so, reload -n shows the undoing"
vctl a add-route any 02:00:00:00:00:02 link far
vctl a show config 2>"$TMPD/note" >"$TMPD/shown"
grep -qxF 'route any 02:00:00:00:00:02 link far' "$TMPD/shown" || fail "show config lacks the new route"
grep -qF "note: the running state differs from $CONF: reload would make 1 change (vnetctl reload -n lists them" "$TMPD/note" ||
	fail "show config did not note the difference: '$(cat "$TMPD/note")'"
out=$(vctl a reload -n)
[[ $out == "del-route any 02:00:00:00:00:02 link far" ]] || fail "reload -n printed '$out'"
vctl a show routes | grep -q '02:00:00:00:00:02' || fail "reload -n removed the route"

say "an edited file: both directions, still nothing applied"
printf 'learn yes\nlink far 10.66.0.9:%d\n' "$PORT" >>"$CONF"
out=$(vctl a reload -n | sort)
want=$(printf '%s\n' "del-route any 02:00:00:00:00:02 link far" "learn yes" "link far 10.66.0.9:$PORT" | sort)
[[ $out == "$want" ]] || fail "reload -n printed '$out', not '$want'"
vctl a -t show links | grep -q '^far' && fail "reload -n made the link"
vctl a show config | grep -qx 'learn no' || fail "reload -n changed learn"

say "a file with an error: reload -n says what reload would say"
printf 'lnk x\n' >>"$CONF"
rc=0
vctl a reload -n >"$TMPD/out" 2>"$TMPD/err" || rc=$?
((rc == 1)) || fail "reload -n of a bad file exited $rc"
grep -qF "$CONF:6: unknown statement 'lnk'" "$TMPD/err" || fail "reload -n: no FILE:LINE error: $(cat "$TMPD/err")"
grep -qF "reload -n: 1 error in $CONF: reload would change nothing" "$TMPD/err" ||
	fail "reload -n: no summary: $(cat "$TMPD/err")"
vctl a show config 2>"$TMPD/note" >/dev/null
grep -qF "note: reload -n: 1 error in $CONF" "$TMPD/note" || fail "show config did not note the bad file"

say "after the reload: no difference left"
sed -i '$d' "$CONF"
vctl a reload >/dev/null
[[ -z $(vctl a reload -n) ]] || fail "reload -n after a reload: $(vctl a reload -n)"
vctl a show config 2>"$TMPD/note" >/dev/null
[[ ! -s $TMPD/note ]] || fail "show config notes a difference after reload: $(cat "$TMPD/note")"
grep -q 'control: reload -n' "${D_LOG[a]}" || fail "reload -n is not logged"
grep -q 'reload: learn yes' "${D_LOG[a]}" || fail "the reload was not logged"
[[ $(grep -c 'reload: learn yes' "${D_LOG[a]}") == 1 ]] || fail "reload -n logged changes as applied"
say "above 10,000 routes show config does not compare (it would pause forwarding)"
node_add big 2
{
	printf 'node big\nnetwork rn\n'
	for ((i = 0; i < 10001; i++)); do
		printf 'route any 02:00:00:%02x:%02x:01 link far\n' $((i >> 8)) $((i & 255))
	done
} >"$TMPD/big.conf"
vnetd_start_file big "$TMPD/big.conf"
vctl big show config 2>"$TMPD/note" >/dev/null
grep -qF "note: not compared with $TMPD/big.conf (more than 10000 routes): vnetctl reload -n compares" "$TMPD/note" ||
	fail "show config with 10,001 routes noted '$(cat "$TMPD/note")'"
[[ -z $(vctl big reload -n) ]] || fail "reload -n with 10,001 routes found changes"
pass
