#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "traffic.h"

#define TRAFFIC_SLOTS	10		/* one second each */
#define TRAFFIC_BUCKETS	1024

/* Bytes per whole second of the last ten, and the second in progress. */
struct meter {
	uint64_t	 bytes, frames;
	uint64_t	 slot[TRAFFIC_SLOTS];
	uint64_t	 cur;
	uint64_t	 last_ms;	/* of the last frame */
};

struct pair {
	struct pair	*next;
	uint8_t		 key[2 * ETHER_ADDR_LEN];
	struct meter	 m;
};

struct tnode {
	struct tnode	*next;
	char		 name[NODE_NAME_MAX + 1];
	struct meter	 m;
};

struct traffic {
	struct pair	*pb[TRAFFIC_BUCKETS];
	struct tnode	*nb[TRAFFIC_BUCKETS];
	size_t		 npairs, nnodes;
	uint64_t	 sec;		/* whole seconds since the origin */
	unsigned int	 pos;		/* slot of the second just completed */
	uint64_t	 overflow;
	uint64_t	 version;
	uint32_t	 seed;		/* of the hashes: guests pick the keys */
};

struct traffic *
traffic_new(uint64_t now_ms, uint32_t seed)
{
	struct traffic	*t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->sec = now_ms / 1000;
	t->seed = seed;
	return t;
}

void
traffic_free(struct traffic *t)
{
	struct pair	*p, *pn;
	struct tnode	*n, *nn;
	size_t		 i;

	if (t == NULL)
		return;
	for (i = 0; i < TRAFFIC_BUCKETS; i++) {
		for (p = t->pb[i]; p != NULL; p = pn) {
			pn = p->next;
			free(p);
		}
		for (n = t->nb[i]; n != NULL; n = nn) {
			nn = n->next;
			free(n);
		}
	}
	free(t);
}

static void
meter_add(struct meter *m, size_t len, uint64_t now_ms)
{
	m->bytes += len;
	m->frames++;
	m->cur += len;
	m->last_ms = now_ms;
}

/* Closes n seconds: the one in progress, then empty ones. */
static void
meter_shift(struct meter *m, unsigned int pos, uint64_t n)
{
	uint64_t	 i;

	if (n >= TRAFFIC_SLOTS) {
		memset(m->slot, 0, sizeof(m->slot));
		m->cur = 0;
		return;
	}
	for (i = 0; i < n; i++) {
		pos = (pos + 1) % TRAFFIC_SLOTS;
		m->slot[pos] = i == 0 ? m->cur : 0;
	}
	m->cur = 0;
}

