/*
 * The control plane's pure parts: the record codec (node.h), the database
 * and its flooding decisions with an injected clock (nodedb.h), paths and
 * the broadcast tree (spf.h), and the traffic matrix (traffic.h).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "node.h"
#include "nodedb.h"
#include "spf.h"
#include "traffic.h"

static const uint8_t mac1[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t mac2[6] = { 2, 0, 0, 0, 0, 2 };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static struct node_rec *
sample(const char *name, uint64_t seq)
{
	struct node_rec	*r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	r->kind = NODE_KIND_TOPO;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->seq = seq;
	r->lifetime = 90;
	r->nlinks = 2;
	snprintf(r->links[0].name, sizeof(r->links[0].name), "proxy");
	r->links[0].rtt_us = 250;
	snprintf(r->links[1].name, sizeof(r->links[1].name), "host2");
	r->links[1].rtt_us = 70000;
	r->naddrs = 1;
	snprintf(r->addrs[0], sizeof(r->addrs[0]), "10.66.0.2:7870");
	r->flags = NODE_F_TRAFFIC;
	return r;
}

static struct node_rec *
sample_macs(const char *name, uint64_t seq, uint16_t page)
{
	struct node_rec	*r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	r->kind = NODE_KIND_MACS;
	r->id = page;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->seq = seq;
	r->lifetime = 90;
	r->nmacs = 2;
	memcpy(r->macs[0].mac, mac1, 6);
	r->macs[0].version = 1;
	memcpy(r->macs[1].mac, mac2, 6);
	r->macs[1].version = 7;
	return r;
}

static struct node_rec *
sample_traffic(const char *name, const char *to)
{
	struct node_rec	*r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	r->kind = NODE_KIND_TRAFFIC;
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->to, sizeof(r->to), "%s", to);
	r->seq = 77;
	r->lifetime = 16;	/* hops */
	r->nrows = 1;
	memcpy(r->rows[0].src, mac1, 6);
	memcpy(r->rows[0].dst, mac2, 6);
	r->rows[0].r.bytes = 1ULL << 40;
	r->rows[0].r.frames = 12345;
	r->rows[0].r.rate1 = 1000;
	r->rows[0].r.rate10 = 900;
	r->ndsts = 2;
	snprintf(r->dsts[0].name, sizeof(r->dsts[0].name), "host2");
	r->dsts[0].r.bytes = 42;
	snprintf(r->dsts[1].name, sizeof(r->dsts[1].name), "*");
	r->dsts[1].r.frames = 3;
	return r;
}

START_TEST(codec_roundtrip)
{
	struct node_rec	*r = sample("host1", 1234567890123ULL);
	struct node_rec	*g = calloc(1, sizeof(*g));
	uint8_t		 buf[NODE_RECORD_MAX];
	struct node_hdr	 h;
	const char	*why = NULL;
	size_t		 n;

	n = node_encode(buf, sizeof(buf), r);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(buf[0], 2);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->kind, NODE_KIND_TOPO);
	ck_assert_str_eq(g->name, "host1");
	ck_assert_uint_eq(g->seq, 1234567890123ULL);
	ck_assert_uint_eq(g->lifetime, 90);
	ck_assert_uint_eq(g->nlinks, 2);
	ck_assert_str_eq(g->links[1].name, "host2");
	ck_assert_uint_eq(g->links[1].rtt_us, 70000);
	ck_assert_str_eq(g->addrs[0], "10.66.0.2:7870");
	ck_assert_uint_eq(g->flags, NODE_F_TRAFFIC);
	ck_assert_uint_eq(g->nsegs, 0);
	ck_assert_int_eq(node_peek(buf, n, &h, &why), NODE_OK);
	ck_assert_str_eq(h.name, "host1");
	ck_assert_uint_eq(h.seq, 1234567890123ULL);
	ck_assert_uint_eq(h.kind, NODE_KIND_TOPO);
	/* Too small a buffer: 0, nothing written past it. */
	ck_assert_uint_eq(node_encode(buf, n - 1, r), 0);
	/* The LAN segments it attaches, the one it forwards marked. */
	r->nsegs = 2;
	snprintf(r->segs[0].name, sizeof(r->segs[0].name), "home");
	snprintf(r->segs[1].name, sizeof(r->segs[1].name), "office");
	r->segs[1].flags = NODE_SEG_ACTIVE;
	r->segs[1].epoch = 7;
	n = node_encode(buf, sizeof(buf), r);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->nsegs, 2);
	ck_assert_str_eq(g->segs[0].name, "home");
	ck_assert_uint_eq(g->segs[0].flags, 0);
	ck_assert_str_eq(g->segs[1].name, "office");
	ck_assert_uint_eq(g->segs[1].flags, NODE_SEG_ACTIVE);
	ck_assert_uint_eq(g->segs[1].epoch, 7);
	/* Flags of a later version are ignored. */
	buf[n - 5] = 0xf1;
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->segs[1].flags, NODE_SEG_ACTIVE);
	/* A bad name in it closes the link; more than the limit is refused. */
	buf[n - 11] = '/';
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_MALFORMED);
	ck_assert_str_eq(why, "bad segment in record");
	r->nsegs = NODE_SEGS_MAX + 1;
	ck_assert_uint_eq(node_encode(buf, sizeof(buf), r), 0);
	free(r);

	r = sample_macs("host1", 9, 3);
	n = node_encode(buf, sizeof(buf), r);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->kind, NODE_KIND_MACS);
	ck_assert_uint_eq(g->id, 3);
	ck_assert_uint_eq(g->nmacs, 2);
	ck_assert_mem_eq(g->macs[1].mac, mac2, 6);
	ck_assert_uint_eq(g->macs[1].version, 7);
	free(r);

	r = sample_traffic("host1", "proxy");
	n = node_encode(buf, sizeof(buf), r);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_str_eq(g->to, "proxy");
	ck_assert_uint_eq(g->lifetime, 16);
	ck_assert_uint_eq(g->rows[0].r.bytes, 1ULL << 40);
	ck_assert_uint_eq(g->rows[0].r.frames, 12345);
	ck_assert_uint_eq(g->rows[0].r.rate10, 900);
	ck_assert_str_eq(g->dsts[1].name, "*");
	ck_assert_uint_eq(g->dsts[1].r.frames, 3);
	node_set_hops(buf, n, 15);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->lifetime, 15);
	free(r);
	free(g);
}
END_TEST

