#!/bin/bash
#
# The Debian package: `dpkg-buildpackage -us -uc -b` builds vnet_*.deb,
# without a compiler warning under the package's flags, lintian finds no
# error in it, it installs (the README and doc/ too), the demo runs against the
# installed programs, a network's daemon runs under the command lines of
# its unit vnetd@NETWORK (check, start, reload), and the package is
# removed (purged) leaving none of its files.  Skipped where the package
# tools are missing or a vnet package is already installed.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
SRC=$(cd "$LIB_DIR/.." && pwd)
# It builds a tree of its own, the same whatever this one was built with:
# once, from the plain build, is enough.
grep -qa __asan_init "$VNETD" 2>/dev/null && skip "a sanitizer build: this test builds its own tree, once, from the plain build"
unset MAKEFLAGS MFLAGS MAKELEVEL
for t in dpkg-buildpackage dh lintian; do
	command -v "$t" >/dev/null || skip "$t is missing (apt-get install debhelper lintian)"
done
[[ -f $SRC/debian/control ]] || fail "no debian/ in $SRC"
if dpkg-query -W -f '${Status}' vnet 2>/dev/null | grep -q 'installed'; then
	skip "a vnet package is installed here already: not replacing it"
fi

ETC_BEFORE=0
[[ -e /etc/vnetd ]] && ETC_BEFORE=1
INSTALLED=0
deb_purge() {
	((INSTALLED)) || return 0
	dpkg --purge vnet >/dev/null 2>&1 || true
	rm -f /etc/vnetd/"$NET".conf
}
NET=t$$
trap 'rc=$?; deb_purge; (exit $rc); cleanup' EXIT

say "dpkg-buildpackage -us -uc -b"
source_copy "$SRC" "$TMPD/vnet"
# nocheck: the unit tests run on their own, from the build tree.
(cd "$TMPD/vnet" && DEB_BUILD_OPTIONS="parallel=2 nocheck" dpkg-buildpackage -us -uc -b \
	>"$TMPD/build.log" 2>&1) || fail "the package build failed: $(tail -n 30 "$TMPD/build.log")"
# The package's flags (dpkg-buildflags: _FORTIFY_SOURCE, -O2) warn of
# what a plain build does not see; the build must be as clean as that.
warnings=$(grep -E '^[^ :]+\.[ch]:[0-9]+:[0-9]+: warning:' "$TMPD/build.log" || true)
[[ -z $warnings ]] || fail "the package build warns: $warnings"
debs=("$TMPD"/vnet_*.deb)
[[ -f ${debs[0]} ]] || fail "no vnet_*.deb built: $(ls "$TMPD")"
DEB=${debs[0]}
say "built $(basename "$DEB")"

say "lintian"
lintian "$DEB" >"$TMPD/lintian.out" 2>&1 || true
cat "$TMPD/lintian.out"
! grep -q '^E: ' "$TMPD/lintian.out" || fail "lintian reports errors"

say "dpkg -i"
INSTALLED=1
dpkg -i "$DEB" >"$TMPD/install.log" 2>&1 || fail "dpkg -i failed: $(cat "$TMPD/install.log")"
for f in /usr/sbin/vnetd /usr/sbin/vnetctl /usr/sbin/vnet-ca /usr/sbin/vnet-join \
	/lib/systemd/system/vnetd.service /lib/systemd/system/vnetd@.service \
	/usr/share/man/man8/vnet-ca.8.gz /usr/share/man/man5/vnetd.conf.5.gz \
	/usr/share/bash-completion/completions/vnetctl \
	/usr/share/doc/vnet/examples/host.conf.example \
	/usr/share/doc/vnet/README /usr/share/doc/vnet/doc/guide.md \
	/usr/share/doc/vnet/doc/operations.md /usr/share/doc/vnet/doc/architecture.md \
	/usr/share/doc/vnet/doc/results/adapt.png; do
	[[ -e $f ]] || fail "the package did not install $f"