static void
meter_rate(const struct meter *m, unsigned int pos, struct node_rate *r)
{
	uint64_t	 sum = 0;
	size_t		 i;

	for (i = 0; i < TRAFFIC_SLOTS; i++)
		sum += m->slot[i];
	r->bytes = m->bytes;
	r->frames = m->frames;
	r->rate1 = m->slot[pos] > UINT32_MAX ? UINT32_MAX :
	    (uint32_t)m->slot[pos];
	sum /= TRAFFIC_SLOTS;
	r->rate10 = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

void
traffic_count(struct traffic *t, const uint8_t *src, const uint8_t *dst,
    const char *dst_node, size_t len, uint64_t now_ms)
{
	uint8_t		 key[2 * ETHER_ADDR_LEN];
	struct pair	*p;
	struct tnode	*n;
	uint32_t	 h;

	traffic_tick(t, now_ms);
	memcpy(key, src, ETHER_ADDR_LEN);
	memcpy(key + ETHER_ADDR_LEN, dst, ETHER_ADDR_LEN);
	h = hash_fnv1a(t->seed, key, sizeof(key)) % TRAFFIC_BUCKETS;
	for (p = t->pb[h]; p != NULL; p = p->next)
		if (memcmp(p->key, key, sizeof(key)) == 0)
			break;
	if (p == NULL && t->npairs < TRAFFIC_PAIRS_MAX &&
	    (p = calloc(1, sizeof(*p))) != NULL) {
		memcpy(p->key, key, sizeof(key));
		p->next = t->pb[h];
		t->pb[h] = p;
		t->npairs++;
	}
	if (p == NULL) {
		t->overflow++;
		return;
	}
	meter_add(&p->m, len, now_ms);
	t->version++;

	h = hash_fnv1a(t->seed, dst_node, strlen(dst_node)) %
	    TRAFFIC_BUCKETS;
	for (n = t->nb[h]; n != NULL; n = n->next)
		if (strcmp(n->name, dst_node) == 0)
			break;
	if (n == NULL && t->nnodes < TRAFFIC_NODES_MAX &&
	    (n = calloc(1, sizeof(*n))) != NULL) {
		snprintf(n->name, sizeof(n->name), "%s", dst_node);
		n->next = t->nb[h];
		t->nb[h] = n;
		t->nnodes++;
	}
	if (n == NULL) {
		t->overflow++;
		return;
	}
	meter_add(&n->m, len, now_ms);
}

void
traffic_tick(struct traffic *t, uint64_t now_ms)
{
	struct pair	*p, **pp;
	struct tnode	*n, **np;
	uint64_t	 sec = now_ms / 1000, steps;
	size_t		 i;

	if (sec <= t->sec)
		return;
	steps = sec - t->sec;
	for (i = 0; i < TRAFFIC_BUCKETS; i++) {
		for (pp = &t->pb[i]; (p = *pp) != NULL;) {
			meter_shift(&p->m, t->pos, steps);
			if (now_ms - p->m.last_ms >= TRAFFIC_IDLE_MS) {
				*pp = p->next;
				free(p);
				t->npairs--;
				continue;
			}
			pp = &p->next;
		}
		for (np = &t->nb[i]; (n = *np) != NULL;) {
			meter_shift(&n->m, t->pos, steps);
			if (now_ms - n->m.last_ms >= TRAFFIC_IDLE_MS) {
				*np = n->next;
				free(n);
				t->nnodes--;
				continue;
			}
			np = &n->next;
		}
	}
	t->pos = (unsigned int)((t->pos + (steps < TRAFFIC_SLOTS ? steps :
	    TRAFFIC_SLOTS)) % TRAFFIC_SLOTS);
	/* After ten or more idle seconds every slot is zero: the position
	 * only has to agree with the meters, which moved the same way. */
	t->sec = sec;
}

static int
heavier(const struct node_rate *a, const struct node_rate *b)
{
	if (a->rate10 != b->rate10)
		return a->rate10 > b->rate10;
	return a->bytes > b->bytes;
}

/* Keeps the max heaviest in out[0..*n), heaviest first (insertion). */
#define KEEP(out, n, max, item) do {					\
	size_t j_;							\
	if (*(n) == (max) && !heavier(&(item).r, &(out)[*(n) - 1].r))	\
		break;							\
	j_ = *(n) < (max) ? (*(n))++ : *(n) - 1;			\
	while (j_ > 0 && heavier(&(item).r, &(out)[j_ - 1].r)) {	\
		(out)[j_] = (out)[j_ - 1];				\
		j_--;							\
	}								\
	(out)[j_] = (item);						\
} while (0)

size_t
traffic_pairs(struct traffic *t, struct node_row *out, size_t max)
{
	struct node_row	 row;
	struct pair	*p;
	size_t		 i, n = 0;

	if (max == 0)
		return 0;
	for (i = 0; i < TRAFFIC_BUCKETS; i++)
		for (p = t->pb[i]; p != NULL; p = p->next) {
			memcpy(row.src, p->key, ETHER_ADDR_LEN);
			memcpy(row.dst, p->key + ETHER_ADDR_LEN,
			    ETHER_ADDR_LEN);
			meter_rate(&p->m, t->pos, &row.r);
			KEEP(out, &n, max, row);
		}
	return n;
}

size_t
traffic_nodes(struct traffic *t, struct node_dst *out, size_t max)
{
	struct node_dst	 row;
	struct tnode	*nd;
	size_t		 i, n = 0;

	if (max == 0)
		return 0;
	for (i = 0; i < TRAFFIC_BUCKETS; i++)
		for (nd = t->nb[i]; nd != NULL; nd = nd->next) {
			memset(&row, 0, sizeof(row));
			snprintf(row.name, sizeof(row.name), "%s", nd->name);
			meter_rate(&nd->m, t->pos, &row.r);
			KEEP(out, &n, max, row);
		}
	return n;
}

uint64_t
traffic_overflow(const struct traffic *t)
{
	return t->overflow;
}

uint64_t
traffic_version(const struct traffic *t)
{
	return t->version;
}
