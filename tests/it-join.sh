#!/bin/bash
#
# Joining in one step: the proxy runs vnetd (routing auto, TLS, guest 1
# behind it) and vnet-join serve; vnet-ca invite prints one line, and a
# fresh namespace that has nothing but that line joins with one command
# (vnet-join -x: key, certificate, CA, CRL, vnetd.conf, then vnetd) and its
# guest 2 pings guest 1.  Then the refusals, each with its reason, the
# server answering on: the used line again, an expired line, a wrong
# secret, an unknown invitation, an existing vnetd.conf; an unauthenticated
# client is sent fewer bytes than it sent.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v openssl >/dev/null || skip "openssl (the command) is missing"
: "${VNET_JOIN:=$LIB_DIR/../src/vnet-join}"
[[ -x $VNET_JOIN ]] || fail "vnet-join not found at $VNET_JOIN (build it first)"

TLS_CRL=1
JPORT=7871

# expect_refused WORD LINE DIR: vnet-join in the fresh namespace fails and
# says WORD.
expect_refused() {
	local err
	if err=$(ip netns exec "$(ns fresh)" "$VNET_JOIN" "$2" "$3" 2>&1); then
		fail "vnet-join $2 succeeded; expected a refusal"
	fi
	grep -q -- "$1" <<<"$err" || fail "vnet-join: '$err' does not say '$1'"
	say "refused: $err"
}

serve_ready() { grep -q 'answering the invitations' "$TMPD/serve.log"; }

node_add proxy 1
node_add fresh 2
vnetd_start proxy "$(printf 'node proxy\nnetwork home\nlisten %s:%d tls\nrouting auto\ninterface guest tap vtap0\n' \
	"$(addr proxy)" "$PORT"; tls_conf proxy)"
guest_add g1 proxy vtap0 1
ip netns exec "$(ns proxy)" "$VNET_JOIN" serve -l "$(addr proxy):$JPORT" -c "$VNET_CA" \
	"$CA_DIR" >"$TMPD/serve.log" 2>&1 &
SERVE_PID=$!
STARTED_PIDS+=("$SERVE_PID")
wait_for 10 serve_ready || fail "vnet-join serve did not start: $(cat "$TMPD/serve.log")"

line=$("$VNET_CA" invite -n home "$CA_DIR" fresh proxy "$(addr proxy):$PORT" 2>"$TMPD/invite.err") ||
	fail "vnet-ca invite failed: $(cat "$TMPD/invite.err")"
