/*
 * Paths over the node graph (spf.h).  Sized for thousands of nodes: names
 * are found through a hash table, each node's edges are sorted by their
 * far end once per run (so the two-way check is a binary search), and
 * Dijkstra takes the next node from a binary heap.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "node.h"
#include "spf.h"

struct spf_edge {
	int		 to;
	uint32_t	 rtt_us;
};

struct spf_node {
	char		 name[NODE_NAME_MAX + 1];
	uint32_t	 hash;
	int		 norelay;	/* `relay no`: never a transit hop */
	struct spf_edge	*edges;
	size_t		 nedges, cap;
	/* results */
	int		 reach, done;
	unsigned int	 hops;
	uint64_t	 rtt;
	int		 first;		/* first hop from self */
	int		 parent;	/* in the broadcast tree */
	unsigned int	 depth;		/* from the tree's root */
	int		 comp;		/* its backbone's root; SPF_NONE */
	size_t		 heap_at;	/* in the heap, or SIZE_MAX */
};

struct spf {
	struct spf_node	*n;
	size_t		 count, cap;
	int		 self;
	int		*queue;		/* the tree's, and the heap */
	int		 sorted;	/* edges by their far end */
	int		*tab;		/* names: open addressing, -1 empty */
	size_t		 tabcap;	/* power of two, > 2 * count */
};

struct spf *
spf_new(void)
{
	struct spf	*s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->self = SPF_NONE;
	return s;
}

void
spf_clear(struct spf *s)
{
	size_t	 i;

	for (i = 0; i < s->count; i++)
		free(s->n[i].edges);
	s->count = 0;
	s->self = SPF_NONE;
	for (i = 0; i < s->tabcap; i++)
		s->tab[i] = -1;
}

void
spf_free(struct spf *s)
{
	if (s == NULL)
		return;
	spf_clear(s);
	free(s->n);
	free(s->queue);
	free(s->tab);
	free(s);
}

static uint32_t
name_hash(const char *name)
{
	return hash_fnv1a(HASH_FNV_BASIS, name, strlen(name));
}

static int
lookup(const struct spf *s, const char *name, uint32_t h)
{
	size_t	 i;
	int	 k;

	if (s->tabcap == 0)
		return SPF_NONE;
	for (i = h & (s->tabcap - 1); (k = s->tab[i]) != -1;
	    i = (i + 1) & (s->tabcap - 1))
		if (s->n[k].hash == h && strcmp(s->n[k].name, name) == 0)
			return k;
	return SPF_NONE;
}

static void
tab_put(struct spf *s, int k)
{
	size_t	 i;

	for (i = s->n[k].hash & (s->tabcap - 1); s->tab[i] != -1;
	    i = (i + 1) & (s->tabcap - 1))
		;
	s->tab[i] = k;
}

static int
tab_grow(struct spf *s)
{
	size_t	 cap = s->tabcap ? s->tabcap : 32, i;
	int	*t;

	while (cap <= 2 * (s->count + 1))
		cap *= 2;
	if (cap == s->tabcap)
		return 0;
	if ((t = reallocarray(s->tab, cap, sizeof(*t))) == NULL)
		return -1;
	s->tab = t;
	s->tabcap = cap;
	for (i = 0; i < cap; i++)
		t[i] = -1;
	for (i = 0; i < s->count; i++)
		tab_put(s, (int)i);
	return 0;
}

int
spf_find(const struct spf *s, const char *name)
{
	return lookup(s, name, name_hash(name));
}

int
spf_node(struct spf *s, const char *name)
{
	struct spf_node	*nn;
	uint32_t	 h = name_hash(name);
	size_t		 cap;
	int		 i;

	if ((i = lookup(s, name, h)) != SPF_NONE)
		return i;
	if (s->count == s->cap) {
		cap = s->cap != 0 ? s->cap * 2 : 16;
		if ((nn = reallocarray(s->n, cap, sizeof(*nn))) == NULL)
			return -1;
		s->n = nn;
		s->cap = cap;
	}
	if (tab_grow(s) == -1)
		return -1;
	nn = &s->n[s->count];
	memset(nn, 0, sizeof(*nn));
	snprintf(nn->name, sizeof(nn->name), "%s", name);
	nn->hash = h;
	tab_put(s, (int)s->count);
	return (int)s->count++;
}

const char *
spf_name(const struct spf *s, int i)
{
	return s->n[i].name;
}

size_t
spf_count(const struct spf *s)
{
	return s->count;
}

