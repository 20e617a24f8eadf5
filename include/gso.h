/*
 * Segmentation offload frames.  A TAP opened with IFF_VNET_HDR hands over
 * (and takes) frames preceded by a virtio-net header: the frame may be a
 * TCP "super-frame" of up to 64 KiB that the kernel segments later, and
 * its TCP checksum may be left for the device to finish (NEEDS_CSUM).
 * Where such a frame must go somewhere that cannot take it (a pcap
 * interface, a peer that did not announce the capability), it is finished
 * here: checksum completed, or cut into MSS-sized frames with their own
 * headers and checksums.  Pure: no allocation, no I/O.
 */
#ifndef VNET_GSO_H
#define VNET_GSO_H

#include <stddef.h>
#include <stdint.h>

#define GSO_VNET_HDR_LEN	12	/* struct virtio_net_hdr_mrg_rxbuf */

#define GSO_F_NEEDS_CSUM	1
#define GSO_F_DATA_VALID	2

#define GSO_NONE		0
#define GSO_TCPV4		1
#define GSO_UDP			3
#define GSO_TCPV6		4
#define GSO_ECN			0x80

struct gso_hdr {
	uint8_t		flags;
	uint8_t		gso_type;
	uint16_t	hdr_len;
	uint16_t	gso_size;
	uint16_t	csum_start;
	uint16_t	csum_offset;
};

/* The header is little-endian (the TAP is set to that explicitly). */
void	gso_hdr_decode(const uint8_t b[GSO_VNET_HDR_LEN], struct gso_hdr *);
void	gso_hdr_encode(uint8_t b[GSO_VNET_HDR_LEN], const struct gso_hdr *);

/*
 * The smallest segment size taken: the TCP payload of a packet as large as
 * the smallest MTU each IP version must carry (576 bytes for IPv4, RFC 791;
 * 1280 for IPv6, RFC 8200), less its IP header, a TCP header and 40 bytes
 * of TCP options (what a guest's kernel subtracts from its MSS for them).
 * Cutting a frame then never makes more than about 130 segments of it, and
 * never much more than its own bytes in headers: a frame that says
 * "segment size 1" would otherwise become 64,000 frames.
 */
#define GSO_MIN_SIZE_V4		(576 - 20 - 20 - 40)	/* 496 */
#define GSO_MIN_SIZE_V6		(1280 - 40 - 20 - 40)	/* 1180 */

/*
 * Checks an offload header from outside (a guest's TAP, a peer) against its
 * frame: known flags and type only; a checksum to finish inside the frame;
 * a segmentation type that is what the headers are (TCP over IPv4 or IPv6,
 * not a fragment, no bytes after the IP packet) with a segment size of at
 * least the floor above (one larger than the payload is one segment).  0
 * if it may be forwarded; -1 with *why set if the frame must be dropped.
 */
int	gso_check(const struct gso_hdr *, const uint8_t *frame, size_t len,
	    const char **why);

/* 1 if the frame needs nothing done before a plain device can take it. */
int	gso_is_plain(const struct gso_hdr *);

/*
 * Cuts a TCP super-frame into segments of at most gso_size payload bytes,
 * each a complete frame with correct IP lengths and ids, TCP sequence
 * numbers, flags (FIN and PSH on the last only, CWR on the first only) and
 * checksums, built in buf (at least hdr + gso_size bytes) and passed to cb.
 * A frame without GSO is passed whole, its checksum completed in buf if it
 * needs that.  The frame itself is never changed.
 * Returns the number of frames passed, or -1 if the frame is not one that
 * can be segmented (then nothing was passed).
 */
int	gso_segment(const struct gso_hdr *, const uint8_t *frame, size_t len,
	    uint8_t *buf, size_t buflen,
	    void (*cb)(const uint8_t *seg, size_t seglen, void *arg),
	    void *arg);

#endif
