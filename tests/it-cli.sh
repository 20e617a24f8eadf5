#!/bin/bash
#
# What a person meets first: help and version on every program, the verb's
# usage on a syntax error, connection errors that say what to try, a
# missing socket directory named with the fix, OpenSSL's errors as
# sentences on the right line, and start-up warnings on the terminal of a
# daemon that detaches.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_binaries

# expect WHAT RC PATTERN CMD...: CMD exits RC and its output (both streams)
# contains PATTERN (a fixed string).
expect() {
	local what=$1 want_rc=$2 pat=$3 rc=0 out
	shift 3
	out=$("$@" 2>&1) || rc=$?
	((rc == want_rc)) || fail "$what: exit $rc, not $want_rc: $out"
	[[ $out == *"$pat"* ]] || fail "$what: no '$pat' in: $out"
}

say "help and version"
VER=$(sed -n 's/^AC_INIT(\[vnet\], \[\([^]]*\)\].*/\1/p' "$LIB_DIR/../configure.ac")
[[ -n $VER ]] || fail "no version in configure.ac"
for p in "$VNETD" "$VNETCTL" "$VNET_CA"; do
	for o in -V --version; do
		expect "$(basename "$p") $o" 0 "$(basename "$p") $VER" "$p" "$o"
	done
	for o in -h --help; do
		expect "$(basename "$p") $o" 0 "usage: " "$p" "$o"
	done
done
expect "vnetctl without a verb" 1 "usage: vnetctl" "$VNETCTL"
expect "vnetctl --bogus" 1 "usage: vnetctl" "$VNETCTL" --bogus
expect "vnetctl help" 0 "add-route" "$VNETCTL" help
expect "vnetctl help" 0 "show the running state" "$VNETCTL" help
expect "vnetctl help add-route" 0 "usage: vnetctl add-route SRC DST link|interface NAME" \
	"$VNETCTL" help add-route
expect "vnetctl help route" 0 "usage: vnetctl add-route" "$VNETCTL" help route
expect "vnetctl help reload" 0 "usage: vnetctl reload [-n]" "$VNETCTL" help reload
expect "vnetctl help nope" 1 "unknown verb 'nope'" "$VNETCTL" help nope
expect "vnetctl help adapt" 0 "usage: vnetctl adapt off|on" "$VNETCTL" help adapt
expect "vnetctl help offload" 0 "a statement of the configuration file only" "$VNETCTL" help offload
expect "vnetctl help offload" 0 "restart vnetd to change it" "$VNETCTL" help offload
expect "vnetctl help tls-crl" 0 "at each reload: change it there and run vnetctl reload" \
	"$VNETCTL" help tls-crl
out=$("$VNETCTL" help 2>&1)
[[ $out == *'"vnetctl reload" applies a change of:'$'\n''  tls-cert tls-key tls-ca tls-crl'$'\n'* ]] ||
	fail "vnetctl help does not list the tls-* files as taken by a reload: $out"
out=$("$VNETCTL" help 2>&1)
while read -r verb _; do
	"$VNETCTL" help "$verb" >/dev/null || fail "vnetctl help lists $verb, but help $verb fails"
done < <(awk '/^  [a-z-]+  / { print $1 }' <<<"$out")

say "syntax errors: the message and the verb's usage, without a daemon"
NOSOCK=$TMPD/none.sock
expect "add-route without DST" 1 "invalid MAC address 'link'" \
	"$VNETCTL" -s "$NOSOCK" add-route 02:00:00:00:00:09 link host2
expect "add-route without DST" 1 "usage: vnetctl add-route SRC DST link|interface NAME" \
	"$VNETCTL" -s "$NOSOCK" add-route 02:00:00:00:00:09 link host2
expect "add-link without address" 1 "usage: vnetctl add-link NAME HOST:PORT" \
	"$VNETCTL" -s "$NOSOCK" add-link host2
expect "learn maybe" 1 "usage: vnetctl learn yes|no" "$VNETCTL" -s "$NOSOCK" learn maybe
expect "show nothing" 1 "usage: vnetctl show links" "$VNETCTL" -s "$NOSOCK" show nothing
expect "unknown verb" 1 "unknown verb 'frobnicate'" "$VNETCTL" -s "$NOSOCK" frobnicate

say "connection errors say what to try"
expect "no socket" 1 "cannot connect to $NOSOCK: No such file or directory: is vnetd running?" \
	"$VNETCTL" -s "$NOSOCK" show links
expect "no socket" 1 "name it with -s" "$VNETCTL" -s "$NOSOCK" show links
STALE=$TMPD/stale.sock
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$STALE"
expect "stale socket" 1 "Connection refused: is vnetd running?" "$VNETCTL" -s "$STALE" show links
: >"$TMPD/plain"
expect "not a socket" 1 "is vnetd running?" "$VNETCTL" -s "$TMPD/plain" show links

