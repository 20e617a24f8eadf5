#!/usr/bin/env python3
"""A rogue peer for it-rogue.sh: connects to a vnetd listener and misbehaves
in every way the daemon must survive, one connection per way, and checks
that the daemon closes each connection (within a deadline).

usage: rogue.py HOST PORT CA CERT KEY [records|sigrec|macclaim MAC]
       rogue.py HOST PORT CA CERT KEY costly SECONDS
       rogue.py HOST PORT CA CERT KEY reflect NAME ADDR SECONDS NODE...
       rogue.py HOST PORT CA CERT KEY spoof SRCMAC DSTMAC SRCIP DSTIP N
       rogue.py --poison HOST PORT MAC SECONDS

With "records" it speaks the control plane instead (routing auto): over one
link it floods records, claims a thousand MACs, sends another node's
record with a huge sequence, then a malformed record; only the last may
close the link.  Its records are signed with KEY, as a node's are on a
TLS network (include/nodesig.h), so that they get as far as an insider's
can.

With "sigrec" it forges records against the signatures: it reads host2's
topology record off the database exchange, then sends it with the next
sequence number, emptied, four ways (unsigned; signed by the rogue's own
certificate; host2's certificate and signature kept; host2's certificate
with the rogue's signature), and a record of a node that does not exist
("ghost"), signed by the rogue.  Each must be refused with the link
staying up; it prints "rogue: host2 sequence N" and one line per forgery.

With "spoof" it links (TLS, as node "rogue", without the control plane)
and sends N ICMP echo requests from SRCMAC/SRCIP to DSTMAC/DSTIP, 500 a
second, each a frame under an origin of its own: frames of a flow between
two guests that the rogue's link does not carry, against the daemon's
resequencer.  It prints "rogue: spoofed N" when done.

With "macclaim MAC" it sends its own topology record (linked to the
proxy) and a MAC page claiming MAC with version 0xffffffff, signed, stays
linked for MACCLAIM_SECONDS and says goodbye; the claim must be refused
(the version is out of bounds) with the link staying up.

With "costly SECONDS" it sends its own records, valid and signed, as big
as the limits let them be (a topology record of NODE_LINKS_MAX links, one
of them to the proxy, and NODE_MAC_PAGES pages of NODE_PAGE_MACS MACs),
each round with a new sequence, as fast as the link takes them, for
SECONDS; then one last round, whose sequence it prints ("rogue: last
sequence N"), stays linked COSTLY_LINGER seconds and says goodbye.  It
prints how many rounds and bytes it sent.

With "reflect NAME ADDR SECONDS NODE..." it links as node NAME (CERT
must name it) and publishes, in its own signed topology record, ADDR (a
bystander's HOST:PORT, no vnet node) as its only candidate and address;
then, every half second for SECONDS, it sends each NODE a signed traffic
report saying its guests send 100 MB/s toward that node's, so that each
wants a shortcut to NAME and dials ADDR.

CERT/KEY are a valid node certificate of the network's CA: the rogue is an
insider, so its garbage gets past TLS to the link protocol.  Prints one line
per case and exits 1 if the daemon left any connection open too long.

--poison links (plain) as node "rogue" and waits for a frame from Ethernet
source MAC; it then sends, under that frame's origin, the next POISON_PAIRS
sequence numbers with frames of its own (to nobody), as an insider would to
make the real frames that follow look like copies.  Then it sends
BAD_OFFLOAD TCP super-frames of 60,000 bytes to guest 2 whose offload
header asks for segments of 1 byte.  It stays linked for SECONDS, then says
goodbye.
"""
import os
import select
import socket
import ssl
import struct
import sys
import threading
import time

POISON = sys.argv[1] == "--poison"
if POISON:
    HOST, PORT, MAC, SECONDS = (sys.argv[2], int(sys.argv[3]),
                                bytes.fromhex(sys.argv[4].replace(":", "")),
                                float(sys.argv[5]))
else:
    HOST, PORT, CA, CERT, KEY = sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]
