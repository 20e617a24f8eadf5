#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "spf.h"

struct spf_edge {
	int		 to;
	uint32_t	 rtt_us;
};

struct spf_node {
	char		 name[NODE_NAME_MAX + 1];
	struct spf_edge	*edges;
	size_t		 nedges, cap;
	/* results */
	int		 reach, done;
	unsigned int	 hops;
	uint64_t	 rtt;
	int		 first;		/* first hop from self */
	int		 parent;	/* in the broadcast tree */
	unsigned int	 depth;		/* from the tree's root */
};

struct spf {
	struct spf_node	*n;
	size_t		 count, cap;
	int		 self;
	int		*queue;
};

struct spf *
spf_new(void)
{
	return calloc(1, sizeof(struct spf));
}

void
spf_clear(struct spf *s)
{
	size_t	 i;

	for (i = 0; i < s->count; i++)
		free(s->n[i].edges);
	s->count = 0;
	s->self = SPF_NONE;
}

void
spf_free(struct spf *s)
{
	if (s == NULL)
		return;
	spf_clear(s);
	free(s->n);
	free(s->queue);
	free(s);
}

int
spf_find(const struct spf *s, const char *name)
{
	size_t	 i;

	for (i = 0; i < s->count; i++)
		if (strcmp(s->n[i].name, name) == 0)
			return (int)i;
	return SPF_NONE;
}

int
spf_node(struct spf *s, const char *name)
{
	struct spf_node	*nn;
	size_t		 cap;
	int		 i;

	if ((i = spf_find(s, name)) != SPF_NONE)
		return i;
	if (s->count == s->cap) {
		cap = s->cap != 0 ? s->cap * 2 : 16;
		if ((nn = reallocarray(s->n, cap, sizeof(*nn))) == NULL)
			return -1;
		s->n = nn;
		s->cap = cap;
	}
	nn = &s->n[s->count];
	memset(nn, 0, sizeof(*nn));
	snprintf(nn->name, sizeof(nn->name), "%s", name);
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
	return 0;
}

static int
lists(const struct spf *s, int a, int b)
{
	size_t	 i;

	for (i = 0; i < s->n[a].nedges; i++)
		if (s->n[a].edges[i].to == b)
			return 1;
	return 0;
}

int
spf_two_way(const struct spf *s, int a, int b)
{
	return lists(s, a, b) && lists(s, b, a);
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

static void
dijkstra(struct spf *s, int self)
{
	size_t		 i, k;
	int		 u, v;

	for (i = 0; i < s->count; i++) {
		s->n[i].reach = 0;
		s->n[i].done = 0;
		s->n[i].first = SPF_NONE;
		s->n[i].hops = 0;
		s->n[i].rtt = 0;
	}
	s->n[self].reach = 1;
	for (;;) {
		u = SPF_NONE;
		for (i = 0; i < s->count; i++) {
			struct spf_node *c = &s->n[i];

			if (!c->reach || c->done)
				continue;
			if (u == SPF_NONE || better(s, c->hops, c->rtt, c->first,
			    &s->n[u]))
				u = (int)i;
		}
		if (u == SPF_NONE)
			break;
		s->n[u].done = 1;
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
			}
		}
	}
}

/* Breadth first from the root; parents by name among the nearer. */
static void
tree(struct spf *s, int root)
{
	size_t	 head = 0, tail = 0, i, k;
	int	 u, v;

	for (i = 0; i < s->count; i++) {
		s->n[i].parent = SPF_NONE;
		s->n[i].depth = UINT32_MAX;
	}
	s->n[root].depth = 0;
	s->queue[tail++] = root;
	while (head < tail) {
		u = s->queue[head++];
		for (k = 0; k < s->n[u].nedges; k++) {
			v = s->n[u].edges[k].to;
			if (!lists(s, v, u))
				continue;
			if (s->n[v].depth == UINT32_MAX) {
				s->n[v].depth = s->n[u].depth + 1;
				s->n[v].parent = u;
				s->queue[tail++] = v;
			} else if (s->n[v].depth == s->n[u].depth + 1 &&
			    strcmp(s->n[u].name,
			    s->n[s->n[v].parent].name) < 0)
				s->n[v].parent = u;
		}
	}
}

int
spf_run(struct spf *s, int self)
{
	size_t	 i;
	int	 root = SPF_NONE;
	int	*q;

	if ((q = reallocarray(s->queue, s->count + 1, sizeof(*q))) == NULL)
		return -1;
	s->queue = q;
	s->self = self;
	dijkstra(s, self);
	for (i = 0; i < s->count; i++)
		if (s->n[i].reach && (root == SPF_NONE ||
		    strcmp(s->n[i].name, s->n[root].name) < 0))
			root = (int)i;
	tree(s, root);
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
spf_parent(const struct spf *s, int i)
{
	return s->n[i].parent;
}

int
spf_tree_link(const struct spf *s, int n)
{
	if (s->self == SPF_NONE || !s->n[n].reach)
		return 0;
	return s->n[s->self].parent == n || s->n[n].parent == s->self;
}
