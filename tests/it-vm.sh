#!/bin/bash
#
# Two real virtual machines under QEMU (Debian's kernel with virtio-net and
# a busybox initramfs, built by tests/vm-image.sh and cached in the build
# directory), one behind each of two hosts h1 and h2 whose daemons are
# linked.  The VMs keep their default offloads: their virtio-net devices
# hand over partial checksums and TCP super-frames.  Each VM has three
# NICs, one for each way of attaching a VM, kept apart by routes on the
# NICs' MAC addresses:
#
#   a  the capture way: QEMU's TAP device (script=no, left down),
#      captured with `interface wa pcap DEV`, which brings it up;
#   b  the bridge way: QEMU's TAP device qvB and vnetd's persistent TAP
#      device vnB in bridge brB (`interface wb tap vnB persist yes bridge
#      brB`), as libvirt lays it out;
#   c  the socket way: QEMU's stream netdev connects to `interface wc qemu`.
#
# Ways a and c are the README's QEMU command lines, taken from the README:
# their -netdev and -device arguments as written (the TAP device's name
# too), only the netdev's id, the MAC and the socket's path made the VM's.
#
# For each way, from VM 1 to VM 2: ping, a 1372-byte ping with DF set, a
# 4000-byte ping (fragmented), a DNS query over UDP (dnsmasq in VM 2), and
# iperf3 TCP each way with no frame lost: no segment arrives after a gap,
# and no retransmission but tail loss probes (which the emulated VMs'
# late ACKs set off, and whose segments arrived: the receivers say so with
# D-SACKs); the captures and interfaces lose nothing.  Then vnetd on h1 restarts under a ping every 0.2 s on the
# bridge way, which loses at most a few.
#
# KVM when /dev/kvm works, else QEMU's software emulation.  Skipped where
# QEMU cannot run, and with VNET_SKIP_VM=1 (tests/run-all sets it for its
# sanitizer pass, so that the VMs run once per run).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
[[ ${VNET_SKIP_VM:-0} == 1 ]] && skip "VNET_SKIP_VM=1"
require_root
require_binaries
QEMU=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
command -v python3 >/dev/null || skip "python3 is missing"
VM_CACHE=${VM_CACHE:-$(cd "$(dirname "$VNETD")/.." && pwd)/tests/vm-cache}
say "VM image in $VM_CACHE"
bash "$LIB_DIR/vm-image.sh" "$VM_CACHE" >"$TMPD/vm-image.log" 2>&1 ||
	fail "could not build the VM image: $(tail -n 20 "$TMPD/vm-image.log")"