/*
 * Sections of types it does not know (a later version's) are skipped and
 * stay in the bytes; a signature section ends the record.
 */
/* Candidates: each kind back, an unknown kind skipped, limits kept. */
START_TEST(codec_cands)
{
	struct node_rec	*r = sample("host2", 5);
	struct node_rec	*g = calloc(1, sizeof(*g));
	uint8_t		 buf[NODE_RECORD_MAX];
	const char	*why = NULL;
	size_t		 n, i;

	r->ncands = 3;
	r->cands[0].kind = NODE_CAND_HOST;
	snprintf(r->cands[0].addr, sizeof(r->cands[0].addr), "10.0.2.2:7870");
	r->cands[1].kind = NODE_CAND_SEEN_OUT;
	snprintf(r->cands[1].addr, sizeof(r->cands[1].addr),
	    "198.51.100.2:40311");
	r->cands[2].kind = NODE_CAND_SEEN_UDP;
	snprintf(r->cands[2].addr, sizeof(r->cands[2].addr),
	    "198.51.100.2:7870");
	n = node_encode(buf, sizeof(buf), r);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->ncands, 3);
	ck_assert_uint_eq(g->cands[1].kind, NODE_CAND_SEEN_OUT);
	ck_assert_str_eq(g->cands[1].addr, "198.51.100.2:40311");
	ck_assert_str_eq(g->cands[2].addr, "198.51.100.2:7870");
	ck_assert_str_eq(node_cand_name(g->cands[2].kind), "seen-udp");
	ck_assert(node_cand_dialable(NODE_CAND_HOST));
	ck_assert(!node_cand_dialable(NODE_CAND_SEEN_OUT));
	/* A kind of a later version: skipped, the others read. */
	for (i = 0; i + 1 < n; i++)
		if (buf[i] == NODE_CAND_SEEN_OUT && buf[i + 1] == 18)
			buf[i] = 77;
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->ncands, 2);
	ck_assert_uint_eq(g->unknown, 1);
	/* An empty address is not encoded. */
	r->cands[0].addr[0] = '\0';
	ck_assert_uint_eq(node_encode(buf, sizeof(buf), r), 0);
	/* Over the limit: refused, not malformed. */
	r->ncands = NODE_CANDS_MAX + 1;
	ck_assert_uint_eq(node_encode(buf, sizeof(buf), r), 0);
	r->ncands = NODE_CANDS_MAX;
	for (i = 0; i < NODE_CANDS_MAX; i++) {
		r->cands[i].kind = NODE_CAND_HOST;
		snprintf(r->cands[i].addr, sizeof(r->cands[i].addr),
		    "10.0.0.%zu:7870", i + 1);
	}
	n = node_encode(buf, sizeof(buf), r);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->ncands, NODE_CANDS_MAX);
	free(r);
	free(g);
}
END_TEST

START_TEST(codec_extensible)
{
	struct node_rec	*r = sample("host1", 5);
	struct node_rec	*g = calloc(1, sizeof(*g));
	uint8_t		 buf[NODE_RECORD_MAX];
	const char	*why = NULL;
	size_t		 n, m;

	n = node_encode(buf, sizeof(buf), r);
	/* An unknown section, then a MACS section (not a topology's). */
	memcpy(buf + n, "\x40\x00\x03" "abc", 6);
	memcpy(buf + n + 6, "\x04\x00\x00", 3);
	m = n + 9;
	ck_assert_int_eq(node_decode(buf, m, g, &why), NODE_OK);
	ck_assert_uint_eq(g->unknown, 2);
	ck_assert_uint_eq(g->nlinks, 2);
	ck_assert_uint_eq(g->signed_len, 0);
	/* An address of another kind is skipped too. */
	/* A signature: last, and what it covers is known. */
	memcpy(buf + m, "\xff\x00\x02" "zz", 5);
	ck_assert_int_eq(node_decode(buf, m + 5, g, &why), NODE_OK);
	ck_assert_uint_eq(g->signed_len, m);
	buf[m + 5] = 1;
	ck_assert_int_eq(node_decode(buf, m + 6, g, &why), NODE_MALFORMED);
	ck_assert_str_eq(why, "bytes after the signature of a record");
	/* A known section given twice. */
	memcpy(buf + n, "\x03\x00\x04\x00\x00\x00\x00", 7);
	ck_assert_int_eq(node_decode(buf, n + 7, g, &why), NODE_MALFORMED);
	ck_assert_str_eq(why, "a section given twice in record");
	/* A kind this version does not know: refused, the link stays. */
	n = node_encode(buf, sizeof(buf), r);
	buf[1] = 9;
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_REFUSED);
	free(r);
	free(g);
}
END_TEST

