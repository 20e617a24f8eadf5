/*
 * Node records: what one daemon tells the others in the control plane
 * (`routing auto`).  Pure codec: bytes in, a struct out, and back; every
 * read goes through the bounds-checked reader (buf.h).
 *
 * Format version 2.  A record travels as the payload of a wire NODE
 * message (wire.h), only between peers whose hellos both announced
 * WIRE_CAP_NODES (which names version 2; see there for a peer of version
 * 1).  Multi-byte fields are in network byte order; NAME is a u8 length
 * 1..31 and that many bytes of a valid node name (stmt_valid_name()).
 *
 *   u8  version (NODE_VERSION, 2)  u8  kind
 *   u16 lifetime, seconds (NODE_LIFETIME_MIN..MAX): how long a copy is
 *       valid without a newer one; in a traffic report, the hops it may
 *       still travel (1..NODE_HOPS_MAX)
 *   u32 sequence, high half        u32 sequence, low half (1..NODE_SEQ_MAX)
 *   NAME                           the node the record is from (its origin)
 *   u16 id                         which record of its kind (a MAC page)
 *   sections, to the end: u8 type (1..255), u16 length, that many bytes
 *
 * A node says several things, each its own record with its own sequence,
 * keyed by (origin, kind, id) as OSPF keys its LSAs, so that a change
 * re-sends only the record it touches:
 *
 *   NODE_KIND_TOPO (id 0)   its links, addresses and flags; flooded
 *   NODE_KIND_MACS (id 0..NODE_MAC_PAGES-1)
 *                           a page of up to NODE_PAGE_MACS of the MACs its
 *                           guests use; flooded.  A new guest or a MAC
 *                           that moves re-sends one page, not all of them
 *   NODE_KIND_TRAFFIC       the traffic rows of the origin, for one node
 *                           (NODE_SEC_TO): routed hop by hop toward it,
 *                           never flooded or kept on the way
 *
 * Sections:
 *
 *   NODE_SEC_LINKS  (topo)  n times: NAME of the neighbour, u32 round trip
 *                           (us), u8 flags (0)
 *   NODE_SEC_ADDRS  (topo)  n times: u8 type, u8 length 1..NODE_ADDR_MAX,
 *                           that many bytes; type NODE_ADDR_HOSTPORT is a
 *                           printable "HOST:PORT" to dial; other types
 *                           are skipped (kept in the record)
 *   NODE_SEC_CANDS  (topo)  n times: u8 kind, u8 length 1..NODE_ADDR_MAX,
 *                           that many printable bytes "HOST:PORT" (a
 *                           numeric address): where the node may be
 *                           reached, and how it knows (NODE_CAND_*); a
 *                           kind this version does not know is skipped
 *                           (kept in the record).  NODE_SEC_ADDRS says
 *                           the dialable ones again for older nodes
 *   NODE_SEC_FLAGS  (topo)  u32: NODE_F_TRAFFIC (send me your traffic
 *                           rows), NODE_F_ADAPT (send me your rows toward
 *                           me: my shortcuts weigh them), NODE_F_NORELAY
 *                           (`relay no`: no path between two other nodes
 *                           may pass through me; without it, as from an
 *                           older node, one may); other bits 0
 *   NODE_SEC_SEGS   (topo)  n times (at most NODE_SEGS_MAX): NAME of a
 *                           LAN segment the node attaches (an interface
 *                           with `segment NAME`), u8 flags: NODE_SEG_ACTIVE
 *                           (it forwards the segment now; other bits 0,
 *                           ignored), u32 epoch: which of its forwarders'
 *                           takeovers this is (routing_seg.c)
 *   NODE_SEC_MACS   (macs)  n times: 6 bytes of a unicast MAC, u32
 *                           version (>= 1)
 *   NODE_SEC_TO     (traffic) NAME of the node it is for
 *   NODE_SEC_PAIRS  (traffic) n times: guest pairs counted where the frames
 *                           entered: 6 bytes source MAC, 6 bytes
 *                           destination MAC, u64 bytes, u64 frames, u32
 *                           bytes/s over the last second, u32 bytes/s over
 *                           the last ten seconds
 *   NODE_SEC_DSTS   (traffic) n times: NAME of the destination node (or "*"
 *                           for broadcast and unknown destinations), u64
 *                           bytes, u64 frames, u32 bytes/s over 1 s, u32
 *                           bytes/s over 10 s
 *   NODE_SEC_CERT   (any)   the origin's certificate, DER, 1..NODE_CERT_MAX
 *                           bytes (at most once): what its signature is
 *                           checked with
 *   NODE_SEC_SIG    (any)   a signature over every byte of the record
 *                           before this section's type, preceded by the
 *                           context string NODESIG_CONTEXT (nodesig.h);
 *                           when there, it is the last section (a traffic
 *                           report's hops field is taken as 0 in what it
 *                           covers, since every hop rewrites it)
 *
 * A section of a type this version does not know, or not of the record's
 * kind, is skipped, and the record keeps it: it is stored and flooded on
 * byte for byte, so later versions add fields without a new format (and
 * a signature keeps covering them).  Malformed, closing the link that sent
 * it: a short field or section, a section running past the record, a bad
 * name, a multicast MAC, version 0, a section a kind needs given twice,
 * an empty or second certificate,
 * items that do not fill their section exactly, bytes after NODE_SEC_SIG,
 * or a version other than 2.  Refused and counted, the link staying: a
 * well-formed record over a limit (more than NODE_LINKS_MAX links,
 * NODE_PAGE_MACS MACs in a page, a page id of NODE_MAC_PAGES or more,
 * NODE_ADDRS_MAX addresses, NODE_CANDS_MAX candidates, NODE_SEGS_MAX
 * segments, NODE_ROWS_MAX rows of either kind,
 * NODE_RECORD_MAX bytes, a certificate over NODE_CERT_MAX bytes, a
 * sequence above NODE_SEQ_MAX), or of a kind this version does not know.
 *
 * Sequence numbers start from the wall clock in milliseconds, so that a
 * restarted node starts above what it sent before; NODE_SEQ_MAX leaves
 * room for 2^51 more changes before the counter could wrap.  One counter
 * serves all of a node's records: each record's sequence only grows.
 *
 * The protocol around the records (nodedb.h decides, routing.h sends):
 *
 * - Origination: a node sends a record on all its control-plane links
 *   when what it says changes (its links or addresses: the topology
 *   record; a MAC: that MAC's page), at most one per 200 ms, and every
 *   refresh interval (`routing auto refresh`, 1800 s by default, as OSPF's
 *   LSRefreshTime) with a sequence one higher.
 * - Flooding: a record newer than the copy held (higher sequence) is kept
 *   and sent on every other link; the same sequence is dropped; an older
 *   one makes the receiver send its newer copy back.  A link that comes up
 *   gets every record held (the database exchange), then the node's own.
 * - Ageing: a copy lives its lifetime (three refresh intervals) from its
 *   arrival unless a newer one replaces it.  A node that stops being
 *   listed by its neighbours is unreachable at once (links count only when
 *   both ends list them) and its guests' routes go; its records age out.
 * - Restart: a node that receives a record in its own name newer than its
 *   own, or with its sequence and other contents, sends its own (an empty
 *   one if it has nothing there now) with a sequence above it.
 * - Traffic: a node sends its rows, at most every 5 s while they change,
 *   to each node whose topology record has NODE_F_TRAFFIC (one where the
 *   matrix was asked for lately) and its row toward a node to that node if
 *   it has NODE_F_ADAPT; each hop passes a report on toward its NODE_SEC_TO
 *   by its shortest path.  Guest traffic never makes a record flood.
 * - Limits: those above per record; per receiver, the sequence may be at
 *   most 2^32 above its wall clock in ms, at most NODEDB_RECORDS_MAX
 *   records are held per network, and a record is replaced at most once
 *   per 50 ms.  What exceeds them is dropped and counted; the link stays.
 */