# The README's lines: vm1's is the capture way, vm2's the socket way.
readme_cmds qemu-system-x86_64 >"$TMPD/qemu.lines"
# readme_net VM: the -netdev and -device arguments of the README's line for
# VM (vm1, vm2), one a line.
readme_net() {
	grep -F "$1.qcow2" "$TMPD/qemu.lines" | tr ' ' '\n' |
		awk '/^-netdev$|^-device$/ { print; getline; print }'
}
mapfile -t NET_A < <(readme_net vm1)
mapfile -t NET_C < <(readme_net vm2)
[[ ${#NET_A[@]} == 4 && ${NET_A[1]} == tap,* && ${#NET_C[@]} == 4 && ${NET_C[1]} == stream,* ]] ||
	fail "the README's QEMU lines are not a tap and a stream netdev with a device each: $(cat "$TMPD/qemu.lines")"
TAPDEV=$(grep -oE 'ifname=[^,]+' <<<"${NET_A[1]}" | cut -d= -f2)
[[ -n $TAPDEV ]] || fail "the README's capture line names no TAP device"
# vm_net VM ID MAC [SOCK] ARGS...: the README's arguments with the VM's id,
# MAC and socket.
vm_net() {
	local id=$1 mac=$2 sock=$3
	shift 3
	printf '%s\n' "$@" | sed -E "s/id=[^,]+/id=$id/; s/netdev=[^,]+/netdev=$id/;
		s/mac=[0-9a-f:]+/mac=$mac/; s|addr\.path=[^,]+|addr.path=$sock|"
}

WAYS=(- a b c)
mac() { printf '52:54:00:0%d:0%d:01' "$1" "$2"; }	# VM, way 1..3
ip_of() { printf '10.%d.0.%d' "$2" "$1"; }		# VM, way

node_add h1 1
node_add h2 2

# host_conf I J: host I's daemon; its VM's frames go to the link, the other
# VM's frames from the link go to the NIC of the same way.
host_conf() {
	local i=$1 j=$2 w
	printf 'node h%d\n' "$i"
	# No AQM on the link: a slow run (emulated VMs beside a sanitized
	# daemon) queues there, and what CoDel would drop is not what this
	# test is about; it-aqm is.
	if ((i == 2)); then
		printf 'listen %s:%d allow %s\n' "$(addr h2)" "$PORT" "$UNDERLAY"
		printf 'set-link h1 aqm off\n'
	else
		printf 'link h2 %s:%d aqm off\n' "$(addr h2)" "$PORT"
	fi
	printf 'interface wa pcap %s\n' "$TAPDEV"
	printf 'interface wb tap vnB persist yes bridge brB\n'
	printf 'interface wc qemu %s\n' "$TMPD/vm$i.sock"
	for w in 1 2 3; do
		printf 'route %s any link h%d\n' "$(mac "$i" "$w")" "$j"
		printf 'route %s any interface w%s\n' "$(mac "$j" "$w")" "${WAYS[$w]}"
	done
}

for i in 1 2; do
	ip -n "$(ns "h$i")" link add brB type bridge
	ip -n "$(ns "h$i")" link set brB up
done
vnetd_start h2 "$(host_conf 2 1)"
vnetd_start h1 "$(host_conf 1 2)"
wait_link_up h1 h2

# vm_boot I ACCEL...: VM I in host I's namespace, in the background.
declare -A VM_PID=()
vm_boot() {
	local i=$1 n net
	local -a net_a net_c
	shift
	mapfile -t net_a < <(vm_net a "$(mac "$i" 1)" - "${NET_A[@]}")
	mapfile -t net_c < <(vm_net c "$(mac "$i" 3)" "$TMPD/vm$i.sock" "${NET_C[@]}")
	n=$(ns "h$i")
	rm -f "$TMPD/vm$i.ctl" "$TMPD/vm$i.console"
	net="vnet.net=$(mac "$i" 1)=$(ip_of "$i" 1)/24,$(mac "$i" 2)=$(ip_of "$i" 2)/24,$(mac "$i" 3)=$(ip_of "$i" 3)/24"
	ip netns exec "$n" "$QEMU" -nodefaults -display none -no-reboot \
		"$@" -m 256 -smp 1 \
		-kernel "$VM_CACHE/vmlinuz" -initrd "$VM_CACHE/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet $net" \
		-serial "file:$TMPD/vm$i.console" \
		-chardev "socket,id=ctl,path=$TMPD/vm$i.ctl,server=on,wait=off" \
		-serial chardev:ctl \
		"${net_a[@]}" \
		-netdev tap,id=b,ifname=qvB,script=no,downscript=no,vhost=off \
		-device "virtio-net-pci,netdev=b,mac=$(mac "$i" 2)" \
		"${net_c[@]}" \
		>"$TMPD/vm$i.qemu" 2>&1 {LIB_STDOUT}>&- {LIB_STDERR}>&- &
	VM_PID[$i]=$!
	EXTRA_PIDS+=("$!")
	D_LOG[vm$i-console]=$TMPD/vm$i.console
	D_LOG[vm$i-qemu]=$TMPD/vm$i.qemu
}

# shellcheck disable=SC2317 # called through wait_for
vm_ready() { grep -q 'init: ready' "$TMPD/vm$1.console" 2>/dev/null; }

# boot_both SECONDS ACCEL...: both VMs, in parallel; fails unless both are
# ready within SECONDS.
boot_both() {
	local i secs=$1
	shift
	for i in 1 2; do
		vm_boot "$i" "$@"
	done
	for i in 1 2; do
		wait_for "$secs" vm_ready "$i" || return 1
	done
}

started=$SECONDS
# Under KVM a VM is up in seconds; one that is not within 30 s will not
# be (a nested KVM that cannot run this kernel): emulation then, which
# takes 20 to 60 s here, longer on a machine busy with other work.
if [[ -c /dev/kvm && -w /dev/kvm ]] && boot_both 30 -accel kvm -cpu host; then
	ACCEL=kvm
else
	for i in "${!VM_PID[@]}"; do
		_stop_pid "${VM_PID[$i]}"
	done
	ACCEL=tcg
	boot_both 180 -accel tcg,thread=multi ||
		fail "the VMs did not boot: $(tail -n 5 "$TMPD/vm1.console" "$TMPD/vm1.qemu" 2>&1)"
fi
say "both VMs up in $((SECONDS - started)) s ($ACCEL)"

# vm I TIMEOUT CMD: runs CMD in VM I; its output, its status.
vm() { python3 "$LIB_DIR/vm_ctl.py" "$TMPD/vm$1.ctl" "$2" "$3"; }

# The bridge way, as libvirt would set it: QEMU's TAP device in the bridge.
for i in 1 2; do
	ip -n "$(ns "h$i")" link set qvB master brB up
done
vm 2 10 "iperf3 -s -D && dnsmasq --conf-file=/dev/null --no-resolv --no-hosts --user=root --group=root --address=/vm2.test/10.9.9.2 --pid-file=/tmp/dnsmasq.pid" ||
	fail "cannot start iperf3 and dnsmasq in VM 2"

# tcp_counters I: "RETRANS PROBES OFO" of VM I: segments retransmitted,
# tail loss probes among them (sent when an ACK is late, which the
# emulated VMs' timers make common), and segments that arrived after a gap.
# shellcheck disable=SC2016 # awk's fields, expanded in the VM
TCP_COUNTERS='awk '"'"'/^Tcp:/ { if (t++) r = $13 } /^TcpExt:/ { if (e++) { for (i = 2; i <= NF; i++) v[h[i]] = $i } else for (i = 2; i <= NF; i++) h[i] = $i } END { print r + 0, v["TCPLossProbes"] + 0, v["TCPOFOQueue"] + 0 }'"'"' /proc/net/snmp /proc/net/netstat'
tcp_counters() { vm "$1" 5 "$TCP_COUNTERS"; }

# iperf WAY [-R]: 2 s of TCP from VM 1 to VM 2 (-R: back); prints Mbit/s.
iperf() {
	local out
	out=$(vm 1 40 "iperf3 -c $(ip_of 2 "$1") -t 2 -J ${2:-}") ||
		fail "way $1: iperf3 ${2:-} failed: $out"
	awk '/"sum_received"/ { r = 1 } r && /"bits_per_second"/ { gsub(/[^0-9.]/, "", $2); printf "%.0f", $2 / 1e6; exit }' <<<"$out"
}

# check_way WAY NAME
check_way() {
	local w=$1 name=$2 peer out up down a1 b1 c1 a2 b2 c2 x1 y1 z1 x2 y2 z2 rtx probes ofo
	peer=$(ip_of 2 "$w")
	say "the $name way"
	wait_for 30 vm 1 5 "/usr/bin/ping -n -c 1 -W 2 $peer" ||
		fail "$name way: VM 1 cannot ping VM 2 ($peer)"
	out=$(vm 1 20 "/usr/bin/ping -n -c 3 -i 0.2 -W 2 $peer") || fail "$name way: ping: $out"
	grep -q ' 3 received' <<<"$out" || fail "$name way: ping lost replies: $out"
	out=$(vm 1 20 "/usr/bin/ping -n -c 2 -i 0.2 -W 2 -M do -s 1372 $peer") || fail "$name way: DF ping: $out"
	grep -q ' 2 received' <<<"$out" || fail "$name way: 1372-byte DF ping lost replies: $out"
	out=$(vm 1 20 "/usr/bin/ping -n -c 2 -i 0.2 -W 2 -s 4000 $peer") || fail "$name way: fragmented ping: $out"
	grep -q ' 2 received' <<<"$out" || fail "$name way: 4000-byte ping lost replies: $out"
	out=$(vm 1 20 "nslookup -type=a vm2.test $peer") || fail "$name way: DNS query failed: $out"
	grep -q '10.9.9.2' <<<"$out" || fail "$name way: DNS gave no answer: $out"
	read -r a1 b1 c1 <<<"$(tcp_counters 1)"
	read -r a2 b2 c2 <<<"$(tcp_counters 2)"
	up=$(iperf "$w")
	down=$(iperf "$w" -R)
	read -r x1 y1 z1 <<<"$(tcp_counters 1)"
	read -r x2 y2 z2 <<<"$(tcp_counters 2)"
	rtx=$((x1 - a1 + x2 - a2))
	probes=$((y1 - b1 + y2 - b2))
	ofo=$((z1 - c1 + z2 - c2))
	say "$name way: TCP $up Mbit/s VM 1 -> VM 2, $down Mbit/s back; $rtx segments retransmitted, $probes tail loss probes, $ofo segments after a gap"
	# A frame lost on the way leaves a gap at the receiver, or is resent
	# by a fast retransmit or a timeout: anything but a probe.
	((ofo == 0)) || fail "$name way: $ofo TCP segments arrived after a gap: frames were lost"
	((rtx - probes <= 0)) || fail "$name way: $((rtx - probes)) TCP retransmissions other than loss probes"
}

# no_drops WAY: neither daemon lost a frame at that way's interface or on
# the link.
no_drops() {
	local i
	for i in 1 2; do
		[[ $(iface_field "h$i" "w$1" capture_drops) == 0 &&
			$(iface_field "h$i" "w$1" drops) == 0 &&
			$(links_sum "h$i" drops) == 0 ]] ||
			fail "h$i lost frames: $(vctl "h$i" show interfaces; vctl "h$i" show links)"
	done
}

check_way 1 capture
no_drops a
check_way 3 socket
no_drops c
check_way 2 bridge
no_drops b

say "vnetd on h1 restarts under a ping every 0.2 s (the bridge way)"
vm 1 5 "/usr/bin/ping -n -i 0.2 -c 40 -W 1 $(ip_of 2 2) >/tmp/p 2>&1 &" || fail "cannot start the ping in VM 1"
wait_for 10 vm 1 3 "grep -q 'icmp_seq=3 ' /tmp/p" || fail "the ping does not run: $(vm 1 3 'cat /tmp/p')"
vnetd_stop h1 || fail "vnetd h1 did not exit cleanly"
ip -n "$(ns h1)" -o link show vnB | grep -q ' master brB ' || fail "vnB left the bridge with vnetd"
vnetd_restart h1
wait_link_up h1 h2
wait_for 20 vm 1 3 "grep -q 'packets transmitted' /tmp/p" || fail "the ping did not finish: $(vm 1 3 'cat /tmp/p')"
out=$(vm 1 3 "tail -n 2 /tmp/p")
sent=$(awk '/packets transmitted/ { print $1 }' <<<"$out")
got=$(awk '/packets transmitted/ { print $4 }' <<<"$out")
say "restart: $got of $sent replies"
((sent - got <= 5)) || fail "the restart lost $((sent - got)) of $sent pings: $out"
say "in all $((SECONDS - started)) s since the VMs started"
pass
