# shellcheck shell=bash
#
# Shared helpers for the integration tests, the demo and the benchmark.
#
# Every daemon runs in its own network namespace; the namespaces are joined
# by an underlay (a "switch" namespace holding a Linux bridge, with a veth
# into each daemon's namespace, addresses 10.66.0.N/24 that exist only inside
# those namespaces).  A guest is a namespace into which the test moves a TAP
# device that a daemon created; guests use 10.77.0.N/24 and the MAC
# 02:00:00:00:00:NN.  All traffic stays inside namespaces the run made.
#
# Sourcing this file installs a trap (EXIT, and INT and TERM, which exit)
# that stops every vnetd the script started and deletes every namespace it
# made, and on failure prints the daemons' state and logs first.
#
# Environment: VNETD, VNETCTL (default: ../src relative to this file),
# VNETD_FLAGS (default -v).  The sourcing script runs under set -euo pipefail.

set -euo pipefail

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${VNETD:=$LIB_DIR/../src/vnetd}"
: "${VNETCTL:=$LIB_DIR/../src/vnetctl}"
: "${VNET_CA:=$LIB_DIR/../scripts/vnet-ca}"
VNETD_FLAGS=${VNETD_FLAGS--v}	# -v: debug logs, shown when a test fails
TEST_NAME=$(basename "$0" .sh)

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/vnet.XXXXXX")
NSPFX="vn$$-$RANDOM-"		# namespace names unique to this run

CREATED_NS=()			# namespaces to delete
VNETD_WRAP=()			# command words before the next vnetd (ip netns exec ...)
STARTED_PIDS=()			# every vnetd ever started (restarts too)
EXTRA_PIDS=()			# other background processes (iperf3 servers, ...)
declare -A D_PID=() D_NS=() D_SOCK=() D_CONF=() D_LOG=()
declare -A NODE_ADDR=() G_NS=()
SWITCH_NS=""

say() { printf '%s: %s\n' "$TEST_NAME" "$*"; }

fail() {
	printf '%s: FAIL after %d s: %s\n' "$TEST_NAME" "$SECONDS" "$*" >&2
	exit 1
}

skip() {
	printf '%s: SKIP: %s\n' "$TEST_NAME" "$*"
	exit 77
}

# pass: the test's last step.  Every daemon still running must exit 0 on
# SIGTERM (a sanitizer build exits non-zero on a leak or an error, too).
pass() {
	local name rc
	for name in "${!D_PID[@]}"; do
		proc_running "${D_PID[$name]}" || continue
		rc=0
		vnetd_stop "$name" || rc=$?
		((rc == 0)) || fail "vnetd $name exited $rc on SIGTERM"
		[[ ! -e ${D_SOCK[$name]} ]] || fail "vnetd $name left its socket behind"
	done
	say "PASS in $SECONDS s"
	exit 0
}