(($(wc -l <<<"$line") == 1)) || fail "vnet-ca invite printed more than one line: $line"
[[ $line =~ ^vnet://$(addr proxy):$JPORT/[0-9a-f]{16}/[0-9a-f]{64}$ ]] || fail "invitation line: $line"
grep -q 'good once until' "$TMPD/invite.err" || fail "vnet-ca invite does not say until when: $(cat "$TMPD/invite.err")"
id=$(cut -d/ -f4 <<<"$line")
secret=$(cut -d/ -f5 <<<"$line")
! grep -rq "$secret" "$CA_DIR" || fail "the CA keeps the secret itself"
say "invitation: ${line:0:40}..."

# The fresh host: only the line, then vnetd under this test's eye.
JDIR=$TMPD/fresh-etc
D_NS[fresh]=$(ns fresh)
D_SOCK[fresh]=$TMPD/fresh.sock
D_CONF[fresh]=$JDIR/vnetd.conf
D_LOG[fresh]=$TMPD/fresh.log
t0=$(date +%s.%N)
# shellcheck disable=SC2086 # VNETD_FLAGS: words
ip netns exec "$(ns fresh)" "$VNET_JOIN" -a 'interface guest tap vtap0' -x -p "$VNETD" \
	"$line" "$JDIR" -F $VNETD_FLAGS -s "${D_SOCK[fresh]}" >"${D_LOG[fresh]}" 2>&1 &
D_PID[fresh]=$!
STARTED_PIDS+=("${D_PID[fresh]}")
wait_for 10 vctl_daemon_ready fresh || fail "vnet-join -x did not start vnetd: $(cat "${D_LOG[fresh]}")"
grep -q 'joined as node fresh' "${D_LOG[fresh]}" || fail "vnet-join did not say it joined"
for f in fresh.key fresh.crt ca.crt crl.pem vnetd.conf; do
	[[ -s $JDIR/$f ]] || fail "vnet-join did not write $JDIR/$f"
done
[[ $(stat -c %a "$JDIR/fresh.key") == 600 ]] || fail "the key is not mode 600"
[[ ! -e $CA_DIR/fresh.key ]] || fail "the node's key is at the CA"
openssl verify -CAfile "$CA_DIR/ca.crt" "$JDIR/fresh.crt" >/dev/null || fail "the certificate does not verify"
openssl x509 -in "$JDIR/fresh.crt" -noout -subject | grep -q 'CN *= *fresh' ||
	fail "the certificate does not name node fresh"
grep -qx "link proxy $(addr proxy):$PORT tls" "$JDIR/vnetd.conf" && grep -qx 'routing auto' "$JDIR/vnetd.conf" &&
	grep -qx 'network home' "$JDIR/vnetd.conf" ||
	fail "the starter configuration: $(cat "$JDIR/vnetd.conf")"
guest_add g2 fresh vtap0 2
wait_link_up fresh proxy
wait_for 20 gping g2 "$(guest_ip 1)" || fail "guest 2 behind the joined host cannot ping guest 1"
say "joined and pinging in $(echo "$(date +%s.%N) - $t0" | bc) s from the line"
grep -q "invitation $id: node fresh joined" "$TMPD/serve.log" || fail "the server log lacks the join"
"$VNET_CA" list "$CA_DIR" | grep -Eq '^fresh +[0-9A-F]+ +valid ' || fail "vnet-ca list lacks fresh"

expect_refused "used already" "$line" "$TMPD/again"
late=$("$VNET_CA" invite -t 1 "$CA_DIR" late 2>/dev/null)
expires=$(awk '$1 == "expires" { print $2 }' "$CA_DIR/invites/$(cut -d/ -f4 <<<"$late")")
past_expiry() { (($(date +%s) > expires)); }
wait_for 5 past_expiry || fail "the clock did not pass $expires"
expect_refused "expired at" "$late" "$TMPD/late"
other=$("$VNET_CA" invite "$CA_DIR" other 2>/dev/null)
wrong=${other%????}0000
[[ $wrong != "$other" ]] || wrong=${other%????}1111
expect_refused "not with this secret" "$wrong" "$TMPD/wrong"
expect_refused "knows no invitation" "vnet://$(addr proxy):$JPORT/0123456789abcdef/$secret" "$TMPD/unknown"
expect_refused "not overwriting" "$other" "$JDIR"
expect_refused "not an invitation line" "http://x" "$TMPD/bad"

# What an unauthenticated client gets: a TLS alert, smaller than its hello.
for psk in "0123456789abcdef:$secret" "$(cut -d/ -f4 <<<"$other"):$secret"; do
	out=$(ip netns exec "$(ns fresh)" timeout 10 openssl s_client -connect "$(addr proxy):$JPORT" \
		-tls1_3 -psk_identity "${psk%%:*}" -psk "${psk#*:}" </dev/null 2>&1 || true)
	read -r rd wr < <(sed -n 's/.*has read \([0-9]*\) bytes and written \([0-9]*\) bytes.*/\1 \2/p' <<<"$out")
	[[ -n $rd ]] || fail "openssl s_client: $out"
	((rd < wr)) || fail "an unauthenticated client was sent $rd bytes for its $wr"
	say "unauthenticated client (${psk%%:*}): sent $wr bytes, answered $rd"
done

# The real line, still good, after all that: the server answered on.
ip netns exec "$(ns fresh)" "$VNET_JOIN" "$other" "$TMPD/other" >/dev/null ||
	fail "a good invitation failed after the refusals"
proc_running "$SERVE_PID" || fail "vnet-join serve died"
pass
