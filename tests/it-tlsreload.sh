#!/bin/bash
#
# TLS files read again by reload: the expiry of the certificates in show
# tls and /metrics; tls-crl added by reload; a reload with a broken key
# keeps what runs; a host's certificate renewed in place while a ping every
# 10 ms loses nothing, its new serial used at the next connection; and a
# revoked host's link closed by the proxy's reload and refused from then on;
# and a CRL changed with no reload, read by the daemon's own look at the
# files (every 10 s, once they stay the same for a look); and the expiry
# of host1's certificate (1 day and 20 s) warned of by host1 as it crosses
# 1 day left, and that of host2's renewed one (5 days) by the proxy, each
# once.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
for b in openssl curl; do
	command -v "$b" >/dev/null || skip "$b is missing"
done

STAR_TLS=1
TLS_CRL=0
HP=8080
IP1=$(guest_ip 1)
IP2=$(guest_ip 2)
DAY=86400

say "vnetd -n warns of a certificate that expires within 30 days"
cert_issue soon "$CA_DIR" -d 10
printf 'node soon\n%s\n' "$(tls_conf soon)" >"$TMPD/soon.conf"
out=$("$VNETD" -n -f "$TMPD/soon.conf" 2>&1) ||
	fail "vnetd -n refused a certificate that expires in 10 days: $out"
grep -Eq 'warning: tls-cert .*/soon.crt: expires in (9|10) days' <<<"$out" ||
	fail "vnetd -n does not warn of the expiry: $out"

# host1's certificate runs out 1 day and 20 s from now: it starts under 7
# days (warned at start) and crosses 1 day while the test runs, which its
# own look (every 10 s) warns of once; the proxy warns of host1's as it
# connects.
T1=$(date +%s)
HOST1_END=$((T1 + DAY + 20))
cert_issue host1 "$CA_DIR" -s "$(date -u -d @$((T1 - 3600)) +%Y%m%d%H%M%SZ)" \
	-e "$(date -u -d @$HOST1_END +%Y%m%d%H%M%SZ)"

node_add proxy 1
node_add host1 2
node_add host2 3
vnetd_start proxy "$(proxy_conf with-routes)
http $(addr proxy):$HP allow $(addr proxy)"
vnetd_start host1 "$(host_conf 1 with-routes)"
vnetd_start host2 "$(host_conf 2 with-routes)"
guest_add g1 host1 vtap0 1
guest_add g2 host2 vtap0 2
wait_link_up host1 proxy
wait_link_up host2 proxy
wait_link_up proxy host1
wait_link_up proxy host2
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"

# in_range V LO HI
in_range() { [[ $1 =~ ^-?[0-9]+$ ]] && (($1 >= $2 && $1 <= $3)); }
# tls_field DAEMON WHO NAME COLUMN: one column of show tls.
tls_field() {
	vctl "$1" show tls | awk -v w="$2" -v n="$3" -v c="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) idx = i; next }
		$1 == w && $2 == n && idx { print $idx; found = 1; exit }
		END { exit !found }'
}
# serial_of CERT: its serial as show tls gives it (hex, no leading zeros).
serial_of() { openssl x509 -noout -serial -in "$1" | sed 's/^serial=0*//'; }
strip0() { sed 's/^0*//' <<<"$1"; }

say "show tls and /metrics give each certificate's expiry (825 days)"
LO=$((825 * DAY - 3600)) HI=$((825 * DAY + 60))
left=$(tls_field proxy self - seconds_left) || fail "no own row in show tls: $(vctl proxy show tls)"
in_range "$left" $LO $HI || fail "the proxy's certificate: $left s left, not 825 days"
left=$(tls_field proxy peer host2 seconds_left) || fail "no row for host2 in show tls: $(vctl proxy show tls)"
in_range "$left" $LO $HI || fail "host2's certificate: $left s left, not 825 days"
left=$(tls_field proxy peer host1 seconds_left) || fail "no row for host1 in show tls: $(vctl proxy show tls)"
want=$((HOST1_END - $(date +%s)))
in_range "$left" $((want - 5)) $((want + 5)) || fail "host1's certificate: $left s left, not $want"
na=$(tls_field proxy self - not_after)
[[ $na == "$(date -u -d "$(openssl x509 -noout -enddate -in "$CA_DIR/proxy.crt" | cut -d= -f2)" +%Y-%m-%dT%H:%M:%SZ)" ]] ||
	fail "show tls says not_after $na"
vctl proxy -j show tls | grep -q '"seconds_left"' || fail "show tls in JSON: $(vctl proxy -j show tls)"
ip netns exec "$(ns proxy)" curl -sS --max-time 5 "http://$(addr proxy):$HP/metrics" >"$TMPD/metrics.txt" ||
	fail "GET /metrics failed"
v=$(sed -n 's/^vnet_tls_cert_expiry_seconds{node="proxy"} //p' "$TMPD/metrics.txt")
in_range "$v" $LO $HI || fail "vnet_tls_cert_expiry_seconds of the proxy is '$v'"
v=$(sed -n 's/^vnet_tls_cert_expiry_seconds{node="proxy",link="host2"} //p' "$TMPD/metrics.txt")
in_range "$v" $LO $HI || fail "vnet_tls_cert_expiry_seconds of host2's link is '$v'"
say "  proxy: $(tls_field proxy self - seconds_left) s left; gauge of host2: $v"