proc_running() {
	local st
	[[ -r /proc/$1/stat ]] || return 1
	read -r st </proc/"$1"/stat 2>/dev/null || return 1
	st=${st##*) }
	[[ ${st%% *} != Z ]]
}

proc_gone() { ! proc_running "$1"; }

# wait_for TIMEOUT_SECONDS CMD...: runs CMD every 0.1 s until it succeeds
# (returns 0) or TIMEOUT_SECONDS have passed (returns 1).  CMD's output is
# discarded.  This is the only place that sleeps.
wait_for() {
	local timeout=$1 deadline now
	shift
	now=${EPOCHREALTIME/./}
	deadline=$((now + timeout * 1000000))
	while :; do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		now=${EPOCHREALTIME/./}
		((now < deadline)) || return 1
		sleep 0.1
	done
}

_dump_state() {
	local name
	for name in "${!D_PID[@]}"; do
		proc_running "${D_PID[$name]}" || continue
		echo "---- $name: show links / interfaces / routes / stats"
		"$VNETCTL" -s "${D_SOCK[$name]}" show links 2>&1 || true
		"$VNETCTL" -s "${D_SOCK[$name]}" show interfaces 2>&1 || true
		"$VNETCTL" -s "${D_SOCK[$name]}" show routes 2>&1 || true
		"$VNETCTL" -s "${D_SOCK[$name]}" show stats 2>&1 || true
	done
	for name in "${!D_LOG[@]}"; do
		echo "---- $name: log (${D_LOG[$name]}, last 100 lines)"
		tail -n 100 "${D_LOG[$name]}" 2>/dev/null || true
	done
}

_stop_pid() {
	local pid=$1
	proc_running "$pid" || { wait "$pid" 2>/dev/null || true; return 0; }
	kill -TERM "$pid" 2>/dev/null || true
	if ! wait_for 5 proc_gone "$pid"; then
		echo "$TEST_NAME: pid $pid ignored SIGTERM, killing it" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

# The trap may fire inside a function whose output is redirected: report on
# the script's own stdout and stderr, saved here.
exec {LIB_STDOUT}>&1 {LIB_STDERR}>&2

cleanup() {
	local rc=$? pid ns
	trap - EXIT INT TERM
	# A reader that went away (`| head`) must not stop the cleanup halfway,
	# leaving daemons and namespaces behind.
	trap '' PIPE
	set +e
	exec 1>&"$LIB_STDOUT"
	exec 2>&"$LIB_STDERR"
	if ((rc != 0 && rc != 77)); then
		echo "==== $TEST_NAME failed (exit $rc): daemon state and logs"
		_dump_state
	fi
	for pid in "${STARTED_PIDS[@]}" "${EXTRA_PIDS[@]}"; do
		_stop_pid "$pid"
	done
	for ns in "${CREATED_NS[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$TMPD"
	exit "$rc"
}
# Cleanup runs on every exit; a signal exits with 128 + its number, so an
# interrupted test never passes.
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

require_root() {
	[[ $(id -u) == 0 ]] || skip "needs root (network namespaces, TAP devices)"
	[[ -c /dev/net/tun ]] || skip "/dev/net/tun is missing"
	command -v ip >/dev/null || skip "ip (iproute2) is missing"
	local probe="${NSPFX}probe"
	ip netns add "$probe" >/dev/null 2>&1 || skip "ip netns is unusable"
	ip netns del "$probe"
	command -v ping >/dev/null || skip "ping is missing"
}

require_binaries() {
	[[ -x $VNETD ]] || fail "vnetd not found at $VNETD (build it first)"
	[[ -x $VNETCTL ]] || fail "vnetctl not found at $VNETCTL (build it first)"
}

# ns NAME: the real name of this run's namespace NAME.
ns() { printf '%s%s' "$NSPFX" "$1"; }

# mkns NAME: creates the namespace, loopback up, no IPv6 (its router
# solicitations and MLD reports would add frames the counters do not expect).
mkns() {
	local n
	n=$(ns "$1")
	ip netns add "$n"
	CREATED_NS+=("$n")
	ip -n "$n" link set lo up
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null
}

# underlay_init: the switch namespace with bridge br0.
underlay_init() {
	mkns switch
	SWITCH_NS=$(ns switch)
	ip -n "$SWITCH_NS" link add br0 type bridge
	ip -n "$SWITCH_NS" link set br0 up
}

# node_add NAME IDX: a namespace for a daemon, on the underlay as 10.66.0.IDX.
node_add() {
	local name=$1 idx=$2 n
	[[ -n $SWITCH_NS ]] || underlay_init
	mkns "$name"
	n=$(ns "$name")
	ip -n "$SWITCH_NS" link add "s$idx" type veth peer name u0 netns "$n"
	ip -n "$SWITCH_NS" link set "s$idx" master br0 up
	ip -n "$n" addr add "10.66.0.$idx/24" dev u0
	ip -n "$n" link set u0 up
	NODE_ADDR[$name]="10.66.0.$idx"
}

# nat_box_rules BOX [symmetric]: BOX (a namespace with u0 outside, i0
# inside) as a NAT box: it forwards and masquerades what leaves by u0
# (iptables MASQUERADE, which keeps the source port while it is free), and
# lets in or takes from u0 only established and related traffic, as a home
# router does.  With "symmetric" every flow gets a random port of its own
# (MASQUERADE --random-fully), as a symmetric NAT does.
nat_box_rules() {
	local box=$1 random=()
	[[ ${2:-} == symmetric ]] && random=(--random-fully)
	ip netns exec "$box" sysctl -qw net.ipv4.ip_forward=1
	ip netns exec "$box" iptables -t nat -A POSTROUTING -o u0 -j MASQUERADE "${random[@]}"
	ip netns exec "$box" iptables -P FORWARD DROP
	ip netns exec "$box" iptables -A FORWARD -i i0 -o u0 -j ACCEPT
	ip netns exec "$box" iptables -A FORWARD -i u0 -o i0 \
		-m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
	# Nothing unasked for reaches the box itself either (no RST back).
	ip netns exec "$box" iptables -A INPUT -i u0 \
		-m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
	ip netns exec "$box" iptables -A INPUT -i u0 -j DROP
}

# nat_inside BOX NAME GW ADDR PLEN [symmetric]: namespace NAME (made
# here) behind the NAT box BOX (a namespace name): a veth i0 (BOX, GW) to
# u0 (NAME, ADDR), both /PLEN, NAME's default route via GW, and BOX's NAT
# rules (nat_box_rules).
nat_inside() {
	local box=$1 name=$2 gw=$3 a=$4 plen=$5 h
	mkns "$name"
	h=$(ns "$name")
	ip -n "$box" link add i0 type veth peer name u0 netns "$h"
	ip -n "$box" addr add "$gw/$plen" dev i0
	ip -n "$box" link set i0 up
	ip -n "$h" addr add "$a/$plen" dev u0
	ip -n "$h" link set u0 up
	ip -n "$h" route add default via "$gw"
	nat_box_rules "$box" "${6:-}"
}

# nat_host_add NAME IDX NET [symmetric]: a namespace for a daemon behind
# its own NAT box: the box (namespace nat-NAME) is on the underlay as
# 10.66.0.IDX and masquerades NET.0/24 behind it (nat_box_rules); the
# daemon's namespace has NET.2, its default route via the box's NET.1.
nat_host_add() {
	node_add "nat-$1" "$2"
	nat_inside "$(ns "nat-$1")" "$1" "$3.1" "$3.2" 24 "${4:-}"
	NODE_ADDR[$1]="$3.2"
}

# nat2_host_add NAME IDX NET: a namespace for a daemon behind two NAT boxes
# in a row, a home router behind a carrier-grade NAT: the carrier's box
# (namespace nat-NAME) is on the underlay as 10.66.0.IDX and masquerades
# its shared address space (100.64.0.0/10, RFC 6598) behind it; the home
# router (namespace home-NAME) has 100.64.0.2 there and masquerades NET.0/24
# behind it; the daemon's namespace has NET.2, its default route via NET.1.
nat2_host_add() {
	node_add "nat-$1" "$2"
	nat_inside "$(ns "nat-$1")" "home-$1" 100.64.0.1 100.64.0.2 10
	nat_inside "$(ns "home-$1")" "$1" "$3.1" "$3.2" 24
	NODE_ADDR[$1]="$3.2"
}

# The NAT tests (it-nat, it-nat-double, it-candidates, experiments/nat.sh).
# nat_node_conf NAME [PORT]: a node listening on every address at PORT
# (default $PORT) over TLS, under $ROUTING.
nat_node_conf() {
	printf 'node %s\nlisten *:%d tls\n%s\n' "$1" "${2:-$PORT}" "$ROUTING"
	tls_conf "$1"
}
# nat_pair_start: the proxy (node_add'ed here at 1) and host1 and host2
# (made behind their NAT boxes before), each host with a guest and a link
# to the proxy, all with transport auto; returns once each host's link is
# up and every node reaches the other two.
nat_pair_start() {
	local i d
	vnetd_start proxy "$(nat_node_conf proxy)
set-link host1 transport auto
set-link host2 transport auto"
	for i in 1 2; do
		vnetd_start "host$i" "$(nat_node_conf "host$i")
interface guest tap vtap0
link proxy $(addr proxy):$PORT tls transport auto"
		guest_add "g$i" "host$i" vtap0 "$i"
	done
	for d in host1 host2; do
		wait_link_up "$d" proxy
	done
	for d in proxy host1 host2; do
		wait_for 10 nodes_reachable "$d" 3 ||
			fail "$d: show nodes: $(vctl "$d" show nodes)"
	done
}
# nat_proxy_in: the bytes the proxy took in from host1 and host2.
nat_proxy_in() { echo $(($(link_field proxy host1 bytes_in) + $(link_field proxy host2 bytes_in))); }
# proxy_quiet CMD...: the bytes CMD counts (those the proxy took in) grow
# by under 100 kB in one second of sampling: the transfer left the proxy.
proxy_quiet() {
	local a b
	a=$("$@")
	sleep 1	# the sampling window of a rate, not a wait for a state
	b=$("$@")
	((b - a < 100000))
}
# guest_rx GUEST...: the bytes their TAP devices received, summed.
guest_rx() {
	local g sum=0
	for g in "$@"; do
		sum=$((sum + $(in_guest "$g" cat /sys/class/net/vtap0/statistics/rx_bytes)))
	done
	echo "$sum"
}
# log_ms LINE: a daemon's log line's time stamp (HH:MM:SS.mmm) as ms of
# the day.
log_ms() {
	awk '{ split($1, t, ":"); printf "%.0f\n", ((t[1] * 60 + t[2]) * 60 + t[3]) * 1000 }' <<<"$1"
}
# cands DAEMON NODE: NODE's candidates as DAEMON's show nodes has them.
cands() {
	vctl "$1" -t show nodes | awk -F'\t' -v n="$2" \
		'$1 == n { print $10; found = 1 } END { exit !found }'
}
# has_cand DAEMON NODE ERE: one of them is ERE (ADDR:PORT/KIND).
has_cand() { cands "$1" "$2" | tr , '\n' | grep -Eqx "$3"; }

# adapt_field DAEMON PEER COLUMN: one column of `show adapt`.
adapt_field() {
	vctl "$1" show adapt | awk -v n="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) idx = i; next }
		$1 == n && idx { print $idx; found = 1; exit }
		END { exit !found }'
}
# pings_ok FILE: every echo of a finished ping (ping -q) came back.
pings_ok() {
	local sent got
	sent=$(awk '/packets transmitted/ { print $1 }' "$1")
	got=$(awk '/packets transmitted/ { print $4 }' "$1")
	say "ping every 10 ms: $sent sent, $got received"
	[[ -n $sent ]] && ((sent > 100 && got == sent))
}

# addr NAME: the underlay address of node NAME.
addr() { printf '%s' "${NODE_ADDR[$1]}"; }

vctl_ok() { "$VNETCTL" -s "$1" show stats >/dev/null 2>&1; }

# vnetd_start NAME CONFIG_TEXT: writes the config to $TMPD/NAME.conf and runs
# vnetd in the foreground in namespace NAME (log in $TMPD/NAME.log); returns
# once vnetctl gets an answer.  The daemon's control socket is $TMPD/NAME.sock.
vnetd_start() {
	local name=$1 conf=$TMPD/$1.conf
	printf '%s\n' "$2" >"$conf"
	vnetd_start_file "$name" "$conf"
}

# vnetd_start_file NAME CONF [SOCK]: the same with an existing config file
# (and another control socket).
vnetd_start_file() {
	local name=$1 conf=$2 sock=${3:-$TMPD/$1.sock} log=$TMPD/$1.log pid
	D_NS[$name]=$(ns "$name")
	D_SOCK[$name]=$sock
	D_CONF[$name]=$conf
	D_LOG[$name]=$log
	echo "==== $(date +%T.%N) start: vnetd -F -f $conf -s $sock" >>"$log"
	# shellcheck disable=SC2086 # VNETD_FLAGS: words
	"${VNETD_WRAP[@]}" ip netns exec "${D_NS[$name]}" "$VNETD" -F $VNETD_FLAGS -f "$conf" -s "$sock" \
		>>"$log" 2>&1 {LIB_STDOUT}>&- {LIB_STDERR}>&- &
	pid=$!
	D_PID[$name]=$pid
	STARTED_PIDS+=("$pid")
	if ! wait_for 10 vctl_daemon_ready "$name"; then
		proc_running "$pid" || fail "vnetd $name exited at start (log: $(tail -n 5 "$log"))"
		fail "vnetd $name does not answer on $sock"
	fi
}

# vnetd_restart NAME: starts daemon NAME again with its config and socket.
vnetd_restart() {
	vnetd_start_file "$1" "${D_CONF[$1]}" "${D_SOCK[$1]}"
}

vctl_daemon_ready() {
	proc_running "${D_PID[$1]}" && vctl_ok "${D_SOCK[$1]}"
}

# vnetd_stop NAME: SIGTERM, wait (10 s) and reap; returns vnetd's exit status.
vnetd_stop() {
	local pid=${D_PID[$1]} rc=0
	kill -TERM "$pid"
	wait_for 10 proc_gone "$pid" || fail "vnetd $1 (pid $pid) did not exit on SIGTERM"
	wait "$pid" || rc=$?
	return "$rc"
}

# vctl NAME ARGS...: vnetctl against daemon NAME.
vctl() {
	local name=$1
	shift
	"$VNETCTL" -s "${D_SOCK[$name]}" "$@"
}

# link_field DAEMON LINK COLUMN: one column of `show links` for one link,
# found by its name in the table's header line.
link_field() {
	local d=$1 link=$2 col=$3
	vctl "$d" show links all | awk -v n="$link" -v c="$col" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) idx = i; next }
		$1 == n && idx { print $idx; found = 1; exit }
		END { exit !found }'
}

