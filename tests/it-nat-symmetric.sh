#!/bin/bash
# it-nat with host2 behind a symmetric NAT (see there): the relay keeps
# the traffic, nothing lost.
NAT_SYMMETRIC=1 exec "$(dirname "$0")/it-nat.sh" "$@"
