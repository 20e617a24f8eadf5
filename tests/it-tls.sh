#!/bin/bash
#
# TLS links: a star over TLS passes ping; then nodes that must not join try
# to, each from its own namespace, and the proxy (or the node itself)
# refuses them with the reason in the log and tls_refused counted: a
# certificate from another CA, one that names another node, an expired one,
# a revoked one, and (on the dialling side) a peer whose certificate does
# not name the node the link is for.  The star keeps working throughout.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v openssl >/dev/null || skip "openssl (the command) is missing"

STAR_TLS=1
TLS_CRL=1
IP2=$(guest_ip 2)
PADDR=

say "vnetd -n checks the TLS statements and files"
# check_n CONF WANT: vnetd -n on CONF prints exactly WANT (and exits 1 when
# WANT has an error, 0 when it is empty or a warning).
check_n() {
	local conf=$TMPD/n.conf out rc=0 want_rc=0
	printf '%s\n' "$1" >"$conf"
	out=$("$VNETD" -n -f "$conf" 2>&1) || rc=$?
	[[ -z $2 || $2 == *": warning: "* ]] || want_rc=1
	((rc == want_rc)) || fail "vnetd -n exited $rc, not $want_rc, for: $1 ($out)"
	[[ $out == "${2//@/$conf}" ]] || fail "vnetd -n said '$out', not '${2//@/$conf}'"
}
cert_issue host1
cert_issue host2
check_n "node host1
listen *:1 tls" "@:2: listen *:1: tls needs tls-cert, tls-key and tls-ca"
check_n "node host1
link p 10.0.0.1:1 tls" "@:2: link p: tls needs tls-cert, tls-key and tls-ca"
check_n "node host1
tls-cert $CA_DIR/host1.crt
tls-ca $CA_DIR/ca.crt" "@:2: TLS needs all of tls-cert, tls-key and tls-ca (missing: tls-key)"
check_n "node host1
tls-cert $CA_DIR/host1.crt
tls-key $CA_DIR/host2.key
tls-ca $CA_DIR/ca.crt" "@:3: tls-key $CA_DIR/host2.key: not the key of tls-cert $CA_DIR/host1.crt"
check_n "node host1
tls-cert $CA_DIR/nonexistent.crt
tls-key $CA_DIR/host1.key
tls-ca $CA_DIR/ca.crt" "@:2: tls-cert $CA_DIR/nonexistent.crt: No such file or directory"
check_n "node host2
tls-cert $CA_DIR/host1.crt
tls-key $CA_DIR/host1.key
tls-ca $CA_DIR/ca.crt
listen *:1 tls" "@:2: warning: tls-cert $CA_DIR/host1.crt: does not name this node 'host2' (in its CN or a DNS subjectAltName): peers will refuse it"
check_n "node host1
tls-cert $CA_DIR/host1.crt
tls-key $CA_DIR/host1.key
tls-ca $CA_DIR/ca.crt
listen *:1 tls
link p 10.0.0.1:1 tls queue 1m" ""
check_n "node host1
user no-such-user-here
control-group no-such-group-here" "@:2: user no-such-user-here: no such user
@:3: control-group no-such-group-here: no such group"

# Before the star: what the CRL must list is revoked now.
cert_issue revoked
"$VNET_CA" revoke "$CA_DIR" revoked >/dev/null || fail "vnet-ca revoke failed"

star_start with-routes
PADDR="$(addr proxy):$PORT"
out=$(in_guest g1 ping -n -c 5 -i 0.2 -W 1 "$IP2") || fail "ping over the TLS star failed: $out"
grep -q ' 5 received' <<<"$out" || fail "ping over the TLS star lost replies: $out"
say "ping over TLS: $(grep -o '[0-9]* received' <<<"$out")"
grep -Eq 'link host1: TLSv1\.3 (TLS_AES_256_GCM_SHA384|TLS_CHACHA20_POLY1305_SHA256|TLS_AES_128_GCM_SHA256), certificate of node host1 verified' \
	"${D_LOG[proxy]}" || fail "the proxy's log does not show a verified TLS 1.3 AEAD link from host1"
vctl host1 show config | grep -qxF "link proxy $PADDR tls" || fail "host1's show config lacks the tls link"
vctl proxy show config | grep -qxF "listen $PADDR tls" || fail "the proxy's show config lacks the tls listener"
vctl proxy show config | grep -qxF "tls-crl $CA_DIR/crl.pem" || fail "the proxy's show config lacks tls-crl"
c1=$(link_field proxy host1 connects)
c2=$(link_field proxy host2 connects)

