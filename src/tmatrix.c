/* The traffic matrix cut to the heaviest, the rest summed by node. */
#include <stdlib.h>
#include <string.h>

#include "tmatrix.h"

/*
 * One MAC of an axis, its pairs summed; id: its place in MAC order (pair
 * pi's, before the pairs are summed).
 */
struct tmatrix_ent {
	uint64_t	 key;		/* the MAC as a number, to sort by */
	uint8_t		 mac[ETHER_ADDR_LEN];
	const char	*node;
	uint64_t	 rate10, bytes;
	size_t		 pi, id, lab;
};

/* The lighter MACs of one node: ents[start..end). */
struct tmatrix_group {
	size_t		 start, end;
	uint64_t	 rate10, bytes;
};

static uint64_t
tmatrix_key(const uint8_t *mac)
{
	uint64_t	 k = 0;
	size_t		 i;

	for (i = 0; i < ETHER_ADDR_LEN; i++)
		k = k << 8 | mac[i];
	return k;
}

static int
tmatrix_mac_cmp(const void *a, const void *b)
{
	uint64_t	 x = ((const struct tmatrix_ent *)a)->key;
	uint64_t	 y = ((const struct tmatrix_ent *)b)->key;

	return x < y ? -1 : x > y;
}

static int
tmatrix_heavier(uint64_t ra, uint64_t ba, uint64_t rb, uint64_t bb)
{
	if (ra != rb)
		return ra > rb ? -1 : 1;
	if (ba != bb)
		return ba > bb ? -1 : 1;
	return 0;
}

static int
tmatrix_weight_cmp(const void *a, const void *b)
{
	const struct tmatrix_ent *x = a, *y = b;
	int	 c = tmatrix_heavier(x->rate10, x->bytes, y->rate10, y->bytes);

	return c != 0 ? c : tmatrix_mac_cmp(a, b);
}

/* By node name, the MACs of no known node last. */
static int
tmatrix_node_cmp(const void *a, const void *b)
{
	const struct tmatrix_ent *x = a, *y = b;

	if ((x->node[0] == '\0') != (y->node[0] == '\0'))
		return x->node[0] == '\0' ? 1 : -1;
	return strcmp(x->node, y->node);
}

static int
tmatrix_group_cmp(const void *a, const void *b)
{
	const struct tmatrix_group *x = a, *y = b;
	int	 c = tmatrix_heavier(x->rate10, x->bytes, y->rate10, y->bytes);

	if (c != 0)
		return c;
	return x->start < y->start ? -1 : x->start > y->start;
}

static size_t
tmatrix_label(struct tmatrix_label *labels, size_t *n,
    enum tmatrix_kind kind, const uint8_t *mac, const char *node,
    uint64_t rate10, uint64_t bytes)
{
	struct tmatrix_label	*l = &labels[*n];

	memset(l, 0, sizeof(*l));
	l->kind = kind;
	if (mac != NULL)
		memcpy(l->mac, mac, ETHER_ADDR_LEN);
	if (node != NULL)
		memcpy(l->node, node, strnlen(node, NODE_NAME_MAX));
	l->rate10 = rate10;
	l->bytes = bytes;
	return (*n)++;
}

/*
 * One axis (src: sources, else destinations): its labels, and in
 * label[i] the one pair i goes to; -1 out of memory.
 */