done
[[ -d /etc/vnetd ]] || fail "the package made no /etc/vnetd"
/usr/sbin/vnetd -h | grep -qF /etc/vnetd/vnetd.conf || fail "the packaged vnetd's default configuration is not /etc/vnetd/vnetd.conf"
/usr/sbin/vnetctl -h | grep -qF /run/vnetd/vnetd.sock || fail "the packaged vnetctl's default socket is not /run/vnetd/vnetd.sock"
zcat /usr/share/man/man8/vnetd.8.gz | grep -q /usr/local && fail "the packaged vnetd.8 names /usr/local"
# Every doc/ file the README names is there, under the name it gives.
for f in $(grep -oE 'doc/[a-z]+\.md' /usr/share/doc/vnet/README | sort -u); do
	[[ -f /usr/share/doc/vnet/$f ]] || fail "the README names $f, which the package does not install"
done
dpkg -L vnet | sort >"$TMPD/files"

say "the demo against the installed programs"
VNETD=/usr/sbin/vnetd VNETCTL=/usr/sbin/vnetctl VNET_CA=/usr/sbin/vnet-ca \
	bash "$LIB_DIR/demo.sh" >"$TMPD/demo.out" 2>&1 || fail "the demo failed: $(tail -n 30 "$TMPD/demo.out")"
grep -q 'OK: guest 1 reached guest 2' "$TMPD/demo.out" || fail "the demo did not reach its end"

say "vnetd@$NET under its unit's command lines"
UNIT=/lib/systemd/system/vnetd@.service
unit_cmd() { sed -n "s/^$1=//p" "$UNIT" | sed "s/%i/$NET/g"; }
start_pre=$(unit_cmd ExecStartPre)
start=$(unit_cmd ExecStart)
reload=$(unit_cmd ExecReload)
[[ -n $start_pre && -n $start && -n $reload ]] || fail "vnetd@.service lacks a command line"
[[ $start == "/usr/sbin/vnetd -F "* ]] || fail "ExecStart is '$start'"
node_add unit 1
printf 'node unit\nnetwork %s\nlearn yes\ninterface guest tap vtap0\n' "$NET" >"/etc/vnetd/$NET.conf"
# shellcheck disable=SC2086 # the unit's words
$start_pre || fail "ExecStartPre ($start_pre) failed"
mkdir -p /run/vnetd	# RuntimeDirectory=vnetd
# shellcheck disable=SC2086
ip netns exec "$(ns unit)" $start >"$TMPD/unit.log" 2>&1 &
upid=$!
EXTRA_PIDS+=("$upid")
wait_for 10 /usr/sbin/vnetctl -s "/run/vnetd/$NET.sock" show stats ||
	fail "vnetd@$NET does not answer on /run/vnetd/$NET.sock: $(cat "$TMPD/unit.log")"
/usr/sbin/vnetctl -s "/run/vnetd/$NET.sock" -t show interfaces | grep -q '^guest' ||
	fail "vnetd@$NET has no interface guest"
printf 'keepalive 7\n' >>"/etc/vnetd/$NET.conf"
# shellcheck disable=SC2086
out=$($reload) || fail "ExecReload ($reload) failed: $out"
[[ $out == "keepalive 7" ]] || fail "the reload applied '$out'"
kill -TERM "$upid"
wait_for 10 proc_gone "$upid" || fail "vnetd@$NET did not stop"
wait "$upid" || fail "vnetd@$NET exited non-zero on SIGTERM: $(cat "$TMPD/unit.log")"
rm -f "/etc/vnetd/$NET.conf"

say "dpkg --purge"
dpkg --purge vnet >"$TMPD/purge.log" 2>&1 || fail "dpkg --purge failed: $(cat "$TMPD/purge.log")"
INSTALLED=0
left=""
while read -r f; do
	[[ -d $f ]] && continue
	[[ -e $f ]] && left+=" $f"
done <"$TMPD/files"
[[ -z $left ]] || fail "files left after purge:$left"
((ETC_BEFORE)) || [[ ! -e /etc/vnetd ]] || fail "/etc/vnetd left after purge: $(ls -A /etc/vnetd)"
pass