# Bulk data both ways at once, g1 -> host1 -> proxy -> host2 -> g2 and back:
# four TLS connections that fill their sockets and wait to write, the
# proxy decrypting from one and encrypting into the other.  Each side's
# SHA-256 of what it sent must be that of what the other received.
say "48 MiB each way at once over two TLS hops arrive intact"
BULK="$(dirname "${BASH_SOURCE[0]}")/bulk.py"
IP1=$(guest_ip 1)
in_guest g2 python3 "$BULK" serve "$IP2" 5001 >"$TMPD/bulk-r2.out" 2>&1 &
EXTRA_PIDS+=("$!")
in_guest g1 python3 "$BULK" serve "$IP1" 5002 >"$TMPD/bulk-r1.out" 2>&1 &
EXTRA_PIDS+=("$!")
wait_for 10 grep -q listening "$TMPD/bulk-r2.out" || fail "bulk receiver in g2: $(cat "$TMPD/bulk-r2.out")"
wait_for 10 grep -q listening "$TMPD/bulk-r1.out" || fail "bulk receiver in g1: $(cat "$TMPD/bulk-r1.out")"
in_guest g1 timeout 120 python3 "$BULK" send "$IP2" 5001 $((48 << 20)) 1 >"$TMPD/bulk-s1.out" 2>&1 &
s1=$!
in_guest g2 timeout 120 python3 "$BULK" send "$IP1" 5002 $((48 << 20)) 2 >"$TMPD/bulk-s2.out" 2>&1 &
s2=$!
EXTRA_PIDS+=("$s1" "$s2")
wait "$s1" || fail "sending g1 -> g2 failed: $(cat "$TMPD/bulk-s1.out")"
wait "$s2" || fail "sending g2 -> g1 failed: $(cat "$TMPD/bulk-s2.out")"
# bulk_got FILE: the receiver printed its count and digest.
# shellcheck disable=SC2317 # called through wait_for
bulk_got() { (($(wc -l <"$1") >= 2)); }
wait_for 10 bulk_got "$TMPD/bulk-r2.out" || fail "g2 did not finish receiving: $(cat "$TMPD/bulk-r2.out")"
wait_for 10 bulk_got "$TMPD/bulk-r1.out" || fail "g1 did not finish receiving: $(cat "$TMPD/bulk-r1.out")"
for d in "1 2" "2 1"; do
	read -r from to <<<"$d"
	sent=$(tail -n 1 "$TMPD/bulk-s$from.out")
	got=$(tail -n 1 "$TMPD/bulk-r$to.out")
	[[ $sent =~ ^$((48 << 20))\ [0-9a-f]{64}$ ]] || fail "g$from sent: $sent"
	[[ $got == "$sent" ]] || fail "g$to received '$got', g$from sent '$sent'"
	say "  g$from -> g$to: ${got%% *} bytes, sha256 ${got#* }"
done
(($(link_field proxy host1 connects) == c1 && $(link_field proxy host2 connects) == c2)) ||
	fail "the proxy's links reconnected during the bulk transfer"
# A burst of UDP fills the sockets and queues: once it is over, every
# link's queue must empty by itself.
out=$(udp_burst g1 "$IP2" 20000) || fail "the UDP burst failed: $out"
say "a burst of $out UDP datagrams; the queues empty"
queues_drain "host1 proxy" "host2 proxy" "proxy host1" "proxy host2"

# try_node NAME IDX WHO WHAT REASON CONF: starts a node that must be refused,
# waits until WHO (proxy or NAME) counts a tls_refused more and logs REASON,
# checks that its link never came up, and stops it.
try_node() {
	local name=$1 idx=$2 who=$3 what=$4 reason=$5 conf=$6 words=${7:-} before
	say "$what"
	node_add "$name" "$idx"
	before=0
	[[ $who == "$name" ]] || before=$(stat_value "$who" tls_refused)
	vnetd_start "$name" "$conf"
	wait_for 15 stat_at_least "$who" tls_refused $((before + 1)) ||
		fail "$who did not refuse: $what"
	wait_for 5 grep -q "refused.*$reason" "${D_LOG[$who]}" ||
		fail "$who's log does not say '$reason' for: $what"
	say "  $who: $(grep "refused.*$reason" "${D_LOG[$who]}" | tail -n 1 | cut -d' ' -f3-)"
	link_not_up "$name" proxy || fail "$name's link came up: $what"
	# The side that dialled is told in words what the peer did not take.
	if [[ -n $words ]]; then
		wait_for 5 grep -q "$words" "${D_LOG[$name]}" ||
			fail "$name's log does not say '$words': $(grep -i tls "${D_LOG[$name]}" | tail -n 3)"
		say "  $name: $(grep -m1 -o "$words.*" "${D_LOG[$name]}")"
	fi
	if link_up proxy host3 2>/dev/null; then
		fail "the proxy has a link host3 up: $what"
	fi
	vnetd_stop "$name" || fail "vnetd $name did not exit cleanly"
}

