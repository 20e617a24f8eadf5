/*
 * The control plane's show tables: nodes, topology, the traffic matrix and
 * its inferred application topology; rows of show macs.  (show adapt is
 * shortcut.c's, show routes forwarding's: fwd_show_routes().)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fwd.h"
#include "metric.h"
#include "node.h"
#include "nodedb.h"
#include "routing.h"
#include "routing_impl.h"
#include "shortcut.h"
#include "showwin.h"
#include "spf.h"
#include "tmatrix.h"
#include "traffic.h"


/* The MACs the node's pages hold. */
static size_t
node_macs(struct routing *r, const char *name)
{
	const struct nodedb_entry *e;
	const struct routing_page *pg;
	size_t		 n = 0;
	int		 i;

	if ((i = nodedb_index(r->db, name, NODE_KIND_TOPO, 0)) == -1)
		return 0;
	while ((e = nodedb_at(r->db, (size_t)++i)) != NULL &&
	    strcmp(e->name, name) == 0)
		if ((pg = routing_page(e)) != NULL)
			n += pg->nmacs;
	return n;
}

static void
show_nodes(struct routing *r, struct showwin *w, struct evbuffer *out)
{
	const struct nodedb_entry *e;
	const struct routing_topo *t;
	uint64_t	 now = routing_now(r);
	size_t		 i, k;
	int		 idx;

	/* Three lists: arrays in JSON (out.h), "a,b" in a table. */
	evbuffer_add_printf(out, "%%columns node\tseq\tage\tlifetime\t"
	    "reachable\thops\tlinks[]\tmacs\taddresses[]\t"
	    "candidates[addr/kind]\trelay\n");
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if ((t = routing_topo(e)) == NULL || !showwin_row(w, out))
			continue;
		idx = spf_find(r->spf, e->name);
		evbuffer_add_printf(out, "%s\t%llu\t%llu\t%u\t%s\t%u\t",
		    e->name, (unsigned long long)e->seq,
		    (unsigned long long)((now - e->received_ms) / 1000),
		    e->lifetime, e->self ? "self" : idx != SPF_NONE &&
		    spf_reachable(r->spf, idx) ? "yes" : "no",
		    idx != SPF_NONE ? spf_hops(r->spf, idx) : 0);
		for (k = 0; k < t->nlinks; k++)
			evbuffer_add_printf(out, "%s%s", k ? "," : "",
			    t->links[k].name);
		evbuffer_add_printf(out, "%s\t%zu\t", t->nlinks ? "" : "-",
		    node_macs(r, e->name));
		for (k = 0; k < t->naddrs; k++)
			evbuffer_add_printf(out, "%s%s", k ? "," : "",
			    t->addrs[k]);
		evbuffer_add_printf(out, "%s\t", t->naddrs ? "" : "-");
		for (k = 0; k < t->ncands; k++)
			evbuffer_add_printf(out, "%s%s/%s", k ? "," : "",
			    t->cands[k].addr, node_cand_name(t->cands[k].kind));
		evbuffer_add_printf(out, "%s\t%s\n", t->ncands ? "" : "-",
		    (e->self ? r->norelay : (t->flags & NODE_F_NORELAY) != 0) ?
		    "no" : "yes");
	}
}

static void
show_topology(struct routing *r, struct showwin *w, struct evbuffer *out)
{
	const struct nodedb_entry *e;
	const struct routing_topo *t;
	size_t		 i, k;
	int		 a, b;

	evbuffer_add_printf(out, "%%columns node\tneighbour\trtt_ms\tstate\t"
	    "tree\n");
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if ((t = routing_topo(e)) == NULL)
			continue;
		a = spf_find(r->spf, e->name);
		for (k = 0; k < t->nlinks; k++) {
			if (!showwin_row(w, out))
				continue;
			b = spf_find(r->spf, t->links[k].name);
			evbuffer_add_printf(out, "%s\t%s\t%.3f\t%s\t%s\n",
			    e->name, t->links[k].name,
			    t->links[k].rtt_us / 1000.0,
			    a != SPF_NONE && b != SPF_NONE &&
			    spf_two_way(r->spf, a, b) ? "two-way" : "one-way",
			    a != SPF_NONE && b != SPF_NONE &&
			    spf_reachable(r->spf, a) &&
			    spf_tree_edge(r->spf, a, b) ? "yes" : "no");
		}
	}
}

static void
show_rate(struct evbuffer *out, const struct node_rate *rt)
{
	/* Records carry bytes/s; shown in bit/s, as show links has them. */
	evbuffer_add_printf(out, "\t%llu\t%llu\t%llu\t%llu\n",
	    (unsigned long long)rt->bytes, (unsigned long long)rt->frames,
	    (unsigned long long)rt->rate1 * 8,
	    (unsigned long long)rt->rate10 * 8);
}

