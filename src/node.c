#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "node.h"
#include "stmt.h"

static int
rbuf_get_u64(struct rbuf *b, uint64_t *v)
{
	uint32_t	 hi, lo;

	if (rbuf_get_u32(b, &hi) == -1 || rbuf_get_u32(b, &lo) == -1)
		return -1;
	*v = (uint64_t)hi << 32 | lo;
	return 0;
}

/* A name, or "*" where star is allowed (the broadcast row). */
static int
get_name(struct rbuf *b, char *dst, int star)
{
	uint8_t		 len;
	const uint8_t	*p;

	if (rbuf_get_u8(b, &len) == -1 || len == 0 || len > NODE_NAME_MAX ||
	    rbuf_get_ptr(b, len, &p) == -1 || memchr(p, '\0', len) != NULL)
		return -1;
	memcpy(dst, p, len);
	dst[len] = '\0';
	if (star && strcmp(dst, "*") == 0)
		return 0;
	return stmt_valid_name(dst) ? 0 : -1;
}

static int
get_rate(struct rbuf *b, struct node_rate *r)
{
	if (rbuf_get_u64(b, &r->bytes) == -1 ||
	    rbuf_get_u64(b, &r->frames) == -1 ||
	    rbuf_get_u32(b, &r->rate1) == -1 ||
	    rbuf_get_u32(b, &r->rate10) == -1)
		return -1;
	return 0;
}

static int
get_mac(struct rbuf *b, uint8_t mac[ETHER_ADDR_LEN])
{
	const uint8_t	*p;

	if (rbuf_get_ptr(b, ETHER_ADDR_LEN, &p) == -1)
		return -1;
	memcpy(mac, p, ETHER_ADDR_LEN);
	return 0;
}

#define BAD(w)	do { *why = (w); return NODE_MALFORMED; } while (0)
#define OVER(w)	do { *why = (w); return NODE_REFUSED; } while (0)

/* The fixed part: version, kind, lifetime, sequence, name, id. */
static int
decode_head(struct rbuf *b, struct node_hdr *h, const char **why)
{
	uint8_t		 version;

	if (rbuf_get_u8(b, &version) == -1 || rbuf_get_u8(b, &h->kind) == -1 ||
	    rbuf_get_u16(b, &h->lifetime) == -1 ||
	    rbuf_get_u64(b, &h->seq) == -1)
		BAD("short record");
	if (version != NODE_VERSION)
		BAD("unknown record version");
	if (h->seq == 0)
		BAD("record sequence 0");
	if (get_name(b, h->name, 0) == -1)
		BAD("bad node name in record");
	if (rbuf_get_u16(b, &h->id) == -1)
		BAD("short record");
	if (h->kind == NODE_KIND_TRAFFIC) {
		if (h->lifetime == 0 || h->lifetime > NODE_HOPS_MAX)
			BAD("traffic report hops out of range");
	} else if (h->lifetime < NODE_LIFETIME_MIN ||
	    h->lifetime > NODE_LIFETIME_MAX)
		BAD("record lifetime out of range");
	if (b->len > NODE_RECORD_MAX)
		OVER("record too large");
	if (h->seq > NODE_SEQ_MAX)
		OVER("record sequence out of range");
	if (h->kind != NODE_KIND_TOPO && h->kind != NODE_KIND_MACS &&
	    h->kind != NODE_KIND_TRAFFIC)
		OVER("unknown record kind");
	if ((h->kind == NODE_KIND_TOPO || h->kind == NODE_KIND_TRAFFIC) &&
	    h->id != 0)
		OVER("record id out of range");
	if (h->kind == NODE_KIND_MACS && h->id >= NODE_MAC_PAGES)
		OVER("MAC page out of range");
	return NODE_OK;
}

int
node_peek(const uint8_t *p, size_t n, struct node_hdr *h, const char **why)
{
	struct rbuf	 b;

	rbuf_init(&b, p, n);
	return decode_head(&b, h, why);
}

void
node_set_hops(uint8_t *p, size_t n, uint16_t hops)
{
	if (n >= 4)
		put_u16(p + 2, hops);
}

