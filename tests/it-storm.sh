#!/bin/bash
#
# A broadcast storm from guest 1 at about twice the rate of a 10 Mbit/s
# link fills that link's queue, while guest 1 pings guest 2 across the same
# link.  The queue (fq_codel, the default) makes room by dropping from the
# fattest flow, the storm's, so the ping loses (almost) nothing and is not
# delayed behind the storm; the link counts the storm's drops as fat_drops.
# The bounds are loose (a shared 2-core machine stalls now and then): what
# they catch is a full queue dropping whatever arrives, which loses pings
# by the dozen.
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
command -v python3 >/dev/null || skip "python3 is missing (the storm)"

node_add h1 1
node_add h2 2
vnetd_start h2 "node h2
listen $(addr h2):$PORT allow $UNDERLAY
interface guest tap vtap0
route $(guest_mac 2) any link h1
route not-$(guest_mac 2) any interface guest"
vnetd_start h1 "node h1
interface guest tap vtap0
link h2 $(addr h2):$PORT rate 10mbit
route $(guest_mac 1) any link h2
route not-$(guest_mac 1) any interface guest"
guest_add g1 h1 vtap0 1
guest_add g2 h2 vtap0 2
wait_link_up h1 h2
IP2=$(guest_ip 2)
wait_for 15 gping g1 "$IP2" || fail "guest 1 cannot ping guest 2"
quiet=$(in_guest g1 ping -n -i 0.05 -c 20 -W 1 "$IP2" | awk -F/ '/^rtt/ { print $5 }') || true
say "ping without the storm: average RTT ${quiet:-?} ms"

# The storm: 300-byte broadcast frames of guest 1's, 8,000 a second (twice
# what 10 Mbit/s carries), for SECONDS_STORM: few enough frames that the
# daemon keeps up on a busy machine (the link, not its CPU, is the
# bottleneck), small enough that the queue fills by its frame count first
# (4 MiB / 512 = 8192 frames), as a storm of small frames does.
SECONDS_STORM=12
storm() {
	in_guest g1 python3 - "$SECONDS_STORM" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("vtap0", 0))
frame = bytes.fromhex("ffffffffffff020000000001") + b"\x88\xb5" + bytes(286)
end = time.monotonic() + float(sys.argv[1])
sent, t = 0, time.monotonic()
while t < end:
    for _ in range(8):
        try:
            s.send(frame)
            sent += 1
        except OSError:        # the TAP's queue is full: the daemon lags
            pass
    t += 0.001
    pause = t - time.monotonic()
    if pause > 0:
        time.sleep(pause)
print("storm: %d frames" % sent)
PY
}
storm >"$TMPD/storm.out" 2>&1 &
STORM_PID=$!
EXTRA_PIDS+=("$STORM_PID")
# shellcheck disable=SC2317 # called through wait_for
full() { (($(link_field h1 h2 fat_drops) + $(link_field h1 h2 tail_drops) > 0)); }
wait_for 10 full || fail "the storm never filled the link's queue"

say "guest 1 pings guest 2 (every 50 ms, 8 s) through the storm"
in_guest g1 ping -n -i 0.05 -c 160 -W 1 "$IP2" >"$TMPD/ping.out" 2>&1 || true
wait "$STORM_PID" || fail "the storm failed: $(cat "$TMPD/storm.out")"
cat "$TMPD/storm.out"
read -r sent got < <(awk '/packets transmitted/ { print $1, $4 }' "$TMPD/ping.out")
avg=$(awk -F/ '/^rtt/ { print $5 }' "$TMPD/ping.out")
[[ -n $sent && -n $got ]] || fail "no ping statistics: $(tail -n 3 "$TMPD/ping.out")"
say "ping: $got of $sent replies, average RTT ${avg:-?} ms; link h1 -> h2:" \
	"fat_drops $(link_field h1 h2 fat_drops) tail_drops $(link_field h1 h2 tail_drops)" \
	"aqm_drops $(link_field h1 h2 aqm_drops)"
((got * 100 >= sent * 95)) || fail "ping lost $((sent - got)) of $sent in the storm"
if [[ -z $avg ]] || ! awk -v a="$avg" 'BEGIN { exit !(a < 50) }'; then
	fail "the ping's average RTT in the storm is ${avg:-?} ms"
fi
(($(link_field h1 h2 fat_drops) > 1000)) || fail "the storm's frames were not dropped from its own flow"
pass
