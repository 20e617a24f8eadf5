#!/usr/bin/env python3
"""Speaks QEMU's stream netdev protocol for the tests, as QEMU does with
-netdev stream,server=off,addr.type=unix,addr.path=PATH: connects to PATH
and relays frames between it (each a 4-byte big-endian length and the
frame) and a TAP device it makes in the namespace it runs in.

  qemu_stream.py relay PATH DEV   relay until either side closes
  qemu_stream.py send PATH HEX    connect, send HEX raw, wait for the close
"""
import fcntl
import os
import select
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000


def tap(dev):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", dev.encode(), IFF_TAP | IFF_NO_PI))
    return fd


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    for _ in range(100):
        try:
            s.connect(path)
            return s
        except OSError:
            time.sleep(0.1)
    sys.exit("cannot connect to " + path)


def relay(path, dev):
    fd = tap(dev)
    s = connect(path)
    print("connected", flush=True)
    buf = b""
    while True:
        r, _, _ = select.select([fd, s], [], [])
        if fd in r:
            frame = os.read(fd, 65536)
            s.sendall(struct.pack(">I", len(frame)) + frame)
        if s in r:
            data = s.recv(262144)
            if not data:
                return
            buf += data
            while len(buf) >= 4:
                n = struct.unpack(">I", buf[:4])[0]
                if len(buf) < 4 + n:
                    break
                try:
                    os.write(fd, buf[4:4 + n])
                except OSError:
                    pass
                buf = buf[4 + n:]


def send(path, raw):
    s = connect(path)
    s.settimeout(5)
    try:
        s.sendall(bytes.fromhex(raw))
        while s.recv(65536):
            pass
    except (BrokenPipeError, ConnectionResetError):
        pass
    except socket.timeout:
        sys.exit("the connection stayed open")
    print("closed")


if __name__ == "__main__":
    if sys.argv[1] == "relay":
        relay(sys.argv[2], sys.argv[3])
    else:
        send(sys.argv[2], sys.argv[3])