/* Every node's guest pairs, heaviest first. */
struct trow {
	char		 node[NODE_NAME_MAX + 1];
	struct node_row	 row;
};

static int
trow_cmp(const void *a, const void *b)
{
	const struct node_rate *x = &((const struct trow *)a)->row.r;
	const struct node_rate *y = &((const struct trow *)b)->row.r;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return 0;
}

/* Our rows and those reported to us: every node's guest pairs (sorted). */
static size_t
collect(struct routing *r, struct trow **rows, int sorted)
{
	struct node_row	 own[NODE_ROWS_MAX];
	const struct routing_report *rp;
	struct trow	*t;
	size_t		 i, k, n = 0, no;

	*rows = NULL;
	if ((t = reallocarray(NULL, (r->nreports + 1) * NODE_ROWS_MAX + 1,
	    sizeof(*t))) == NULL)
		return 0;
	no = traffic_pairs(r->tm, own, NODE_ROWS_MAX);
	for (k = 0; k < no; k++) {
		snprintf(t[n].node, sizeof(t[n].node), "%s", r->node);
		t[n++].row = own[k];
	}
	for (i = 0; i < r->nreports; i++) {
		rp = r->reports[i];
		for (k = 0; k < rp->nrows; k++) {
			snprintf(t[n].node, sizeof(t[n].node), "%s",
			    rp->origin);
			t[n++].row = rp->rows[k];
		}
	}
	if (sorted)
		qsort(t, n, sizeof(*t), trow_cmp);
	*rows = t;
	return n;
}

static void
trow_swap(struct trow *a, struct trow *b)
{
	struct trow	 x = *a;

	*a = *b;
	*b = x;
}

/*
 * The k heaviest rows of t first, in no order (a quickselect; three ways,
 * as many rows weigh the same): O(n) rather than a sort's O(n log n).
 * Rows chosen to defeat the pivot get the sort after 2 log2(n) rounds.
 */