START_TEST(codec_malformed)
{
	struct node_rec	*r = sample("host1", 5);
	struct node_rec	*g = calloc(1, sizeof(*g));
	struct node_rec	*mp = sample_macs("host1", 5, 0);
	uint8_t		 buf[NODE_RECORD_MAX + 1];
	const char	*why;
	size_t		 n, i;

	n = node_encode(buf, sizeof(buf), r);
	/*
	 * Every truncation is read within its bytes: malformed, but where it
	 * ends between sections (they are all optional), well-formed.
	 */
	for (i = 0; i < n; i++) {
		why = NULL;
		if (node_decode(buf, i, g, &why) == NODE_OK) {
			ck_assert_uint_ge(i, 12 + 1 + 5 + 2);
			continue;
		}
		ck_assert_ptr_nonnull(why);
	}
	buf[n] = 0;
	ck_assert_int_eq(node_decode(buf, n + 1, g, &why), NODE_MALFORMED);
	ck_assert_str_eq(why, "short section header in record");
	memcpy(buf + n, "junk", 4);
	ck_assert_int_eq(node_decode(buf, n + 4, g, &why), NODE_MALFORMED);
	ck_assert_str_eq(why, "section runs past the record");
	/* A multicast MAC. */
	mp->macs[0].mac[0] = 1;
	n = node_encode(buf, sizeof(buf), mp);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_MALFORMED);
	/* A bad neighbour name. */
	snprintf(r->links[0].name, sizeof(r->links[0].name), "-x");
	n = node_encode(buf, sizeof(buf), r);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_MALFORMED);
	snprintf(r->links[0].name, sizeof(r->links[0].name), "proxy");
	/* Version (1 too), lifetime, sequence 0. */
	n = node_encode(buf, sizeof(buf), r);
	buf[0] = 1;
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_MALFORMED);
	ck_assert_str_eq(why, "unknown record version");
	buf[0] = NODE_VERSION;
	put_u16(buf + 2, 1);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_MALFORMED);
	put_u16(buf + 2, 90);
	memset(buf + 4, 0, 8);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_MALFORMED);
	/* A traffic report without its destination. */
	free(r);
	r = sample_traffic("host1", "proxy");
	r->to[0] = '\0';
	ck_assert_uint_eq(node_encode(buf, sizeof(buf), r), 0);
	free(r);
	free(mp);
	free(g);
}
END_TEST

START_TEST(codec_limits)
{
	struct node_rec	*r = sample_macs("host1", 5, 0);
	struct node_rec	*g = calloc(1, sizeof(*g));
	uint8_t		 buf[NODE_RECORD_MAX];
	const char	*why;
	size_t		 n, i;

	/* A sequence above NODE_SEQ_MAX: refused, not malformed. */
	r->seq = NODE_SEQ_MAX + 1;
	n = node_encode(buf, sizeof(buf), r);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_REFUSED);
	ck_assert_str_eq(why, "record sequence out of range");
	/* A page of a thousand MACs: refused at the one past the page. */
	r->seq = 5;
	n = node_encode(buf, sizeof(buf), r);
	put_u16(buf + n - 2 * 10 - 2, 1000 * 10);
	for (i = 0; i < 1000; i++) {
		memcpy(buf + n - 20 + i * 10, mac1, 6);
		buf[n - 20 + i * 10 + 5] = (uint8_t)i;
		put_u32(buf + n - 20 + i * 10 + 6, 1);
	}
	ck_assert_int_eq(node_decode(buf, n - 20 + 10000, g, &why),
	    NODE_REFUSED);
	ck_assert_str_eq(why, "too many MACs in record");
	/* A page out of range. */
	r->id = NODE_MAC_PAGES;
	n = node_encode(buf, sizeof(buf), r);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_REFUSED);
	/* The encoder will not make what the decoder refuses. */
	r->id = 0;
	r->nmacs = NODE_PAGE_MACS + 1;
	ck_assert_uint_eq(node_encode(buf, sizeof(buf), r), 0);
	free(r);
	/* A proxy of a thousand nodes fits in one topology record. */
	r = sample("proxy", 5);
	r->nlinks = NODE_LINKS_MAX;
	for (i = 0; i < NODE_LINKS_MAX; i++)
		snprintf(r->links[i].name, sizeof(r->links[i].name),
		    "host-with-a-long-name%04zu", i);
	ck_assert_uint_gt(n = node_encode(buf, sizeof(buf), r), 0);
	ck_assert_int_eq(node_decode(buf, n, g, &why), NODE_OK);
	ck_assert_uint_eq(g->nlinks, NODE_LINKS_MAX);
	free(r);
	free(g);
}
END_TEST

/* The fixed part of a topology record of name, for the database. */
static struct node_hdr
hdr(const char *name, uint64_t seq, uint16_t lifetime)
{
	struct node_hdr	 h;

	memset(&h, 0, sizeof(h));
	h.kind = NODE_KIND_TOPO;
	snprintf(h.name, sizeof(h.name), "%s", name);
	h.seq = seq;
	h.lifetime = lifetime;
	return h;
}

