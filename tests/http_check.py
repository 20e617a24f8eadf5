#!/usr/bin/env python3
"""Checks for the status server (tests/it-http.sh).

  same FILE_A FILE_B      two JSON show replies agree (same rows, keys and
                          text fields; counters may have moved)
  metrics FILE            the Prometheus text format, checked line by line
  slow HOST PORT MAXSECS  sends a request one byte a second: the server must
                          close before MAXSECS
  many HOST PORT N        holds N connections open at once, then closes them;
                          prints how many connected
  big HOST PORT           a request with 64 KiB of headers: not answered 200
  garbage HOST PORT       random bytes: not answered 200
  flood HOST PORT SECS    opens connections as fast as it can for SECS,
                          each closed once the server shuts it; prints how
                          many were opened
  noread HOST PORT N PATH SECS [local]
                          N connections, each asks for PATH and never
                          reads, for SECS; local: from 127.0.0.1 up to
                          127.0.0.N (one address each)
  page FILE HEADERS       a paged answer: prints its rows and the counts
                          of its headers (X-Total-Count, X-Offset, X-Count)
"""
import json
import os
import re
import socket
import sys
import time


def fail(msg):
    print("http_check: " + msg, file=sys.stderr)
    sys.exit(1)


MOVING = ("age", "since", "idle", "rate_in", "rate_out", "last_error_ago",
          "next_attempt", "congestion")


def same(a, b):
    with open(a) as f:
        x = json.load(f)
    with open(b) as f:
        y = json.load(f)
    if isinstance(x, dict) and isinstance(y, dict):
        # A table of names and values (show stats, show link NAME).
        if sorted(x) != sorted(y):
            fail("keys %s != %s" % (sorted(x), sorted(y)))
        for k in x:
            if isinstance(x[k], str) and x[k] != y[k] and k not in MOVING:
                fail("%s: %r != %r" % (k, x[k], y[k]))
        print("%d fields agree" % len(x))
        return
    if not isinstance(x, list) or not isinstance(y, list):
        fail("not arrays")
    if len(x) != len(y):
        fail("%d rows against %d" % (len(x), len(y)))
    for i, (r, s) in enumerate(zip(x, y)):
        if isinstance(r, str) or isinstance(s, str):
            if r != s:
                fail("row %d: %r != %r" % (i, r, s))
            continue
        if sorted(r) != sorted(s):
            fail("row %d: keys %s != %s" % (i, sorted(r), sorted(s)))
        # A name/value row (show link NAME) is the field its name says.
        field = r["name"] if sorted(r) == ["name", "value"] else None
        for k in r:
            # times and rates move between the two reads
            if isinstance(r[k], str) and r[k] != s[k] and \
                    (field or k) not in MOVING:
                fail("row %d: %s: %r != %r" % (i, field or k, r[k], s[k]))
    print("%d rows agree" % len(x))


NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(\{%s(?:,%s)*\})? (-?[0-9.e+]+|NaN|[+-]Inf)$" %
                    (NAME, LABEL, LABEL))


def metrics(path):
    types, helps, seen, n = {}, set(), set(), 0
    with open(path) as f:
        text = f.read()
    if not text.endswith("\n"):
        fail("no final newline")
    for ln, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            if not re.fullmatch(NAME, name) or name in helps:
                fail("line %d: bad or repeated HELP" % ln)
            helps.add(name)
        elif line.startswith("# TYPE "):
            p = line.split(" ")
            if len(p) != 4 or p[3] not in ("counter", "gauge") or \
                    p[2] in types:
                fail("line %d: bad TYPE" % ln)
            if p[3] == "counter" and not p[2].endswith("_total"):
                fail("line %d: a counter not named _total" % ln)
            types[p[2]] = p[3]
        elif line.startswith("#") or line == "":
            fail("line %d: unexpected %r" % (ln, line))
        else:
            m = SAMPLE.match(line)
            if not m:
                fail("line %d: not a sample: %r" % (ln, line))
            if m.group(1) not in types or m.group(1) not in helps:
                fail("line %d: %s has no TYPE or HELP" % (ln, m.group(1)))
            if line.rsplit(" ", 1)[0] in seen:
                fail("line %d: repeated series" % ln)
            seen.add(line.rsplit(" ", 1)[0])
            n += 1
    print("%d samples of %d metrics" % (n, len(types)))


def connect(host, port):
    return socket.create_connection((host, int(port)), timeout=5)


def status(s):
    """The status code of the reply, 0 if the server closed without one."""
    data = b""
    s.settimeout(15)
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    m = re.match(rb"HTTP/1\.[01] ([0-9]{3})", data)
    return int(m.group(1)) if m else 0