c1=$(link_field proxy host1 connects)
say "tls-crl added by reload is taken"
printf 'tls-crl %s\n' "$CA_DIR/crl.pem" >>"${D_CONF[proxy]}"
out=$(vctl proxy reload 2>&1) || fail "reload adding tls-crl failed: $out"
grep -qF "tls-crl $CA_DIR/crl.pem" <<<"$out" || fail "the reload does not report tls-crl: $out"
vctl proxy show config | grep -qxF "tls-crl $CA_DIR/crl.pem" || fail "show config lacks the tls-crl"
grep -q 'TLS: files read again' "${D_LOG[proxy]}" || fail "the proxy did not read its TLS files again"

say "a reload with a broken key file says so, and keeps what runs"
cp "$CA_DIR/proxy.key" "$TMPD/proxy.key.good"
echo garbage >"$CA_DIR/proxy.key"
rc=0
out=$(vctl proxy reload 2>&1) || rc=$?
((rc != 0)) || fail "a reload with a broken key succeeded: $out"
grep -q "TLS files not read again: tls-key $CA_DIR/proxy.key: not in PEM format" <<<"$out" ||
	fail "the reload's error does not name the key: $out"
say "  $(grep -m1 'TLS files' <<<"$out")"
cp "$TMPD/proxy.key.good" "$CA_DIR/proxy.key"
gping g1 "$IP2" || fail "ping after the failed reload"
link_up proxy host1 || fail "link host1 went down with the failed reload"
(($(link_field proxy host1 connects) == c1)) || fail "link host1 reconnected with the failed reload"
out=$(vctl proxy reload 2>&1) || fail "the reload with the key back failed: $out"
[[ -z $out ]] || fail "the key back as it was is a change: $out"

say "host2's certificate renewed in place (vnet-ca renew -d 5, same key); a ping every 10 ms goes on"
old_serial=$(serial_of "$CA_DIR/host2.crt")
in_guest g2 ping -n -q -c 400 -i 0.01 -W 1 "$IP1" >"$TMPD/ping.out" 2>&1 &
pp=$!
EXTRA_PIDS+=("$pp")
wait_for 5 gping g1 "$IP2"
old_hex=$(openssl x509 -noout -serial -in "$CA_DIR/host2.crt" | sed 's/^serial=//')
"$VNET_CA" renew -d 5 "$CA_DIR" host2 >/dev/null || fail "vnet-ca renew host2 failed"
new_serial=$(serial_of "$CA_DIR/host2.crt")
[[ $new_serial != "$old_serial" ]] || fail "the renewed certificate has the old serial"
out=$(vctl host2 reload 2>&1) || fail "host2's reload failed: $out"
grep -qF "tls: tls-cert $CA_DIR/host2.crt changed" <<<"$out" || fail "host2's reload does not report the certificate: $out"
grep -qF "tls-key" <<<"$out" && fail "host2's reload reports the key, which renew kept: $out"
wait "$pp" || fail "the ping during host2's reload failed: $(cat "$TMPD/ping.out")"
grep -q ' 400 received, 0% packet loss' "$TMPD/ping.out" || fail "the ping lost replies: $(cat "$TMPD/ping.out")"
say "  $(grep -o '[0-9]* packets transmitted.*loss' "$TMPD/ping.out")"
[[ $(strip0 "$(tls_field host2 self - serial)") == "$new_serial" ]] ||
	fail "host2's show tls: serial $(tls_field host2 self - serial), not the new $new_serial"
[[ $(strip0 "$(tls_field proxy peer host2 serial)") == "$old_serial" ]] ||
	fail "the proxy's link host2 is not the old connection"

say "the old certificate revoked: the proxy closes host2's link, host2 comes back with the new one"
"$VNET_CA" revoke -s "$old_hex" "$CA_DIR" host2 >/dev/null || fail "vnet-ca revoke -s $old_hex host2 failed"
out=$(vctl proxy reload 2>&1) || fail "the proxy's reload failed: $out"
grep -qF "tls: tls-crl $CA_DIR/crl.pem changed" <<<"$out" || fail "the reload does not report the CRL: $out"
wait_for 10 grep -q 'link host2: closed: its certificate is revoked by the new CRL' "${D_LOG[proxy]}" ||
	fail "the proxy's log does not say that host2's certificate is revoked"
# shellcheck disable=SC2317 # called through wait_for
peer_serial_is() { [[ $(strip0 "$(tls_field proxy peer host2 serial 2>/dev/null)") == "$1" ]]; }
wait_for 20 peer_serial_is "$new_serial" || fail "host2 did not come back with serial $new_serial: $(vctl proxy show tls)"
wait_for 10 gping g2 "$IP1" || fail "no ping after host2 came back"
say "  host2 back, serial $new_serial"

