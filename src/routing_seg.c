/*
 * LAN segments: the designated forwarder of each segment this node
 * attaches (an interface with `segment NAME`), elected through the
 * topology records as EVPN elects one per Ethernet segment.
 *
 * Each node lists its segments in its topology record (NODE_SEC_SEGS),
 * each with NODE_SEG_ACTIVE while it forwards it and the epoch of that
 * takeover: one above the highest epoch any record held gives the
 * segment.  From the records of the nodes reachable now (the path
 * computation's), a segment's forwarder is: of the nodes that say they
 * forward it, the one with the highest epoch (then the lowest name), else
 * the lowest name among the nodes that attach it.  So a forwarder keeps
 * its segment when a node with a lower name comes, or comes back still
 * saying, in the record the others held, that it forwards the segment
 * (its newer record may come after it is reachable again): no second
 * handover, no gap for the LAN on a return.
 *
 * Each local segment is a state machine, every change through
 * seg_change(), which logs it:
 *
 *   STANDBY  another node forwards the segment: the interface captures
 *            and drops, and injects nothing (iface.h's standby)
 *   PENDING  this node is elected but waits: ROUTING_SEG_HOLD_MS of its
 *            election unchanged, and ROUTING_SEG_SETTLE_MS since it first
 *            had a peer (the database exchange of a start or a return
 *            must come in before it may take over)
 *   ACTIVE   it forwards the segment; once taken over, one frame from
 *            each remote MAC it routes goes out on the LAN (a RARP, as
 *            QEMU announces a migrated guest) so that the LAN's switches
 *            learn the new way at once
 *
 * ACTIVE and PENDING go back to STANDBY at once when another node is
 * elected, and ACTIVE to PENDING when the node has no peer left (it could
 * forward nothing, and must not keep the segment through its return).
 * Two nodes are both ACTIVE only while one has not yet heard of the
 * other: as soon as each holds the other's record, the higher steps down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "nodedb.h"
#include "routing.h"
#include "routing_impl.h"
#include "spf.h"

static const char *const seg_state_names[] = {
	[ROUTING_SEG_STANDBY] = "standby",
	[ROUTING_SEG_PENDING] = "pending",
	[ROUTING_SEG_ACTIVE] = "active",
};

const char *
routing_seg_state_name(enum routing_seg_state s)
{
	return (size_t)s < sizeof(seg_state_names) / sizeof(seg_state_names[0])
	    ? seg_state_names[s] : "?";
}

struct routing_seg *
routing_seg_find(struct routing *r, const char *name)
{
	size_t	 i;

	for (i = 0; i < r->nsegs; i++)
		if (strcmp(r->segs[i].name, name) == 0)
			return &r->segs[i];
	return NULL;
}

/* One frame from each remote MAC routed now, on the segment's LAN. */
static void
announce(struct routing *r, struct routing_seg *s)
{
	struct routing_rmac	*m;
	size_t			 i;

	if (r->env.announce == NULL)
		return;
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->routes[i]; m != NULL; m = m->next) {
			if (m->via[0] == '\0')
				continue;
			r->env.announce(r->env.arg, s->name, m->mac);
			s->announced++;
		}
}

static void
seg_change(struct routing *r, struct routing_seg *s,
    enum routing_seg_state to, const char *why)
{
	enum routing_seg_state from = s->state;
	size_t		 n;

