#!/bin/bash
#
# interface NAME qemu PATH: host h listens on PATH for QEMU's stream netdev
# (server=off); tests/qemu_stream.py speaks that protocol for guest 1 (a
# TAP device it relays, as QEMU relays a VM's NIC); guest 2 sits behind
# host b's TAP device.
#
#   - ping and TCP both ways; guest 2's super-frames are cut for the
#     socket, which takes none;
#   - when the "VM" goes, the interface goes down, and it comes back up
#     when one connects again (QEMU restarted);
#   - a second connection while one is up is refused and logged, unless
#     the one up has hung up (a VM restarted while the daemon was busy);
#   - a stream with a broken length loses its connection, and only it;
#   - the socket has mode 0660 and del-interface removes it.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing"
command -v iperf3 >/dev/null || skip "iperf3 is missing"
RELAY=$LIB_DIR/qemu_stream.py
SOCK=$TMPD/vm.sock

node_add h 1
node_add b 2
mkns g1
G_NS[g1]=$(ns g1)
vnetd_start b "node b
listen $(addr b):$PORT allow $UNDERLAY
learn yes
interface guest tap vtap0"
vnetd_start h "node h
learn yes
interface vm qemu $SOCK
link b $(addr b):$PORT"
guest_add g2 b vtap0 2
wait_link_up h b

iface_state() { [[ $(iface_field h vm state) == "$1" ]]; }

# relay_start: the "VM" connects; its NIC qeth0 gets guest 1's address.
RELAY_PID=""
relay_start() {
	# The last relay's device goes with it, not at once.
	wait_for 5 bash -c "! ip -n '${G_NS[g1]}' link show qeth0" ||
		fail "qeth0 of the last relay is still there"
	ip netns exec "${G_NS[g1]}" python3 "$RELAY" relay "$SOCK" qeth0 >"$TMPD/relay.out" 2>&1 &
	RELAY_PID=$!
	EXTRA_PIDS+=("$RELAY_PID")
	wait_for 10 grep -q connected "$TMPD/relay.out" || fail "the relay did not connect: $(cat "$TMPD/relay.out")"
	in_guest g1 ip link set qeth0 address "$(guest_mac 1)"
	in_guest g1 ip addr add "$(guest_ip 1)/24" dev qeth0
	in_guest g1 ip link set qeth0 up
	wait_for 5 iface_state up || fail "interface vm is not up with a VM connected"
}

[[ -S $SOCK ]] || fail "vnetd does not listen on $SOCK"
[[ $(stat -c %a "$SOCK") == 660 ]] || fail "$SOCK has mode $(stat -c %a "$SOCK"), not 660"
iface_state down || fail "interface vm is up with no VM connected"
[[ $(iface_field h vm type) == qemu ]] || fail "interface vm is not of type qemu"
[[ $(iface_field h vm dev) == "$SOCK" ]] || fail "show interfaces does not give the socket's path"

relay_start
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"

say "TCP both ways"
iperf_server g2
for dir in "" -R; do
	out=$(in_guest g1 iperf3 -c "$(guest_ip 2)" -t 2 -f m $dir 2>&1) || fail "iperf3 $dir failed: $out"
	grep -q receiver <<<"$out" || fail "iperf3 $dir gave no result: $out"
	say "iperf3 $dir: $(awk '/receiver/ { print $7, $8 }' <<<"$out")"
done
(($(stat_value h gso_cut) > 0)) || fail "h cut no super-frames for the socket"
n=$(($(guest_counter g1 TcpInCsumErrors) + $(guest_counter g2 TcpInCsumErrors)))
((n == 0)) || fail "$n TCP checksum errors at the guests"

say "a second connection is refused"
rc=0
in_guest g1 python3 "$RELAY" send "$SOCK" "" >"$TMPD/second" 2>&1 || rc=$?
((rc == 0)) || fail "the second connection was not closed: $(cat "$TMPD/second")"
grep -q 'interface vm: a second connection to .* refused' "${D_LOG[h]}" || fail "no log line for the refused connection"
gping g1 "$(guest_ip 2)" || fail "the first connection no longer works"

say "the VM goes and comes back"
kill "$RELAY_PID"
wait_for 5 iface_state down || fail "interface vm is still up with the VM gone"
relay_start
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2 after reconnecting"

# A QEMU restarted while the daemon was busy: the new one connects before
# the daemon has read the old one's hang-up.  The newcomer is taken, not
# refused for the dead connection.
say "a VM that connects before the last one's hang-up is read is taken"
kill -STOP "${D_PID[h]}"
ip netns exec "${G_NS[g1]}" python3 "$RELAY" relay "$SOCK" qeth1 >"$TMPD/relay2.out" 2>&1 &
RELAY2_PID=$!
EXTRA_PIDS+=("$RELAY2_PID")
wait_for 10 grep -q connected "$TMPD/relay2.out" ||
	{ kill -CONT "${D_PID[h]}"; fail "the second relay did not connect: $(cat "$TMPD/relay2.out")"; }
kill "$RELAY_PID"
wait "$RELAY_PID" 2>/dev/null || true
kill -CONT "${D_PID[h]}"
{ in_guest g1 ip link set qeth1 address "$(guest_mac 1)" &&
	in_guest g1 ip addr add "$(guest_ip 1)/24" dev qeth1 &&
	in_guest g1 ip link set qeth1 up; } 2>/dev/null ||
	fail "the VM that connected at once is gone: $(grep 'interface vm' "${D_LOG[h]}" | tail -n 3)"
wait_for 15 gping g1 "$(guest_ip 2)" || fail "the VM that connected at once was not taken: $(grep 'interface vm' "${D_LOG[h]}" | tail -n 3)"
iface_state up || fail "interface vm is not up"
RELAY_PID=$RELAY2_PID

say "a broken stream loses its connection, and only it"
kill "$RELAY_PID"
wait_for 5 iface_state down || fail "interface vm is still up with the VM gone"
rc=0
in_guest g1 python3 "$RELAY" send "$SOCK" 00000000 >"$TMPD/bad" 2>&1 || rc=$?
((rc == 0)) || fail "a zero length did not close the connection: $(cat "$TMPD/bad")"
in_guest g1 python3 "$RELAY" send "$SOCK" ffffffff0000 >"$TMPD/bad" 2>&1 || rc=$?
((rc == 0)) || fail "a huge length did not close the connection: $(cat "$TMPD/bad")"
grep -q 'frame length out of range' "${D_LOG[h]}" || fail "no log line for the broken stream"
wait_link_up h b 2
relay_start
wait_for 15 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2 after a broken stream"

say "del-interface removes the socket"
vctl h del-interface vm || fail "del-interface vm failed"
[[ ! -e $SOCK ]] || fail "$SOCK is still there after del-interface"
pass
