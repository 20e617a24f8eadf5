#!/bin/bash
#
# By hand, as root: does a status-server request stall the frame path?
# One daemon, two guests, 15,000 source MACs flooded (over 5,000 learned);
# guest 1 pings guest 2 every 10 ms idle, then while 4 keep-alive clients
# ask for PATHQ (default /api/v1/macs?limit=10000) in a loop.  A cheap path
# (PATHQ=/api/v1/info) is the control for the clients' own CPU.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/../lib.sh}"
require_root
require_binaries
HP=8080
PATHQ=${PATHQ:-/api/v1/macs?limit=10000}
node_add h1 1
vnetd_start h1 "node h1
learn yes
interface g1 tap vtap1
interface g2 tap vtap2
http $(addr h1):$HP allow $(addr h1),127.0.0.0/8"
guest_add g1 h1 vtap1 1
guest_add g2 h1 vtap2 2
wait_for 10 gping g1 "$(guest_ip 2)" || fail "no ping"
mac_flood g1 vtap1 15000 || fail flood
# shellcheck disable=SC2317 # called through wait_for
macs_settled() { (($(stat_value h1 macs) > 5000)); }
wait_for 10 macs_settled || fail "macs $(stat_value h1 macs)"
URL="http://$(addr h1):$HP"
say "$(stat_value h1 macs) MACs learned"
t0=$(date +%s%N)
ip netns exec "$(ns h1)" curl -s -o /dev/null "$URL$PATHQ"
t1=$(date +%s%N)
say "one GET $PATHQ: $(( (t1 - t0) / 1000000 )) ms wall; $(ip netns exec "$(ns h1)" curl -s -o - "$URL$PATHQ" | wc -c) bytes"
pingrun() { in_guest g1 ping -n -q -i 0.01 -c 400 "$(guest_ip 2)" | tail -n 2 | tr '\n' ' '; }
say "idle: $(pingrun)"
ip netns exec "$(ns h1)" python3 -c '
import http.client, sys, threading
def run():
    c = http.client.HTTPConnection(sys.argv[1], 8080, timeout=5)
    while True:
        try:
            c.request("GET", sys.argv[2]); c.getresponse().read()
        except Exception:
            c = http.client.HTTPConnection(sys.argv[1], 8080, timeout=5)
for _ in range(4):
    threading.Thread(target=run, daemon=True).start()
threading.Event().wait()' "$(addr h1)" "$PATHQ" &
EXTRA_PIDS+=("$!")
sleep 1
say "4 clients on $PATHQ: $(pingrun)"
say "daemon CPU: $(ps -o pcpu= -p "${D_PID[h1]}")"
pass
