#!/bin/bash
#
# The layers (doc/architecture.md): no include cycle among the
# project's files (#include "..." lines in src/ and include/, a module
# being a file name without its extension), and no port or lower module
# includes daemon.h.  Prints the cycles it finds.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
python3 - "$top" <<'PY'
import os, re, sys
top = sys.argv[1]
edges = {}
for d in ("src", "include"):
    for f in sorted(os.listdir(os.path.join(top, d))):
        if not f.endswith((".c", ".h")):
            continue
        m = f.rsplit(".", 1)[0]
        for line in open(os.path.join(top, d, f), errors="replace"):
            r = re.match(r'\s*#\s*include\s+"([^"]+)\.h"', line)
            if r and r.group(1) != m:
                edges.setdefault(m, set()).add(os.path.basename(r.group(1)))
# Strongly connected components (Tarjan): any with two or more is a cycle.
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1
    stack.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        if len(c) > 1:
            sccs.append(sorted(c))
sys.setrecursionlimit(10000)
for v in sorted(edges):
    if v not in index:
        visit(v)
bad = 0
for c in sccs:
    print("include cycle:", " ".join(c)); bad = 1
above = {"vnetd", "daemon", "control", "reload", "http", "history", "routing_daemon"}
for m in sorted(edges):
    if m not in above and "daemon" in edges[m]:
        print("%s includes daemon.h: only the daemon and the layers above it may" % m)
        bad = 1
print("%d modules, %d include edges, %s" % (len(edges),
      sum(len(e) for e in edges.values()), "layers broken" if bad else "no cycle"))
sys.exit(bad)
PY