HANDSHAKE_TIMEOUT = 10          # vnetd's CONN_HANDSHAKE_TIMEOUT
HELLO, FRAME, KEEPALIVE, BYE, NODE = 1, 2, 3, 4, 5
CAP_NODES = 0x0008	# node records of format 2
CAP_SIGNED = 0x0040	# signs its records
SEC_CERT, SEC_SIG = 9, 255
SIG_CONTEXT = b"vnet-node-record-v1"
SIGNER = None		# (certificate DER, private key) once loaded
POISON_PAIRS = 4000
MACCLAIM_SECONDS = 4
BAD_OFFLOAD = 10
COSTLY_LINKS = 1024     # NODE_LINKS_MAX
COSTLY_PAGES = 8        # NODE_MAC_PAGES
COSTLY_MACS = 32        # NODE_PAGE_MACS
COSTLY_LINGER = 3

failures = []
lock = threading.Lock()


def say(msg):
    with lock:
        print("rogue: " + msg, flush=True)


def hdr(mtype, length, hops=0):
    return struct.pack("!BBBBI", mtype, 0, hops, 0, length)


def hello(version=1, node=b"rogue", network=b"vnet", caps=0):
    body = b"VNET" + struct.pack("!HHH", version, caps, 10)
    body += bytes([len(node)]) + node + bytes([len(network)]) + network
    return hdr(HELLO, len(body)) + body


def frame():
    eth = bytes.fromhex("ffffffffffff020000000099") + b"\x08\x06" + bytes(28)
    return hdr(FRAME, 8 + len(eth), 16) + struct.pack("!II", 1, 1) + eth


def tls_context():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False
    ctx.load_verify_locations(CA)
    ctx.load_cert_chain(CERT, KEY)
    return ctx


def connect(tls):
    s = socket.create_connection((HOST, PORT), timeout=5)
    if tls:
        s = tls_context().wrap_socket(s)
    return s


def closed_within(s, seconds):
    """True once the peer has closed (EOF or reset) within seconds."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        s.settimeout(left)
        try:
            if not s.recv(65536):
                return True
        except socket.timeout:
            return False
        except (ConnectionError, ssl.SSLError, OSError):
            return True


def case(name, tls, payload, within=5.0, trickle=None):
    """Connects, sends payload (or trickles it), expects to be closed."""
    start = time.monotonic()
    try:
        s = connect(tls)
    except (OSError, ssl.SSLError) as e:
        with lock:
            failures.append(name)
        say("%s: cannot connect: %s" % (name, e))
        return
    try:
        if trickle is not None:
            # One byte at a time, never quite idle: a deadline must still
            # end it, an idle timer would not.
            for b in payload:
                s.sendall(bytes([b]))
                if closed_within(s, trickle):
                    break
        elif payload:
            s.sendall(payload)
        ok = closed_within(s, within)
    except (ConnectionError, ssl.SSLError, OSError):
        ok = True
    took = time.monotonic() - start
    s.close()
    if not ok:
        with lock:
            failures.append(name)
    say("%s: %s after %.1f s" % (name, "closed" if ok else "NOT CLOSED", took))


def flood(n):
    """n connections at once that say nothing: past the daemon's pending
    limit the extra ones must be closed at once."""
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection((HOST, PORT), timeout=5))
        except OSError:
            break
    time.sleep(1)       # the daemon closes the extra ones at accept
    shut = sum(1 for s in socks if closed_within(s, 0.05))
    for s in socks:
        s.close()
    say("flood: %d connections, %d closed at once" % (len(socks), shut))
    if shut == 0:
        failures.append("flood")


def recv_exactly(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed by the daemon")
        data += chunk
    return data


def bad_offload_frame(seq):
    """A 60,000-byte TCP/IPv4 super-frame to guest 2 asking for segment
    size 1 (virtio-net header: NEEDS_CSUM, TCPV4, little-endian)."""
    payload = bytes(60000)
    tcp = struct.pack("!HHIIBBHHH", 40000, 5201, 1, 1, 5 << 4, 0x10, 1000,
                      0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload),
                     1, 0x4000, 64, 6, 0, bytes([10, 77, 0, 98]),
                     bytes([10, 77, 0, 2]))
    eth = bytes.fromhex("020000000002020000000098") + b"\x08\x00"
    vh = struct.pack("<BBHHHHH", 1, 1, 14 + 20 + 20, 1, 34, 16, 0)
    msg = struct.pack("!II", 0x5eed, seq) + vh + eth + ip + tcp + payload
    return hdr(FRAME, len(msg), 16) + msg


def poison():
    s = socket.create_connection((HOST, PORT), timeout=SECONDS)
    s.sendall(hello())
    deadline = time.monotonic() + SECONDS
    forged_eth = (bytes.fromhex("020000000099020000000098") + b"\x88\xb5" +
                  b"forged" + bytes(40))
    done = False
    while time.monotonic() < deadline:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            mtype, _, _, _, length = struct.unpack("!BBBBI",
                                                   recv_exactly(s, 8))
            body = recv_exactly(s, length)
        except socket.timeout:
            break
        if mtype != FRAME or done or body[8 + 12 + 6:8 + 12 + 12] != MAC:
            continue
        origin, seq = struct.unpack("!II", body[:8])
        out = bytearray()
        for i in range(1, POISON_PAIRS + 1):
            pre = struct.pack("!II", origin, (seq + i) & 0xFFFFFFFF)
            msg = pre + bytes(12) + forged_eth
            out += hdr(FRAME, len(msg), 16) + msg
        s.sendall(out)
        say("poisoned origin %08x: sequence %d to %d" %
            (origin, seq + 1, seq + POISON_PAIRS))
        for i in range(BAD_OFFLOAD):
            s.sendall(bad_offload_frame(i))
        say("sent %d super-frames with segment size 1" % BAD_OFFLOAD)
        done = True
    s.sendall(hdr(BYE, 0))
    s.close()
    if not done:
        say("no frame from %s came" % MAC.hex(":"))
        return 1
    return 0


def load_signer():
    """The rogue's certificate and key, to sign records with (needs the
    cryptography module)."""
    global SIGNER
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    with open(CERT, "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    with open(KEY, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    SIGNER = (cert.public_bytes(serialization.Encoding.DER), key)


def sign(b, der, key):
    """Record bytes b with a certificate section (der) and a signature by
    key over the context string and all that comes before it."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    if der is not None:
        b += struct.pack("!BH", SEC_CERT, len(der)) + der
    msg = SIG_CONTEXT + b
    if isinstance(key, ec.EllipticCurvePrivateKey):
        sig = key.sign(msg, ec.ECDSA(hashes.SHA256()))
    else:
        sig = key.sign(msg)
    return b + struct.pack("!BH", SEC_SIG, len(sig)) + sig