const char *
node_kind_name(unsigned int kind)
{
	switch (kind) {
	case NODE_KIND_TOPO:	return "topology";
	case NODE_KIND_MACS:	return "macs";
	case NODE_KIND_TRAFFIC:	return "traffic";
	}
	return "?";
}

const char *
node_cand_name(unsigned int kind)
{
	switch (kind) {
	case NODE_CAND_HOST:		return "host";
	case NODE_CAND_ADVERTISE:	return "advertise";
	case NODE_CAND_SEEN_IN:		return "seen-in";
	case NODE_CAND_SEEN_OUT:	return "seen-out";
	case NODE_CAND_SEEN_UDP:	return "seen-udp";
	}
	return "?";
}

int
node_cand_dialable(unsigned int kind)
{
	return kind == NODE_CAND_HOST || kind == NODE_CAND_ADVERTISE ||
	    kind == NODE_CAND_SEEN_IN;
}

/* One count more, refused over max. */
static int
more(uint16_t *n, size_t max, const char *over, const char **why)
{
	if (*n >= max)
		OVER(over);
	(*n)++;
	return NODE_OK;
}

static int
sec_links(struct rbuf *s, struct node_rec *r, const char **why)
{
	struct node_link *l;
	uint8_t		 flags;
	int		 v;

	while (rbuf_left(s) > 0) {
		if ((v = more(&r->nlinks, NODE_LINKS_MAX,
		    "too many links in record", why)) != NODE_OK)
			return v;
		l = &r->links[r->nlinks - 1];
		if (get_name(s, l->name, 0) == -1 ||
		    rbuf_get_u32(s, &l->rtt_us) == -1 ||
		    rbuf_get_u8(s, &flags) == -1)
			BAD("bad link in record");
	}
	return NODE_OK;
}

static int
sec_addrs(struct rbuf *s, struct node_rec *r, const char **why)
{
	const uint8_t	*a;
	uint8_t		 type, len;
	size_t		 j;
	int		 v;

	while (rbuf_left(s) > 0) {
		if (rbuf_get_u8(s, &type) == -1 || rbuf_get_u8(s, &len) == -1 ||
		    len == 0 || len > NODE_ADDR_MAX ||
		    rbuf_get_ptr(s, len, &a) == -1)
			BAD("bad address in record");
		if (type != NODE_ADDR_HOSTPORT) {
			r->unknown++;	/* a kind for a later version */
			continue;
		}
		for (j = 0; j < len; j++)
			if (a[j] < 0x21 || a[j] > 0x7e)
				BAD("unprintable address in record");
		if ((v = more(&r->naddrs, NODE_ADDRS_MAX,
		    "too many addresses in record", why)) != NODE_OK)
			return v;
		memcpy(r->addrs[r->naddrs - 1], a, len);
		r->addrs[r->naddrs - 1][len] = '\0';
	}
	return NODE_OK;
}

static int
sec_segs(struct rbuf *s, struct node_rec *r, const char **why)
{
	struct node_seg	*g;
	int		 v;

	while (rbuf_left(s) > 0) {
		if ((v = more(&r->nsegs, NODE_SEGS_MAX,
		    "too many segments in record", why)) != NODE_OK)
			return v;
		g = &r->segs[r->nsegs - 1];
		if (get_name(s, g->name, 0) == -1 ||
		    rbuf_get_u8(s, &g->flags) == -1 ||
		    rbuf_get_u32(s, &g->epoch) == -1)
			BAD("bad segment in record");
		g->flags &= NODE_SEG_ACTIVE;
	}
	return NODE_OK;
}

static int
sec_cands(struct rbuf *s, struct node_rec *r, const char **why)
{
	struct node_cand *c;
	const uint8_t	*a;
	uint8_t		 kind, len;
	size_t		 j;
	int		 v;

	while (rbuf_left(s) > 0) {
		if (rbuf_get_u8(s, &kind) == -1 || rbuf_get_u8(s, &len) == -1 ||
		    len == 0 || len > NODE_ADDR_MAX ||
		    rbuf_get_ptr(s, len, &a) == -1)
			BAD("bad candidate in record");
		for (j = 0; j < len; j++)
			if (a[j] < 0x21 || a[j] > 0x7e)
				BAD("unprintable candidate in record");
		if (kind == 0 || kind > NODE_CAND_KINDS) {
			r->unknown++;	/* a kind for a later version */
			continue;
		}
		if ((v = more(&r->ncands, NODE_CANDS_MAX,
		    "too many candidates in record", why)) != NODE_OK)
			return v;
		c = &r->cands[r->ncands - 1];
		c->kind = kind;
		memcpy(c->addr, a, len);
		c->addr[len] = '\0';
	}
	return NODE_OK;
}

