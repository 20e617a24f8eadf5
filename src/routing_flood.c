/*
 * What the control plane floods: this node's records (origination: the
 * topology record and the MAC pages, each when it changes), the records of
 * others on to every other link, all of them to a link that comes up (the
 * database exchange), the copies kept aside as too soon, refreshing and
 * ageing.  The decisions are nodedb.h's; this file acts on them, and
 * keeps each record held decoded beside it (the cache) for the path
 * computation and show.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"
#include "log.h"
#include "node.h"
#include "nodedb.h"
#include "nodesig.h"
#include "routing.h"
#include "routing_impl.h"
#include "shortcut.h"
#include "tls.h"
#include "traffic.h"
#include "wire.h"

void
routing_flood_send(struct routing *r, struct routing_nbr *n,
    const uint8_t *p, size_t len)
{
	if (r->env.send(r->env.arg, n->link, p, len) == -1) {
		r->st.records_skipped++;
		return;
	}
	r->st.records_out++;
	r->st.bytes_out += WIRE_HDR_LEN + len;
}

void
routing_flood_all_but(struct routing *r, void *except, const uint8_t *p,
    size_t len)
{
	size_t	 i;

	for (i = 0; i < r->nnbrs; i++)
		if (r->nbrs[i].link != except && r->nbrs[i].peer[0] != '\0')
			routing_flood_send(r, &r->nbrs[i], p, len);
}

/*
 * Everything held, ours included: our MAC pages may have gone out before
 * this link was there, and only the topology record is sent anew.
 */
void
routing_flood_exchange(struct routing *r, struct routing_nbr *n)
{
	const struct nodedb_entry *e;
	size_t		 i;

	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		routing_flood_send(r, n, e->raw, e->len);
	}
}

/* The cache: what the path computation and show read of a record. */

void
routing_cache_free(void *p)
{
	free(p);
}

const struct routing_topo *
routing_topo(const struct nodedb_entry *e)
{
	return e->kind == NODE_KIND_TOPO ? e->cache : NULL;
}

const struct routing_page *
routing_page(const struct nodedb_entry *e)
{
	return e->kind == NODE_KIND_MACS ? e->cache : NULL;
}

/*
 * One allocation: the struct, then its arrays.  Another node's MAC claims
 * are bounded against what we hold when they come (routing_mac_bound()).
 */
static void *
cache_make(struct routing *r, const struct node_rec *rec)
{
	struct routing_topo	*t;
	struct routing_page	*pg;
	size_t			 ln, an, cn;

	if (rec->kind == NODE_KIND_MACS) {
		if ((pg = malloc(sizeof(*pg) + rec->nmacs *
		    sizeof(pg->macs[0]))) == NULL)
			return NULL;
		pg->nmacs = rec->nmacs;
		memcpy(pg->macs, rec->macs, rec->nmacs * sizeof(pg->macs[0]));
		if (strcmp(rec->name, r->node) != 0)
			routing_mac_bound(r, rec->name, pg);
		return pg;
	}
	ln = rec->nlinks * sizeof(t->links[0]);
	an = rec->naddrs * sizeof(t->addrs[0]);
	cn = rec->ncands * sizeof(t->cands[0]);
	if ((t = malloc(sizeof(*t) + ln + an + cn)) == NULL)
		return NULL;
	t->flags = rec->flags;
	t->nlinks = rec->nlinks;
	t->naddrs = rec->naddrs;
	t->nsegs = rec->nsegs;
	memcpy(t->segs, rec->segs, rec->nsegs * sizeof(t->segs[0]));
	t->links = (struct node_link *)(t + 1);
	t->addrs = (char (*)[NODE_ADDR_MAX + 1])((char *)t->links + ln);
	memcpy(t->links, rec->links, ln);
	memcpy(t->addrs, rec->addrs, an);
	t->ncands = rec->ncands;
	t->cands = (struct node_cand *)((char *)t->addrs + an);
	memcpy(t->cands, rec->cands, cn);
	return t;
}

/* Decodes record i of the database into its cache. */
static void
cache_set(struct routing *r, int i)
{
	const struct nodedb_entry *e;
	const char	*why;

	if (i < 0 || (e = nodedb_at(r->db, (size_t)i)) == NULL)
		return;
	if (node_decode(e->raw, e->len, r->rec, &why) != NODE_OK) {
		nodedb_set_cache(r->db, (size_t)i, NULL);
		return;
	}
	nodedb_set_cache(r->db, (size_t)i, cache_make(r, r->rec));
}