	if (from == to)
		return;
	s->state = to;
	if (to == ROUTING_SEG_ACTIVE) {
		s->takeovers++;
		s->epoch = s->epoch_seen + 1;
	}
	if (from == ROUTING_SEG_ACTIVE || to == ROUTING_SEG_ACTIVE) {
		if (r->env.segment_set != NULL)
			r->env.segment_set(r->env.arg, s->name,
			    to == ROUTING_SEG_ACTIVE);
		routing_flood_mark(r, ROUTING_DIRTY_TOPO);
	}
	if (to == ROUTING_SEG_ACTIVE || from == ROUTING_SEG_ACTIVE)
		log_info("segment %s: %s -> %s: %s", s->name,
		    routing_seg_state_name(from), routing_seg_state_name(to),
		    why);
	else
		log_debug("segment %s: %s -> %s: %s", s->name,
		    routing_seg_state_name(from), routing_seg_state_name(to),
		    why);
	if (to == ROUTING_SEG_ACTIVE)
		announce(r, s);
	else if (from == ROUTING_SEG_ACTIVE &&
	    (n = routing_mac_standby(r, s->name)) > 0)
		log_info("segment %s: its %zu MACs withdrawn", s->name, n);
}

/* The local segments as the interfaces have them now. */
static void
seg_sync(struct routing *r)
{
	char		 names[NODE_SEGS_MAX][NODE_NAME_MAX + 1];
	struct routing_seg *s;
	size_t		 n = 0, i, k;
	int		 changed = 0;

	if (r->env.segments != NULL)
		n = r->env.segments(r->env.arg, names, NODE_SEGS_MAX);
	for (i = 0; i < r->nsegs; ) {
		for (k = 0; k < n; k++)
			if (strcmp(names[k], r->segs[i].name) == 0)
				break;
		if (k < n) {
			i++;
			continue;
		}
		log_info("segment %s: no longer attached", r->segs[i].name);
		r->segs[i] = r->segs[--r->nsegs];
		changed = 1;
	}
	for (k = 0; k < n; k++) {
		if (routing_seg_find(r, names[k]) != NULL ||
		    r->nsegs == NODE_SEGS_MAX)
			continue;
		s = &r->segs[r->nsegs++];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", names[k]);
		s->state = ROUTING_SEG_STANDBY;
		if (r->env.segment_set != NULL)
			r->env.segment_set(r->env.arg, s->name, 0);
		log_info("segment %s: attached; standing by until elected",
		    s->name);
		changed = 1;
	}
	if (changed)
		routing_flood_mark(r, ROUTING_DIRTY_TOPO);
}

static int
has_peer(const struct routing *r)
{
	size_t	 i;

	for (i = 0; i < r->nnbrs; i++)
		if (r->nbrs[i].peer[0] != '\0')
			return 1;
	return 0;
}

/*
 * The forwarder of s from the records of reachable nodes and our own
 * state: its name into s->forwarder ("" none), and whether it is us.
 */
static int
elect(struct routing *r, struct routing_seg *s)
{
	const struct nodedb_entry *e;
	const struct routing_topo *t;
	const struct node_seg *g;
	const char	*active = NULL, *lowest = r->node;
	uint32_t	 epoch = 0;
	size_t		 i, k;
	int		 idx;

	s->epoch_seen = s->epoch;
	if (s->state == ROUTING_SEG_ACTIVE) {
		active = r->node;
		epoch = s->epoch;
	}
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (e->self || (t = routing_topo(e)) == NULL)
			continue;
		idx = spf_find(r->spf, e->name);
		for (k = 0; k < t->nsegs; k++) {
			g = &t->segs[k];
			if (strcmp(g->name, s->name) != 0)
				continue;
			if (g->epoch > s->epoch_seen)
				s->epoch_seen = g->epoch;
			if (idx == SPF_NONE || !spf_reachable(r->spf, idx))
				continue;
			if (strcmp(e->name, lowest) < 0)
				lowest = e->name;
			if ((g->flags & NODE_SEG_ACTIVE) && (active == NULL ||
			    g->epoch > epoch || (g->epoch == epoch &&
			    strcmp(e->name, active) < 0))) {
				active = e->name;
				epoch = g->epoch;
			}
		}
	}
	if (active == NULL)
		active = lowest;
	snprintf(s->forwarder, sizeof(s->forwarder), "%s", active);
	return strcmp(active, r->node) == 0;
}