# link_row DAEMON LINK NAME: one row of `show link LINK` (transport_now,
# dgram_sent, ...).
link_row() {
	vctl "$1" -t show link "$2" | awk -F'\t' -v n="$3" \
		'$1 == n { print $2; found = 1; exit } END { exit !found }'
}

# link_up DAEMON LINK: the link's state is up.
link_up() {
	local st
	st=$(link_field "$1" "$2" state) || return 1
	[[ $st == up ]]
}

link_not_up() { ! link_up "$1" "$2"; }

# wait_link_up DAEMON LINK [TIMEOUT]
wait_link_up() {
	wait_for "${3:-15}" link_up "$1" "$2" ||
		fail "link $2 on $1 is not up (state: $(link_field "$1" "$2" state 2>&1 || true))"
}

# links_sum DAEMON COLUMN: a counter summed over all the daemon's links.
links_sum() {
	local col=$2 idx
	case $col in
	frames_in) idx=5 ;; bytes_in) idx=6 ;; frames_out) idx=7 ;;
	bytes_out) idx=8 ;; drops) idx=9 ;; *) fail "links_sum: no column '$col'" ;;
	esac
	vctl "$1" -t show links all | awk -F'\t' -v i="$idx" '{ s += $i } END { print s + 0 }'
}

# stat_value DAEMON NAME: one row of `show stats`.
stat_value() {
	vctl "$1" -t show stats | awk -F'\t' -v n="$2" \
		'$1 == n { print $2; found = 1; exit } END { exit !found }'
}

# stat_at_least DAEMON NAME N: that row of `show stats` is N or more.
stat_at_least() {
	local v
	v=$(stat_value "$1" "$2") || return 1
	((v >= $3))
}

guest_mac() { printf '02:00:00:00:00:%02x' "$1"; }
guest_ip() { printf '10.77.0.%d' "$1"; }

