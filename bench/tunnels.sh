# shellcheck shell=bash
#
# The tunnels bench/compare and bench/wan measure, and the functions both use
# to set them up, sourced after tests/lib.sh.  Each system is built from
# network namespaces: hosts h1 and h2 on an underlay (10.66.0.1 and
# 10.66.0.2, device u0 in each; underlay() makes it: here a veth pair,
# bench/wan defines its own through the WAN emulator), a guest behind each
# host (g1, g2: 10.77.0.1 and .2, MTU $MTU) on the host's TAP device or,
# for the bare path, on a veth bridged onto the underlay.  The caller sets
# MTU, U1, U2, PORT, MAIN_TMPD, MAIN_NSPFX, ROUNDS (and ROUND, SYS,
# STATUS_FILE, TMPD in each system's subshell); for vnetd LINK_CC (the
# link's congestion control, "" for none), THREADS, CAPTURE and TRANSPORT
# (the link's transport option, "" for none); for tinc TINC_CIPHER,
# TINC_DIGEST, TINC_DEBUG; HOP and TOP for bench/hop.

# Namespaces of a system whose subshell was killed outright: removed here,
# before the library's cleanup.
# shellcheck disable=SC2317 # a trap handler
main_cleanup() {
	local rc=$? n
	set +e
	for n in $(ip netns list 2>/dev/null | awk -v p="$MAIN_NSPFX" 'index($1, p) == 1 { print $1 }'); do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
	(exit "$rc")
	cleanup
}

# A failure inside a system's subshell also leaves its reason for the table.
fail() {
	printf '%s: FAIL: %s\n' "$TEST_NAME" "$*" >&2
	[[ -z ${STATUS_FILE:-} ]] || printf 'failed: %s\n' "$*" >"$STATUS_FILE"
	exit 1
}

# skip_system REASON: this system cannot run here.
skip_system() {
	say "$SYS: skipped: $*"
	printf 'skipped: %s\n' "$*" >"$STATUS_FILE"
	exit 77
}

# tunnels_install: what the run needs from Debian.
tunnels_install() {
	local -A pkg_of=([iperf3]=iperf3 [jq]=jq [openvpn]=openvpn [tincd]=tinc)
	local missing=() cmd
	for cmd in iperf3 jq openvpn tincd; do
		command -v "$cmd" >/dev/null || missing+=("${pkg_of[$cmd]}")
	done
	if ((${#missing[@]})); then
		say "installing ${missing[*]} (apt-get update; apt-get install -y)"
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; } \
			>"$MAIN_TMPD/apt.log" 2>&1 || say "apt-get failed: $(tail -n 3 "$MAIN_TMPD/apt.log" | tr '\n' ' ')"
	fi
	command -v iperf3 >/dev/null || fail "iperf3 is missing and could not be installed"
	command -v jq >/dev/null || fail "jq is missing and could not be installed"
	command -v ss >/dev/null || fail "ss (iproute2) is missing"
	command -v openssl >/dev/null || say "openssl is missing: the OpenVPN runs will be skipped"
}

# ---- functions used inside a system's subshell

# Each system runs in a subshell with its own temporary directory, namespace
# prefix and trap, so that a failing or skipped system is cleaned up at once
# and the next one still runs.
# shellcheck disable=SC2317 # a trap handler
sys_cleanup() {
	local rc=$? f
	set +e
	if [[ -n ${KEEP_LOGS:-} ]]; then
		f=$KEEP_LOGS/$SYS
		((ROUNDS == 1)) || f+=/round$ROUND
		mkdir -p "$f"
		cp "$TMPD"/*.log "$f/" 2>/dev/null
	fi
	if ((rc != 0 && rc != 77 && rc != 130 && rc != 143)); then
		for f in "$TMPD"/*.log; do
			[[ -f $f ]] || continue
			case ${f##*/} in vnetd-*) continue ;; esac	# the library shows these
			echo "---- $SYS: ${f##*/} (last 30 lines)"
			tail -n 30 "$f"
		done
	fi
	(exit "$rc")
	cleanup
}