#ifndef VNET_NODE_H
#define VNET_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "ether.h"

#define NODE_VERSION		2
#define NODE_HDR_MIN		16	/* the fixed part, a 1-byte name */
#define NODE_NAME_MAX		31
#define NODE_ADDR_MAX		63
#define NODE_LINKS_MAX		1024	/* a proxy of a thousand nodes */
#define NODE_PAGE_MACS		32
#define NODE_MAC_PAGES		8
#define NODE_MACS_MAX		(NODE_PAGE_MACS * NODE_MAC_PAGES)	/* 256 */
#define NODE_ADDRS_MAX		8
#define NODE_CANDS_MAX		16
#define NODE_ROWS_MAX		32
#define NODE_RECORD_MAX		(48 * 1024)
#define NODE_SEQ_MAX		(1ULL << 52)
#define NODE_LIFETIME_MIN	3
#define NODE_LIFETIME_MAX	(3 * 3600)
#define NODE_HOPS_MAX		64
#define NODE_CERT_MAX		4096
#define NODE_SEGS_MAX		8
#define NODE_SEG_ACTIVE		0x01

enum node_kind {
	NODE_KIND_TOPO = 1,
	NODE_KIND_MACS = 2,
	NODE_KIND_TRAFFIC = 3,
};

enum node_sec {
	NODE_SEC_LINKS = 1,
	NODE_SEC_ADDRS = 2,
	NODE_SEC_FLAGS = 3,
	NODE_SEC_MACS = 4,
	NODE_SEC_TO = 5,
	NODE_SEC_PAIRS = 6,
	NODE_SEC_DSTS = 7,
	NODE_SEC_CANDS = 8,
	NODE_SEC_CERT = 9,
	NODE_SEC_SEGS = 10,
	NODE_SEC_SIG = 255,
};

#define NODE_ADDR_HOSTPORT	1

