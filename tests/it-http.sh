#!/bin/bash
#
# The status server: a proxy and two hosts, the proxy's http server allowing
# host1's underlay address alone.  Every API endpoint gives JSON that parses
# and agrees with vnetctl -j, whose show nodes gives its lists (links,
# addresses, candidates) as arrays where -t keeps "a,b"; /metrics is valid Prometheus text (checked
# strictly by tests/http_check.py, and by promtool when installed) and has
# each family with what the traffic and a refused node made of it
# (refusals, nodes, liveness, probes, transport, no route); the link rate the API shows
# while iperf3 runs is within 10% of iperf3's; a refused address (shut at
# accept, unanswered, holding no place), a slow client, 1,000 connections
# from one address, oversized headers, garbage and a POST are each bounded
# while a ping through the proxy loses nothing.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
for b in curl python3 iperf3; do
	command -v "$b" >/dev/null || skip "$b is missing"
done
CHECK="python3 $(dirname "$0")/http_check.py"
HP=8080
IP2=$(guest_ip 2)

node_add proxy 1
node_add host1 2
node_add host2 3
node_add intruder 4
vnetd_start proxy "$(proxy_conf with-routes)
routing auto
http $(addr proxy):$HP allow $(addr host1)"
vnetd_start host1 "$(host_conf 1 with-routes)
routing auto
http 127.0.0.1:$HP"
vnetd_start host2 "$(host_conf 2 with-routes)
routing auto"
guest_add g1 host1 vtap0 1
guest_add g2 host2 vtap0 2
wait_link_up host1 proxy
wait_link_up host2 proxy
wait_link_up proxy host1
wait_link_up proxy host2
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"

# get NODE PATH [CURL ARGS]: the proxy's server, asked from namespace NODE.
URL="http://$(addr proxy):$HP"
get() {
	local n=$1 p=$2
	shift 2
	ip netns exec "$(ns "$n")" curl -sS --max-time 5 "$@" "$URL$p"
}
code() { get "$@" -o /dev/null -w '%{http_code}'; }

say "vnetd -n while the daemon holds the server's port: OK, no log line"
out=$(ip netns exec "$(ns proxy)" "$VNETD" -n -f "${D_CONF[proxy]}" 2>&1) ||
	fail "vnetd -n fails while the daemon runs: $out"
! grep -Eq '^[0-9]{2}:[0-9]{2}|http' <<<"$out" || fail "vnetd -n logged: $out"

