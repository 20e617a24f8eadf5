#!/bin/bash
#
# The README's examples, taken from the README: its test line is the one
# .ci/run finds; its demo line installs a part of what the test line does,
# and (as root) the demo runs with nothing on its PATH but what a minimal
# Debian and that line's packages install; the vnet-ca lines make the
# deployment's certificates, with which every configuration block passes
# `vnetd -n` without a word; doc/guide.md's whole configurations pass it
# too (warnings allowed: a plain listener is one); every vnetctl line of
# the README and doc/ parses.  it-deploy runs
# the deployment itself, it-vm its QEMU command lines.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_binaries
[[ -f $README ]] || fail "no README at $README"

say "the quick start's two lines"
# .ci/run's own pattern.
mapfile -t tl < <(grep -E '^ +apt-get update .*tests/run-all$' "$README")
((${#tl[@]} == 1)) || fail "${#tl[@]} lines match .ci/run's pattern, not 1"
grep -qF "grep -m1 -E '^ +apt-get update .*tests/run-all\$' README" "$LIB_DIR/../.ci/run" ||
	fail ".ci/run no longer takes the line by the pattern this test knows"
mapfile -t dl < <(grep -E '^ +apt-get update .*tests/demo\.sh$' "$README")
((${#dl[@]} == 1)) || fail "${#dl[@]} demo lines in the README, not 1"
# pkgs LINE: the packages of an apt-get install in LINE, sorted.
pkgs() { sed -E 's/.*apt-get install -y ([^&]*) &&.*/\1/' <<<"$1" | tr ' ' '\n' | grep . | sort -u; }
demo_pkgs=$(pkgs "${dl[0]}")
test_pkgs=$(pkgs "${tl[0]}")
extra=$(comm -23 <(printf '%s\n' "$demo_pkgs") <(printf '%s\n' "$test_pkgs"))
[[ -z $extra ]] || fail "the demo line installs what the test line does not: $extra"
say "the demo line installs $(wc -l <<<"$demo_pkgs") packages, the test line $(wc -l <<<"$test_pkgs")"
for p in chromium prometheus qemu-system-x86 valgrind clang; do
	grep -qx "$p" <<<"$demo_pkgs" && fail "the demo line installs $p, which only the tests need"
done

if [[ $(id -u) == 0 ]] && command -v dpkg-query >/dev/null && [[ -c /dev/net/tun ]]; then
	say "the demo with only a minimal Debian and the demo line's packages"
	# Every program of a package that Debian always installs (Essential,
	# or Priority required) or that the demo line names, and the
	# alternatives (awk) that point at one of them.
	bin=$TMPD/bin
	mkdir "$bin"
	{ dpkg-query -Wf '${Package} ${Essential} ${Priority}\n' |
		awk '$2 == "yes" || $3 == "required" { print $1 }'
		printf '%s\n' "$demo_pkgs"; } | sort -u | xargs dpkg -L 2>/dev/null |
		python3 -c '
import os, sys
have = {os.path.realpath(f) for f in sys.stdin.read().split("\n")
        if os.path.dirname(f) in ("/bin", "/sbin", "/usr/bin", "/usr/sbin")}
for d in ("/usr/bin", "/usr/sbin", "/bin", "/sbin"):
    for n in sorted(os.listdir(d)):
        f = os.path.join(d, n)
        t = os.path.join(sys.argv[1], n)
        if os.path.realpath(f) in have and os.access(f, os.X_OK) and not os.path.lexists(t):
            os.symlink(f, t)' "$bin"
	PATH=$bin bash "$LIB_DIR/demo.sh" >"$TMPD/demo.out" 2>&1 ||
		fail "the demo needs more than its line installs: $(tail -n 15 "$TMPD/demo.out")"
	grep -q 'OK: guest 1 reached guest 2' "$TMPD/demo.out" || fail "the demo did not reach its end"
	say "the demo ran with $(find "$bin" -mindepth 1 | wc -l) programs on its PATH"
fi

say "the deployment: certificates by the README's vnet-ca lines"
ROOT=$TMPD/nodes
readme_certs "$ROOT"

say "every configuration block passes vnetd -n without a word"
mapfile -t nodes < <(readme_nodes)
((${#nodes[@]} >= 3)) || fail "the README gives ${#nodes[@]} configurations, not a proxy and two hosts"
for n in "${nodes[@]}"; do
	readme_node_conf "$n" "$ROOT" >"$TMPD/$n.conf"
	grep -qx "node $n" "$TMPD/$n.conf" || fail "the block for $n does not name it"
	out=$("$VNETD" -n -f "$TMPD/$n.conf" 2>&1) || fail "vnetd -n refuses the README's $n: $out"
	[[ -z $out ]] || fail "vnetd -n on the README's $n: $out"
done

say "doc/guide.md's configurations pass vnetd -n, warnings aside"
GUIDE=$LIB_DIR/../doc/guide.md
mapfile -t gnodes < <(readme_nodes "$GUIDE")
((${#gnodes[@]} >= 4)) || fail "doc/guide.md gives ${#gnodes[@]} whole configurations"
for n in "${gnodes[@]}"; do
	readme_conf "$n" "$GUIDE" | sed "s|/usr/local/etc/vnetd|$TMPD/guide-$n|g" >"$TMPD/guide-$n.conf"
	mkdir -p "$TMPD/guide-$n"
	# The TLS files it names: this node's, issued by the run's CA.
	if grep -q '^tls-cert ' "$TMPD/guide-$n.conf"; then
		cert_issue "$n"
		cp "$CA_DIR/$n.crt" "$(awk '$1 == "tls-cert" { print $2 }' "$TMPD/guide-$n.conf")"
		cp "$CA_DIR/$n.key" "$(awk '$1 == "tls-key" { print $2 }' "$TMPD/guide-$n.conf")"
		cp "$CA_DIR/ca.crt" "$(awk '$1 == "tls-ca" { print $2 }' "$TMPD/guide-$n.conf")"
	fi
	out=$("$VNETD" -n -f "$TMPD/guide-$n.conf" 2>&1) || fail "vnetd -n refuses doc/guide.md's $n: $out"
	! grep -v ': warning: ' <<<"$out" | grep -q . || fail "vnetd -n on doc/guide.md's $n: $out"
done

say "every vnetctl line of the README and doc/ parses"
n=0
for f in "$README" "$LIB_DIR"/../doc/*.md; do
	while read -r l; do
		# The command alone: no comment, nothing it is piped into.
		l=${l%% #*}
		l=${l%% | *}
		read -r -a w <<<"$l"
		if [[ ${w[1]} == help ]]; then
			"$VNETCTL" "${w[@]:1}" >/dev/null || fail "${f##*/}: $l fails"
		else
			out=$("$VNETCTL" -s "$TMPD/none.sock" "${w[@]:1}" 2>&1) && fail "$l: answered without a daemon"
			[[ $out == *"cannot connect"* ]] || fail "${f##*/}: $l: $out"
		fi
		n=$((n + 1))
	done < <(README=$f readme_cmds vnetctl)
done
((n >= 20)) || fail "only $n vnetctl lines in the README and doc/"
pass
