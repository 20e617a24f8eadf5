#!/usr/bin/env python3
"""vm_ctl.py SOCK TIMEOUT COMMAND: runs COMMAND in a test VM through the
serial port QEMU serves on Unix socket SOCK (the VM's /init, made by
tests/vm-image.sh, is the other end); prints its output and exits with
its status, or 124 when no answer came within TIMEOUT seconds."""
import os
import re
import socket
import sys
import time


def main():
    path, timeout, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    tok = "%d-%d" % (os.getpid(), time.monotonic_ns())
    deadline = time.monotonic() + timeout
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        print("vm_ctl: %s: %s" % (path, e), file=sys.stderr)
        return 124
    s.sendall(("%s %s\n" % (tok, cmd)).encode())
    buf = b""
    end = re.compile(rb"@@BEGIN " + tok.encode() + rb"\n(.*)@@END " +
                     tok.encode() + rb" (\d+)\n", re.S)
    while True:
        m = end.search(buf)
        if m:
            sys.stdout.write(m.group(1).decode(errors="replace"))
            return int(m.group(2))
        left = deadline - time.monotonic()
        if left <= 0:
            return 124
        s.settimeout(left)
        try:
            data = s.recv(65536)
        except socket.timeout:
            return 124
        if not data:
            return 124
        buf += data


if __name__ == "__main__":
    sys.exit(main())