# guest_add GUEST DAEMON DEV N: moves TAP device DEV, which vnetd DAEMON
# created in its namespace, into a new namespace GUEST, with MAC guest_mac N
# and address guest_ip N/24.
guest_add() {
	guest_add_bare "$@"
	ip -n "${G_NS[$1]}" addr add "$(guest_ip "$4")/24" dev "$3"
}

# in_guest GUEST CMD...: runs CMD in the guest's namespace.
in_guest() {
	local guest=$1
	shift
	ip netns exec "${G_NS[$guest]}" "$@"
}

# mac_flood GUEST DEV N: N frames from random (unicast, locally
# administered) source MACs out of the guest's DEV, to a MAC nobody has.
mac_flood() {
	in_guest "$1" python3 - "$2" "$3" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
body = b"\x88\xb5" + bytes(46)
dst = bytes.fromhex("02000000eeee")        # nobody: flooded
for _ in range(int(sys.argv[2])):
    src = bytearray(os.urandom(6))
    src[0] = (src[0] & 0xfc) | 0x02         # unicast, locally administered
    while True:
        try:
            s.send(dst + bytes(src) + body)
            break
        except OSError:                     # TAP queue full: let it drain
            os.sched_yield()
PY
}

# udp_burst GUEST ADDR N: N datagrams of 1400 bytes from the guest to ADDR
# (port 9), as fast as it sends them; nothing retransmits them, so frames
# a link leaves queued stay there.  Prints how many went.
udp_burst() {
	in_guest "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
n = 0
for i in range(int(sys.argv[2])):
    try:
        s.sendto(bytes(1400), (sys.argv[1], 9))
        n += 1
    except OSError:
        pass
print(n)' "$2" "$3"
}

# shellcheck disable=SC2317 # called through wait_for
queue_empty() { (($(link_field "$1" "$2" queue_frames) == 0)); }

# queues_drain "DAEMON LINK"...: each of these links' queues empties (within
# 5 s) once the traffic is over.
queues_drain() {
	local q dmn lnk
	for q in "$@"; do
		read -r dmn lnk <<<"$q"
		wait_for 5 queue_empty "$dmn" "$lnk" ||
			fail "$dmn: frames left in the queue of link $lnk: $(vctl "$dmn" show links)"
	done
}

# iperf_server GUEST [PORT]: an iperf3 server in the guest, stopped by the
# cleanup; returns once it listens on PORT (default 5201).
iperf_server() {
	local port=${2:-5201}
	in_guest "$1" iperf3 -s -p "$port" >/dev/null 2>&1 &
	EXTRA_PIDS+=("$!")
	wait_for 10 bash -c "ip netns exec '${G_NS[$1]}' ss -Hltn 'sport = :$port' | grep -q ." ||
		fail "iperf3 server in $1 does not listen on port $port"
}

# guest_counter GUEST NAME: one absolute counter of the guest's namespace
# (nstat's name, e.g. TcpRetransSegs).
guest_counter() {
	in_guest "$1" nstat -asz "$2" | awk -v n="$2" '$1 == n { print $2 }'
}

# gping GUEST IP: one ping, 1 s timeout; succeeds when the reply arrives.
gping() {
	in_guest "$1" ping -n -q -c 1 -W 1 "$2" >/dev/null 2>&1
}

# TLS: one CA per run in $TMPD/ca (made on first use), a key and a
# certificate per node.
CA_DIR=$TMPD/ca

# ca_init [DIR]: makes the CA (default $CA_DIR) unless it exists.
ca_init() {
	local dir=${1:-$CA_DIR}
	[[ -f $dir/ca.crt ]] && return 0
	"$VNET_CA" init "$dir" >/dev/null || fail "vnet-ca init $dir failed"
}

