#!/bin/bash
# it-nat with host1's NAT box losing its bindings mid-transfer (see
# there): the direct link dies, the relay carries on, the hole is punched
# again.
NAT_FLUSH=1 exec "$(dirname "$0")/it-nat.sh" "$@"
