#!/bin/bash
#
# A captured device whose frames carry partial checksums and super-frames:
# guest 1 sits behind a veth (offloads as the kernel sets them: checksum
# and segmentation offload on) whose other end host a captures with a pcap
# interface; guest 2 sits behind host b's TAP device, guest 3 behind host
# c's, and c runs `offload no`.  Nothing turns offload off anywhere.
#
#   - TCP and UDP work both ways between guests 1 and 2, with no checksum
#     errors at either guest: the capture knows which frames are partial;
#   - guest 1's TCP data crosses the link a -> b as super-frames, whole;
#   - an 802.1Q tag, which the kernel hands over beside the frame, is put
#     back in;
#   - towards c, which takes none, a cuts them (gso_cut) and TCP works;
#   - `up yes` (the default) brings a captured device up, `up no` not;
#   - frames the capture's ring had no room for (the daemon stopped while
#     the guest sends) are counted in show interfaces and logged.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v python3 >/dev/null || skip "python3 is missing"

node_add a 1
node_add b 2
node_add c 3
mkns g1
G_NS[g1]=$(ns g1)
ip -n "$(ns a)" link add cap0 type veth peer name eth0 netns "${G_NS[g1]}"
ip -n "${G_NS[g1]}" link set eth0 address "$(guest_mac 1)"
ip -n "${G_NS[g1]}" addr add "$(guest_ip 1)/24" dev eth0
ip -n "${G_NS[g1]}" link set eth0 up
ip -n "$(ns a)" link set cap0 up
in_guest g1 ethtool -k eth0 | grep -q '^tx-checksumming: on' ||
	skip "the veth does not offload checksums here: nothing to test"

vnetd_start b "node b
listen $(addr b):$PORT allow $UNDERLAY
learn yes
interface guest tap vtap0"
vnetd_start c "node c
offload no
listen $(addr c):$PORT allow $UNDERLAY
learn yes
interface guest tap vtap0"
vnetd_start a "node a
learn yes
interface vm pcap cap0 promisc yes
link b $(addr b):$PORT
link c $(addr c):$PORT"
guest_add g2 b vtap0 2
guest_add g3 c vtap0 3
wait_link_up a b
wait_link_up a c

[[ $(iface_field a vm type) == pcap ]] || fail "interface vm is not of type pcap"
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"
wait_for 15 gping g1 "$(guest_ip 3)" || fail "guest 1 cannot ping guest 3"

# udp_echo GUEST_FROM GUEST_TO: a datagram and its echo, through python.
udp_echo() {
	in_guest "$2" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 5353))
s.settimeout(10)
d, a = s.recvfrom(2048)
s.sendto(d[::-1], a)' &
	EXTRA_PIDS+=("$!")
	wait_for 15 bash -c "ip netns exec '${G_NS[$2]}' ss -Hlun 'sport = :5353' | grep -q ." ||
		fail "no UDP listener in $2"
	in_guest "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(b"0123456789" * 50, (sys.argv[1], 5353))
d, a = s.recvfrom(2048)
sys.exit(0 if d == (b"0123456789" * 50)[::-1] else 1)' "$(guest_ip "${2#g}")"
}

csum_errors() {
	local g=$1
	echo $(($(guest_counter "$g" TcpInCsumErrors) + $(guest_counter "$g" UdpInCsumErrors)))
}

