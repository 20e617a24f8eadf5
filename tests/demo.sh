#!/bin/bash
#
# The demo: a CA made with vnet-ca and a certificate for each node; a proxy
# and two hosts, each vnetd in its own network namespace on a private
# underlay (10.66.0.0/24), linked over TLS; a guest namespace behind each
# host's TAP device (10.77.0.1 and 10.77.0.2); guest 1 pings guest 2 across
# the proxy.  Everything is torn down at the end.  Needs root, openssl and
# a built src/vnetd and src/vnetctl.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
TEST_NAME=demo
if [[ $(id -u) != 0 ]]; then
	echo "demo: run me as root (I create network namespaces and TAP devices)" >&2
	exit 1
fi
require_root
require_binaries
command -v openssl >/dev/null || fail "openssl (the command) is missing: apt-get install openssl"
STAR_TLS=1

# show DAEMON ARGS...: prints and runs vnetctl against that daemon.
show() {
	local d=$1
	shift
	printf '\n[%s]# vnetctl -s %s %s\n' "$d" "${D_SOCK[$d]}" "$*"
	vctl "$d" "$@"
}

printf '\n# %s init %s\n' "$(basename "$VNET_CA")" "$CA_DIR"
"$VNET_CA" init "$CA_DIR"
for d in proxy host1 host2; do
	printf '# %s issue %s %s\n' "$(basename "$VNET_CA")" "$CA_DIR" "$d"
	"$VNET_CA" issue "$CA_DIR" "$d" >/dev/null
done

node_add proxy 1
node_add host1 2
node_add host2 3
for d in proxy host1 host2; do
	case $d in
	proxy) conf=$(proxy_conf with-routes) ;;
	host1) conf=$(host_conf 1 with-routes) ;;
	host2) conf=$(host_conf 2 with-routes) ;;
	esac
	printf '\n---- %s: vnetd.conf (namespace %s, underlay address %s)\n%s\n' \
		"$d" "$(ns "$d")" "$(addr "$d")" "$conf"
	vnetd_start "$d" "$conf"
done
guest_add g1 host1 vtap0 1
guest_add g2 host2 vtap0 2
printf '\nguest 1: %s %s behind host1; guest 2: %s %s behind host2\n' \
	"$(guest_ip 1)" "$(guest_mac 1)" "$(guest_ip 2)" "$(guest_mac 2)"
say "waiting for the links to come up"
wait_link_up host1 proxy
wait_link_up host2 proxy

show proxy show links
printf '\n[proxy log]\n'
grep -h 'certificate of node .* verified' "${D_LOG[proxy]}" | cut -d' ' -f3-
show proxy show routes
show host1 show interfaces
printf '\n[guest 1]# ping -c 3 %s\n' "$(guest_ip 2)"
in_guest g1 ping -n -c 3 "$(guest_ip 2)" || fail "the ping across the proxy failed"
show proxy show links
printf '\n'
say "OK: guest 1 reached guest 2 through the proxy over TLS; tearing everything down"