static enum nodedb_result
offer(struct nodedb *db, const uint8_t *b, size_t n, const char *name,
    uint64_t seq, uint16_t lifetime, uint64_t now)
{
	struct node_hdr	 h = hdr(name, seq, lifetime);

	return nodedb_offer(db, b, n, &h, now);
}

static int
originate(struct nodedb *db, const uint8_t *b, size_t n, uint64_t seq,
    uint16_t lifetime, uint64_t now)
{
	struct node_hdr	 h = hdr("self", seq, lifetime);

	return nodedb_originate(db, b, n, &h, now);
}

/* A record's bytes for the database: just the fixed part matters. */
static size_t
raw(uint8_t *buf, const char *name, uint64_t seq, uint16_t lifetime)
{
	struct node_rec	*r = sample(name, seq);
	size_t		 n;

	r->lifetime = lifetime;
	n = node_encode(buf, NODE_RECORD_MAX, r);
	free(r);
	return n;
}

START_TEST(db_flooding)
{
	struct nodedb	*db = nodedb_new("self", 3, NULL);
	uint8_t		 b[NODE_RECORD_MAX];
	size_t		 n;

	n = raw(b, "a", 10, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 10, 90, 1000), NODEDB_NEW);
	ck_assert_int_eq(offer(db, b, n, "a", 10, 90, 1001), NODEDB_SAME);
	n = raw(b, "a", 9, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 9, 90, 2000),
	    NODEDB_OLDER);
	n = raw(b, "a", 11, 90);
	/* Newer, but within MinArrival of the last: refused. */
	ck_assert_int_eq(offer(db, b, n, "a", 11, 90,
	    1000 + NODEDB_MIN_ARRIVAL_MS - 1), NODEDB_TOO_SOON);
	ck_assert_int_eq(offer(db, b, n, "a", 11, 90,
	    1000 + NODEDB_MIN_ARRIVAL_MS), NODEDB_NEW);
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->seq, 11);
	/* Our own record comes back from before a restart. */
	n = raw(b, "self", 5, 90);
	ck_assert_int_eq(originate(db, b, n, 5, 90, 0), 0);
	ck_assert_int_eq(offer(db, b, n, "self", 5, 90, 3000),
	    NODEDB_SAME);
	n = raw(b, "self", 4, 90);
	ck_assert_int_eq(offer(db, b, n, "self", 4, 90, 3000),
	    NODEDB_OLDER);
	n = raw(b, "self", 500, 90);
	ck_assert_int_eq(offer(db, b, n, "self", 500, 90, 3000),
	    NODEDB_SELF);
	ck_assert_uint_eq(nodedb_get(db, "self", NODE_KIND_TOPO, 0)->seq, 5);
	/* Three records at most (ours counts). */
	n = raw(b, "b", 1, 90);
	ck_assert_int_eq(offer(db, b, n, "b", 1, 90, 3000), NODEDB_NEW);
	n = raw(b, "c", 1, 90);
	ck_assert_int_eq(offer(db, b, n, "c", 1, 90, 3000),
	    NODEDB_FULL);
	ck_assert_uint_eq(nodedb_count(db), 3);
	/* In name order. */
	ck_assert_str_eq(nodedb_at(db, 0)->name, "a");
	ck_assert_str_eq(nodedb_at(db, 1)->name, "b");
	ck_assert_str_eq(nodedb_at(db, 2)->name, "self");
	nodedb_free(db);
}
END_TEST

/* What nodedb_late() hands back, offered as routing does once checked. */
struct late {
	struct nodedb	*db;
	uint64_t	 now;
	const void	*refuse;	/* copies from here fail the check */
	size_t		 n;
	uint64_t	 seqs[16];
};

static int
late_cb(const uint8_t *raw, size_t n, const void *from, void *arg)
{
	struct late	*l = arg;
	struct node_hdr	 h;
	const char	*why;

	ck_assert_int_eq(node_peek(raw, n, &h, &why), NODE_OK);
	ck_assert_uint_lt(l->n, 16);
	l->seqs[l->n++] = h.seq;
	if (from != NULL && from == l->refuse)
		return 0;
	(void)nodedb_offer(l->db, raw, n, &h, l->now);
	return 1;
}

static size_t
late(struct late *l, uint64_t now)
{
	l->now = now;
	return nodedb_late(l->db, now, late_cb, l);
}

/*
 * A newer copy that comes too soon (it overtook the last by a faster
 * path) is kept aside and handed back once the interval has passed,
 * unless a newer one came meanwhile.
 */
START_TEST(db_late)
{
	struct nodedb	*db = nodedb_new("self", 0, NULL);
	uint8_t		 b[NODE_RECORD_MAX];
	struct late	 l = { .db = db };
	struct nodedb_stats st;
	size_t		 n;

	n = raw(b, "a", 10, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 10, 90, 1000), NODEDB_NEW);
	n = raw(b, "a", 12, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 12, 90, 1010),
	    NODEDB_TOO_SOON);
	/* An older one than that, also too soon: 12 stays the one kept. */
	n = raw(b, "a", 11, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 11, 90, 1020),
	    NODEDB_TOO_SOON);
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->seq, 10);
	/* Not yet. */
	ck_assert_uint_eq(late(&l, 1000 + NODEDB_MIN_ARRIVAL_MS - 1), 1);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_uint_eq(late(&l, 1000 + NODEDB_MIN_ARRIVAL_MS), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.seqs[0], 12);
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->seq, 12);
	n = raw(b, "a", 12, 90);
	ck_assert_mem_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->raw, b, n);
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->received_ms,
	    1000 + NODEDB_MIN_ARRIVAL_MS);
	/* Kept, then overtaken by a newer copy in time: nothing to take. */
	n = raw(b, "a", 13, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 13, 90, 1060),
	    NODEDB_TOO_SOON);
	n = raw(b, "a", 14, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 14, 90, 1100), NODEDB_NEW);
	ck_assert_uint_eq(late(&l, 2000), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->seq, 14);
	/* A record that ages out takes its kept copy with it. */
	n = raw(b, "a", 15, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 15, 90, 1110),
	    NODEDB_TOO_SOON);
	ck_assert_uint_eq(nodedb_age(db, 1100 + 90 * 1000, NULL, NULL), 1);
	ck_assert_uint_eq(late(&l, 200000), 0);
	nodedb_stats(db, &st);
	ck_assert_uint_eq(st.delayed, 3);
	ck_assert_uint_eq(st.late, 1);
	nodedb_free(db);
}
END_TEST

