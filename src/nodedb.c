#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "nodedb.h"

/*
 * Entries sorted by (origin, kind, id): lookups are a binary search, show
 * is in order, and a node's records are next to each other.
 */
struct nodedb {
	char			 self[NODE_NAME_MAX + 1];
	size_t			 max;
	struct nodedb_entry	**e;		/* pointers: inserts move less */
	size_t			 n, cap;
	/* The same entries by key: open addressing, NULL empty. */
	struct nodedb_entry	**tab;
	size_t			 tabcap;	/* power of two, > 2 * n */
	size_t			 nodes;		/* topology records */
	size_t			 bytes;		/* raw and kept aside, all entries */
	void			(*cache_free)(void *);
	uint16_t		 lifetime_max;	/* 0: none */
	int			(*gone)(const char *, void *);
	void			*gone_arg;
	struct nodedb_stats	 stats;
};

struct nodedb *
nodedb_new(const char *self, size_t max, void (*cache_free)(void *))
{
	struct nodedb	*db;

	if ((db = calloc(1, sizeof(*db))) == NULL)
		return NULL;
	snprintf(db->self, sizeof(db->self), "%s", self);
	db->max = max != 0 ? max : NODEDB_RECORDS_MAX;
	db->cache_free = cache_free;
	return db;
}

void
nodedb_set_bounds(struct nodedb *db, uint16_t lifetime_max,
    int (*gone)(const char *, void *), void *arg)
{
	db->lifetime_max = lifetime_max;
	db->gone = gone;
	db->gone_arg = arg;
}

static void
cache_drop(struct nodedb *db, struct nodedb_entry *e)
{
	if (e->cache != NULL && db->cache_free != NULL)
		db->cache_free(e->cache);
	e->cache = NULL;
}

/* Frees the copies kept aside of e, those up to seq. */
static void
waits_free(struct nodedb *db, struct nodedb_entry *e, uint64_t seq)
{
	struct nodedb_wait	**wp = &e->wait, *w;

	while ((w = *wp) != NULL) {
		if (w->seq > seq) {
			wp = &w->next;
			continue;
		}
		*wp = w->next;
		db->bytes -= w->len;
		free(w->raw);
		free(w);
	}
}

void
nodedb_free(struct nodedb *db)
{
	size_t	 i;

	if (db == NULL)
		return;
	for (i = 0; i < db->n; i++) {
		free(db->e[i]->raw);
		waits_free(db, db->e[i], UINT64_MAX);
		cache_drop(db, db->e[i]);
		free(db->e[i]);
	}
	free(db->e);
	free(db->tab);
	free(db);
}

static uint32_t
key_hash(const char *name, uint8_t kind, uint16_t id)
{
	uint32_t	 h = hash_fnv1a(HASH_FNV_BASIS, name, strlen(name));
	uint8_t		 k[3] = { kind, (uint8_t)(id >> 8), (uint8_t)id };

	return hash_fnv1a(h, k, sizeof(k));
}

static void
tab_put(struct nodedb *db, struct nodedb_entry *e)
{
	size_t	 i;

	for (i = e->hash & (db->tabcap - 1); db->tab[i] != NULL;
	    i = (i + 1) & (db->tabcap - 1))
		;
	db->tab[i] = e;
}

/* Made anew: after it grows, and after an entry goes. */
static int
tab_build(struct nodedb *db, size_t want)
{
	struct nodedb_entry	**t;
	size_t			  cap = 64, i;

	while (cap <= 2 * want)
		cap *= 2;
	if (cap != db->tabcap) {
		if ((t = calloc(cap, sizeof(*t))) == NULL)
			return -1;
		free(db->tab);
		db->tab = t;
		db->tabcap = cap;
	} else
		memset(db->tab, 0, cap * sizeof(*db->tab));
	for (i = 0; i < db->n; i++)
		tab_put(db, db->e[i]);
	return 0;
}