static int
sec_macs(struct rbuf *s, struct node_rec *r, const char **why)
{
	struct node_mac	*m;
	int		 v;

	while (rbuf_left(s) > 0) {
		if ((v = more(&r->nmacs, NODE_PAGE_MACS,
		    "too many MACs in record", why)) != NODE_OK)
			return v;
		m = &r->macs[r->nmacs - 1];
		if (get_mac(s, m->mac) == -1 ||
		    rbuf_get_u32(s, &m->version) == -1)
			BAD("short MAC in record");
		if (ether_is_multicast(m->mac) || m->version == 0)
			BAD("multicast MAC or version 0 in record");
	}
	return NODE_OK;
}

static int
sec_pairs(struct rbuf *s, struct node_rec *r, const char **why)
{
	struct node_row	*w;
	int		 v;

	while (rbuf_left(s) > 0) {
		if ((v = more(&r->nrows, NODE_ROWS_MAX,
		    "too many traffic rows in record", why)) != NODE_OK)
			return v;
		w = &r->rows[r->nrows - 1];
		if (get_mac(s, w->src) == -1 || get_mac(s, w->dst) == -1 ||
		    get_rate(s, &w->r) == -1)
			BAD("short traffic row in record");
	}
	return NODE_OK;
}

static int
sec_dsts(struct rbuf *s, struct node_rec *r, const char **why)
{
	struct node_dst	*d;
	int		 v;

	while (rbuf_left(s) > 0) {
		if ((v = more(&r->ndsts, NODE_ROWS_MAX,
		    "too many traffic rows in record", why)) != NODE_OK)
			return v;
		d = &r->dsts[r->ndsts - 1];
		if (get_name(s, d->name, 1) == -1 || get_rate(s, &d->r) == -1)
			BAD("bad node traffic row in record");
	}
	return NODE_OK;
}

/* Is the section type one of this kind's (and so read, at most once)? */
static int
of_kind(uint8_t kind, uint8_t type)
{
	switch (type) {
	case NODE_SEC_LINKS:
	case NODE_SEC_ADDRS:
	case NODE_SEC_CANDS:
	case NODE_SEC_FLAGS:
	case NODE_SEC_SEGS:
		return kind == NODE_KIND_TOPO;
	case NODE_SEC_MACS:
		return kind == NODE_KIND_MACS;
	case NODE_SEC_TO:
	case NODE_SEC_PAIRS:
	case NODE_SEC_DSTS:
		return kind == NODE_KIND_TRAFFIC;
	}
	return 0;
}

