/*
 * What the control plane sends: this node's record (origination), the
 * records of others on to every other link (flooding), all of them to a
 * link that comes up (the database exchange), the copies kept aside as too
 * soon, and ageing.  The decisions are nodedb.h's; this file acts on them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"
#include "log.h"
#include "node.h"
#include "nodedb.h"
#include "routing.h"
#include "routing_impl.h"
#include "shortcut.h"
#include "traffic.h"
#include "wire.h"

void
routing_flood_send(struct routing *r, struct routing_nbr *n,
    const uint8_t *p, size_t len)
{
	if (r->env.send(r->env.arg, n->link, p, len) == -1) {
		r->st.records_skipped++;
		return;
	}
	r->st.records_out++;
	r->st.bytes_out += WIRE_HDR_LEN + len;
}

void
routing_flood_all_but(struct routing *r, void *except, const uint8_t *p,
    size_t len)
{
	size_t	 i;

	for (i = 0; i < r->nnbrs; i++)
		if (r->nbrs[i].link != except && r->nbrs[i].peer[0] != '\0')
			routing_flood_send(r, &r->nbrs[i], p, len);
}

void
routing_flood_exchange(struct routing *r, struct routing_nbr *n)
{
	const struct nodedb_entry *e;
	size_t		 i;

	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (!e->self)
			routing_flood_send(r, n, e->raw, e->len);
	}
}

/* Our record, from what this node has now. */
static size_t
build(struct routing *r)
{
	struct node_rec		*rec = r->rec;
	struct routing_nbr	*n;
	struct routing_lmac	*m;
	size_t			 i, len;

	memset(rec, 0, offsetof(struct node_rec, links));
	snprintf(rec->name, sizeof(rec->name), "%s", r->node);
	rec->seq = r->seq;
	rec->lifetime = (uint16_t)(3 * routing_refresh_s(r));
	for (i = 0; i < r->nnbrs; i++) {
		n = &r->nbrs[i];
		if (n->peer[0] == '\0' || rec->nlinks == NODE_LINKS_MAX ||
		    shortcut_draining(r, n))
			continue;
		snprintf(rec->links[rec->nlinks].name, NODE_NAME_MAX + 1,
		    "%s", n->peer);
		rec->links[rec->nlinks++].rtt_us = r->env.rtt_us(r->env.arg,
		    n->link);
	}
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->local[i]; m != NULL; m = m->next) {
			memcpy(rec->macs[rec->nmacs].mac, m->mac,
			    ETHER_ADDR_LEN);
			rec->macs[rec->nmacs++].version = m->version;
		}
	if (r->has_advertise)
		stmt_hostport_format(&r->advertise, rec->addrs[rec->naddrs++],
		    NODE_ADDR_MAX + 1);
	else
		rec->naddrs = (uint16_t)r->env.addrs(r->env.arg, rec->addrs,
		    NODE_ADDRS_MAX);
	rec->nrows = (uint16_t)traffic_pairs(r->tm, rec->rows, NODE_ROWS_MAX);
	rec->ndsts = (uint16_t)traffic_nodes(r->tm, rec->dsts, NODE_ROWS_MAX);
	r->traffic_moving = 0;
	for (i = 0; i < rec->nrows; i++)
		r->traffic_moving |= rec->rows[i].r.rate10 != 0;
	if ((len = node_encode(r->enc, NODE_RECORD_MAX, rec)) == 0) {
		/* Traffic rows are what can give way. */
		rec->nrows = rec->ndsts = 0;
		len = node_encode(r->enc, NODE_RECORD_MAX, rec);
	}
	return len;
}

void
routing_flood_originate(struct routing *r)
{
	uint64_t	 now = routing_now(r);
	size_t		 n;

	r->seq++;
	if ((n = build(r)) == 0) {
		log_warnx("routing: our own record does not fit");
		return;
	}
	if (nodedb_originate(r->db, r->enc, n, r->seq,
	    (uint16_t)(3 * routing_refresh_s(r)), now) == -1) {
		log_warnx("routing: out of memory for our record");
		return;
	}
	r->last_orig_ms = now;
	r->traffic_sent = traffic_version(r->tm);
	r->st.originated++;
	routing_flood_all_but(r, NULL, r->enc, n);
	routing_path_soon(r);
}

/* A change to tell: as soon as ROUTING_ORIG_MIN_MS since the last allow. */
void
routing_flood_soon(struct routing *r, uint64_t delay_ms)
{
	uint64_t	 now, at;

	if (!r->on || !r->started || r->orig_at != 0)
		return;
	now = routing_now(r);
	at = r->last_orig_ms + ROUTING_ORIG_MIN_MS;
	if (at < now + delay_ms)
		at = now + delay_ms;
	if (at < r->orig_not_before)
		at = r->orig_not_before;
	r->orig_at = at != 0 ? at : 1;
	routing_schedule(r);
}

