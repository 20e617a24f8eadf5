#!/bin/bash
# Captures the frames of tests/vcc_frames.h (root; by hand): two namespaces
# joined by a veth with offloads off, three short TCP connections, and the
# capture written out as C arrays.  Usage: tests/tools/vcc-capture.sh > tests/vcc_frames.h
set -euo pipefail
W=$(mktemp -d); trap 'rm -rf "$W"; ip netns del cap6a 2>/dev/null; ip netns del cap6b 2>/dev/null' EXIT
cd "$W"
A=cap6a; B=cap6b
ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true
ip netns add $A; ip netns add $B
ip -n $A link add va type veth peer name vb netns $B
ip -n $A link set va address 02:00:00:00:00:01
ip -n $B link set vb address 02:00:00:00:00:02
for n in $A $B; do ip -n $n link set lo up; done
ip -n $A addr add 10.77.0.1/24 dev va; ip -n $B addr add 10.77.0.2/24 dev vb
ip -n $A addr add fd00::1/64 dev va nodad; ip -n $B addr add fd00::2/64 dev vb nodad
ip -n $A link set va up; ip -n $B link set vb up
ip netns exec $A ethtool -K va tx off tso off gso off gro off >/dev/null 2>&1 || true
ip netns exec $B ethtool -K vb tx off tso off gso off gro off >/dev/null 2>&1 || true
ip netns exec $A sysctl -qw net.ipv4.tcp_ecn=0
ip netns exec $B sysctl -qw net.ipv4.tcp_ecn=2
sleep 1
ip netns exec $A tcpdump -i va -w cap.pcap -U tcp 2>/dev/null &
TD=$!
sleep 1
cat > srv.py <<'PY'
import socket,sys
fam = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
s=socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR,1); s.bind((sys.argv[1],int(sys.argv[2]))); s.listen(5)
for i in range(int(sys.argv[3])):
    c,_=s.accept(); d=c.recv(1000); c.sendall(b'R'*200); c.recv(1000); c.close()
PY
cat > cli.py <<'PY'
import socket,sys,time
fam = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
c=socket.socket(fam); c.connect((sys.argv[1],int(sys.argv[2]))); c.sendall(b'Q'*100); d=c.recv(1000); time.sleep(0.1); c.close()
PY
ip netns exec $B python3 srv.py 10.77.0.2 5201 2 & S1=$!
ip netns exec $B python3 srv.py fd00::2 5202 1 & S2=$!
sleep 0.5
ip netns exec $A python3 cli.py 10.77.0.2 5201
sleep 0.3
ip netns exec $A sysctl -qw net.ipv4.tcp_ecn=1
ip netns exec $A python3 cli.py 10.77.0.2 5201
sleep 0.3
ip netns exec $A sysctl -qw net.ipv4.tcp_ecn=0
ip netns exec $A python3 cli.py fd00::2 5202
sleep 1
kill $TD; wait $S1 $S2 || true
sleep 0.5

python3 - cap.pcap <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = 24
pk = []
while off < len(d):
    _, _, cl, _ = struct.unpack('<IIII', d[off:off + 16])
    off += 16
    pk.append(d[off:off + cl])
    off += cl
names = ['syn', 'synack', 'ack', 'data', 'dack', 'rdata', 'ack2', 'fin', 'rfin', 'lastack']
print("""/*
 * Real frames, captured with tcpdump on a veth (offloads off, so every
 * checksum is whole) between 02:00:00:00:00:01 (10.77.0.1, fd00::1: "the
 * guest") and 02:00:00:00:00:02 (10.77.0.2, fd00::2), Linux 6.18.  Three
 * connections of ten segments each: SYN, SYN-ACK, ACK, 100 bytes from the
 * client, its ACK, 200 bytes back, their ACK, FIN, FIN, last ACK.
 *   v4_*   IPv4, the client without ECN (tcp_ecn=0)
 *   ecn_*  IPv4, the client with ECN (tcp_ecn=1): SYN ECE|CWR, SYN-ACK ECE,
 *          data ECT(0)
 *   v6_*   IPv6, without ECN
 * Generated from the capture by tests/tools/vcc-capture.sh; do not edit.
 */
""")
for ci, pref in enumerate(['v4', 'ecn', 'v6']):
    for i, n in enumerate(names):
        b = pk[ci * 10 + i]
        print("static const uint8_t %s_%s[] = {" % (pref, n))
        for j in range(0, len(b), 12):
            print("\t" + ", ".join("0x%02x" % x for x in b[j:j + 12]) + ",")
        print("};")
PY