static void
trow_select(struct trow *t, size_t n, size_t k)
{
	size_t		 lo = 0, hi = n, lt, gt, i, rounds = 0, m;
	struct trow	 pivot;
	int		 c;

	for (m = n; m > 1; m >>= 1)
		rounds += 2;
	while (hi - lo > 1 && k > lo && k < hi) {
		if (rounds-- == 0) {
			qsort(t + lo, hi - lo, sizeof(*t), trow_cmp);
			return;
		}
		pivot = t[lo + (hi - lo) / 2];
		lt = lo;
		gt = hi;
		for (i = lo; i < gt;) {
			if ((c = trow_cmp(&t[i], &pivot)) < 0)
				trow_swap(&t[lt++], &t[i++]);
			else if (c > 0)
				trow_swap(&t[i], &t[--gt]);
			else
				i++;
		}
		/* [lo, lt) heavier, [lt, gt) the pivot's, [gt, hi) lighter */
		if (k <= lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			break;
	}
}

/*
 * Heaviest first.  Asked for a page (st->win), only its rows are
 * picked out, sorted and written: the work is that of the page, and a
 * copy of the rows, whatever the size of the table.
 */
static void
show_traffic(struct routing *r, const struct stmt *st, struct evbuffer *out)
{
	struct showwin	*w = st->win != NULL && st->win->limit != 0 ?
			    st->win : NULL;
	struct trow	*t;
	size_t		 i, n, from = 0, to;
	char		 a[ETHER_ADDR_STRLEN], b[ETHER_ADDR_STRLEN];

	evbuffer_add_printf(out, "%%columns src\tdst\tnode\tbytes\tframes\t"
	    "rate1\trate10\n");
	n = collect(r, &t, w == NULL);
	to = n;
	if (w != NULL) {
		from = w->offset < n ? w->offset : n;
		to = n - from > w->limit ? from + w->limit : n;
		trow_select(t, n, to);
		trow_select(t, to, from);
		qsort(t + from, to - from, sizeof(*t), trow_cmp);
		evbuffer_add_printf(out, "%%skipped %zu\n", from);
	}
	for (i = from; i < to; i++) {
		evbuffer_add_printf(out, "%s\t%s\t%s",
		    ether_format(t[i].row.src, a),
		    ether_format(t[i].row.dst, b), t[i].node);
		show_rate(out, &t[i].row.r);
	}
	if (w != NULL)
		evbuffer_add_printf(out, "%%skipped %zu\n", n - to);
	free(t);
}

static void
show_dsts(struct evbuffer *out, const char *from, const struct node_dst *d,
    size_t n)
{
	size_t	 k;

	for (k = 0; k < n; k++) {
		evbuffer_add_printf(out, "%s\t%s", from, d[k].name);
		show_rate(out, &d[k].r);
	}
}

static void
show_traffic_nodes(struct routing *r, struct evbuffer *out)
{
	struct node_dst	 own[NODE_ROWS_MAX];
	size_t		 i;

	evbuffer_add_printf(out, "%%columns src\tdst\tbytes\tframes\trate1\t"
	    "rate10\n");
	show_dsts(out, r->node, own, traffic_nodes(r->tm, own, NODE_ROWS_MAX));
	for (i = 0; i < r->nreports; i++)
		show_dsts(out, r->reports[i]->origin, r->reports[i]->dsts,
		    r->reports[i]->ndsts);
}

/*
 * VTTIF: the guest pairs' matrix normalised to its largest entry (bytes
 * since counting began: rows of different nodes are sent at different
 * moments, so their rates are not of one instant), pairs below the
 * threshold pruned; what is left is the application's topology.
 */
static void
show_traffic_topology(struct routing *r, unsigned int permille,
    struct evbuffer *out)
{
	struct trow	*t;
	size_t		 i, n;
	uint64_t	 top = 0, v;
	char		 a[ETHER_ADDR_STRLEN], b[ETHER_ADDR_STRLEN];

	evbuffer_add_printf(out, "%%columns src\tdst\tweight\tbytes\t"
	    "rate10\n");
	n = collect(r, &t, 1);
	for (i = 0; i < n; i++)
		if (!ether_is_multicast(t[i].row.dst) &&
		    t[i].row.r.bytes > top)
			top = t[i].row.r.bytes;
	for (i = 0; top > 0 && i < n; i++) {
		v = t[i].row.r.bytes;
		if (ether_is_multicast(t[i].row.dst) ||
		    v * 1000 < (uint64_t)permille * top)
			continue;
		evbuffer_add_printf(out, "%s\t%s\t%.3f\t%llu\t%llu\n",
		    ether_format(t[i].row.src, a),
		    ether_format(t[i].row.dst, b), (double)v / (double)top,
		    (unsigned long long)v,
		    (unsigned long long)t[i].row.r.rate10 * 8);
	}
	free(t);
}

static void
show_label(struct evbuffer *out, const struct tmatrix_label *l)
{
	static const char *const kinds[] = { "mac", "node", "rest" };
	char	 a[ETHER_ADDR_STRLEN];

	evbuffer_add_printf(out, "%s\t%s\t%s\t", l->kind == TMATRIX_MAC ?
	    ether_format(l->mac, a) : l->kind == TMATRIX_NODE ? l->node :
	    "rest", kinds[l->kind], l->node[0] != '\0' ? l->node : "-");
}

/*
 * The matrix the status page draws: at most top + 1 rows and columns
 * (tmatrix.h), each guest behind the node that reported its pairs, each
 * destination behind the node that claims it.
 */
static void
show_traffic_matrix(struct routing *r, unsigned int top,
    struct evbuffer *out)
{
	struct trow		*t;
	struct tmatrix_pair	*p;
	struct tmatrix		*m;
	const struct routing_rmac *rm;
	const struct tmatrix_cell *c;
	size_t			 i, j, n;

	evbuffer_add_printf(out, "%%columns src\tsrc_kind\tsrc_node\tdst\t"
	    "dst_kind\tdst_node\tbytes\tframes\trate1\trate10\n");
	n = collect(r, &t, 0);
	if ((p = calloc(n + 1, sizeof(*p))) == NULL) {
		free(t);
		return;
	}
	for (i = 0; i < n; i++) {
		memcpy(p[i].src, t[i].row.src, ETHER_ADDR_LEN);
		memcpy(p[i].dst, t[i].row.dst, ETHER_ADDR_LEN);
		snprintf(p[i].src_node, sizeof(p[i].src_node), "%s",
		    t[i].node);
		if ((rm = routing_mac_remote(r, t[i].row.dst)) != NULL)
			snprintf(p[i].dst_node, sizeof(p[i].dst_node), "%s",
			    rm->owner);
		else if (routing_mac_local(r, t[i].row.dst) != NULL)
			snprintf(p[i].dst_node, sizeof(p[i].dst_node), "%s",
			    r->node);
		p[i].r = t[i].row.r;
	}
	free(t);
	m = tmatrix_build(p, n, top);
	free(p);
	if (m == NULL)
		return;
	for (i = 0; i < m->nrows; i++)
		for (j = 0; j < m->ncols; j++) {
			if ((c = tmatrix_at(m, i, j)) == NULL)
				continue;
			show_label(out, &m->rows[i]);
			show_label(out, &m->cols[j]);
			evbuffer_add_printf(out, "%llu\t%llu\t%llu\t%llu\n",
			    (unsigned long long)c->bytes,
			    (unsigned long long)c->frames,
			    (unsigned long long)c->rate1 * 8,
			    (unsigned long long)c->rate10 * 8);
		}
	tmatrix_free(m);
}

void
routing_show(struct routing *r, const struct stmt *st, struct evbuffer *out)
{
	if (!r->on || !r->started) {
		evbuffer_add_printf(out, "%%columns note\nrouting is static "
		    "(no control plane)\n");
		return;
	}
	switch (st->show) {
	case STMT_SHOW_TRAFFIC:
	case STMT_SHOW_TRAFFIC_NODES:
	case STMT_SHOW_TRAFFIC_TOPOLOGY:
	case STMT_SHOW_TRAFFIC_MATRIX:
		routing_traffic_interest(r);
		break;
	default:
		break;
	}
	switch (st->show) {
	case STMT_SHOW_NODES:
		show_nodes(r, st->win, out);
		break;
	case STMT_SHOW_TOPOLOGY:
		show_topology(r, st->win, out);
		break;
	case STMT_SHOW_TRAFFIC:
		show_traffic(r, st, out);
		break;
	case STMT_SHOW_TRAFFIC_NODES:
		show_traffic_nodes(r, out);
		break;
	case STMT_SHOW_TRAFFIC_TOPOLOGY:
		show_traffic_topology(r, st->num, out);
		break;
	case STMT_SHOW_TRAFFIC_MATRIX:
		show_traffic_matrix(r, st->num, out);
		break;
	case STMT_SHOW_ADAPT:
		shortcut_show(r, out);
		break;
	default:
		break;
	}
}

void
routing_show_macs(struct routing *r, struct showwin *w, struct evbuffer *out)
{
	struct routing_lmac	*lm;
	struct routing_rmac	*rm;
	uint64_t		 now;
	size_t			 i;
	char			 a[ETHER_ADDR_STRLEN];

	if (!r->on || !r->started)
		return;
	now = routing_now(r);
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++) {
		for (lm = r->local[i]; lm != NULL; lm = lm->next) {
			if (!showwin_row(w, out))
				continue;
			evbuffer_add_printf(out, "%s\tinterface\t%s\t%llu\t%s\t"
			    "%s\t%u\n", ether_format(lm->mac, a),
			    fwd_port_name(lm->port),
			    (unsigned long long)((now - lm->seen_ms) / 1000),
			    r->node, lm->pending ? "claim" : "local",
			    lm->version);
		}
		for (rm = r->routes[i]; rm != NULL; rm = rm->next) {
			if (!showwin_row(w, out))
				continue;
			evbuffer_add_printf(out, "%s\tlink\t%s\t-\t%s\t"
			    "control\t%u\n", ether_format(rm->mac, a),
			    rm->via[0] != '\0' ? rm->via : "-", rm->owner,
			    rm->version);
		}
	}
}