static int
tmatrix_axis(const struct tmatrix_pair *p, size_t n, unsigned int top,
    int src, struct tmatrix_label *labels, size_t *nlabels, size_t *label)
{
	struct tmatrix_ent	*e;
	struct tmatrix_group	*g = NULL;
	size_t			 i, m = 0, keep, ng = 0, rest = (size_t)-1;
	size_t			*of;
	struct tmatrix_label	*l;

	*nlabels = 0;
	if ((e = calloc(n + 1, sizeof(*e))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		e[i].pi = i;
		memcpy(e[i].mac, src ? p[i].src : p[i].dst, ETHER_ADDR_LEN);
		e[i].key = tmatrix_key(e[i].mac);
		e[i].node = src ? p[i].src_node : p[i].dst_node;
		e[i].rate10 = p[i].r.rate10;
		e[i].bytes = p[i].r.bytes;
	}
	qsort(e, n, sizeof(*e), tmatrix_mac_cmp);
	for (i = 0; i < n; i++) {
		if (m > 0 && e[m - 1].key == e[i].key) {
			label[e[i].pi] = m - 1;
			e[m - 1].rate10 += e[i].rate10;
			e[m - 1].bytes += e[i].bytes;
			if (e[m - 1].node[0] == '\0')
				e[m - 1].node = e[i].node;
			continue;
		}
		label[e[i].pi] = m;
		e[m] = e[i];
		e[m].id = m;
		m++;
	}
	qsort(e, m, sizeof(*e), tmatrix_weight_cmp);
	keep = m <= top ? m : top / 2;
	for (i = 0; i < keep; i++)
		e[i].lab = tmatrix_label(labels, nlabels, TMATRIX_MAC,
		    e[i].mac, e[i].node, e[i].rate10, e[i].bytes);
	if (keep < m) {
		/* The lighter, by node: each node's MACs one range. */
		qsort(e + keep, m - keep, sizeof(*e), tmatrix_node_cmp);
		if ((g = calloc(m - keep, sizeof(*g))) == NULL) {
			free(e);
			return -1;
		}
		for (i = keep; i < m && e[i].node[0] != '\0'; i++) {
			if (ng == 0 || strcmp(e[g[ng - 1].start].node,
			    e[i].node) != 0)
				g[ng++].start = i;
			g[ng - 1].end = i + 1;
			g[ng - 1].rate10 += e[i].rate10;
			g[ng - 1].bytes += e[i].bytes;
		}
		qsort(g, ng, sizeof(*g), tmatrix_group_cmp);
		for (i = 0; i < ng; i++) {
			size_t	 k, lab;

			if (*nlabels < top)
				lab = tmatrix_label(labels, nlabels,
				    TMATRIX_NODE, NULL, e[g[i].start].node,
				    g[i].rate10, g[i].bytes);
			else {
				if (rest == (size_t)-1)
					rest = tmatrix_label(labels, nlabels,
					    TMATRIX_REST, NULL, NULL, 0, 0);
				lab = rest;
			}
			for (k = g[i].start; k < g[i].end; k++)
				e[k].lab = lab;
		}
		/* And those of no known node. */
		for (i = keep; i < m; i++) {
			if (e[i].node[0] != '\0')
				continue;
			if (rest == (size_t)-1)
				rest = tmatrix_label(labels, nlabels,
				    TMATRIX_REST, NULL, NULL, 0, 0);
			e[i].lab = rest;
		}
		if (rest != (size_t)-1) {
			l = &labels[rest];
			for (i = keep; i < m; i++)
				if (e[i].lab == rest) {
					l->rate10 += e[i].rate10;
					l->bytes += e[i].bytes;
				}
		}
		free(g);
	}
	/* From a pair's MAC to its label. */
	if ((of = calloc(m + 1, sizeof(*of))) == NULL) {
		free(e);
		return -1;
	}
	for (i = 0; i < m; i++)
		of[e[i].id] = e[i].lab;
	for (i = 0; i < n; i++)
		label[i] = of[label[i]];
	free(of);
	free(e);
	return 0;
}

struct tmatrix *
tmatrix_build(const struct tmatrix_pair *p, size_t n, unsigned int top)
{
	struct tmatrix		*t;
	struct tmatrix_cell	*c;
	size_t			*sl = NULL, *dl = NULL, i, k;

	if (top < 1)
		top = 1;
	if (top > TMATRIX_TOP_MAX)
		top = TMATRIX_TOP_MAX;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((sl = calloc(n + 1, sizeof(*sl))) == NULL ||
	    (dl = calloc(n + 1, sizeof(*dl))) == NULL ||
	    tmatrix_axis(p, n, top, 1, t->rows, &t->nrows, sl) == -1 ||
	    tmatrix_axis(p, n, top, 0, t->cols, &t->ncols, dl) == -1)
		goto fail;
	if ((t->cells = calloc(t->nrows * t->ncols + 1,
	    sizeof(*t->cells))) == NULL ||
	    (t->used = calloc(t->nrows * t->ncols + 1, 1)) == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		k = sl[i] * t->ncols + dl[i];
		c = &t->cells[k];
		c->bytes += p[i].r.bytes;
		c->frames += p[i].r.frames;
		c->rate1 += p[i].r.rate1;
		c->rate10 += p[i].r.rate10;
		t->used[k] = 1;
	}
	free(sl);
	free(dl);
	return t;
 fail:
	free(sl);
	free(dl);
	tmatrix_free(t);
	return NULL;
}

void
tmatrix_free(struct tmatrix *t)
{
	if (t == NULL)
		return;
	free(t->cells);
	free(t->used);
	free(t);
}

const struct tmatrix_cell *
tmatrix_at(const struct tmatrix *t, size_t i, size_t j)
{
	if (i >= t->nrows || j >= t->ncols || !t->used[i * t->ncols + j])
		return NULL;
	return &t->cells[i * t->ncols + j];
}
