#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodedb.h"

/* Entries sorted by name: lookups are a binary search, show is in order. */
struct nodedb {
	char			 self[NODE_NAME_MAX + 1];
	size_t			 max;
	struct nodedb_entry	*e;
	size_t			 n, cap;
	struct nodedb_stats	 stats;
};

struct nodedb *
nodedb_new(const char *self, size_t max)
{
	struct nodedb	*db;

	if ((db = calloc(1, sizeof(*db))) == NULL)
		return NULL;
	snprintf(db->self, sizeof(db->self), "%s", self);
	db->max = max != 0 ? max : NODEDB_RECORDS_MAX;
	return db;
}

void
nodedb_free(struct nodedb *db)
{
	size_t	 i;

	if (db == NULL)
		return;
	for (i = 0; i < db->n; i++) {
		free(db->e[i].raw);
		free(db->e[i].late);
	}
	free(db->e);
	free(db);
}

/* The index of name, or where it would go (with *found 0). */
static size_t
find(const struct nodedb *db, const char *name, int *found)
{
	size_t	 lo = 0, hi = db->n, mid;
	int	 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(db->e[mid].name, name);
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
set_raw(struct nodedb_entry *e, const uint8_t *raw, size_t n)
{
	uint8_t	*p;

	if ((p = malloc(n)) == NULL)
		return -1;
	memcpy(p, raw, n);
	free(e->raw);
	e->raw = p;
	e->len = n;
	return 0;
}

static void
late_drop(struct nodedb_entry *e)
{
	free(e->late);
	e->late = NULL;
	e->late_len = 0;
	e->late_seq = 0;
}

/* Keeps the newest too-soon copy aside (none if out of memory). */
static void
late_keep(struct nodedb_entry *e, const uint8_t *raw, size_t n, uint64_t seq,
    uint16_t lifetime)
{
	uint8_t	*p;

	if (e->late != NULL && seq <= e->late_seq)
		return;
	if ((p = malloc(n)) == NULL)
		return;
	memcpy(p, raw, n);
	free(e->late);
	e->late = p;
	e->late_len = n;
	e->late_seq = seq;
	e->late_lifetime = lifetime;
}

static struct nodedb_entry *
insert(struct nodedb *db, size_t at, const char *name)
{
	struct nodedb_entry	*ne;
	size_t			 cap;

	if (db->n == db->cap) {
		cap = db->cap != 0 ? db->cap * 2 : 16;
		if ((ne = reallocarray(db->e, cap, sizeof(*ne))) == NULL)
			return NULL;
		db->e = ne;
		db->cap = cap;
	}
	memmove(&db->e[at + 1], &db->e[at], (db->n - at) * sizeof(*db->e));
	db->n++;
	ne = &db->e[at];
	memset(ne, 0, sizeof(*ne));
	snprintf(ne->name, sizeof(ne->name), "%s", name);
	return ne;
}

static void
erase(struct nodedb *db, size_t at)
{
	free(db->e[at].raw);
	free(db->e[at].late);
	memmove(&db->e[at], &db->e[at + 1], (db->n - at - 1) * sizeof(*db->e));
	db->n--;
}

enum nodedb_result
nodedb_offer(struct nodedb *db, const uint8_t *raw, size_t n,
    const char *name, uint64_t seq, uint16_t lifetime, uint64_t now_ms)
{
	struct nodedb_entry	*e;
	size_t			 at;
	int			 found;

	at = find(db, name, &found);
	e = found ? &db->e[at] : NULL;
	if (strcmp(name, db->self) == 0) {
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
		if (now_ms - e->received_ms < NODEDB_MIN_ARRIVAL_MS) {
			db->stats.too_soon++;
			late_keep(e, raw, n, seq, lifetime);
			return NODEDB_TOO_SOON;
		}
	} else {
		if (db->n >= db->max) {
			db->stats.full++;
			return NODEDB_FULL;
		}
		if ((e = insert(db, at, name)) == NULL)
			return NODEDB_NOMEM;
	}
	if (set_raw(e, raw, n) == -1) {
		if (e->raw == NULL)
			erase(db, at);
		return NODEDB_NOMEM;
	}
	e->seq = seq;
	e->lifetime = lifetime;
	e->received_ms = now_ms;
	if (e->late != NULL && e->late_seq <= seq)
		late_drop(e);
	db->stats.accepted++;
	return NODEDB_NEW;
}

size_t
nodedb_late(struct nodedb *db, uint64_t now_ms,
    void (*cb)(const struct nodedb_entry *, void *), void *arg)
{
	struct nodedb_entry	*e;
	size_t			 i, waiting = 0;

	for (i = 0; i < db->n; i++) {
		e = &db->e[i];
		if (e->late == NULL)
			continue;
		if (e->late_seq <= e->seq) {
			late_drop(e);
			continue;
		}
		if (now_ms - e->received_ms < NODEDB_MIN_ARRIVAL_MS) {
			waiting++;
			continue;
		}
		free(e->raw);
		e->raw = e->late;
		e->len = e->late_len;
		e->seq = e->late_seq;
		e->lifetime = e->late_lifetime;
		e->received_ms = now_ms;
		e->late = NULL;		/* now e->raw */
		late_drop(e);
		db->stats.late++;
		if (cb != NULL)
			cb(e, arg);
	}
	return waiting;
}

int
nodedb_originate(struct nodedb *db, const uint8_t *raw, size_t n,
    uint64_t seq, uint16_t lifetime, uint64_t now_ms)
{
	struct nodedb_entry	*e;
	size_t			 at;
	int			 found;

	at = find(db, db->self, &found);
	if (found)
		e = &db->e[at];
	else if ((e = insert(db, at, db->self)) == NULL)
		return -1;
	if (set_raw(e, raw, n) == -1) {
		if (e->raw == NULL)
			erase(db, at);
		return -1;
	}
	e->seq = seq;
	e->lifetime = lifetime;
	e->received_ms = now_ms;
	e->self = 1;
	return 0;
}

size_t
nodedb_age(struct nodedb *db, uint64_t now_ms,
    void (*cb)(const char *, void *), void *arg)
{
	size_t	 i = 0, gone = 0;

	while (i < db->n) {
		struct nodedb_entry *e = &db->e[i];

		if (e->self || now_ms - e->received_ms <
		    (uint64_t)e->lifetime * 1000) {
			i++;
			continue;
		}
		if (cb != NULL)
			cb(e->name, arg);
		erase(db, i);
		db->stats.aged++;
		gone++;
	}
	return gone;
}

const struct nodedb_entry *
nodedb_get(const struct nodedb *db, const char *name)
{
	size_t	 at;
	int	 found;

	at = find(db, name, &found);
	return found ? &db->e[at] : NULL;
}

int
nodedb_index(const struct nodedb *db, const char *name)
{
	size_t	 at;
	int	 found;

	at = find(db, name, &found);
	return found ? (int)at : -1;
}

size_t
nodedb_count(const struct nodedb *db)
{
	return db->n;
}

const struct nodedb_entry *
nodedb_at(const struct nodedb *db, size_t i)
{
	return i < db->n ? &db->e[i] : NULL;
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