/* Origination. */

static void
rec_head(struct routing *r, uint8_t kind, uint16_t id)
{
	struct node_rec	*rec = r->rec;

	memset(rec, 0, offsetof(struct node_rec, links));
	rec->kind = kind;
	rec->id = id;
	snprintf(rec->name, sizeof(rec->name), "%s", r->node);
	rec->seq = ++r->seq;
	rec->lifetime = (uint16_t)(3 * routing_refresh_s(r));
}

static void
build_topo(struct routing *r)
{
	struct node_rec		*rec = r->rec;
	struct routing_nbr	*n;
	size_t			 i;

	rec_head(r, NODE_KIND_TOPO, 0);
	for (i = 0; i < r->nnbrs; i++) {
		n = &r->nbrs[i];
		if (n->peer[0] == '\0' || rec->nlinks == NODE_LINKS_MAX ||
		    shortcut_draining(r, n))
			continue;
		snprintf(rec->links[rec->nlinks].name, NODE_NAME_MAX + 1,
		    "%s", n->peer);
		rec->links[rec->nlinks++].rtt_us = r->env.rtt_us(r->env.arg,
		    n->link);
	}
	rec->ncands = (uint16_t)routing_flood_cands(r, rec->cands);
	memcpy(r->cands, rec->cands, rec->ncands * sizeof(rec->cands[0]));
	r->ncands = rec->ncands;
	/* What older nodes dial: the candidates with a listener there. */
	for (i = 0; i < rec->ncands && rec->naddrs < NODE_ADDRS_MAX; i++)
		if (node_cand_dialable(rec->cands[i].kind))
			snprintf(rec->addrs[rec->naddrs++], NODE_ADDR_MAX + 1,
			    "%s", rec->cands[i].addr);
	rec->flags = routing_traffic_flags(r) | (r->norelay ? NODE_F_NORELAY :
	    0);
	routing_seg_record(r, rec);
}

size_t
routing_flood_cands(struct routing *r, struct node_cand *out)
{
	char		 a[NODE_ADDRS_MAX][NODE_ADDR_MAX + 1];
	size_t		 n = 0, i, k;

	if (r->has_advertise) {
		out[n].kind = NODE_CAND_ADVERTISE;
		stmt_hostport_format(&r->advertise, out[n++].addr,
		    NODE_ADDR_MAX + 1);
	}
	if (r->env.cands != NULL)
		return n + r->env.cands(r->env.arg, out + n,
		    NODE_CANDS_MAX - n);
	k = r->env.addrs(r->env.arg, a, NODE_ADDRS_MAX);
	for (i = 0; i < k && n < NODE_CANDS_MAX; i++) {
		out[n].kind = NODE_CAND_HOST;
		memcpy(out[n].addr, a[i], sizeof(out[n].addr));
		out[n++].addr[NODE_ADDR_MAX] = '\0';
	}
	return n;
}

static void
build_page(struct routing *r, unsigned int page)
{
	struct node_rec		*rec = r->rec;
	struct routing_lmac	*m;
	size_t			 i;

	rec_head(r, NODE_KIND_MACS, (uint16_t)page);
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->local[i]; m != NULL; m = m->next)
			if (m->page == page && rec->nmacs < NODE_PAGE_MACS) {
				memcpy(rec->macs[rec->nmacs].mac, m->mac,
				    ETHER_ADDR_LEN);
				rec->macs[rec->nmacs++].version = m->version;
			}
}

static SSL_CTX *
tls_now(struct routing *r)
{
	return r->env.tls_ctx != NULL ? r->env.tls_ctx(r->env.arg) : NULL;
}

size_t
routing_flood_sign(struct routing *r, uint8_t *p, size_t n)
{
	SSL_CTX		*ctx;
	X509		*cert;
	EVP_PKEY	*key;
	X509_STORE	*store;
	size_t		 len;

	if ((ctx = tls_now(r)) == NULL) {
		if (r->env.tls != NULL && r->env.tls(r->env.arg))
			r->st.unsigned_out++;	/* TLS that did not load */
		return n;
	}
	if (tls_ctx_identity(ctx, &cert, &key, &store) == -1 ||
	    (len = nodesig_sign(p, n, NODE_RECORD_MAX, cert, key)) == 0) {
		if (routing_may_log(r, 10))
			log_warnx("routing: our %s record could not be signed "
			    "(certificate over %d bytes, record too large, or "
			    "a key that cannot sign); not sent",
			    node_kind_name(p[1]), NODE_CERT_MAX);
		return 0;
	}
	return len;
}

