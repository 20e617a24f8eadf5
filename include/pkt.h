/*
 * Packet headers inside an Ethernet frame: Ethernet (with 802.1Q/802.1ad
 * tags), IPv4, IPv6 (extension headers skipped), TCP.  Pure: every field is
 * read through a bounds-checked reader; nothing here allocates or logs.
 *
 * The writers change one header field and fix the checksums incrementally
 * (RFC 1624), so a rewrite costs the same for a 64-byte ACK and a 64 KiB
 * offload segment.  A frame whose TCP checksum the sender left for the
 * device to finish (virtio-net NEEDS_CSUM: the field holds only the
 * pseudo-header sum) is passed with partial != 0: then the TCP checksum is
 * not touched, since the device computes it over the rewritten header.
 */
#ifndef VNET_PKT_H
#define VNET_PKT_H

#include <stddef.h>
#include <stdint.h>

#define PKT_ETH_IPV4	0x0800
#define PKT_ETH_IPV6	0x86dd
#define PKT_ETH_VLAN	0x8100
#define PKT_ETH_QINQ	0x88a8
#define PKT_PROTO_TCP	6

#define PKT_ECN_NOT_ECT	0
#define PKT_ECN_ECT1	1
#define PKT_ECN_ECT0	2
#define PKT_ECN_CE	3

#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_RST		0x04
#define TCP_PSH		0x08
#define TCP_ACK		0x10
#define TCP_URG		0x20
#define TCP_ECE		0x40
#define TCP_CWR		0x80

enum pkt_status {
	PKT_OK = 0,		/* parsed as far as it goes */
	PKT_NOT_IP,		/* not IPv4/IPv6: nothing to do */
	PKT_TRUNCATED,		/* a header runs past the frame */
	PKT_MALFORMED,		/* a header field is impossible */
};

struct pkt {
	size_t		 vlans;		/* 802.1Q/ad tags seen */
	uint16_t	 ethertype;	/* after the tags */
	int		 ipver;		/* 4, 6, or 0 */
	size_t		 l3off;		/* IP header */
	size_t		 l3hlen;	/* IPv4 header incl. options; IPv6: 40 */
	size_t		 l3end;		/* end of the IP packet in the frame */
	uint8_t		 ecn;		/* the IP ECN field */
	uint8_t		 proto;		/* upper layer after IPv6 extensions */
	int		 fragment;	/* a non-first fragment: no L4 header */
	size_t		 l4off;		/* upper-layer header */
	const uint8_t	*saddr, *daddr;	/* into the frame; 4 or 16 bytes */

	/* Filled when proto is TCP and the header is whole. */
	int		 tcp;
	size_t		 tcp_hlen;	/* incl. options */
	uint16_t	 sport, dport;
	uint32_t	 seq, ack;
	uint8_t		 flags;
	uint16_t	 win;		/* raw, unscaled */
	size_t		 payload;	/* TCP payload bytes */
};

struct pkt_tcpopt {
	int		 mss_set, wscale_set, sack_ok, ts_set;
	uint16_t	 mss;
	uint8_t		 wscale;
	uint32_t	 tsval, tsecr;
};

enum pkt_status	 pkt_parse(struct pkt *, const uint8_t *frame, size_t len);
/*
 * Mixes the frame's inner flow into FNV-1a hash h (hash.h): the IP
 * addresses, the protocol and, for TCP, the ports; for a frame that is not
 * IP (or does not parse), its Ethernet header.  The flow queues and the
 * resequencer key on it.
 */
uint32_t	 pkt_flow_hash(uint32_t h, const uint8_t *frame, size_t len);
/* Reads the TCP options of a parsed TCP packet; -1 if they are malformed. */
int		 pkt_tcp_options(const struct pkt *, const uint8_t *frame,
		    struct pkt_tcpopt *);

/* Sets the IP ECN field (IPv4 checksum fixed). */
void		 pkt_set_ecn(uint8_t *frame, struct pkt *, uint8_t ecn);
/* Marks CE if the packet is ECN-capable: 1 marked (or already CE), 0 not ECT. */
int		 pkt_mark_ce(uint8_t *frame, struct pkt *);
/* Rewrites TCP fields with the checksum fixed incrementally (see above). */
void		 pkt_tcp_set_win(uint8_t *frame, struct pkt *, uint16_t win,
		    int partial);
void		 pkt_tcp_set_flags(uint8_t *frame, struct pkt *, uint8_t flags,
		    int partial);

/* RFC 1624 incremental update of a checksum field for a 16-bit change. */
uint16_t	 pkt_csum_update(uint16_t csum, uint16_t old, uint16_t new);
/* One's-complement sum of n bytes (big-endian words) added to sum, and its fold. */
uint32_t	 pkt_csum_add(uint32_t sum, const uint8_t *p, size_t n);
uint16_t	 pkt_csum_fold(uint32_t sum);
/* Full computations, for checks and tests. */
uint16_t	 pkt_ipv4_csum(const uint8_t *frame, const struct pkt *);
uint16_t	 pkt_tcp_csum(const uint8_t *frame, const struct pkt *);

#endif
