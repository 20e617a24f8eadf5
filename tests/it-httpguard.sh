#!/bin/bash
#
# The status server held like the control socket: a node whose MAC table
# holds over 11,000 entries, its http server allowing the monitor's address and
# loopback.  An address not on the list opening connections as fast as it
# can does not keep the monitor out (none of its connections is admitted);
# 64 local connections that ask for 10,000 rows and never read make the
# daemon hold no more than its bound (its own count, and its RSS); an API
# answer is at most 1,000 rows unless asked, with the total in
# X-Total-Count, and ?limit=&offset= page through it.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
# Under LeakSanitizer: answers still streaming to clients that never read
# are in evhttp's hands when the daemon exits (evhttp_free does not free a
# request whose chunked reply is under way); memory the exit gives back,
# not a leak while it runs.  Only those allocations are let pass.
printf 'leak:evhttp_request_new\nleak:libevent-2.1.so\n' >"$TMPD/lsan.supp"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TMPD/lsan.supp"
for b in curl python3; do
	command -v "$b" >/dev/null || skip "$b is missing"
done
CHECK="python3 $(dirname "$0")/http_check.py"
HP=8080

node_add h1 1
node_add mon 2
node_add bad 3
vnetd_start h1 "node h1
learn yes
interface g1 tap vtap1
http $(addr h1):$HP allow $(addr mon),127.0.0.0/8"
guest_add g1 h1 vtap1 1
URL="http://$(addr h1):$HP"
get() {
	local p=$1
	shift
	ip netns exec "$(ns mon)" curl -sS --max-time 5 "$@" "$URL$p"
}
code() { get "$@" -o /dev/null -w '%{http_code}'; }
info_field() {
	get /api/v1/info | python3 -c 'import json, sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$1"
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/${D_PID[h1]}/status"; }

say "guest 1 sends from 15,000 source MACs"
mac_flood g1 vtap1 15000 || fail "the flood failed"
macs_settled() { (($(stat_value h1 macs) > 11000)); }
wait_for 10 macs_settled || fail "the daemon learned only $(stat_value h1 macs) MACs"

say "an answer is bounded by default and pages with limit and offset"
get /api/v1/macs -D "$TMPD/h.txt" -o "$TMPD/macs.json" || fail "GET /api/v1/macs failed"
read -r rows total off given < <($CHECK page "$TMPD/macs.json" "$TMPD/h.txt") || fail "not a paged answer"
((rows == 1000 && given == 1000 && off == 0 && total > 11000)) ||
	fail "/api/v1/macs gave $rows rows (X-Count $given, X-Total-Count $total), not the default 1000 of all"
say "/api/v1/macs: $rows rows of $total, $(stat -c %s "$TMPD/macs.json") bytes"
get "/api/v1/macs?limit=10000" -D "$TMPD/h.txt" -o "$TMPD/big.json" || fail "limit=10000 failed"
read -r rows total2 _ given < <($CHECK page "$TMPD/big.json" "$TMPD/h.txt")
((rows == given && rows == 10000)) || fail "limit=10000 gave $rows rows (X-Count $given)"
say "/api/v1/macs?limit=10000: $(stat -c %s "$TMPD/big.json") bytes"
get "/api/v1/macs?offset=10&limit=5" -D "$TMPD/h.txt" -o "$TMPD/p.json" || fail "offset=10&limit=5 failed"
read -r rows _ off given < <($CHECK page "$TMPD/p.json" "$TMPD/h.txt")
((rows == 5 && off == 10 && given == 5)) || fail "offset=10&limit=5 gave $rows rows at $off"
python3 - "$TMPD/big.json" "$TMPD/p.json" <<'PY' || fail "rows 10 to 14 are not those of the whole table"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if [r["mac"] for r in a[10:15]] == [r["mac"] for r in b] else 1)
PY
get "/api/v1/macs?offset=$total" -D "$TMPD/h.txt" -o "$TMPD/e.json" || fail "an offset past the end failed"
read -r rows _ _ given < <($CHECK page "$TMPD/e.json" "$TMPD/h.txt")
((rows == 0 && given == 0)) || fail "an offset past the end gave $rows rows"
get "/api/v1/traffic?limit=1" -D "$TMPD/h.txt" -o "$TMPD/t.json" || fail "GET /api/v1/traffic?limit=1 failed"
read -r rows total _ given < <($CHECK page "$TMPD/t.json" "$TMPD/h.txt") || fail "/api/v1/traffic is not a paged answer"
((rows <= 1 && rows == given)) && [[ $total =~ ^[0-9]+$ ]] || fail "traffic?limit=1 gave $rows rows of $total"
get /api/v1/traffic -D "$TMPD/h.txt" -o "$TMPD/t.json" || fail "GET /api/v1/traffic failed"
grep -qi '^X-Total-Count: [0-9]' "$TMPD/h.txt" || fail "/api/v1/traffic has no X-Total-Count"
for q in limit=0 limit=10001 limit=x "limit=5&limit=6" offset=-1 "limit=5&" threshold=0.5 x=1; do
	c=$(code "/api/v1/macs?$q") || true
	[[ $c == 404 ]] || fail "?$q answered $c, not 404"
