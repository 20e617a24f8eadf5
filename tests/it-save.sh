#!/bin/bash
#
# `save FILE` and who may write where.  The daemon runs as root with a
# control-group; a member of that group may save only next to the
# configuration, under a name that begins with its name, and never through
# a symbolic link or over anything but a regular file.  Root may save
# anywhere, but not through a symbolic link either.  $TMPD/etc stands for
# /etc: a root-only file there must stay as it is.
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
pass
