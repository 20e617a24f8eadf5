/*
 * Forwarding decisions.  Everything here is reached from fwd_decide() once
 * per frame, so the per-frame work is kept to hash lookups: rules are filed
 * by their exact MAC, learned MACs live in a table sized once at fwd_new(),
 * and the result array is grown when ports are created, never per frame.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "hash.h"
#include "fwd.h"

#define SEEN_MAX	8192		/* (origin, seq) pairs remembered */
#define SEEN_BUCKETS	(2 * SEEN_MAX)	/* power of two */
#define SEEN_NONE	UINT32_MAX

#define RTAB_MIN	64		/* initial buckets of a rule table */
#define PTAB_MIN	16		/* initial buckets of the port table */

struct fwd_mac;

struct fwd_port {
	struct fwd_port	*hnext;		/* port table chain */
	int		 noflood;	/* out of the automatic broadcast set */
	struct fwd_mac	*macs;		/* learned MACs on this port, */
	struct fwd_mac	*macs_last;	/* least recently seen first */
	size_t		 nmacs;
	void		*owner;		/* NULL: detached */
	uint64_t	 mark;		/* == fwd->gen: already in the result */
	size_t		 index;		/* in fwd->ports */
	unsigned int	 refs;
	enum fwd_kind	 kind;
	uint32_t	 hash;
	char		 name[];
};

/*
 * Where a rule is filed.  A rule with an exact DST is found by the frame's
 * destination, one with an exact SRC (and no exact DST) by its source, and
 * the rest are scanned: every rule is looked at only when it can match.
 */
enum rule_home {
	HOME_DST,
	HOME_SRC,
	HOME_GENERAL,
};

struct fwd_rule {
	struct fwd_rule		*prev, *next;	/* insertion order */
	struct fwd_rule		*hnext;		/* table chain or general list */
	struct stmt_match	 src, dst;
	struct fwd_port		*port;
	uint64_t		 hash;		/* of the MAC it is filed by */
	enum rule_home		 home;
	int			 rank;
};

struct rtab {
	struct fwd_rule	**b;
	size_t		  nb;		/* power of two */
	size_t		  n;
};

struct fwd_mac {
	struct fwd_mac	*hnext;		/* bucket chain, or free list */
	struct fwd_mac	*lprev, *lnext;	/* least recently seen first */
	struct fwd_mac	*pprev, *pnext;	/* same port, oldest first */
	struct fwd_port	*port;
	uint64_t	 seen;
	uint8_t		 mac[ETHER_ADDR_LEN];
};

/* An automatic route: a MAC and its port (referenced). */
struct fwd_auto {
	struct fwd_auto	*hnext;
	struct fwd_port	*port;
	uint8_t		 mac[ETHER_ADDR_LEN];
};

struct seen_ent {
	uint64_t	key;		/* origin << 32 | seq */
	uint32_t	fp;		/* seen_fingerprint() of the frame */
	uint32_t	next;		/* bucket chain, SEEN_NONE at the end */
};

struct fwd {
	/* ports: a table by (kind, name) and a dense array for flooding */
	struct fwd_port	**ptab;
	size_t		  ptab_nb;
	struct fwd_port	**ports;
	size_t		  nports;
	size_t		  portcap;	/* of ports and of out */
	struct fwd_port	**out;
	uint64_t	  gen;

	/* rules */
	struct fwd_rule	 *first, *last;
	size_t		  nrules;
	uint64_t	  changes;	/* rules added and deleted */
	struct rtab	  by_dst;
	struct rtab	  by_src;
	struct fwd_rule	 *general;

	/*
	 * Learned MACs.  All mac_max entries are allocated up front (calloc,
	 * so pages are only touched as they are used) because fwd_decide()
	 * learns and must not allocate.
	 */
	int		  learn;
	size_t		  mac_max;
	size_t		  port_mac_max;	/* mac_max / FWD_PORT_SHARE */
	size_t		  nmacs;
	struct fwd_mac	 *pool;
	size_t		  pool_used;
	struct fwd_mac	 *pool_free;
	struct fwd_mac	**mtab;
	size_t		  mtab_nb;	/* power of two */
	struct fwd_mac	 *oldest, *newest;

	/* duplicate suppression: a ring in arrival order, hashed */
	struct seen_ent	 *seen;
	uint32_t	 *seen_b;
	uint32_t	  seen_pos;
	uint32_t	  seen_n;

	struct fwd_stats  stats;

	/* automatic routes (routing.h): grown by fwd_auto_set(), never per frame */
	int		  auto_on;
	int		  norelay;	/* fwd_set_relay(f, 0) */
	struct fwd_auto	**atab;
	size_t		  atab_nb;	/* power of two, or 0 */
	size_t		  nauto;
	uint64_t	  auto_seed;	/* peers name the MACs: keyed */
};