static struct nodedb_entry *
tab_get(const struct nodedb *db, const char *name, uint8_t kind, uint16_t id)
{
	struct nodedb_entry	*e;
	uint32_t		 h;
	size_t			 i;

	if (db->tabcap == 0)
		return NULL;
	h = key_hash(name, kind, id);
	for (i = h & (db->tabcap - 1); (e = db->tab[i]) != NULL;
	    i = (i + 1) & (db->tabcap - 1))
		if (e->hash == h && e->kind == kind && e->id == id &&
		    strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static int
key_cmp(const struct nodedb_entry *e, const char *name, uint8_t kind,
    uint16_t id)
{
	int	 c;

	if ((c = strcmp(e->name, name)) != 0)
		return c;
	if (e->kind != kind)
		return e->kind < kind ? -1 : 1;
	return e->id == id ? 0 : e->id < id ? -1 : 1;
}

/* The index of the key, or where it would go (with *found 0). */
static size_t
find(const struct nodedb *db, const char *name, uint8_t kind, uint16_t id,
    int *found)
{
	size_t	 lo = 0, hi = db->n, mid;
	int	 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = key_cmp(db->e[mid], name, kind, id);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

static int
set_raw(struct nodedb *db, struct nodedb_entry *e, const uint8_t *raw,
    size_t n)
{
	uint8_t	*p;

	if ((p = malloc(n)) == NULL)
		return -1;
	memcpy(p, raw, n);
	free(e->raw);
	db->bytes -= e->len;
	e->raw = p;
	e->len = n;
	db->bytes += n;
	cache_drop(db, e);
	return 0;
}

/* The first entry of origin name (where its bucket is), or NULL. */
static struct nodedb_entry *
origin_first(const struct nodedb *db, const char *name)
{
	size_t	 at;
	int	 found;

	at = find(db, name, 0, 0, &found);
	return at < db->n && strcmp(db->e[at]->name, name) == 0 ?
	    db->e[at] : NULL;
}

/* The origin's bucket filled up to now: 1 if a record may be taken. */
static int
origin_may(struct nodedb_entry *first, uint64_t now_ms)
{
	uint64_t	 t;

	if (now_ms > first->tokens_ms) {
		t = first->tokens + (now_ms - first->tokens_ms) *
		    NODEDB_ORIGIN_RATE;
		first->tokens = t > NODEDB_ORIGIN_BURST * 1000 ?
		    NODEDB_ORIGIN_BURST * 1000 : (uint32_t)t;
		first->tokens_ms = now_ms;
	}
	return first->tokens >= 1000;
}

/* Whether a newer copy of e (held, not ours) must wait now. */
static int
must_wait(struct nodedb *db, struct nodedb_entry *e, uint64_t now_ms)
{
	struct nodedb_entry	*first;

	if (now_ms - e->received_ms < NODEDB_MIN_ARRIVAL_MS)
		return 1;
	return (first = origin_first(db, e->name)) != NULL &&
	    !origin_may(first, now_ms);
}

/* The lifetime held: the sender's, within ours. */
static uint16_t
granted(struct nodedb *db, uint16_t lifetime)
{
	if (db->lifetime_max == 0 || lifetime <= db->lifetime_max)
		return lifetime;
	db->stats.lifetime_cut++;
	return db->lifetime_max;
}

/*
 * Keeps a newer copy of e aside as from link from, unless that link's
 * copy kept is as new, or there is no room (counted as full).
 */
static void
wait_keep(struct nodedb *db, struct nodedb_entry *e, const uint8_t *raw,
    size_t n, uint64_t seq, const void *from)
{
	struct nodedb_wait	*w, **wp;
	size_t			 k = 0;

	for (wp = &e->wait; (w = *wp) != NULL; wp = &w->next, k++)
		if (w->from == from)
			break;
	if (w != NULL) {
		if (seq <= w->seq)
			return;
		*wp = w->next;
		db->bytes -= w->len;
		free(w->raw);
	} else if (k >= NODEDB_WAITS_MAX ||
	    (w = calloc(1, sizeof(*w))) == NULL) {
		db->stats.full++;
		return;
	}
	if (db->bytes + n > NODEDB_BYTES_MAX || (w->raw = malloc(n)) == NULL) {
		free(w);
		db->stats.full++;
		return;
	}
	memcpy(w->raw, raw, n);
	w->len = n;
	w->seq = seq;
	w->from = from;
	db->bytes += n;
	/* Newest first: the order they are handed back in. */
	for (wp = &e->wait; *wp != NULL && (*wp)->seq > seq;
	    wp = &(*wp)->next)
		;
	w->next = *wp;
	*wp = w;
	db->stats.delayed++;
}

static struct nodedb_entry *
insert(struct nodedb *db, size_t at, const struct node_hdr *h, uint64_t now_ms)
{
	struct nodedb_entry	*ne, **na;
	size_t			 cap;

	if (db->n == db->cap) {
		cap = db->cap != 0 ? db->cap * 2 : 16;
		if ((na = reallocarray(db->e, cap, sizeof(*na))) == NULL)
			return NULL;
		db->e = na;
		db->cap = cap;
	}
	if ((db->n + 1) * 2 >= db->tabcap && tab_build(db, db->n + 1) == -1)
		return NULL;
	if ((ne = calloc(1, sizeof(*ne))) == NULL)
		return NULL;
	memmove(&db->e[at + 1], &db->e[at], (db->n - at) * sizeof(*db->e));
	db->n++;
	db->e[at] = ne;
	ne->hash = key_hash(h->name, h->kind, h->id);
	snprintf(ne->name, sizeof(ne->name), "%s", h->name);
	ne->kind = h->kind;
	ne->id = h->id;
	/* The origin's first entry now: its bucket comes with it. */
	if (at + 1 < db->n && strcmp(db->e[at + 1]->name, ne->name) == 0) {
		ne->tokens = db->e[at + 1]->tokens;
		ne->tokens_ms = db->e[at + 1]->tokens_ms;
	} else {
		ne->tokens = NODEDB_ORIGIN_BURST * 1000;
		ne->tokens_ms = now_ms;
	}
	tab_put(db, ne);
	if (h->kind == NODE_KIND_TOPO)
		db->nodes++;
	return ne;
}

static void
erase(struct nodedb *db, size_t at)
{
	struct nodedb_entry	*e = db->e[at];

	if (e->kind == NODE_KIND_TOPO)
		db->nodes--;
	/* The origin's first entry: the next one keeps its bucket. */
	if ((at == 0 || strcmp(db->e[at - 1]->name, e->name) != 0) &&
	    at + 1 < db->n && strcmp(db->e[at + 1]->name, e->name) == 0) {
		db->e[at + 1]->tokens = e->tokens;
		db->e[at + 1]->tokens_ms = e->tokens_ms;
	}
	db->bytes -= e->len;
	waits_free(db, e, UINT64_MAX);
	cache_drop(db, e);
	free(e->raw);
	free(e);
	memmove(&db->e[at], &db->e[at + 1], (db->n - at - 1) * sizeof(*db->e));
	db->n--;
	(void)tab_build(db, db->n);	/* the same size: cannot fail */
}

/*
 * Drops records of unreachable origins, the longest held first, until one
 * more entry (if entry) and need more bytes fit; keep is not dropped.
 * Each round is a walk of the table: only a full database pays it.
 */
static int
make_room(struct nodedb *db, int entry, size_t need,
    const struct nodedb_entry *keep)
{
	struct nodedb_entry	*e;
	size_t			 i, at;
	int			 found;

	if (db->gone == NULL)
		return -1;
	while ((entry && db->n >= db->max) ||
	    db->bytes + need > NODEDB_BYTES_MAX) {
		e = NULL;
		for (i = 0; i < db->n; i++)
			if (!db->e[i]->self && db->e[i] != keep &&
			    (e == NULL ||
			    db->e[i]->received_ms < e->received_ms) &&
			    db->gone(db->e[i]->name, db->gone_arg))
				e = db->e[i];
		if (e == NULL)
			return -1;
		at = find(db, e->name, e->kind, e->id, &found);
		erase(db, at);
		db->stats.evicted++;
	}
	return 0;
}

enum nodedb_result
nodedb_offer(struct nodedb *db, const uint8_t *raw, size_t n,
    const struct node_hdr *h, uint64_t now_ms)
{
	struct nodedb_entry	*e, *first;
	uint64_t		 seq = h->seq;
	uint16_t		 lifetime = h->lifetime;
	size_t			 at;
	int			 found;

	e = tab_get(db, h->name, h->kind, h->id);
	if (strcmp(h->name, db->self) == 0) {
		if (e == NULL || seq > e->seq || (seq == e->seq &&
		    (n != e->len || memcmp(raw, e->raw, n) != 0))) {
			db->stats.self_newer++;
			return NODEDB_SELF;
		}
		if (seq < e->seq) {
			db->stats.older++;
			return NODEDB_OLDER;
		}
		db->stats.same++;
		return NODEDB_SAME;
	}
	if (e != NULL) {
		if (seq < e->seq) {
			db->stats.older++;
			return NODEDB_OLDER;
		}
		if (seq == e->seq) {
			db->stats.same++;
			return NODEDB_SAME;
		}
		if (must_wait(db, e, now_ms)) {
			wait_keep(db, e, raw, n, seq, NULL);
			return NODEDB_TOO_SOON;
		}
		if (n > e->len && db->bytes - e->len + n > NODEDB_BYTES_MAX &&
		    make_room(db, 0, n - e->len, e) == -1) {
			db->stats.full++;
			return NODEDB_FULL;
		}
	} else {
		if ((db->n >= db->max || db->bytes + n > NODEDB_BYTES_MAX) &&
		    make_room(db, 1, n, NULL) == -1) {
			db->stats.full++;
			return NODEDB_FULL;
		}
		at = find(db, h->name, h->kind, h->id, &found);
		if ((e = insert(db, at, h, now_ms)) == NULL)
			return NODEDB_NOMEM;
	}
	if (set_raw(db, e, raw, n) == -1) {
		if (e->raw == NULL)
			erase(db, find(db, h->name, h->kind, h->id, &found));
		return NODEDB_NOMEM;
	}
	e->seq = seq;
	e->lifetime = granted(db, lifetime);
	e->received_ms = now_ms;
	waits_free(db, e, seq);
	/* A first record is never held back; a new copy takes a token. */
	if ((first = origin_first(db, h->name)) != NULL &&
	    origin_may(first, now_ms))
		first->tokens -= 1000;
	db->stats.accepted++;
	return NODEDB_NEW;
}

int
nodedb_defer(struct nodedb *db, const uint8_t *raw, size_t n,
    const struct node_hdr *h, const void *from, uint64_t now_ms)
{
	struct nodedb_entry	*e;

	if (strcmp(h->name, db->self) == 0 ||
	    (e = tab_get(db, h->name, h->kind, h->id)) == NULL ||
	    h->seq <= e->seq || !must_wait(db, e, now_ms))
		return 0;
	wait_keep(db, e, raw, n, h->seq, from);
	return 1;
}

size_t
nodedb_late(struct nodedb *db, uint64_t now_ms,
    int (*cb)(const uint8_t *, size_t, const void *, void *), void *arg)
{
	struct nodedb_wait	*due = NULL, **tail = &due, *w, *next;
	struct nodedb_wait	*sep;
	struct nodedb_entry	*e;
	size_t			 i, waiting = 0;

	/*
	 * Taken out first: cb offers records, and an offer may make room by
	 * erasing entries.  Each record's copies stay together, newest
	 * first, a NULL-raw separator after them.
	 */
	for (i = 0; i < db->n; i++) {
		e = db->e[i];
		if (e->wait == NULL)
			continue;
		waits_free(db, e, e->seq);
		if (e->wait == NULL)
			continue;
		if (must_wait(db, e, now_ms)) {
			waiting++;
			continue;
		}
		if ((sep = calloc(1, sizeof(*sep))) == NULL) {
			waiting++;
			continue;
		}
		*tail = e->wait;
		for (w = e->wait; w != NULL; w = w->next) {
			db->bytes -= w->len;
			tail = &w->next;
		}
		e->wait = NULL;
		*tail = sep;
		tail = &sep->next;
	}
	for (w = due; w != NULL; w = next) {
		next = w->next;
		if (w->raw != NULL) {
			db->stats.late++;
			if (cb != NULL && cb(w->raw, w->len, w->from, arg))
				/* The rest of this record's are older. */
				while (next != NULL && next->raw != NULL) {
					free(w->raw);
					free(w);
					w = next;
					next = w->next;
				}
		}
		free(w->raw);
		free(w);
	}
	return waiting;
}

int
nodedb_originate(struct nodedb *db, const uint8_t *raw, size_t n,
    const struct node_hdr *h, uint64_t now_ms)
{
	struct nodedb_entry	*e;
	size_t			 at;
	int			 found;

	at = find(db, db->self, h->kind, h->id, &found);
	if (found)
		e = db->e[at];
	else if ((e = insert(db, at, h, now_ms)) == NULL)
		return -1;
	if (set_raw(db, e, raw, n) == -1) {
		if (e->raw == NULL)
			erase(db, at);
		return -1;
	}
	e->seq = h->seq;
	e->lifetime = h->lifetime;
	e->received_ms = now_ms;
	e->self = 1;
	return 0;
}

size_t
nodedb_age(struct nodedb *db, uint64_t now_ms,
    void (*cb)(const struct nodedb_entry *, void *), void *arg)
{
	size_t	 i = 0, gone = 0;

	while (i < db->n) {
		struct nodedb_entry *e = db->e[i];

		if (e->self || now_ms - e->received_ms <
		    (uint64_t)e->lifetime * 1000) {
			i++;
			continue;
		}
		if (cb != NULL)
			cb(e, arg);
		erase(db, i);
		db->stats.aged++;
		gone++;
	}
	return gone;
}

const struct nodedb_entry *
nodedb_get(const struct nodedb *db, const char *name, uint8_t kind,
    uint16_t id)
{
	return tab_get(db, name, kind, id);
}

int
nodedb_same(struct nodedb *db, const uint8_t *raw, size_t n,
    const struct node_hdr *h)
{
	struct nodedb_entry	*e = tab_get(db, h->name, h->kind, h->id);

	if (e == NULL || e->seq != h->seq || e->len != n ||
	    memcmp(e->raw, raw, n) != 0)
		return 0;
	db->stats.same++;
	return 1;
}

int
nodedb_index(const struct nodedb *db, const char *name, uint8_t kind,
    uint16_t id)
{
	size_t	 at;
	int	 found;

	at = find(db, name, kind, id, &found);
	return found ? (int)at : -1;
}

size_t
nodedb_nodes(const struct nodedb *db)
{
	return db->nodes;
}

void
nodedb_set_cache(struct nodedb *db, size_t i, void *cache)
{
	if (i >= db->n) {
		if (cache != NULL && db->cache_free != NULL)
			db->cache_free(cache);
		return;
	}
	cache_drop(db, db->e[i]);
	db->e[i]->cache = cache;
}

size_t
nodedb_count(const struct nodedb *db)
{
	return db->n;
}

const struct nodedb_entry *
nodedb_at(const struct nodedb *db, size_t i)
{
	return i < db->n ? db->e[i] : NULL;
}

void
nodedb_stats(const struct nodedb *db, struct nodedb_stats *st)
{
	*st = db->stats;
}

const char *
nodedb_result_name(enum nodedb_result r)
{
	switch (r) {
	case NODEDB_NEW:	return "new";
	case NODEDB_SAME:	return "same";
	case NODEDB_OLDER:	return "older";
	case NODEDB_SELF:	return "about us";
	case NODEDB_FULL:	return "database full";
	case NODEDB_TOO_SOON:	return "too soon after the last";
	case NODEDB_NOMEM:	return "out of memory";
	}
	return "?";
}