# cert_issue NODE [DIR [VNET-CA ISSUE OPTIONS...]]: NODE's key and
# certificate from the CA in DIR (default $CA_DIR, made if need be).
cert_issue() {
	local node=$1 dir=${2:-$CA_DIR}
	shift $(($# < 2 ? $# : 2))
	ca_init "$dir"
	"$VNET_CA" issue "$@" "$dir" "$node" >/dev/null ||
		fail "vnet-ca issue $node failed"
}

# tls_conf NODE [CERTNAME [DIR]]: the tls-* statements for node NODE using
# the certificate issued for CERTNAME (default NODE; issued if need be).
tls_conf() {
	local cert=${2:-$1} dir=${3:-$CA_DIR}
	[[ -f $dir/$cert.crt ]] || cert_issue "$cert" "$dir"
	printf 'tls-cert %s\ntls-key %s\ntls-ca %s\n' "$dir/$cert.crt" \
		"$dir/$cert.key" "$CA_DIR/ca.crt"
	((TLS_CRL)) && printf 'tls-crl %s\n' "$CA_DIR/crl.pem"
	return 0
}
TLS_CRL=${TLS_CRL:-0}		# 1: tls_conf adds the CA's CRL

# The star used by several tests and the demo: a proxy (10.66.0.1) and two
# hosts (10.66.0.2, .3) that link to it, guest N behind host N's TAP vtap0.
# Routes: the proxy sends each guest's MAC to that guest's host, broadcast to
# both (a tie fans out, and never back where it came from); a host sends what
# its guest sends to the proxy, and what comes from elsewhere to its guest.
# With STAR_TLS=1 the links are TLS; otherwise plain, with listeners that
# allow the underlay.
PORT=7870
STAR_TLS=${STAR_TLS:-0}
UNDERLAY=10.66.0.0/24

# listen_opts: what follows a star listener's ADDR:PORT.
listen_opts() {
	if ((STAR_TLS)); then
		printf 'tls'
	else
		printf 'allow %s' "$UNDERLAY"
	fi
}

# link_opts: what follows a star link's HOST:PORT.
link_opts() {
	((STAR_TLS)) && printf ' tls'
	return 0
}

proxy_routes() {
	printf 'route any %s link host1\n' "$(guest_mac 1)"
	printf 'route any %s link host2\n' "$(guest_mac 2)"
	printf 'route any ff:ff:ff:ff:ff:ff link host1\n'
	printf 'route any ff:ff:ff:ff:ff:ff link host2\n'
}

# host_routes N
host_routes() {
	printf 'route %s any link proxy\n' "$(guest_mac "$1")"
	printf 'route not-%s any interface guest\n' "$(guest_mac "$1")"
}

# proxy_conf with-routes|no-routes
proxy_conf() {
	printf 'node proxy\nlisten %s:%d %s\n' "$(addr proxy)" "$PORT" "$(listen_opts)"
	((STAR_TLS)) && tls_conf proxy
	[[ $1 == no-routes ]] || proxy_routes
}

# host_conf N with-routes|no-routes
host_conf() {
	printf 'node host%d\nlisten %s:%d %s\ninterface guest tap vtap0\nlink proxy %s:%d%s\n' \
		"$1" "$(addr "host$1")" "$PORT" "$(listen_opts)" "$(addr proxy)" "$PORT" \
		"$(link_opts)"
	((STAR_TLS)) && tls_conf "host$1"
	[[ $2 == no-routes ]] || host_routes "$1"
}

# star_start with-routes|no-routes: namespaces, daemons, guests; returns
# when the four link ends are up.
star_start() {
	node_add proxy 1
	node_add host1 2
	node_add host2 3
	vnetd_start proxy "$(proxy_conf "$1")"
	vnetd_start host1 "$(host_conf 1 "$1")"
	vnetd_start host2 "$(host_conf 2 "$1")"
	guest_add g1 host1 vtap0 1
	guest_add g2 host2 vtap0 2
	wait_link_up host1 proxy
	wait_link_up host2 proxy
	wait_link_up proxy host1
	wait_link_up proxy host2
}

# add_statements DAEMON: sends each statement read from stdin with vnetctl,
# in its add- form ("route ..." -> "add-route ...").
add_statements() {
	local kw rest
	while read -r kw rest; do
		[[ -n $kw ]] || continue
		# shellcheck disable=SC2086 # the statement's words
		vctl "$1" "add-$kw" $rest || fail "vnetctl $1 add-$kw $rest failed"
	done
}

# The VNET scenario: a home LAN and a proxy on it that puts remote guests
# on that LAN.  Namespace "home" holds the LAN, a bridge br0 with address
# $HOME_NET.1/24 on which dnsmasq serves DHCP ($HOME_NET.100-150, no DNS); a
# home machine (namespace "homepc", $HOME_NET.10, MAC 02:00:00:00:01:0a)
# sits on the bridge; the proxy's LAN side is lan0, a veth whose other end
# px0 is a port of the bridge.  The proxy captures on lan0 with pcap.  The
# devices keep their offloads: frames made on this machine reach the
# capture with their checksums left to finish, which it must handle.
HOME_NET=192.168.77
HOME_PC_MAC=02:00:00:00:01:0a
HOME_NS=""

require_home_lan_tools() {
	command -v dnsmasq >/dev/null || skip "dnsmasq is missing (apt-get install dnsmasq-base)"
	command -v busybox >/dev/null || skip "busybox is missing (udhcpc; apt-get install busybox)"
	command -v ethtool >/dev/null || skip "ethtool is missing"
}

# home_lan_init: the LAN and dnsmasq; the proxy's namespace must exist.
home_lan_init() {
	local pc
	mkns home
	HOME_NS=$(ns home)
	ip -n "$HOME_NS" link add br0 type bridge
	ip -n "$HOME_NS" link set br0 up
	ip -n "$HOME_NS" addr add "$HOME_NET.1/24" dev br0
	mkns homepc
	pc=$(ns homepc)
	G_NS[homepc]=$pc
	ip -n "$HOME_NS" link add hp0 type veth peer name eth0 netns "$pc"
	ip -n "$HOME_NS" link set hp0 master br0 up
	ip -n "$pc" link set eth0 address "$HOME_PC_MAC"
	ip -n "$pc" link set eth0 up
	ip -n "$pc" addr add "$HOME_NET.10/24" dev eth0
	home_lan_plug
	ip netns exec "$HOME_NS" dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--port=0 --interface=br0 --bind-interfaces --user=root --group=root \
		--dhcp-range="$HOME_NET.100,$HOME_NET.150,255.255.255.0,1h" \
		--dhcp-leasefile="$TMPD/dnsmasq.leases" --pid-file= --dhcp-authoritative \
		--log-dhcp --log-facility="$TMPD/dnsmasq.log" \
		{LIB_STDOUT}>&- {LIB_STDERR}>&- &
	EXTRA_PIDS+=("$!")
	D_LOG[dnsmasq]=$TMPD/dnsmasq.log
	wait_for 10 grep -q 'DHCP, IP range' "$TMPD/dnsmasq.log" ||
		fail "dnsmasq did not start: $(cat "$TMPD/dnsmasq.log" 2>&1)"
}

# home_lan_plug / home_lan_unplug: the proxy's veth into the LAN.
home_lan_plug() {
	ip -n "$HOME_NS" link add px0 type veth peer name lan0 netns "$(ns proxy)"
	ip -n "$HOME_NS" link set px0 master br0 up
	ip -n "$(ns proxy)" link set lan0 up
}

home_lan_unplug() { ip -n "$HOME_NS" link del px0; }

# proxy_pcap_conf NHOSTS: the proxy's configuration.  Frames for a guest's
# MAC go to its host; broadcasts go everywhere (never back where they came
# from); anything else a guest sends goes to the LAN.  The capture filter
# keeps the LAN's own traffic out of vnetd.
proxy_pcap_conf() {
	local i filter=""
	for ((i = 1; i <= $1; i++)); do
		filter+="ether dst $(guest_mac "$i") or "
	done
	printf 'node proxy\nlisten %s:%d %s\n' "$(addr proxy)" "$PORT" "$(listen_opts)"
	printf 'interface lan pcap lan0 filter "%sbroadcast"\n' "$filter"
	for ((i = 1; i <= $1; i++)); do
		printf 'route any %s link host%d\n' "$(guest_mac "$i")" "$i"
		printf 'route any ff:ff:ff:ff:ff:ff link host%d\n' "$i"
	done
	printf 'route any ff:ff:ff:ff:ff:ff interface lan\n'
	printf 'route any any interface lan\n'
}

# guest_add_bare GUEST DAEMON DEV N: guest_add without an address.
guest_add_bare() {
	local guest=$1 d=$2 dev=$3 n=$4 gns
	mkns "$guest"
	gns=$(ns "$guest")
	G_NS[$guest]=$gns
	wait_for 10 ip -n "${D_NS[$d]}" link show "$dev" ||
		fail "vnetd $d did not create TAP device $dev"
	ip -n "${D_NS[$d]}" link set "$dev" netns "$gns"
	ip -n "$gns" link set "$dev" address "$(guest_mac "$n")"
	ip -n "$gns" link set "$dev" up
}

# vnet_home_start NHOSTS: the proxy on the home LAN, NHOSTS hosts linked to
# it, guest N (no address yet) behind host N.  Returns when the links are up.
vnet_home_start() {
	local i
	node_add proxy 1
	home_lan_init
	for ((i = 1; i <= $1; i++)); do
		node_add "host$i" $((i + 1))
	done
	vnetd_start proxy "$(proxy_pcap_conf "$1")"
	for ((i = 1; i <= $1; i++)); do
		vnetd_start "host$i" "$(host_conf "$i" with-routes)"
		guest_add_bare "g$i" "host$i" vtap0 "$i"
	done
	for ((i = 1; i <= $1; i++)); do
		wait_link_up "host$i" proxy
		wait_link_up proxy "host$i"
	done
}

# dhcp GUEST [DEV]: busybox udhcpc in the guest's namespace on DEV (vtap0);
# prints the address the home DHCP server gave.  The script only sets the
# address (no routes, no resolv.conf: nothing outside the namespace is
# touched).
dhcp() {
	local guest=$1 dev=${2:-vtap0} script=$TMPD/udhcpc.sh out=$TMPD/$1.lease
	cat >"$script" <<'SCRIPT'
#!/bin/sh
case $1 in
deconfig) ip addr flush dev "$interface"; ip link set "$interface" up ;;
bound|renew) ip addr flush dev "$interface"
	ip addr add "$ip/${mask:-24}" dev "$interface"
	echo "$ip" >"$LEASE_OUT" ;;
esac
SCRIPT
	chmod +x "$script"
	rm -f "$out"
	in_guest "$guest" env LEASE_OUT="$out" busybox udhcpc -i "$dev" -f -q -n \
		-t 15 -T 1 -s "$script" >"$TMPD/$guest.udhcpc" 2>&1 ||
		fail "$guest got no DHCP lease: $(cat "$TMPD/$guest.udhcpc")"
	[[ -s $out ]] || fail "$guest: udhcpc reported no address"
	cat "$out"
}

