#include <string.h>

#include "buf.h"
#include "gso.h"
#include "pkt.h"

static uint16_t
le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void
put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void
gso_hdr_decode(const uint8_t b[GSO_VNET_HDR_LEN], struct gso_hdr *h)
{
	h->flags = b[0];
	h->gso_type = b[1];
	h->hdr_len = le16(b + 2);
	h->gso_size = le16(b + 4);
	h->csum_start = le16(b + 6);
	h->csum_offset = le16(b + 8);
}

void
gso_hdr_encode(uint8_t b[GSO_VNET_HDR_LEN], const struct gso_hdr *h)
{
	memset(b, 0, GSO_VNET_HDR_LEN);
	b[0] = h->flags;
	b[1] = h->gso_type;
	put_le16(b + 2, h->hdr_len);
	put_le16(b + 4, h->gso_size);
	put_le16(b + 6, h->csum_start);
	put_le16(b + 8, h->csum_offset);
}

int
gso_is_plain(const struct gso_hdr *h)
{
	return (h->gso_type & ~GSO_ECN) == GSO_NONE &&
	    !(h->flags & GSO_F_NEEDS_CSUM);
}

int
gso_check(const struct gso_hdr *h, const uint8_t *frame, size_t len,
    const char **why)
{
	struct pkt	 p;
	uint8_t		 type = h->gso_type & ~GSO_ECN;
	size_t		 floor;

	if (h->flags & ~(GSO_F_NEEDS_CSUM | GSO_F_DATA_VALID)) {
		*why = "unknown offload flags";
		return -1;
	}
	if ((h->flags & GSO_F_NEEDS_CSUM) && (h->csum_start < 14 ||
	    (size_t)h->csum_start + h->csum_offset + 2 > len)) {
		*why = "checksum offsets outside the frame";
		return -1;
	}
	if (type == GSO_NONE) {
		if (h->gso_type & GSO_ECN) {
			*why = "ECN offload flag without segmentation";
			return -1;
		}
		return 0;
	}
	if (type != GSO_TCPV4 && type != GSO_TCPV6) {
		*why = "unsupported segmentation type";
		return -1;
	}
	if (pkt_parse(&p, frame, len) != PKT_OK || !p.tcp || p.fragment ||
	    p.ipver != (type == GSO_TCPV4 ? 4 : 6) || p.l3end != len) {
		*why = "segmentation type does not match the headers";
		return -1;
	}
	floor = type == GSO_TCPV4 ? GSO_MIN_SIZE_V4 : GSO_MIN_SIZE_V6;
	if (h->gso_size < floor) {
		*why = "segment size below the floor";
		return -1;
	}
	return 0;
}

/*
 * Completes a NEEDS_CSUM checksum in place (frame without GSO).  -1 if the
 * offsets lie outside the frame.
 */
static int
gso_csum(const struct gso_hdr *h, uint8_t *frame, size_t len)
{
	uint16_t	 c;

	if (!(h->flags & GSO_F_NEEDS_CSUM))
		return 0;
	if ((size_t)h->csum_start + h->csum_offset + 2 > len)
		return -1;
	/* The field holds the pseudo-header sum: summing over it adds it in. */
	c = (uint16_t)~pkt_csum_fold(pkt_csum_add(0, frame + h->csum_start,
	    len - h->csum_start));
	/* A zero TCP checksum is legal; for UDP 0 means none: send ffff. */
	if (c == 0)
		c = 0xffff;
	put_u16(frame + h->csum_start + h->csum_offset, c);
	return 0;
}

/* A frame that needs at most its checksum: completed in a copy. */
static int
gso_whole(const struct gso_hdr *h, const uint8_t *frame, size_t len,
    uint8_t *buf, size_t buflen,
    void (*cb)(const uint8_t *, size_t, void *), void *arg)
{
	if (!(h->flags & GSO_F_NEEDS_CSUM)) {
		cb(frame, len, arg);
		return 1;
	}
	if (buflen < len)
		return -1;
	memcpy(buf, frame, len);
	if (gso_csum(h, buf, len) == -1)
		return -1;
	cb(buf, len, arg);
	return 1;
}

int
gso_segment(const struct gso_hdr *h, const uint8_t *frame, size_t len,
    uint8_t *buf, size_t buflen,
    void (*cb)(const uint8_t *, size_t, void *), void *arg)
{
	struct pkt	 p, sp;
	uint8_t		 type = h->gso_type & ~GSO_ECN, flags;
	size_t		 hlen, off, chunk, seglen, n = 0;
	uint32_t	 seq;
	uint16_t	 id;

	if (type == GSO_NONE)
		return gso_whole(h, frame, len, buf, buflen, cb, arg);
	if (type != GSO_TCPV4 && type != GSO_TCPV6)
		return -1;
	/* gso_check()'s floor holds here too: cutting never amplifies. */
	if (h->gso_size < (type == GSO_TCPV4 ? GSO_MIN_SIZE_V4 :
	    GSO_MIN_SIZE_V6))
		return -1;
	if (pkt_parse(&p, frame, len) != PKT_OK || !p.tcp || p.fragment ||
	    p.ipver != (type == GSO_TCPV4 ? 4 : 6) || p.l3end != len)
		return -1;
	hlen = p.l4off + p.tcp_hlen;
	if (len == hlen)		/* nothing to cut */
		return gso_whole(h, frame, len, buf, buflen, cb, arg);
	if (buflen < hlen + h->gso_size)
		return -1;
	seq = p.seq;
	id = (uint16_t)(frame[p.l3off + 4] << 8 | frame[p.l3off + 5]);
	for (off = hlen; off < len; off += chunk, n++) {
		chunk = len - off < h->gso_size ? len - off : h->gso_size;
		seglen = hlen + chunk;
		memcpy(buf, frame, hlen);
		memcpy(buf + hlen, frame + off, chunk);
		flags = p.flags;
		if (off > hlen)
			flags &= (uint8_t)~TCP_CWR;
		if (off + chunk < len)
			flags &= (uint8_t)~(TCP_FIN | TCP_PSH);
		buf[p.l4off + 13] = flags;
		put_u32(buf + p.l4off + 4, seq);
		if (p.ipver == 4) {
			put_u16(buf + p.l3off + 2, (uint16_t)(seglen - p.l3off));
			put_u16(buf + p.l3off + 4, (uint16_t)(id + n));
		} else
			put_u16(buf + p.l3off + 4,
			    (uint16_t)(seglen - p.l3off - 40));
		/* The segment parses like the frame it came from. */
		if (pkt_parse(&sp, buf, seglen) != PKT_OK)
			return -1;
		if (sp.ipver == 4)
			put_u16(buf + p.l3off + 10, pkt_ipv4_csum(buf, &sp));
		put_u16(buf + p.l4off + 16, pkt_tcp_csum(buf, &sp));
		cb(buf, seglen, arg);
		seq += (uint32_t)chunk;
	}
	return (int)n;
}