/* For the logs: the link a record came from. */
static const char *
nbr_name(const struct routing_nbr *nb)
{
	return nb != NULL ? nb->name : "(kept aside, gone)";
}

/*
 * On a TLS network, a record is kept or passed on only when its origin
 * signed it (nodesig.h); one that fails is dropped and counted, its link
 * staying: the sender may only be passing on what it was given.
 */
static int
sig_ok(struct routing *r, struct routing_nbr *nb, const uint8_t *p,
    size_t n)
{
	enum nodesig_result res;
	SSL_CTX		*ctx;
	X509		*cert;
	EVP_PKEY	*key;
	X509_STORE	*store;

	if ((ctx = tls_now(r)) == NULL) {
		if (r->env.tls == NULL || !r->env.tls(r->env.arg))
			return 1;	/* a plain network */
		res = NODESIG_CHAIN;	/* TLS that did not load */
	} else if (tls_ctx_identity(ctx, &cert, &key, &store) == -1)
		res = NODESIG_CHAIN;
	else
		res = nodesig_verify(r->sig, store, p, n, r->rec,
		    routing_now(r));
	if (res == NODESIG_OK)
		return 1;
	r->st.sig_refused[res]++;
	if (routing_may_log(r, 11))
		log_warnx("routing: %s record of node %s, sequence %llu, from "
		    "link %s refused: %s", node_kind_name(r->rec->kind),
		    r->rec->name, (unsigned long long)r->rec->seq, nbr_name(nb),
		    res == NODESIG_UNSIGNED ? "not signed" :
		    res == NODESIG_NO_CERT ? "signed without a certificate" :
		    res == NODESIG_BAD_CERT ? "its certificate does not parse" :
		    res == NODESIG_CHAIN ? "its certificate is not valid "
		    "under our tls-ca (or revoked)" :
		    res == NODESIG_NAME ? "its certificate does not name the "
		    "node" : "bad signature");
	return 0;
}

static void
originate_one(struct routing *r, unsigned int what)
{
	struct node_hdr	 h;
	uint64_t	 now = routing_now(r);
	size_t		 n;

	if (what == ROUTING_DIRTY_TOPO)
		build_topo(r);
	else
		build_page(r, what);
	if ((n = node_encode(r->enc, NODE_RECORD_MAX, r->rec)) == 0) {
		log_warnx("routing: our own %s record does not fit",
		    node_kind_name(r->rec->kind));
		return;
	}
	if ((n = routing_flood_sign(r, r->enc, n)) == 0)
		return;
	memset(&h, 0, sizeof(h));
	h.kind = r->rec->kind;
	h.id = r->rec->id;
	h.seq = r->rec->seq;
	h.lifetime = r->rec->lifetime;
	snprintf(h.name, sizeof(h.name), "%s", r->node);
	if (nodedb_originate(r->db, r->enc, n, &h, now) == -1) {
		log_warnx("routing: out of memory for our record");
		return;
	}
	cache_set(r, nodedb_index(r->db, r->node, h.kind, h.id));
	if (what != ROUTING_DIRTY_TOPO)
		r->pages_sent |= 1U << what;
	r->st.originated++;
	routing_flood_all_but(r, NULL, r->enc, n);
}

void
routing_flood_originate(struct routing *r)
{
	unsigned int	 what = r->dirty, p;

	r->dirty = 0;
	if (what & ROUTING_DIRTY_TOPO)
		originate_one(r, ROUTING_DIRTY_TOPO);
	for (p = 0; p < NODE_MAC_PAGES; p++)
		if (what & (1U << p))
			originate_one(r, p);
	r->last_orig_ms = routing_now(r);
	routing_path_soon(r);
}