def record(name, seq, lifetime=3, links=(), macs=None, trailing=b"",
           signed=True, version=1, page=0):
    """A node record (include/node.h, format 2) in a NODE message: the
    topology record of name, or with macs its MAC page (page); signed by
    the rogue once its key is loaded."""
    kind = 1 if macs is None else 2
    b = struct.pack("!BBHII", 2, kind, lifetime, seq >> 32, seq & 0xFFFFFFFF)
    b += bytes([len(name)]) + name + struct.pack("!H", page)
    if macs is None:
        body = b"".join(bytes([len(n)]) + n + struct.pack("!IB", 100, 0)
                        for n in links)
        b += struct.pack("!BH", 1, len(body)) + body
    else:
        body = b"".join(m + struct.pack("!I", version) for m in macs)
        b += struct.pack("!BH", 4, len(body)) + body
    if signed and SIGNER is not None:
        b = sign(b, *SIGNER)
    b += trailing
    return hdr(NODE, len(b)) + b


def sections(b):
    """A record's fixed part's length and its sections: (type, offset of
    the section's header, body)."""
    at = 13 + b[12] + 2
    out = []
    while at + 3 <= len(b):
        t, n = struct.unpack_from("!BH", b, at)
        out.append((t, at, b[at + 3:at + 3 + n]))
        at += 3 + n
    return out


def drain(s, stop, seen=None):
    """Reads (and drops) what the daemon sends, so that it never blocks.

    It waits with select, not a socket timeout: the timeout is the socket's,
    and would also cut short the writer's sendall to a daemon slow to read
    (a sanitizer build).  With seen, a dict, every NODE message's payload
    is kept in it by (origin, kind), the newest."""
    buf = b""
    while not stop.is_set():
        pending = isinstance(s, ssl.SSLSocket) and s.pending() > 0
        if not pending and not select.select([s], [], [], 0.2)[0]:
            continue
        try:
            got = s.recv(65536)
            if not got:
                return
        except ssl.SSLWantReadError:
            continue
        except (ConnectionError, ssl.SSLError, OSError):
            return
        if seen is None:
            continue
        buf += got
        while len(buf) >= 8:
            mtype, _, _, _, n = struct.unpack_from("!BBBBI", buf)
            if len(buf) < 8 + n:
                break
            p, buf = buf[8:8 + n], buf[8 + n:]
            if mtype == NODE and len(p) >= 16:
                key = (p[13:13 + p[12]], p[1])
                with lock:
                    seen[key] = p