done
c=$(code "/api/v1/traffic/topology?threshold=0.5&limit=3") || true
[[ $c == 200 ]] || fail "traffic/topology?threshold=0.5&limit=3 answered $c"

say "an address not on the list floods connections; the monitor still gets in"
ip netns exec "$(ns bad)" $CHECK flood "$(addr h1)" "$HP" 8 >"$TMPD/flood.txt" &
FLOOD=$!
EXTRA_PIDS+=("$FLOOD")
r0=$(info_field http_refused)
refused_past() { (($(info_field http_refused) >= $1)); }
wait_for 10 refused_past $((r0 + 200)) || fail "the flood was not refused: http_refused $(info_field http_refused)"
ok=0
for _ in $(seq 20); do
	c=$(code /api/v1/stats) || true
	[[ $c == 200 ]] && ok=$((ok + 1))
	[[ $c == 200 ]] || say "monitor: $c"
done
((ok == 20)) || fail "the monitor got $ok of 20 answers during the flood: $(get /api/v1/info)"
n=$(info_field http_conns)
((n <= 2)) || fail "$n connections admitted during the flood (the monitor's alone expected)"
wait "$FLOOD" || fail "the flood failed"
say "$(cat "$TMPD/flood.txt") from $(addr bad), $(($(info_field http_refused) - r0)) refused; the monitor 20 of 20, $n admitted"

say "64 local connections ask for 10,000 rows each and never read"
rss0=$(rss_kib)
ip netns exec "$(ns h1)" $CHECK noread "$(addr h1)" "$HP" 64 "/api/v1/macs?limit=10000" 7 local >"$TMPD/noread.txt" &
NR=$!
EXTRA_PIDS+=("$NR")
# Each is admitted and answered, or answered 503 and closed.
b0=$(info_field http_busy)
conns_past() {
	get /api/v1/info >"$TMPD/info.json" &&
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))[0]; sys.exit(0 if r["http_conns"] - 1 + r["http_busy"] - int(sys.argv[2]) >= 64 else 1)' "$TMPD/info.json" "$b0"
}
wait_for 10 conns_past || fail "the 64 local connections were not admitted: $(get /api/v1/info) $(cat "$TMPD/noread.txt")"
held=0 rss=0 conns=0
for _ in $(seq 10); do
	get /api/v1/info >"$TMPD/info.json" || fail "/api/v1/info failed"
	read -r h n < <(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))[0]; print(r["http_held_bytes"], r["http_conns"])' "$TMPD/info.json")
	((h > held)) && held=$h
	((n > conns)) && conns=$n
	r=$(rss_kib)
	((r > rss)) && rss=$r
	sleep 0.3	# sampling what is held while the clients sit
done
busy=$(($(info_field http_busy) - b0))
wait "$NR" || fail "the non-reading clients failed"
grow=$(((rss - rss0) / 1024))
say "held at most $((held / 1024)) KiB, RSS grew $grow MiB ($((rss0 / 1024)) -> $((rss / 1024))), $((conns - 1)) answering, $busy answered 503"
# HTTP_QUEUED_MAX (16 MiB) and one answer past it (a page of 1 MiB, a chunk).
((held <= 18 * 1024 * 1024)) || fail "the daemon held $held bytes for clients that do not read"
# Under the sanitizers, freed memory waits in ASan's quarantine (up to
# 256 MiB): RSS says nothing there, the daemon's own count above does.
if ! grep -qa __asan_init "$VNETD"; then
	((grow <= 40)) || fail "the daemon's RSS grew $grow MiB"
fi
((busy > 0)) || fail "no request was refused as busy though 64 answers of ~1 MiB wait"
gone() { (($(info_field http_held_bytes) < 65536)); }
wait_for 15 gone || fail "the answers of the closed connections are still held: $(info_field http_held_bytes)"
c=$(code /api/v1/macs) || true
[[ $c == 200 ]] || fail "the monitor got $c after the non-reading clients"
proc_running "${D_PID[h1]}" || fail "the daemon died"
pass
