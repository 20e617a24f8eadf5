#!/bin/bash
#
# `user` and `control-group`: a node that drops root to nobody after start
# keeps CAP_NET_ADMIN alone, still carries a TLS link and still makes TAP
# interfaces added at run time; its control socket is mode 660 with group
# nogroup, usable by members of that group and nobody else; on SIGTERM it
# exits 0 and removes its socket (its directory is nobody's).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v openssl >/dev/null || skip "openssl (the command) is missing"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
getent passwd nobody >/dev/null || skip "no user nobody"
getent group nogroup >/dev/null || skip "no group nogroup"

# nobody must reach its socket's directory, and remove the socket there.
chmod 711 "$TMPD"
RUN=$TMPD/run
mkdir "$RUN"
chown nobody:nogroup "$RUN"

node_add a 1
node_add b 2
vnetd_start a "node a
listen $(addr a):$PORT tls
$(tls_conf a)
learn yes
interface guest tap vtap0"
printf 'node b\nuser nobody\ncontrol-group nogroup\n%s\nlearn yes\ninterface guest tap vtap0\nlink a %s:%d tls\n' \
	"$(tls_conf b)" "$(addr a)" "$PORT" >"$TMPD/b.conf"
# The key is root's alone: it must be read before the drop.
chmod 600 "$CA_DIR/b.key"
rc=0
err=$("$VNETD" -n -f "$TMPD/b.conf" 2>&1) || rc=$?
((rc == 0)) || fail "vnetd -n rejected b's configuration: $err"
# After the drop, new TAP devices need /dev/net/tun to be usable by nobody
# (mode 666, as Debian makes it).  Where it is root's alone, b gets a
# private node of its own in a mount namespace; the machine's stays as it is.
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c ': <>/dev/net/tun' 2>/dev/null; then
	say "this machine's /dev/net/tun is not for everyone: b gets a private one, mode 666"
	mknod "$TMPD/tun" c 10 200
	chmod 666 "$TMPD/tun"
	VNETD_WRAP=(unshare -m --propagation private sh -c 'mount --bind "$0" /dev/net/tun && exec "$@"' "$TMPD/tun")
fi
vnetd_start_file b "$TMPD/b.conf" "$RUN/b.sock"
VNETD_WRAP=()
guest_add g1 a vtap0 1
guest_add g2 b vtap0 2
wait_link_up b a

pid=${D_PID[b]}
uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' /proc/"$pid"/status)
gids=$(awk '/^Gid:/ { print $2, $3, $4, $5 }' /proc/"$pid"/status)
groups=$(awk '/^Groups:/ { $1 = ""; print }' /proc/"$pid"/status)
caps=$(awk '/^Cap(Eff|Prm|Bnd|Inh|Amb):/ { printf "%s %s ", $1, $2 }' /proc/"$pid"/status)
say "b runs with uids $uids, gids $gids, groups [${groups# }], $caps"
[[ $uids == "65534 65534 65534 65534" ]] || fail "b's uids are $uids, not nobody's"
[[ $gids == "65534 65534 65534 65534" ]] || fail "b's gids are $gids, not nogroup's"
[[ -z ${groups// /} || ${groups// /} == 65534 ]] || fail "b kept supplementary groups: $groups"
want="CapInh: 0000000000000000 CapPrm: 0000000000001000 CapEff: 0000000000001000 CapBnd: 0000000000001000 CapAmb: 0000000000000000 "
[[ $caps == "$want" ]] || fail "b's capabilities are '$caps', not CAP_NET_ADMIN alone"
grep -q 'running as user nobody (uid 65534) with CAP_NET_ADMIN only' "${D_LOG[b]}" ||
	fail "b's log does not say that it dropped root"

say "the TLS link carries traffic after the drop"
wait_for 15 gping g2 "$(guest_ip 1)" || fail "guest 2 cannot ping guest 1 through b"

say "a TAP interface added at run time is made (CAP_NET_ADMIN)"
vctl b add-interface late tap vtap1 || fail "add-interface after the drop failed"
ip -n "$(ns b)" link show vtap1 >/dev/null || fail "vtap1 was not made"
[[ $(ip -n "$(ns b)" -o link show vtap1) == *",UP"* ]] || fail "vtap1 is not up"
vctl b del-interface late || fail "del-interface after the drop failed"

say "the control socket: mode 660, group nogroup"
[[ $(stat -c '%a %G' "$RUN/b.sock") == "660 nogroup" ]] ||
	fail "b's socket is $(stat -c '%a %G' "$RUN/b.sock"), not 660 nogroup"
[[ $(stat -c '%a' "${D_SOCK[a]}") == 600 ]] || fail "a's socket (no control-group) is not 600"
setpriv --reuid=daemon --regid=nogroup --clear-groups "$VNETCTL" -s "$RUN/b.sock" show stats >/dev/null ||
	fail "a member of nogroup cannot use b's control socket"
if setpriv --reuid=daemon --regid=daemon --clear-groups "$VNETCTL" -s "$RUN/b.sock" show stats >/dev/null 2>&1; then
	fail "a user outside nogroup could use b's control socket"
fi
if setpriv --reuid=daemon --regid=daemon --clear-groups "$VNETCTL" -s "${D_SOCK[a]}" show stats >/dev/null 2>&1; then
	fail "another user could use a's owner-only control socket"
fi

say "statements of the start are refused at run time"
rc=0
out=$(vctl b user root 2>&1) || rc=$?
((rc == 1)) && [[ $out == "vnetctl: user: can only be set in the configuration file (restart vnetd to change it)" ]] ||
	fail "vnetctl user root: exit $rc, '$out'"
pass
