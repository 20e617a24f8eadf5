#include <string.h>

#include "buf.h"
#include "hash.h"
#include "pkt.h"

#define ETH_HLEN	14
#define IP6_HLEN	40
#define TCP_MIN_HLEN	20

static int
ipv6_ext(uint8_t nh)
{
	switch (nh) {
	case 0:		/* hop-by-hop */
	case 43:	/* routing */
	case 44:	/* fragment */
	case 60:	/* destination options */
	case 51:	/* AH */
	case 135:	/* mobility */
	case 139:	/* HIP */
	case 140:	/* shim6 */
		return 1;
	}
	return 0;
}

static enum pkt_status
parse_ipv4(struct pkt *p, struct rbuf *b, size_t framelen)
{
	uint8_t		 vihl, tos, ttl, proto;
	uint16_t	 tot, id, frag;
	const uint8_t	*rest;

	if (rbuf_get_u8(b, &vihl) == -1 || rbuf_get_u8(b, &tos) == -1 ||
	    rbuf_get_u16(b, &tot) == -1 || rbuf_get_u16(b, &id) == -1 ||
	    rbuf_get_u16(b, &frag) == -1 || rbuf_get_u8(b, &ttl) == -1 ||
	    rbuf_get_u8(b, &proto) == -1 || rbuf_skip(b, 2) == -1 ||
	    rbuf_get_ptr(b, 4, &p->saddr) == -1 ||
	    rbuf_get_ptr(b, 4, &p->daddr) == -1)
		return PKT_TRUNCATED;
	if (vihl >> 4 != 4 || (vihl & 0xf) < 5)
		return PKT_MALFORMED;
	p->l3hlen = (size_t)(vihl & 0xf) * 4;
	if (tot < p->l3hlen)
		return PKT_MALFORMED;
	if (p->l3off + tot > framelen)
		return PKT_TRUNCATED;
	if (rbuf_get_ptr(b, p->l3hlen - 20, &rest) == -1)
		return PKT_TRUNCATED;
	p->ipver = 4;
	p->ecn = tos & 3;
	p->proto = proto;
	p->l3end = p->l3off + tot;	/* Ethernet padding is not ours */
	p->l4off = p->l3off + p->l3hlen;
	p->fragment = (frag & 0x1fff) != 0;
	return PKT_OK;
}

static enum pkt_status
parse_ipv6(struct pkt *p, struct rbuf *b, size_t framelen)
{
	uint32_t	 vtcfl;
	uint16_t	 plen, fragoff;
	uint8_t		 nh, hlim, elen;

	if (rbuf_get_u32(b, &vtcfl) == -1 || rbuf_get_u16(b, &plen) == -1 ||
	    rbuf_get_u8(b, &nh) == -1 || rbuf_get_u8(b, &hlim) == -1 ||
	    rbuf_get_ptr(b, 16, &p->saddr) == -1 ||
	    rbuf_get_ptr(b, 16, &p->daddr) == -1)
		return PKT_TRUNCATED;
	if (vtcfl >> 28 != 6)
		return PKT_MALFORMED;
	/* A jumbogram (plen 0) would need the hop-by-hop option: not here. */
	if (plen == 0)
		return PKT_MALFORMED;
	if (p->l3off + IP6_HLEN + plen > framelen)
		return PKT_TRUNCATED;
	p->ipver = 6;
	p->l3hlen = IP6_HLEN;
	p->ecn = (uint8_t)((vtcfl >> 20) & 3);
	p->l3end = p->l3off + IP6_HLEN + plen;
	/* Only the IP packet's own bytes count from here on. */
	b->len = p->l3end;
	while (ipv6_ext(nh)) {
		uint8_t next;

		if (rbuf_get_u8(b, &next) == -1 || rbuf_get_u8(b, &elen) == -1)
			return PKT_TRUNCATED;
		if (nh == 44) {
			if (rbuf_get_u16(b, &fragoff) == -1 ||
			    rbuf_skip(b, 4) == -1)
				return PKT_TRUNCATED;
			if ((fragoff & 0xfff8) != 0)
				p->fragment = 1;
		} else if (nh == 51) {
			if (rbuf_skip(b, ((size_t)elen + 2) * 4 - 2) == -1)
				return PKT_TRUNCATED;
		} else if (rbuf_skip(b, ((size_t)elen + 1) * 8 - 2) == -1)
			return PKT_TRUNCATED;
		nh = next;
	}
	p->proto = nh;
	p->l4off = b->off;
	return PKT_OK;
}

