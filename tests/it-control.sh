#!/bin/bash
#
# The control socket against clients that misbehave: one that pipelines
# `show routes` (10,000 routes) and never reads holds about one reply of
# the daemon's memory, not all it asked for, while vnetctl still answers
# at once; a request over the size limit gets %error and the connection is
# closed; a request with a NUL byte is refused, not executed truncated;
# idle clients of control-group are capped (the last slot is root's) and
# time out, so that they cannot take the daemon's descriptors.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
command -v prlimit >/dev/null || skip "prlimit (util-linux) is missing"
getent passwd daemon >/dev/null || skip "no user daemon"
getent group nogroup >/dev/null || skip "no group nogroup"
# The system's python3: one in root's home is not for user daemon.
SYSTEM_PY=$(PATH=/usr/local/bin:/usr/bin:/bin command -v python3) ||
	skip "no python3 for other users"

CONN_MAX=32		# CONTROL_CONN_MAX
IDLE=30			# CONTROL_IDLE_TIMEOUT, s

# The socket is for root and group nogroup; user daemon joins that group.
chmod 711 "$TMPD"
node_add c 1
{
	printf 'node c\ncontrol-group nogroup\n'
	for ((i = 0; i < 10000; i++)); do
		printf 'route any 02:00:00:%02x:%02x:%02x link peer%d\n' \
			$((i >> 16)) $(((i >> 8) & 255)) $((i & 255)) $((i % 4))
	done
} >"$TMPD/c.conf"
vnetd_start_file c "$TMPD/c.conf"
# Few descriptors, so that clients with no cap would take them all.
prlimit --pid "${D_PID[c]}" --nofile=64:64 || fail "prlimit failed"
PID=${D_PID[c]}
SOCK=${D_SOCK[c]}
(($(stat_value c routes) == 10000)) || fail "the daemon has $(stat_value c routes) routes, not 10000"

cat >"$TMPD/client.py" <<'PY'
import os, select, socket, sys, time
sock, what = sys.argv[1], sys.argv[2]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    return s
def reply(s, timeout=5):
    """Everything until EOF (or the timeout): (bytes, closed)."""
    s.settimeout(timeout)
    got = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return got, True
            got += b
    except socket.timeout:
        return got, False
    except ConnectionResetError:    # closed with some of our request unread
        return got, True
if what == "pipeline":
    # show routes, pipelined for 5 s, never a byte read; then hold on.
    s = conn()
    s.setblocking(False)
    n, end = 0, time.time() + 5
    while time.time() < end:
        select.select([], [s], [], 0.1)
        try:
            n += s.send(b"show routes\n" * 100)
        except BlockingIOError:
            pass
    print(n // 12, flush=True)
    time.sleep(600)
elif what == "long":
    for tail in (b"", b"\n"):
        s = conn()
        s.sendall(b"show " + b"x" * 5000 + tail)
        got, closed = reply(s)
        print(repr(got), "closed" if closed else "open")
elif what == "nul":
    s = conn()
    s.sendall(sys.argv[3].encode().replace(b"|", b"\0") + b"\n")
    got, closed = reply(s, 2)
    print(got.decode(errors="replace").strip())
elif what == "idle":
    # n connections that say nothing; prints how many were refused, then
    # waits for the daemon to close the others.
    held, refused = [], 0
    for _ in range(int(sys.argv[3])):
        held.append(conn())
    for s in held:
        got, closed = reply(s, 0.5)
        refused += got == b"%error too many control connections\n" and closed
    print(refused, flush=True)
    end = time.time() + 120
    for s in held:
        got, closed = reply(s, max(0.1, end - time.time()))
PY

rss_kb() { awk '/^VmRSS:/ { print $2 }' /proc/"$PID"/status; }
# answers_fast: vnetctl gets show stats within 2 s.
answers_fast() { timeout 2 "$VNETCTL" -s "$SOCK" show stats >/dev/null; }

say "a client pipelines show routes and never reads"
rss0=$(rss_kb)
python3 "$TMPD/client.py" "$SOCK" pipeline >"$TMPD/pipeline.out" &
PIPELINER=$!
EXTRA_PIDS+=("$PIPELINER")
wait_for 15 test -s "$TMPD/pipeline.out" || fail "the pipelining client did not finish sending"
rss1=$(rss_kb)
reqs=$(cat "$TMPD/pipeline.out")
say "it sent $reqs requests; the daemon's RSS went from $rss0 to $rss1 KiB"
((reqs >= 100)) || fail "the client sent only $reqs requests: the test proves nothing"
((rss1 - rss0 < 32768)) || fail "the daemon grew by $(((rss1 - rss0) / 1024)) MiB for a client that does not read"
answers_fast || fail "vnetctl does not answer within 2 s beside the pipelining client"

kill "$PIPELINER"
wait "$PIPELINER" 2>/dev/null || true
# Itself the one client left: the vnetctl that asks.
# shellcheck disable=SC2317 # called through wait_for
one_client() { (($(stat_value c control_clients) == 1)); }
wait_for 5 one_client || fail "the pipelining client is still connected after it left"

say "a request over the size limit"
out=$(python3 "$TMPD/client.py" "$SOCK" long)
say "$out"
[[ $out == "b'%error request too long\\n' closed
b'%error request too long\\n' closed" ]] || fail "over-size requests: $out"

say "a request with a NUL byte"
out=$(python3 "$TMPD/client.py" "$SOCK" nul "add-route any 02:00:00:ff:ff:ff link peer0|junk")
[[ $out == "%error request contains a NUL byte" ]] || fail "NUL request answered: $out"
! vctl c show routes | grep -q 02:00:00:ff:ff:ff || fail "the request before the NUL byte was executed"
(($(stat_value c routes) == 10000)) || fail "the routes changed"

say "idle clients of control-group: 60 connections"
refused0=$(stat_value c control_refused)
setpriv --reuid=daemon --regid=nogroup --clear-groups \
	"$SYSTEM_PY" "$TMPD/client.py" "$SOCK" idle 60 >"$TMPD/idle.out" &
EXTRA_PIDS+=("$!")
wait_for 20 test -s "$TMPD/idle.out" || fail "the idle clients did not connect"
refused=$(cat "$TMPD/idle.out")
clients=$(stat_value c control_clients)
say "refused $refused of them; the daemon has $clients control clients"
# All but the last slot, which is root's.
((refused == 60 - (CONN_MAX - 1))) || fail "$refused idle clients were refused, not $((60 - (CONN_MAX - 1)))"
(($(stat_value c control_refused) - refused0 == refused)) || fail "control_refused does not count them"
answers_fast || fail "vnetctl as root does not answer beside $clients idle clients"
grep -q "control: connection of uid 1 refused" "${D_LOG[c]}" || fail "no log line for the refusals"

say "they time out after $IDLE s"
wait_for $((IDLE + 15)) one_client || fail "idle clients are still connected: $(stat_value c control_clients)"
stat_at_least c control_timeouts $((CONN_MAX - 1)) || fail "control_timeouts: $(stat_value c control_timeouts)"
answers_fast || fail "vnetctl does not answer after the timeouts"
pass