say "a missing socket directory is named, with the fix"
CONF=$TMPD/one.conf
printf 'node one\nnetwork cli\n' >"$CONF"
expect "vnetd in a missing directory" 1 \
	"control socket $TMPD/no/such/vnetd.sock: the directory $TMPD/no/such does not exist: create it (mkdir -p $TMPD/no/such) or choose another socket with -s" \
	"$VNETD" -F -f "$CONF" -s "$TMPD/no/such/vnetd.sock"

say "a garbage key file: a sentence, on the tls-key line"
ca_init
cert_issue one
head -c 300 /dev/urandom | base64 >"$TMPD/garbage.key"
cat >"$TMPD/tls.conf" <<CONF
node one
network cli
tls-cert $CA_DIR/one.crt
tls-ca $CA_DIR/ca.crt
tls-key $TMPD/garbage.key
CONF
expect "vnetd -n, garbage key" 1 \
	"$TMPD/tls.conf:5: tls-key $TMPD/garbage.key: not in PEM format: no '-----BEGIN ...-----' line found in it" \
	"$VNETD" -n -f "$TMPD/tls.conf"
expect "vnetd, garbage key" 1 "$TMPD/tls.conf:5: tls-key $TMPD/garbage.key: not in PEM format" \
	"$VNETD" -F -f "$TMPD/tls.conf" -s "$TMPD/g.sock"
printf 'tls-crl %s\n' "$TMPD/garbage.key" >>"$TMPD/tls.conf"
sed -i "s|^tls-key .*|tls-key $CA_DIR/one.key|" "$TMPD/tls.conf"
expect "vnetd -n, garbage CRL" 1 \
	"$TMPD/tls.conf:6: tls-crl $TMPD/garbage.key: not in PEM format" "$VNETD" -n -f "$TMPD/tls.conf"
sed -i '$d' "$TMPD/tls.conf"
sed -i "s|^tls-key .*|tls-key $TMPD/garbage.key|" "$TMPD/tls.conf"
sed -n '1p;$p' "$CA_DIR/one.key" >"$TMPD/cut.key"
sed -i "s|$TMPD/garbage.key|$TMPD/cut.key|" "$TMPD/tls.conf"
expect "vnetd -n, damaged key" 1 "$TMPD/tls.conf:5: tls-key $TMPD/cut.key: " \
	"$VNETD" -n -f "$TMPD/tls.conf"

say "vnetd -n: a TLS file under /root, which the units hide (ProtectHome=yes)"
sed "s|^tls-ca .*|tls-ca /root/vnet-no-such-$$/ca.crt|; s|^tls-key .*|tls-key $CA_DIR/one.key|" \
	"$TMPD/tls.conf" >"$TMPD/home.conf"
expect "vnetd -n, tls-ca under /root" 1 \
	"$TMPD/home.conf:4: warning: tls-ca /root/vnet-no-such-$$/ca.crt: under /root, /home or /run/user, which the systemd units hide from vnetd (ProtectHome=yes): copy it beside " \
	"$VNETD" -n -f "$TMPD/home.conf"

say "vnetd -n: every problem in one run, each on its line, and nothing else"
cat >"$TMPD/many.conf" <<CONF
node one
network cli
learn maybe
keepalive 0
user vnetnosuchuser
control-group vnetnosuchgroup
tls-cert $CA_DIR/one.crt
tls-key $TMPD/missing.key
tls-ca $CA_DIR/ca.crt
tls-crl $TMPD/missing.crl
http 127.0.0.1:$PORT
CONF
want="$TMPD/many.conf:3: learn: invalid value 'maybe' (expected yes or no)
$TMPD/many.conf:4: keepalive: invalid seconds '0' (1..3600)
$TMPD/many.conf:5: user vnetnosuchuser: no such user
$TMPD/many.conf:6: control-group vnetnosuchgroup: no such group
$TMPD/many.conf:8: tls-key $TMPD/missing.key: No such file or directory
$TMPD/many.conf:10: tls-crl $TMPD/missing.crl: No such file or directory"
rc=0
out=$("$VNETD" -n -f "$TMPD/many.conf" 2>&1) || rc=$?
((rc == 1)) || fail "vnetd -n on six problems: exit $rc, not 1: $out"
[[ $out == "$want" ]] || fail "vnetd -n on six problems said:
$out
not:
$want"
# With the files there, what is in them is checked beside the bad lines.
sed -i -e "s|^tls-key .*|tls-key $TMPD/garbage.key|" -e '/^tls-crl/d' "$TMPD/many.conf"
rc=0
out=$("$VNETD" -n -f "$TMPD/many.conf" 2>&1) || rc=$?
((rc == 1)) || fail "vnetd -n on a bad line and a garbage key: exit $rc, not 1: $out"
[[ $out == *"many.conf:3: learn: invalid value"* &&
	$out == *"many.conf:8: tls-key $TMPD/garbage.key: not in PEM format"* ]] ||
	fail "vnetd -n did not say both the bad line and the garbage key: $out"

