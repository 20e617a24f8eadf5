#!/bin/bash
#
# The status page in headless Chromium: a proxy and two hosts with routes
# by hand, iperf3 sending 20 Mbit/s from guest 1 to guest 2.  In the DOM
# the proxy's page renders: three nodes and two links, both up and neither
# marked a shortcut; each guest drawn under its host, none under the
# proxy; each link's rate within 10% of what iperf3 measured over the same
# seconds; the link charts have points.  A screenshot is saved next to
# this test's log (tests/it-http-page.png; doc/status.png is a copy).
# tests/it-http-page-auto.sh does the same with `routing auto`.  Skipped
# without Chromium (apt-get install chromium), and in a sanitizer build.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v chromium >/dev/null || skip "chromium is missing (apt-get install chromium)"
# The page is JavaScript; the daemon's side of it (every /api/v1 endpoint,
# the histories) runs under the sanitizers in it-http: once, from the
# plain build, is enough.
grep -qa __asan_init "$VNETD" 2>/dev/null && skip "a sanitizer build: it-http serves the same endpoints under the sanitizers"
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
# A fixed rate well below what the path carries, so that both measure the
# same steady flow whatever the load on the machine; in writes of 8 KiB,
# since iperf3 paces whole writes (its default, 128 KiB, is 1/20 of a
# second at this rate, and one more or less in a second would be 5%).
in_guest g1 iperf3 -c "$IP2" -t 45 -b 20M -l 8K -J >"$TMPD/iperf.json" 2>&1 &
IPERF=$!
EXTRA_PIDS+=("$IPERF")
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
T0=$(date +%s.%N)
browse --dump-dom >"$TMPD/dom.html" || fail "chromium failed: $(tail -n 5 "$TMPD/chromium.log")"
T1=$(date +%s.%N)
python3 "$LIB_DIR/page_dom.py" "$TMPD/dom.html" >"$TMPD/dom.json" ||
	fail "cannot read the page's DOM"
out=$(python3 - "$TMPD/dom.json" "$(guest_mac 1)" "$(guest_mac 2)" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
g1, g2 = sys.argv[2], sys.argv[3]
pairs = sorted(tuple(sorted((l["a"], l["b"]))) for l in d["links"])
pts = d["points"]["lcharts"]
print("nodes %s, links %s, guests %s, chart points %s"
      % (sorted(d["nodes"]), [(l["a"], l["b"], l["classes"]) for l in d["links"]], d["guests"], pts))
ok = sorted(d["nodes"]) == ["host1", "host2", "proxy"] and \
    pairs == [("host1", "proxy"), ("host2", "proxy")] and \
    all("down" not in l["classes"] and "auto" not in l["classes"] for l in d["links"]) and \
    d["guests"] == {"host1": [g1], "host2": [g2]} and \
    sorted(pts) == ["host1", "host2"] and \
    all(len(v) == 2 and min(v) >= 5 for v in pts.values())
sys.exit(0 if ok else 1)
EOF
) || fail "the page is not right: $out"
say "page: $out"
browse --screenshot="$TMPD/shot.png" --window-size=1100,1000 >/dev/null ||
	fail "chromium could not take a screenshot"
[[ -s $TMPD/shot.png ]] || fail "no screenshot"
cp "$TMPD/shot.png" "$SHOT"
say "screenshot: $SHOT"

# The rates the page showed (over the last second before one of its
# refreshes between T0 and T1) against iperf3's per-second rates over
# those seconds.
wait "$IPERF" || fail "iperf3 failed: $(tail -n 5 "$TMPD/iperf.json")"
out=$(python3 - "$TMPD/dom.json" "$TMPD/iperf.json" "$T0" "$T1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ip = json.load(open(sys.argv[2]))
t0, t1 = float(sys.argv[3]), float(sys.argv[4])
start = ip["start"]["timestamp"]["timesecs"]	# whole seconds: one more each side
iv = [i["sum"]["bits_per_second"] for i in ip["intervals"]
      if start + i["sum"]["end"] >= t0 - 2 and start + i["sum"]["start"] <= t1 + 1]
ref = sum(iv) / len(iv)
# The direction the data went: host1 to the proxy, the proxy to host2.
rates = {}
for l in d["links"]:
    if l["ab"] is not None:
        rates[l["a"] + "-" + l["b"]] = l["ab"] if l["a"] == "host1" else l["ba"]
print("iperf3 %.2f Mbit/s over %d s; page %s" % (ref / 1e6, len(iv),
      ", ".join("%s %.2f Mbit/s (%+.1f%%)" % (k, v / 1e6, 100 * (v - ref) / ref)
                for k, v in sorted(rates.items()))))
sys.exit(0 if len(rates) == 2 and all(abs(v - ref) <= 0.1 * ref for v in rates.values()) else 1)
EOF
) || fail "the page's link rates are not iperf3's: $out"
say "rates: $out"
pass