/*
 * Copies kept aside before they are checked, one per link: an insider's
 * copy in another node's name, with a higher sequence, displaces only its
 * own link's; when its check fails the real one is taken.
 */
START_TEST(db_defer_per_link)
{
	struct nodedb	*db = nodedb_new("self", 0, NULL);
	uint8_t		 b[NODE_RECORD_MAX];
	struct late	 l = { .db = db };
	struct node_hdr	 h;
	int		 real, forger;
	size_t		 n;

	l.refuse = &forger;
	n = raw(b, "a", 10, 90);
	ck_assert_int_eq(offer(db, b, n, "a", 10, 90, 1000), NODEDB_NEW);
	/* Not too soon: checked now. */
	h = hdr("a", 11, 90);
	ck_assert_int_eq(nodedb_defer(db, b, n, &h, &real, 1000 +
	    NODEDB_MIN_ARRIVAL_MS), 0);
	/* Unknown records and ours are never deferred. */
	h = hdr("b", 11, 90);
	ck_assert_int_eq(nodedb_defer(db, b, n, &h, &real, 1001), 0);
	h = hdr("self", 11, 90);
	ck_assert_int_eq(nodedb_defer(db, b, n, &h, &real, 1001), 0);
	n = raw(b, "a", 11, 90);
	h = hdr("a", 11, 90);
	ck_assert_int_eq(nodedb_defer(db, b, n, &h, &real, 1010), 1);
	n = raw(b, "a", 99999, 90);
	h = hdr("a", 99999, 90);
	ck_assert_int_eq(nodedb_defer(db, b, n, &h, &forger, 1011), 1);
	n = raw(b, "a", 99998, 90);
	h = hdr("a", 99998, 90);
	ck_assert_int_eq(nodedb_defer(db, b, n, &h, &forger, 1012), 1);
	ck_assert_uint_eq(late(&l, 1000 + NODEDB_MIN_ARRIVAL_MS), 0);
	/* The forger's newest first, refused; then the real one. */
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.seqs[0], 99999);
	ck_assert_uint_eq(l.seqs[1], 11);
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->seq, 11);
	nodedb_free(db);
}
END_TEST

/*
 * One origin's records past its burst are taken at its rate, the newest
 * of each kept aside: however fast they come, at most the burst and
 * NODEDB_ORIGIN_RATE a second are taken, and the last of each is held at
 * the end.
 */
START_TEST(db_origin_rate)
{
	struct nodedb	*db = nodedb_new("self", 0, NULL);
	uint8_t		 b[256];
	struct node_rec	*rec = calloc(1, sizeof(*rec));
	struct late	 l = { .db = db };
	struct node_hdr	 h;
	struct nodedb_stats st;
	uint64_t	 t, seq = 1;
	size_t		 n, k;
	int		 from;

	ck_assert_ptr_nonnull(rec);
	snprintf(rec->name, sizeof(rec->name), "a");
	rec->lifetime = 90;
	rec->nmacs = 1;
	rec->macs[0].mac[0] = 2;
	rec->macs[0].version = 1;
	for (t = 1000; t < 3000; t++) {
		for (k = 0; k <= NODE_MAC_PAGES; k++) {
			rec->kind = k == 0 ? NODE_KIND_TOPO : NODE_KIND_MACS;
			rec->id = k == 0 ? 0 : (uint16_t)(k - 1);
			rec->seq = seq;
			ck_assert_uint_gt(n = node_encode(b, sizeof(b), rec), 0);
			h = hdr("a", seq, 90);
			h.kind = rec->kind;
			h.id = rec->id;
			if (!nodedb_defer(db, b, n, &h, &from, t))
				(void)nodedb_offer(db, b, n, &h, t);
		}
		seq++;
		if (t % NODEDB_MIN_ARRIVAL_MS == 0) {
			l.n = 0;
			(void)late(&l, t);
		}
	}
	/* The burst (the nine first records in it), then 2 s at the rate. */
	nodedb_stats(db, &st);
	ck_assert_uint_le(st.accepted, NODEDB_ORIGIN_BURST +
	    2 * NODEDB_ORIGIN_RATE + 1);
	ck_assert_uint_ge(st.accepted, NODEDB_ORIGIN_BURST +
	    2 * NODEDB_ORIGIN_RATE - 2);
	/* The flood over: every record's newest copy comes in. */
	for (; t < 5000; t += NODEDB_MIN_ARRIVAL_MS) {
		l.n = 0;
		(void)late(&l, t);
	}
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->seq,
	    seq - 1);
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_MACS,
	    NODE_MAC_PAGES - 1)->seq, seq - 1);
	free(rec);
	nodedb_free(db);
}
END_TEST

