#!/bin/bash
#
# make install into a fresh prefix, in a tree already built with another:
# what uses the default paths is rebuilt (and only that), the programs,
# manual pages, examples, units and completion name the new prefix, the
# README and doc/ are installed (and uninstalled), the
# configuration and run directories exist, and the installed vnetd and
# vnetctl find each other on the default socket, in a directory vnetd
# makes when it is missing.  Needs no root.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
SRC=$(cd "$LIB_DIR/.." && pwd)
# It builds a tree of its own, the same whatever this one was built with:
# once, from the plain build, is enough.
grep -qa __asan_init "$VNETD" 2>/dev/null && skip "a sanitizer build: this test builds its own tree, once, from the plain build"
# A make of its own, not a sub-make of the one running the tests.
unset MAKEFLAGS MFLAGS MAKELEVEL
[[ -x $SRC/configure ]] || skip "no configure script in $SRC (autoreconf -fi)"

say "a copy of the source tree"
TREE=$TMPD/tree
source_copy "$SRC" "$TREE"

P1=$TMPD/p1
P2=$TMPD/p2
build() {
	(cd "$TREE" && ./configure --prefix="$1" >"$TMPD/configure.log" 2>&1 &&
		make -j2 >"$TMPD/make.log" 2>&1) ||
		fail "building with prefix $1: $(tail -n 20 "$TMPD/make.log" "$TMPD/configure.log")"
}
say "built with --prefix=$P1"
build "$P1"
stamp() { stat -c %Y.%y "$TREE/$1"; }
lib_before=$(stamp src/stmt.o)
vnetd_before=$(stamp src/vnetd.o)
"$TREE/src/vnetd" -h | grep -qF "$P1/etc/vnetd/vnetd.conf" ||
	fail "vnetd -h does not name $P1's configuration"

say "configured again with --prefix=$P2, built and installed"
lib_before=$(stamp src/stmt.o)
vnetd_before=$(stamp src/vnetd.o)
build "$P2"
[[ $(stamp src/vnetd.o) != "$vnetd_before" ]] || fail "the new prefix did not rebuild vnetd.o"
[[ $(stamp src/stmt.o) == "$lib_before" ]] || fail "the new prefix rebuilt stmt.o, which uses no path"
(cd "$TREE" && make install >"$TMPD/install.log" 2>&1) ||
	fail "make install: $(tail -n 20 "$TMPD/install.log")"

say "the installed files name $P2"
for p in vnetd vnetctl vnet-ca vnet-join; do
	[[ -x $P2/sbin/$p ]] || fail "$p is not installed in $P2/sbin"
	"$P2/sbin/$p" -V | grep -q "^$p [0-9]" || fail "installed $p -V: $("$P2/sbin/$p" -V 2>&1)"
done
for b in "$P2/sbin/vnetd" "$P2/sbin/vnetctl"; do
	grep -qaF "$P1/" "$b" && fail "$b still names $P1"
	grep -qaF "$P2/" "$b" || fail "$b names no path under $P2"
done
"$P2/sbin/vnetd" -h | grep -qF "$P2/etc/vnetd/vnetd.conf" || fail "vnetd -h: not $P2's configuration"
"$P2/sbin/vnetctl" -h | grep -qF "$P2/var/run/vnetd/vnetd.sock" || fail "vnetctl -h: not $P2's socket"
for m in man8/vnetd.8 man8/vnetctl.8 man8/vnet-ca.8 man8/vnet-join.8 man5/vnetd.conf.5; do
	f=$P2/share/man/$m
	[[ -f $f ]] || fail "$m is not installed"
	grep -q /usr/local "$f" && fail "$m names /usr/local: $(grep -m1 /usr/local "$f")"
done
grep -qF "$P2/etc/vnetd/vnetd.conf" "$P2/share/man/man8/vnetd.8" || fail "vnetd.8 does not name $P2's configuration"
grep -qF "$P2/var/run/vnetd/vnetd.sock" "$P2/share/man/man8/vnetctl.8" || fail "vnetctl.8 does not name $P2's socket"
for e in proxy.conf.example host.conf.example; do
	f=$P2/share/doc/vnet/examples/$e
	[[ -f $f ]] || fail "$e is not installed"
	grep -q /usr/local "$f" && fail "$e names /usr/local"
done
grep -qF "$P2/etc/vnetd/host1.crt" "$P2/share/doc/vnet/examples/host.conf.example" ||
	fail "host.conf.example does not name $P2's certificates"
grep -qF "ExecStart=$P2/sbin/vnetd " "$P2/lib/systemd/system/vnetd.service" ||
	fail "vnetd.service does not start $P2's vnetd"
[[ -f $P2/share/bash-completion/completions/vnetctl ]] || fail "no bash completion for vnetctl installed"
for f in README doc/guide.md doc/operations.md doc/architecture.md doc/speed.md \
	doc/vcc.md doc/experiments.md doc/wan.md doc/status.png doc/results/adapt.png; do
	[[ -f $P2/share/doc/vnet/$f ]] || fail "$f is not installed in $P2/share/doc/vnet"
done
[[ -d $P2/etc/vnetd ]] || fail "make install made no $P2/etc/vnetd"
[[ -d $P2/var/run/vnetd ]] || fail "make install made no $P2/var/run/vnetd"

say "the installed vnetd and vnetctl meet on the default socket"
printf 'node lone\nnetwork inst\n' >"$P2/etc/vnetd/vnetd.conf"
rmdir "$P2/var/run/vnetd"	# a run directory on tmpfs after a reboot
"$P2/sbin/vnetd" -F >"$TMPD/lone.log" 2>&1 &
EXTRA_PIDS+=("$!")
lone=$!
wait_for 10 "$P2/sbin/vnetctl" show stats ||
	fail "the installed vnetctl gets no answer on the default socket: $(cat "$TMPD/lone.log")"
[[ -S $P2/var/run/vnetd/vnetd.sock ]] || fail "the socket is not $P2/var/run/vnetd/vnetd.sock"
kill -TERM "$lone"
wait_for 10 proc_gone "$lone" || fail "vnetd did not stop"

say "make uninstall leaves no program behind"
(cd "$TREE" && make uninstall >>"$TMPD/install.log" 2>&1) || fail "make uninstall failed"
[[ ! -e $P2/sbin/vnetd && ! -e $P2/share/man/man8/vnet-ca.8 ]] || fail "make uninstall left files"
left=$(find "$P2/share/doc" -type f 2>/dev/null)
[[ -z $left ]] || fail "make uninstall left documentation: $left"
pass
