#!/bin/bash
#
# (d) Three hosts in a triangle of links (h1 -> h2, h2 -> h3, h3 -> h1),
# `learn yes`, no routes, a guest behind each: ARP and ping work between
# every pair, each daemon learns the three guests' MACs, and the cycle does
# not multiply frames.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries

for i in 1 2 3; do
	node_add "h$i" "$i"
done
for i in 1 2 3; do
	next=$((i % 3 + 1))
	vnetd_start "h$i" "node h$i
listen $(addr "h$i"):$PORT allow $UNDERLAY
learn yes
interface guest tap vtap0
link h$next $(addr "h$next"):$PORT"
done
for i in 1 2 3; do
	guest_add "g$i" "h$i" vtap0 "$i"
done
for i in 1 2 3; do
	next=$((i % 3 + 1))
	wait_link_up "h$i" "h$next"
	wait_link_up "h$next" "h$i"
done

total_frames_out() {
	local i sum=0
	for i in 1 2 3; do
		sum=$((sum + $(links_sum "h$i" frames_out)))
	done
	echo "$sum"
}

say "ARP and ping between every pair"
for i in 1 2 3; do
	for j in 1 2 3; do
		((i != j)) || continue
		wait_for 15 gping "g$i" "$(guest_ip "$j")" || fail "guest $i cannot ping guest $j"
	done
done
start=$(total_frames_out)

# 10 echoes on each of the three pairs: 60 frames.  Each crosses one link
# (two if a MAC was learned the long way round), so at most 120 frames out
# over all links, plus a few ARP refreshes; a loop would give thousands.
for pair in "1 2" "2 3" "3 1"; do
	read -r i j <<<"$pair"
	out=$(in_guest "g$i" ping -n -c 10 -i 0.1 -W 1 "$(guest_ip "$j")") || fail "ping $i -> $j failed: $out"
	grep -q ' 10 received' <<<"$out" || fail "ping $i -> $j lost replies: $out"
done
end=$(total_frames_out)
delta=$((end - start))
say "frames out over all links: $start after the first pings, +$delta for 30 pings"
((delta >= 60)) || fail "only $delta frames crossed the links for 60 echo frames"
((delta < 200)) || fail "$delta frames crossed the links for 60 echo frames: a storm"
((end < 400)) || fail "$end frames crossed the links in the whole test: a storm"
for i in 1 2 3; do
	say "h$i: duplicates $(stat_value "h$i" duplicates) hop_limit $(stat_value "h$i" hop_limit) floods $(stat_value "h$i" floods)"
done

say "learned MACs"
T=$'\t'
for i in 1 2 3; do
	macs=$(vctl "h$i" -t show macs)
	for j in 1 2 3; do
		if ((i == j)); then
			want="$(guest_mac "$j")${T}interface${T}guest${T}"
		else
			want="$(guest_mac "$j")${T}link${T}"
		fi
		grep -qF "$want" <<<"$macs" ||
			fail "h$i does not list '$want' in show macs: $(tr '\t\n' ' |' <<<"$macs")"
	done
done
pass
