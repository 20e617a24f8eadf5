/*
 * The path computation (spf.h over the records held) and its result, put
 * where the data path reads it: each MAC's automatic route (through
 * routing_mac.c, only what changed) and the links of the broadcast tree
 * (fwd_port_set_flood()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"
#include "hash.h"
#include "log.h"
#include "node.h"
#include "nodedb.h"
#include "routing.h"
#include "routing_impl.h"
#include "spf.h"

/*
 * A computation at once while the bucket allows (ROUTING_SPF_BURST in a
 * row), then one per ROUTING_SPF_HOLD_MS: a change in a quiet network
 * (a link back, the record that follows it) is computed when it comes,
 * and a burst or a flood of records costs at most 1000 / HOLD a second.
 * spf_tat is the bucket's theoretical arrival time (GCRA).
 */
void
routing_path_soon(struct routing *r)
{
	const uint64_t	 slack = (ROUTING_SPF_BURST - 1) * ROUTING_SPF_HOLD_MS;
	uint64_t	 at;

	if (!r->on || !r->started || r->compute_at != 0)
		return;
	at = routing_now(r);
	if (r->spf_tat > slack && at < r->spf_tat - slack)
		at = r->spf_tat - slack;
	r->compute_at = at != 0 ? at : 1;
	routing_schedule(r);
}

/*
 * In the automatic broadcast set: a link to a peer without the control
 * plane (it floods as a learning switch would), or a tree link.
 */
void
routing_path_flood(struct routing *r, struct routing_nbr *n)
{
	struct fwd_port	*fp;

	if ((fp = fwd_port_find(r->fwd, FWD_LINK, n->name)) != NULL)
		fwd_port_set_flood(fp, n->peer[0] == '\0' || n->tree);
}

/* Remembers when the routes, the reachable nodes or the tree changed. */
static void
note_change(struct routing *r)
{
	struct routing_rmac	*m;
	uint32_t		 h = HASH_FNV_BASIS;
	size_t			 i;

	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->routes[i]; m != NULL; m = m->next) {
			h = hash_fnv1a(h, m->mac, ETHER_ADDR_LEN);
			h = hash_fnv1a(h, m->owner, strlen(m->owner));
			h = hash_fnv1a(h, m->via, strlen(m->via) + 1);
		}
	for (i = 0; i < r->nnbrs; i++)
		if (r->nbrs[i].tree)
			h = hash_fnv1a(h, r->nbrs[i].name,
			    strlen(r->nbrs[i].name) + 1);
	for (i = 0; i < spf_count(r->spf); i++)
		if (spf_reachable(r->spf, (int)i))
			h = hash_fnv1a(h, spf_name(r->spf, (int)i),
			    strlen(spf_name(r->spf, (int)i)) + 1);
	if (h != r->digest) {
		r->digest = h;
		r->changed_ms = routing_now(r);
		log_debug("routing: %zu nodes, %zu routes to guests",
		    nodedb_nodes(r->db), r->nroutes);
	}
}

/* The graph: the topology records' nodes, in the database's order. */
static int
graph(struct routing *r)
{
	const struct nodedb_entry *e;
	const struct routing_topo *t;
	size_t		 i, k;
	int		 self, from, to;

	spf_clear(r->spf);
	for (i = 0; i < nodedb_count(r->db); i++) {
		if ((e = nodedb_at(r->db, i))->kind != NODE_KIND_TOPO)
			continue;
		if ((from = spf_node(r->spf, e->name)) == -1)
			return -1;
		/* A record without the flag (an older node's) relays. */
		if ((t = routing_topo(e)) != NULL &&
		    (t->flags & NODE_F_NORELAY) != 0)
			spf_set_relay(r->spf, from, 0);
	}
	if ((self = spf_node(r->spf, r->node)) == -1)
		return -1;
	/* Ours as it is now, before our record says so. */
	spf_set_relay(r->spf, self, !r->norelay);
	/*
	 * A link to a name without a record is left out: it could never be
	 * two-way, and peers choose those names, so they must not grow the
	 * graph.
	 */
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if ((t = routing_topo(e)) == NULL)
			continue;
		from = spf_find(r->spf, e->name);
		for (k = 0; k < t->nlinks; k++)
			if ((to = spf_find(r->spf, t->links[k].name)) !=
			    SPF_NONE && spf_link(r->spf, from, to,
			    t->links[k].rtt_us) == -1)
				return -1;
	}
	return spf_run(r->spf, self);
}

void
routing_path_compute(struct routing *r)
{
	struct routing_rmac	*old[ROUTING_MAC_BUCKETS];
	const struct nodedb_entry *e;
	const struct routing_page *pg;
	struct routing_nbr	*via = NULL, *n;
	const char		*owner = "";
	size_t			 i, k;
	int			 idx, hop;

	r->st.recomputed++;
	r->spf_tat = (r->spf_tat > routing_now(r) ? r->spf_tat :
	    routing_now(r)) + ROUTING_SPF_HOLD_MS;
	routing_mac_swap(r, old);
	r->prev = old;
	if (graph(r) == -1) {
		log_warnx("routing: out of memory computing paths");
		spf_clear(r->spf);
		r->prev = NULL;
		routing_mac_settle(r, old);
		return;
	}
	/* A node's records are together: its next hop is looked up once. */
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (e->self || (pg = routing_page(e)) == NULL)
			continue;
		if (strcmp(owner, e->name) != 0) {
			owner = e->name;
			via = NULL;
			if ((idx = spf_find(r->spf, e->name)) != SPF_NONE &&
			    spf_reachable(r->spf, idx) &&
			    (hop = spf_next_hop(r->spf, idx)) != SPF_NONE)
				via = routing_nbr_to(r, spf_name(r->spf, hop));
		}
		if (via == NULL)
			continue;
		for (k = 0; k < pg->nmacs; k++)
			routing_mac_claim(r, e->name, &pg->macs[k], via->name);
	}
	r->prev = NULL;
	routing_mac_settle(r, old);
	routing_mac_promote(r);
	for (i = 0; i < r->nnbrs; i++) {
		n = &r->nbrs[i];
		n->tree = n->peer[0] != '\0' &&
		    (idx = spf_find(r->spf, n->peer)) != SPF_NONE &&
		    spf_tree_link(r->spf, idx);
		routing_path_flood(r, n);
	}
	note_change(r);
	routing_seg_run(r);
}
