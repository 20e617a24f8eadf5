#include <string.h>

#include "buf.h"
#include "stmt.h"
#include "wire.h"

static const uint8_t wire_magic[4] = { 'V', 'N', 'E', 'T' };

int
wire_hdr_decode(const uint8_t *p, size_t n, struct wire_hdr *h,
    const char **why)
{
	struct rbuf	 b;
	uint8_t		 reserved;

	rbuf_init(&b, p, n);
	if (rbuf_get_u8(&b, &h->type) == -1 ||
	    rbuf_get_u8(&b, &h->flags) == -1 ||
	    rbuf_get_u8(&b, &h->hops) == -1 ||
	    rbuf_get_u8(&b, &reserved) == -1 ||
	    rbuf_get_u32(&b, &h->len) == -1) {
		*why = "short header";
		return -1;
	}
	if (reserved != 0 || h->flags != 0) {
		*why = "reserved bits set";
		return -1;
	}
	switch (h->type) {
	case WIRE_HELLO:
		if (h->len > WIRE_HELLO_MAX) {
			*why = "oversized hello";
			return -1;
		}
		break;
	case WIRE_FRAME:
		if (h->len < WIRE_FRAME_PREFIX + WIRE_FRAME_MIN) {
			*why = "runt frame";
			return -1;
		}
		if (h->len > WIRE_PAYLOAD_MAX) {
			*why = "oversized frame";
			return -1;
		}
		break;
	case WIRE_NODE:
		if (h->len == 0 || h->len > WIRE_NODE_MAX) {
			*why = "node record of impossible length";
			return -1;
		}
		break;
	case WIRE_DGRAM:
		if (h->len != WIRE_DGRAM_LEN) {
			*why = "datagram offer of the wrong length";
			return -1;
		}
		break;
	case WIRE_PROBE:
		if (h->len != WIRE_PROBE_LEN) {
			*why = "probe of the wrong length";
			return -1;
		}
		break;
	case WIRE_SEEN:
		if (h->len < 3 || h->len > 2 + WIRE_SEEN_ADDR_MAX) {
			*why = "address report of impossible length";
			return -1;
		}
		break;
	case WIRE_KEEPALIVE:
	case WIRE_BYE:
		if (h->len != 0) {
			*why = "payload on an empty message";
			return -1;
		}
		break;
	default:
		*why = "unknown message type";
		return -1;
	}
	return 0;
}

void
wire_hdr_encode(uint8_t out[WIRE_HDR_LEN], const struct wire_hdr *h)
{
	out[0] = h->type;
	out[1] = h->flags;
	out[2] = h->hops;
	out[3] = 0;
	put_u32(out + 4, h->len);
}

static int
get_name(struct rbuf *b, char *dst)
{
	uint8_t		 len;
	const uint8_t	*p;

	if (rbuf_get_u8(b, &len) == -1 || len == 0 || len > WIRE_NAME_MAX ||
	    rbuf_get_ptr(b, len, &p) == -1)
		return -1;
	/* A NUL inside would make "a\0junk" pass for "a". */
	if (memchr(p, '\0', len) != NULL)
		return -1;
	memcpy(dst, p, len);
	dst[len] = '\0';
	return stmt_valid_name(dst) ? 0 : -1;
}

int
wire_hello_decode(const uint8_t *p, size_t n, struct wire_hello *h,
    const char **why)
{
	struct rbuf	 b;
	const uint8_t	*magic;

	memset(h, 0, sizeof(*h));
	rbuf_init(&b, p, n);
	if (rbuf_get_ptr(&b, sizeof(wire_magic), &magic) == -1 ||
	    memcmp(magic, wire_magic, sizeof(wire_magic)) != 0) {
		*why = "not a vnet hello";
		return -1;
	}
	if (rbuf_get_u16(&b, &h->version) == -1 ||
	    rbuf_get_u16(&b, &h->caps) == -1 ||
	    rbuf_get_u16(&b, &h->keepalive) == -1) {
		*why = "short hello";
		return -1;
	}
	/* The version comes first so that a newer peer is told why. */
	if (h->version != WIRE_VERSION) {
		*why = "unsupported protocol version";
		return -1;
	}
	if (h->keepalive < 1 || h->keepalive > 3600) {
		*why = "keepalive out of range";
		return -1;
	}
	if (get_name(&b, h->node) == -1) {
		*why = "bad node name";
		return -1;
	}
	if (get_name(&b, h->network) == -1) {
		*why = "bad network name";
		return -1;
	}
	if (rbuf_left(&b) != 0) {
		*why = "trailing bytes in hello";
		return -1;
	}
	return 0;
}

