/*
 * The link wire format.  Pure codec: bytes in, structs out, and back.
 *
 * Every message is an 8-byte header and a payload:
 *
 *   0       1       2       3       4               8
 *   +-------+-------+-------+-------+---------------+------------
 *   | type  | flags | hops  |   0   | payload length| payload...
 *   +-------+-------+-------+-------+---------------+------------
 *
 * (multi-byte fields in network byte order).  Types:
 *
 *   HELLO      first message each way: "VNET", u16 version, u16 capabilities,
 *              u16 keepalive seconds, u8 length + node name, u8 length +
 *              network name.  Nothing else may come before it.
 *   FRAME      u32 origin, u32 sequence, the frame's 12-byte offload header
 *              (a virtio-net header, little-endian: all zero for a frame
 *              that needs nothing done), then one Ethernet frame (14 bytes
 *              to WIRE_FRAME_MAX).  hops is the remaining hop limit.  A
 *              frame that asks for segmentation or a checksum (a TCP
 *              super-frame of up to 64 KiB from a TAP with offload) goes
 *              only to a peer whose hello announced WIRE_CAP_GSO; others
 *              get it cut into ordinary frames first.
 *   KEEPALIVE  empty.
 *   BYE        empty; the sender is closing the link on purpose.
 *   NODE       one node record of the control plane (node.h), up to
 *              WIRE_NODE_MAX bytes; sent only to a peer whose hello
 *              announced WIRE_CAP_NODES, so a peer without the control
 *              plane never sees one.
 *   DGRAM      the datagram path (dgram.h, udp.h): u8 kind (1: an offer,
 *              0: none, stop), u8 cipher (dgram_aead: the TLS session's,
 *              or 0 on a plain link), u16 the UDP port to send to (0: this
 *              side sends first, its address is where datagrams come
 *              from), u32 our receiver index, 16 bytes: on a plain link
 *              the secret the peer's datagrams must carry (zero over TLS,
 *              whose keys come from the session's exporter).  Sent only
 *              to a peer whose hello announced WIRE_CAP_DGRAM.
 *   SEEN       where this side sees the peer, as STUN tells a client its
 *              reflexive address: u8 kind (1: the connection's far end,
 *              as getpeername() gives it; 2: where the peer's datagrams
 *              come from), u8 length 1..WIRE_SEEN_ADDR_MAX, that many
 *              printable bytes "HOST:PORT" (a numeric address, IPv6 in
 *              brackets).  Sent once the hellos are through, and again
 *              when it changes, only to a peer whose hello announced
 *              WIRE_CAP_SEEN; the peer publishes it among its candidates
 *              (node.h NODE_SEC_CANDS).  A kind it does not know it
 *              ignores.
 *
 * A header with an unknown type, non-zero reserved byte or flags, or a length
 * out of range for its type is malformed: the link is closed.
 */
#ifndef VNET_WIRE_H
#define VNET_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_VERSION		1
#define WIRE_HDR_LEN		8
#define WIRE_FRAME_PREFIX	20	/* origin, seq, offload header */
#define WIRE_FRAME_MIN		14
/* A 64 KiB IP packet of an offload super-frame and its Ethernet header. */
#define WIRE_FRAME_MAX		(65536 + 32)
#define WIRE_HELLO_MAX		(10 + 2 * 256)
#define WIRE_PAYLOAD_MAX	(WIRE_FRAME_PREFIX + WIRE_FRAME_MAX)
#define WIRE_HOPS_DEFAULT	16
#define WIRE_NAME_MAX		31
#define WIRE_VNET_HDR_LEN	12
/* The transport's bound on a node record; node.h's own limit is lower. */
#define WIRE_NODE_MAX		(64 * 1024)

/* Hello capabilities. */
#define WIRE_CAP_GSO		0x0001	/* takes offload frames */
/*
 * Takes node records (routing auto) of format version 2 (node.h).  The bit
 * of version 1's records (0x0002) is neither announced nor honoured: a
 * peer that speaks only version 1 sees no control plane here, and this
 * node sees none there.  Their link carries frames as a link to a node
 * without the control plane does: broadcasts both ways, unicast by
 * hand-written routes or learning; no records cross it and neither
 * node's routes go through it.
 */
#define WIRE_CAP_NODES_V1	0x0002
#define WIRE_CAP_NODES		0x0008
/*
 * Not a capability of the node but of this connection: the dialler's
 * adaptation made it, an automatic shortcut (adapt.h).  A peer that does
 * not know the flag ignores it, as it ignores any capability it lacks.
 */
#define WIRE_CAP_SHORTCUT	0x0004
#define WIRE_CAP_DGRAM		0x0010	/* takes DGRAM messages */
/*
 * Signs its node records and takes only signed ones (nodesig.h): a node
 * with TLS.  Said so that a peer's operator sees it; a node checks every
 * record whatever its sender announced.
 */
#define WIRE_CAP_SIGNED		0x0040
#define WIRE_CAP_LIVENESS	0x0080	/* takes PROBE messages */
#define WIRE_CAP_SEEN		0x0100	/* takes SEEN messages */
/* Takes liveness probes by datagram (DGRAM_LIVE, dgram.h) too. */
#define WIRE_CAP_DGRAM_LIVE	0x0020

