#!/bin/bash
#
# `save FILE` and who may write where.  The daemon runs as root with a
# control-group; a member of that group may save only next to the
# configuration, under a name that begins with its name, and never through
# a symbolic link or over anything but a regular file.  Root may save
# anywhere, but not through a symbolic link either.  $TMPD/etc stands for
# /etc: a root-only file there must stay as it is.  And save keeps the
# operator's file as written: comments, blank lines, order; a statement
# changed at run time replaces its line, removed ones go, new ones come at
# the end, defaults the file did not have stay out; the file starts the
# same state again, and saved twice or to a new file it is the same.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
getent passwd daemon >/dev/null || skip "no user daemon"
getent group nogroup >/dev/null || skip "no group nogroup"

chmod 711 "$TMPD"
ETC=$TMPD/etc
CONFDIR=$TMPD/vnet
mkdir "$ETC" "$CONFDIR"
echo "root:secret" >"$ETC/shadow"
chmod 600 "$ETC/shadow"
CONF=$CONFDIR/vnetd.conf
printf 'node s\ncontrol-group nogroup\nroute any 02:00:00:00:00:01 link x\n' >"$CONF"
node_add s 1
vnetd_start_file s "$CONF"

# as_member ARGS...: vnetctl as user daemon, group nogroup.
as_member() {
	setpriv --reuid=daemon --regid=nogroup --clear-groups "$VNETCTL" -s "${D_SOCK[s]}" "$@"
}
# refused WHO FILE PATTERN: save FILE fails for WHO (as_member or as_root)
# with an error matching PATTERN, and FILE is not written.
refused() {
	local who=$1 file=$2 pat=$3 rc=0 before=""
	[[ -e $file || -L $file ]] && before=$(stat -c '%i %s %Y' "$file")
	"$who" save "$file" 2>"$TMPD/err" || rc=$?
	((rc == 1)) || fail "save $file as $who: exit $rc, not 1"
	grep -q -- "$pat" "$TMPD/err" || fail "save $file as $who: '$(cat "$TMPD/err")'"
	[[ -z $before ]] || [[ $(stat -c '%i %s %Y' "$file") == "$before" ]] ||
		fail "save $file as $who changed it"
	[[ -n $before ]] || [[ ! -e $file ]] || fail "save $file as $who created it"
	say "$who save $file: $(cat "$TMPD/err")"
}
saved() { grep -q '^route any 02:00:00:00:00:01 link x$' "$1"; }

say "a member of control-group"
refused as_member "$ETC/shadow" "only root may save elsewhere than $CONFDIR/vnetd.conf\*"
[[ $(cat "$ETC/shadow") == "root:secret" ]] || fail "$ETC/shadow was overwritten"
refused as_member "$ETC/new.conf" "only root may save elsewhere"
refused as_member "$CONFDIR/../etc/vnetd.conf" "only root may save elsewhere"
refused as_member "$CONFDIR/other.conf" "only root may save elsewhere"
ln -s "$ETC" "$CONFDIR/etc"
refused as_member "$CONFDIR/etc/vnetd.conf" "only root may save elsewhere"
ln -s "$ETC/shadow" "$CONFDIR/vnetd.conf.link"
refused as_member "$CONFDIR/vnetd.conf.link" "not a regular file (a symbolic link)"
mkfifo "$CONFDIR/vnetd.conf.fifo"
refused as_member "$CONFDIR/vnetd.conf.fifo" "not a regular file"
as_member save "$CONFDIR/vnetd.conf.old" || fail "a member cannot save next to the configuration"
saved "$CONFDIR/vnetd.conf.old" || fail "vnetd.conf.old does not hold the running state"
as_member save || fail "a member cannot save the configuration itself"
saved "$CONF" || fail "the configuration does not hold the running state"

say "root"
# shellcheck disable=SC2317 # called through refused
as_root() { vctl s "$@"; }
refused as_root "$CONFDIR/vnetd.conf.link" "not a regular file (a symbolic link)"
[[ $(cat "$ETC/shadow") == "root:secret" ]] || fail "$ETC/shadow was overwritten"
vctl s save "$ETC/vnetd.conf" || fail "root cannot save elsewhere"
saved "$ETC/vnetd.conf" || fail "root's save elsewhere does not hold the running state"
[[ $(cat "$ETC/shadow") == "root:secret" ]] || fail "$ETC/shadow was overwritten"

say "save keeps the operator's file as written"
OP=$CONFDIR/op.conf
cat >"$OP" <<'EOF'
# vnetd.conf of node op: the operator's comments stay.
node op
control-group nogroup

# Links
link far1 10.66.0.9:7870     # the first remote host
link far2 10.66.0.8:7870

# Routes
route any 02:00:00:00:00:01 link far1
route any 02:00:00:00:00:02 link far2
learn yes
EOF
node_add op 2
vnetd_start_file op "$OP"
vctl op set-link far1 rate 10mbit
vctl op del-route any 02:00:00:00:00:02 link far2
vctl op del-link far2
vctl op add-route any 02:00:00:00:00:03 link far1
vctl op learn no
vctl op keepalive 20
before=$(vctl op show config)
vctl op save || fail "save over the operator's file failed"
# Unchanged lines as written, a changed one in its place with its comment,
# removed ones gone (their comments stay), the new ones at the end, and no
# default that the file did not have.
diff -u - "$OP" <<'EOF' || fail "save did not keep the operator's file"
# vnetd.conf of node op: the operator's comments stay.
node op
control-group nogroup

# Links
link far1 10.66.0.9:7870 rate 10mbit  # the first remote host

# Routes
route any 02:00:00:00:00:01 link far1
learn no
keepalive 20
route any 02:00:00:00:00:03 link far1
EOF
grep -q 'running state saved to .*op.conf: 3 statements kept, 2 changed, 2 removed, 2 added' "${D_LOG[op]}" ||
	fail "save's log line: $(grep 'saved to' "${D_LOG[op]}")"
"$VNETD" -n -f "$OP" || fail "vnetd -n refuses the saved file"
vnetd_stop op
vnetd_restart op
[[ $(vctl op show config) == "$before" ]] ||
	fail "the saved file starts another state: $(diff <(printf '%s\n' "$before") <(vctl op show config))"
vctl op save || fail "a second save failed"
vctl op save "$CONFDIR/op.conf.copy" || fail "save to a new file failed"
cmp -s "$OP" "$CONFDIR/op.conf.copy" || fail "save to a new file is not the operator's file: $(diff "$OP" "$CONFDIR/op.conf.copy")"
pass