def goodbye(s, stop, t, check=False):
    """Says goodbye and stops the drain thread t; with check, the link must
    still have been up (its drain still reading)."""
    if check:
        ok = t.is_alive()
        say("link %s" % ("still up" if ok else "CLOSED"))
        if not ok:
            failures.append("link closed")
    s.sendall(hdr(BYE, 0))
    stop.set()
    t.join()
    s.close()


def sigrec():
    """Forged records against the signature check: each refused, the link
    staying."""
    load_signer()
    der, key = SIGNER
    s = connect(True)
    s.sendall(hello(caps=CAP_NODES | CAP_SIGNED))
    stop = threading.Event()
    seen = {}
    t = threading.Thread(target=drain, args=(s, stop, seen))
    t.start()
    deadline = time.monotonic() + 15
    real = None
    while time.monotonic() < deadline and real is None:
        time.sleep(0.1)
        with lock:
            real = seen.get((b"host2", 1))
    if real is None:
        say("host2's topology record never came")
        failures.append("host2's record")
        stop.set()
        t.join()
        return
    seq = struct.unpack_from("!Q", real, 4)[0]
    say("host2 sequence %d" % seq)
    secs = sections(real)
    cert2 = [body for (ty, _, body) in secs if ty == SEC_CERT]
    if not cert2:
        say("host2's record has no certificate: not signed")
        failures.append("host2 unsigned")
    # host2's record, the next sequence, no links, no addresses.
    empty = struct.pack("!BBHQ", 2, 1, real[2] << 8 | real[3], seq + 1)
    empty += real[12:13 + real[12]] + b"\0\0" + struct.pack("!BH", 1, 0)
    forged = [
        ("unsigned", empty),
        ("signed by the rogue", sign(empty, der, key)),
    ]
    if cert2:
        sig2 = [body for (ty, _, body) in secs if ty == SEC_SIG]
        forged.append(("host2's certificate and signature",
                       empty + struct.pack("!BH", SEC_CERT, len(cert2[0])) +
                       cert2[0] + struct.pack("!BH", SEC_SIG,
                                              len(sig2[0])) + sig2[0]))
        forged.append(("host2's certificate, the rogue's signature",
                       sign(empty, cert2[0], key)))
    for name, b in forged:
        s.sendall(hdr(NODE, len(b)) + b)
        say("sent host2's record, sequence %d, empty, %s" % (seq + 1, name))
    s.sendall(record(b"ghost", int(time.time() * 1000), lifetime=60,
                     links=[b"proxy"]))
    say("sent a record of node ghost, signed by the rogue")
    time.sleep(2)
    goodbye(s, stop, t, check=True)


def records():
    load_signer()
    s = connect(True)
    s.sendall(hello(caps=CAP_NODES))
    stop = threading.Event()
    # The reader owns the socket's receive side; writes stay here.
    t = threading.Thread(target=drain, args=(s, stop))
    t.start()
    now = int(time.time() * 1000)
    own = [record(b"rogue", now, links=[b"proxy"])]

    def still_open(name):
        time.sleep(1)
        ok = t.is_alive()
        say("%s: link %s" % (name, "still up" if ok else "CLOSED"))
        if not ok:
            failures.append(name)
        return ok

    s.sendall(own[0])
    # 1. A flood of records: our own, each newer, as fast as they go; then
    #    records for 9000 nodes that do not exist.
    s.sendall(b"".join(record(b"rogue", now + i, links=[b"proxy"])
                       for i in range(1, 2001)))
    s.sendall(b"".join(record(b"fake%d" % i, now) for i in range(9000)))
    if not still_open("record flood"):
        return
    # 2. A thousand MACs.
    macs = [bytes([2, 0x99, 0, 0, i >> 8, i & 0xFF]) for i in range(1000)]
    s.sendall(record(b"rogue", now + 5000, macs=macs))
    if not still_open("a thousand MACs"):
        return
    # 3. host2's record, empty, with a huge sequence: past what the clock
    #    allows (refused), then just within it (taken, then outdone by
    #    host2 itself).
    s.sendall(record(b"host2", now + (1 << 40)))
    s.sendall(record(b"host2", now + (1 << 31)))
    if not still_open("another node's record, huge sequence"):
        return
    # 4. A malformed record: the link must close.
    s.sendall(record(b"rogue", now + 9000, trailing=b"junk", signed=False))
    t.join(5)
    ok = not t.is_alive()
    say("malformed record: %s" % ("closed" if ok else "NOT CLOSED"))
    if not ok:
        failures.append("malformed record")
    stop.set()
    t.join()
    s.close()