node_tls() {	# node_tls CERT [CA_DIR]: tls-* lines with that certificate
	tls_conf host3 "$1" "${2:-$CA_DIR}"
}

OTHER_CA=$TMPD/otherca
cert_issue host3 "$OTHER_CA"
try_node n4 4 proxy "a certificate from another CA" "unable to get local issuer certificate" \
	"node host3
$(node_tls host3 "$OTHER_CA")
link proxy $PADDR tls" "the peer refused our certificate: it is not of the peer's tls-ca"

try_node n5 5 proxy "a certificate that names another node" "does not name node host3" \
	"node host3
$(node_tls someoneelse)
link proxy $PADDR tls"

cert_issue expired "$CA_DIR" -s 20200101000000Z -e 20200102000000Z
try_node n6 6 proxy "an expired certificate" "certificate has expired" \
	"node host3
$(node_tls expired)
link proxy $PADDR tls" "the peer refused our certificate: expired"

try_node n7 7 proxy "a revoked certificate" "certificate revoked" \
	"node host3
$(node_tls revoked)
link proxy $PADDR tls" "the peer refused our certificate: its tls-crl revokes it"

# The dialling side checks too: its link is for node "hub", and the
# proxy's certificate names "proxy".
try_node n8 8 n8 "a peer whose certificate names another node than the link's" \
	"does not name node hub" \
	"node host3
$(tls_conf host3)
link proxy $PADDR tls peer hub"

say "a plain dialler at the TLS listener: the proxy says so in words"
node_add n11 11
vnetd_start n11 "node host3
link proxy $PADDR"
wait_for 15 grep -q "not TLS: the peer dialled this TLS listener without tls" "${D_LOG[proxy]}" ||
	fail "the proxy's log does not say that a plain peer dialled its TLS listener: $(tail -n 5 "${D_LOG[proxy]}")"
say "  proxy: $(grep -m1 -o 'not TLS: the peer dialled.*' "${D_LOG[proxy]}")"
vctl proxy -t show refused | grep -q "not TLS: the peer dialled this TLS listener without tls" ||
	fail "the proxy's show refused does not list the plain dialler: $(vctl proxy show refused)"
link_not_up n11 proxy || fail "the plain link came up"
wait_for 10 grep -q "its listener is TLS and this link has no tls" "${D_LOG[n11]}" ||
	fail "n11's log does not say that the listener may be TLS: $(tail -n 3 "${D_LOG[n11]}")"
vnetd_stop n11

say "a plain connection for a link configured with tls is refused"
node_add n9 9
vnetd_start n9 "node host1
listen $(addr n9):$PORT allow $UNDERLAY
$(tls_conf host9)
link proxy $PADDR tls"
before=$(stat_value n9 refused)
node_add n10 10
vnetd_start n10 "node proxy
link host1 $(addr n9):$PORT"
wait_for 15 stat_at_least n9 refused $((before + 1)) || fail "n9 took a plain connection for its TLS link"
grep -q 'refused: a plain connection from .*configured with tls' "${D_LOG[n9]}" ||
	fail "n9's log does not say why it refused the plain connection"
vnetd_stop n10
vnetd_stop n9

say "the star still works, its links never went down"
out=$(in_guest g1 ping -n -c 5 -i 0.2 -W 1 "$IP2") || fail "ping after the refusals failed: $out"
grep -q ' 5 received' <<<"$out" || fail "ping after the refusals lost replies: $out"
(($(link_field proxy host1 connects) == c1 && $(link_field proxy host2 connects) == c2)) ||
	fail "the proxy's links reconnected during the refusals"
pass