size_t
wire_hello_encode(uint8_t *out, size_t cap, const struct wire_hello *h)
{
	struct wire_hdr	 hdr;
	size_t		 nl = strlen(h->node), wl = strlen(h->network);
	size_t		 len = sizeof(wire_magic) + 6 + 1 + nl + 1 + wl;
	uint8_t		*p;

	if (nl > WIRE_NAME_MAX || wl > WIRE_NAME_MAX ||
	    cap < WIRE_HDR_LEN + len)
		return 0;
	memset(&hdr, 0, sizeof(hdr));
	hdr.type = WIRE_HELLO;
	hdr.len = (uint32_t)len;
	wire_hdr_encode(out, &hdr);
	p = out + WIRE_HDR_LEN;
	memcpy(p, wire_magic, sizeof(wire_magic));
	p += sizeof(wire_magic);
	put_u16(p, h->version);
	put_u16(p + 2, h->caps);
	put_u16(p + 4, h->keepalive);
	p += 6;
	*p++ = (uint8_t)nl;
	memcpy(p, h->node, nl);
	p += nl;
	*p++ = (uint8_t)wl;
	memcpy(p, h->network, wl);
	return WIRE_HDR_LEN + len;
}

int
wire_frame_decode(const uint8_t *p, size_t n, struct wire_frame *f,
    const char **why)
{
	struct rbuf	 b;

	rbuf_init(&b, p, n);
	if (rbuf_get_u32(&b, &f->origin) == -1 ||
	    rbuf_get_u32(&b, &f->seq) == -1 ||
	    rbuf_get_ptr(&b, WIRE_VNET_HDR_LEN, &f->vh) == -1) {
		*why = "short frame";
		return -1;
	}
	f->len = rbuf_left(&b);
	if (f->len < WIRE_FRAME_MIN || f->len > WIRE_FRAME_MAX) {
		*why = "frame length out of range";
		return -1;
	}
	(void)rbuf_get_ptr(&b, f->len, &f->eth);
	return 0;
}

void
wire_frame_encode_prefix(uint8_t *out, size_t framelen, uint8_t hops,
    uint32_t origin, uint32_t seq, const uint8_t *vh)
{
	struct wire_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = WIRE_FRAME;
	hdr.hops = hops;
	hdr.len = (uint32_t)(WIRE_FRAME_PREFIX + framelen);
	wire_hdr_encode(out, &hdr);
	put_u32(out + WIRE_HDR_LEN, origin);
	put_u32(out + WIRE_HDR_LEN + 4, seq);
	if (vh != NULL)
		memcpy(out + WIRE_HDR_LEN + 8, vh, WIRE_VNET_HDR_LEN);
	else
		memset(out + WIRE_HDR_LEN + 8, 0, WIRE_VNET_HDR_LEN);
}

void
wire_empty_encode(uint8_t out[WIRE_HDR_LEN], enum wire_type type)
{
	struct wire_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = (uint8_t)type;
	wire_hdr_encode(out, &hdr);
}

void
wire_node_encode_hdr(uint8_t out[WIRE_HDR_LEN], size_t len)
{
	struct wire_hdr	 h = { WIRE_NODE, 0, 0, (uint32_t)len };

	wire_hdr_encode(out, &h);
}

