#!/bin/bash
#
# The status page in headless Chromium: a proxy and two hosts, iperf3
# running from guest 1 to guest 2; the page the proxy serves draws three
# nodes and two links, its link charts have points, and a screenshot is
# saved next to this test's log (tests/it-http-page.png).  Skipped without
# Chromium (apt-get install chromium).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v chromium >/dev/null || skip "chromium is missing (apt-get install chromium)"
command -v iperf3 >/dev/null || skip "iperf3 is missing"
HP=8080
IP2=$(guest_ip 2)
SHOT=${SCREENSHOT:-$(dirname "$0")/it-http-page.png}

node_add proxy 1
node_add host1 2
node_add host2 3
vnetd_start proxy "$(proxy_conf with-routes)
http 127.0.0.1:$HP"
vnetd_start host1 "$(host_conf 1 with-routes)"
vnetd_start host2 "$(host_conf 2 with-routes)"
guest_add g1 host1 vtap0 1
guest_add g2 host2 vtap0 2
wait_link_up proxy host1
wait_link_up proxy host2
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"

iperf_server g2
in_guest g1 iperf3 -c "$IP2" -t 30 >/dev/null 2>&1 &
EXTRA_PIDS+=("$!")
busy() {
	ip netns exec "$(ns proxy)" curl -s --max-time 2 "http://127.0.0.1:$HP/api/v1/history/links/host1" |
		python3 -c 'import json,sys; sys.exit(0 if sum(v > 1e6 for v in json.load(sys.stdin)["bps_in"]) >= 5 else 1)'
}
wait_for 20 busy || fail "no traffic in the history of link host1"

browse() {
	ip netns exec "$(ns proxy)" chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$TMPD/chromium" --virtual-time-budget=5000 "$@" \
		"http://127.0.0.1:$HP/" 2>>"$TMPD/chromium.log"
}
browse --dump-dom >"$TMPD/dom.html" || fail "chromium failed: $(tail -n 5 "$TMPD/chromium.log")"
out=$(python3 - "$TMPD/dom.html" <<'PY'
import re, sys
d = open(sys.argv[1]).read()
nodes = re.findall(r'<circle[^>]*class="node', d)
links = re.findall(r'<line[^>]*class="lk link', d)
up = re.findall(r'<line[^>]*class="lk link"', d)
pts = [int(n) for n in re.findall(r'<polyline[^>]*data-points="([0-9]+)"', d)]
rates = re.findall(r'class="rate">([0-9.]+)([kMG]?)bit/s', d)
print("%d nodes, %d links (%d up), %d chart lines, points %s, rates %s"
      % (len(nodes), len(links), len(up), len(pts), pts[:4], rates))
ok = len(nodes) == 3 and len(links) == 2 and len(up) == 2 and len(pts) >= 4 and \
    min(pts) >= 5 and any(u == "M" or u == "G" for _, u in rates)
sys.exit(0 if ok else 1)
PY
) || fail "the page is not right: $out"
say "page: $out"
browse --screenshot="$TMPD/shot.png" --window-size=1100,820 >/dev/null ||
	fail "chromium could not take a screenshot"
[[ -s $TMPD/shot.png ]] || fail "no screenshot"
cp "$TMPD/shot.png" "$SHOT"
say "screenshot: $SHOT"
pass