static uint64_t
mix64(uint64_t x)
{
	/* splitmix64's finalizer: every input bit reaches the low bits */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t
mac_hash(const uint8_t m[ETHER_ADDR_LEN])
{
	return mix64((uint64_t)m[0] << 40 | (uint64_t)m[1] << 32 |
	    (uint64_t)m[2] << 24 | (uint64_t)m[3] << 16 |
	    (uint64_t)m[4] << 8 | (uint64_t)m[5]);
}

static uint32_t
port_hash(enum fwd_kind kind, const char *name)
{
	uint8_t		k = (uint8_t)kind;

	return hash_fnv1a(hash_fnv1a(HASH_FNV_BASIS, &k, 1), name,
	    strlen(name));
}

static size_t
pow2_at_least(size_t n, size_t min)
{
	size_t	p = min;

	while (p < n && p <= SIZE_MAX / 2)
		p *= 2;
	return p;
}

struct fwd *
fwd_new(size_t mac_max)
{
	struct fwd	*f;
	uint32_t	 i;

	if (mac_max == 0)
		mac_max = FWD_MAC_MAX_DEFAULT;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->mac_max = mac_max;
	f->port_mac_max = mac_max / FWD_PORT_SHARE > 0 ?
	    mac_max / FWD_PORT_SHARE : 1;
	f->ptab_nb = PTAB_MIN;
	f->by_dst.nb = f->by_src.nb = RTAB_MIN;
	f->mtab_nb = pow2_at_least(mac_max, 16);
	if ((f->ptab = calloc(f->ptab_nb, sizeof(*f->ptab))) == NULL ||
	    (f->by_dst.b = calloc(RTAB_MIN, sizeof(*f->by_dst.b))) == NULL ||
	    (f->by_src.b = calloc(RTAB_MIN, sizeof(*f->by_src.b))) == NULL ||
	    (f->pool = calloc(mac_max, sizeof(*f->pool))) == NULL ||
	    (f->mtab = calloc(f->mtab_nb, sizeof(*f->mtab))) == NULL ||
	    (f->seen = calloc(SEEN_MAX, sizeof(*f->seen))) == NULL ||
	    (f->seen_b = calloc(SEEN_BUCKETS, sizeof(*f->seen_b))) == NULL) {
		fwd_free(f);
		return NULL;
	}
	for (i = 0; i < SEEN_BUCKETS; i++)
		f->seen_b[i] = SEEN_NONE;
	f->auto_seed = (uint64_t)arc4random() << 32 | arc4random();
	return f;
}

void
fwd_free(struct fwd *f)
{
	struct fwd_rule	*r, *rnext;
	size_t		 i;

	if (f == NULL)
		return;
	fwd_auto_clear(f);
	free(f->atab);
	for (r = f->first; r != NULL; r = rnext) {
		rnext = r->next;
		free(r);
	}
	for (i = 0; i < f->nports; i++)
		free(f->ports[i]);
	free(f->ports);
	free(f->out);
	free(f->ptab);
	free(f->by_dst.b);
	free(f->by_src.b);
	free(f->pool);
	free(f->mtab);
	free(f->seen);
	free(f->seen_b);
	free(f);
}

/* Learned MACs. */

static struct fwd_mac **
mac_bucket(struct fwd *f, const uint8_t mac[ETHER_ADDR_LEN])
{
	return &f->mtab[mac_hash(mac) & (f->mtab_nb - 1)];
}

static struct fwd_mac *
mac_find(struct fwd *f, const uint8_t mac[ETHER_ADDR_LEN])
{
	struct fwd_mac	*m;

	for (m = *mac_bucket(f, mac); m != NULL; m = m->hnext)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0)
			return m;
	return NULL;
}

static void
mac_port_link(struct fwd_mac *m, struct fwd_port *p)
{
	m->port = p;
	m->pnext = NULL;
	m->pprev = p->macs_last;
	if (p->macs_last != NULL)
		p->macs_last->pnext = m;
	else
		p->macs = m;
	p->macs_last = m;
	p->nmacs++;
}

static void
mac_port_unlink(struct fwd_mac *m)
{
	struct fwd_port	*p = m->port;

	if (m->pprev != NULL)
		m->pprev->pnext = m->pnext;
	else
		p->macs = m->pnext;
	if (m->pnext != NULL)
		m->pnext->pprev = m->pprev;
	else
		p->macs_last = m->pprev;
	p->nmacs--;
	m->port = NULL;
}

static void
mac_lru_append(struct fwd *f, struct fwd_mac *m)
{
	m->lnext = NULL;
	m->lprev = f->newest;
	if (f->newest != NULL)
		f->newest->lnext = m;
	else
		f->oldest = m;
	f->newest = m;
}

static void
mac_lru_unlink(struct fwd *f, struct fwd_mac *m)
{
	if (m->lprev != NULL)
		m->lprev->lnext = m->lnext;
	else
		f->oldest = m->lnext;
	if (m->lnext != NULL)
		m->lnext->lprev = m->lprev;
	else
		f->newest = m->lprev;
}