START_TEST(db_ageing)
{
	struct nodedb	*db = nodedb_new("self", 0, NULL);
	uint8_t		 b[NODE_RECORD_MAX];
	struct nodedb_stats st;
	size_t		 n;

	n = raw(b, "self", 1, 3);
	ck_assert_int_eq(originate(db, b, n, 1, 3, 0), 0);
	n = raw(b, "a", 1, 3);
	ck_assert_int_eq(offer(db, b, n, "a", 1, 3, 10000), NODEDB_NEW);
	n = raw(b, "b", 1, 60);
	ck_assert_int_eq(offer(db, b, n, "b", 1, 60, 10000), NODEDB_NEW);
	ck_assert_uint_eq(nodedb_age(db, 12999, NULL, NULL), 0);
	ck_assert_uint_eq(nodedb_age(db, 13000, NULL, NULL), 1);
	ck_assert_ptr_null(nodedb_get(db, "a", NODE_KIND_TOPO, 0));
	ck_assert_ptr_nonnull(nodedb_get(db, "b", NODE_KIND_TOPO, 0));
	/* A newer copy restarts the clock. */
	n = raw(b, "b", 2, 60);
	ck_assert_int_eq(offer(db, b, n, "b", 2, 60, 60000), NODEDB_NEW);
	ck_assert_uint_eq(nodedb_age(db, 119999, NULL, NULL), 0);
	ck_assert_uint_eq(nodedb_age(db, 120000, NULL, NULL), 1);
	/* Ours never ages. */
	ck_assert_uint_eq(nodedb_age(db, 1ULL << 40, NULL, NULL), 0);
	ck_assert_ptr_nonnull(nodedb_get(db, "self", NODE_KIND_TOPO, 0));
	nodedb_stats(db, &st);
	ck_assert_uint_eq(st.aged, 2);
	/* After ageing, an old sequence is news again (a restarted node). */
	n = raw(b, "a", 1, 3);
	ck_assert_int_eq(offer(db, b, n, "a", 1, 3, 200000),
	    NODEDB_NEW);
	nodedb_free(db);
}
END_TEST

/* Origins whose name starts with "gone": no path to them. */
static int
gone_cb(const char *origin, void *arg)
{
	(*(int *)arg)++;
	return strncmp(origin, "gone", 4) == 0;
}

START_TEST(db_room)
{
	struct nodedb	*db = nodedb_new("self", 4, NULL);
	uint8_t		 b[NODE_RECORD_MAX];
	struct nodedb_stats st;
	size_t		 n;
	int		 asked = 0;

	n = raw(b, "self", 1, 90);
	ck_assert_int_eq(originate(db, b, n, 1, 90, 0), 0);
	n = raw(b, "gone1", 1, 90);
	ck_assert_int_eq(offer(db, b, n, "gone1", 1, 90, 1000), NODEDB_NEW);
	n = raw(b, "gone2", 1, 90);
	ck_assert_int_eq(offer(db, b, n, "gone2", 1, 90, 500), NODEDB_NEW);
	n = raw(b, "live", 1, 90);
	ck_assert_int_eq(offer(db, b, n, "live", 1, 90, 1000), NODEDB_NEW);
	/* Full, and nothing says who is gone: refused, as before. */
	n = raw(b, "new1", 1, 90);
	ck_assert_int_eq(offer(db, b, n, "new1", 1, 90, 2000), NODEDB_FULL);
	nodedb_set_bounds(db, 0, gone_cb, &asked);
	/* The longest held of the unreachable makes room: gone2. */
	ck_assert_int_eq(offer(db, b, n, "new1", 1, 90, 2000), NODEDB_NEW);
	ck_assert_int_gt(asked, 0);
	ck_assert_ptr_null(nodedb_get(db, "gone2", NODE_KIND_TOPO, 0));
	ck_assert_ptr_nonnull(nodedb_get(db, "gone1", NODE_KIND_TOPO, 0));
	n = raw(b, "new2", 1, 90);
	ck_assert_int_eq(offer(db, b, n, "new2", 1, 90, 2000), NODEDB_NEW);
	ck_assert_ptr_null(nodedb_get(db, "gone1", NODE_KIND_TOPO, 0));
	/* Only the living and ourselves are left: a third is refused. */
	n = raw(b, "new3", 1, 90);
	ck_assert_int_eq(offer(db, b, n, "new3", 1, 90, 2000), NODEDB_FULL);
	ck_assert_ptr_nonnull(nodedb_get(db, "self", NODE_KIND_TOPO, 0));
	ck_assert_ptr_nonnull(nodedb_get(db, "live", NODE_KIND_TOPO, 0));
	ck_assert_uint_eq(nodedb_count(db), 4);
	nodedb_stats(db, &st);
	ck_assert_uint_eq(st.evicted, 2);
	ck_assert_uint_eq(st.full, 2);
	nodedb_free(db);
}
END_TEST

