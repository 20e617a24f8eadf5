#!/bin/bash
#
# Every fuzz target's seed corpus through the target once, in an ordinary
# (or ASan/UBSan) build: the targets are linked with fuzz/replay.c there.
# Fails if a target is missing, has no corpus, or any input crashes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${VNETD%/src/vnetd}
[[ -n $build && -d $build/fuzz ]] || build=$top
for t in wire stmt eth pkt node config qemu http dgram join; do
	prog=$build/fuzz/replay_$t
	[[ -x $prog ]] || { echo "no $prog"; exit 1; }
	[[ -d $top/fuzz/corpus/$t ]] || { echo "no corpus for $t"; exit 1; }
	"$prog" "$top/fuzz/corpus/$t"
done