void
routing_seg_run(struct routing *r)
{
	struct routing_seg *s;
	uint64_t	 now = routing_now(r), at;
	size_t		 i;
	int		 peer;

	if (!r->on || !r->started)
		return;
	seg_sync(r);
	peer = has_peer(r);
	if (!peer)
		r->peer_since_ms = 0;
	else if (r->peer_since_ms == 0)
		r->peer_since_ms = now;
	r->seg_at = 0;
	for (i = 0; i < r->nsegs; i++) {
		s = &r->segs[i];
		if (!elect(r, s)) {
			s->pending_ms = 0;
			seg_change(r, s, ROUTING_SEG_STANDBY, s->forwarder);
			continue;
		}
		if (s->state == ROUTING_SEG_ACTIVE) {
			if (!peer) {
				s->pending_ms = 0;
				seg_change(r, s, ROUTING_SEG_PENDING,
				    "no peer left");
			}
			continue;
		}
		if (!peer) {
			s->pending_ms = 0;
			seg_change(r, s, ROUTING_SEG_PENDING, "elected, no peer");
			continue;
		}
		if (s->pending_ms == 0)
			s->pending_ms = now;
		seg_change(r, s, ROUTING_SEG_PENDING, "elected");
		at = s->pending_ms + ROUTING_SEG_HOLD_MS;
		if (at < r->peer_since_ms + ROUTING_SEG_SETTLE_MS)
			at = r->peer_since_ms + ROUTING_SEG_SETTLE_MS;
		if (now >= at) {
			seg_change(r, s, ROUTING_SEG_ACTIVE, "no other node "
			    "forwards it");
			continue;
		}
		if (r->seg_at == 0 || at < r->seg_at)
			r->seg_at = at;
	}
	routing_schedule(r);
}

/* Our segments, for our topology record. */
void
routing_seg_record(struct routing *r, struct node_rec *rec)
{
	size_t	 i;

	rec->nsegs = 0;
	for (i = 0; i < r->nsegs && i < NODE_SEGS_MAX; i++) {
		snprintf(rec->segs[i].name, sizeof(rec->segs[i].name), "%s",
		    r->segs[i].name);
		rec->segs[i].flags = r->segs[i].state == ROUTING_SEG_ACTIVE ?
		    NODE_SEG_ACTIVE : 0;
		rec->segs[i].epoch = r->segs[i].epoch;
		rec->nsegs++;
	}
}

/*
 * A frame captured on segment seg whose source MAC a reachable remote
 * node holds went out there by another forwarder (or loops): 1, it must
 * not come back into the overlay.
 */
int
routing_seg_foreign(struct routing *r, const uint8_t *src)
{
	struct routing_rmac	*m;

	if (!r->on || !r->started || (m = routing_mac_remote(r, src)) == NULL)
		return 0;
	return m->via[0] != '\0';
}

int
routing_seg_keeps(struct routing *r, const char *port, const char *owner)
{
	const struct nodedb_entry *e;
	const struct routing_topo *t;
	struct routing_seg	*s;
	const char		*seg;
	size_t			 k;
	int			 i;

	if (r->env.port_segment == NULL ||
	    (seg = r->env.port_segment(r->env.arg, port)) == NULL ||
	    (s = routing_seg_find(r, seg)) == NULL ||
	    s->state != ROUTING_SEG_ACTIVE ||
	    (i = nodedb_index(r->db, owner, NODE_KIND_TOPO, 0)) < 0 ||
	    (e = nodedb_at(r->db, (size_t)i)) == NULL ||
	    (t = routing_topo(e)) == NULL)
		return 0;
	for (k = 0; k < t->nsegs; k++)
		if (strcmp(t->segs[k].name, seg) == 0)
			return 1;
	return 0;
}

const char *
routing_segment_forwarder(struct routing *r, const char *seg,
    const char **state)
{
	struct routing_seg	*s;

	if ((s = routing_seg_find(r, seg)) == NULL) {
		*state = "-";
		return "-";
	}
	*state = routing_seg_state_name(s->state);
	return s->forwarder[0] != '\0' ? s->forwarder : "-";
}