START_TEST(db_lifetime_bound)
{
	struct nodedb	*db = nodedb_new("self", 0, NULL);
	uint8_t		 b[NODE_RECORD_MAX];
	struct nodedb_stats st;
	size_t		 n;

	nodedb_set_bounds(db, 90, NULL, NULL);
	/* The sender asks for three hours: we grant our 90 s. */
	n = raw(b, "a", 1, NODE_LIFETIME_MAX);
	ck_assert_int_eq(offer(db, b, n, "a", 1, NODE_LIFETIME_MAX, 1000),
	    NODEDB_NEW);
	ck_assert_uint_eq(nodedb_get(db, "a", NODE_KIND_TOPO, 0)->lifetime, 90);
	n = raw(b, "b", 1, 30);
	ck_assert_int_eq(offer(db, b, n, "b", 1, 30, 1000), NODEDB_NEW);
	ck_assert_uint_eq(nodedb_get(db, "b", NODE_KIND_TOPO, 0)->lifetime, 30);
	ck_assert_uint_eq(nodedb_age(db, 1000 + 90 * 1000 - 1, NULL, NULL), 1);
	ck_assert_uint_eq(nodedb_age(db, 1000 + 90 * 1000, NULL, NULL), 1);
	ck_assert_uint_eq(nodedb_count(db), 0);
	nodedb_stats(db, &st);
	ck_assert_uint_eq(st.lifetime_cut, 1);
	nodedb_free(db);
}
END_TEST

/* The star with a cycle: proxy - host1..4, host1-host2, host2-host3. */
static struct spf *
star(int cycle, const char *self_name, int *self)
{
	static const char *names[] = { "proxy", "host1", "host2", "host3",
	    "host4" };
	struct spf	*s = spf_new();
	int		 i, p, h[5];

	for (i = 0; i < 5; i++)
		h[i] = spf_node(s, names[i]);
	p = h[0];
	for (i = 1; i < 5; i++) {
		spf_link(s, p, h[i], 1000);
		spf_link(s, h[i], p, 1000);
	}
	if (cycle) {
		spf_link(s, h[1], h[2], 100);
		spf_link(s, h[2], h[1], 100);
		spf_link(s, h[2], h[3], 100);
		spf_link(s, h[3], h[2], 100);
	}
	*self = spf_find(s, self_name);
	ck_assert_int_eq(spf_run(s, *self), 0);
	return s;
}

START_TEST(spf_paths)
{
	struct spf	*s;
	int		 self;

	s = star(0, "host1", &self);
	ck_assert_int_eq(spf_next_hop(s, spf_find(s, "host3")),
	    spf_find(s, "proxy"));
	ck_assert_uint_eq(spf_hops(s, spf_find(s, "host3")), 2);
	spf_free(s);
	/* With the cycle: host3 is two hops either way; the shorter round
	 * trip (via host2) wins. */
	s = star(1, "host1", &self);
	ck_assert_int_eq(spf_next_hop(s, spf_find(s, "host3")),
	    spf_find(s, "host2"));
	ck_assert_int_eq(spf_next_hop(s, spf_find(s, "host4")),
	    spf_find(s, "proxy"));
	ck_assert_int_eq(spf_next_hop(s, spf_find(s, "host2")),
	    spf_find(s, "host2"));
	spf_free(s);
}
END_TEST

START_TEST(spf_two_way_only)
{
	struct spf	*s = spf_new();
	int		 a = spf_node(s, "a"), b = spf_node(s, "b"),
			 c = spf_node(s, "c");

	spf_link(s, a, b, 1);
	spf_link(s, b, a, 1);
	spf_link(s, b, c, 1);	/* c does not list b: c is gone */
	ck_assert_int_eq(spf_run(s, a), 0);
	ck_assert_int_eq(spf_reachable(s, b), 1);
	ck_assert_int_eq(spf_reachable(s, c), 0);
	ck_assert_int_eq(spf_next_hop(s, c), SPF_NONE);
	spf_free(s);
}
END_TEST

/*
 * Every node computes the same tree, and flooding a broadcast along it
 * (each node sends on its tree links but the one it came in on) reaches
 * every node exactly once, with the cycle or without.
 */
START_TEST(spf_tree_once)
{
	static const char *names[] = { "proxy", "host1", "host2", "host3",
	    "host4" };
	int		 cycle, src, i, j, k, self, got[5], queue[64], from[64];
	int		 head, tail;
	struct spf	*views[5];

	for (cycle = 0; cycle < 2; cycle++) {
		for (i = 0; i < 5; i++)
			views[i] = star(cycle, names[i], &self);
		for (src = 0; src < 5; src++) {
			memset(got, 0, sizeof(got));
			head = tail = 0;
			queue[tail] = src;
			from[tail++] = -1;
			got[src] = 1;
			while (head < tail) {
				int u = queue[head], in = from[head++];
				struct spf *v = views[u];

				for (j = 0; j < 5; j++) {
					k = spf_find(v, names[j]);
					if (j == u || j == in ||
					    !spf_two_way(v, spf_find(v,
					    names[u]), k) ||
					    !spf_tree_link(v, k))
						continue;
					got[j]++;
					ck_assert_int_lt(tail, 64);
					queue[tail] = j;
					from[tail++] = u;
				}
			}
			for (i = 0; i < 5; i++)
				ck_assert_msg(got[i] == 1, "cycle %d, from %s: "
				    "%s got %d copies", cycle, names[src],
				    names[i], got[i]);
		}
		for (i = 0; i < 5; i++)
			spf_free(views[i]);
	}
}
END_TEST