int
node_decode(const uint8_t *p, size_t n, struct node_rec *r, const char **why)
{
	struct node_hdr	 h;
	struct rbuf	 b, s;
	const uint8_t	*body;
	uint32_t	 seen = 0;
	uint16_t	 len;
	uint8_t		 type;
	size_t		 at;
	int		 v;

	memset(r, 0, offsetof(struct node_rec, links));
	memset(&h, 0, sizeof(h));
	rbuf_init(&b, p, n);
	if ((v = decode_head(&b, &h, why)) != NODE_OK) {
		snprintf(r->name, sizeof(r->name), "%s", h.name);
		return v;
	}
	r->kind = h.kind;
	r->id = h.id;
	r->seq = h.seq;
	r->lifetime = h.lifetime;
	memcpy(r->name, h.name, sizeof(r->name));
	while (rbuf_left(&b) > 0) {
		at = b.off;
		if (rbuf_get_u8(&b, &type) == -1 || rbuf_get_u16(&b, &len) == -1)
			BAD("short section header in record");
		if (type == 0)
			BAD("section type 0 in record");
		if (rbuf_get_ptr(&b, len, &body) == -1)
			BAD("section runs past the record");
		if (type == NODE_SEC_SIG) {
			if (rbuf_left(&b) != 0)
				BAD("bytes after the signature of a record");
			r->signed_len = at;
			r->sig_off = (size_t)(body - p);
			r->sig_len = len;
			break;
		}
		if (type == NODE_SEC_CERT) {
			if (len == 0 || r->cert_len != 0)
				BAD("empty or second certificate in record");
			if (len > NODE_CERT_MAX)
				OVER("certificate in record too large");
			r->cert_off = (size_t)(body - p);
			r->cert_len = len;
			continue;
		}
		if (!of_kind(r->kind, type)) {
			r->unknown++;
			continue;
		}
		if (seen & (1U << type))
			BAD("a section given twice in record");
		seen |= 1U << type;
		rbuf_init(&s, body, len);
		switch (type) {
		case NODE_SEC_LINKS:
			v = sec_links(&s, r, why);
			break;
		case NODE_SEC_ADDRS:
			v = sec_addrs(&s, r, why);
			break;
		case NODE_SEC_CANDS:
			v = sec_cands(&s, r, why);
			break;
		case NODE_SEC_FLAGS:
			v = len == 4 && rbuf_get_u32(&s, &r->flags) == 0 ?
			    NODE_OK : (*why = "bad flags in record",
			    NODE_MALFORMED);
			break;
		case NODE_SEC_SEGS:
			v = sec_segs(&s, r, why);
			break;
		case NODE_SEC_MACS:
			v = sec_macs(&s, r, why);
			break;
		case NODE_SEC_TO:
			v = get_name(&s, r->to, 0) == 0 && rbuf_left(&s) == 0 ?
			    NODE_OK : (*why = "bad destination in report",
			    NODE_MALFORMED);
			break;
		case NODE_SEC_PAIRS:
			v = sec_pairs(&s, r, why);
			break;
		default:
			v = sec_dsts(&s, r, why);
			break;
		}
		if (v != NODE_OK)
			return v;
	}
	if (r->kind == NODE_KIND_TRAFFIC && r->to[0] == '\0')
		BAD("traffic report without a destination");
	return NODE_OK;
}

#undef BAD
#undef OVER

/* A writer that remembers running out of room instead of writing past it. */
struct wbuf {
	uint8_t		*p;
	size_t		 cap, off;
	int		 short_;
};

static void
w_bytes(struct wbuf *w, const void *p, size_t n)
{
	if (w->short_ || w->cap - w->off < n) {
		w->short_ = 1;
		return;
	}
	memcpy(w->p + w->off, p, n);
	w->off += n;
}

static void
w_u8(struct wbuf *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}

static void
w_u16(struct wbuf *w, uint16_t v)
{
	uint8_t	 b[2];

	put_u16(b, v);
	w_bytes(w, b, 2);
}

static void
w_u32(struct wbuf *w, uint32_t v)
{
	uint8_t	 b[4];

	put_u32(b, v);
	w_bytes(w, b, 4);
}

static void
w_u64(struct wbuf *w, uint64_t v)
{
	w_u32(w, (uint32_t)(v >> 32));
	w_u32(w, (uint32_t)v);
}

static void
w_str(struct wbuf *w, const char *s)
{
	size_t	 n = strlen(s);

	w_u8(w, (uint8_t)n);
	w_bytes(w, s, n);
}

static void
w_rate(struct wbuf *w, const struct node_rate *r)
{
	w_u64(w, r->bytes);
	w_u64(w, r->frames);
	w_u32(w, r->rate1);
	w_u32(w, r->rate10);
}

/* A section: its header now, its length once its body is written. */
static size_t
w_sec(struct wbuf *w, uint8_t type)
{
	w_u8(w, type);
	w_u16(w, 0);
	return w->off;
}

static void
w_sec_end(struct wbuf *w, size_t body)
{
	if (w->short_ || w->off - body > UINT16_MAX) {
		w->short_ = 1;
		return;
	}
	put_u16(w->p + body - 2, (uint16_t)(w->off - body));
}