static void
mac_remove(struct fwd *f, struct fwd_mac *m)
{
	struct fwd_mac	**mp;

	for (mp = mac_bucket(f, m->mac); *mp != m; mp = &(*mp)->hnext)
		;
	*mp = m->hnext;
	mac_lru_unlink(f, m);
	mac_port_unlink(m);
	m->hnext = f->pool_free;
	f->pool_free = m;
	f->nmacs--;
}

static int
mac_expired(const struct fwd_mac *m, uint64_t now)
{
	return now >= m->seen && now - m->seen >= FWD_AGE_MS;
}

/*
 * The port holding the most learned MACs (the first of those tied).  A
 * scan, but it runs only for a port below its share while the table is
 * full: a flooding port, at its share, replaces its own entries instead.
 */
static struct fwd_port *
mac_fattest_port(struct fwd *f)
{
	struct fwd_port	*best = NULL;
	size_t		 i;

	for (i = 0; i < f->nports; i++)
		if (best == NULL || f->ports[i]->nmacs > best->nmacs)
			best = f->ports[i];
	return best;
}

/*
 * Room for one more MAC on port in.  A port holds at most port_mac_max
 * (a share of the table): past it, its own least recently seen MAC goes,
 * so a port sending from ever new addresses churns its own share and
 * nobody else's.  A full table first drops an entry that has aged out,
 * else the least recently seen MAC of the port holding the most: a flood
 * spread over a few ports still leaves room for a newcomer elsewhere.
 * Returns -1 if there is no room (nothing could go).
 */
static int
mac_make_room(struct fwd *f, struct fwd_port *in, uint64_t now)
{
	struct fwd_port	*victim;

	if (in->nmacs >= f->port_mac_max && in->macs != NULL) {
		mac_remove(f, in->macs);
		f->stats.macs_replaced++;
		return 0;
	}
	if (f->nmacs < f->mac_max)
		return 0;
	/* An entry fwd_age() has not got to yet is as good as gone. */
	if (f->oldest != NULL && mac_expired(f->oldest, now)) {
		mac_remove(f, f->oldest);
		f->stats.macs_aged++;
		return 0;
	}
	if ((victim = mac_fattest_port(f)) == NULL || victim->macs == NULL) {
		f->stats.mac_table_full++;
		return -1;
	}
	mac_remove(f, victim->macs);
	f->stats.macs_evicted++;
	return 0;
}

static void
mac_learn(struct fwd *f, const uint8_t mac[ETHER_ADDR_LEN],
    struct fwd_port *in, uint64_t now)
{
	struct fwd_mac	**bp, *m;

	if ((m = mac_find(f, mac)) != NULL) {
		struct fwd_port	*was = m->port;

		mac_port_unlink(m);
		if (was != in) {
			/* Moving counts against the new port's share. */
			if (in->nmacs >= f->port_mac_max && in->macs != NULL) {
				mac_remove(f, in->macs);
				f->stats.macs_replaced++;
			}
			f->stats.macs_moved++;
		}
		mac_port_link(m, in);
		m->seen = now;
		mac_lru_unlink(f, m);
		mac_lru_append(f, m);
		return;
	}
	if (mac_make_room(f, in, now) == -1)
		return;
	if (f->pool_free != NULL) {
		m = f->pool_free;
		f->pool_free = m->hnext;
	} else
		m = &f->pool[f->pool_used++];
	memcpy(m->mac, mac, ETHER_ADDR_LEN);
	m->seen = now;
	bp = mac_bucket(f, mac);
	m->hnext = *bp;
	*bp = m;
	mac_lru_append(f, m);
	mac_port_link(m, in);
	f->nmacs++;
	f->stats.macs_learned++;
}

void
fwd_age(struct fwd *f, uint64_t now_ms)
{
	/* Oldest first: the first entry still fresh ends the walk. */
	while (f->oldest != NULL && mac_expired(f->oldest, now_ms)) {
		mac_remove(f, f->oldest);
		f->stats.macs_aged++;
	}
}

size_t
fwd_mac_count(const struct fwd *f)
{
	return f->nmacs;
}

void
fwd_mac_foreach(struct fwd *f, uint64_t now_ms,
    void (*cb)(const uint8_t mac[ETHER_ADDR_LEN], const struct fwd_port *port,
    uint64_t age_ms, void *arg), void *arg)
{
	struct fwd_mac	*m, *next;

	for (m = f->oldest; m != NULL; m = next) {
		next = m->lnext;
		cb(m->mac, m->port, now_ms >= m->seen ? now_ms - m->seen : 0,
		    arg);
	}
}

void
fwd_set_learn(struct fwd *f, int on)
{
	f->learn = on != 0;
}

int
fwd_get_learn(const struct fwd *f)
{
	return f->learn;
}

void
fwd_set_relay(struct fwd *f, int on)
{
	f->norelay = !on;
}

