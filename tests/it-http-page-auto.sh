#!/bin/bash
#
# The status page with `routing auto` on all three daemons and no routes by
# hand (a proxy and two hosts over TLS; guests 1 and 3 behind host1, 2
# behind host2), in headless Chromium.  The proxy's page draws three nodes
# and two links, with guests 1 and 3 under host1 and guest 2 under host2,
# from its node database.  Then iperf3 sends 20 Mbit/s from guest 1 to
# guest 2, over `adapt shortcuts` threshold, and host1 dials host2: the
# proxy's page draws that third link, which only the node records tell it
# of, and its traffic matrix and application topology have the pair; the
# pages host1 and host2 serve mark the link between them auto (host1
# dialled it) and their links to the proxy not, and host1's interface
# charts have points.  A screenshot of host1's page is saved next to this
# test's log (tests/it-http-page-auto.png; doc/status.png is a copy).
# Skipped without Chromium, and in a sanitizer build (it-http serves the
# same endpoints under the sanitizers).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v chromium >/dev/null || skip "chromium is missing (apt-get install chromium)"
grep -qa __asan_init "$VNETD" 2>/dev/null && skip "a sanitizer build: it-http serves the same endpoints under the sanitizers"
command -v iperf3 >/dev/null || skip "iperf3 is missing"
HP=8080
SHOT=${SCREENSHOT:-$(dirname "$0")/it-http-page-auto.png}
G1=$(guest_mac 1) G2=$(guest_mac 2) G3=$(guest_mac 3)
RSTAR_SECOND=1
RSTAR_ROUTING="routing auto
adapt shortcuts yes threshold 5mbit hold 2 idle 60
http 127.0.0.1:$HP"
rstar_start 2
wait_for 10 nodes_reachable proxy 3 || fail "proxy: show nodes: $(vctl proxy show nodes)"
for g in g1 g3; do
	wait_for 15 gping "$g" "$(guest_ip 2)" || fail "$g cannot ping guest 2"
done
for m in "$G1" "$G3"; do
	wait_for 10 owner_is proxy "$m" host1 || fail "the proxy does not know $m is behind host1"
done
wait_for 10 owner_is proxy "$G2" host2 || fail "the proxy does not know $G2 is behind host2"

# page NODE FILE: the DOM Chromium renders of NODE's page, read by
# page_dom.py into FILE.
page() {
	ip netns exec "$(ns "$1")" chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$TMPD/chromium-$1" --virtual-time-budget=5000 --dump-dom \
		"http://127.0.0.1:$HP/" >"$TMPD/$2.html" 2>>"$TMPD/chromium.log" ||
		fail "chromium failed: $(tail -n 5 "$TMPD/chromium.log")"
	python3 "$LIB_DIR/page_dom.py" "$TMPD/$2.html" >"$TMPD/$2.json" ||
		fail "cannot read the DOM of $1's page"
}
# check FILE PYTHON-EXPRESSION: the expression on the DOM summary d (and
# pairs, the links' node pairs) holds; prints the summary.
check() {
	python3 - "$TMPD/$1.json" "$2" "$G1" "$G2" "$G3" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
g1, g2, g3 = sys.argv[3:6]
pairs = sorted(tuple(sorted((l["a"], l["b"]))) for l in d["links"])
auto = sorted(tuple(sorted((l["a"], l["b"]))) for l in d["links"] if "auto" in l["classes"])
down = [l for l in d["links"] if "down" in l["classes"]]
print("nodes %s, links %s, auto %s, down %d, guests %s, apps %s, matrix cells %d, points %s"
      % (sorted(d["nodes"]), pairs, auto, len(down), d["guests"], d["apps"], d["cells"], d["points"]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
EOF
}

page proxy before
out=$(check before '
sorted(d["nodes"]) == ["host1", "host2", "proxy"] and
pairs == [("host1", "proxy"), ("host2", "proxy")] and not down and
{k: sorted(v) for k, v in d["guests"].items()} == {"host1": sorted([g1, g3]), "host2": [g2]}') ||
	fail "the proxy's page before the transfer is not right: $out"
say "proxy's page: $out"

iperf_server g2
in_guest g1 iperf3 -c "$(guest_ip 2)" -t 60 -b 20M >/dev/null 2>&1 &
EXTRA_PIDS+=("$!")
shortcut() { [[ $(link_field host1 host2 state) == up ]]; }
wait_for 20 shortcut || fail "no shortcut from host1 to host2: $(vctl host1 show adapt)"
# The proxy knows of it once both records list it, and of the pair's
# traffic once a record carries the rows.
listed() {
	vctl proxy -t show topology | awk -F'\t' '
		($1 == "host1" && $2 == "host2") || ($1 == "host2" && $2 == "host1") { n++ }
		END { exit n != 2 }'
}
wait_for 15 listed || fail "the proxy's records do not list host1-host2: $(vctl proxy show topology)"
pair() { vctl proxy -t show traffic topology | grep -q "^$G1	$G2	"; }
wait_for 15 pair || fail "no inferred pair on the proxy: $(vctl proxy show traffic topology)"

# The proxy's own links are hand-written (dialled by the hosts): not auto.
page proxy after
out=$(check after '
sorted(d["nodes"]) == ["host1", "host2", "proxy"] and
pairs == [("host1", "host2"), ("host1", "proxy"), ("host2", "proxy")] and not down and
auto == [] and
[g1, g2] in d["apps"] and d["cells"] >= 1') ||
	fail "the proxy's page after the shortcut is not right: $out"
say "proxy's page: $out"

page host1 host1
out=$(check host1 '
pairs == [("host1", "host2"), ("host1", "proxy"), ("host2", "proxy")] and
auto == [("host1", "host2")] and not down and
sorted(d["points"]["icharts"]) == ["guest", "second"] and
all(len(v) == 2 and min(v) >= 5 for v in d["points"]["icharts"].values())') ||
	fail "host1's page is not right: $out"
say "host1's page: $out"
page host2 host2
out=$(check host2 '
pairs == [("host1", "host2"), ("host1", "proxy"), ("host2", "proxy")] and
auto == [("host1", "host2")] and not down') ||
	fail "host2's page is not right: $out"
say "host2's page: $out"
ip netns exec "$(ns host1)" chromium --headless --no-sandbox --disable-gpu \
	--user-data-dir="$TMPD/chromium-host1" --virtual-time-budget=5000 \
	--screenshot="$TMPD/shot.png" --window-size=1100,1000 "http://127.0.0.1:$HP/" \
	>/dev/null 2>>"$TMPD/chromium.log" || fail "chromium could not take a screenshot"
[[ -s $TMPD/shot.png ]] || fail "no screenshot"
cp "$TMPD/shot.png" "$SHOT"
say "screenshot: $SHOT"
pass
