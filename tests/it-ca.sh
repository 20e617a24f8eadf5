#!/bin/bash
#
# vnet-ca's certificate lifecycle, no root needed: init, issue, renew (the
# old and the new certificate both verify, the new one ends later), list
# (status and days left), revoke of one serial (the CRL refuses it and not
# the other), issue twice refused naming renew, bad arguments refused.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
command -v openssl >/dev/null || skip "openssl is missing"
CA=$TMPD/ca2

# expect_fail WORD CMD...: CMD exits nonzero and its stderr holds WORD.
expect_fail() {
	local word=$1 err
	shift
	if err=$("$@" 2>&1 >/dev/null); then
		fail "'$*' succeeded; expected a refusal"
	fi
	grep -qi -- "$word" <<<"$err" || fail "'$*': error '$err' does not say '$word'"
}

"$VNET_CA" init "$CA" >/dev/null || fail "init failed"
"$VNET_CA" issue -d 100 "$CA" n1 >/dev/null || fail "issue failed"
old=$(openssl x509 -in "$CA/n1.crt" -noout -serial | sed 's/^serial=//')
old_end=$(date -u -d "$(openssl x509 -in "$CA/n1.crt" -noout -enddate | sed 's/^notAfter=//')" +%s)
key_before=$(sha256sum <"$CA/n1.key")
cp "$CA/n1.crt" "$TMPD/old.crt"

out=$("$VNET_CA" renew -d 200 "$CA" n1) || fail "renew failed"
grep -q 'reload' <<<"$out" || fail "renew does not say what to do next: $out"
new=$(openssl x509 -in "$CA/n1.crt" -noout -serial | sed 's/^serial=//')
new_end=$(date -u -d "$(openssl x509 -in "$CA/n1.crt" -noout -enddate | sed 's/^notAfter=//')" +%s)
[[ $old != "$new" ]] || fail "renew kept serial $old"
((new_end > old_end)) || fail "renewed certificate ends $new_end, not after $old_end"
[[ $(sha256sum <"$CA/n1.key") == "$key_before" ]] || fail "renew changed the key"
openssl verify -CAfile "$CA/ca.crt" "$TMPD/old.crt" >/dev/null || fail "old certificate does not verify"
openssl verify -CAfile "$CA/ca.crt" "$CA/n1.crt" >/dev/null || fail "new certificate does not verify"
"$VNET_CA" issue -d 10 "$CA" n2 >/dev/null || fail "issue n2 failed"

list=$("$VNET_CA" list "$CA") || fail "list failed"
printf '%s\n' "$list"
(($(wc -l <<<"$list") == 3)) || fail "list has not 3 lines"
grep -Eq "^n1 +$old +valid +[0-9-]{10} +(99|100)$" <<<"$list" || fail "list: old n1 line wrong"
grep -Eq "^n1 +$new +valid +[0-9-]{10} +(199|200)$" <<<"$list" || fail "list: new n1 line wrong"
grep -Eq "^n2 +[0-9A-F]+ +valid +[0-9-]{10} +(9|10) !$" <<<"$list" || fail "list: n2 has no warning mark"
[[ $(head -1 <<<"$list" | awk '{print $1}') == n1 ]] || fail "list not sorted"

out=$("$VNET_CA" revoke -s "$old" "$CA" n1) || fail "revoke -s failed"
grep -q 'tls-crl' <<<"$out" && grep -q 'vnetctl reload' <<<"$out" ||
	fail "revoke does not say to copy the CRL and reload: $out"
list=$("$VNET_CA" list "$CA")
grep -Eq "^n1 +$old +revoked " <<<"$list" || fail "list: $old not revoked: $list"
grep -Eq "^n1 +$new +valid " <<<"$list" || fail "list: $new not valid: $list"
if openssl verify -crl_check -CAfile "$CA/ca.crt" -CRLfile "$CA/crl.pem" "$TMPD/old.crt" >/dev/null 2>&1; then
	fail "revoked certificate $old verifies against the CRL"
fi
openssl verify -crl_check -CAfile "$CA/ca.crt" -CRLfile "$CA/crl.pem" "$CA/n1.crt" >/dev/null ||
	fail "certificate $new does not verify against the CRL"

expect_fail renew "$VNET_CA" issue "$CA" n1
expect_fail "no valid certificate with serial" "$VNET_CA" revoke -s "$old" "$CA" n1
expect_fail "invalid SERIAL" "$VNET_CA" revoke -s zz "$CA" n1
expect_fail "invalid node name" "$VNET_CA" renew "$CA" 'bad/name'
expect_fail "invalid DAYS" "$VNET_CA" renew -d 0 "$CA" n1
expect_fail "no such file" "$VNET_CA" renew "$CA" n9
expect_fail "no such directory" "$VNET_CA" list "$TMPD/nope"
expect_fail "usage" "$VNET_CA" list
expect_fail "unknown command" "$VNET_CA" frobnicate "$CA"

# revoke NODE without -s takes all that are valid.
"$VNET_CA" renew "$CA" n2 >/dev/null || fail "renew n2 failed"
out=$("$VNET_CA" revoke "$CA" n2) || fail "revoke n2 failed"
grep -q '2 certificate' <<<"$out" || fail "revoke n2 did not revoke both: $out"
(($("$VNET_CA" list "$CA" | grep -c '^n2 .* revoked ') == 2)) || fail "list: n2 not all revoked"
pass
