#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gro.h"
#include "gso.h"
#include "pkt.h"

int
gro_init(struct gro *g)
{
	memset(g, 0, sizeof(*g));
	return (g->buf = malloc(GRO_MAX)) == NULL ? -1 : 0;
}

void
gro_free(struct gro *g)
{
	free(g->buf);
	memset(g, 0, sizeof(*g));
}

int
gro_holding(const struct gro *g)
{
	return g->len != 0;
}

static int
vh_plain(const uint8_t *vh)
{
	static const uint8_t	 zero[GSO_VNET_HDR_LEN];

	return vh == NULL || memcmp(vh, zero, sizeof(zero)) == 0 ||
	    (vh[0] == GSO_F_DATA_VALID && vh[1] == GSO_NONE);
}

/* A TCP segment of the kind that may be merged: its headers parsed into p. */
static int
gro_candidate(const struct gro_frame *f, struct pkt *p)
{
	if (!vh_plain(f->vh) || pkt_parse(p, f->eth, f->len) != PKT_OK ||
	    !p->tcp || p->fragment || p->payload == 0 ||
	    p->l3end != f->len ||
	    (p->flags & ~(TCP_ACK | TCP_PSH)) != 0 || !(p->flags & TCP_ACK))
		return 0;
	if (p->ipver == 4 ? p->l3hlen != 20 ||
	    (f->eth[p->l3off + 6] & 0x3f) != 0 || f->eth[p->l3off + 7] != 0 :
	    p->l4off != p->l3off + 40)
		return 0;
	/* The checksum as sent: one the guest would drop is not hidden. */
	return pkt_tcp_csum(f->eth, p) ==
	    (uint16_t)(f->eth[p->l4off + 16] << 8 | f->eth[p->l4off + 17]);
}

/* The bytes of the headers that may differ between segments of one run. */
static int
gro_varies(const struct gro *g, size_t i)
{
	size_t	 ip = i - g->l3off, tcp = i - g->l4off;

	if (i >= g->l3off && i < g->l4off)
		return g->ipver == 4 ? (ip >= 2 && ip < 6) ||
		    (ip >= 10 && ip < 12) : ip >= 4 && ip < 6;
	if (i >= g->l4off)
		return (tcp >= 4 && tcp < 8) || tcp == 13 ||
		    (tcp >= 16 && tcp < 18);
	return 0;
}

static int
gro_continues(const struct gro *g, const struct gro_frame *f,
    const struct pkt *p)
{
	size_t	 i;

	if (g->closed || g->segs >= GRO_SEGS || f->origin != g->origin ||
	    f->hops != g->hops || p->ipver != g->ipver ||
	    p->l4off != g->l4off || p->l4off + p->tcp_hlen != g->hdrlen ||
	    p->seq != g->next_seq || p->payload > g->mss ||
	    g->len + p->payload > GRO_MAX - 8)
		return 0;
	for (i = 0; i < g->hdrlen; i++)
		if (f->eth[i] != g->buf[i] && !gro_varies(g, i))
			return 0;
	return 1;
}

static void
gro_hold(struct gro *g, const struct gro_frame *f, const struct pkt *p)
{
	memcpy(g->buf, f->eth, f->len);
	g->len = f->len;
	g->l3off = p->l3off;
	g->l4off = p->l4off;
	g->hdrlen = p->l4off + p->tcp_hlen;
	g->ipver = p->ipver;
	g->next_seq = p->seq + (uint32_t)p->payload;
	g->mss = p->payload;
	g->segs = 1;
	g->flags = p->flags;
	g->closed = (p->flags & TCP_PSH) != 0;
	g->hops = f->hops;
	g->origin = f->origin;
	g->seq = f->seq;
}

void
gro_flush(struct gro *g, gro_out_fn *out, void *arg)
{
	struct gro_frame	 f;
	struct gso_hdr		 h;
	uint8_t			*ip = g->buf + g->l3off, *th = g->buf + g->l4off;
	size_t			 iplen = g->len - g->l3off, l4len = g->len - g->l4off;
	size_t			 alen = g->ipver == 4 ? 4 : 16;
	uint32_t		 sum;

	if (g->len == 0)
		return;
	f.vh = NULL;
	f.eth = g->buf;
	f.len = g->len;
	f.hops = g->hops;
	f.origin = g->origin;
	f.seq = g->seq;
	if (g->segs > 1) {
		th[13] = g->flags;
		if (g->ipver == 4) {
			put_u16(ip + 2, (uint16_t)iplen);
			put_u16(ip + 10, 0);
			put_u16(ip + 10, (uint16_t)~pkt_csum_fold(
			    pkt_csum_add(0, ip, 20)));
		} else
			put_u16(ip + 4, (uint16_t)(iplen - 40));
		/* What NEEDS_CSUM asks for: the pseudo-header sum alone. */
		sum = pkt_csum_add(0, ip + (g->ipver == 4 ? 12 : 8), 2 * alen);
		sum += (uint32_t)(l4len >> 16) + (uint32_t)(l4len & 0xffff);
		sum += PKT_PROTO_TCP;
		put_u16(th + 16, pkt_csum_fold(sum));
		memset(&h, 0, sizeof(h));
		h.flags = GSO_F_NEEDS_CSUM;
		h.gso_type = g->ipver == 4 ? GSO_TCPV4 : GSO_TCPV6;
		h.hdr_len = (uint16_t)g->hdrlen;
		h.gso_size = (uint16_t)g->mss;
		h.csum_start = (uint16_t)g->l4off;
		h.csum_offset = 16;
		gso_hdr_encode(g->vh, &h);
		f.vh = g->vh;
		g->st.super++;
	}
	g->len = 0;
	out(arg, &f);
}

void
gro_input(struct gro *g, const struct gro_frame *f, gro_out_fn *out,
    void *arg)
{
	struct pkt	 p;

	if (!gro_candidate(f, &p)) {
		gro_flush(g, out, arg);
		out(arg, f);
		return;
	}
	if (g->len != 0 && gro_continues(g, f, &p)) {
		memcpy(g->buf + g->len, f->eth + g->hdrlen, p.payload);
		g->len += p.payload;
		g->next_seq += (uint32_t)p.payload;
		g->segs++;
		g->flags |= p.flags;
		g->st.merged++;
		if ((p.flags & TCP_PSH) || p.payload < g->mss)
			g->closed = 1;
		return;
	}
	gro_flush(g, out, arg);
	/* The first sets the segment size: not below gso.h's floor. */
	if (p.payload < (p.ipver == 4 ? GSO_MIN_SIZE_V4 : GSO_MIN_SIZE_V6) ||
	    (p.flags & TCP_PSH)) {
		out(arg, f);
		return;
	}
	gro_hold(g, f, &p);
}
