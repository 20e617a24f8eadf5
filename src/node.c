#include <stddef.h>
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

/* The fixed part: version, lifetime, sequence, name. */
static int
decode_head(struct rbuf *b, char *name, uint64_t *seq, uint16_t *lifetime,
    const char **why)
{
	uint8_t		 version, reserved;

	if (rbuf_get_u8(b, &version) == -1 || rbuf_get_u8(b, &reserved) == -1 ||
	    rbuf_get_u16(b, lifetime) == -1 || rbuf_get_u64(b, seq) == -1)
		BAD("short record");
	if (version != NODE_VERSION || reserved != 0)
		BAD("unknown record version");
	if (*lifetime < NODE_LIFETIME_MIN || *lifetime > NODE_LIFETIME_MAX)
		BAD("record lifetime out of range");
	if (*seq == 0)
		BAD("record sequence 0");
	if (get_name(b, name, 0) == -1)
		BAD("bad node name in record");
	if (b->len > NODE_RECORD_MAX)
		OVER("record too large");
	if (*seq > NODE_SEQ_MAX)
		OVER("record sequence out of range");
	return NODE_OK;
}

int
node_peek(const uint8_t *p, size_t n, char name[NODE_NAME_MAX + 1],
    uint64_t *seq, uint16_t *lifetime, const char **why)
{
	struct rbuf	 b;

	rbuf_init(&b, p, n);
	return decode_head(&b, name, seq, lifetime, why);
}

/* A count, refused over max (well-formed, but more than we keep). */
static int
get_count(struct rbuf *b, uint16_t *n, size_t max, const char *over,
    const char **why)
{
	if (rbuf_get_u16(b, n) == -1)
		BAD("short record");
	if (*n > max)
		OVER(over);
	return NODE_OK;
}

int
node_decode(const uint8_t *p, size_t n, struct node_rec *r, const char **why)
{
	struct rbuf	 b;
	const uint8_t	*s;
	uint8_t		 len;
	size_t		 i, j;
	int		 v;

	memset(r, 0, offsetof(struct node_rec, links));
	rbuf_init(&b, p, n);
	if ((v = decode_head(&b, r->name, &r->seq, &r->lifetime, why)) != 0)
		return v;
	if ((v = get_count(&b, &r->nlinks, NODE_LINKS_MAX,
	    "too many links in record", why)) != 0)
		return v;
	for (i = 0; i < r->nlinks; i++)
		if (get_name(&b, r->links[i].name, 0) == -1 ||
		    rbuf_get_u32(&b, &r->links[i].rtt_us) == -1)
			BAD("bad link in record");
	if ((v = get_count(&b, &r->nmacs, NODE_MACS_MAX,
	    "too many MACs in record", why)) != 0)
		return v;
	for (i = 0; i < r->nmacs; i++) {
		if (get_mac(&b, r->macs[i].mac) == -1 ||
		    rbuf_get_u32(&b, &r->macs[i].version) == -1)
			BAD("short MAC in record");
		if (ether_is_multicast(r->macs[i].mac) ||
		    r->macs[i].version == 0)
			BAD("multicast MAC or version 0 in record");
	}
	if ((v = get_count(&b, &r->naddrs, NODE_ADDRS_MAX,
	    "too many addresses in record", why)) != 0)
		return v;
	for (i = 0; i < r->naddrs; i++) {
		if (rbuf_get_u8(&b, &len) == -1 || len == 0 ||
		    len > NODE_ADDR_MAX || rbuf_get_ptr(&b, len, &s) == -1)
			BAD("bad address in record");
		for (j = 0; j < len; j++)
			if (s[j] < 0x21 || s[j] > 0x7e)
				BAD("unprintable address in record");
		memcpy(r->addrs[i], s, len);
		r->addrs[i][len] = '\0';
	}
	if ((v = get_count(&b, &r->nrows, NODE_ROWS_MAX,
	    "too many traffic rows in record", why)) != 0)
		return v;
	for (i = 0; i < r->nrows; i++)
		if (get_mac(&b, r->rows[i].src) == -1 ||
		    get_mac(&b, r->rows[i].dst) == -1 ||
		    get_rate(&b, &r->rows[i].r) == -1)
			BAD("short traffic row in record");
	if ((v = get_count(&b, &r->ndsts, NODE_ROWS_MAX,
	    "too many traffic rows in record", why)) != 0)
		return v;
	for (i = 0; i < r->ndsts; i++)
		if (get_name(&b, r->dsts[i].name, 1) == -1 ||
		    get_rate(&b, &r->dsts[i].r) == -1)
			BAD("bad node traffic row in record");
	if (rbuf_left(&b) != 0)
		BAD("trailing bytes after record");
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

size_t
node_encode(uint8_t *out, size_t cap, const struct node_rec *r)
{
	struct wbuf	 w = { out, cap, 0, 0 };
	size_t		 i;

	if (r->nlinks > NODE_LINKS_MAX || r->nmacs > NODE_MACS_MAX ||
	    r->naddrs > NODE_ADDRS_MAX || r->nrows > NODE_ROWS_MAX ||
	    r->ndsts > NODE_ROWS_MAX || strlen(r->name) == 0 ||
	    strlen(r->name) > NODE_NAME_MAX)
		return 0;
	w_u8(&w, NODE_VERSION);
	w_u8(&w, 0);
	w_u16(&w, r->lifetime);
	w_u64(&w, r->seq);
	w_str(&w, r->name);
	w_u16(&w, r->nlinks);
	for (i = 0; i < r->nlinks; i++) {
		w_str(&w, r->links[i].name);
		w_u32(&w, r->links[i].rtt_us);
	}
	w_u16(&w, r->nmacs);
	for (i = 0; i < r->nmacs; i++) {
		w_bytes(&w, r->macs[i].mac, ETHER_ADDR_LEN);
		w_u32(&w, r->macs[i].version);
	}
	w_u16(&w, r->naddrs);
	for (i = 0; i < r->naddrs; i++)
		w_str(&w, r->addrs[i]);
	w_u16(&w, r->nrows);
	for (i = 0; i < r->nrows; i++) {
		w_bytes(&w, r->rows[i].src, ETHER_ADDR_LEN);
		w_bytes(&w, r->rows[i].dst, ETHER_ADDR_LEN);
		w_rate(&w, &r->rows[i].r);
	}
	w_u16(&w, r->ndsts);
	for (i = 0; i < r->ndsts; i++) {
		w_str(&w, r->dsts[i].name);
		w_rate(&w, &r->dsts[i].r);
	}
	if (w.short_ || w.off > NODE_RECORD_MAX)
		return 0;
	return w.off;
}