static enum pkt_status
parse_tcp(struct pkt *p, struct rbuf *b)
{
	uint8_t		 off, flags;
	uint16_t	 win;

	if (rbuf_get_u16(b, &p->sport) == -1 ||
	    rbuf_get_u16(b, &p->dport) == -1 ||
	    rbuf_get_u32(b, &p->seq) == -1 || rbuf_get_u32(b, &p->ack) == -1 ||
	    rbuf_get_u8(b, &off) == -1 || rbuf_get_u8(b, &flags) == -1 ||
	    rbuf_get_u16(b, &win) == -1 || rbuf_skip(b, 4) == -1)
		return PKT_TRUNCATED;
	p->tcp_hlen = (size_t)(off >> 4) * 4;
	if (p->tcp_hlen < TCP_MIN_HLEN)
		return PKT_MALFORMED;
	if (rbuf_skip(b, p->tcp_hlen - TCP_MIN_HLEN) == -1)
		return PKT_TRUNCATED;
	p->flags = flags;
	p->win = win;
	p->payload = p->l3end - p->l4off - p->tcp_hlen;
	p->tcp = 1;
	return PKT_OK;
}

enum pkt_status
pkt_parse(struct pkt *p, const uint8_t *frame, size_t len)
{
	struct rbuf	 b;
	uint16_t	 type;
	enum pkt_status	 st;

	memset(p, 0, sizeof(*p));
	rbuf_init(&b, frame, len);
	if (rbuf_skip(&b, 12) == -1 || rbuf_get_u16(&b, &type) == -1)
		return PKT_TRUNCATED;
	while (type == PKT_ETH_VLAN || type == PKT_ETH_QINQ) {
		if (rbuf_skip(&b, 2) == -1 || rbuf_get_u16(&b, &type) == -1)
			return PKT_TRUNCATED;
		p->vlans++;
	}
	p->ethertype = type;
	p->l3off = b.off;
	if (type == PKT_ETH_IPV4)
		st = parse_ipv4(p, &b, len);
	else if (type == PKT_ETH_IPV6)
		st = parse_ipv6(p, &b, len);
	else
		return PKT_NOT_IP;
	if (st != PKT_OK)
		return st;
	if (p->proto != PKT_PROTO_TCP || p->fragment)
		return PKT_OK;
	rbuf_init(&b, frame, p->l3end);
	b.off = p->l4off;
	return parse_tcp(p, &b);
}

int
pkt_tcp_options(const struct pkt *p, const uint8_t *frame,
    struct pkt_tcpopt *o)
{
	struct rbuf	 b;
	uint8_t		 kind, len;
	const uint8_t	*v;

	memset(o, 0, sizeof(*o));
	if (!p->tcp)
		return -1;
	rbuf_init(&b, frame + p->l4off + TCP_MIN_HLEN,
	    p->tcp_hlen - TCP_MIN_HLEN);
	while (rbuf_get_u8(&b, &kind) == 0) {
		if (kind == 0)		/* end of options */
			break;
		if (kind == 1)		/* no-op */
			continue;
		if (rbuf_get_u8(&b, &len) == -1 || len < 2 ||
		    rbuf_get_ptr(&b, (size_t)len - 2, &v) == -1)
			return -1;
		switch (kind) {
		case 2:
			if (len != 4)
				return -1;
			o->mss_set = 1;
			o->mss = (uint16_t)(v[0] << 8 | v[1]);
			break;
		case 3:
			if (len != 3)
				return -1;
			o->wscale_set = 1;
			/* RFC 7323: larger shifts are taken as 14. */
			o->wscale = v[0] > 14 ? 14 : v[0];
			break;
		case 4:
			if (len != 2)
				return -1;
			o->sack_ok = 1;
			break;
		case 8:
			if (len != 10)
				return -1;
			o->ts_set = 1;
			o->tsval = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 |
			    (uint32_t)v[2] << 8 | v[3];
			o->tsecr = (uint32_t)v[4] << 24 | (uint32_t)v[5] << 16 |
			    (uint32_t)v[6] << 8 | v[7];
			break;
		}
	}
	return 0;
}