/* A record kept aside as too soon, taken now: on to every link. */
static void
late_take(const struct nodedb_entry *e, void *arg)
{
	struct routing	*r = arg;

	log_debug("routing: record of node %s, sequence %llu, taken after "
	    "the minimum interval", e->name, (unsigned long long)e->seq);
	routing_flood_all_but(r, NULL, e->raw, e->len);
	routing_path_soon(r);
}

static void
late_soon(struct routing *r)
{
	if (r->late_at == 0) {
		r->late_at = routing_now(r) + NODEDB_MIN_ARRIVAL_MS + 1;
		routing_schedule(r);
	}
}

void
routing_flood_late(struct routing *r)
{
	if (nodedb_late(r->db, routing_now(r), late_take, r) > 0)
		late_soon(r);
}

int
routing_flood_input(struct routing *r, struct routing_nbr *nb,
    const uint8_t *p, size_t n, const char **why)
{
	const struct nodedb_entry *e;
	enum nodedb_result res;
	int		 v;

	r->st.records_in++;
	if ((v = node_decode(p, n, r->rec, why)) == NODE_MALFORMED) {
		r->st.malformed++;
		return -1;
	}
	if (v == NODE_REFUSED || r->rec->seq > r->env.wall_ms(r->env.arg) +
	    ROUTING_SEQ_AHEAD) {
		if (v == NODE_REFUSED)
			r->st.refused++;
		else
			r->st.seq_ahead++;
		if (routing_may_log(r, v == NODE_REFUSED ? 0 : 1))
			log_warnx("routing: record of node %s from link %s "
			    "refused: %s", r->rec->name, nb->name,
			    v == NODE_REFUSED ? *why : "sequence ahead of "
			    "the clock");
		return 0;
	}
	res = nodedb_offer(r->db, p, n, r->rec->name, r->rec->seq,
	    r->rec->lifetime, routing_now(r));
	switch (res) {
	case NODEDB_NEW:
		log_debug("routing: record of node %s, sequence %llu, from "
		    "link %s", r->rec->name, (unsigned long long)r->rec->seq,
		    nb->name);
		routing_flood_all_but(r, nb->link, p, n);
		routing_path_soon(r);
		break;
	case NODEDB_SAME:
		break;
	case NODEDB_OLDER:
		if ((e = nodedb_get(r->db, r->rec->name)) != NULL)
			routing_flood_send(r, nb, e->raw, e->len);
		break;
	case NODEDB_SELF:
		/*
		 * Ours from before a restart, or someone else's words in our
		 * name: ours goes out above it, late enough that every node
		 * takes it after that one.
		 */
		if (r->rec->seq >= r->seq)
			r->seq = r->rec->seq;
		log_info("routing: a record in our name with sequence %llu "
		    "came from link %s; sending ours above it",
		    (unsigned long long)r->rec->seq, nb->name);
		r->orig_not_before = routing_now(r) + 2 * NODEDB_MIN_ARRIVAL_MS;
		routing_flood_soon(r, 2 * NODEDB_MIN_ARRIVAL_MS);
		break;
	case NODEDB_TOO_SOON:
		/* Kept aside: taken once the interval has passed. */
		log_debug("routing: record of node %s, sequence %llu, from "
		    "link %s: too soon after the last, kept for later",
		    r->rec->name, (unsigned long long)r->rec->seq, nb->name);
		late_soon(r);
		break;
	case NODEDB_FULL:
	case NODEDB_NOMEM:
		if (routing_may_log(r, 2 + (unsigned int)res))
			log_warnx("routing: record of node %s from link %s "
			    "refused: %s", r->rec->name, nb->name,
			    nodedb_result_name(res));
		break;
	}
	return 0;
}

/* The second tick's part: ageing, refreshing, traffic. */
void
routing_flood_tick(struct routing *r)
{
	uint64_t	 now = routing_now(r);
	int		 changed = 0;

	if (nodedb_age(r->db, now, NULL, NULL) > 0)
		routing_path_soon(r);
	if (now - r->last_orig_ms >= (uint64_t)routing_refresh_s(r) * 1000)
		changed = 1;
	else if ((traffic_version(r->tm) != r->traffic_sent ||
	    r->traffic_moving) && now - r->last_orig_ms >= ROUTING_TRAFFIC_MS)
		changed = 1;
	if (changed)
		routing_flood_soon(r, 0);
}