int
spf_link(struct spf *s, int from, int to, uint32_t rtt_us)
{
	struct spf_node	*f = &s->n[from];
	struct spf_edge	*e;
	size_t		 cap;

	if (from == to)
		return 0;
	if (f->nedges == f->cap) {
		cap = f->cap != 0 ? f->cap * 2 : 4;
		if ((e = reallocarray(f->edges, cap, sizeof(*e))) == NULL)
			return -1;
		f->edges = e;
		f->cap = cap;
	}
	f->edges[f->nedges].to = to;
	f->edges[f->nedges].rtt_us = rtt_us;
	f->nedges++;
	s->sorted = 0;
	return 0;
}

static int
edge_cmp(const void *a, const void *b)
{
	const struct spf_edge *x = a, *y = b;

	return x->to != y->to ? (x->to < y->to ? -1 : 1) : 0;
}

/* Does a list b?  Edges are sorted by spf_run(); before, a scan. */
static int
lists(const struct spf *s, int a, int b)
{
	const struct spf_node *n = &s->n[a];
	size_t		 lo = 0, hi = n->nedges, mid;

	if (!s->sorted) {
		for (mid = 0; mid < n->nedges; mid++)
			if (n->edges[mid].to == b)
				return 1;
		return 0;
	}
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (n->edges[mid].to == b)
			return 1;
		if (n->edges[mid].to < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void
sort_edges(struct spf *s)
{
	size_t	 i;

	for (i = 0; i < s->count; i++)
		if (s->n[i].nedges > 1)
			qsort(s->n[i].edges, s->n[i].nedges,
			    sizeof(struct spf_edge), edge_cmp);
	s->sorted = 1;
}

int
spf_two_way(const struct spf *s, int a, int b)
{
	return lists(s, a, b) && lists(s, b, a);
}

void
spf_set_relay(struct spf *s, int i, int relay)
{
	s->n[i].norelay = !relay;
}

int
spf_relay(const struct spf *s, int i)
{
	return !s->n[i].norelay;
}

/* Is (hops, rtt, first hop's name) of a better than of b? */
static int
better(const struct spf *s, unsigned int ha, uint64_t ra, int fa,
    const struct spf_node *b)
{
	if (ha != b->hops)
		return ha < b->hops;
	if (ra != b->rtt)
		return ra < b->rtt;
	return fa != SPF_NONE && b->first != SPF_NONE &&
	    strcmp(s->n[fa].name, s->n[b->first].name) < 0;
}

static int
heap_less(const struct spf *s, int a, int b)
{
	return better(s, s->n[a].hops, s->n[a].rtt, s->n[a].first, &s->n[b]);
}

static void
heap_set(struct spf *s, size_t i, int v)
{
	s->queue[i] = v;
	s->n[v].heap_at = i;
}

static void
heap_up(struct spf *s, size_t i)
{
	int	 v = s->queue[i];

	while (i > 0 && heap_less(s, v, s->queue[(i - 1) / 2])) {
		heap_set(s, i, s->queue[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(s, i, v);
}

static int
heap_pop(struct spf *s, size_t *n)
{
	int	 top = s->queue[0], v;
	size_t	 i = 0, c;

	s->n[top].heap_at = SIZE_MAX;
	if (--*n == 0)
		return top;
	v = s->queue[*n];
	for (;;) {
		c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && heap_less(s, s->queue[c + 1], s->queue[c]))
			c++;
		if (!heap_less(s, s->queue[c], v))
			break;
		heap_set(s, i, s->queue[c]);
		i = c;
	}
	heap_set(s, i, v);
	return top;
}

static void
dijkstra(struct spf *s, int self)
{
	size_t		 i, k, nh = 0;
	int		 u, v;

	for (i = 0; i < s->count; i++) {
		s->n[i].reach = 0;
		s->n[i].done = 0;
		s->n[i].first = SPF_NONE;
		s->n[i].hops = 0;
		s->n[i].rtt = 0;
		s->n[i].heap_at = SIZE_MAX;
	}
	s->n[self].reach = 1;
	heap_set(s, nh++, self);
	while (nh > 0) {
		u = heap_pop(s, &nh);
		s->n[u].done = 1;
		/* Reached, but no path goes on through it. */
		if (u != self && s->n[u].norelay)
			continue;
		for (k = 0; k < s->n[u].nedges; k++) {
			struct spf_edge *e = &s->n[u].edges[k];
			unsigned int	 h = s->n[u].hops + 1;
			uint64_t	 r = s->n[u].rtt + e->rtt_us;
			int		 f = u == self ? e->to : s->n[u].first;

			v = e->to;
			if (s->n[v].done || !lists(s, v, u))
				continue;
			if (!s->n[v].reach || better(s, h, r, f, &s->n[v])) {
				s->n[v].reach = 1;
				s->n[v].hops = h;
				s->n[v].rtt = r;
				s->n[v].first = f;
				if (s->n[v].heap_at == SIZE_MAX)
					heap_set(s, nh++, v);
				heap_up(s, s->n[v].heap_at);
			}
		}
	}
}

/*
 * Breadth first over the nodes that relay, from root; parents by name
 * among the nearer.
 */
static void
tree_from(struct spf *s, int root)
{
	size_t	 head = 0, tail = 0, k;
	int	 u, v;

	s->n[root].depth = 0;
	s->n[root].comp = root;
	s->queue[tail++] = root;
	while (head < tail) {
		u = s->queue[head++];
		for (k = 0; k < s->n[u].nedges; k++) {
			v = s->n[u].edges[k].to;
			if (s->n[v].norelay || !lists(s, v, u))
				continue;
			if (s->n[v].depth == UINT32_MAX) {
				s->n[v].depth = s->n[u].depth + 1;
				s->n[v].parent = u;
				s->n[v].comp = root;
				s->queue[tail++] = v;
			} else if (s->n[v].depth == s->n[u].depth + 1 &&
			    strcmp(s->n[u].name,
			    s->n[s->n[v].parent].name) < 0)
				s->n[v].parent = u;
		}
	}
}

/* A tree per backbone, from its node whose name sorts first. */
static void
tree(struct spf *s)
{
	size_t	 head, tail, i, k;
	int	 u, v, root;

	for (i = 0; i < s->count; i++) {
		s->n[i].parent = SPF_NONE;
		s->n[i].depth = UINT32_MAX;
		s->n[i].comp = SPF_NONE;
	}
	for (i = 0; i < s->count; i++) {
		if (s->n[i].norelay || s->n[i].comp != SPF_NONE)
			continue;
		/* The backbone first, for its root; tree_from() relabels it. */
		head = tail = 0;
		root = (int)i;
		s->n[i].comp = (int)i;
		s->queue[tail++] = (int)i;
		while (head < tail) {
			u = s->queue[head++];
			if (strcmp(s->n[u].name, s->n[root].name) < 0)
				root = u;
			for (k = 0; k < s->n[u].nedges; k++) {
				v = s->n[u].edges[k].to;
				if (s->n[v].norelay || s->n[v].comp != SPF_NONE ||
				    !lists(s, v, u))
					continue;
				s->n[v].comp = (int)i;
				s->queue[tail++] = v;
			}
		}
		tree_from(s, root);
	}
}

/*
 * The node of backbone c that x (relaying nothing) hangs from: its
 * neighbour there nearest the root, by name among equals; or SPF_NONE.
 */
static int
attach(const struct spf *s, int x, int c)
{
	const struct spf_node *n = &s->n[x];
	size_t		 k;
	int		 v, best = SPF_NONE;

	for (k = 0; k < n->nedges; k++) {
		v = n->edges[k].to;
		if (s->n[v].norelay || s->n[v].comp != c || !lists(s, v, x))
			continue;
		if (best == SPF_NONE || s->n[v].depth < s->n[best].depth ||
		    (s->n[v].depth == s->n[best].depth &&
		    strcmp(s->n[v].name, s->n[best].name) < 0))
			best = v;
	}
	return best;
}

int
spf_run(struct spf *s, int self)
{
	int	*q;

	if ((q = reallocarray(s->queue, s->count + 1, sizeof(*q))) == NULL)
		return -1;
	s->queue = q;
	s->self = self;
	sort_edges(s);
	dijkstra(s, self);
	tree(s);
	return 0;
}

int
spf_reachable(const struct spf *s, int i)
{
	return s->n[i].reach;
}

int
spf_next_hop(const struct spf *s, int i)
{
	return s->n[i].reach ? s->n[i].first : SPF_NONE;
}

unsigned int
spf_hops(const struct spf *s, int i)
{
	return s->n[i].hops;
}

int
spf_tree_edge(const struct spf *s, int a, int b)
{
	const struct spf_node *x = &s->n[a], *y = &s->n[b];
	size_t		 k;
	int		 v;

	if (a == b || !spf_two_way(s, a, b))
		return 0;
	if (!x->norelay && !y->norelay)
		return x->parent == b || y->parent == a;
	if (!x->norelay)
		return attach(s, b, x->comp) == a;
	if (!y->norelay)
		return attach(s, a, y->comp) == b;
	/* Both relay nothing: straight, unless a backbone hears both. */
	for (k = 0; k < x->nedges; k++) {
		v = x->edges[k].to;
		if (!s->n[v].norelay && lists(s, v, a) &&
		    attach(s, b, s->n[v].comp) != SPF_NONE)
			return 0;
	}
	return 1;
}

int
spf_tree_link(const struct spf *s, int n)
{
	if (s->self == SPF_NONE || !s->n[n].reach)
		return 0;
	return spf_tree_edge(s, s->self, n);
}