# iface_field DAEMON IFACE COLUMN: one column of `show interfaces`, found
# by its name in the header (the modules add columns after the device's).
iface_field() {
	vctl "$1" -t -H show interfaces | awk -F'\t' -v n="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) idx = i; next }
		idx && $1 == n { print $idx; found = 1; exit }
		END { exit !found }' || fail "iface_field: no column '$3' for interface $2 on $1"
}

# source_copy SRC DEST: the source tree SRC (what git knows and does not
# ignore, with the generated build system) copied to the new DEST, to be
# built there without touching SRC's build.
source_copy() {
	local src=$1 dest=$2
	mkdir "$dest"
	if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$src" && { git ls-files -co --exclude-standard
			printf '%s\n' configure Makefile.in aclocal.m4
			find build-aux m4 -type f; } | sort -u | while read -r f; do
				[[ -e $f ]] && printf '%s\0' "$f"
			done | xargs -0 cp --parents -t "$dest")
	else
		cp -a "$src/." "$dest/"
		[[ ! -f $dest/Makefile ]] || make -C "$dest" distclean >/dev/null
	fi
}

# The control plane's star (routing auto): a proxy (10.66.0.1) and hosts
# host1..hostN (10.66.0.2..) with TLS links from each host to the proxy,
# `routing auto` everywhere, no route statements; guest i behind host i's
# TAP vtap0, and with RSTAR_SECOND=1 a second guest (number N+1) behind
# host1's vtap1.  RSTAR_ROUTING: the routing statement (e.g. with refresh).
RSTAR_ROUTING=${RSTAR_ROUTING:-routing auto}
RSTAR_SECOND=${RSTAR_SECOND:-0}

rstar_proxy_conf() {
	printf 'node proxy\nlisten %s:%d tls\n%s\n' "$(addr proxy)" "$PORT" \
		"$RSTAR_ROUTING"
	tls_conf proxy
}

# rstar_host_conf I
rstar_host_conf() {
	printf 'node host%d\nlisten %s:%d tls\ninterface guest tap vtap0\nlink proxy %s:%d tls\n%s\n' \
		"$1" "$(addr "host$1")" "$PORT" "$(addr proxy)" "$PORT" "$RSTAR_ROUTING"
	((RSTAR_SECOND && $1 == 1)) && printf 'interface second tap vtap1\n'
	tls_conf "host$1"
}

# rogue_rstar: for a rogue that signs its records (tests/rogue.py): skips
# without python3 and its cryptography module, else starts a star of two
# hosts under routing and returns once every node reaches the others and
# guest 1 pings guest 2 ($IP2); DAEMONS names the star's daemons.
rogue_rstar() {
	command -v python3 >/dev/null || skip "python3 is missing (the rogue client)"
	python3 -c 'import cryptography' 2>/dev/null || skip "python3's cryptography is missing (the rogue signs)"
	rstar_start 2
	DAEMONS=(proxy host1 host2)
	local d
	for d in "${DAEMONS[@]}"; do
		wait_for 10 nodes_reachable "$d" 3 || fail "$d: show nodes: $(vctl "$d" show nodes)"
	done
	IP2=$(guest_ip 2)
	wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2 before the rogue comes"
}

# rstar_start N: namespaces, daemons and guests; returns when every link
# is up.
rstar_start() {
	local i
	node_add proxy 1
	for ((i = 1; i <= $1; i++)); do
		node_add "host$i" $((i + 1))
	done
	vnetd_start proxy "$(rstar_proxy_conf)"
	for ((i = 1; i <= $1; i++)); do
		vnetd_start "host$i" "$(rstar_host_conf "$i")"
		guest_add "g$i" "host$i" vtap0 "$i"
	done
	((RSTAR_SECOND)) && guest_add "g$(($1 + 1))" host1 vtap1 $(($1 + 1))
	for ((i = 1; i <= $1; i++)); do
		wait_link_up "host$i" proxy
		wait_link_up proxy "host$i"
	done
}