# proc_ticks PID...: utime + stime of the processes, in clock ticks.
proc_ticks() {
	local pid st sum=0 f
	for pid in "$@"; do
		read -r st </proc/"$pid"/stat || fail "process $pid is gone"
		st=${st##*) }
		read -ra f <<<"$st"
		# After "(comm) ": f[0] is field 3 (state); utime and stime are fields 14, 15.
		sum=$((sum + f[11] + f[12]))
	done
	echo "$sum"
}

daemons_alive() {
	local pid
	for pid in "${DAEMON_PIDS[@]}"; do
		proc_running "$pid" || fail "a tunnel daemon (pid $pid) died; see its log"
	done
}

# shellcheck disable=SC2317 # called through wait_for
iperf_listening() { ip netns exec "$1" ss -Hltn 'sport = :5201' | grep -q .; }

# underlay_sent: "UDP-datagrams TCP-segments" that namespace h1 has sent.
underlay_sent() {
	ip netns exec "$(ns h1)" cat /proc/net/snmp | awk '
		$1 == "Udp:" && !uh { for (i = 2; i <= NF; i++) u[i] = $i; uh = 1; next }
		$1 == "Udp:" { for (i = 2; i <= NF; i++) if (u[i] == "OutDatagrams") ud = $i }
		$1 == "Tcp:" && !th { for (i = 2; i <= NF; i++) t[i] = $i; th = 1; next }
		$1 == "Tcp:" { for (i = 2; i <= NF; i++) if (t[i] == "OutSegs") ts = $i }
		END { print ud + 0, ts + 0 }'
}

# guest_ns N: guest namespace gN with this system's prefix; sets G1/G2.
underlay() {
	mkns h1
	mkns h2
	ip -n "$(ns h1)" link add u0 type veth peer name u0 netns "$(ns h2)"
	ip -n "$(ns h1)" addr add "$U1/24" dev u0
	ip -n "$(ns h2)" addr add "$U2/24" dev u0
	ip -n "$(ns h1)" link set u0 up
	ip -n "$(ns h2)" link set u0 up
	wait_for 10 ip netns exec "$(ns h1)" ping -n -c 1 -W 1 "$U2" || fail "the underlay does not work"
}

# guest_mtu N DEV: the guest's interface gets MTU 1400.
guest_mtu() { ip -n "$(ns "g$1")" link set "$2" mtu "$MTU"; }

# tap_make HOST: a persistent TAP device tap0 in namespace HOST, up, for a
# daemon to attach to.
tap_make() {
	ip -n "$(ns "$1")" tuntap add dev tap0 mode tap
	ip -n "$(ns "$1")" link set tap0 up
}

# shellcheck disable=SC2317 # called through wait_for
tap_attached() { ! ip -n "$(ns "$1")" link show tap0 | grep -q NO-CARRIER; }

# tap_to_guest HOST N: once a daemon holds tap0 of HOST (the carrier is on),
# moves it into the new guest namespace gN as the guest's interface.
tap_to_guest() {
	local h=$1 n=$2 g
	wait_for 10 tap_attached "$h" || fail "no daemon attached to tap0 in $h"
	mkns "g$n"
	g=$(ns "g$n")
	ip -n "$(ns "$h")" link set tap0 netns "$g"
	ip -n "$g" link set tap0 address "$(guest_mac "$n")" mtu "$MTU"
	ip -n "$g" link set tap0 up
	ip -n "$g" addr add "$(guest_ip "$n")/24" dev tap0
}

# start_daemon NAME HOST CMD...: runs CMD in namespace HOST in the
# background, output to $TMPD/NAME.log; its pid joins DAEMON_PIDS.
start_daemon() {
	local name=$1 h=$2
	shift 2
	ip netns exec "$(ns "$h")" "$@" >"$TMPD/$name.log" 2>&1 {LIB_STDOUT}>&- {LIB_STDERR}>&- &
	EXTRA_PIDS+=("$!")
	DAEMON_PIDS+=("$!")
}

log_has() { grep -q -- "$2" "$TMPD/$1.log"; }

# ---- the systems

# The bare underlay: gN's v0 is bridged with the underlay in hN.
setup_bare() {
	local n h
	underlay
	for n in 1 2; do
		h=$(ns "h$n")
		mkns "g$n"
		ip -n "$h" link add br0 type bridge
		ip -n "$h" link set u0 master br0
		ip -n "$h" link add gv0 type veth peer name v0 netns "$(ns "g$n")"
		ip -n "$h" link set gv0 master br0
		ip -n "$h" link set gv0 up
		ip -n "$h" link set br0 up
		ip -n "$(ns "g$n")" link set v0 address "$(guest_mac "$n")" mtu "$MTU"
		ip -n "$(ns "g$n")" addr add "$(guest_ip "$n")/24" dev v0
		ip -n "$(ns "g$n")" link set v0 up
	done
}

# Two guests on one veth pair.
setup_veth() {
	mkns g1
	mkns g2
	ip -n "$(ns g1)" link add v0 type veth peer name v0 netns "$(ns g2)"
	for n in 1 2; do
		ip -n "$(ns "g$n")" link set v0 address "$(guest_mac "$n")" mtu "$MTU"
		ip -n "$(ns "g$n")" addr add "$(guest_ip "$n")/24" dev v0
		ip -n "$(ns "g$n")" link set v0 up
	done
}

# The least user-space hop: bench/hop attached to tap0 in each host, one
# TCP connection h1 -> h2.
setup_hop() {
	HOP=${HOP:-$TOP/bench/hop}
	if [[ ! -x $HOP ]]; then
		make -C "$TOP" bench/hop >"$TMPD/make-hop.log" 2>&1 ||
			skip_system "$HOP is missing and make bench/hop failed: $(tail -n 1 "$TMPD/make-hop.log")"
	fi
	underlay
	tap_make h1
	tap_make h2
	start_daemon hop-h2 h2 "$HOP" tap0 listen "$U2" "$PORT"
	wait_for 10 port_listening h2 "$PORT" || fail "bench/hop on h2 does not listen: $(tail -n 1 "$TMPD/hop-h2.log")"
	start_daemon hop-h1 h1 "$HOP" tap0 connect "$U2" "$PORT"
	wait_for 15 hop_connected || fail "bench/hop h1 -> h2 did not connect: $(tail -n 1 "$TMPD/hop-h1.log")"
	tap_to_guest h1 1
	tap_to_guest h2 2
}

# shellcheck disable=SC2317 # called through wait_for
port_listening() { ip netns exec "$(ns "$1")" ss -Hltn "sport = :$2" | grep -q .; }
# shellcheck disable=SC2317 # called through wait_for
hop_connected() { ip netns exec "$(ns h1)" ss -Htn state established "dport = :$PORT" | grep -q .; }

# find_vnet_ca: prints the vnet-ca script's path.
find_vnet_ca() {
	local c
	if [[ -n ${VNET_CA:-} ]]; then
		[[ -f $VNET_CA ]] && { echo "$VNET_CA"; return 0; }
		return 1
	fi
	for c in "$(dirname "$VNETD")/vnet-ca" "$TOP/src/vnet-ca" "$TOP/scripts/vnet-ca" \
		"$TOP/tools/vnet-ca" "$TOP/contrib/vnet-ca" "$TOP/vnet-ca"; do
		[[ -f $c ]] && { echo "$c"; return 0; }
	done
	command -v vnet-ca
}

vnet_ca() {
	if [[ -x $VNET_CA_PATH ]]; then
		"$VNET_CA_PATH" "$@"
	else
		sh "$VNET_CA_PATH" "$@"
	fi
}

# ca_files DIR NODE: prints "CERT KEY" of NODE among the files vnet-ca made
# in DIR, whatever their names: the certificate whose subject CN is NODE and
# the private key that matches it.
ca_files() {
	local dir=$1 node=$2 f cert="" key="" pub kpub
	while IFS= read -r f; do
		grep -q 'BEGIN CERTIFICATE' "$f" 2>/dev/null || continue
		openssl x509 -in "$f" -noout -subject -nameopt multiline 2>/dev/null |
			grep -Eq "commonName *= *$node\$" && { cert=$f; break; }
	done < <(find "$dir" -type f | sort)
	[[ -n $cert ]] || return 1
	pub=$(openssl x509 -in "$cert" -noout -pubkey 2>/dev/null)
	while IFS= read -r f; do
		grep -q 'PRIVATE KEY' "$f" 2>/dev/null || continue
		kpub=$(openssl pkey -in "$f" -pubout 2>/dev/null) || continue
		[[ $kpub == "$pub" ]] && { key=$f; break; }
	done < <(find "$dir" -type f | sort)
	[[ -n $key ]] || return 1
	echo "$cert $key"
}

# ca_cert DIR: the self-signed (CA) certificate among DIR's files.
ca_cert() {
	local f s i
	while IFS= read -r f; do
		grep -q 'BEGIN CERTIFICATE' "$f" 2>/dev/null || continue
		s=$(openssl x509 -in "$f" -noout -subject 2>/dev/null) || continue
		i=$(openssl x509 -in "$f" -noout -issuer 2>/dev/null) || continue
		[[ ${s#subject=} == "${i#issuer=}" ]] && { echo "$f"; return 0; }
	done < <(find "$1" -type f | sort)
	return 1
}

# vnetd_conf N MODE: host hN's configuration (h2 listens, h1 links to it).
vnetd_conf() {
	local n=$1 mode=$2 me peer tls="" listen_extra=""
	me=$(guest_mac "$n")
	[[ $mode == tls ]] && tls=" tls"
	[[ $mode == tcp ]] && listen_extra=$ALLOW
	echo "node h$n"
	[[ ${THREADS:-no} == yes ]] && echo "threads yes"
	if [[ $mode == tls ]]; then
		echo "tls-cert ${TLS_CERT[$n]}"
		echo "tls-key ${TLS_KEY[$n]}"
		echo "tls-ca $TLS_CA"
	fi
	if ((n == 2)); then
		echo "listen $U2:$PORT$tls$listen_extra"
		[[ -z $LINK_CC ]] || echo "set-link h1 congestion $LINK_CC"
		[[ -z ${TRANSPORT:-} ]] || echo "set-link h1 transport $TRANSPORT"
	else
		echo "link h2 $U2:$PORT$tls${LINK_CC:+ congestion $LINK_CC}${TRANSPORT:+ transport $TRANSPORT}"
	fi
	if [[ ${CAPTURE:-no} == yes && $n == 1 ]]; then
		echo "interface guest pcap cap0"
	else
		echo "interface guest tap vtap0"
	fi
	peer=h$((3 - n))
	if [[ ${ROUTING:-static} == auto ]]; then
		echo "routing auto"	# bench/compare's vnetd-tcp-auto
		return
	fi
	echo "route $me any link $peer"
	echo "route not-$me any interface guest"
}

# capture_guest: g1 behind a veth whose end cap0 in h1 vnetd captures; the
# veth keeps its offloads (partial checksums, super-frames).
capture_guest() {
	local g
	mkns g1
	g=$(ns g1)
	# shellcheck disable=SC2034,SC2154 # lib.sh declares G_NS
	G_NS[g1]=$g
	ip -n "$g" link add v0 type veth peer name cap0 netns "$(ns h1)"
	ip -n "$g" link set v0 address "$(guest_mac 1)" mtu "$MTU"
	ip -n "$g" addr add "$(guest_ip 1)/24" dev v0
	ip -n "$g" link set v0 up
	wait_for 10 capture_up || fail "h1 does not capture cap0: $(vctl h1 show interfaces)"
}

# shellcheck disable=SC2317 # called through wait_for
capture_up() { [[ $(iface_field h1 guest state) == up ]]; }

setup_vnetd() {
	local mode=$1 n why=() out d
	require_binaries
	declare -gA TLS_CERT=() TLS_KEY=()
	TLS_CA=""
	ALLOW=""
	# A vnetd without link congestion controls gets none.
	if [[ -n $LINK_CC ]]; then
		printf 'node h1\nlink h2 %s:%d congestion %s\n' "$U2" "$PORT" "$LINK_CC" >"$TMPD/cc.conf"
		"$VNETD" -n -f "$TMPD/cc.conf" >/dev/null 2>&1 || LINK_CC=""
	fi
	if [[ -n ${TRANSPORT:-} ]]; then
		printf 'node h1\nlink h2 %s:%d transport %s\n' "$U2" "$PORT" "$TRANSPORT" >"$TMPD/transport.conf"
		"$VNETD" -n -f "$TMPD/transport.conf" >/dev/null 2>&1 ||
			skip_system "this vnetd has no transport option (datagram links)"
	fi
	if [[ $mode == tcp ]]; then
		# Once plain listeners take only the addresses of an allow list,
		# name the underlay's; a vnetd without allow lists gets none.
		printf 'node h2\nlisten %s:%d allow 10.66.0.0/24\n' "$U2" "$PORT" >"$TMPD/allow.conf"
		"$VNETD" -n -f "$TMPD/allow.conf" >/dev/null 2>&1 && ALLOW=" allow 10.66.0.0/24"
	else
		if ! VNET_CA_PATH=$(find_vnet_ca); then
			if [[ -n ${VNET_CA:-} ]]; then
				why=("vnet-ca not found: VNET_CA=$VNET_CA is not a file")
			else
				why=("vnet-ca not found (looked in $TOP/src, $TOP/scripts, $TOP/tools and PATH; set VNET_CA)")
			fi
			# Say too whether vnetd itself knows TLS, from a configuration
			# naming certificate files that do not exist: only an objection
			# that is not about the files counts.
			for n in 1 2; do
				TLS_CERT[$n]=$TMPD/none/h$n.crt
				TLS_KEY[$n]=$TMPD/none/h$n.key
			done
			TLS_CA=$TMPD/none/ca.crt
			vnetd_conf 2 tls >"$TMPD/probe.conf"
			if ! out=$("$VNETD" -n -f "$TMPD/probe.conf" 2>&1) &&
				! grep -qiE 'no such file|cannot (open|read|load)|tls-(cert|key|ca)[^ ]*: ' <<<"$out"; then
				why=("vnetd -n rejects the TLS configuration: $(head -n 1 <<<"${out//"$TMPD"\//}")" "${why[0]}")
			fi
			out=${why[0]}
			((${#why[@]} == 1)) || out+="; ${why[1]}"
			skip_system "$out"
		fi
		d=$TMPD/vnet-ca
		vnet_ca init "$d" </dev/null >"$TMPD/vnet-ca.log" 2>&1 ||
			skip_system "vnet-ca init failed: $(tail -n 1 "$TMPD/vnet-ca.log")"
		for n in 1 2; do
			vnet_ca issue "$d" "h$n" </dev/null >>"$TMPD/vnet-ca.log" 2>&1 ||
				skip_system "vnet-ca issue h$n failed: $(tail -n 1 "$TMPD/vnet-ca.log")"
			read -r "TLS_CERT[$n]" "TLS_KEY[$n]" < <(ca_files "$d" "h$n") ||
				skip_system "no certificate and key for h$n among the files vnet-ca made: $(cd "$d" && find . -type f | tr '\n' ' ')"
		done
		TLS_CA=$(ca_cert "$d") || skip_system "no CA certificate among the files vnet-ca made"
		for n in 1 2; do
			vnetd_conf "$n" tls >"$TMPD/probe-h$n.conf"
			out=$("$VNETD" -n -f "$TMPD/probe-h$n.conf" 2>&1) ||
				skip_system "vnetd -n rejects the TLS configuration: $(head -n 1 <<<"${out//"$TMPD"\//}")"
		done
	fi
	underlay
	vnetd_start h2 "$(vnetd_conf 2 "$mode")"
	vnetd_start h1 "$(vnetd_conf 1 "$mode")"
	for n in 1 2; do
		if [[ ${CAPTURE:-no} == yes && $n == 1 ]]; then
			capture_guest
			continue
		fi
		guest_add "g$n" "h$n" vtap0 "$n"
		guest_mtu "$n" vtap0
	done
	wait_link_up h1 h2 20
	wait_link_up h2 h1 20
	if [[ -n ${TRANSPORT:-} ]]; then
		for n in 1 2; do
			wait_for 10 transport_udp "h$n" "h$((3 - n))" ||
				fail "h$n's frames do not go by datagrams: $(vctl "h$n" show link "h$((3 - n))" | grep -E 'transport|dgram_state')"
		done
	fi
	DAEMON_PIDS=("${D_PID[h1]}" "${D_PID[h2]}")
}

# transport_udp DAEMON LINK: the link's frames go by datagrams now.
# shellcheck disable=SC2317 # called through wait_for
transport_udp() {
	vctl "$1" -t show link "$2" | awk -F'\t' '$1 == "transport_now" && $2 == "udp" { ok = 1 } END { exit !ok }'
}

# pki DIR: a CA and a server and a client certificate (EC P-256) for OpenVPN.
pki() {
	local d=$1 who
	mkdir -p "$d"
	cat >"$d/openssl.cnf" <<-'EOF'
		[req]
		distinguished_name = dn
		prompt = no
		[dn]
		CN = unused
		[ca_ext]
		basicConstraints = critical, CA:TRUE
		keyUsage = critical, keyCertSign, cRLSign
		subjectKeyIdentifier = hash
		[server_ext]
		basicConstraints = CA:FALSE
		keyUsage = critical, digitalSignature, keyAgreement
		extendedKeyUsage = serverAuth
		[client_ext]
		basicConstraints = CA:FALSE
		keyUsage = critical, digitalSignature, keyAgreement
		extendedKeyUsage = clientAuth
	EOF
	openssl req -x509 -config "$d/openssl.cnf" -extensions ca_ext -newkey ec \
		-pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/ca.key" \
		-out "$d/ca.crt" -days 2 -subj "/CN=compare-ca" >>"$d/log" 2>&1
	for who in server client; do
		openssl req -new -config "$d/openssl.cnf" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
			-nodes -keyout "$d/$who.key" -out "$d/$who.csr" -subj "/CN=$who" >>"$d/log" 2>&1
		openssl x509 -req -in "$d/$who.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
			-set_serial "0x$(openssl rand -hex 8)" -days 2 -extfile "$d/openssl.cnf" \
			-extensions "${who}_ext" -out "$d/$who.crt" >>"$d/log" 2>&1
	done
}

setup_ovpn() {
	local proto=$1 d=$TMPD/pki common
	command -v openvpn >/dev/null || skip_system "openvpn is not installed (apt-get install openvpn failed)"
	command -v openssl >/dev/null || skip_system "openssl is missing (needed for OpenVPN's certificates)"
	pki "$d" || fail "openssl could not make the certificates: $(tail -n 3 "$d/log")"
	underlay
	tap_make h1
	tap_make h2
	common=(openvpn --dev tap0 --dev-type tap --disable-dco --ca "$d/ca.crt"
		--data-ciphers AES-256-GCM --cipher AES-256-GCM --port 1194 --verb 3)
	if [[ $proto == tcp ]]; then
		start_daemon openvpn-h2 h2 "${common[@]}" --proto tcp-server --local "$U2" \
			--tls-server --dh none --cert "$d/server.crt" --key "$d/server.key" --remote-cert-tls client
		wait_for 10 log_has openvpn-h2 "Listening for incoming TCP connection" ||
			fail "openvpn on h2 does not listen"
		start_daemon openvpn-h1 h1 "${common[@]}" --proto tcp-client --remote "$U2" \
			--tls-client --cert "$d/client.crt" --key "$d/client.key" --remote-cert-tls server
	else
		start_daemon openvpn-h2 h2 "${common[@]}" --proto udp --local "$U2" \
			--tls-server --dh none --cert "$d/server.crt" --key "$d/server.key" --remote-cert-tls client
		start_daemon openvpn-h1 h1 "${common[@]}" --proto udp --remote "$U2" \
			--tls-client --cert "$d/client.crt" --key "$d/client.key" --remote-cert-tls server
	fi
	wait_for 30 log_has openvpn-h1 "Initialization Sequence Completed" ||
		fail "openvpn h1 -> h2 did not come up"
	wait_for 30 log_has openvpn-h2 "Initialization Sequence Completed" ||
		fail "openvpn h2 did not complete its initialization"
	log_has openvpn-h1 "Data Channel: [Cc]ipher 'AES-256-GCM'" ||
		fail "openvpn did not settle on AES-256-GCM"
	tap_to_guest h1 1
	tap_to_guest h2 2
}

setup_tinc() {
	local mode=$1 n c tcponly=no
	command -v tincd >/dev/null || skip_system "tincd is not installed (apt-get install tinc failed)"
	[[ $mode == tcp ]] && tcponly=yes
	for n in 1 2; do
		c=$TMPD/tinc-h$n
		mkdir -p "$c/hosts"
		{
			echo "Name = h$n"
			echo "Mode = switch"
			echo "DeviceType = tap"
			echo "Interface = tap0"
			echo "AddressFamily = ipv4"
			((n == 1)) && echo "ConnectTo = h2"
		} >"$c/tinc.conf"
		{
			((n == 2)) && echo "Address = $U2"
			echo "Port = 655"
			echo "Cipher = $TINC_CIPHER"
			echo "Digest = $TINC_DIGEST"
			echo "TCPOnly = $tcponly"
		} >"$c/hosts/h$n"
		tincd -n compare -c "$c" -K2048 </dev/null >"$TMPD/tinc-keys-h$n.log" 2>&1 ||
			fail "tincd -K failed: $(tail -n 2 "$TMPD/tinc-keys-h$n.log")"
	done
	cp "$TMPD/tinc-h1/hosts/h1" "$TMPD/tinc-h2/hosts/h1"
	cp "$TMPD/tinc-h2/hosts/h2" "$TMPD/tinc-h1/hosts/h2"
	underlay
	tap_make h1
	tap_make h2
	for n in 2 1; do
		start_daemon "tinc-h$n" "h$n" tincd -n compare -c "$TMPD/tinc-h$n" -D -d"$TINC_DEBUG" \
			--pidfile="$TMPD/tinc-h$n.pid"
		wait_for 10 log_has "tinc-h$n" "^Ready" || fail "tincd on h$n did not start"
	done
	wait_for 30 log_has tinc-h1 "Connection with h2 .* activated" ||
		fail "tinc h1 -> h2 did not connect"
	tap_to_guest h1 1
	tap_to_guest h2 2
	if [[ $mode == udp ]]; then
		# tinc sends frames larger than the path MTU it has confirmed so far
		# over its TCP connection: wait until its MTU probes let full-size
		# frames go by UDP.
		wait_for 30 ip netns exec "$(ns g1)" ping -n -c 1 -W 1 "$(guest_ip 2)" ||
			fail "g1 cannot ping g2 ($(guest_ip 2))"
		wait_for 60 tinc_udp_ready || fail "tinc still sends full-size frames over TCP after 60 s"
	fi
}

# tinc_udp_ready: full-size pings between the guests cross the underlay
# without TCP segments from h1 (a frame that tinc sends over TCP, or the ACK
# of a reply that came over TCP, would be one).
# shellcheck disable=SC2317 # called through wait_for
tinc_udp_ready() {
	local u0 t0 u1 t1
	read -r u0 t0 < <(underlay_sent)
	ip netns exec "$(ns g1)" ping -n -q -c 5 -i 0.02 -W 1 -M "do" -s $((MTU - 28)) "$(guest_ip 2)" || return 1
	read -r u1 t1 < <(underlay_sent)
	((u1 - u0 >= 5 && t1 - t0 < 3))
}

# run_system NAME: sets the system up, measures it, tears it down (in a
# subshell: the caller runs it so).
