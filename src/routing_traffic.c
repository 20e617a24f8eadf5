/*
 * The traffic matrix, out of the flooded records: each node counts what
 * its guests send (traffic.h) and reports its rows only to the nodes that
 * want them, in a report (NODE_KIND_TRAFFIC) routed hop by hop along the
 * shortest path:
 *
 *   - the whole rows to a node whose topology record has NODE_F_TRAFFIC,
 *     set for ROUTING_INTEREST_MS after show traffic (or the status page,
 *     which asks the same) was answered there;
 *   - the row toward a node to that node, if it has NODE_F_ADAPT (its
 *     shortcuts weigh the traffic both ways, shortcut.h).
 *
 * A report goes at most every ROUTING_TRAFFIC_MS while the rows change
 * (and once more when they stop), and at once to a node that has just
 * asked.  No report goes when nobody asks: guest traffic alone makes no
 * control traffic.  Each node keeps the last report of each origin it got
 * (at most ROUTING_REPORTS_MAX origins, TRAFFIC_IDLE_MS at most).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "node.h"
#include "nodedb.h"
#include "routing.h"
#include "routing_impl.h"
#include "shortcut.h"
#include "spf.h"
#include "traffic.h"

uint32_t
routing_traffic_flags(struct routing *r)
{
	uint32_t	 f = 0;

	if (r->interest_until > routing_now(r))
		f |= NODE_F_TRAFFIC;
	if (shortcut_on(r))
		f |= NODE_F_ADAPT;
	return f;
}

void
routing_traffic_interest(struct routing *r)
{
	uint64_t	 now;

	if (!r->started)
		return;
	now = routing_now(r);
	if (r->interest_until <= now)
		routing_flood_soon(r, 0);	/* the flag goes up */
	r->interest_until = now + ROUTING_INTEREST_MS;
}