/* Ports. */

static struct fwd_port *
port_lookup(struct fwd *f, enum fwd_kind kind, const char *name,
    uint32_t hash)
{
	struct fwd_port	*p;

	for (p = f->ptab[hash & (f->ptab_nb - 1)]; p != NULL; p = p->hnext)
		if (p->hash == hash && p->kind == kind &&
		    strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/* Best effort: a table that could not grow is slower, not wrong. */
static void
port_table_grow(struct fwd *f)
{
	struct fwd_port	**nt, *p, *pnext;
	size_t		  nb, i;

	if (f->nports < f->ptab_nb || f->ptab_nb > SIZE_MAX / 2)
		return;
	nb = f->ptab_nb * 2;
	if ((nt = calloc(nb, sizeof(*nt))) == NULL)
		return;
	for (i = 0; i < f->ptab_nb; i++) {
		for (p = f->ptab[i]; p != NULL; p = pnext) {
			pnext = p->hnext;
			p->hnext = nt[p->hash & (nb - 1)];
			nt[p->hash & (nb - 1)] = p;
		}
	}
	free(f->ptab);
	f->ptab = nt;
	f->ptab_nb = nb;
}

/* Keeps out as large as ports, so fwd_decide() never has to allocate. */
static int
port_array_grow(struct fwd *f)
{
	struct fwd_port	**np;
	size_t		  cap;

	if (f->nports < f->portcap)
		return 0;
	cap = f->portcap == 0 ? 16 : f->portcap * 2;
	if (cap > SIZE_MAX / sizeof(*np))
		return -1;
	if ((np = realloc(f->out, cap * sizeof(*np))) == NULL)
		return -1;
	f->out = np;
	if ((np = realloc(f->ports, cap * sizeof(*np))) == NULL)
		return -1;
	f->ports = np;
	f->portcap = cap;
	return 0;
}

struct fwd_port *
fwd_port_ref(struct fwd *f, enum fwd_kind kind, const char *name)
{
	struct fwd_port	*p;
	uint32_t	 hash;
	size_t		 len;

	hash = port_hash(kind, name);
	if ((p = port_lookup(f, kind, name, hash)) != NULL) {
		if (p->refs == UINT_MAX) {
			errno = EOVERFLOW;
			return NULL;
		}
		p->refs++;
		return p;
	}
	if (port_array_grow(f) == -1)
		return NULL;
	len = strlen(name);
	if ((p = calloc(1, sizeof(*p) + len + 1)) == NULL)
		return NULL;
	memcpy(p->name, name, len + 1);
	p->kind = kind;
	p->hash = hash;
	p->refs = 1;
	p->index = f->nports;
	f->ports[f->nports++] = p;
	p->hnext = f->ptab[hash & (f->ptab_nb - 1)];
	f->ptab[hash & (f->ptab_nb - 1)] = p;
	port_table_grow(f);
	return p;
}

void
fwd_port_unref(struct fwd *f, struct fwd_port *p)
{
	struct fwd_port	**pp;

	if (p == NULL || --p->refs > 0)
		return;
	while (p->macs != NULL)
		mac_remove(f, p->macs);
	for (pp = &f->ptab[p->hash & (f->ptab_nb - 1)]; *pp != p;
	    pp = &(*pp)->hnext)
		;
	*pp = p->hnext;
	f->ports[p->index] = f->ports[--f->nports];
	f->ports[p->index]->index = p->index;
	free(p);
}

struct fwd_port *
fwd_port_find(struct fwd *f, enum fwd_kind kind, const char *name)
{
	return port_lookup(f, kind, name, port_hash(kind, name));
}

void
fwd_port_attach(struct fwd_port *p, void *owner)
{
	p->owner = owner;
}

void
fwd_port_detach(struct fwd_port *p)
{
	p->owner = NULL;
}

void *
fwd_port_owner(const struct fwd_port *p)
{
	return p->owner;
}

const char *
fwd_port_name(const struct fwd_port *p)
{
	return p->name;
}

enum fwd_kind
fwd_port_kind(const struct fwd_port *p)
{
	return p->kind;
}

/* Rules. */

static int
spec(const struct stmt_match *m)
{
	switch (m->kind) {
	case MATCH_ANY:
		return 0;
	case MATCH_NOT:
		return 1;
	case MATCH_MAC:
		return 2;
	}
	return -1;
}

static int
match(const struct stmt_match *m, const uint8_t mac[ETHER_ADDR_LEN])
{
	switch (m->kind) {
	case MATCH_ANY:
		return 1;
	case MATCH_NOT:
		return memcmp(m->mac, mac, ETHER_ADDR_LEN) != 0;
	case MATCH_MAC:
		return memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0;
	}
	return 0;
}

static int
match_equal(const struct stmt_match *a, const struct stmt_match *b)
{
	return a->kind == b->kind && (a->kind == MATCH_ANY ||
	    memcmp(a->mac, b->mac, ETHER_ADDR_LEN) == 0);
}

static struct fwd_rule **
rule_chain(struct fwd *f, enum rule_home home, uint64_t hash)
{
	switch (home) {
	case HOME_DST:
		return &f->by_dst.b[hash & (f->by_dst.nb - 1)];
	case HOME_SRC:
		return &f->by_src.b[hash & (f->by_src.nb - 1)];
	case HOME_GENERAL:
		break;
	}
	return &f->general;
}

/* Best effort, like port_table_grow(). */
static void
rtab_grow(struct rtab *t)
{
	struct fwd_rule	**nb, *r, *rnext;
	size_t		  n, i;

	if (t->n < t->nb || t->nb > SIZE_MAX / 2 / sizeof(*nb))
		return;
	n = t->nb * 2;
	if ((nb = calloc(n, sizeof(*nb))) == NULL)
		return;
	for (i = 0; i < t->nb; i++) {
		for (r = t->b[i]; r != NULL; r = rnext) {
			rnext = r->hnext;
			r->hnext = nb[r->hash & (n - 1)];
			nb[r->hash & (n - 1)] = r;
		}
	}
	free(t->b);
	t->b = nb;
	t->nb = n;
}

/* Where a rule with these sides is filed; -1 (EINVAL) for an unknown kind. */
static int
rule_place(const struct stmt_match *src, const struct stmt_match *dst,
    enum rule_home *home, uint64_t *hash)
{
	if (spec(src) < 0 || spec(dst) < 0) {
		errno = EINVAL;
		return -1;
	}
	if (dst->kind == MATCH_MAC) {
		*home = HOME_DST;
		*hash = mac_hash(dst->mac);
	} else if (src->kind == MATCH_MAC) {
		*home = HOME_SRC;
		*hash = mac_hash(src->mac);
	} else {
		*home = HOME_GENERAL;
		*hash = 0;
	}
	return 0;
}

/* The link in its chain that points at the identical rule, or NULL. */
static struct fwd_rule **
rule_find(struct fwd *f, const struct stmt_match *src,
    const struct stmt_match *dst, enum rule_home home, uint64_t hash,
    const struct fwd_port *port)
{
	struct fwd_rule	**rp;

	for (rp = rule_chain(f, home, hash); *rp != NULL;
	    rp = &(*rp)->hnext) {
		if ((*rp)->port == port && (*rp)->hash == hash &&
		    match_equal(&(*rp)->src, src) &&
		    match_equal(&(*rp)->dst, dst))
			return rp;
	}
	return NULL;
}

int
fwd_route_add(struct fwd *f, const struct stmt_match *src,
    const struct stmt_match *dst, enum fwd_kind kind, const char *name)
{
	struct fwd_rule	**chain, *r;
	struct fwd_port	 *p;
	enum rule_home	  home;
	uint64_t	  hash;

	if (rule_place(src, dst, &home, &hash) == -1)
		return -1;
	/* A rule names an existing port or none: look before creating. */
	if ((p = fwd_port_find(f, kind, name)) != NULL &&
	    rule_find(f, src, dst, home, hash, p) != NULL) {
		errno = EEXIST;
		return -1;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if ((r->port = fwd_port_ref(f, kind, name)) == NULL) {
		free(r);
		errno = ENOMEM;
		return -1;
	}
	/* Normalized so that equal rules compare equal byte for byte too. */
	r->src.kind = src->kind;
	if (src->kind != MATCH_ANY)
		memcpy(r->src.mac, src->mac, ETHER_ADDR_LEN);
	r->dst.kind = dst->kind;
	if (dst->kind != MATCH_ANY)
		memcpy(r->dst.mac, dst->mac, ETHER_ADDR_LEN);
	r->home = home;
	r->hash = hash;
	r->rank = 3 * spec(dst) + spec(src);

	if (home == HOME_DST)
		rtab_grow(&f->by_dst);
	else if (home == HOME_SRC)
		rtab_grow(&f->by_src);
	chain = rule_chain(f, home, hash);
	r->hnext = *chain;
	*chain = r;
	if (home == HOME_DST)
		f->by_dst.n++;
	else if (home == HOME_SRC)
		f->by_src.n++;

	r->prev = f->last;
	if (f->last != NULL)
		f->last->next = r;
	else
		f->first = r;
	f->last = r;
	f->nrules++;
	f->changes++;
	return 0;
}

int
fwd_route_del(struct fwd *f, const struct stmt_match *src,
    const struct stmt_match *dst, enum fwd_kind kind, const char *name)
{
	struct fwd_rule	**rp, *r;
	struct fwd_port	 *p;
	enum rule_home	  home;
	uint64_t	  hash;

	if (rule_place(src, dst, &home, &hash) == -1)
		return -1;
	if ((p = fwd_port_find(f, kind, name)) == NULL ||
	    (rp = rule_find(f, src, dst, home, hash, p)) == NULL) {
		errno = ENOENT;
		return -1;
	}
	r = *rp;
	*rp = r->hnext;
	if (home == HOME_DST)
		f->by_dst.n--;
	else if (home == HOME_SRC)
		f->by_src.n--;

	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		f->first = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	else
		f->last = r->prev;
	f->nrules--;
	f->changes++;

	fwd_port_unref(f, r->port);
	free(r);
	return 0;
}

size_t
fwd_route_count(const struct fwd *f)
{
	return f->nrules;
}

size_t
fwd_route_walk(struct fwd *f, void **at, size_t max,
    void (*cb)(const struct stmt_match *, const struct stmt_match *,
    const struct fwd_port *, void *), void *arg)
{
	struct fwd_rule	*r = *at != NULL ? *at : f->first;
	size_t		 n;

	for (n = 0; r != NULL && n < max; n++, r = r->next)
		cb(&r->src, &r->dst, r->port, arg);
	*at = r;
	return n;
}

uint64_t
fwd_route_changes(const struct fwd *f)
{
	return f->changes;
}

void
fwd_route_foreach(struct fwd *f,
    void (*cb)(const struct stmt_match *src, const struct stmt_match *dst,
    const struct fwd_port *port, void *arg), void *arg)
{
	struct fwd_rule	*r, *next;

	/* next is taken first so that cb may delete the rule it is given */
	for (r = f->first; r != NULL; r = next) {
		next = r->next;
		cb(&r->src, &r->dst, r->port, arg);
	}
}

/* Automatic routes. */

static struct fwd_auto **
auto_bucket(struct fwd *f, const uint8_t mac[ETHER_ADDR_LEN])
{
	return &f->atab[mix64(mac_hash(mac) ^ f->auto_seed) &
	    (f->atab_nb - 1)];
}

static struct fwd_auto *
auto_find(struct fwd *f, const uint8_t mac[ETHER_ADDR_LEN])
{
	struct fwd_auto	*a;

	if (f->atab_nb == 0)
		return NULL;
	for (a = *auto_bucket(f, mac); a != NULL; a = a->hnext)
		if (memcmp(a->mac, mac, ETHER_ADDR_LEN) == 0)
			return a;
	return NULL;
}

/* Best effort past the first table, like port_table_grow(). */
static int
auto_grow(struct fwd *f)
{
	struct fwd_auto	**ot = f->atab, *a, *an;
	size_t		  onb = f->atab_nb, nb, i;

	if (f->nauto < f->atab_nb || f->atab_nb > SIZE_MAX / 2 /
	    sizeof(*ot))
		return 0;
	nb = onb != 0 ? onb * 2 : 64;
	if ((f->atab = calloc(nb, sizeof(*f->atab))) == NULL) {
		f->atab = ot;
		return onb != 0 ? 0 : -1;
	}
	f->atab_nb = nb;
	for (i = 0; i < onb; i++)
		for (a = ot[i]; a != NULL; a = an) {
			an = a->hnext;
			a->hnext = *auto_bucket(f, a->mac);
			*auto_bucket(f, a->mac) = a;
		}
	free(ot);
	return 0;
}

void
fwd_auto_on(struct fwd *f, int on)
{
	f->auto_on = on != 0;
}

int
fwd_auto_set(struct fwd *f, const uint8_t mac[ETHER_ADDR_LEN],
    enum fwd_kind kind, const char *name)
{
	struct fwd_auto	*a, **bp;
	struct fwd_port	*p;

	if ((a = auto_find(f, mac)) != NULL && a->port->kind == kind &&
	    strcmp(a->port->name, name) == 0)
		return 0;
	if ((p = fwd_port_ref(f, kind, name)) == NULL)
		return -1;
	if (a != NULL) {
		fwd_port_unref(f, a->port);
		a->port = p;
		return 0;
	}
	if (auto_grow(f) == -1 || (a = calloc(1, sizeof(*a))) == NULL) {
		fwd_port_unref(f, p);
		return -1;
	}
	memcpy(a->mac, mac, ETHER_ADDR_LEN);
	a->port = p;
	bp = auto_bucket(f, mac);
	a->hnext = *bp;
	*bp = a;
	f->nauto++;
	return 0;
}

void
fwd_auto_del(struct fwd *f, const uint8_t mac[ETHER_ADDR_LEN])
{
	struct fwd_auto	**ap, *a;

	if (f->atab_nb == 0)
		return;
	for (ap = auto_bucket(f, mac); (a = *ap) != NULL; ap = &a->hnext)
		if (memcmp(a->mac, mac, ETHER_ADDR_LEN) == 0) {
			*ap = a->hnext;
			fwd_port_unref(f, a->port);
			free(a);
			f->nauto--;
			return;
		}
}

void
fwd_auto_clear(struct fwd *f)
{
	struct fwd_auto	*a, *an;
	size_t		 i;

	for (i = 0; i < f->atab_nb; i++) {
		for (a = f->atab[i]; a != NULL; a = an) {
			an = a->hnext;
			fwd_port_unref(f, a->port);
			free(a);
		}
		f->atab[i] = NULL;
	}
	f->nauto = 0;
}

size_t
fwd_auto_count(const struct fwd *f)
{
	return f->nauto;
}

struct fwd_port *
fwd_auto_get(struct fwd *f, const uint8_t mac[ETHER_ADDR_LEN])
{
	struct fwd_auto	*a = auto_find(f, mac);

	return a != NULL ? a->port : NULL;
}

void
fwd_auto_foreach(struct fwd *f, void (*cb)(const uint8_t *,
    const struct fwd_port *, void *), void *arg)
{
	struct fwd_auto	*a, *an;
	size_t		 i;

	for (i = 0; i < f->atab_nb; i++)
		for (a = f->atab[i]; a != NULL; a = an) {
			an = a->hnext;
			cb(a->mac, a->port, arg);
		}
}

void
fwd_port_set_flood(struct fwd_port *p, int on)
{
	p->noflood = !on;
}

int
fwd_port_flood(const struct fwd_port *p)
{
	return !p->noflood;
}

/*
 * A frame no rule matched, with automatic routes on: the count of ports,
 * or SIZE_MAX when they have no say (a unicast MAC without a route).
 */
static size_t
auto_decide(struct fwd *f, const uint8_t *dst, struct fwd_port *in,
    enum fwd_how *how)
{
	struct fwd_auto	*a;
	size_t		 i, n = 0;

	if (ether_is_multicast(dst)) {
		for (i = 0; i < f->nports; i++)
			if (f->ports[i] != in && f->ports[i]->owner != NULL &&
			    !f->ports[i]->noflood)
				f->out[n++] = f->ports[i];
	} else {
		if ((a = auto_find(f, dst)) == NULL)
			return SIZE_MAX;
		if (a->port != in && a->port->owner != NULL)
			f->out[n++] = a->port;
	}
	*how = FWD_AUTO;
	if (n > 0)
		f->stats.auto_hits++;
	return n;
}

/* Decisions. */

struct decision {
	const uint8_t	*dst, *src;
	struct fwd_port	*in;
	int		 best;		/* rank of what is in out, -1: none */
	size_t		 n;
	int		 hairpin;	/* a rule matched, but to the arrival port */
};

static void
consider(struct fwd *f, struct decision *d, struct fwd_rule *r)
{
	struct fwd_port	*p = r->port;

	if (r->rank < d->best || p->owner == NULL ||
	    !match(&r->dst, d->dst) || !match(&r->src, d->src))
		return;
	if (p == d->in) {
		d->hairpin = 1;
		return;
	}
	if (r->rank > d->best) {
		d->best = r->rank;
		d->n = 0;
		f->gen++;	/* forgets which ports are in out */
	}
	if (p->mark != f->gen) {
		p->mark = f->gen;
		f->out[d->n++] = p;
	}
}

static size_t
flood(struct fwd *f, struct fwd_port *in)
{
	size_t	i, n = 0;

	for (i = 0; i < f->nports; i++)
		if (f->ports[i] != in && f->ports[i]->owner != NULL)
			f->out[n++] = f->ports[i];
	return n;
}

static size_t
decide(struct fwd *f, const uint8_t dst[ETHER_ADDR_LEN],
    const uint8_t src[ETHER_ADDR_LEN], struct fwd_port *in, uint64_t now_ms,
    struct fwd_port ***out, enum fwd_how *how)
{
	struct decision	 d;
	struct fwd_rule	*r;
	struct fwd_mac	*m;
	uint64_t	 h;

	*out = f->out;
	if (f->learn && in != NULL && !ether_is_multicast(src))
		mac_learn(f, src, in, now_ms);

	memset(&d, 0, sizeof(d));
	d.dst = dst;
	d.src = src;
	d.in = in;
	d.best = -1;
	f->gen++;
	if (f->by_dst.n > 0) {
		h = mac_hash(dst);
		for (r = f->by_dst.b[h & (f->by_dst.nb - 1)]; r != NULL;
		    r = r->hnext)
			if (r->hash == h)
				consider(f, &d, r);
	}
	if (f->by_src.n > 0) {
		h = mac_hash(src);
		for (r = f->by_src.b[h & (f->by_src.nb - 1)]; r != NULL;
		    r = r->hnext)
			if (r->hash == h)
				consider(f, &d, r);
	}
	for (r = f->general; r != NULL; r = r->hnext)
		consider(f, &d, r);

	if (d.n > 0) {
		f->stats.rule_hits++;
		*how = FWD_RULE;
		return d.n;
	}
	if (!d.hairpin && f->auto_on && (d.n = auto_decide(f, dst, in,
	    how)) != SIZE_MAX)
		return d.n;
	if (d.hairpin || !f->learn) {
		/* A rule sending it back where it came from covers it too. */
		if (!f->learn)
			f->stats.no_route++;
		*how = FWD_DROP;
		return 0;
	}

	if (!ether_is_multicast(dst) && (m = mac_find(f, dst)) != NULL &&
	    m->port->owner != NULL && !mac_expired(m, now_ms)) {
		if (m->port == in) {
			/* Already on the segment it came from. */
			*how = FWD_DROP;
			return 0;
		}
		f->out[0] = m->port;
		f->stats.learned_hits++;
		*how = FWD_LEARNED;
		return 1;
	}
	f->stats.floods++;
	*how = FWD_FLOOD;
	return flood(f, in);
}

/*
 * A node that relays nothing: what came by a link leaves by no link.  A
 * unicast frame that would (its sender's paths are stale, or a rule says
 * so) is counted; a broadcast is only delivered here.
 */
size_t
fwd_decide(struct fwd *f, const uint8_t dst[ETHER_ADDR_LEN],
    const uint8_t src[ETHER_ADDR_LEN], struct fwd_port *in, uint64_t now_ms,
    struct fwd_port ***out, enum fwd_how *how)
{
	size_t	 n, i, k;

	n = decide(f, dst, src, in, now_ms, out, how);
	if (!f->norelay || in == NULL || in->kind != FWD_LINK)
		return n;
	for (i = k = 0; i < n; i++)
		if (f->out[i]->kind != FWD_LINK)
			f->out[k++] = f->out[i];
	if (k < n && !ether_is_multicast(dst))
		f->stats.relay_refused++;
	if (k == 0)
		*how = FWD_DROP;
	return k;
}

/* Duplicate suppression. */

static uint32_t
seen_bucket(uint64_t key)
{
	return (uint32_t)(mix64(key) & (SEEN_BUCKETS - 1));
}

/*
 * Why a fingerprint, and not the arrival link: the check exists for the
 * copies of one frame that come round a mesh by other links, so state kept
 * per link would let every such copy through; and which origins a link may
 * carry cannot be told either, since a peer forwards frames of every origin
 * behind it, and that set changes as links come and go.  What a forger
 * cannot know is the bytes of the frame it wants suppressed.  Bytes 14 to
 * 25 (the IPv4 header up to its checksum, or the IPv6 traffic class and
 * lengths) are left out: a CE mark set by a queue on one path changes them.
 * A frame's first SEEN_FP_BYTES hold its addresses, ports, TCP sequence
 * numbers or ICMP identifier and sequence, which is what tells frames apart.
 */
#define SEEN_FP_BYTES	160

/* Eight bytes at a time: this runs for every frame that comes by a link. */
static uint64_t
seen_fp_add(uint64_t h, const uint8_t *p, size_t n)
{
	uint64_t	 w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	if (n > 0) {
		w = 0;
		memcpy(&w, p, n);
		h = (h ^ w ^ (uint64_t)n << 56) * 0x100000001b3ULL;
	}
	return h;
}

static uint32_t
seen_fingerprint(const uint8_t *eth, size_t len)
{
	size_t		 n = len < SEEN_FP_BYTES ? len : SEEN_FP_BYTES;
	uint64_t	 h = 0xcbf29ce484222325ULL ^ len;

	h = seen_fp_add(h, eth, n < 14 ? n : 14);
	if (n > 26)
		h = seen_fp_add(h, eth + 26, n - 26);
	return (uint32_t)(mix64(h) >> 32);
}

int
fwd_seen(struct fwd *f, uint32_t origin, uint32_t seq, const uint8_t *eth,
    size_t len)
{
	uint64_t	 key = (uint64_t)origin << 32 | seq;
	uint32_t	 i, *ip, b = seen_bucket(key);
	uint32_t	 fp = seen_fingerprint(eth, len);
	int		 conflict = 0;

	for (i = f->seen_b[b]; i != SEEN_NONE; i = f->seen[i].next) {
		if (f->seen[i].key != key)
			continue;
		if (f->seen[i].fp == fp) {
			f->stats.duplicates++;
			return 1;
		}
		conflict = 1;
	}
	if (conflict)
		f->stats.seen_conflicts++;
	if (f->seen_n == SEEN_MAX) {
		/* The slot about to be reused holds the oldest pair. */
		ip = &f->seen_b[seen_bucket(f->seen[f->seen_pos].key)];
		while (*ip != f->seen_pos)
			ip = &f->seen[*ip].next;
		*ip = f->seen[f->seen_pos].next;
	} else
		f->seen_n++;
	f->seen[f->seen_pos].key = key;
	f->seen[f->seen_pos].fp = fp;
	f->seen[f->seen_pos].next = f->seen_b[b];
	f->seen_b[b] = f->seen_pos;
	f->seen_pos = (f->seen_pos + 1) % SEEN_MAX;
	return 0;
}

void
fwd_stats(const struct fwd *f, struct fwd_stats *st)
{
	*st = f->stats;
}