say "a route to a link that can never appear: a warning in vnetd -n"
cat >"$TMPD/route.conf" <<CONF
node one
network cli
link host2 10.0.0.2:$PORT
route any 02:00:00:00:00:02 link host2
route any 02:00:00:00:00:03 link hots2
route any 02:00:00:00:00:04 link one
CONF
rc=0
out=$("$VNETD" -n -f "$TMPD/route.conf" 2>&1) || rc=$?
((rc == 0)) || fail "vnetd -n refused routes to unknown links (exit $rc): $out"
want="$TMPD/route.conf:5: warning: route to link hots2, which no link statement makes and, without a listener, no peer can bring: a misspelling?
$TMPD/route.conf:6: warning: route to link one, this node's own name: no peer can bring it, the route is never used"
[[ $out == "$want" ]] || fail "vnetd -n said '$out', not '$want'"
printf 'listen 127.0.0.1:%d\n' "$PORT" >>"$TMPD/route.conf"
out=$("$VNETD" -n -f "$TMPD/route.conf" 2>&1)
[[ $out == "$TMPD/route.conf:6: warning: route to link one, this node's own name: no peer can bring it, the route is never used" ]] ||
	fail "with a listener, vnetd -n said '$out'"

require_root
say "a wrong tls-ca: the warning reaches the terminal before vnetd detaches"
OTHER=$TMPD/otherca
ca_init "$OTHER"
mkns solo
cat >"$TMPD/wrongca.conf" <<CONF
node one
network cli
tls-cert $CA_DIR/one.crt
tls-key $CA_DIR/one.key
tls-ca $OTHER/ca.crt
CONF
rc=0
out=$(ip netns exec "$(ns solo)" "$VNETD" -f "$TMPD/wrongca.conf" -s "$TMPD/d.sock" \
	-p "$TMPD/d.pid" 2>&1) || rc=$?
DPID=$(cat "$TMPD/d.pid" 2>/dev/null || true)
[[ -n $DPID ]] && EXTRA_PIDS+=("$DPID")
((rc == 0)) || fail "vnetd with a wrong tls-ca did not start (exit $rc): $out"
[[ $out == *"$TMPD/wrongca.conf:3: warning: tls-cert $CA_DIR/one.crt: not valid under tls-ca $OTHER/ca.crt"* ]] ||
	fail "the daemon's start printed no warning about its tls-ca: '$out'"
"$VNETCTL" -s "$TMPD/d.sock" show stats >/dev/null || fail "the detached vnetd does not answer"

say "a route to a link that can never appear: a warning in add-route's reply"
rc=0
out=$("$VNETCTL" -s "$TMPD/d.sock" add-route any 02:00:00:00:00:03 link hots2 2>&1) || rc=$?
((rc == 0)) || fail "add-route to an unknown link was refused (exit $rc): $out"
[[ $out == "warning: there is no link hots2, and without a listener no peer can bring one: the route is unused until add-link hots2" ]] ||
	fail "add-route to an unknown link said '$out'"
"$VNETCTL" -s "$TMPD/d.sock" show routes | grep -q hots2 || fail "the route was not added"
out=$("$VNETCTL" -s "$TMPD/d.sock" add-link hots2 10.0.0.3:$PORT 2>&1)
out=$("$VNETCTL" -s "$TMPD/d.sock" add-route any 02:00:00:00:00:05 link hots2 2>&1)
[[ -z $out ]] || fail "add-route to an existing link said '$out'"

say "a tls-* statement at run time: the refusal names reload, not a restart"
expect "vnetctl tls-crl" 1 "tls-crl: can only be set in the configuration file (change it there and run vnetctl reload)" \
	"$VNETCTL" -s "$TMPD/d.sock" tls-crl "$TMPD/crl.pem"
expect "vnetctl offload" 1 "offload: can only be set in the configuration file (restart vnetd to change it)" \
	"$VNETCTL" -s "$TMPD/d.sock" offload no

say "listen at run time: the plain statement is add-listen"
"$VNETCTL" -s "$TMPD/d.sock" listen "127.0.0.1:$PORT" || fail "vnetctl listen was refused"
"$VNETCTL" -s "$TMPD/d.sock" show config | grep -qx "listen 127.0.0.1:$PORT" ||
	fail "vnetctl listen did not add the listener"

say "permission: the hint names root and the control group"
chmod 755 "$TMPD"
expect "as nobody" 1 "needs root or membership of the \`control-group\`" \
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$VNETCTL" -s "$TMPD/d.sock" show links
kill -TERM "$DPID"
wait_for 10 proc_gone "$DPID" || fail "the detached vnetd did not stop"
pass