/* The nodes known (with a topology record, this one too) and reachable. */
struct routing_reach {
	uint64_t	nodes, nodes_reachable;
};

static const struct metric_stat routing_reach_rows[] = {
	METRIC_STAT("nodes", struct routing_reach, nodes, "Nodes known: "
	    "with a topology record held, this node's too."),
	METRIC_STAT("nodes_reachable", struct routing_reach, nodes_reachable,
	    "Nodes reachable by the links up, this node too."),
};

static void
routing_reach(struct routing *r, struct routing_reach *rr)
{
	const struct nodedb_entry *e;
	size_t		 i;
	int		 idx;

	rr->nodes = nodedb_nodes(r->db);
	rr->nodes_reachable = 0;
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (routing_topo(e) == NULL)
			continue;
		idx = spf_find(r->spf, e->name);
		rr->nodes_reachable += e->self || (idx != SPF_NONE &&
		    spf_reachable(r->spf, idx));
	}
}

void
routing_show_nodes_stats(struct routing *r, struct evbuffer *out)
{
	struct routing_reach rr;

	routing_reach(r, &rr);
	metric_stat_rows(out, routing_reach_rows, sizeof(routing_reach_rows) /
	    sizeof(routing_reach_rows[0]), &rr);
}

void
routing_metrics(struct routing *r, const struct metric_out *mo)
{
	struct routing_reach rr;

	if (!r->on || !r->started)
		return;
	routing_reach(r, &rr);
	metric_stat_gauges(mo, routing_reach_rows, sizeof(routing_reach_rows) /
	    sizeof(routing_reach_rows[0]), &rr);
	shortcut_metrics(r, mo);
}
