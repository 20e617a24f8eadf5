#!/usr/bin/env python3
"""Bulk data with a known digest, for the integration tests.

    bulk.py serve ADDR PORT       accept one connection, read it to the end,
                                  print "BYTES SHA256"
    bulk.py send ADDR PORT BYTES SEED
                                  send BYTES of pseudo-random data made from
                                  SEED, print "BYTES SHA256"

The two lines must be equal: every byte arrived, in order, unchanged.
"""
import hashlib
import random
import socket
import sys

CHUNK = 1 << 16


def serve(addr, port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    print("listening", flush=True)
    s, _ = ls.accept()
    s.settimeout(60)
    h = hashlib.sha256()
    n = 0
    while True:
        b = s.recv(CHUNK)
        if not b:
            break
        h.update(b)
        n += len(b)
    s.close()
    print(n, h.hexdigest(), flush=True)


def send(addr, port, total, seed):
    rng = random.Random(seed)
    s = socket.create_connection((addr, port), timeout=60)
    h = hashlib.sha256()
    n = 0
    while n < total:
        b = rng.randbytes(min(CHUNK, total - n))
        s.sendall(b)
        h.update(b)
        n += len(b)
    s.shutdown(socket.SHUT_WR)
    # The far side closes once it has read everything.
    while s.recv(CHUNK):
        pass
    s.close()
    print(n, h.hexdigest(), flush=True)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 6 and sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