def icmp_echo(src_ip, dst_ip, ident, seq):
    """An IPv4 ICMP echo request, checksums right."""
    def csum(b):
        if len(b) % 2:
            b += b"\0"
        t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
        while t >> 16:
            t = (t & 0xFFFF) + (t >> 16)
        return ~t & 0xFFFF
    icmp = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + bytes(32)
    icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(icmp), seq, 0, 64, 1,
                     0, socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + icmp


def spoof():
    src_mac, dst_mac = (bytes.fromhex(m.replace(":", ""))
                        for m in sys.argv[7:9])
    src_ip, dst_ip, n = sys.argv[9], sys.argv[10], int(sys.argv[11])
    s = connect(True)
    s.sendall(hello())
    stop = threading.Event()
    t = threading.Thread(target=drain, args=(s, stop))
    t.start()
    time.sleep(0.5)		# the hello taken before the first frame
    origin = struct.unpack("!I", os.urandom(4))[0]
    t0 = time.monotonic()
    for i in range(n):
        eth = dst_mac + src_mac + b"\x08\x00" + icmp_echo(src_ip, dst_ip,
                                                         0x5a5a, i & 0xFFFF)
        msg = struct.pack("!II", origin, i + 1) + bytes(12) + eth
        s.sendall(hdr(FRAME, len(msg), 16) + msg)
        wait = t0 + (i + 1) / 500.0 - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    say("spoofed %d" % n)
    goodbye(s, stop, t)
    return 0


def macclaim(mac):
    """Another guest's MAC claimed with the highest version there is."""
    load_signer()
    s = connect(True)
    s.sendall(hello(caps=CAP_NODES | CAP_SIGNED))
    stop = threading.Event()
    t = threading.Thread(target=drain, args=(s, stop))
    t.start()
    now = int(time.time() * 1000)
    s.sendall(record(b"rogue", now, lifetime=30, links=[b"proxy"]))
    time.sleep(0.5)
    s.sendall(record(b"rogue", now + 1, lifetime=30, macs=[mac],
                     version=0xFFFFFFFF))
    say("claimed %s with version 4294967295" % mac.hex(":"))
    time.sleep(MACCLAIM_SECONDS)
    goodbye(s, stop, t, check=True)


def costly(seconds):
    """Its own records, within every limit and as big as they go, each
    round newer, as fast as they are taken."""
    load_signer()
    s = connect(True)
    s.sendall(hello(caps=CAP_NODES | CAP_SIGNED))
    stop = threading.Event()
    t = threading.Thread(target=drain, args=(s, stop))
    t.start()
    links = [b"proxy"] + [b"far%04d" % i for i in range(COSTLY_LINKS - 1)]
    pages = [[bytes([2, 0x98, 0, p, 0, i]) for i in range(COSTLY_MACS)]
             for p in range(COSTLY_PAGES)]
    seq = int(time.time() * 1000)

    def round_(seq):
        return (record(b"rogue", seq, lifetime=60, links=links) +
                b"".join(record(b"rogue", seq, lifetime=60, macs=m, page=p)
                         for p, m in enumerate(pages)))
    s.sendall(round_(seq))
    time.sleep(0.5)
    rounds = nbytes = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seq += 1
        b = round_(seq)
        s.sendall(b)
        rounds += 1
        nbytes += len(b)
    say("sent %d rounds of %d records, %d bytes in %.0f s" %
        (rounds, 1 + COSTLY_PAGES, nbytes, seconds))
    seq += 1
    s.sendall(round_(seq))
    say("last sequence %d" % seq)
    time.sleep(COSTLY_LINGER)
    goodbye(s, stop, t, check=True)