/*
 * How a node knows a candidate address of its own (NODE_SEC_CANDS):
 *   HOST       an address of one of its interfaces that a listener is on
 *              (a wildcard listener's: each interface address but
 *              loopback and link-local), at the listener's port
 *   ADVERTISE  what its `advertise` says
 *   SEEN_IN    a peer dialled it there: its listener as seen from
 *              outside (a port forward, a 1:1 NAT)
 *   SEEN_OUT   where a peer sees its outgoing connections come from: its
 *              public address behind a NAT, with the NAT's port for that
 *              one connection (not a listener)
 *   SEEN_UDP   where a peer sees its datagrams come from: the NAT's
 *              binding of its listener's UDP port, what a datagram path
 *              (and a punched hole) would be sent to
 * The SEEN kinds are what its peers tell it (WIRE_SEEN, wire.h), as STUN
 * tells a client its reflexive address.
 */
enum node_cand_kind {
	NODE_CAND_HOST = 1,
	NODE_CAND_ADVERTISE = 2,
	NODE_CAND_SEEN_IN = 3,
	NODE_CAND_SEEN_OUT = 4,
	NODE_CAND_SEEN_UDP = 5,
};
#define NODE_CAND_KINDS		5

struct node_cand {
	uint8_t		kind;
	char		addr[NODE_ADDR_MAX + 1];
};

/* NODE_SEC_FLAGS */
#define NODE_F_TRAFFIC		0x1
#define NODE_F_ADAPT		0x2
#define NODE_F_NORELAY		0x4

struct node_link {
	char		name[NODE_NAME_MAX + 1];
	uint32_t	rtt_us;
};

struct node_seg {
	char		name[NODE_NAME_MAX + 1];
	uint8_t		flags;		/* NODE_SEG_ACTIVE */
	uint32_t	epoch;
};

struct node_mac {
	uint8_t		mac[ETHER_ADDR_LEN];
	uint32_t	version;
};

struct node_rate {
	uint64_t	bytes, frames;
	uint32_t	rate1, rate10;	/* bytes/s over 1 s and 10 s */
};

struct node_row {
	uint8_t		 src[ETHER_ADDR_LEN], dst[ETHER_ADDR_LEN];
	struct node_rate r;
};

struct node_dst {
	char		 name[NODE_NAME_MAX + 1];
	struct node_rate r;
};

/* The fixed part of every record. */
struct node_hdr {
	uint8_t		 kind;
	uint16_t	 lifetime;	/* traffic: hops left */
	uint64_t	 seq;
	char		 name[NODE_NAME_MAX + 1];
	uint16_t	 id;
};

/* A record decoded: the sections of its kind (the others are counted). */
struct node_rec {
	uint8_t		 kind;
	uint16_t	 id;
	char		 name[NODE_NAME_MAX + 1];
	uint64_t	 seq;
	uint16_t	 lifetime;
	uint32_t	 flags;				/* topo */
	char		 to[NODE_NAME_MAX + 1];		/* traffic */
	uint16_t	 nlinks, nmacs, naddrs, ncands, nrows, ndsts, nsegs;
	uint16_t	 unknown;	/* sections, addresses skipped (not encoded) */
	size_t		 signed_len;	/* bytes before NODE_SEC_SIG; 0: none */
	size_t		 sig_off, sig_len;	/* its body, in the bytes */
	size_t		 cert_off, cert_len;	/* NODE_SEC_CERT's; 0: none */
	struct node_link links[NODE_LINKS_MAX];
	struct node_mac	 macs[NODE_PAGE_MACS];
	char		 addrs[NODE_ADDRS_MAX][NODE_ADDR_MAX + 1];
	struct node_cand cands[NODE_CANDS_MAX];
	struct node_seg	 segs[NODE_SEGS_MAX];		/* topo */
	struct node_row	 rows[NODE_ROWS_MAX];
	struct node_dst	 dsts[NODE_ROWS_MAX];
};

enum node_verdict {
	NODE_OK = 0,
	NODE_MALFORMED = -1,	/* close the link */
	NODE_REFUSED = -2,	/* over a limit: count, drop, keep the link */
};

/* Decodes n bytes into *r; NODE_OK or a verdict with *why set. */
int	node_decode(const uint8_t *p, size_t n, struct node_rec *r,
	    const char **why);
/*
 * Encodes *r (its kind's sections, none unknown) into out; returns the
 * length, or 0 when it does not fit in cap or r is over a limit.
 */
size_t	node_encode(uint8_t *out, size_t cap, const struct node_rec *r);
/* Reads only the fixed part (for the database); same verdicts. */
int	node_peek(const uint8_t *p, size_t n, struct node_hdr *h,
	    const char **why);
/* Sets the hops field of a traffic report in place (n >= NODE_HDR_MIN). */
void	node_set_hops(uint8_t *p, size_t n, uint16_t hops);
const char *node_kind_name(unsigned int kind);
/* "host", "advertise", "seen-in", "seen-out", "seen-udp"; "?" */
const char *node_cand_name(unsigned int kind);
/* 1 if a TCP listener is expected at a candidate of that kind. */
int	node_cand_dialable(unsigned int kind);

#endif