# Failover: two proxies p1 and p2, hosts host1 and host2 linked to both
# (it-failover, it-failover-udp, tests/experiments/failover.sh).
#
# failover_start plain|tls [LINK OPTIONS]: p1 and p2 listening, host1 and
# host2 (guests g1 and g2) linked to both with the options, `routing auto`
# everywhere; returns once every link is up, every node reachable from
# every other and g1 answered by g2.
failover_start() {
	local sec=$1 opts=${2:-} p i d
	for p in p1 p2; do
		vnetd_start "$p" "node $p
listen $(addr "$p"):$PORT $([[ $sec == tls ]] && echo tls || echo "allow $UNDERLAY")
${opts:+set-link host1 $opts}
${opts:+set-link host2 $opts}
routing auto
$([[ $sec == tls ]] && tls_conf "$p")"
	done
	for i in 1 2; do
		vnetd_start "host$i" "node host$i
interface guest tap vtap0
link p1 $(addr p1):$PORT $([[ $sec == tls ]] && echo tls) $opts
link p2 $(addr p2):$PORT $([[ $sec == tls ]] && echo tls) $opts
routing auto
$([[ $sec == tls ]] && tls_conf "host$i")"
		guest_add "g$i" "host$i" vtap0 "$i"
	done
	for i in 1 2; do
		for p in p1 p2; do
			wait_link_up "host$i" "$p"
		done
	done
	for d in p1 p2 host1 host2; do
		wait_for 10 nodes_reachable "$d" 4 || fail "$d: show nodes: $(vctl "$d" show nodes)"
	done
	wait_for 10 gping g1 "$(guest_ip 2)" || fail "guest 1 cannot ping guest 2"
}
# live_is DAEMON LINK STATE: the link's liveness is STATE now.
live_is() { [[ $(link_field "$1" "$2" liveness) == "$3" ]]; }
live_not() { ! live_is "$@"; }
# now_past T: the clock (date +%s.%N) is at T or later.
now_past() { awk -v t="$1" -v n="$(date +%s.%N)" 'BEGIN { exit !(n >= t) }'; }
# later S: the time S seconds from now, for now_past.
later() { awk -v d="$1" -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", n + d }'; }
# failover_frames P: the frames host1 and host2 sent to proxy P so far.
failover_frames() {
	echo $(($(link_field host1 "$1" frames_out) + $(link_field host2 "$1" frames_out)))
}
# failover_active: the proxy that carries most of the hosts' frames now (each
# way may take its own), over a 0.3 s sample.
failover_active() {
	local a b
	a=$(failover_frames p1)
	b=$(failover_frames p2)
	sleep 0.3	# a sample of the counters, not a wait for a state
	a=$(($(failover_frames p1) - a))
	b=$(($(failover_frames p2) - b))
	if ((a >= b)); then echo p1; else echo p2; fi
}
# ping_gap FILE FROM [TO]: the longest time the guests went without an
# echo, in a `ping -D` log, from the last reply before FROM to the last one
# before TO (seconds since the epoch), and where it began: "GAP AT".  A
# reply's echo left at its arrival less its round trip; after lost echoes
# the time without one runs from the last answered echo's leaving to the
# next one's answer, else it is the answer's round trip.  So the pinger's
# own stalls (a loaded machine not running it) do not count, nor do late
# answers (a lower sequence than one already answered: held in a dead
# link's TCP buffer, their absence counted already).
ping_gap() {
	awk -v from="$2" -v to="${3:-0}" '/bytes from/ {
		t = substr($1, 2, length($1) - 2) + 0
		if (!match($0, /icmp_seq=[0-9]+/)) next
		seq = substr($0, RSTART + 9, RLENGTH - 9) + 0
		if (!match($0, /time=[0-9.]+/)) next
		rtt = substr($0, RSTART + 5, RLENGTH - 5) / 1000
		if (t < from) { left = t - rtt; last = seq; next }
		if (to > 0 && t > to) exit
		if (last && seq <= last) next
		if (last) {
			o = (seq > last + 1 ? t - left : rtt)
			if (o > max) { max = o; at = left }
		}
		left = t - rtt; last = seq }
		END { printf "%.3f %.3f\n", max, at }' "$1"
}

# pings_lost FILE FROM: the echoes of a `ping -D` log left unanswered
# among those sent after FROM: from the first new sequence answered after
# FROM to the last, those missing (late answers, of a sequence lower than
# one already answered, are neither new nor missing).
pings_lost() {
	awk -v from="$2" '/bytes from/ {
		t = substr($1, 2, length($1) - 2) + 0
		if (!match($0, /icmp_seq=[0-9]+/)) next
		seq = substr($0, RSTART + 9, RLENGTH - 9) + 0
		if (seq <= hi) next
		hi = seq
		if (t < from) next
		if (!first) first = seq
		n++; last = seq }
		END { print (first ? last - first + 1 - n : 0) }' "$1"
}

# nodes_reachable DAEMON N: `show nodes` on DAEMON lists N nodes, every one
# reachable (or itself).
nodes_reachable() {
	vctl "$1" -t show nodes | awk -F'\t' -v n="$2" '
		$5 == "yes" || $5 == "self" { ok++ } END { exit !(NR == n && ok == n) }'
}

# mac_owner DAEMON MAC: the node that owns MAC in DAEMON's `show macs`
# (control plane entries only).
mac_owner() {
	vctl "$1" -t show macs | awk -F'\t' -v m="$2" '
		$1 == m && ($6 == "control" || $6 == "local") { print $5; found = 1; exit }
		END { exit !found }'
}

# owner_is DAEMON MAC NODE
owner_is() { [[ $(mac_owner "$1" "$2") == "$3" ]]; }

# The WAN emulator (tests/wanem.c; `wanem --help`): a router namespace
# between two others that forwards their frames through an emulated path.
# wan_path ROUTER LEFT RIGHT [WANEM OPTIONS...] makes namespaces LEFT and
# RIGHT unless they exist, a veth from each (device $WAN_DEV, default u0,
# up, no address: the caller adds them) into the new namespace ROUTER
# (devices wa and wb), and runs wanem there between wa and wb: direction
# "ab" is LEFT to RIGHT, "ba" RIGHT to LEFT.  LEFT and RIGHT are then on
# one Ethernet segment through the emulator.  Segmentation offloads are
# off on the veths, so that the emulator sees, delays and loses wire
# frames, not super-frames.  wan_restart ROUTER [OPTIONS...] runs the
# emulator again with new options (the frames in its path are lost);
# wan_report ROUTER prints a fresh report (`wanem ab key=value ...`,
# `wanem ba ...`); wan_stat ROUTER DIR KEY one value of it; wan_stop ROUTER
# stops the emulator and leaves its final report in wan_report_file ROUTER.
: "${WANEM:=$LIB_DIR/wanem}"
WAN_DEV=${WAN_DEV:-u0}
declare -A WAN_PID=() WAN_N=()