def reflect(name, addr, seconds, nodes):
    """A record naming a bystander's address as its own, and traffic
    claimed toward each node, so that they dial it."""
    load_signer()
    s = connect(True)
    s.sendall(hello(node=name, caps=CAP_NODES | CAP_SIGNED))
    stop = threading.Event()
    t = threading.Thread(target=drain, args=(s, stop))
    t.start()
    seq = int(time.time() * 1000)
    b = struct.pack("!BBHII", 2, 1, 60, seq >> 32, seq & 0xFFFFFFFF)
    b += bytes([len(name)]) + name + struct.pack("!H", 0)
    links = bytes([5]) + b"proxy" + struct.pack("!IB", 100, 0)
    item = bytes([1, len(addr)]) + addr
    for ty, body in ((1, links), (2, item), (8, item)):
        b += struct.pack("!BH", ty, len(body)) + body
    b = sign(b, *SIGNER)
    s.sendall(hdr(NODE, len(b)) + b)
    reports = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for node in nodes:
            seq += 1
            # Signed with hops 0 (nodesig.h), sent with 8.
            r = struct.pack("!BBHII", 2, 3, 0, seq >> 32, seq & 0xFFFFFFFF)
            r += bytes([len(name)]) + name + struct.pack("!H", 0)
            to = bytes([len(node)]) + node
            row = to + struct.pack("!QQII", 10 ** 9, 10 ** 6, 10 ** 8, 10 ** 8)
            r += struct.pack("!BH", 5, len(to)) + to
            r += struct.pack("!BH", 7, len(row)) + row
            r = bytearray(sign(r, *SIGNER))
            r[2:4] = struct.pack("!H", 8)
            s.sendall(hdr(NODE, len(r)) + bytes(r))
            reports += 1
        time.sleep(0.5)
    say("%s: published %s, %d traffic reports" % (name.decode(),
                                                  addr.decode(), reports))
    goodbye(s, stop, t, check=True)


def main():
    if len(sys.argv) > 9 and sys.argv[6] == "reflect":
        reflect(sys.argv[7].encode(), sys.argv[8].encode(),
                float(sys.argv[9]), [n.encode() for n in sys.argv[10:]])
        if failures:
            say("failed: " + ", ".join(failures))
            return 1
        return 0
    if len(sys.argv) > 7 and sys.argv[6] == "costly":
        costly(float(sys.argv[7]))
        if failures:
            say("failed: " + ", ".join(failures))
            return 1
        return 0
    if len(sys.argv) > 6 and sys.argv[6] == "spoof":
        return spoof()
    if len(sys.argv) > 7 and sys.argv[6] == "macclaim":
        macclaim(bytes.fromhex(sys.argv[7].replace(":", "")))
        if failures:
            say("failed: " + ", ".join(failures))
            return 1
        return 0
    if len(sys.argv) > 6 and sys.argv[6] in ("records", "sigrec"):
        records() if sys.argv[6] == "records" else sigrec()
        if failures:
            say("failed: " + ", ".join(failures))
            return 1
        return 0
    case("plain garbage to the TLS port", False, os.urandom(300))
    case("garbage", True, b"\xff" * 64)
    case("oversized hello length", True, hdr(HELLO, 0x7FFFFFFF))
    case("oversized frame length", True, hdr(FRAME, 1 << 30))
    case("wrong protocol version", True, hello(version=99))
    case("frame before hello", True, frame())
    flood(80)
    # The slow ones together: each must end at the handshake deadline.
    slow = [
        threading.Thread(target=case, args=("silent TCP", False, b"",
                                            HANDSHAKE_TIMEOUT + 4)),
        threading.Thread(target=case, args=("silent after TLS", True, b"",
                                            HANDSHAKE_TIMEOUT + 4)),
        threading.Thread(target=case, args=("trickled hello", True, hello(),
                                            HANDSHAKE_TIMEOUT + 4, 1.0)),
    ]
    for t in slow:
        t.start()
    for t in slow:
        t.join()
    if failures:
        say("left open: " + ", ".join(failures))
        return 1
    return 0


sys.exit(poison() if POISON else main())