size_t
node_encode(uint8_t *out, size_t cap, const struct node_rec *r)
{
	struct wbuf	 w = { out, cap, 0, 0 };
	size_t		 i, sec;

	if (r->nlinks > NODE_LINKS_MAX || r->nmacs > NODE_PAGE_MACS ||
	    r->naddrs > NODE_ADDRS_MAX || r->ncands > NODE_CANDS_MAX ||
	    r->nrows > NODE_ROWS_MAX ||
	    r->ndsts > NODE_ROWS_MAX || r->nsegs > NODE_SEGS_MAX ||
	    strlen(r->name) == 0 ||
	    strlen(r->name) > NODE_NAME_MAX || (r->kind == NODE_KIND_TRAFFIC &&
	    (strlen(r->to) == 0 || strlen(r->to) > NODE_NAME_MAX)))
		return 0;
	for (i = 0; i < r->ncands; i++)
		if (r->cands[i].addr[0] == '\0' || r->cands[i].kind == 0 ||
		    strlen(r->cands[i].addr) > NODE_ADDR_MAX)
			return 0;
	w_u8(&w, NODE_VERSION);
	w_u8(&w, r->kind);
	w_u16(&w, r->lifetime);
	w_u64(&w, r->seq);
	w_str(&w, r->name);
	w_u16(&w, r->id);
	switch (r->kind) {
	case NODE_KIND_TOPO:
		sec = w_sec(&w, NODE_SEC_LINKS);
		for (i = 0; i < r->nlinks; i++) {
			w_str(&w, r->links[i].name);
			w_u32(&w, r->links[i].rtt_us);
			w_u8(&w, 0);
		}
		w_sec_end(&w, sec);
		if (r->naddrs > 0) {
			sec = w_sec(&w, NODE_SEC_ADDRS);
			for (i = 0; i < r->naddrs; i++) {
				w_u8(&w, NODE_ADDR_HOSTPORT);
				w_str(&w, r->addrs[i]);
			}
			w_sec_end(&w, sec);
		}
		if (r->ncands > 0) {
			sec = w_sec(&w, NODE_SEC_CANDS);
			for (i = 0; i < r->ncands; i++) {
				w_u8(&w, r->cands[i].kind);
				w_str(&w, r->cands[i].addr);
			}
			w_sec_end(&w, sec);
		}
		if (r->flags != 0) {
			sec = w_sec(&w, NODE_SEC_FLAGS);
			w_u32(&w, r->flags);
			w_sec_end(&w, sec);
		}
		if (r->nsegs > 0) {
			sec = w_sec(&w, NODE_SEC_SEGS);
			for (i = 0; i < r->nsegs; i++) {
				w_str(&w, r->segs[i].name);
				w_u8(&w, r->segs[i].flags);
				w_u32(&w, r->segs[i].epoch);
			}
			w_sec_end(&w, sec);
		}
		break;
	case NODE_KIND_MACS:
		sec = w_sec(&w, NODE_SEC_MACS);
		for (i = 0; i < r->nmacs; i++) {
			w_bytes(&w, r->macs[i].mac, ETHER_ADDR_LEN);
			w_u32(&w, r->macs[i].version);
		}
		w_sec_end(&w, sec);
		break;
	case NODE_KIND_TRAFFIC:
		sec = w_sec(&w, NODE_SEC_TO);
		w_str(&w, r->to);
		w_sec_end(&w, sec);
		if (r->nrows > 0) {
			sec = w_sec(&w, NODE_SEC_PAIRS);
			for (i = 0; i < r->nrows; i++) {
				w_bytes(&w, r->rows[i].src, ETHER_ADDR_LEN);
				w_bytes(&w, r->rows[i].dst, ETHER_ADDR_LEN);
				w_rate(&w, &r->rows[i].r);
			}
			w_sec_end(&w, sec);
		}
		if (r->ndsts > 0) {
			sec = w_sec(&w, NODE_SEC_DSTS);
			for (i = 0; i < r->ndsts; i++) {
				w_str(&w, r->dsts[i].name);
				w_rate(&w, &r->dsts[i].r);
			}
			w_sec_end(&w, sec);
		}
		break;
	default:
		return 0;
	}
	if (w.short_ || w.off > NODE_RECORD_MAX)
		return 0;
	return w.off;
}