# iperf GUEST_FROM GUEST_TO [-R]: 2 s of TCP; fails unless it completes.
iperf() {
	local out
	# shellcheck disable=SC2086 # ${3:-}: no word, or -R
	out=$(in_guest "$1" iperf3 -c "$(guest_ip "${2#g}")" -t 2 -f m ${3:-} 2>&1) ||
		fail "iperf3 $1 -> $2 ${3:-} failed: $out"
	grep -q receiver <<<"$out" || fail "iperf3 $1 -> $2 gave no result: $out"
	say "iperf3 $1 -> $2 ${3:-}: $(awk '/receiver/ { print $7, $8 }' <<<"$out")"
}

say "UDP both ways between the captured veth and the TAP guest"
udp_echo g1 g2 || fail "UDP from guest 1 to guest 2 and back failed"
udp_echo g2 g1 || fail "UDP from guest 2 to guest 1 and back failed"

say "TCP both ways"
iperf_server g2
iperf g1 g2
iperf g1 g2 -R
for g in g1 g2; do
	n=$(csum_errors "$g")
	((n == 0)) || fail "$g counted $n TCP/UDP checksum errors"
done
f=$(link_field a b frames_out)
bytes=$(link_field a b bytes_out)
say "link a -> b: $bytes bytes in $f frames"
((bytes / f > 3000)) || fail "frames from the captured veth averaged $((bytes / f)) bytes: no super-frames crossed whole"
cut=$(stat_value a gso_cut)
((cut == 0)) || fail "a cut $cut super-frames for a peer that takes them"

say "an 802.1Q-tagged frame keeps its tag (the kernel hands it over aside)"
# Guest 2 listens on vtap0 for a frame of ether type 0x88b5 on VLAN 5 (the
# kernel gives the tag beside the frame: PACKET_AUXDATA); guest 1 sends it.
in_guest g2 python3 -c '
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("vtap0", 0))
s.setsockopt(263, 8, 1)                 # SOL_PACKET, PACKET_AUXDATA
s.settimeout(10)
open(sys.argv[1], "w").close()
while True:
    data, anc, _, _ = s.recvmsg(65536, 1024)
    if b"vnet-vlan-test" not in data:
        continue
    for level, kind, aux in anc:
        if level == 263 and kind == 8:
            status, _, _, _, _, tci = struct.unpack("IIIHHH", aux[:18])
            sys.exit(0 if status & 16 and tci & 0xfff == 5 else 3)
    sys.exit(4)' "$TMPD/vlan.ready" &
vlan_pid=$!
EXTRA_PIDS+=("$vlan_pid")
wait_for 10 test -e "$TMPD/vlan.ready" || fail "the VLAN listener in guest 2 did not start"
in_guest g1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
dst = bytes.fromhex(sys.argv[1].replace(":", ""))
src = bytes.fromhex(sys.argv[2].replace(":", ""))
for _ in range(5):
    s.send(dst + src + b"\x81\x00\x00\x05\x88\xb5" + b"vnet-vlan-test" + bytes(40))' \
	"$(guest_mac 2)" "$(guest_mac 1)" || fail "guest 1 could not send a tagged frame"
rc=0
wait "$vlan_pid" || rc=$?
((rc == 0)) || fail "guest 2 did not get the frame tagged with VLAN 5 (listener exit $rc)"

say "towards a peer with offload no, super-frames are cut"
iperf_server g3
iperf g1 g3
n=$(csum_errors g3)
((n == 0)) || fail "guest 3 counted $n checksum errors"
(($(stat_value a gso_cut) > 0)) || fail "a cut nothing for a peer that takes no super-frames"
[[ $(stat_value a gso_bad) == 0 ]] || fail "a could not cut some frames"

drops=$(iface_field a vm capture_drops)
say "capture drops so far: $drops"

say "up yes (the default) brings a captured device up; up no leaves it"
A_NS=$(ns a)
dev_up() { ip -n "$A_NS" link show "$1" | grep -q '<[^>]*[<,]UP[,>]'; }
ip -n "$A_NS" link add cap1 type veth peer name cap1p
ip -n "$A_NS" link add cap2 type veth peer name cap2p
dev_up cap1 && fail "cap1 is up before vnetd captures it"
vctl a add-interface vm1 pcap cap1 || fail "add-interface vm1 failed"
vctl a add-interface vm2 pcap cap2 up no || fail "add-interface vm2 up no failed"
wait_for 5 dev_up cap1 || fail "vnetd did not bring cap1 up"
dev_up cap2 && fail "vnetd brought cap2 up with up no"
vctl a show config | grep -qxF 'interface vm2 pcap cap2 up no' ||
	fail "show config lacks 'up no': $(vctl a show config)"
vctl a del-interface vm1
vctl a del-interface vm2

say "frames the capture loses are counted and logged"
vctl a del-interface vm || fail "del-interface vm failed"
vctl a add-interface vm pcap cap0 buffer 128k ||
	fail "add-interface vm with a small buffer failed"
wait_for 10 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2 after the interface came back"
before=$(iface_field a vm capture_drops)
kill -STOP "${D_PID[a]}"
sent=$(udp_burst g1 "$(guest_ip 2)" 20000)
kill -CONT "${D_PID[a]}"
wait_for 10 bash -c "(( \$(\"$VNETCTL\" -s '${D_SOCK[a]}' -t show interfaces | awk -F'\t' '\$1 == \"vm\" { print \$10 }') > $before ))" ||
	fail "no capture drops counted after $sent datagrams into a stopped daemon: $(vctl a show interfaces)"
drops=$(iface_field a vm capture_drops)
say "$sent datagrams sent, $drops lost at capture"
((drops < sent)) || fail "all $sent datagrams counted lost: the ring took none"
wait_for 5 grep -q 'interface vm: the capture on cap0 is losing frames' "${D_LOG[a]}" ||
	fail "no log line says that the capture lost frames"
wait_for 10 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2 after the drops"
pass