wan_path() {
	local r=$1 left=$2 right=$3 n side dev
	shift 3
	[[ -x $WANEM ]] || fail "the WAN emulator is missing at $WANEM (make tests/wanem)"
	command -v ethtool >/dev/null || skip "ethtool is missing"
	mkns "$r"
	for n in "$left" "$right"; do
		ip netns list | grep -qx "$(ns "$n")\( .*\)\?" || mkns "$n"
	done
	ip -n "$(ns "$r")" link add wa type veth peer name "$WAN_DEV" netns "$(ns "$left")"
	ip -n "$(ns "$r")" link add wb type veth peer name "$WAN_DEV" netns "$(ns "$right")"
	for side in "$r wa" "$r wb" "$left $WAN_DEV" "$right $WAN_DEV"; do
		read -r n dev <<<"$side"
		wan_no_offload "$(ns "$n")" "$dev"
		ip -n "$(ns "$n")" link set "$dev" up
	done
	WAN_N[$r]=0
	wan_start "$r" "$@"
}

# wan_no_offload NETNS DEV: every segmentation and receive offload of DEV
# that can be turned off is (TCP and UDP segmentation, GSO lists, tunnels,
# GRO): a veth passes a super-frame of any kind its features allow whole.
wan_no_offload() {
	local f
	ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
	for f in $(ip netns exec "$1" ethtool -k "$2" 2>/dev/null |
		awk -F': ' '$1 ~ /segmentation|gso|gro/ && $2 == "on" { gsub(/^[ \t]+/, "", $1); print $1 }'); do
		ip netns exec "$1" ethtool -K "$2" "$f" off >/dev/null 2>&1 || true
	done
}

# wan_report_file ROUTER: where the emulator's report is.
wan_report_file() { printf '%s/wanem-%s.report' "$TMPD" "$1"; }

# wan_start ROUTER [OPTIONS...]: the emulator in ROUTER, between wa and wb.
wan_start() {
	local r=$1 log
	shift
	WAN_N[$r]=$((${WAN_N[$r]:-0} + 1))
	log=$TMPD/wanem-$r.${WAN_N[$r]}.log
	D_LOG[wanem-$r]=$log
	rm -f "$(wan_report_file "$r")"
	ip netns exec "$(ns "$r")" "$WANEM" --report "$(wan_report_file "$r")" "$@" wa wb \
		>"$log" 2>&1 {LIB_STDOUT}>&- {LIB_STDERR}>&- &
	WAN_PID[$r]=$!
	EXTRA_PIDS+=("$!")
	wait_for 10 grep -q '^wanem: forwarding' "$log" ||
		fail "the WAN emulator in $r did not start: $(tail -n 3 "$log")"
}

# wan_stop ROUTER: SIGTERM; the final report stays in wan_report_file.
wan_stop() {
	local pid=${WAN_PID[$1]:-}
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	wait_for 10 proc_gone "$pid" || fail "the WAN emulator in $1 ignored SIGTERM"
	WAN_PID[$1]=""
	# A sanitizer build exits non-zero on a leak or an error.
	wait "$pid" || fail "the WAN emulator in $1 exited $? ($(tail -n 5 "${D_LOG[wanem-$1]}"))"
	[[ -s $(wan_report_file "$1") ]] || fail "the WAN emulator in $1 left no report"
}

wan_restart() {
	local r=$1
	shift
	wan_stop "$r"
	wan_start "$r" "$@"
}

# wan_report ROUTER: the running emulator's counters now (or its final
# report once stopped).
wan_report() {
	local r=$1 f pid=${WAN_PID[$1]:-}
	f=$(wan_report_file "$r")
	if [[ -n $pid ]]; then
		rm -f "$f"
		kill -USR1 "$pid"
		wait_for 10 test -s "$f" || fail "the WAN emulator in $r wrote no report"
	fi
	cat "$f"
}

# wan_stat ROUTER ab|ba KEY: one value of a fresh report.
wan_stat() {
	wan_report "$1" | awk -v d="$2" -v k="$3" '
		$1 == "wanem" && $2 == d { for (i = 3; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == k) { print kv[2]; found = 1 } } }
		END { exit !found }'
}

# The README's examples, taken from the README itself so that a test of
# them cannot drift from what a reader copies (FILE: another document of
# the same form, doc/guide.md).  Code lines are those indented four spaces
# or more; a configuration block starts with the line
# `# PATH/vnetd.conf on [the ]NODE` and ends at a blank line.
README=${README:-$LIB_DIR/../README}

# readme_nodes [FILE]: the nodes that the file gives a configuration block.
readme_nodes() {
	sed -nE 's|^ {4,}# (/[^ ]*)?/vnetd\.conf on (the )?([A-Za-z0-9._-]+)$|\3|p' "${1:-$README}"
}

# readme_conf NODE [FILE]: NODE's configuration block, unindented.
readme_conf() {
	awk -v n="$1" '
		!on && match($0, /^ +# (\/[^ ]*)?\/vnetd\.conf on (the )?/) &&
		    substr($0, RSTART + RLENGTH) == n { on = 1; ind = index($0, "#") - 1 }
		on && /^ *$/ { exit }
		on { print substr($0, ind + 1) }' "${2:-$README}"
}

# readme_cmds WORD: the README's command lines that start with WORD, a line
# each, continuation lines (ending in a backslash) joined.
readme_cmds() {
	awk -v w="$1" '
		cont { sub(/^ +/, ""); line = line " " $0 }
		!cont && /^    / { line = $0; sub(/^ +/, "", line) }
		{ cont = 0 }
		line != "" && sub(/ *\\$/, "", line) { cont = 1; next }
		line != "" && index(line, w " ") == 1 { print line }
		{ line = "" }' "$README"
}

# readme_certs ROOT: runs the README's vnet-ca lines with /etc/vnetd
# standing for ROOT/proxy/etc/vnetd (the CA is the proxy's), and copies
# each host's certificate, key and the CA's certificate to its own
# ROOT/NODE/etc/vnetd, as the README's deployment says.
readme_certs() {
	local root=$1 l n d
	local -a w
	mkdir -p "$root/proxy/etc/vnetd"
	while read -r l; do
		read -r -a w <<<"${l//\/etc\/vnetd/$root/proxy/etc/vnetd}"
		"$VNET_CA" "${w[@]:1}" >/dev/null || fail "the README's '$l' failed"
	done < <(readme_cmds vnet-ca)
	for n in $(readme_nodes); do
		d=$root/$n/etc/vnetd
		mkdir -p "$d"
		[[ $n == proxy ]] && continue
		cp "$root/proxy/etc/vnetd/ca/"{"$n.crt","$n.key",ca.crt} "$d/" ||
			fail "the README's vnet-ca lines make no certificate for $n"
	done
}

# readme_node_conf NODE ROOT: NODE's configuration block from the README,
# its /etc/vnetd being ROOT/NODE/etc/vnetd.
readme_node_conf() {
	readme_conf "$1" | sed "s|/etc/vnetd|$2/$1/etc/vnetd|g"
}