START_TEST(traffic_rates)
{
	struct traffic	*t = traffic_new(0, 0x9747b28c);
	struct node_row	 rows[4];
	struct node_dst	 dsts[4];
	uint64_t	 ms;
	size_t		 n;

	/* 10 s of 100 frames of 1000 bytes a second for 1 -> 2, and 10 a
	 * second for 2 -> 1; one broadcast. */
	for (ms = 0; ms < 10000; ms += 10) {
		traffic_count(t, mac1, mac2, "host2", 1000, ms);
		if (ms % 100 == 0)
			traffic_count(t, mac2, mac1, "host1", 1000, ms);
	}
	traffic_count(t, mac1, bcast, "*", 60, 9999);
	traffic_tick(t, 10000);
	n = traffic_pairs(t, rows, 4);
	ck_assert_uint_eq(n, 3);
	ck_assert_mem_eq(rows[0].src, mac1, 6);
	ck_assert_mem_eq(rows[0].dst, mac2, 6);
	ck_assert_uint_eq(rows[0].r.bytes, 1000000);
	ck_assert_uint_eq(rows[0].r.frames, 1000);
	ck_assert_uint_eq(rows[0].r.rate1, 100000);
	ck_assert_uint_eq(rows[0].r.rate10, 100000);
	ck_assert_uint_eq(rows[1].r.rate10, 10000);
	/* Only the heaviest when there is room for one. */
	ck_assert_uint_eq(traffic_pairs(t, rows, 1), 1);
	ck_assert_mem_eq(rows[0].dst, mac2, 6);
	n = traffic_nodes(t, dsts, 4);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(dsts[0].name, "host2");
	/* Idle: the 1 s rate drops at once, the 10 s one over ten seconds. */
	traffic_tick(t, 15000);
	n = traffic_pairs(t, rows, 4);
	ck_assert_uint_eq(rows[0].r.rate1, 0);
	ck_assert_uint_eq(rows[0].r.rate10, 50000);
	traffic_tick(t, 30000);
	n = traffic_pairs(t, rows, 4);
	ck_assert_uint_eq(rows[0].r.rate10, 0);
	ck_assert_uint_eq(rows[0].r.bytes, 1000000);
	traffic_free(t);
}
END_TEST

START_TEST(traffic_bounded)
{
	struct traffic	*t = traffic_new(0, 0x9747b28c);
	uint8_t		 src[6] = { 2, 0, 0, 0, 0, 0 };
	size_t		 i;

	for (i = 0; i < TRAFFIC_PAIRS_MAX + 10; i++) {
		put_u32(src + 2, (uint32_t)i);
		traffic_count(t, src, mac2, "host2", 100, 1);
	}
	ck_assert_uint_eq(traffic_overflow(t), 10);
	/* Idle pairs are forgotten, making room again. */
	traffic_tick(t, TRAFFIC_IDLE_MS + 1);
	traffic_count(t, mac1, mac2, "host2", 100, TRAFFIC_IDLE_MS + 2);
	ck_assert_uint_eq(traffic_overflow(t), 10);
	traffic_free(t);
}
END_TEST

/* Destination nodes are bounded too, and forgotten when idle. */
START_TEST(traffic_nodes_bounded)
{
	struct traffic	*t = traffic_new(0, 0x9747b28c);
	struct node_dst	 dsts[4];
	char		 name[16];
	size_t		 i;

	for (i = 0; i < TRAFFIC_NODES_MAX + 10; i++) {
		snprintf(name, sizeof(name), "n%zu", i);
		traffic_count(t, mac1, mac2, name, 100, 1);
	}
	ck_assert_uint_eq(traffic_overflow(t), 10);
	/* host2 finds no room until the others have been quiet for the
	 * idle time; then they are forgotten and it gets one. */
	for (i = 1; i <= TRAFFIC_IDLE_MS / 1000 + 1; i++)
		traffic_count(t, mac1, mac2, "host2", 100, i * 1000);
	ck_assert_uint_eq(traffic_overflow(t), 10 + TRAFFIC_IDLE_MS / 1000);
	ck_assert_uint_eq(traffic_nodes(t, dsts, 4), 1);
	ck_assert_str_eq(dsts[0].name, "host2");
	ck_assert_uint_eq(dsts[0].r.frames, 1);
	/* And goes the same way. */
	traffic_tick(t, 2 * TRAFFIC_IDLE_MS + 1000);
	ck_assert_uint_eq(traffic_nodes(t, dsts, 4), 0);
	traffic_free(t);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("node");
	TCase	*tc;
	SRunner	*sr;
	int	 failed;

	tc = tcase_create("codec");
	tcase_add_test(tc, codec_roundtrip);
	tcase_add_test(tc, codec_cands);
	tcase_add_test(tc, codec_extensible);
	tcase_add_test(tc, codec_malformed);
	tcase_add_test(tc, codec_limits);
	suite_add_tcase(s, tc);
	tc = tcase_create("nodedb");
	tcase_add_test(tc, db_flooding);
	tcase_add_test(tc, db_ageing);
	tcase_add_test(tc, db_room);
	tcase_add_test(tc, db_lifetime_bound);
	tcase_add_test(tc, db_late);
	tcase_add_test(tc, db_defer_per_link);
	tcase_add_test(tc, db_origin_rate);
	suite_add_tcase(s, tc);
	tc = tcase_create("spf");
	tcase_add_test(tc, spf_paths);
	tcase_add_test(tc, spf_two_way_only);
	tcase_add_test(tc, spf_tree_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("traffic");
	tcase_add_test(tc, traffic_rates);
	tcase_add_test(tc, traffic_bounded);
	tcase_add_test(tc, traffic_nodes_bounded);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