static size_t
report_find(const struct routing *r, const char *origin, int *found)
{
	size_t	 lo = 0, hi = r->nreports, mid;
	int	 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(r->reports[mid]->origin, origin)) == 0) {
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

const struct routing_report *
routing_traffic_report(const struct routing *r, const char *origin)
{
	size_t	 i;
	int	 found;

	i = report_find(r, origin, &found);
	return found ? r->reports[i] : NULL;
}

/* A report for us: it replaces the origin's last. */
static void
keep(struct routing *r, const struct node_rec *rec)
{
	struct routing_report	*rp, **nr;
	size_t			 i, cap;
	int			 found;

	i = report_find(r, rec->name, &found);
	if (found)
		rp = r->reports[i];
	else {
		if (r->nreports == ROUTING_REPORTS_MAX) {
			r->st.reports_dropped++;
			return;
		}
		if (r->nreports == r->reportcap) {
			cap = r->reportcap ? 2 * r->reportcap : 16;
			if ((nr = reallocarray(r->reports, cap,
			    sizeof(*nr))) == NULL)
				return;
			r->reports = nr;
			r->reportcap = cap;
		}
		if ((rp = calloc(1, sizeof(*rp))) == NULL)
			return;
		memmove(&r->reports[i + 1], &r->reports[i],
		    (r->nreports - i) * sizeof(*r->reports));
		r->reports[i] = rp;
		r->nreports++;
		snprintf(rp->origin, sizeof(rp->origin), "%s", rec->name);
	}
	rp->at = routing_now(r);
	rp->nrows = rec->nrows;
	rp->ndsts = rec->ndsts;
	memcpy(rp->rows, rec->rows, rec->nrows * sizeof(rp->rows[0]));
	memcpy(rp->dsts, rec->dsts, rec->ndsts * sizeof(rp->dsts[0]));
}

/* The link toward node name by the shortest path, or NULL. */
static struct routing_nbr *
toward(struct routing *r, const char *name)
{
	int	 idx, hop;

	if (r->spf == NULL || (idx = spf_find(r->spf, name)) == SPF_NONE ||
	    !spf_reachable(r->spf, idx) ||
	    (hop = spf_next_hop(r->spf, idx)) == SPF_NONE)
		return NULL;
	return routing_nbr_to(r, spf_name(r->spf, hop));
}

/*
 * A report may lift a pair over the threshold: the shortcuts look at once
 * (at most every ROUTING_ROUND_MIN_MS, whatever the reports), not at the
 * next tick, so that the two ends of a pair decide within a round trip of
 * each other and the peer punches its NAT as the dialler dials.
 */
static void
round_soon(struct routing *r)
{
	uint64_t	 now = routing_now(r), at = r->round_last +
			    ROUTING_ROUND_MIN_MS;

	if (!shortcut_on(r))
		return;
	if (at < now)
		at = now;
	if (r->round_at == 0 || at < r->round_at)
		r->round_at = at;
	routing_schedule(r);
}

int
routing_traffic_input(struct routing *r, struct routing_nbr *nb,
    const uint8_t *p, size_t n, const char **why)
{
	const struct node_rec	*rec = r->rec;	/* decoded by the caller */
	struct routing_nbr	*to;

	(void)why;
	r->st.reports_in++;
	if (strcmp(rec->to, r->node) == 0) {
		if (strcmp(rec->name, r->node) != 0) {
			keep(r, rec);
			round_soon(r);
		}
		return 0;
	}
	/* On toward its node, one hop less; never back where it came from. */
	if (rec->lifetime <= 1 || (to = toward(r, rec->to)) == NULL ||
	    to == nb || n > NODE_RECORD_MAX) {
		r->st.reports_dropped++;
		return 0;
	}
	memcpy(r->rbuf, p, n);
	node_set_hops(r->rbuf, n, (uint16_t)(rec->lifetime - 1));
	r->st.reports_forwarded++;
	routing_flood_send(r, to, r->rbuf, n);
	return 0;
}

static void
send_report(struct routing *r, const char *to, const struct node_row *rows,
    size_t nrows, const struct node_dst *dsts, size_t ndsts)
{
	struct node_rec		*rec = r->rec;
	struct routing_nbr	*nb;
	size_t			 n;

	if ((nb = toward(r, to)) == NULL)
		return;
	memset(rec, 0, offsetof(struct node_rec, links));
	rec->kind = NODE_KIND_TRAFFIC;
	rec->lifetime = NODE_HOPS_MAX;
	rec->seq = ++r->seq;
	snprintf(rec->name, sizeof(rec->name), "%s", r->node);
	snprintf(rec->to, sizeof(rec->to), "%s", to);
	rec->nrows = (uint16_t)nrows;
	rec->ndsts = (uint16_t)ndsts;
	if (nrows > 0)
		memcpy(rec->rows, rows, nrows * sizeof(rows[0]));
	if (ndsts > 0)
		memcpy(rec->dsts, dsts, ndsts * sizeof(dsts[0]));
	if ((n = node_encode(r->rbuf, NODE_RECORD_MAX, rec)) == 0 ||
	    (n = routing_flood_sign(r, r->rbuf, n)) == 0)
		return;
	r->st.reports_out++;
	routing_flood_send(r, nb, r->rbuf, n);
}

void
routing_traffic_tell(struct routing *r, const char *to)
{
	struct node_row		 rows[NODE_ROWS_MAX];
	struct node_dst		 dsts[NODE_ROWS_MAX];
	const struct nodedb_entry *e = nodedb_get(r->db, to, NODE_KIND_TOPO, 0);
	const struct routing_topo *t;
	size_t			 k, nrows, ndsts;

	if (e == NULL || (t = routing_topo(e)) == NULL ||
	    (t->flags & (NODE_F_TRAFFIC | NODE_F_ADAPT)) == 0)
		return;
	ndsts = traffic_nodes(r->tm, dsts, NODE_ROWS_MAX);
	if (t->flags & NODE_F_TRAFFIC) {
		nrows = traffic_pairs(r->tm, rows, NODE_ROWS_MAX);
		send_report(r, to, rows, nrows, dsts, ndsts);
		return;
	}
	for (k = 0; k < ndsts; k++)
		if (strcmp(dsts[k].name, to) == 0)
			send_report(r, to, NULL, 0, &dsts[k], 1);
}

/* Once a second: reports where they are wanted, the flag, old reports. */
void
routing_traffic_tick(struct routing *r)
{
	struct node_row		 rows[NODE_ROWS_MAX];
	struct node_dst		 dsts[NODE_ROWS_MAX];
	const struct nodedb_entry *e;
	const struct routing_topo *t;
	uint64_t		 now = routing_now(r);
	size_t			 i, k, nrows, ndsts;

	if (r->interest_until != 0 && r->interest_until <= now) {
		r->interest_until = 0;
		routing_flood_soon(r, 0);	/* the flag goes down */
	}
	for (i = 0; i < r->nreports;)
		if (now - r->reports[i]->at >= TRAFFIC_IDLE_MS) {
			free(r->reports[i]);
			memmove(&r->reports[i], &r->reports[i + 1],
			    (r->nreports - i - 1) * sizeof(*r->reports));
			r->nreports--;
		} else
			i++;
	if (!r->report_now && (now - r->last_report_ms < ROUTING_TRAFFIC_MS ||
	    (traffic_version(r->tm) == r->traffic_sent && !r->traffic_moving)))
		return;
	r->report_now = 0;
	r->last_report_ms = now;
	r->traffic_sent = traffic_version(r->tm);
	nrows = traffic_pairs(r->tm, rows, NODE_ROWS_MAX);
	ndsts = traffic_nodes(r->tm, dsts, NODE_ROWS_MAX);
	r->traffic_moving = 0;
	for (i = 0; i < nrows; i++)
		r->traffic_moving |= rows[i].r.rate10 != 0;
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (e->self || (t = routing_topo(e)) == NULL ||
		    (t->flags & (NODE_F_TRAFFIC | NODE_F_ADAPT)) == 0)
			continue;
		if (t->flags & NODE_F_TRAFFIC) {
			send_report(r, e->name, rows, nrows, dsts, ndsts);
			continue;
		}
		for (k = 0; k < ndsts; k++)
			if (strcmp(dsts[k].name, e->name) == 0)
				send_report(r, e->name, NULL, 0, &dsts[k], 1);
	}
}

void
routing_traffic_free(struct routing *r)
{
	size_t	 i;

	for (i = 0; i < r->nreports; i++)
		free(r->reports[i]);
	free(r->reports);
	free(r->rbuf);
}