int
wire_dgram_decode(const uint8_t *p, size_t n, struct wire_dgram *d,
    const char **why)
{
	struct rbuf	 b;
	const uint8_t	*secret;

	memset(d, 0, sizeof(*d));
	rbuf_init(&b, p, n);
	if (rbuf_get_u8(&b, &d->kind) == -1 ||
	    rbuf_get_u8(&b, &d->aead) == -1 ||
	    rbuf_get_u16(&b, &d->port) == -1 ||
	    rbuf_get_u32(&b, &d->receiver) == -1 ||
	    rbuf_get_ptr(&b, WIRE_DGRAM_SECRET, &secret) == -1 ||
	    rbuf_left(&b) != 0) {
		*why = "datagram offer of the wrong length";
		return -1;
	}
	memcpy(d->secret, secret, WIRE_DGRAM_SECRET);
	if (d->kind > 1 || (d->kind == 1 && d->receiver == 0)) {
		*why = "bad datagram offer";
		return -1;
	}
	return 0;
}

void
wire_dgram_encode(uint8_t *out, const struct wire_dgram *d)
{
	struct wire_hdr	 h = { WIRE_DGRAM, 0, 0, WIRE_DGRAM_LEN };
	uint8_t		*p = out + WIRE_HDR_LEN;

	wire_hdr_encode(out, &h);
	p[0] = d->kind;
	p[1] = d->aead;
	put_u16(p + 2, d->port);
	put_u32(p + 4, d->receiver);
	memcpy(p + 8, d->secret, WIRE_DGRAM_SECRET);
}

int
wire_probe_decode(const uint8_t *p, size_t n, struct wire_probe *pr,
    const char **why)
{
	struct rbuf	 b;

	memset(pr, 0, sizeof(*pr));
	rbuf_init(&b, p, n);
	if (rbuf_get_u8(&b, &pr->state) == -1 ||
	    rbuf_get_u8(&b, &pr->mult) == -1 ||
	    rbuf_get_u16(&b, &pr->interval) == -1 ||
	    rbuf_left(&b) != 0) {
		*why = "probe of the wrong length";
		return -1;
	}
	if ((pr->state & ~WIRE_PROBE_FLAGS) > 3 || pr->mult < 2 ||
	    pr->interval < 10 ||
	    pr->interval > 60000) {
		*why = "bad probe";
		return -1;
	}
	return 0;
}

void
wire_probe_encode(uint8_t *out, const struct wire_probe *pr)
{
	struct wire_hdr	 h = { WIRE_PROBE, 0, 0, WIRE_PROBE_LEN };
	uint8_t		*p = out + WIRE_HDR_LEN;

	wire_hdr_encode(out, &h);
	p[0] = pr->state;
	p[1] = pr->mult;
	put_u16(p + 2, pr->interval);
}

int
wire_seen_decode(const uint8_t *p, size_t n, struct wire_seen *s,
    const char **why)
{
	struct rbuf	 b;
	const uint8_t	*a;
	uint8_t		 len;
	size_t		 i;

	memset(s, 0, sizeof(*s));
	rbuf_init(&b, p, n);
	if (rbuf_get_u8(&b, &s->kind) == -1 || rbuf_get_u8(&b, &len) == -1 ||
	    len == 0 || len > WIRE_SEEN_ADDR_MAX ||
	    rbuf_get_ptr(&b, len, &a) == -1 || rbuf_left(&b) != 0) {
		*why = "address report of the wrong length";
		return -1;
	}
	for (i = 0; i < len; i++)
		if (a[i] < 0x21 || a[i] > 0x7e) {
			*why = "unprintable address report";
			return -1;
		}
	memcpy(s->addr, a, len);
	s->addr[len] = '\0';
	return 0;
}

size_t
wire_seen_encode(uint8_t out[WIRE_HDR_LEN + 2 + WIRE_SEEN_ADDR_MAX],
    const struct wire_seen *s)
{
	struct wire_hdr	 h = { WIRE_SEEN, 0, 0, 0 };
	size_t		 n = strnlen(s->addr, sizeof(s->addr));

	if (n == 0 || n > WIRE_SEEN_ADDR_MAX)
		return 0;
	h.len = (uint32_t)(2 + n);
	wire_hdr_encode(out, &h);
	out[WIRE_HDR_LEN] = s->kind;
	out[WIRE_HDR_LEN + 1] = (uint8_t)n;
	memcpy(out + WIRE_HDR_LEN + 2, s->addr, n);
	return WIRE_HDR_LEN + h.len;
}
