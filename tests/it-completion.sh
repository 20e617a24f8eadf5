#!/bin/bash
#
# The bash completion of vnetctl: `complete -p` knows it once loaded, and
# a scripted completion offers the verbs, the keywords, and the names of
# links, interfaces and routes of the running daemon given with -s.  The
# completion, `vnetctl help` and the daemon agree: the same verbs, every
# keyword completed first is in the verb's help, every show in help is
# completed and answered, and what help calls the file's only the daemon
# refuses at run time.
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

say "the completion, help and the daemon agree"
# The verbs help lists, and those completed first: the same.
help_verbs=$("$VNETCTL" help | awk '/^  [a-z-]+  / { print $1 }' | sort | paste -sd ' ')
[[ -n $help_verbs ]] || fail "vnetctl help lists no verb"
offers "$help_verbs" ""
offers "$help_verbs" -s "$SOCK" ""
# Each verb's first keywords are in its help.
for v in ${help_verbs/help/}; do
	usage=$("$VNETCTL" help "$v") || fail "vnetctl help lists $v, but help $v fails"
	for w in $(comp -s "$SOCK" "$v" ""); do
		# names from the daemon, and files
		[[ $w == *:* || $w =~ ^(peer[12]|guest|other|any)$ || -e $w ]] && continue
		[[ " $usage " =~ [^a-z-]${w}[^a-z_-] ]] || fail "completing '$v' offers '$w', which 'help $v' does not name: $usage"
	done
done
# What show takes: the alternatives of its usage, each completed, each
# answered by the daemon.
show_words=$("$VNETCTL" help show | python3 -c '
import sys
u = sys.stdin.readline().split(" ", 3)[3].strip()
depth, alt, words = 0, "", []
for ch in u + "|":
    if ch == "[": depth += 1
    elif ch == "]": depth -= 1
    if ch == "|" and depth == 0:
        words.append(alt.split()[0]); alt = ""
    else:
        alt += ch
print(" ".join(sorted(words)))')
[[ $show_words == *adapt* ]] || fail "help show lacks adapt: $("$VNETCTL" help show)"
offers "$show_words" -s "$SOCK" show ""
for w in $show_words; do
	arg=()
	[[ $w == link ]] && arg=(peer1)
	vctl a show "$w" "${arg[@]}" >/dev/null || fail "show $w, in help and completion, fails"
done
# help adapt works; a statement of the file only is named as such, and the
# daemon refuses it at run time.
"$VNETCTL" help adapt | grep -q '^usage: vnetctl adapt off|on' || fail "help adapt: $("$VNETCTL" help adapt 2>&1)"
"$VNETCTL" help | grep -q '^  [a-z-]*  *pause or resume the shortcuts' || fail "help does not list adapt"
for kw in offload threads; do
	"$VNETCTL" help | grep -q "^  $kw " && fail "help lists $kw as a verb"
	out=$("$VNETCTL" help "$kw") || fail "help $kw fails: $out"
	[[ $out == *"configuration file only"* ]] || fail "help $kw: $out"
	out=$(vctl a "$kw" yes 2>&1) && fail "vnetctl $kw yes was taken at run time"
	[[ $out == *"can only be set in the configuration file"* ]] || fail "vnetctl $kw yes: $out"
done
pass