say "host1 revoked: the proxy's reload (by SIGHUP) closes its link, and refuses it from then on"
before=$(stat_value proxy tls_refused)
"$VNET_CA" revoke "$CA_DIR" host1 >/dev/null || fail "vnet-ca revoke host1 failed"
n=$(grep -c "reload: tls: tls-crl $CA_DIR/crl.pem changed" "${D_LOG[proxy]}")
kill -HUP "${D_PID[proxy]}"
# shellcheck disable=SC2317 # called through wait_for
crl_logged() { (($(grep -c "reload: tls: tls-crl $CA_DIR/crl.pem changed" "${D_LOG[proxy]}") > n)); }
wait_for 10 crl_logged || fail "the proxy's reload on SIGHUP does not log the CRL as changed"
wait_for 10 link_not_up proxy host1 || fail "link host1 stays up with its certificate revoked"
grep -q 'link host1: closed: its certificate is revoked by the new CRL' "${D_LOG[proxy]}" ||
	fail "the proxy's log does not say why host1's link closed"
wait_for 30 stat_at_least proxy tls_refused $((before + 3)) ||
	fail "host1 did not try again three times (tls_refused $(stat_value proxy tls_refused), was $before)"
grep -q 'refused: certificate refused (CN host1): certificate revoked' "${D_LOG[proxy]}" ||
	fail "the proxy's log does not say why host1 is refused"
link_not_up proxy host1 || fail "host1 came back with a revoked certificate"
link_not_up host1 proxy || fail "host1's link is up with a revoked certificate"
gping g2 "$IP1" && fail "g2 reaches g1 through a revoked host"
say "  refused $(($(stat_value proxy tls_refused) - before)) times since"
link_up proxy host2 || fail "link host2 went down"

say "without a reload: the proxy sees the CRL change within 30 s and closes host2's link"
"$VNET_CA" revoke "$CA_DIR" host2 >/dev/null || fail "vnet-ca revoke host2 failed"
t0=$SECONDS
# shellcheck disable=SC2317 # called through wait_for
revoked_twice() { (($(grep -c 'link host2: closed: its certificate is revoked by the new CRL' "${D_LOG[proxy]}") >= 2)); }
wait_for 35 revoked_twice || fail "the proxy did not read the changed CRL by itself"
grep -q 'TLS: the files changed: reading them again' "${D_LOG[proxy]}" ||
	fail "the proxy's log does not say that it read the files again by itself"
grep -qF "watch: tls: tls-crl $CA_DIR/crl.pem changed" "${D_LOG[proxy]}" ||
	fail "the proxy's log does not say which file changed"
wait_for 10 link_not_up proxy host2 || fail "link host2 stays up with its certificate revoked"
say "  closed after $((SECONDS - t0)) s"

say "expiry warned of as the daemons run: once per certificate and threshold"
t0=$SECONDS
# count_log DAEMON ERE: the lines of DAEMON's log that match.
count_log() { grep -Ec "$2" "${D_LOG[$1]}" || true; }
# shellcheck disable=SC2317 # called through wait_for
host1_crossed() { (($(count_log host1 "$H1_OWN") > 0)); }
H1_OWN="TLS: this node's certificate $CA_DIR/host1.crt \\(node host1\\) expires in 2[34] hours, on .*: renew it where the CA is \\(vnet-ca renew CADIR host1\\), copy the new host1.crt to $CA_DIR/host1.crt, then vnetctl reload"
t=$((HOST1_END - DAY - $(date +%s) + 15))
wait_for $((t > 12 ? t : 12)) host1_crossed ||
	fail "host1 did not warn as its certificate crossed 1 day left: $(grep -F 'TLS' "${D_LOG[host1]}")"
(($(count_log host1 "this node's certificate") == 1)) ||
	fail "host1 warned more than once: $(grep -F "this node's certificate" "${D_LOG[host1]}")"
(($(count_log host1 "warning: tls-cert .*host1.crt: expires in 1 day ") == 1)) ||
	fail "host1 did not warn once at start of its certificate under 7 days"
(($(count_log proxy 'link host1: the certificate of node host1 expires in (1 day|2[34] hours), on ') >= 1)) ||
	fail "the proxy did not warn of host1's certificate: $(grep -F 'certificate of node' "${D_LOG[proxy]}")"
n=$(count_log proxy 'link host2: the certificate of node host2 expires in [45] days, on .*vnet-ca renew CADIR host2.*then vnetctl reload there')
((n == 1)) || fail "the proxy warned $n times of host2's 5-day certificate: $(grep -F 'certificate of node' "${D_LOG[proxy]}")"
(($(count_log host2 "warning: tls-cert .*host2.crt: expires in [45] days") == 1)) ||
	fail "host2's reload did not warn once of its 5-day certificate"
(($(count_log host2 "this node's certificate") == 0)) ||
	fail "host2's own look warned again of what its reload warned of"
say "  $(grep -o "TLS: this node's certificate.*hours" "${D_LOG[host1]}") (waited $((SECONDS - t0)) s)"
say "  $(grep -o 'link host2: the certificate.*UTC' "${D_LOG[proxy]}")"
pass
