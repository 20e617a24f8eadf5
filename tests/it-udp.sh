#!/bin/bash
#
# Datagram links (`transport auto`): the guests' frames in UDP, over TLS
# (AES-GCM, keys from the session) and plain.
#
#   - guests ping across a TLS and a plain datagram link, and the frames go
#     by datagrams (the datagram counters move, the TCP one does not carry
#     them);
#   - UDP blocked both ways, then one way: the frames fall back to the
#     connection and come back to datagrams when unblocked, with no ping
#     lost and the connection never dropped;
#   - rekeying every 100 ms under a bulk transfer: every byte arrives, no
#     datagram is lost or fails authentication;
#   - captured datagrams sent again (from another address) are dropped and
#     counted as replayed, and move nothing; forged, truncated and foreign
#     datagrams are dropped and counted, the link stays up;
#   - an endpoint whose source address changes (iptables SNAT) is followed;
#   - guests ping across a datagram link over an IPv6 underlay;
#   - a path whose MTU is 1280 in the middle (a router between two veths)
#     carries guest TCP and 1400-byte pings with DF, IPv4 and IPv6.
#
# Probes go every 100 ms here (VNET_UDP_PROBE_MS, for tests), so a failed
# path is noticed in a few hundred milliseconds.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iptables >/dev/null || skip "iptables is missing"
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v python3 >/dev/null || skip "python3 is missing"

export VNET_UDP_PROBE_MS=100
BULK="$(dirname "${BASH_SOURCE[0]}")/bulk.py"

# row DAEMON LINK NAME: one row of `show link`.
row() {
	vctl "$1" -t show link "$2" | awk -F'\t' -v n="$3" \
		'$1 == n { print $2; found = 1; exit } END { exit !found }'
}
# transport_is DAEMON LINK T: the link's frames go by T now.
transport_is() { [[ $(row "$1" "$2" transport_now) == "$3" ]]; }
in_ns() {
	local n=$1
	shift
	ip netns exec "$(ns "$n")" "$@"
}

say "a TLS datagram link: a (dialling) and b"
node_add a 1
node_add b 2
node_add c 3		# someone else on the underlay
HP=$((PORT + 50))
vnetd_start b "node b
$(tls_conf b)
listen $(addr b):$PORT tls
http 127.0.0.1:$HP
learn yes
set-link a transport auto
interface guest tap vtap0"
# Only a's keys change fast: b's stay, so that what b sent can be replayed.
VNET_UDP_REKEY_MS=100 vnetd_start a "node a
$(tls_conf a)
learn yes
interface guest tap vtap0
link b $(addr b):$PORT tls transport auto"
guest_add g1 a vtap0 1
guest_add g2 b vtap0 2
IP2=$(guest_ip 2)
wait_link_up a b
wait_for 10 transport_is a b udp || fail "a's frames do not go by datagrams: $(vctl a show link b)"
wait_for 10 transport_is b a udp || fail "b's frames do not go by datagrams: $(vctl b show link a)"
[[ $(row a b dgram_cipher) == AES-*-GCM ]] || fail "the datagrams' cipher is $(row a b dgram_cipher)"
r0=$(row b a dgram_received)
in_guest g1 ping -n -q -c 20 -i 0.02 -W 2 "$IP2" >/dev/null || fail "g1 cannot ping g2 over the datagram link"
r1=$(row b a dgram_received)
((r1 - r0 >= 20)) || fail "20 pings, but b received $((r1 - r0)) datagrams"
say "20 pings: b received $((r1 - r0)) datagrams; path MTU $(row a b path_mtu)"
# The same in JSON and in the metrics.
vctl a -j show links all | python3 -c '
import json, sys
l = [r for r in json.load(sys.stdin) if r["name"] == "b"][0]
assert l["transport"] == "udp" and l["dgram_state"] == "up", l
assert isinstance(l["path_mtu"], int) and l["path_mtu"] >= 1232, l
assert l["dgram_auth_failed"] == 0, l' || fail "show links all in JSON: $(vctl a -j show links all)"
command -v curl >/dev/null && {
	m=$(in_ns b curl -sS --max-time 5 "http://127.0.0.1:$HP/metrics") || fail "GET /metrics failed"
	grep -Eq '^vnet_link_udp\{node="b",link="a"\} 1$' <<<"$m" &&
		grep -Eq '^vnet_link_datagrams_received_total\{node="b",link="a"\} [1-9][0-9]*$' <<<"$m" &&
		grep -Eq '^vnet_link_path_mtu_bytes\{node="b",link="a"\} 1[0-9]{3}$' <<<"$m" ||
		fail "the metrics lack the datagram path: $(grep -E 'udp|datagram|mtu' <<<"$m")"
}
connects=$(row a b connects)