enum wire_type {
	WIRE_HELLO = 1,
	WIRE_FRAME = 2,
	WIRE_KEEPALIVE = 3,
	WIRE_BYE = 4,
	WIRE_NODE = 5,
	WIRE_DGRAM = 6,
	/* 7 is JOIN's */
	WIRE_PROBE = 8,
	WIRE_SEEN = 9,
};

#define WIRE_SEEN_ADDR_MAX	63
#define WIRE_SEEN_CONN		1
#define WIRE_SEEN_DGRAM		2

struct wire_seen {
	uint8_t		kind;
	char		addr[WIRE_SEEN_ADDR_MAX + 1];
};

#define WIRE_DGRAM_LEN		24
#define WIRE_DGRAM_SECRET	16
#define WIRE_PROBE_LEN		4

/*
 * In a probe's state byte, only to a peer whose hello has
 * WIRE_CAP_DGRAM_LIVE: the sender has missed the peer's probes (none for
 * half its detection time: liveness_missing), so the peer sends its own by the connection
 * too, whatever way it sent them.
 */
#define WIRE_PROBE_MISSING	0x80
/*
 * Likewise: the sender's pace has just quickened (its link carries frames
 * again after an idle time) and it waits for an answer to this probe for
 * the new detection time, so the peer sends its next probe at once.
 */
#define WIRE_PROBE_POLL		0x40
#define WIRE_PROBE_FLAGS	(WIRE_PROBE_MISSING | WIRE_PROBE_POLL)

struct wire_probe {
	uint8_t		state;		/* | WIRE_PROBE_FLAGS */
	uint8_t		mult;
	uint16_t	interval;	/* ms */
};

struct wire_dgram {
	uint8_t		kind;		/* 1: offer, 0: stop */
	uint8_t		aead;
	uint16_t	port;
	uint32_t	receiver;
	uint8_t		secret[WIRE_DGRAM_SECRET];
};

struct wire_hdr {
	uint8_t		type;
	uint8_t		flags;
	uint8_t		hops;
	uint32_t	len;
};

struct wire_hello {
	uint16_t	version;
	uint16_t	caps;
	uint16_t	keepalive;	/* seconds, 1..3600 */
	char		node[WIRE_NAME_MAX + 1];
	char		network[WIRE_NAME_MAX + 1];
};

struct wire_frame {
	uint32_t	 origin;
	uint32_t	 seq;
	const uint8_t	*vh;		/* WIRE_VNET_HDR_LEN bytes */
	const uint8_t	*eth;
	size_t		 len;
};

/* Decodes a header from n >= WIRE_HDR_LEN bytes; -1 if malformed (*why set). */
int	wire_hdr_decode(const uint8_t *p, size_t n, struct wire_hdr *h,
	    const char **why);
void	wire_hdr_encode(uint8_t out[WIRE_HDR_LEN], const struct wire_hdr *h);

/* Payload codecs; decoders return -1 with *why set on malformed input. */
int	wire_hello_decode(const uint8_t *p, size_t n, struct wire_hello *h,
	    const char **why);
/* Encodes header and payload into out; returns the length, or 0 if cap is short. */
size_t	wire_hello_encode(uint8_t *out, size_t cap, const struct wire_hello *h);

int	wire_frame_decode(const uint8_t *p, size_t n, struct wire_frame *f,
	    const char **why);
/*
 * Writes header and frame prefix (WIRE_HDR_LEN + WIRE_FRAME_PREFIX bytes);
 * vh is the offload header, NULL for none (zeros).
 */
void	wire_frame_encode_prefix(uint8_t *out, size_t framelen, uint8_t hops,
	    uint32_t origin, uint32_t seq, const uint8_t *vh);

/* The header of a NODE message of len payload bytes. */
void	wire_node_encode_hdr(uint8_t out[WIRE_HDR_LEN], size_t len);

int	wire_dgram_decode(const uint8_t *p, size_t n, struct wire_dgram *d,
	    const char **why);
/* Header and payload: WIRE_HDR_LEN + WIRE_DGRAM_LEN bytes. */
void	wire_dgram_encode(uint8_t *out, const struct wire_dgram *d);

int	wire_probe_decode(const uint8_t *p, size_t n, struct wire_probe *pr,
	    const char **why);
/* Header and payload: WIRE_HDR_LEN + WIRE_PROBE_LEN bytes. */
void	wire_probe_encode(uint8_t *out, const struct wire_probe *pr);

int	wire_seen_decode(const uint8_t *p, size_t n, struct wire_seen *s,
	    const char **why);
/* Header and payload; returns the length, or 0 if s->addr is empty or long. */
size_t	wire_seen_encode(uint8_t out[WIRE_HDR_LEN + 2 + WIRE_SEEN_ADDR_MAX],
	    const struct wire_seen *s);
/* A message without payload (KEEPALIVE, BYE): WIRE_HDR_LEN bytes. */
void	wire_empty_encode(uint8_t out[WIRE_HDR_LEN], enum wire_type type);

#endif
