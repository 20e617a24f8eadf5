#!/bin/bash
#
# MACs that belong to someone (routing auto, a proxy and three hosts, TLS)
# while guest 1 pings guest 2 every 0.1 s:
#
# - a hostile guest behind host3 sends a frame with guest 2's MAC as its
#   source every 20 ms: host3 drops them and counts them at its interface
#   (show interfaces foreign_src), host2 counts and logs the conflict,
#   every node keeps guest 2 at host2 and the ping loses next to nothing;
# - meanwhile a MAC sends from host1 and host3 in turns of 2.5 s: it moves
#   each turn until the fifth move freezes it at host3 (logged and
#   counted everywhere); host1's next turn does not take it back;
# - then an insider with a valid certificate claims guest 2's MAC in a
#   signed record with version 0xffffffff: refused for the jump, counted,
#   and guest 2 stays at host2.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing (the senders)"
python3 -c 'import cryptography' 2>/dev/null || skip "python3's cryptography is missing (the rogue signs)"

rstar_start 3
DAEMONS=(proxy host1 host2 host3)
for d in "${DAEMONS[@]}"; do
	wait_for 10 nodes_reachable "$d" 4 || fail "$d: show nodes: $(vctl "$d" show nodes)"
done
IP2=$(guest_ip 2)
G2=$(guest_mac 2)
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"
for d in "${DAEMONS[@]}"; do
	wait_for 5 owner_is "$d" "$G2" host2 || fail "$d: guest 2 not at host2: $(vctl "$d" show macs)"
done

# send GUEST MAC START TURN LIST GAP_MS: frames (broadcast, ethertype
# 0x88b5) with source MAC out of the guest's vtap0 every GAP_MS, during the
# turns in LIST (comma separated) of TURN seconds counted from START (the
# epoch); prints how many it sent.
send() {
	in_guest "$1" python3 - "$2" "$3" "$4" "$5" "$6" <<'PY'
import socket, sys, time
mac, start, turn, turns, gap = sys.argv[1:6]
start, turn, gap = float(start), float(turn), float(gap) / 1000
turns = [int(t) for t in turns.split(",")]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("vtap0", 0))
f = b"\xff" * 6 + bytes.fromhex(mac.replace(":", "")) + b"\x88\xb5" + bytes(46)
n = 0
while True:
    t = time.time() - start
    k = int(t // turn)
    if k > max(turns):
        break
    if k in turns:
        s.send(f)
        n += 1
    time.sleep(gap)
print(n)
PY
}

say "guest 1 pings guest 2; a hostile guest behind host3 sends with guest 2's MAC"
ip netns exec "${G_NS[g1]}" ping -n -i 0.1 -W 1 "$IP2" >"$TMPD/ping.out" 2>&1 &
PING_PID=$!
EXTRA_PIDS+=("$PING_PID")
FLAP=02:00:00:00:00:99
T0=$(($(date +%s) + 1))
TURN=2.5
send g3 "$G2" "$T0" "$TURN" 0,1,2,3,4,5,6 20 >"$TMPD/hostile.n" &
HOSTILE=$!
send g1 "$FLAP" "$T0" "$TURN" 0,2,4,6 100 >"$TMPD/flap1.n" &
FLAP1=$!
send g3 "$FLAP" "$T0" "$TURN" 1,3,5 100 >"$TMPD/flap3.n" &
FLAP3=$!
EXTRA_PIDS+=("$HOSTILE" "$FLAP1" "$FLAP3")
wait "$HOSTILE" "$FLAP1" "$FLAP3" || fail "a sender failed"
sent=$(cat "$TMPD/hostile.n")
dropped=$(iface_field host3 guest foreign_src)
say "the hostile guest sent $sent frames; host3 dropped $dropped at its interface"
((dropped * 100 >= sent * 95)) || fail "host3 dropped $dropped of the hostile guest's $sent frames"
(($(stat_value host2 mac_conflicts) >= 1)) || fail "host2 counted no conflict"
grep -q "MAC $G2 claimed by node host3 .* while it still sends here" "${D_LOG[host2]}" ||
	fail "host2 did not log host3's claim over guest 2's MAC"
for d in "${DAEMONS[@]}"; do
	owner_is "$d" "$G2" host2 || fail "$d: guest 2 is not at host2 after the hostile guest: $(vctl "$d" show macs)"
done

say "the flapping MAC"
for d in "${DAEMONS[@]}"; do
	(($(stat_value "$d" macs_frozen) >= 1)) || fail "$d did not freeze the flapping MAC"
	owner_is "$d" "$FLAP" host3 || fail "$d: the frozen MAC is not at host3: $(vctl "$d" show macs)"
done
grep -q "MAC $FLAP moved 5 times within 180 s: frozen at node host3" "${D_LOG[proxy]}" ||
	fail "the proxy did not report the flapping MAC"
(($(stat_value host1 mac_claims_frozen) >= 1)) || fail "host1 counted no claim kept off the frozen MAC"
(($(iface_field host1 guest foreign_src) >= 10)) || fail "host1 did not drop the frozen MAC's frames"
say "frozen everywhere at host3; host1 dropped $(iface_field host1 guest foreign_src) frames of its last turn"

say "an insider claims guest 2's MAC with version 0xffffffff"
cert_issue rogue
node_add rogue 9
rc=0
timeout 30 ip netns exec "$(ns rogue)" python3 "$(dirname "${BASH_SOURCE[0]}")/rogue.py" \
	"$(addr proxy)" "$PORT" "$CA_DIR/ca.crt" "$CA_DIR/rogue.crt" "$CA_DIR/rogue.key" \
	macclaim "$G2" >"$TMPD/rogue.out" 2>&1 || rc=$?
cat "$TMPD/rogue.out"
((rc == 0)) || fail "the rogue client failed (exit $rc)"
for d in "${DAEMONS[@]}"; do
	(($(stat_value "$d" mac_version_jumps) >= 1)) || fail "$d did not refuse the jump"
	owner_is "$d" "$G2" host2 || fail "$d: guest 2 is not at host2 after the rogue's claim: $(vctl "$d" show macs)"
done
grep -q "node rogue claims MAC $G2 with version 4294967295, more than 16 over the 1 held: refused" "${D_LOG[proxy]}" ||
	fail "the proxy did not log the refused claim"

kill -INT "$PING_PID"
wait_for 5 proc_gone "$PING_PID" || fail "ping did not stop"
wait "$PING_PID" 2>/dev/null || true
read -r psent got < <(awk '/packets transmitted/ { print $1, $4 }' "$TMPD/ping.out")
say "guest 1 -> guest 2: $got of $psent pings answered"
((psent >= 100)) || fail "only $psent pings were sent"
((got * 100 >= psent * 95)) || fail "guest 2 answered $got of $psent pings"
pass
