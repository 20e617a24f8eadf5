#!/bin/bash
#
# Why a link is down, from vnetctl alone: `show links` is narrow (name,
# state, peer, since, rates in and out, last error), `show link NAME` has
# the last error, how long ago, the time since the state changed and the
# next attempt; `show refused` lists the peers refused lately with the
# reason; a refused peer is counted once (refused, not bad_messages too);
# the rates show the traffic of an up link; a host that goes stays listed
# on the side it dialled, down with the reason, and its next connection
# joins the same link.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

# row DAEMON NAME: one value of `show link` (set by link_row).
link_row() {
	vctl "$1" -t show link "$2" | awk -F'\t' -v n="$3" \
		'$1 == n { print $2; found = 1; exit } END { exit !found }'
}
# narrow DAEMON LINK COLUMN: a column of the narrow `show links`.
narrow() {
	vctl "$1" -t show links | awk -F'\t' -v n="$2" -v c="$3" '
		$1 == n { print $c; found = 1; exit } END { exit !found }'
}

node_add alpha 1
node_add beta 2
vnetd_start alpha "node alpha
network right
listen $(addr alpha):$PORT allow $UNDERLAY"
vnetd_start beta "node beta
network wrong
link alpha $(addr alpha):$PORT"

say "the narrow table"
hdr=$(vctl beta show links | head -n 1 | tr -s ' ')
[[ $hdr == "name state peer since rate_in rate_out last_error origin liveness" ]] ||
	fail "show links has the columns '$hdr'"
width=$(vctl beta show links | awk '{ if (length($0) > w) w = length($0) } END { print w }')
say "show links is $width characters wide"

say "a refused peer: the reason on both ends"
wait_for 10 stat_at_least alpha refused 1 || fail "alpha did not refuse beta"
refused_why="node beta is in network wrong, not right"
wait_for 10 bash -c "'$VNETCTL' -s '${D_SOCK[alpha]}' -t show refused | grep -qF '$refused_why'" ||
	fail "show refused on alpha: $(vctl alpha show refused)"
vctl alpha -t show refused | awk -F'\t' -v a="$(addr beta)" -v w="$refused_why" '
	index($3, a ":") == 1 && $4 == "beta" && $5 == w { ok = 1 } END { exit !ok }' ||
	fail "show refused does not name beta's address, node and reason: $(vctl alpha show refused)"
[[ $(stat_value alpha bad_messages) == 0 ]] ||
	fail "a refusal was counted as a bad message too: $(vctl alpha show stats)"
# beta refuses alpha's hello too, unless alpha closed first: either way
# its link says why, or where to look.
BETA_WHY1="node alpha is in network right, not wrong"
BETA_WHY2="closed by the peer during the handshake: refused, or its listener is TLS and this link has no tls? (the peer's vnetctl show refused says which)"
beta_why_ok() {
	local w
	w=$(vctl beta -t show links | awk -F'\t' '$1 == "alpha" { print $7 }')
	[[ $w == "$BETA_WHY1" || $w == "$BETA_WHY2" ]]
}
wait_for 10 beta_why_ok || fail "beta's link alpha gives no reason: $(vctl beta show links)"
[[ $(narrow beta alpha 2) != up ]] || fail "the link came up"
err=$(link_row beta alpha last_error)
[[ $err == "$BETA_WHY1" || $err == "$BETA_WHY2" ]] || fail "show link: last_error '$err'"
[[ $(link_row beta alpha last_error_ago_s) =~ ^[0-9]+$ ]] || fail "show link has no last_error_ago_s"
[[ $(link_row beta alpha since_s) =~ ^[0-9]+$ ]] || fail "show link has no since_s"
next=""
wait_for 10 bash -c "'$VNETCTL' -s '${D_SOCK[beta]}' -t show link alpha | grep -qP '^next_attempt_ms\t[0-9]+$'" ||
	fail "show link gives no next attempt: $(vctl beta show link alpha)"
next=$(link_row beta alpha next_attempt_ms)
((next <= 30000)) || fail "the next attempt is $next ms away, beyond the backoff's 30 s"
say "beta: last error '$err', next attempt in $next ms"

say "refusals are counted once, however often beta tries"
wait_for 15 stat_at_least alpha refused 2 || fail "beta did not try again"
[[ $(stat_value alpha bad_messages) == 0 ]] || fail "refusals counted as bad messages"

say "an up link: state, since, and its rates in and out"
vctl beta del-link alpha
node_add gamma 3
vnetd_start gamma "node gamma
network right
learn yes
interface guest tap vtap0
link alpha $(addr alpha):$PORT"
vctl alpha learn yes
vctl alpha add-interface guest tap vtap0
guest_add g1 gamma vtap0 1
guest_add g2 alpha vtap0 2
wait_link_up gamma alpha
[[ $(narrow gamma alpha 7) == "-" ]] || fail "an up link that never failed has last error '$(narrow gamma alpha 7)'"
wait_for 10 gping g1 "$(guest_ip 2)" || fail "no ping across the link"
in_guest g1 ping -q -f -s 1400 -w 4 "$(guest_ip 2)" >/dev/null 2>&1 || true
r=$(narrow gamma alpha 5)
[[ $r =~ ^[0-9.]+[kMG]$ ]] || fail "rate_in of an up link with traffic is '$r'"
say "gamma: rate in $r, rate out $(narrow gamma alpha 6)"

say "a host gone: its incoming link stays listed on alpha, down, with the reason"
vnetd_stop gamma || fail "gamma exited non-zero"
wait_for 10 bash -c "[[ \$('$VNETCTL' -s '${D_SOCK[alpha]}' -t show links | awk -F'\t' '\$1 == \"gamma\" { print \$2 }') == down ]]" ||
	fail "alpha's link gamma is not listed down: $(vctl alpha show links)"
why=$(narrow alpha gamma 7)
[[ $why != "-" && -n $why ]] || fail "alpha's down link gamma gives no reason: $(vctl alpha show links)"
[[ $(link_field alpha gamma dir) == in ]] || fail "the kept link is not listed as incoming"
say "alpha: gamma down: $why"
vnetd_restart gamma
wait_link_up alpha gamma
[[ $(link_row alpha gamma connects) == 2 ]] ||
	fail "gamma's new connection did not join its kept link: $(vctl alpha show link gamma)"
pass