def slow(host, port, maxsecs):
    s = connect(host, port)
    req = b"GET /api/v1/links HTTP/1.1\r\nHost: x\r\n\r\n"
    t0 = time.monotonic()
    s.settimeout(1)
    for c in req:
        try:
            s.send(bytes([c]))
        except OSError:
            break
        try:
            if s.recv(4096) == b"":
                break
        except socket.timeout:
            pass
        except OSError:
            break
        if time.monotonic() - t0 > float(maxsecs):
            fail("still open after %ss" % maxsecs)
    took = time.monotonic() - t0
    if took > float(maxsecs):
        fail("closed after %.1fs, not within %ss" % (took, maxsecs))
    print("closed after %.1fs" % took)


def many(host, port, n):
    socks = []
    for _ in range(int(n)):
        try:
            socks.append(connect(host, port))
        except OSError:
            break
    time.sleep(2)
    shut = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                shut += 1
        except BlockingIOError:
            pass
        except OSError:
            shut += 1
    print("%d connected, %d shut by the server" % (len(socks), shut))
    sys.stdout.flush()
    for s in socks:
        s.close()


def refused(host, port, n):
    """From an address not on the allow list: every connection is shut,
    none is answered, however many there are."""
    socks = []
    for _ in range(int(n)):
        try:
            socks.append(connect(host, port))
        except OSError:
            break
    answered = 0
    s = connect(host, port)
    try:
        s.sendall(b"GET /api/v1/links HTTP/1.1\r\nHost: x\r\n\r\n")
    except OSError:
        pass
    if status(s) != 0:
        answered += 1
    s.close()
    deadline = time.time() + 5
    shut = set()
    while len(shut) < len(socks) and time.time() < deadline:
        for i, c in enumerate(socks):
            if i in shut:
                continue
            c.setblocking(False)
            try:
                if c.recv(1) == b"":
                    shut.add(i)
                else:
                    answered += 1
                    shut.add(i)
            except BlockingIOError:
                pass
            except OSError:
                shut.add(i)
        time.sleep(0.05)
    print("%d connected, %d shut by the server, %d answered"
          % (len(socks), len(shut), answered))
    for c in socks:
        c.close()
    if answered or len(shut) != len(socks) or not socks:
        sys.exit(1)


def big(host, port):
    s = connect(host, port)
    try:
        s.sendall(b"GET /api/v1/links HTTP/1.1\r\nHost: x\r\n" +
                  b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000)
                           for i in range(64)) + b"\r\n")
    except OSError:
        pass
    code = status(s)
    if code == 200:
        fail("64 KiB of headers answered 200")
    print("oversized headers: %s" % (code or "closed"))


def garbage(host, port):
    s = connect(host, port)
    try:
        s.sendall(os.urandom(4096).replace(b"\n", b"x") + b"\r\n\r\n")
    except OSError:
        pass
    code = status(s)
    if code == 200:
        fail("garbage answered 200")
    print("garbage: %s" % (code or "closed"))


def flood(host, port, secs):
    end = time.monotonic() + float(secs)
    n, open_ = 0, []
    while time.monotonic() < end:
        try:
            s = socket.create_connection((host, int(port)), timeout=1)
            s.setblocking(False)
            open_.append(s)
            n += 1
        except OSError:
            time.sleep(0.01)
        # Closed by the server: let it go, keep the rest.
        keep = []
        for s in open_:
            try:
                if s.recv(1) == b"":
                    s.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                continue
            keep.append(s)
        open_ = keep[-200:]
        for s in keep[:-200]:
            s.close()
    print("%d connections opened" % n)


def noread(host, port, n, path, secs, spread=""):
    socks = []
    local = spread == "local"
    for i in range(int(n)):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        if local:
            s.bind(("127.0.0.%d" % (i + 1), 0))
        s.settimeout(5)
        try:
            s.connect((host, int(port)))
            s.sendall(b"GET " + path.encode() +
                      b" HTTP/1.1\r\nHost: x\r\n\r\n")
        except OSError:
            pass
        socks.append(s)
    print("%d connections asking, not reading" % len(socks))
    sys.stdout.flush()
    time.sleep(float(secs))
    for s in socks:
        s.close()


def page(path, headers):
    with open(path) as f:
        rows = json.load(f)
    h = {}
    with open(headers) as f:
        for line in f:
            if ":" in line:
                k, v = line.split(":", 1)
                h[k.strip().lower()] = v.strip()
    print(len(rows), h.get("x-total-count", "-"), h.get("x-offset", "-"),
          h.get("x-count", "-"))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"same": same, "metrics": metrics, "slow": slow, "many": many,
     "big": big, "garbage": garbage, "refused": refused,
     "flood": flood, "noread": noread, "page": page}[cmd](*args)


if __name__ == "__main__":
    main()