/* A change to tell: as soon as ROUTING_ORIG_MIN_MS since the last allow. */
static void
orig_soon(struct routing *r, uint64_t delay_ms)
{
	uint64_t	 now, at;

	if (!r->on || !r->started || r->orig_at != 0)
		return;
	now = routing_now(r);
	at = r->last_orig_ms + ROUTING_ORIG_MIN_MS;
	if (at < now + delay_ms)
		at = now + delay_ms;
	if (at < r->orig_not_before)
		at = r->orig_not_before;
	r->orig_at = at != 0 ? at : 1;
	routing_schedule(r);
}

void
routing_flood_mark(struct routing *r, unsigned int what)
{
	r->dirty |= what;
	orig_soon(r, 0);
}

/* Our topology record changed. */
void
routing_flood_soon(struct routing *r, uint64_t delay_ms)
{
	r->dirty |= ROUTING_DIRTY_TOPO;
	orig_soon(r, delay_ms);
}

static void
late_soon(struct routing *r)
{
	if (r->late_at == 0) {
		r->late_at = routing_now(r) + NODEDB_MIN_ARRIVAL_MS + 1;
		routing_schedule(r);
	}
}

static int	take(struct routing *, struct routing_nbr *, const uint8_t *,
		    size_t, const char **);

/*
 * A copy kept aside as too soon, its turn come: checked and offered as if
 * it came now from its link (if that is still up).  1 once one is taken.
 */
static int
late_take(const uint8_t *p, size_t n, const void *from, void *arg)
{
	struct routing	*r = arg;
	const char	*why;

	return take(r, from != NULL ? routing_nbr_find(r, (void *)(uintptr_t)
	    from) : NULL, p, n, &why) > 0;
}

void
routing_flood_late(struct routing *r)
{
	if (nodedb_late(r->db, routing_now(r), late_take, r) > 0)
		late_soon(r);
}


/* One of ours from elsewhere, newer: ours (maybe empty) goes above it. */
static void
about_us(struct routing *r, struct routing_nbr *nb, const struct node_hdr *h)
{
	if (h->seq >= r->seq)
		r->seq = h->seq;
	log_info("routing: a record in our name (%s) with sequence %llu "
	    "came from link %s; sending ours above it",
	    node_kind_name(h->kind), (unsigned long long)h->seq, nbr_name(nb));
	r->orig_not_before = routing_now(r) + 2 * NODEDB_MIN_ARRIVAL_MS;
	if (h->kind == NODE_KIND_MACS) {
		r->dirty |= 1U << h->id;
		routing_mac_restore(r);
	}
	else
		r->dirty |= ROUTING_DIRTY_TOPO;
	orig_soon(r, 2 * NODEDB_MIN_ARRIVAL_MS);
}

int
routing_flood_input(struct routing *r, struct routing_nbr *nb,
    const uint8_t *p, size_t n, const char **why)
{
	struct node_hdr	 h;

	r->st.records_in++;
	/*
	 * The copy held, byte for byte, was decoded when it came: a copy that
	 * came round another way is dropped without decoding it again.  A
	 * newer copy that comes too soon, or past its origin's rate, is kept
	 * aside unchecked: its origin's flood costs a copy, not a decode and a
	 * signature each (nodedb.h).
	 */
	if (node_peek(p, n, &h, why) == NODE_OK &&
	    h.kind != NODE_KIND_TRAFFIC) {
		if (nodedb_same(r->db, p, n, &h))
			return 0;
		if (nodedb_defer(r->db, p, n, &h, nb->link, routing_now(r))) {
			late_soon(r);
			return 0;
		}
	}
	return take(r, nb, p, n, why) < 0 ? -1 : 0;
}

/*
 * A record decoded, checked and offered: -1 malformed, 0 refused, 1
 * offered.  nb: the link it came from, NULL if gone.
 */
