#!/bin/bash
#
# vnetd under systemd: with standard error on the journal ($JOURNAL_STREAM
# names it) each line carries its priority and no time of its own; with
# $NOTIFY_SOCKET it says READY=1 once its control socket answers, and
# STOPPING=1; the units are Type=notify and score "OK" or better in
# `systemd-analyze security`; and within the units' capability bounding
# set, with no new privileges, TAP, pcap and the drop to `user` still
# work (a guest behind the TAP pings a host on the captured device).
#
# shellcheck source=tests/lib.sh
. "${TESTLIB:-$(dirname "$0")/lib.sh}"
require_root
require_binaries
UNIT_DIR=$(dirname "$VNETD")/../conf
for u in vnetd.service vnetd@.service; do
	[[ -f $UNIT_DIR/$u ]] || fail "no $u in $UNIT_DIR (make builds it)"
	grep -qx 'Type=notify' "$UNIT_DIR/$u" || fail "$u is not Type=notify"
done

if command -v systemd-analyze >/dev/null; then
	say "systemd-analyze security"
	for u in vnetd.service vnetd@.service; do
		level=$(systemd-analyze security --offline=true "$UNIT_DIR/$u" 2>&1 |
			sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p')
		say "$u: $level"
		case ${level#* } in
		PERFECT | SAFE | OK) ;;
		*) fail "$u scores '$level' in systemd-analyze security, not OK or better" ;;
		esac
	done
else
	say "no systemd-analyze here: the units' score is not checked"
fi

say "journal priorities and readiness"
node_add j 1
CONF=$TMPD/j.conf
# The link, never up, logs its attempts at debug level.
printf 'node j\nnetwork sd\nlisten %s:%d\nlink x 10.66.0.9:%d\n' "$(addr j)" "$PORT" "$PORT" >"$CONF"
NOTIFY=$TMPD/notify.sock
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
with open(sys.argv[2], "w") as out:
    for i in range(2):
        out.write(s.recv(4096).decode() + "\n----\n")
        out.flush()
' "$NOTIFY" "$TMPD/notified" &
EXTRA_PIDS+=("$!")
wait_for 10 test -S "$NOTIFY" || fail "the notify listener did not start"
LOG=$TMPD/journal.log
: >"$LOG"
JS=$(stat -c '%d:%i' "$LOG")
NOTIFY_SOCKET=$NOTIFY JOURNAL_STREAM=$JS ip netns exec "$(ns j)" "$VNETD" -F -v -f "$CONF" \
	-s "$TMPD/j.sock" 2>>"$LOG" &
jpid=$!
EXTRA_PIDS+=("$jpid")
wait_for 10 grep -q READY=1 "$TMPD/notified" || fail "vnetd did not notify READY=1: $(cat "$LOG")"
"$VNETCTL" -s "$TMPD/j.sock" show stats >/dev/null ||
	fail "READY=1 came before the control socket answered"
grep -q 'STATUS=node j in network sd' "$TMPD/notified" || fail "no STATUS with READY=1: $(cat "$TMPD/notified")"
kill -TERM "$jpid"
wait_for 10 proc_gone "$jpid" || fail "vnetd did not stop"
wait_for 10 grep -q STOPPING=1 "$TMPD/notified" || fail "vnetd did not notify STOPPING=1"
grep -q '^<4>'"$CONF"':3: warning: listen' "$LOG" || fail "the warning has no <4>: $(cat "$LOG")"
grep -q '^<6>node j in network sd running' "$LOG" || fail "the start has no <6>: $(cat "$LOG")"
grep -q '^<7>' "$LOG" || fail "no debug line with <7> under -v: $(cat "$LOG")"
bad=$(grep -v '^<[0-7]>' "$LOG" || true)
[[ -z $bad ]] || fail "lines without a priority: $bad"
grep -qE '^<[0-7]>[0-9]{2}:[0-9]{2}:' "$LOG" && fail "lines carry a time of their own: $(head -n 3 "$LOG")"
say "without the journal, -F lines keep their time"
: >"$TMPD/plain.log"
JOURNAL_STREAM=$JS ip netns exec "$(ns j)" "$VNETD" -F -f "$CONF" -s "$TMPD/j2.sock" 2>>"$TMPD/plain.log" &
jpid=$!
EXTRA_PIDS+=("$jpid")
wait_for 10 "$VNETCTL" -s "$TMPD/j2.sock" show stats || fail "vnetd did not start"
kill -TERM "$jpid"
wait_for 10 proc_gone "$jpid" || fail "vnetd did not stop"
grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} vnetd: node j' "$TMPD/plain.log" ||
	fail "with JOURNAL_STREAM naming another file, lines lost their time: $(cat "$TMPD/plain.log")"

say "the units' capability bounding set: TAP, pcap and user still work"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT_DIR/vnetd.service" | tr 'A-Z' 'a-z' |
	sed 's/cap_/+/g; s/ /,/g')
[[ -n $caps ]] || fail "vnetd.service has no CapabilityBoundingSet"
WRAP=$TMPD/vnetd-bounded
printf '#!/bin/sh\nexec setpriv --bounding-set=-all,%s --inh-caps=-all --no-new-privs -- %q "$@"\n' \
	"$caps" "$VNETD" >"$WRAP"
chmod +x "$WRAP"
node_add b 2
mkns lanhost
ip -n "$(ns b)" link add lan0 type veth peer name eth0 netns "$(ns lanhost)"
ip -n "$(ns b)" link set lan0 up
ip -n "$(ns lanhost)" addr add "$(guest_ip 2)/24" dev eth0
ip -n "$(ns lanhost)" link set eth0 address "$(guest_mac 2)" up
# Without CAP_DAC_OVERRIDE root makes the socket only where the mode lets
# it, and nobody removes it at the end only where the mode lets it.
chmod 711 "$TMPD"
RUN=$TMPD/run
mkdir -m 777 "$RUN"
printf 'node b\nnetwork sd\nuser nobody\nlearn yes\ninterface guest tap vtap0\ninterface lan pcap lan0\n' >"$TMPD/b.conf"
VNETD=$WRAP vnetd_start_file b "$TMPD/b.conf" "$RUN/b.sock"
guest_add g1 b vtap0 1
bpid=${D_PID[b]}
grep -q "^Uid:[[:space:]]*$(id -u nobody)[[:space:]]" "/proc/$bpid/status" ||
	fail "vnetd did not drop to nobody: $(grep Uid "/proc/$bpid/status")"
wait_for 10 gping g1 "$(guest_ip 2)" ||
	fail "no ping from the TAP guest to the captured LAN: $(vctl b show interfaces)"
pass