# UDP blocked: in a's namespace, both ways, then only what a sends.
PA=$(row b a dgram_endpoint)
PA=${PA##*:}
block() {
	in_ns a iptables -I OUTPUT -p udp -d "$(addr b)" --dport "$PORT" -j DROP
	[[ $1 == both ]] && in_ns a iptables -I INPUT -p udp -s "$(addr b)" --sport "$PORT" -j DROP
	return 0
}
unblock() {
	in_ns a iptables -D OUTPUT -p udp -d "$(addr b)" --dport "$PORT" -j DROP
	[[ $1 == both ]] && in_ns a iptables -D INPUT -p udp -s "$(addr b)" --sport "$PORT" -j DROP
	return 0
}
say "UDP blocked both ways, then one way, under a ping every 50 ms"
in_guest g1 bash -c 'echo $$ >"$1"; exec ping -n -i 0.05 -w 120 "$2"' - "$TMPD/ping.pid" "$IP2" \
	>"$TMPD/ping-fallback.out" 2>&1 &
PING=$!
EXTRA_PIDS+=("$PING")
wait_for 5 grep -q "icmp_seq=5 " "$TMPD/ping-fallback.out" || fail "no ping: $(cat "$TMPD/ping-fallback.out")"
for how in both one; do
	block $how
	wait_for 10 transport_is a b tcp || fail "UDP blocked ($how): a's frames still go by $(row a b transport_now)"
	wait_for 10 transport_is b a tcp || fail "UDP blocked ($how): b's frames still go by $(row b a transport_now)"
	n=$(grep -c "icmp_seq=" "$TMPD/ping-fallback.out")
	wait_for 5 bash -c "(( \$(grep -c icmp_seq= '$TMPD/ping-fallback.out') >= $n + 10 ))" ||
		fail "no ping by the connection ($how way blocked)"
	say "  blocked $how way(s): frames by the connection (${how}: a $(row a b dgram_state), b $(row b a dgram_state))"
	unblock $how
	wait_for 40 transport_is a b udp || fail "UDP unblocked ($how): a's frames stay on $(row a b transport_now)"
	wait_for 10 transport_is b a udp || fail "UDP unblocked ($how): b's frames stay on $(row b a transport_now)"
	n=$(grep -c "icmp_seq=" "$TMPD/ping-fallback.out")
	wait_for 5 bash -c "(( \$(grep -c icmp_seq= '$TMPD/ping-fallback.out') >= $n + 10 ))" ||
		fail "no ping after unblocking ($how)"
	say "  unblocked: frames by datagrams again"
done
kill -INT "$(cat "$TMPD/ping.pid")"
wait "$PING" || true
summary=$(grep "packets transmitted" "$TMPD/ping-fallback.out")
say "  ping: $summary; resent by the connection: a $(row a b dgram_resent), b $(row b a dgram_resent)"
[[ $summary =~ ([0-9]+)\ packets\ transmitted,\ ([0-9]+)\ received ]] || fail "ping said: $summary"
tx=${BASH_REMATCH[1]} rx=${BASH_REMATCH[2]}
# The last request may still be on its way when ping is stopped.
((rx >= tx - 1 && tx > 40)) || fail "pings lost across the fallbacks: $summary"
(($(row a b connects) == connects)) || fail "the link's connection dropped during the fallbacks"
(($(row a b dgram_fallbacks) >= 2)) || fail "a counted $(row a b dgram_fallbacks) fallbacks"

say "rekeying every 100 ms under a bulk transfer (24 MiB, the link at 200 Mbit/s)"
vctl a set-link b rate 200mbit || fail "set-link rate"
lost0=$(row b a dgram_lost) auth0=$(row b a dgram_auth_failed) rk0=$(row b a dgram_peer_rekeys)
in_guest g2 python3 "$BULK" serve "$IP2" 5001 >"$TMPD/bulk-r.out" 2>&1 &
EXTRA_PIDS+=("$!")
wait_for 10 grep -q listening "$TMPD/bulk-r.out" || fail "bulk receiver: $(cat "$TMPD/bulk-r.out")"
in_guest g1 timeout 60 python3 "$BULK" send "$IP2" 5001 $((24 << 20)) 7 >"$TMPD/bulk-s.out" 2>&1 ||
	fail "the bulk transfer failed: $(cat "$TMPD/bulk-s.out")"
# shellcheck disable=SC2317 # called through wait_for
bulk_got() { (($(wc -l <"$1") >= 2)); }
wait_for 10 bulk_got "$TMPD/bulk-r.out" || fail "g2 did not finish receiving: $(cat "$TMPD/bulk-r.out")"
sent=$(tail -n 1 "$TMPD/bulk-s.out") got=$(tail -n 1 "$TMPD/bulk-r.out")
[[ $got == "$sent" ]] || fail "g2 received '$got', g1 sent '$sent'"
lost=$(($(row b a dgram_lost) - lost0)) auth=$(($(row b a dgram_auth_failed) - auth0))
rk=$(($(row b a dgram_peer_rekeys) - rk0))
say "  ${got%% *} bytes intact; $rk new keys; datagrams lost $lost, failing authentication $auth"
((rk >= 5)) || fail "only $rk rekeys during the transfer"
((lost == 0 && auth == 0)) || fail "rekeying lost $lost datagrams, $auth failed authentication"
vctl a set-link b rate none || fail "set-link rate none"

say "captured datagrams replayed from another address; forged, truncated, foreign ones"
# capture N: N datagrams from b to a, as hex, one a line.
capture() {
	in_ns a timeout 10 python3 - "$1" "$PORT" <<'PY'
import socket, struct, sys
n, port = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
s.bind(("u0", 0))
got = 0
while got < n:
    p, addr = s.recvfrom(70000)
    if addr[2] == socket.PACKET_OUTGOING or p[9] != 17:
        continue
    ihl = (p[0] & 15) * 4
    sport, dport, ulen = struct.unpack(">HHH", p[ihl:ihl + 6])
    if sport != port:
        continue
    print(p[ihl + 8:ihl + ulen].hex(), flush=True)
    got += 1
PY
}
# send_from NODE HOST PORT FILE: each hex line of FILE as one datagram.
send_from() {
	in_ns "$1" python3 - "$2" "$3" "$4" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for line in open(sys.argv[3]):
    s.sendto(bytes.fromhex(line.strip()), (sys.argv[1], int(sys.argv[2])))
PY
}
capture 10 >"$TMPD/captured.hex" &
CAP=$!
in_guest g1 ping -n -q -c 40 -i 0.02 "$IP2" >/dev/null
wait "$CAP" || fail "no datagrams captured from b"
(($(wc -l <"$TMPD/captured.hex") == 10)) || fail "captured $(wc -l <"$TMPD/captured.hex") datagrams"
rp0=$(row a b dgram_replayed) mv0=$(row a b dgram_moved) ep0=$(row a b dgram_endpoint)
send_from c "$(addr a)" "$PA" "$TMPD/captured.hex"
wait_for 5 bash -c "(( \$('$VNETCTL' -s '${D_SOCK[a]}' -t show link b | awk -F'\t' '\$1 == \"dgram_replayed\" { print \$2 }') >= $rp0 + 10 ))" ||
	fail "10 replayed datagrams, but a counted $(($(row a b dgram_replayed) - rp0))"
say "  10 replayed from c: counted as replayed"
(($(row a b dgram_moved) == mv0)) && [[ $(row a b dgram_endpoint) == "$ep0" ]] ||
	fail "replayed datagrams moved the endpoint to $(row a b dgram_endpoint)"
af0=$(row a b dgram_auth_failed) mf0=$(row a b dgram_malformed) un0=$(stat_value a dgram_unknown)
python3 - "$TMPD/captured.hex" >"$TMPD/forged.hex" <<'PY'
import os, sys
lines = [l.strip() for l in open(sys.argv[1])]
d = bytearray.fromhex(lines[0])
d[20] ^= 0x01                      # a bit of the ciphertext
print(d.hex())
d = bytearray.fromhex(lines[1])
d[9] ^= 0x80                       # the counter, in the header
print(d.hex())
print(bytes.fromhex(lines[2])[:30].hex())   # truncated, shorter than a tag
print(bytes.fromhex(lines[3])[:-1].hex())   # one byte short
print((bytes.fromhex(lines[4])[:8] + os.urandom(80)).hex())  # our index, garbage
print(os.urandom(100).hex())       # nobody's
PY
send_from c "$(addr a)" "$PA" "$TMPD/forged.hex"
# forged_counted: the five for a's link, and the foreign one, are counted.
forged_counted() {
	local af mf un
	af=$(row a b dgram_auth_failed) mf=$(row a b dgram_malformed) un=$(stat_value a dgram_unknown)
	((af + mf - af0 - mf0 >= 5 && un - un0 >= 1))
}
wait_for 5 forged_counted || fail "forged datagrams: auth_failed $af0 -> $(row a b dgram_auth_failed), malformed $mf0 -> $(row a b dgram_malformed), unknown $un0 -> $(stat_value a dgram_unknown)"
say "  6 forged: $(($(row a b dgram_auth_failed) - af0)) failed authentication, $(($(row a b dgram_malformed) - mf0)) malformed, $(($(stat_value a dgram_unknown) - un0)) for no link"
(($(row a b dgram_moved) == mv0)) || fail "forged datagrams moved the endpoint"
link_up a b && transport_is a b udp || fail "the link is not up by datagrams after the forgeries"
(($(row a b connects) == connects)) || fail "the forgeries cost the connection"
gping g1 "$IP2" || fail "no ping after the forgeries"

say "a's source address changes (SNAT to another address): b follows"
# The flow's conntrack entry (if any) must expire first, or the new rule
# would not apply to it: its datagrams stop before conntrack for a moment.
ip -n "$(ns a)" addr add 10.66.0.11/24 dev u0
in_ns a sysctl -qw net.netfilter.nf_conntrack_udp_timeout=1 \
	net.netfilter.nf_conntrack_udp_timeout_stream=1 2>/dev/null || true
in_ns a iptables -t nat -A POSTROUTING -p udp -d "$(addr b)" --dport "$PORT" -j SNAT --to-source 10.66.0.11
in_ns a iptables -t raw -I OUTPUT -p udp -d "$(addr b)" --dport "$PORT" -j DROP
in_ns a iptables -t raw -I PREROUTING -p udp -s "$(addr b)" --sport "$PORT" -j DROP
no_entry() { ! in_ns a grep -qE " udp .* dport=$PORT " /proc/net/nf_conntrack 2>/dev/null; }
wait_for 10 no_entry || fail "the flow's conntrack entry stays: $(in_ns a cat /proc/net/nf_conntrack)"
# a's next datagram must make the new entry (and take the SNAT) before one
# of b's probes to the old address does: an entry made by b's would be
# that flow's, and a's datagrams its replies, never translated.
in_ns a iptables -t raw -D OUTPUT -p udp -d "$(addr b)" --dport "$PORT" -j DROP
snat_entry() { in_ns a grep -qE " udp .* dport=$PORT .* dst=10\.66\.0\.11 " /proc/net/nf_conntrack; }
if in_ns a test -r /proc/net/nf_conntrack; then
	wait_for 10 snat_entry || fail "a's datagrams did not take the SNAT: $(in_ns a cat /proc/net/nf_conntrack)"
fi
in_ns a iptables -t raw -D PREROUTING -p udp -s "$(addr b)" --sport "$PORT" -j DROP
ep_moved() { [[ $(row b a dgram_endpoint) == 10.66.0.11:* ]]; }
wait_for 40 ep_moved || fail "b's endpoint for a stays $(row b a dgram_endpoint)"
say "  b sends to $(row b a dgram_endpoint) now (moved $(row b a dgram_moved) time(s))"
wait_for 10 transport_is a b udp || fail "a's frames left datagrams after the address change"
in_guest g1 ping -n -q -c 10 -i 0.05 -W 2 "$IP2" >/dev/null || fail "no ping after the address change"
wait_for 10 transport_is b a udp || fail "b's frames left datagrams after the address change"

say "a plain datagram link: c (dialling) and b"
vctl b add-listen "$(addr b):$((PORT + 1))" allow "$UNDERLAY" || fail "a plain listener on b"
vctl b set-link c transport auto || fail "set-link c transport auto"
vnetd_start c "node c
learn yes
interface guest tap vtap0
link b $(addr b):$((PORT + 1)) transport auto"
guest_add g3 c vtap0 3
wait_link_up c b
wait_for 10 transport_is c b udp || fail "c's frames do not go by datagrams: $(vctl c show link b)"
[[ $(row c b dgram_cipher) == none ]] || fail "a plain link's datagrams have cipher $(row c b dgram_cipher)"
in_guest g3 ping -n -q -c 10 -i 0.05 -W 2 "$IP2" >/dev/null || fail "g3 cannot ping g2 over the plain datagram link"
vctl c set-link b transport tcp || fail "set-link b transport tcp"
wait_for 5 transport_is c b tcp || fail "transport tcp: c's frames stay on $(row c b transport_now)"
wait_for 5 transport_is b c tcp || fail "the peer's offer withdrawn: b's frames stay on $(row b c transport_now)"
gping g3 "$IP2" || fail "no ping after transport tcp"
say "  pings by datagrams, then transport tcp at run time"

say "an IPv6 underlay: p (dialling) and q"
node_add p 5
node_add q 6
for n in p q; do
	in_ns $n sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.u0.disable_ipv6=0
done
ip -n "$(ns p)" addr add fd66::5/64 dev u0 nodad
ip -n "$(ns q)" addr add fd66::6/64 dev u0 nodad
vnetd_start q "node q
listen [fd66::6]:$PORT allow fd66::/64
learn yes
set-link p transport auto
interface guest tap vtap0"
vnetd_start p "node p
learn yes
interface guest tap vtap0
link q [fd66::6]:$PORT transport auto"
guest_add g5 p vtap0 5
guest_add g6 q vtap0 6
wait_link_up p q
wait_for 10 transport_is p q udp || fail "p's frames do not go by datagrams over IPv6: $(vctl p show link q)"
wait_for 10 transport_is q p udp || fail "q's frames do not go by datagrams over IPv6: $(vctl q show link p)"
[[ $(row q p dgram_endpoint) == "[fd66::5]:"* ]] || fail "q sends to $(row q p dgram_endpoint)"
in_guest g5 ping -n -q -c 5 -i 0.05 -W 2 "$(guest_ip 6)" >/dev/null || fail "g5 cannot ping g6 over the IPv6 underlay"
say "  pings by datagrams to $(row p q dgram_endpoint), path MTU $(row p q path_mtu)"

say "a path whose MTU is 1280 in the middle: x -- r -- y (1280)"
mkns x
mkns r
mkns y
ip -n "$(ns x)" link add u0 type veth peer name rx netns "$(ns r)"
ip -n "$(ns y)" link add u0 type veth peer name ry netns "$(ns r)"
ip -n "$(ns y)" link set u0 mtu 1280
ip -n "$(ns r)" link set ry mtu 1280
ip -n "$(ns x)" addr add 10.68.1.1/24 dev u0
ip -n "$(ns r)" addr add 10.68.1.254/24 dev rx
ip -n "$(ns r)" addr add 10.68.2.254/24 dev ry
ip -n "$(ns y)" addr add 10.68.2.1/24 dev u0
for n in x r y; do
	for d in u0 rx ry; do ip -n "$(ns $n)" link set "$d" up 2>/dev/null || true; done
done
ip -n "$(ns x)" route add default via 10.68.1.254
ip -n "$(ns y)" route add default via 10.68.2.254
in_ns r sysctl -qw net.ipv4.ip_forward=1
vnetd_start y "node y
listen 10.68.2.1:$PORT allow 10.68.0.0/16
learn yes
set-link x transport auto
interface guest tap vtap0"
vnetd_start x "node x
learn yes
interface guest tap vtap0
link y 10.68.2.1:$PORT transport auto"
guest_add gx x vtap0 11
guest_add gy y vtap0 12
for g in gx gy; do
	in_guest $g sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.vtap0.disable_ipv6=0
done
in_guest gx ip addr add fd77::11/64 dev vtap0 nodad
in_guest gy ip addr add fd77::12/64 dev vtap0 nodad
wait_link_up x y
wait_for 10 transport_is x y udp || fail "x's frames do not go by datagrams: $(vctl x show link y)"
mtu_found() { (($(row x y path_mtu) <= 1252 && $(row y x path_mtu) <= 1252)); }
wait_for 10 mtu_found || fail "path MTU x $(row x y path_mtu), y $(row y x path_mtu): 1280 in the middle not found"
say "  path MTU found: x $(row x y path_mtu), y $(row y x path_mtu)"
IPY=$(guest_ip 12)
wait_for 10 gping gx "$IPY" || fail "gx cannot ping gy"
in_guest gx ping -n -q -c 5 -i 0.05 -W 2 -M do -s 1400 "$IPY" >/dev/null ||
	fail "a 1400-byte IPv4 ping with DF does not cross the 1280 path"
wait_for 5 in_guest gx ping -6 -n -q -c 1 -W 1 fd77::12 ||
	fail "gx cannot ping gy over IPv6"
in_guest gx ping -6 -n -q -c 5 -i 0.05 -W 2 -M do -s 1400 fd77::12 >/dev/null ||
	fail "a 1400-byte IPv6 ping does not cross the 1280 path"
say "  1400-byte pings with DF cross, IPv4 and IPv6 ($(row y x frag_whole) frames put back together at y)"
in_guest gy iperf3 -s -D -p 5201 -1 >/dev/null
wait_for 5 in_guest gy bash -c "ss -ltn | grep -q ':5201 '"
out=$(in_guest gx iperf3 -c "$IPY" -p 5201 -t 2 -J) || fail "guest TCP over IPv4 across the 1280 path failed"
v4=$(python3 -c 'import json,sys; print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))' <<<"$out")
in_guest gy iperf3 -s -D -p 5202 -1 >/dev/null
wait_for 5 in_guest gy bash -c "ss -ltn | grep -q ':5202 '"
out=$(in_guest gx iperf3 -6 -c fd77::12 -p 5202 -t 2 -J) || fail "guest TCP over IPv6 across the 1280 path failed"
v6=$(python3 -c 'import json,sys; print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))' <<<"$out")
say "  guest TCP across: IPv4 $v4 Mbit/s, IPv6 $v6 Mbit/s"
((v4 > 0 && v6 > 0)) || fail "no guest TCP across the 1280 path"

say "the router loses 2% of the datagrams: super-frames go cut, and are coalesced again"
in_ns r iptables -A FORWARD -p udp -m statistic --mode random --probability 0.02 -j DROP
in_guest gy iperf3 -s -D -p 5203 -1 >/dev/null
wait_for 5 in_guest gy bash -c "ss -ltn | grep -q ':5203 '"
out=$(in_guest gx iperf3 -c "$IPY" -p 5203 -t 3 -J) || fail "guest TCP across the lossy path failed"
lossy=$(python3 -c 'import json,sys; print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))' <<<"$out")
in_ns r iptables -D FORWARD -p udp -m statistic --mode random --probability 0.02 -j DROP
grep -q "link y: the peer lost .* super-frames go cut" "${D_LOG[x]}" ||
	fail "x did not hear of the loss: $(vctl x show link y | grep -E 'dgram_(lost|replies)')"
say "  guest TCP $lossy Mbit/s; y lost $(row y x dgram_lost) datagrams, made $(row y x gro_super) super-frames of $(row y x gro_merged) segments"
(($(row y x gro_super) > 0)) || fail "y coalesced no segments"
link_up x y || fail "the lossy path cost the link"
pass