uint16_t
pkt_csum_update(uint16_t csum, uint16_t old, uint16_t new)
{
	/* RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m') */
	uint32_t sum = (uint16_t)~csum + (uint32_t)(uint16_t)~old + new;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Replaces the 16-bit word at w, fixing the checksum at c (if any). */
static void
set16(uint8_t *w, uint16_t v, uint8_t *c)
{
	uint16_t old = get16(w);

	put_u16(w, v);
	if (c != NULL)
		put_u16(c, pkt_csum_update(get16(c), old, v));
}

void
pkt_set_ecn(uint8_t *frame, struct pkt *p, uint8_t ecn)
{
	uint8_t	*ip = frame + p->l3off;

	ecn &= 3;
	if (p->ipver == 4)
		set16(ip, (uint16_t)((get16(ip) & ~3) | ecn), ip + 10);
	else if (p->ipver == 6)
		/* Traffic class straddles bytes 0-1; IPv6 has no checksum. */
		set16(ip, (uint16_t)((get16(ip) & ~0x30) | ecn << 4), NULL);
	else
		return;
	p->ecn = ecn;
}

int
pkt_mark_ce(uint8_t *frame, struct pkt *p)
{
	if (p->ipver == 0 || p->ecn == PKT_ECN_NOT_ECT)
		return 0;
	if (p->ecn != PKT_ECN_CE)
		pkt_set_ecn(frame, p, PKT_ECN_CE);
	return 1;
}

void
pkt_tcp_set_win(uint8_t *frame, struct pkt *p, uint16_t win, int partial)
{
	uint8_t	*th = frame + p->l4off;

	if (!p->tcp)
		return;
	set16(th + 14, win, partial ? NULL : th + 16);
	p->win = win;
}

void
pkt_tcp_set_flags(uint8_t *frame, struct pkt *p, uint8_t flags, int partial)
{
	uint8_t	*th = frame + p->l4off;

	if (!p->tcp)
		return;
	/* The flags share a word with the data offset. */
	set16(th + 12, (uint16_t)((th[12] << 8) | flags),
	    partial ? NULL : th + 16);
	p->flags = flags;
}

uint32_t
pkt_csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t	 i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

uint16_t
pkt_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t
pkt_ipv4_csum(const uint8_t *frame, const struct pkt *p)
{
	const uint8_t	*ip = frame + p->l3off;
	uint32_t	 sum;

	sum = pkt_csum_add(0, ip, 10);
	sum = pkt_csum_add(sum, ip + 12, p->l3hlen - 12);
	return (uint16_t)~pkt_csum_fold(sum);
}

uint16_t
pkt_tcp_csum(const uint8_t *frame, const struct pkt *p)
{
	const uint8_t	*th = frame + p->l4off;
	size_t		 len = p->l3end - p->l4off, alen = p->ipver == 4 ? 4 : 16;
	uint32_t	 sum;

	sum = pkt_csum_add(0, p->saddr, alen);
	sum = pkt_csum_add(sum, p->daddr, alen);
	sum += (uint32_t)(len >> 16) + (uint32_t)(len & 0xffff);
	sum += PKT_PROTO_TCP;
	sum = pkt_csum_add(sum, th, 16);
	sum = pkt_csum_add(sum, th + 18, len - 18);
	return (uint16_t)~pkt_csum_fold(sum);
}

uint32_t
pkt_flow_hash(uint32_t h, const uint8_t *frame, size_t len)
{
	struct pkt	 p;
	uint8_t		 ports[4];
	size_t		 alen;

	if (pkt_parse(&p, frame, len) != PKT_OK || p.ipver == 0)
		return hash_fnv1a(h, frame, len < 14 ? len : 14);
	alen = p.ipver == 4 ? 4 : 16;
	h = hash_fnv1a(h, p.saddr, alen);
	h = hash_fnv1a(h, p.daddr, alen);
	h = hash_fnv1a(h, &p.proto, 1);
	if (p.tcp) {
		ports[0] = (uint8_t)(p.sport >> 8);
		ports[1] = (uint8_t)p.sport;
		ports[2] = (uint8_t)(p.dport >> 8);
		ports[3] = (uint8_t)p.dport;
		h = hash_fnv1a(h, ports, sizeof(ports));
	}
	return h;
}
