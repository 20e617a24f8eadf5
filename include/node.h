/*
 * Node records: what one daemon tells every other about itself in the
 * control plane (`routing auto`).  Pure codec: bytes in, a struct out, and
 * back; every read goes through the bounds-checked reader (buf.h).
 *
 * A record travels as the payload of a wire NODE message (wire.h), only
 * between peers whose hellos both announced WIRE_CAP_NODES.  Layout
 * (multi-byte fields in network byte order; NAME is a u8 length 1..31 and
 * that many bytes of a valid node name, stmt_valid_name()):
 *
 *   u8  version (NODE_VERSION)     u8  reserved (0)
 *   u16 lifetime, seconds (NODE_LIFETIME_MIN..MAX): how long a copy is
 *       valid without a newer one; the originator refreshes it well before
 *   u32 sequence, high half        u32 sequence, low half (1..NODE_SEQ_MAX)
 *   NAME                           the node the record is about
 *   u16 n, then n links:  NAME of the neighbour, u32 round trip (us)
 *   u16 n, then n MACs:   6 bytes of a unicast MAC, u32 version (>= 1)
 *   u16 n, then n underlay addresses: u8 length 1..NODE_ADDR_MAX, that
 *       many printable bytes ("HOST:PORT")
 *   u16 n, then n traffic rows, guest pairs counted where the frames
 *       entered: 6 bytes source MAC, 6 bytes destination MAC, u64 bytes,
 *       u64 frames, u32 bytes/s over the last second, u32 bytes/s over
 *       the last ten seconds
 *   u16 n, then n traffic rows by destination node: NAME (or "*" for
 *       broadcast and unknown destinations), u64 bytes, u64 frames, u32
 *       bytes/s over 1 s, u32 bytes/s over 10 s
 *
 * and nothing after.  Anything else (a short field, a bad name, a
 * multicast MAC, version 0, trailing bytes) is malformed: the link that
 * sent it is closed.  A well-formed record over a limit (more than
 * NODE_LINKS_MAX links, NODE_MACS_MAX MACs, NODE_ADDRS_MAX addresses,
 * NODE_ROWS_MAX rows of either kind, NODE_RECORD_MAX bytes, or a sequence
 * above NODE_SEQ_MAX) is refused and counted, and the link stays.
 *
 * Sequence numbers start from the wall clock in milliseconds, so that a
 * restarted node starts above what it sent before; NODE_SEQ_MAX leaves
 * room for 2^51 more changes before the counter could wrap.
 *
 * The protocol around the records (nodedb.h decides, routing.h sends):
 *
 * - Origination: a node sends its record on all its control-plane links
 *   when its links, MACs or addresses change (at most one per 200 ms),
 *   when its traffic rows changed (at most one per 5 s), and every
 *   refresh interval (30 s by default) with a sequence one higher.
 * - Flooding: a record newer than the copy held (higher sequence) is kept
 *   and sent on every other link; the same sequence is dropped; an older
 *   one makes the receiver send its newer copy back.  A link that comes up
 *   gets every record held (the database exchange), then the node's own.
 * - Ageing: a copy lives its lifetime (three refresh intervals) from its
 *   arrival unless a newer one replaces it.  A node that stops being
 *   listed by its neighbours is unreachable at once (links count only when
 *   both ends list them) and its guests' routes go; its record ages out.
 * - Restart: a node that receives a record in its own name newer than its
 *   own, or with its sequence and other contents, sends its own with a
 *   sequence above it.
 * - Limits: those above per record; per receiver, the sequence may be at
 *   most 2^32 above its wall clock in ms, at most 1024 records are held
 *   per network, and a node's record is replaced at most once per 50 ms.
 *   What exceeds them is dropped and counted; the link stays.
 */
#ifndef VNET_NODE_H
#define VNET_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "ether.h"

#define NODE_VERSION		1
#define NODE_NAME_MAX		31
#define NODE_ADDR_MAX		63
#define NODE_LINKS_MAX		128
#define NODE_MACS_MAX		256
#define NODE_ADDRS_MAX		4
#define NODE_ROWS_MAX		32
#define NODE_RECORD_MAX		(16 * 1024)
#define NODE_SEQ_MAX		(1ULL << 52)
#define NODE_LIFETIME_MIN	3
#define NODE_LIFETIME_MAX	3600

struct node_link {
	char		name[NODE_NAME_MAX + 1];
	uint32_t	rtt_us;
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

struct node_rec {
	char		 name[NODE_NAME_MAX + 1];
	uint64_t	 seq;
	uint16_t	 lifetime;
	uint16_t	 nlinks, nmacs, naddrs, nrows, ndsts;
	struct node_link links[NODE_LINKS_MAX];
	struct node_mac	 macs[NODE_MACS_MAX];
	char		 addrs[NODE_ADDRS_MAX][NODE_ADDR_MAX + 1];
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
 * Encodes *r into out; returns the length, or 0 when it does not fit in
 * cap or r is over a limit.
 */
size_t	node_encode(uint8_t *out, size_t cap, const struct node_rec *r);
/* Reads only the name and sequence (for the database); same verdicts. */
int	node_peek(const uint8_t *p, size_t n, char name[NODE_NAME_MAX + 1],
	    uint64_t *seq, uint16_t *lifetime, const char **why);

#endif
