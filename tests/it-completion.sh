#!/bin/bash
#
# The bash completion of vnetctl: `complete -p` knows it once loaded, and
# a scripted completion offers the verbs, the keywords, and the names of
# links, interfaces and routes of the running daemon given with -s.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
COMPLETION=$LIB_DIR/../completion/vnetctl
[[ -f $COMPLETION ]] || fail "no completion at $COMPLETION"

node_add a 1
vnetd_start a "node a
network comp
interface guest tap vtap0
interface other tap vtap1
link peer1 10.66.0.9:$PORT
link peer2 10.66.0.8:$PORT
route any 02:00:00:00:00:07 link peer1
route 02:00:00:00:00:05 any interface guest"
SOCK=${D_SOCK[a]}

# comp WORDS...: what the completion offers for the last word, sorted, one
# line each, in a fresh bash that loaded only the completion.
comp() {
	bash -c '
		. "$1"; shift
		complete -p vnetctl >/dev/null || exit 3
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_vnetctl
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$COMPLETION" "$VNETCTL" "$@"
}

# offers WANT WORDS...: the completion offers exactly WANT (words, blank-separated).
offers() {
	local want=$1 got
	shift
	got=$(comp "$@" | paste -sd ' ')
	[[ $got == "$want" ]] || fail "completing '$*' offered '$got', not '$want'"
}

say "complete -p"
got=$(bash -c '. "$1"; complete -p vnetctl' _ "$COMPLETION")
[[ $got == "complete -F _vnetctl vnetctl" ]] || fail "complete -p vnetctl: '$got'"

say "verbs and keywords"
offers "del-interface del-link del-listen del-route del-vcc" del
offers "del-interface del-link del-listen del-route del-vcc" -s "$SOCK" del
offers "link links" -s "$SOCK" show lin
offers "refused routes" -s "$SOCK" show r
offers "all" -s "$SOCK" show links ""
offers "no yes" -s "$SOCK" learn ""
offers "-n" -s "$SOCK" reload ""
offers "add-route" help add-r
offers "--help --version" --

say "names from the running daemon"
offers "peer1 peer2" -s "$SOCK" del-link ""
offers "peer2" -s "$SOCK" set-link peer2
offers "peer1 peer2" -s "$SOCK" show link ""
offers "guest other" -s "$SOCK" del-interface ""
offers "peer1 peer2" -s "$SOCK" add-route any any link ""
offers "guest other" -s "$SOCK" add-route any any interface ""
offers "02:00:00:00:00:05 any" -s "$SOCK" del-route ""
offers "02:00:00:00:00:07" -s "$SOCK" del-route any ""
offers "link" -s "$SOCK" del-route any 02:00:00:00:00:07 ""
offers "peer1" -s "$SOCK" del-route any 02:00:00:00:00:07 link ""
say "no daemon: no names, no error"
offers "" -s "$TMPD/none.sock" del-link ""
pass
