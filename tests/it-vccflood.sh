#!/bin/bash
#
# One guest's SYN flood against another's vCC state.  Guest 1 (no ECN of
# its own, `vcc guest ecn virtual`) uploads 4 MB to guest 2 over one
# connection, whose data leaves ECT(0), and pauses.  Meanwhile guest 3, on
# another interface of the same daemon, sends 200,000 SYNs of as many
# connections.  Then guest 1 uploads 4 MB more on the same connection.
# Guest 3's interface holds a quarter of the flow table at most, so guest
# 1's entry stays and its data still leaves ECT(0) (vcc_ect_set grows).
# Without the quota the flood evicts the idle entry, and an upload's entry
# cannot get its ECN back without the SYN (the remote sends only ACKs).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v iperf3 >/dev/null || skip "iperf3 is missing"
command -v python3 >/dev/null || skip "python3 is missing (the flood)"

node_add h1 1
node_add h2 2
vnetd_start h2 "node h2
listen $(addr h2):$PORT allow $UNDERLAY
interface guest tap vtap0
route $(guest_mac 2) any link h1
route not-$(guest_mac 2) any interface guest"
# Guest 3's frames go nowhere (no rule covers them): dropped, after vCC
# saw them on their way in.
vnetd_start h1 "node h1
interface guest tap vtap0
interface flooder tap vtap3
link h2 $(addr h2):$PORT
route $(guest_mac 1) any link h2
route not-$(guest_mac 1) $(guest_mac 1) interface guest
route not-$(guest_mac 1) ff:ff:ff:ff:ff:ff interface guest
vcc guest ecn virtual"
guest_add g1 h1 vtap0 1
guest_add g2 h2 vtap0 2
guest_add g3 h1 vtap3 3
in_guest g1 sysctl -qw net.ipv4.tcp_ecn=0
in_guest g2 sysctl -qw net.ipv4.tcp_ecn=1
wait_link_up h1 h2
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"

# A sink in guest 2; guest 1's client sends a burst, waits for $TMPD/go,
# sends another, and says when each is out.
in_guest g2 python3 -c '
import socket
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", 7000))
l.listen(1)
c, _ = l.accept()
while c.recv(1 << 16):
    pass
' &
EXTRA_PIDS+=("$!")
# shellcheck disable=SC2317 # called through wait_for
sink_up() { in_guest g2 ss -Hltn 'sport = :7000' | grep -q .; }
wait_for 10 sink_up || fail "the sink in guest 2 does not listen"
in_guest g1 python3 -c '
import os, socket, sys, time
s = socket.create_connection((sys.argv[1], 7000))
burst = bytes(4 << 20)
s.sendall(burst)
print("burst 1 out", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
s.sendall(burst)
print("burst 2 out", flush=True)
s.close()
' "$(guest_ip 2)" "$TMPD/go" >"$TMPD/client.out" 2>&1 &
CLIENT_PID=$!
EXTRA_PIDS+=("$CLIENT_PID")
# shellcheck disable=SC2317 # called through wait_for
burst_out() { grep -q "burst $1 out" "$TMPD/client.out"; }
wait_for 20 burst_out 1 || fail "guest 1's first burst did not go: $(cat "$TMPD/client.out")"
ect1=$(stat_value h1 vcc_ect_set)
((ect1 > 10)) || fail "guest 1's data does not leave ECT(0): $(vctl h1 show flows)"

say "guest 3 sends 200,000 SYNs"
in_guest g3 python3 - <<'PY' || fail "the flood failed"
import os, socket, struct
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("vtap3", 0))
eth = bytes.fromhex("02000000eeee020000000003") + b"\x08\x00"
sent = 0
for i in range(200000):
    dst = bytes([10, 78, (i >> 16) & 0xff, 1 + ((i >> 8) & 0x7f)])
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40, i & 0xffff, 0, 64, 6, 0,
                     bytes([10, 77, 0, 3]), dst)
    tcp = struct.pack("!HHIIBBHHH", 1024 + (i & 0x7fff), 80, i, 0, 5 << 4,
                      0x02, 65535, 0, 0)
    while True:
        try:
            s.send(eth + ip + tcp)
            break
        except OSError:                     # TAP queue full: let it drain
            os.sched_yield()
    sent += 1
print("sent %d" % sent)
PY
say "flow table: tcp_flows $(stat_value h1 tcp_flows), flows_over_share" \
	"$(stat_value h1 flows_over_share), flows_evicted $(stat_value h1 flows_evicted)"
ect0=$(stat_value h1 vcc_ect_set)
touch "$TMPD/go"
wait_for 20 burst_out 2 || fail "guest 1's second burst did not go: $(cat "$TMPD/client.out")"
wait "$CLIENT_PID" || fail "guest 1's client failed: $(cat "$TMPD/client.out")"
ect2=$(stat_value h1 vcc_ect_set)
say "frames sent ECT(0) for guest 1: $ect1 in the first burst, $((ect2 - ect0)) in the second"
((ect2 - ect0 >= ect1 / 4)) ||
	fail "guest 1's data stopped leaving ECT(0) after the flood: $(vctl h1 show flows | grep -v 10.78)"
(($(stat_value h1 flows_over_share) >= 50000)) ||
	fail "guest 3's SYNs did not churn its own share: flows_over_share $(stat_value h1 flows_over_share)"
(($(stat_value h1 flows_evicted) == 0)) || fail "entries of other interfaces were evicted"
pass