say "the allow list: host1 allowed, host2 and the proxy itself refused"
c=$(code host1 /api/v1/links) || fail "host1: request failed"
[[ $c == 200 ]] || fail "host1 got $c, not 200"
# Refused at accept: shut before a byte is read, with no answer at all.
c=$(code host2 /api/v1/links) || true
[[ $c == 000 ]] || fail "host2 (not on the list) got $c, not a closed connection"
c=$(code proxy /api/v1/links) || true
[[ $c == 000 ]] || fail "the proxy's own address (not on the list) got $c, not a closed connection"
info_field() {
	get host1 /api/v1/info | python3 -c 'import json, sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$1"
}
n=$(info_field http_refused) || fail "/api/v1/info has no http_refused"
((n >= 2)) || fail "the refused connections were not counted: http_refused $n"
say "an address not on the list holds no place: 300 connections from host2 while host1 asks"
ip netns exec "$(ns host2)" $CHECK refused "$(addr proxy)" "$HP" 300 >"$TMPD/refused.txt" &
REF=$!
EXTRA_PIDS+=("$REF")
refused_past() { (($(info_field http_refused) >= $1)); }
wait_for 10 refused_past $((n + 100)) || fail "host2's connections were not refused: http_refused $(info_field http_refused)"
c=$(code host1 /api/v1/stats) || fail "host1: request failed while host2 held connections"
[[ $c == 200 ]] || fail "host1 got $c while host2 held connections"
wait "$REF" || fail "host2's connections were not all shut unanswered: $(cat "$TMPD/refused.txt")"
say "$(cat "$TMPD/refused.txt")"
c=$(ip netns exec "$(ns host1)" curl -sS --max-time 5 -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$HP/api/v1/stats") || fail "host1's loopback server does not answer"
[[ $c == 200 ]] || fail "host1's loopback server said $c"
vctl proxy show config | grep -qxF "http $(addr proxy):$HP allow $(addr host1)/32" ||
	fail "show config lacks the http statement: $(vctl proxy show config)"

say "every endpoint parses and agrees with vnetctl -j"
for v in "links all" routes interfaces macs stats flows vcc nodes topology traffic \
	"traffic nodes" "traffic topology" "traffic matrix" "link host1"; do
	p=${v// //}
	[[ $v == "link host1" ]] && p=links/host1
	[[ $v == "links all" ]] && p=links
	# Both read again until they agree: a record arriving between the two
	# reads (the traffic matrix, under routing auto) adds rows to one.
	agree() {
		# shellcheck disable=SC2086 # the verb's words
		vctl proxy -j show $v >"$TMPD/cli.json" || fail "vnetctl -j show $v failed"
		get host1 "/api/v1/$p" >"$TMPD/api.json" || fail "GET /api/v1/$p failed"
		out=$($CHECK same "$TMPD/api.json" "$TMPD/cli.json")
	}
	wait_for 10 agree ||
		fail "/api/v1/$p and vnetctl -j show $v differ: $out ($(head -c 300 "$TMPD/api.json"))"
	say "/api/v1/$p: $out"
done
say "show nodes -j: links, addresses and candidates are arrays, the table keeps a,b"
vctl proxy -j show nodes >"$TMPD/nodes.json" || fail "vnetctl -j show nodes failed"
out=$(python3 - "$TMPD/nodes.json" "$(addr proxy):$PORT" <<'PY'
import json, sys
n = {r["node"]: r for r in json.load(open(sys.argv[1]))}
me = sys.argv[2]
p = n["proxy"]
lists = all(isinstance(r[k], list) for r in n.values()
            for k in ("links", "addresses", "candidates"))
print("proxy: links %s, addresses %s, candidates %s"
      % (p["links"], p["addresses"], p["candidates"]))
ok = lists and sorted(n) == ["host1", "host2", "proxy"] and \
    sorted(p["links"]) == ["host1", "host2"] and \
    all(n[h]["links"] == ["proxy"] for h in ("host1", "host2")) and \
    all(isinstance(a, str) for r in n.values() for a in r["addresses"]) and \
    all(sorted(c) == ["addr", "kind"] for r in n.values() for c in r["candidates"]) and \
    p["addresses"] == [me] and {"addr": me, "kind": "host"} in p["candidates"] and \
    isinstance(p["seq"], int) and isinstance(p["macs"], int)
sys.exit(0 if ok else 1)
PY
) || fail "show nodes -j is not of the documented shape: $out ($(cat "$TMPD/nodes.json"))"
say "$out"
hdr=$(vctl proxy -t -H show nodes | awk -F'\t' 'NR == 1 { print $7, $10 }')
row=$(vctl proxy -t show nodes | awk -F'\t' '$1 == "proxy" { print $7, $10 }')
want="^host[12],host[12] $(addr proxy):$PORT/host\$"
[[ $hdr == "links candidates" && $row =~ $want ]] ||
	fail "show nodes -t is no longer comma-joined under the bare names: '$hdr' '$row'"
for p in links links/host1 stats info history/links/host1; do
	ct=$(get host1 "/api/v1/$p" -o /dev/null -w '%{content_type}') || fail "GET /api/v1/$p failed"
	[[ $ct == application/json ]] || fail "/api/v1/$p is served as '$ct', not application/json"
done
say "the page's matrix: top=1 sums every pair into at most 2 rows and columns"
# The sums of the cut matrix are those of the whole table (read again until
# no record arrives between the two reads), and a page of /api/v1/traffic
# counts every row, made or not.
matrix_sums() {
	get host1 "/api/v1/traffic/matrix?top=1" >"$TMPD/m.json" &&
	get host1 "/api/v1/traffic?limit=1&offset=1" -D "$TMPD/th.txt" >"$TMPD/t1.json" &&
	get host1 /api/v1/traffic >"$TMPD/t.json" &&
	out=$(python3 - "$TMPD/m.json" "$TMPD/t.json" "$TMPD/t1.json" "$TMPD/th.txt" <<'PY'
import json, sys
m, t, t1 = (json.load(open(f)) for f in sys.argv[1:4])
h = {k.strip().lower(): v.strip() for k, v in
     (l.split(":", 1) for l in open(sys.argv[4]) if ":" in l)}
rows = {(c["src_kind"], c["src"]) for c in m}
cols = {(c["dst_kind"], c["dst"]) for c in m}
s = lambda rs, k: sum(r[k] for r in rs)
print("%d pairs in %d cells, %d rows x %d columns, %d bytes; offset 1, limit 1: %s row of %s"
      % (len(t), len(m), len(rows), len(cols), s(m, "bytes"), h.get("x-count"), h.get("x-total-count")))
ok = len(t) >= 2 and len(rows) <= 2 and len(cols) <= 2 and \
    all(s(m, k) == s(t, k) for k in ("bytes", "frames", "rate10")) and \
    int(h["x-total-count"]) == len(t) and int(h["x-count"]) == len(t1) == 1 and \
    t1[0]["bytes"] == t[1]["bytes"]
sys.exit(0 if ok else 1)
PY
)
}
wait_for 10 matrix_sums || fail "the matrix does not sum the traffic table: $out"
say "$out"
for p in /api/v1/config /api/v1/links/nosuch /api/v1/reload /../etc/passwd \
	"/api/v1/links?x=1" "/api/v1/traffic/matrix?top=0" "/api/v1/traffic/matrix?top=65" \
	"/api/v1/traffic/matrix?top=1&top=2" "/api/v1/traffic?top=3"; do
	c=$(code host1 "$p") || true
	[[ $c == 404 ]] || fail "GET $p answered $c, not 404"
done
c=$(code host1 /api/v1/links -X POST) || true
[[ $c =~ ^(405|501)$ ]] || fail "POST answered $c"
c=$(code host1 /api/v1/links -X DELETE) || true
[[ $c =~ ^(405|501)$ ]] || fail "DELETE answered $c"
vctl proxy -t show links all | grep -q "^host1" || fail "link host1 is gone after the refused methods"

get host1 / >"$TMPD/page.html" || fail "GET / failed"
cmp -s "$TMPD/page.html" "$(dirname "$0")/../src/www/index.html" ||
	fail "/ is not the status page of src/www/index.html"
grep -Eq '(src|href)="?(https?:)?//' "$TMPD/page.html" && fail "the page loads something from elsewhere"
get host1 /api/v1/info | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; sys.exit(0 if r["node"]=="proxy" and r["uptime_s"]>=0 else 1)' ||
	fail "/api/v1/info does not name the proxy"

say "/metrics, after a node of another network was refused"
vnetd_start intruder "node intruder
network elsewhere
link proxy $(addr proxy):$PORT"
refused_once() { vctl proxy -t show stats | grep -qx 'refused	[1-9][0-9]*'; }
wait_for 10 refused_once || fail "the proxy did not refuse the intruder: $(vctl proxy -t show refused)"
vnetd_stop intruder
get host1 /metrics >"$TMPD/metrics.txt" || fail "GET /metrics failed"
out=$($CHECK metrics "$TMPD/metrics.txt") || fail "/metrics: $out"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMPD/metrics.txt" >"$TMPD/promtool.txt" 2>&1 ||
		fail "promtool check metrics: $(cat "$TMPD/promtool.txt")"
	out="$out, promtool agrees"
fi
say "/metrics: $out"
# m SAMPLE: the value of one series (labels after node="proxy").
m() { sed -n "s/^$1 //p" "$TMPD/metrics.txt"; }
P='node="proxy"'
v=$(m "vnet_link_bytes_total{$P,link=\"host1\",dir=\"in\"}")
((v > 0)) || fail "vnet_link_bytes_total for host1 is '$v'"
v=$(m "vnet_refused_total{$P,reason=\"refused\"}")
((v >= 1)) || fail "vnet_refused_total{reason=refused} is '$v'"
for r in tls_refused clones_refused pending_full pending_addr_full handshake_timeouts not_allowed; do
	[[ -n $(m "vnet_refused_total{$P,reason=\"$r\"}") ]] || fail "no refusal reason $r"
done
[[ -n $(m "vnet_tls_failed_total{$P}") ]] || fail "no vnet_tls_failed_total"
[[ $(m "vnet_nodes{$P}") == 3 && $(m "vnet_nodes_reachable{$P}") == 3 ]] ||
	fail "nodes known/reachable: $(m "vnet_nodes{$P}")/$(m "vnet_nodes_reachable{$P}"), not 3/3"
[[ -n $(m "vnet_no_route_total{$P}") ]] || fail "no vnet_no_route_total"
[[ -n $(m "vnet_adapt_shortcuts{$P}") && -n $(m "vnet_adapt_dial_failures_total{$P}") ]] ||
	fail "no shortcut families"
for l in host1 host2; do
	[[ $(m "vnet_link_liveness_state{$P,link=\"$l\",state=\"up\"}") == 1 &&
		$(m "vnet_link_liveness_state{$P,link=\"$l\",state=\"down\"}") == 0 ]] ||
		fail "link $l's liveness is not up: $(grep "liveness_state.*$l" "$TMPD/metrics.txt")"
	[[ $(m "vnet_link_liveness_losses_total{$P,link=\"$l\"}") == 0 ]] || fail "link $l lost its liveness"
	v=$(m "vnet_link_probe_interval_seconds{$P,link=\"$l\"}")
	awk -v v="$v" 'BEGIN { exit !(v > 0 && v <= 2) }' || fail "link $l probes every '$v' s"
	[[ $(m "vnet_link_transport_info{$P,link=\"$l\",transport=\"tcp\"}") == 1 ]] ||
		fail "link $l has no transport_info tcp"
done
# The refusals by reason are the show stats counters of the same names.
[[ $(m "vnet_refused_total{$P,reason=\"refused\"}") == $(vctl proxy -t show stats | awk -F'\t' '$1 == "refused" { print $2 }') ]] ||
	fail "vnet_refused_total{reason=refused} differs from show stats"

say "rates: the API against iperf3"
iperf_server g2
in_guest g1 iperf3 -c "$IP2" -t 14 -J >"$TMPD/iperf.json" 2>&1 &
IPERF=$!
EXTRA_PIDS+=("$IPERF")
# The 10 s rate of show links is the mean of the history's last ten seconds
# (both read at the same tick: retried when a tick falls between them).
rates_agree() {
	get host1 /api/v1/links >"$TMPD/links.json" &&
	get host1 /api/v1/history/links/host1 >"$TMPD/hist.json" &&
	python3 - "$TMPD/links.json" "$TMPD/hist.json" <<'PY'
import json, sys
links = {r["name"]: r for r in json.load(open(sys.argv[1]))}
h = json.load(open(sys.argv[2]))
b = h["bps_in"][-10:]
mean = sum(b) / 10
api = links["host1"]["bps_in_10s"]
sys.exit(0 if len(b) == 10 and mean > 1e6 and abs(api - mean) <= 0.02 * mean else 1)
PY
}
wait_for 20 rates_agree || fail "bps_in_10s of link host1 is not the mean of its last ten seconds"
wait "$IPERF" || fail "iperf3 failed: $(tail -n 5 "$TMPD/iperf.json")"
# Once the run is over and sampled, the bits the series counted are iperf3's
# (the frames' headers add some 5%).
run_sampled() {
	get host1 /api/v1/history/links/host1 >"$TMPD/hist.json" &&
	python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["bps_in"]
sys.exit(0 if len(b) > 3 and max(b[-3:]) < 1e6 else 1)' "$TMPD/hist.json"
}
wait_for 10 run_sampled || fail "the history does not show the end of the run"
out=$(python3 - "$TMPD/iperf.json" "$TMPD/hist.json" <<'PY'
import json, sys
ip = json.load(open(sys.argv[1]))["end"]["sum_received"]
h = json.load(open(sys.argv[2]))
assert len(h["t_ms"]) == len(h["bps_in"]) == len(h["drops"]) == len(h["sojourn_p99_us"])
busy = [v for v in h["bps_in"] if v > 1e6]
api = sum(busy) / ip["seconds"]
want = ip["bits_per_second"]
print("API %.1f Mbit/s over %d busy seconds, iperf3 %.1f Mbit/s over %.1f s"
      % (api / 1e6, len(busy), want / 1e6, ip["seconds"]))
sys.exit(0 if abs(api - want) <= 0.1 * want else 1)
PY
) || fail "the API's rate is not within 10% of iperf3's: $out"
say "$out"
# An interface's history: host1's guest interface (its own server, on
# loopback) carried the run too.
ifname=$(vctl host1 -t show interfaces | awk -F'\t' 'NR == 1 { print $1 }')
ip netns exec "$(ns host1)" curl -sS --max-time 5 \
	"http://127.0.0.1:$HP/api/v1/history/interfaces/$ifname" >"$TMPD/ihist.json" ||
	fail "GET /api/v1/history/interfaces/$ifname on host1 failed"
python3 -c '
import json, sys
h = json.load(open(sys.argv[1]))
n = len(h["t_ms"])
peak = max(a + b for a, b in zip(h["bps_in"], h["bps_out"]))
sys.exit(0 if n > 3 and len(h["bps_in"]) == len(h["drops"]) == n and peak > 1e6 else 1)' \
	"$TMPD/ihist.json" || fail "interface $ifname's history did not see the run: $(head -c 300 "$TMPD/ihist.json")"

say "hostile clients, a ping running through the proxy"
in_guest g1 ping -n -i 0.2 -c 150 -W 2 "$IP2" >"$TMPD/ping.txt" 2>&1 &
PING=$!
EXTRA_PIDS+=("$PING")
hp=$(addr proxy)
out=$(ip netns exec "$(ns host1)" $CHECK slow "$hp" "$HP" 20) || fail "slow client: $out"
say "slow client (a byte a second): $out"
ip netns exec "$(ns host1)" $CHECK many "$hp" "$HP" 1000 >"$TMPD/many.txt" &
MANY=$!
EXTRA_PIDS+=("$MANY")
wait_for 10 bash -c "ip netns exec $(ns proxy) ss -Htn state established 'sport = :$HP' | wc -l | grep -qv '^0$'" ||
	fail "the 1,000 connections did not start"
vctl_ok "${D_SOCK[proxy]}" || fail "the control socket does not answer with HTTP connections open"
wait "$MANY" || fail "the connections failed"
read -r nc _ ns _ <"$TMPD/many.txt"
say "1000 connections: $(cat "$TMPD/many.txt")"
# One address has HTTP_CONNS_PER_ADDR (32) places of the 256.
((nc == 1000 && ns >= 1000 - 32)) || fail "the server did not shed the connections over one address's 32: $(cat "$TMPD/many.txt")"
out=$(ip netns exec "$(ns host1)" $CHECK big "$hp" "$HP") || fail "$out"
say "$out"
out=$(ip netns exec "$(ns host1)" $CHECK garbage "$hp" "$HP") || fail "$out"
say "$out"
wait_for 15 bash -c "[[ \$(ip netns exec $(ns host1) curl -s --max-time 2 -o /dev/null -w '%{http_code}' $URL/api/v1/stats) == 200 ]]" ||
	fail "the server does not answer after the hostile clients"
wait "$PING" || true
grep -q ' 150 received' "$TMPD/ping.txt" || fail "the ping lost frames: $(tail -n 2 "$TMPD/ping.txt")"
say "ping: $(grep -o '[0-9]* received, [0-9.]*% packet loss' "$TMPD/ping.txt")"
proc_running "${D_PID[proxy]}" || fail "the proxy died"
pass