static int
take(struct routing *r, struct routing_nbr *nb, const uint8_t *p, size_t n,
    const char **why)
{
	const struct nodedb_entry *e;
	const struct routing_topo *t;
	enum nodedb_result res;
	struct node_hdr	 h;
	uint32_t	 flags = 0;
	int		 v;

	v = node_decode(p, n, r->rec, why);
	if (v == NODE_MALFORMED) {
		r->st.malformed++;
		return -1;
	}
	if (v == NODE_OK && r->rec->kind == NODE_KIND_TRAFFIC)
		return nb != NULL && sig_ok(r, nb, p, n) ?
		    routing_traffic_input(r, nb, p, n, why) : 0;
	if (v == NODE_REFUSED || r->rec->seq > r->env.wall_ms(r->env.arg) +
	    ROUTING_SEQ_AHEAD) {
		if (v == NODE_REFUSED)
			r->st.refused++;
		else
			r->st.seq_ahead++;
		if (routing_may_log(r, v == NODE_REFUSED ? 0 : 1))
			log_warnx("routing: record of node %s from link %s "
			    "refused: %s", r->rec->name, nbr_name(nb),
			    v == NODE_REFUSED ? *why : "sequence ahead of "
			    "the clock");
		return 0;
	}
	/* After the cheap refusals: a check costs a signature. */
	if (!sig_ok(r, nb, p, n))
		return 0;
	memset(&h, 0, sizeof(h));
	h.kind = r->rec->kind;
	h.id = r->rec->id;
	h.seq = r->rec->seq;
	h.lifetime = r->rec->lifetime;
	memcpy(h.name, r->rec->name, sizeof(h.name));
	if (h.kind == NODE_KIND_TOPO &&
	    (e = nodedb_get(r->db, h.name, h.kind, h.id)) != NULL &&
	    (t = routing_topo(e)) != NULL)
		flags = t->flags;
	res = nodedb_offer(r->db, p, n, &h, routing_now(r));
	switch (res) {
	case NODEDB_NEW:
		log_debug("routing: %s record of node %s, sequence %llu, from "
		    "link %s", node_kind_name(h.kind), h.name,
		    (unsigned long long)h.seq, nbr_name(nb));
		/* What we just decoded is the cache: no second decode. */
		nodedb_set_cache(r->db, (size_t)nodedb_index(r->db, h.name,
		    h.kind, h.id), cache_make(r, r->rec));
		if (h.kind == NODE_KIND_TOPO &&
		    (r->rec->flags & ~flags & NODE_F_TRAFFIC) != 0)
			r->report_now = 1;	/* it wants our rows */
		routing_flood_all_but(r, nb != NULL ? nb->link : NULL, p, n);
		routing_path_soon(r);
		break;
	case NODEDB_SAME:
		break;
	case NODEDB_OLDER:
		if (nb != NULL &&
		    (e = nodedb_get(r->db, h.name, h.kind, h.id)) != NULL)
			routing_flood_send(r, nb, e->raw, e->len);
		break;
	case NODEDB_SELF:
		/*
		 * Ours from before a restart, or someone else's words in our
		 * name: ours goes out above it, late enough that every node
		 * takes it after that one.
		 */
		about_us(r, nb, &h);
		break;
	case NODEDB_TOO_SOON:
		/* Kept aside: taken once the interval has passed. */
		log_debug("routing: record of node %s, sequence %llu, from "
		    "link %s: too soon after the last, kept for later",
		    h.name, (unsigned long long)h.seq, nbr_name(nb));
		late_soon(r);
		break;
	case NODEDB_FULL:
	case NODEDB_NOMEM:
		if (routing_may_log(r, 2 + (unsigned int)res))
			log_warnx("routing: record of node %s from link %s "
			    "refused: %s", h.name, nbr_name(nb),
			    nodedb_result_name(res));
		break;
	}
	return 1;
}

static int
cands_same(const struct node_cand *a, size_t na, const struct node_cand *b,
    size_t nb)
{
	size_t	 i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (a[i].kind != b[i].kind || strcmp(a[i].addr, b[i].addr) != 0)
			return 0;
	return 1;
}

/* The second tick's part: ageing and refreshing. */
void
routing_flood_tick(struct routing *r)
{
	struct node_cand cands[NODE_CANDS_MAX];
	uint64_t	 now = routing_now(r);
	size_t		 n;

	if (nodedb_age(r->db, now, NULL, NULL) > 0)
		routing_path_soon(r);
	/* An interface address or what a peer sees of us changed. */
	if (r->started && !(r->dirty & ROUTING_DIRTY_TOPO)) {
		n = routing_flood_cands(r, cands);
		if (!cands_same(cands, n, r->cands, r->ncands))
			routing_flood_mark(r, ROUTING_DIRTY_TOPO);
	}
	if (now - r->refreshed_ms >= (uint64_t)routing_refresh_s(r) * 1000) {
		r->refreshed_ms = now;
		routing_flood_mark(r, ROUTING_DIRTY_TOPO | r->pages_sent);
	}
}
