#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "adapt.h"
#include "daemon.h"
#include "fwd.h"
#include "hash.h"
#include "iface.h"
#include "link.h"
#include "log.h"
#include "node.h"
#include "nodedb.h"
#include "routing.h"
#include "spf.h"
#include "sw.h"
#include "traffic.h"
#include "wire.h"

#define MAC_BUCKETS	1024
#define LOG_EVERY_MS	1000	/* refusals are logged at most this often */

/* A MAC this node claims: a source seen on one of its interfaces. */
struct lmac {
	struct lmac	*next;
	uint8_t		 mac[ETHER_ADDR_LEN];
	uint32_t	 version;
	struct fwd_port	*port;		/* the interface's, referenced */
	uint64_t	 seen_ms;
};

/* How many local MACs an interface (its forwarding port) holds. */
struct pshare {
	const struct fwd_port	*port;
	size_t			 n;
};

/* A MAC another node claims, and the way there. */
struct rmac {
	struct rmac	*next;
	uint8_t		 mac[ETHER_ADDR_LEN];
	uint32_t	 version;
	char		 owner[NODE_NAME_MAX + 1];
	struct fwd_port	*port;		/* the next hop's link, referenced */
};

struct routing_stats {
	uint64_t	records_in, records_out, bytes_out, records_skipped;
	uint64_t	malformed, refused, seq_ahead;
	uint64_t	macs_refused;	/* local table full */
	uint64_t	claims;		/* MACs taken over from another node */
	uint64_t	moved_away;	/* local MACs another node claimed */
	uint64_t	conflicts;	/* ... while still sending here */
	uint64_t	originated;
	uint64_t	recomputed;
};

struct routing {
	struct vnetd		*d;
	uint32_t		 seed;		/* of the MAC tables */
	int			 on;
	unsigned int		 refresh;	/* s; 0: the default */
	int			 has_advertise;
	struct stmt_hostport	 advertise;

	struct nodedb		*db;
	struct spf		*spf;
	struct traffic		*tm;
	struct node_rec		*rec;		/* decode and encode scratch */
	uint8_t			*enc;		/* NODE_RECORD_MAX */

	uint64_t		 seq;
	uint64_t		 last_orig_ms;
	uint64_t		 orig_not_before;	/* ms */
	uint64_t		 traffic_sent;	/* traffic_version() then */
	int			 traffic_moving;	/* rates > 0 when sent */

	struct event		*ev_orig;	/* one-shot: originate */
	struct event		*ev_compute;	/* one-shot: routes */
	struct event		*ev_late;	/* one-shot: nodedb_late() */
	struct event		*ev_tick;	/* every second */
	int			 orig_pending, compute_pending;

	struct lmac		*local[MAC_BUCKETS];
	size_t			 nlocal;
	struct pshare		*shares;	/* per interface holding MACs */
	size_t			 nshares, sharecap;
	struct rmac		*routes[MAC_BUCKETS];
	size_t			 nroutes;
	struct fwd_port		**tree;		/* tree links, referenced */
	size_t			 ntree, treecap;

	struct routing_stats	 st;
	struct adapt		*adapt;		/* shortcuts (adapt.h) */
	struct stmt		 adapt_conf;	/* as configured, for show config */
	int			 adapt_set;
	uint32_t		 digest;	/* of the routes and the tree */
	uint64_t		 changed_ms;	/* when that last changed */
	uint64_t		 logged_ms[16];	/* by kind of refusal */
};

static void	routing_originate_soon(struct routing *, uint64_t delay_ms);
static void	routing_compute_soon(struct routing *);
static int	draining(const struct routing *, const struct link *);
static void	adapt_round(struct routing *);
static void	adapt_log(const char *, void *);
static void	adapt_configure(struct routing *);
static int	adapt_apply(struct routing *, const struct stmt *, char *,
		    size_t);
static void	show_adapt(struct routing *, struct evbuffer *);

/* Seeded: peers name the MACs in their records and could aim them. */
static unsigned int
mac_bucket(const struct routing *r, const uint8_t *mac)
{
	return hash_fnv1a(r->seed, mac, ETHER_ADDR_LEN) % MAC_BUCKETS;
}

static struct lmac *
local_find(struct routing *r, const uint8_t *mac)
{
	struct lmac	*m;

	for (m = r->local[mac_bucket(r, mac)]; m != NULL; m = m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0)
			return m;
	return NULL;
}

/*
 * Each interface may hold its share of the local MACs: NODE_MACS_MAX over
 * the number of interfaces, so that a guest flooding source MACs on one
 * cannot keep another's guests out of the node's record.
 */
static size_t
share_quota(const struct routing *r)
{
	const struct iface *ifc;
	size_t		 n = 0;

	TAILQ_FOREACH(ifc, &r->d->ifaces, entry)
		n++;
	return NODE_MACS_MAX / (n > 0 ? n : 1);
}

static struct pshare *
share_find(struct routing *r, const struct fwd_port *port)
{
	size_t	 i;

	for (i = 0; i < r->nshares; i++)
		if (r->shares[i].port == port)
			return &r->shares[i];
	return NULL;
}

/*
 * One MAC more (1) or less (-1) for port, or (0) only room for its entry;
 * -1 when out of memory.
 */
static int
share_add(struct routing *r, const struct fwd_port *port, int delta)
{
	struct pshare	*s, *ns;
	size_t		 cap;

	if ((s = share_find(r, port)) == NULL) {
		if (delta < 0)
			return 0;
		if (r->nshares == r->sharecap) {
			cap = r->sharecap > 0 ? 2 * r->sharecap : 8;
			if ((ns = reallocarray(r->shares, cap,
			    sizeof(*ns))) == NULL)
				return -1;
			r->shares = ns;
			r->sharecap = cap;
		}
		s = &r->shares[r->nshares++];
		s->port = port;
		s->n = 0;
	}
	if (delta > 0)
		s->n++;
	else if (delta < 0 && s->n > 0 && --s->n == 0)
		*s = r->shares[--r->nshares];
	return 0;
}

static int
share_full(struct routing *r, const struct fwd_port *port)
{
	const struct pshare *s = share_find(r, port);

	return s != NULL && s->n >= share_quota(r);
}

static void
local_del(struct routing *r, const uint8_t *mac)
{
	struct lmac	**mp, *m;

	for (mp = &r->local[mac_bucket(r, mac)]; (m = *mp) != NULL;
	    mp = &m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0) {
			*mp = m->next;
			(void)share_add(r, m->port, -1);
			fwd_port_unref(r->d->fwd, m->port);
			free(m);
			r->nlocal--;
			return;
		}
}

static struct rmac *
route_find(struct routing *r, const uint8_t *mac)
{
	struct rmac	*m;

	for (m = r->routes[mac_bucket(r, mac)]; m != NULL; m = m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0)
			return m;
	return NULL;
}

static void
routes_clear(struct routing *r)
{
	struct rmac	*m, *mn;
	size_t		 i;

	for (i = 0; i < MAC_BUCKETS; i++) {
		for (m = r->routes[i]; m != NULL; m = mn) {
			mn = m->next;
			if (m->port != NULL)
				fwd_port_unref(r->d->fwd, m->port);
			free(m);
		}
		r->routes[i] = NULL;
	}
	r->nroutes = 0;
	for (i = 0; i < r->ntree; i++)
		fwd_port_unref(r->d->fwd, r->tree[i]);
	r->ntree = 0;
}

/* Refusals are logged at most once a second for each kind. */
static int
may_log(struct routing *r, unsigned int kind)
{
	uint64_t	 now = vnetd_now_ms();

	if (now - r->logged_ms[kind] < LOG_EVERY_MS)
		return 0;
	r->logged_ms[kind] = now;
	return 1;
}

static uint64_t
wall_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static unsigned int
refresh_s(const struct routing *r)
{
	return r->refresh != 0 ? r->refresh : ROUTING_REFRESH_DEFAULT;
}

/* Sending. */

static void
send_one(struct routing *r, struct link *l, const uint8_t *p, size_t n)
{
	if (link_send_node(l, p, n) == -1) {
		r->st.records_skipped++;
		return;
	}
	r->st.records_out++;
	r->st.bytes_out += WIRE_HDR_LEN + n;
}

static void
send_all_but(struct routing *r, struct link *except, const uint8_t *p,
    size_t n)
{
	struct link	*l;

	TAILQ_FOREACH(l, &r->d->links.list, entry)
		if (l != except && link_node_peer(l) != NULL)
			send_one(r, l, p, n);
}

/* Our record, from what this node has now. */
static size_t
build(struct routing *r)
{
	struct node_rec	*rec = r->rec;
	struct vnetd	*d = r->d;
	struct listener	*ls;
	struct link	*l;
	struct lmac	*m;
	const char	*peer;
	size_t		 i, n;

	memset(rec, 0, offsetof(struct node_rec, links));
	snprintf(rec->name, sizeof(rec->name), "%s", d->node);
	rec->seq = r->seq;
	rec->lifetime = (uint16_t)(3 * refresh_s(r));
	TAILQ_FOREACH(l, &d->links.list, entry) {
		if ((peer = link_node_peer(l)) == NULL ||
		    rec->nlinks == NODE_LINKS_MAX || draining(r, l))
			continue;
		snprintf(rec->links[rec->nlinks].name, NODE_NAME_MAX + 1,
		    "%s", peer);
		rec->links[rec->nlinks++].rtt_us = link_rtt_us(l);
	}
	for (i = 0; i < MAC_BUCKETS; i++)
		for (m = r->local[i]; m != NULL; m = m->next) {
			memcpy(rec->macs[rec->nmacs].mac, m->mac,
			    ETHER_ADDR_LEN);
			rec->macs[rec->nmacs++].version = m->version;
		}
	if (r->has_advertise)
		stmt_hostport_format(&r->advertise, rec->addrs[rec->naddrs++],
		    NODE_ADDR_MAX + 1);
	else
		TAILQ_FOREACH(ls, &d->listeners.list, entry) {
			if (rec->naddrs == NODE_ADDRS_MAX)
				break;
			stmt_hostport_format(&ls->addr,
			    rec->addrs[rec->naddrs++], NODE_ADDR_MAX + 1);
		}
	rec->nrows = (uint16_t)traffic_pairs(r->tm, rec->rows, NODE_ROWS_MAX);
	rec->ndsts = (uint16_t)traffic_nodes(r->tm, rec->dsts, NODE_ROWS_MAX);
	r->traffic_moving = 0;
	for (i = 0; i < rec->nrows; i++)
		r->traffic_moving |= rec->rows[i].r.rate10 != 0;
	if ((n = node_encode(r->enc, NODE_RECORD_MAX, rec)) == 0) {
		/* Traffic rows are what can give way. */
		rec->nrows = rec->ndsts = 0;
		n = node_encode(r->enc, NODE_RECORD_MAX, rec);
	}
	return n;
}

static void
originate(struct routing *r)
{
	uint64_t	 now = vnetd_now_ms();
	size_t		 n;

	r->seq++;
	if ((n = build(r)) == 0) {
		log_warnx("routing: our own record does not fit");
		return;
	}
	if (nodedb_originate(r->db, r->enc, n, r->seq,
	    (uint16_t)(3 * refresh_s(r)), now) == -1) {
		log_warnx("routing: out of memory for our record");
		return;
	}
	r->last_orig_ms = now;
	r->traffic_sent = traffic_version(r->tm);
	r->st.originated++;
	send_all_but(r, NULL, r->enc, n);
	routing_compute_soon(r);
}

static void
orig_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct routing	*r = arg;

	r->orig_pending = 0;
	originate(r);
}

/* A change to tell: as soon as ROUTING_ORIG_MIN_MS since the last allow. */
static void
routing_originate_soon(struct routing *r, uint64_t delay_ms)
{
	uint64_t	 now = vnetd_now_ms(), at;
	struct timeval	 tv;

	if (!r->on || r->ev_orig == NULL)
		return;
	at = r->last_orig_ms + ROUTING_ORIG_MIN_MS;
	if (at < now + delay_ms)
		at = now + delay_ms;
	if (at < r->orig_not_before)
		at = r->orig_not_before;
	if (r->orig_pending)
		return;
	r->orig_pending = 1;
	tv.tv_sec = (time_t)((at - now) / 1000);
	tv.tv_usec = (suseconds_t)((at - now) % 1000 * 1000);
	evtimer_add(r->ev_orig, &tv);
}

/* Paths and routes. */

/* The up link whose peer is node name, or NULL. */
static struct link *
link_to(struct routing *r, const char *name)
{
	struct link	*l;
	const char	*peer;

	TAILQ_FOREACH(l, &r->d->links.list, entry)
		if ((peer = link_node_peer(l)) != NULL &&
		    strcmp(peer, name) == 0 && !draining(r, l))
			return l;
	return NULL;
}

static struct fwd_port *
port_of(struct routing *r, const struct link *l)
{
	return fwd_port_ref(r->d->fwd, FWD_LINK, l->name);
}

/* One remote claim; the highest version wins, then the lower name. */
static void
claim(struct routing *r, const char *owner, const struct node_mac *nm,
    struct link *via)
{
	struct lmac	*lm;
	struct rmac	*rm;
	char		 m[ETHER_ADDR_STRLEN];
	unsigned int	 b;
	uint64_t	 now = vnetd_now_ms();

	if ((lm = local_find(r, nm->mac)) != NULL) {
		if (lm->version > nm->version || (lm->version == nm->version &&
		    strcmp(r->d->node, owner) < 0))
			return;
		if (now - lm->seen_ms < ROUTING_CONFLICT_MS) {
			r->st.conflicts++;
			log_warnx("routing: MAC %s claimed by node %s (version "
			    "%u) while it still sends here (version %u)",
			    ether_format(nm->mac, m), owner, nm->version,
			    lm->version);
		} else
			log_info("routing: MAC %s moved to node %s",
			    ether_format(nm->mac, m), owner);
		r->st.moved_away++;
		local_del(r, nm->mac);
		routing_originate_soon(r, 0);
	}
	if ((rm = route_find(r, nm->mac)) != NULL) {
		if (rm->version > nm->version || (rm->version == nm->version &&
		    strcmp(rm->owner, owner) < 0))
			return;
		if (rm->port != NULL)
			fwd_port_unref(r->d->fwd, rm->port);
	} else {
		if ((rm = calloc(1, sizeof(*rm))) == NULL)
			return;
		memcpy(rm->mac, nm->mac, ETHER_ADDR_LEN);
		b = mac_bucket(r, nm->mac);
		rm->next = r->routes[b];
		r->routes[b] = rm;
		r->nroutes++;
	}
	rm->version = nm->version;
	snprintf(rm->owner, sizeof(rm->owner), "%s", owner);
	rm->port = via != NULL ? port_of(r, via) : NULL;
}

/* Remembers when the routes, the reachable nodes or the tree changed. */
static void
note_change(struct routing *r)
{
	const char	*name;
	struct rmac	*m;
	uint32_t	 h = HASH_FNV_BASIS;
	size_t		 i;

	for (i = 0; i < MAC_BUCKETS; i++)
		for (m = r->routes[i]; m != NULL; m = m->next) {
			h = hash_fnv1a(h, m->mac, ETHER_ADDR_LEN);
			h = hash_fnv1a(h, m->owner, strlen(m->owner));
			name = m->port != NULL ? fwd_port_name(m->port) : "";
			h = hash_fnv1a(h, name, strlen(name) + 1);
		}
	for (i = 0; i < r->ntree; i++) {
		name = fwd_port_name(r->tree[i]);
		h = hash_fnv1a(h, name, strlen(name) + 1);
	}
	for (i = 0; i < spf_count(r->spf); i++)
		if (spf_reachable(r->spf, (int)i))
			h = hash_fnv1a(h, spf_name(r->spf, (int)i),
			    strlen(spf_name(r->spf, (int)i)) + 1);
	if (h != r->digest) {
		r->digest = h;
		r->changed_ms = vnetd_now_ms();
		log_debug("routing: %zu nodes, %zu routes to guests, %zu tree "
		    "links", nodedb_count(r->db), r->nroutes, r->ntree);
	}
}

static void
compute(struct routing *r)
{
	const struct nodedb_entry *e;
	const char	*why;
	struct link	*l, *via;
	const char	*peer;
	size_t		 i, k;
	int		 self, idx, to, hop;

	r->st.recomputed++;
	spf_clear(r->spf);
	routes_clear(r);
	/*
	 * The graph's nodes are the records, in the database's order (so a
	 * node's index is its record's), then this node if it has none yet;
	 * a link to a name without a record is left out: it could never be
	 * two-way, and peers choose those names, so they must not grow the
	 * graph.
	 */
	for (i = 0; i < nodedb_count(r->db); i++)
		if (spf_node(r->spf, nodedb_at(r->db, i)->name) != (int)i) {
			log_warnx("routing: out of memory computing paths");
			return;
		}
	self = spf_node(r->spf, r->d->node);
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (node_decode(e->raw, e->len, r->rec, &why) != NODE_OK)
			continue;
		for (k = 0; k < r->rec->nlinks; k++) {
			to = nodedb_index(r->db, r->rec->links[k].name);
			if (to == -1 &&
			    strcmp(r->rec->links[k].name, r->d->node) == 0)
				to = self;
			if (to != -1)
				(void)spf_link(r->spf, (int)i, to,
				    r->rec->links[k].rtt_us);
		}
	}
	if (self == -1 || spf_run(r->spf, self) == -1) {
		log_warnx("routing: out of memory computing paths");
		return;
	}
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		idx = (int)i;	/* the graph's nodes are in the records' order */
		if (e->self || !spf_reachable(r->spf, idx))
			continue;
		hop = spf_next_hop(r->spf, idx);
		via = hop != SPF_NONE ? link_to(r, spf_name(r->spf, hop)) :
		    NULL;
		if (via == NULL ||
		    node_decode(e->raw, e->len, r->rec, &why) != NODE_OK)
			continue;
		for (k = 0; k < r->rec->nmacs; k++)
			claim(r, e->name, &r->rec->macs[k], via);
	}
	TAILQ_FOREACH(l, &r->d->links.list, entry) {
		if ((peer = link_node_peer(l)) == NULL ||
		    (idx = spf_find(r->spf, peer)) == SPF_NONE ||
		    !spf_tree_link(r->spf, idx))
			continue;
		if (r->ntree == r->treecap) {
			struct fwd_port **t;
			size_t cap = r->treecap ? r->treecap * 2 : 8;

			if ((t = reallocarray(r->tree, cap, sizeof(*t))) ==
			    NULL)
				break;
			r->tree = t;
			r->treecap = cap;
		}
		r->tree[r->ntree++] = port_of(r, l);
	}
	note_change(r);
}

static void
compute_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct routing	*r = arg;

	r->compute_pending = 0;
	compute(r);
}

static void
routing_compute_soon(struct routing *r)
{
	struct timeval	 tv = { 0, 0 };

	if (!r->on || r->ev_compute == NULL || r->compute_pending)
		return;
	r->compute_pending = 1;
	evtimer_add(r->ev_compute, &tv);
}

/* A record kept aside as too soon, taken now: on to every link. */
static void
late_take(const struct nodedb_entry *e, void *arg)
{
	struct routing	*r = arg;

	log_debug("routing: record of node %s, sequence %llu, taken after "
	    "the minimum interval", e->name, (unsigned long long)e->seq);
	send_all_but(r, NULL, e->raw, e->len);
	routing_compute_soon(r);
}

static void
late_soon(struct routing *r)
{
	struct timeval	 tv = { 0, (NODEDB_MIN_ARRIVAL_MS + 1) * 1000 };

	if (r->on && r->ev_late != NULL && !evtimer_pending(r->ev_late, NULL))
		evtimer_add(r->ev_late, &tv);
}

static void
late_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct routing	*r = arg;

	(void)fd;
	(void)ev;
	if (r->on && nodedb_late(r->db, vnetd_now_ms(), late_take, r) > 0)
		late_soon(r);
}

/* Forwarding asks: see fwd_set_auto(). */

static int
tree_port(struct routing *r, struct fwd_port *p)
{
	size_t	 i;

	for (i = 0; i < r->ntree; i++)
		if (r->tree[i] == p)
			return 1;
	return 0;
}

static size_t
routing_decide(void *arg, const uint8_t *dst, const uint8_t *src,
    struct fwd_port *in, struct fwd_port **out, size_t max)
{
	struct routing	*r = arg;
	struct vnetd	*d = r->d;
	struct iface	*ifc;
	struct link	*l;
	struct lmac	*lm;
	struct rmac	*rm;
	struct fwd_port	*p;
	size_t		 n = 0;

	if (ether_is_multicast(dst)) {
		/* Guests here, the tree, and peers without the control plane. */
		TAILQ_FOREACH(ifc, &d->ifaces, entry)
			if (n < max && ifc->port.fp != in &&
			    fwd_port_owner(ifc->port.fp) != NULL)
				out[n++] = ifc->port.fp;
		TAILQ_FOREACH(l, &d->links.list, entry) {
			p = l->port.fp;
			if (n == max || p == in || fwd_port_owner(p) == NULL)
				continue;
			if (link_node_peer(l) != NULL && !tree_port(r, p))
				continue;
			out[n++] = p;
		}
		return n > 0 ? n : FWD_AUTO_DROP;
	}
	if ((lm = local_find(r, dst)) != NULL)
		p = lm->port;
	else if ((rm = route_find(r, dst)) != NULL && rm->port != NULL)
		p = rm->port;
	else
		return 0;
	if (p == in || fwd_port_owner(p) == NULL)
		return FWD_AUTO_DROP;
	out[0] = p;
	return 1;
}

/* Events from links and interfaces. */

void
routing_link_up(struct routing *r, struct link *l)
{
	const struct nodedb_entry *e;
	size_t		 i;

	if (r == NULL || !r->on || link_node_peer(l) == NULL)
		return;
	/* The database exchange: all we hold, then ours anew. */
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (!e->self)
			send_one(r, l, e->raw, e->len);
	}
	routing_originate_soon(r, 0);
}

void
routing_link_down(struct routing *r, struct link *l)
{
	(void)l;
	if (r == NULL || !r->on)
		return;
	routing_originate_soon(r, 0);
	routing_compute_soon(r);
}

int
routing_input(struct routing *r, struct link *l, const uint8_t *p, size_t n,
    const char **why)
{
	const struct nodedb_entry *e;
	enum nodedb_result res;
	int		 v;

	r->st.records_in++;
	if ((v = node_decode(p, n, r->rec, why)) == NODE_MALFORMED) {
		r->st.malformed++;
		return -1;
	}
	if (v == NODE_REFUSED || r->rec->seq > wall_ms() + ROUTING_SEQ_AHEAD) {
		if (v == NODE_REFUSED)
			r->st.refused++;
		else
			r->st.seq_ahead++;
		if (may_log(r, v == NODE_REFUSED ? 0 : 1))
			log_warnx("routing: record of node %s from link %s "
			    "refused: %s", r->rec->name, l->name,
			    v == NODE_REFUSED ? *why : "sequence ahead of "
			    "the clock");
		return 0;
	}
	res = nodedb_offer(r->db, p, n, r->rec->name, r->rec->seq,
	    r->rec->lifetime, vnetd_now_ms());
	switch (res) {
	case NODEDB_NEW:
		log_debug("routing: record of node %s, sequence %llu, from "
		    "link %s", r->rec->name, (unsigned long long)r->rec->seq,
		    l->name);
		send_all_but(r, l, p, n);
		routing_compute_soon(r);
		break;
	case NODEDB_SAME:
		break;
	case NODEDB_OLDER:
		if ((e = nodedb_get(r->db, r->rec->name)) != NULL)
			send_one(r, l, e->raw, e->len);
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
		    (unsigned long long)r->rec->seq, l->name);
		r->orig_not_before = vnetd_now_ms() + 2 * NODEDB_MIN_ARRIVAL_MS;
		routing_originate_soon(r, 2 * NODEDB_MIN_ARRIVAL_MS);
		break;
	case NODEDB_TOO_SOON:
		/* Kept aside: taken once the interval has passed. */
		log_debug("routing: record of node %s, sequence %llu, from "
		    "link %s: too soon after the last, kept for later",
		    r->rec->name, (unsigned long long)r->rec->seq, l->name);
		late_soon(r);
		break;
	case NODEDB_FULL:
	case NODEDB_NOMEM:
		if (may_log(r, 2 + (unsigned int)res))
			log_warnx("routing: record of node %s from link %s "
			    "refused: %s", r->rec->name, l->name,
			    nodedb_result_name(res));
		break;
	}
	return 0;
}

/* The switch's hook: a guest's frame (from port p), before forwarding. */
static void
routing_local_frame(void *arg, struct port *p, const uint8_t *eth, size_t len)
{
	struct routing	*r = arg;
	const uint8_t	*dst = eth, *src = eth + ETHER_ADDR_LEN;
	const char	*dst_node = "*";
	struct lmac	*lm;
	struct rmac	*rm;
	char		 m[ETHER_ADDR_STRLEN];
	uint64_t	 now;
	unsigned int	 b;

	if (r == NULL || !r->on || len < ETHER_HDR_LEN)
		return;
	now = vnetd_now_ms();
	if (!ether_is_multicast(src)) {
		if ((lm = local_find(r, src)) != NULL) {
			lm->seen_ms = now;
			if (lm->port != p->fp) {
				/* A move between interfaces is not refused. */
				(void)share_add(r, lm->port, -1);
				fwd_port_unref(r->d->fwd, lm->port);
				lm->port = fwd_port_ref(r->d->fwd, FWD_IFACE,
				    p->ops->name(p));
				(void)share_add(r, lm->port, 1);
			}
		} else if (r->nlocal >= NODE_MACS_MAX ||
		    share_full(r, p->fp) || share_add(r, p->fp, 0) == -1) {
			r->st.macs_refused++;
		} else if ((lm = calloc(1, sizeof(*lm))) != NULL) {
			memcpy(lm->mac, src, ETHER_ADDR_LEN);
			lm->version = 1;
			if ((rm = route_find(r, src)) != NULL) {
				/* Saturated: 0 is no version on the wire. */
				lm->version = rm->version == UINT32_MAX ?
				    UINT32_MAX : rm->version + 1;
				r->st.claims++;
				log_info("routing: MAC %s, node %s's, is here "
				    "now: claimed with version %u",
				    ether_format(src, m), rm->owner,
				    lm->version);
			}
			lm->port = fwd_port_ref(r->d->fwd, FWD_IFACE,
			    p->ops->name(p));
			(void)share_add(r, lm->port, 1);
			lm->seen_ms = now;
			b = mac_bucket(r, src);
			lm->next = r->local[b];
			r->local[b] = lm;
			r->nlocal++;
			routing_originate_soon(r, 0);
			routing_compute_soon(r);
		}
	}
	if (!ether_is_multicast(dst)) {
		if (local_find(r, dst) != NULL)
			dst_node = r->d->node;
		else if ((rm = route_find(r, dst)) != NULL)
			dst_node = rm->owner;
	}
	traffic_count(r->tm, src, dst, dst_node, len, now);
}

/* The second tick: ageing, refreshing, traffic. */
static void
tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct routing	*r = arg;
	struct lmac	*m, *mn;
	uint64_t	 now = vnetd_now_ms();
	size_t		 i;
	int		 changed = 0;

	if (nodedb_age(r->db, now, NULL, NULL) > 0)
		routing_compute_soon(r);
	for (i = 0; i < MAC_BUCKETS; i++)
		for (m = r->local[i]; m != NULL; m = mn) {
			mn = m->next;
			if (now - m->seen_ms >= ROUTING_LOCAL_AGE_MS) {
				local_del(r, m->mac);
				changed = 1;
			}
		}
	traffic_tick(r->tm, now);
	adapt_round(r);
	if (now - r->last_orig_ms >= (uint64_t)refresh_s(r) * 1000)
		changed = 1;
	else if ((traffic_version(r->tm) != r->traffic_sent ||
	    r->traffic_moving) && now - r->last_orig_ms >= ROUTING_TRAFFIC_MS)
		changed = 1;
	if (changed)
		routing_originate_soon(r, 0);
}

/* Life cycle and configuration. */

struct routing *
routing_new(struct vnetd *d)
{
	struct routing	*r;
	struct sw_hooks	 hooks;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->d = d;
	r->seed = arc4random();
	hooks.guest_frame = routing_local_frame;
	hooks.arg = r;
	sw_set_hooks(d->sw, &hooks);
	return r;
}

void
routing_free(struct routing *r)
{
	struct lmac	*m, *mn;
	size_t		 i;

	if (r == NULL)
		return;
	if (r->d->sw != NULL)
		sw_set_hooks(r->d->sw, NULL);
	if (r->d->fwd != NULL) {
		fwd_set_auto(r->d->fwd, NULL, NULL);
		routes_clear(r);
		for (i = 0; i < MAC_BUCKETS; i++)
			for (m = r->local[i]; m != NULL; m = mn) {
				mn = m->next;
				fwd_port_unref(r->d->fwd, m->port);
				free(m);
			}
	}
	free(r->shares);
	if (r->ev_orig != NULL)
		event_free(r->ev_orig);
	if (r->ev_compute != NULL)
		event_free(r->ev_compute);
	if (r->ev_late != NULL)
		event_free(r->ev_late);
	if (r->ev_tick != NULL)
		event_free(r->ev_tick);
	adapt_free(r->adapt);
	nodedb_free(r->db);
	spf_free(r->spf);
	traffic_free(r->tm);
	free(r->tree);
	free(r->rec);
	free(r->enc);
	free(r);
}

int
routing_apply(struct routing *r, const struct stmt *st, char *err,
    size_t errlen)
{
	if (st->kind == STMT_ADVERTISE) {
		r->has_advertise = st->op == STMT_OP_SET;
		r->advertise = st->addr;
		routing_originate_soon(r, 0);
		return 0;
	}
	if (st->kind == STMT_ADAPT)
		return adapt_apply(r, st, err, errlen);
	if (st->kind != STMT_ROUTING) {
		snprintf(err, errlen, "not a routing statement");
		return -1;
	}
	r->on = st->flag;
	r->refresh = st->num;
	return 0;
}

int
routing_start(struct routing *r)
{
	struct timeval	 tv = { 1, 0 };

	if (!r->on) {
		if (r->adapt_set && r->adapt_conf.flag)
			log_warnx("adapt shortcuts: needs routing auto; "
			    "ignored");
		return 0;
	}
	if ((r->db = nodedb_new(r->d->node, 0)) == NULL ||
	    (r->spf = spf_new()) == NULL ||
	    (r->tm = traffic_new(vnetd_now_ms(), arc4random())) == NULL ||
	    (r->rec = malloc(sizeof(*r->rec))) == NULL ||
	    (r->enc = malloc(NODE_RECORD_MAX)) == NULL ||
	    (r->adapt = adapt_new(r->d->node, adapt_log, r)) == NULL ||
	    (r->ev_orig = evtimer_new(r->d->base, orig_cb, r)) == NULL ||
	    (r->ev_compute = evtimer_new(r->d->base, compute_cb, r)) == NULL ||
	    (r->ev_late = evtimer_new(r->d->base, late_cb, r)) == NULL ||
	    (r->ev_tick = event_new(r->d->base, -1, EV_PERSIST, tick_cb,
	    r)) == NULL ||
	    event_add(r->ev_tick, &tv) == -1)
		return -1;
	if (r->adapt_set)
		adapt_configure(r);
	/* Above anything this node said before it restarted. */
	r->seq = wall_ms();
	fwd_set_auto(r->d->fwd, routing_decide, r);
	originate(r);
	return 0;
}

uint16_t
routing_caps(const struct routing *r)
{
	return r != NULL && r->on ? WIRE_CAP_NODES : 0;
}

void
routing_config(struct routing *r, void (*cb)(const struct stmt *, void *),
    void *arg)
{
	struct stmt	 st;

	memset(&st, 0, sizeof(st));
	st.kind = STMT_ROUTING;
	st.flag = r->on;
	st.num = r->refresh;
	cb(&st, arg);
	if (r->has_advertise) {
		memset(&st, 0, sizeof(st));
		st.kind = STMT_ADVERTISE;
		st.addr = r->advertise;
		cb(&st, arg);
	}
	if (r->adapt_set)
		cb(&r->adapt_conf, arg);
}

/*
 * Shortcuts (`adapt shortcuts yes`): adapt.c decides from the pair rates,
 * this part measures them and makes, drains and removes the links through
 * link.c.  A pair's rate is what this node's guests send to the peer's
 * (over the last second) plus what the peer's last record says its guests
 * send to ours.  A shortcut is a configured link named after the peer; a
 * draining one stays open but out of our record and our routes, so both
 * ends route through the relay while the frames already on it arrive.
 */

static int
adapt_ours(enum adapt_state s)
{
	return s == ADAPT_DIALING || s == ADAPT_UP || s == ADAPT_BELOW ||
	    s == ADAPT_DRAINING;
}

static int
draining(const struct routing *r, const struct link *l)
{
	return r->adapt != NULL && l->configured &&
	    adapt_draining(r->adapt, l->name);
}

static void
adapt_log(const char *line, void *arg)
{
	(void)arg;
	log_info("%s", line);
}

static void
adapt_configure(struct routing *r)
{
	const struct stmt *st = &r->adapt_conf;
	struct adapt_conf c;

	c.shortcuts = st->flag;
	c.threshold = st->rate ? st->rate / 8 : ADAPT_THRESHOLD_DEFAULT;
	c.hold = st->adapt.hold ? st->adapt.hold : ADAPT_HOLD_DEFAULT;
	c.idle = st->adapt.idle ? st->adapt.idle : ADAPT_IDLE_DEFAULT;
	c.max = st->adapt.max ? st->adapt.max : ADAPT_MAX_DEFAULT;
	adapt_set_conf(r->adapt, &c);
}

static int
adapt_apply(struct routing *r, const struct stmt *st, char *err,
    size_t errlen)
{
	if (st->adapt.verb != 0) {
		/* A switch for run time: the file says shortcuts yes or no. */
		if (r->d->ev_tick == NULL) {
			snprintf(err, errlen, "adapt %s: only at run time "
			    "(vnetctl); the file sets adapt shortcuts yes|no",
			    st->adapt.verb == STMT_ADAPT_OFF ? "off" : "on");
			return -1;
		}
		if (r->adapt == NULL) {
			snprintf(err, errlen, "adapt: needs routing auto");
			return -1;
		}
		adapt_pause(r->adapt, st->adapt.verb == STMT_ADAPT_OFF);
		log_info("adapt: %s", st->adapt.verb == STMT_ADAPT_OFF ?
		    "off: shortcuts drain, none are made" : "on");
		return 0;
	}
	r->adapt_conf = *st;
	r->adapt_set = 1;
	if (r->adapt != NULL)
		adapt_configure(r);
	return 0;
}

/* What links the pair has (see adapt.h). */
static enum adapt_link
adapt_classify(struct routing *r, const char *peer)
{
	const struct adapt_peer *p = adapt_find(r->adapt, peer);
	struct link	*l;
	const char	*np;

	if ((l = link_find(&r->d->links, peer)) != NULL && l->configured) {
		if (p != NULL && adapt_ours(p->state))
			return link_node_peer(l) != NULL ? ADAPT_LINK_OURS_UP :
			    ADAPT_LINK_OURS_DOWN;
		return ADAPT_LINK_MANUAL;
	}
	/* An incoming link is the peer's shortcut only if its hello says so. */
	TAILQ_FOREACH(l, &r->d->links.list, entry)
		if ((np = link_node_peer(l)) != NULL && strcmp(np, peer) == 0)
			return !l->configured && strcmp(peer, r->d->node) < 0 &&
			    link_peer_shortcut(l) ? ADAPT_LINK_PEERS :
			    ADAPT_LINK_MANUAL;
	return ADAPT_LINK_NONE;
}

/* A listener on a wildcard address tells nobody where to dial. */
static int
dialable(const char *a)
{
	return strncmp(a, "0.0.0.0:", 8) != 0 && strncmp(a, "[::]:", 5) != 0 &&
	    strncmp(a, "*:", 2) != 0;
}

static void
adapt_dial(struct routing *r, const char *peer, const struct node_rec *rec)
{
	const struct adapt_peer *p = adapt_find(r->adapt, peer);
	struct stmt_error perr;
	struct stmt	 st;
	char		 line[STMT_NAME_MAX + NODE_ADDR_MAX + 16], err[256];
	const char	*addrs[NODE_ADDRS_MAX];
	size_t		 i, n = 0;

	for (i = 0; i < rec->naddrs; i++)
		if (dialable(rec->addrs[i]))
			addrs[n++] = rec->addrs[i];
	if (n == 0 || p == NULL) {
		log_warnx("adapt: node %s gives no address to dial", peer);
		return;
	}
	/* TLS with the usual checks unless this node runs without it. */
	snprintf(line, sizeof(line), "link %s %s%s", peer,
	    addrs[p->addr % n], r->d->tls_cert[0] != '\0' ? " tls" : "");
	if (stmt_parse(line, &st, &perr) != 1 ||
	    link_add(&r->d->links, &st, err, sizeof(err)) == -1)
		log_warnx("adapt: cannot dial %s (%s): %s", peer, line,
		    perr.msg[0] != '\0' ? perr.msg : err);
	else
		log_info("adapt: dialling %s at %s%s", peer,
		    addrs[p->addr % n], r->d->tls_cert[0] != '\0' ?
		    " over TLS" : "");
}

static void
adapt_do(struct routing *r, const char *peer, enum adapt_action act,
    const struct node_rec *rec)
{
	struct link	*l;
	char		 err[128];

	switch (act) {
	case ADAPT_NONE:
		break;
	case ADAPT_DIAL:
		if (rec != NULL)
			adapt_dial(r, peer, rec);
		break;
	case ADAPT_DRAIN:
		routing_originate_soon(r, 0);
		routing_compute_soon(r);
		break;
	case ADAPT_CLOSE:
		if ((l = link_find(&r->d->links, peer)) != NULL && l->configured)
			(void)link_del(&r->d->links, peer, err, sizeof(err));
		routing_originate_soon(r, 0);
		routing_compute_soon(r);
		break;
	case ADAPT_REFUSE:
		/* Only the peer's shortcut: what it dialled by hand stays. */
		if ((l = link_find(&r->d->links, peer)) != NULL &&
		    !l->configured && link_peer_shortcut(l))
			(void)link_del(&r->d->links, peer, err, sizeof(err));
		break;
	}
}

/* Once a second: every peer's rate and links through adapt.c. */
static void
adapt_round(struct routing *r)
{
	const struct nodedb_entry *e;
	const struct adapt_peer *p;
	struct node_dst	 out[NODE_ROWS_MAX];
	const char	*why;
	uint64_t	 now = vnetd_now_ms(), rate;
	size_t		 i, k, n;
	char		 peer[NODE_NAME_MAX + 1];

	if (r->adapt == NULL)
		return;
	n = traffic_nodes(r->tm, out, NODE_ROWS_MAX);
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (e->self ||
		    node_decode(e->raw, e->len, r->rec, &why) != NODE_OK)
			continue;
		rate = 0;
		for (k = 0; k < n; k++)
			if (strcmp(out[k].name, e->name) == 0)
				rate += out[k].r.rate1;
		for (k = 0; k < r->rec->ndsts; k++)
			if (strcmp(r->rec->dsts[k].name, r->d->node) == 0)
				rate += r->rec->dsts[k].r.rate1;
		adapt_do(r, e->name, adapt_observe(r->adapt, e->name, rate,
		    adapt_classify(r, e->name), now), r->rec);
	}
	/* Ours to nodes whose records are gone: no traffic to keep them. */
	for (i = 0; i < adapt_count(r->adapt); i++) {
		p = adapt_at(r->adapt, i);
		if (!adapt_ours(p->state) || nodedb_get(r->db, p->name) != NULL)
			continue;
		snprintf(peer, sizeof(peer), "%s", p->name);
		adapt_do(r, peer, adapt_observe(r->adapt, peer, 0,
		    adapt_classify(r, peer), now), NULL);
	}
	adapt_round_end(r->adapt);
}

int
routing_link_auto(const struct routing *r, const struct link *l)
{
	const struct adapt_peer *p;

	if (r == NULL || r->adapt == NULL || !l->configured)
		return 0;
	p = adapt_find(r->adapt, l->name);
	return p != NULL && adapt_ours(p->state);
}

const char *
routing_link_origin(const struct routing *r, const struct link *l,
    char *trigger, size_t len, const char **reason)
{
	const struct adapt_peer *p;

	snprintf(trigger, len, "-");
	*reason = "-";
	if (r == NULL || r->adapt == NULL ||
	    (p = adapt_find(r->adapt, l->name)) == NULL ||
	    !(routing_link_auto(r, l) || (p->state == ADAPT_PEER &&
	    !l->configured)))
		return "-";
	adapt_rate_format(p->trigger, trigger, len);
	*reason = p->state == ADAPT_PEER ? "dialled by the peer" : p->reason;
	return "auto";
}

static void
show_adapt(struct routing *r, struct evbuffer *out)
{
	const struct adapt_conf *c;
	const struct adapt_peer *p;
	uint64_t	 now = vnetd_now_ms();
	char		 a[32], b[32];
	size_t		 i;

	if (r->adapt == NULL)
		return;
	c = adapt_conf(r->adapt);
	evbuffer_add_printf(out, "%%columns peer\tstate\trate\ttrigger\t"
	    "since_s\tattempts\tfailures\tretry_s\tnext_backoff_s\treason\n");
	for (i = 0; i < adapt_count(r->adapt); i++) {
		p = adapt_at(r->adapt, i);
		evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%llu\t%u\t%u\t%llu\t"
		    "%llu\t%s\n", p->name, adapt_state_name(p->state),
		    adapt_rate_format(p->rate, a, sizeof(a)),
		    adapt_rate_format(p->trigger, b, sizeof(b)),
		    (unsigned long long)((now - p->since_ms) / 1000),
		    p->attempts, p->failures,
		    (unsigned long long)(p->state == ADAPT_BACKOFF &&
		    p->retry_ms > now ? (p->retry_ms - now + 999) / 1000 : 0),
		    (unsigned long long)(p->backoff_ms / 1000), p->reason);
	}
	(void)c;
}

/* show */

static void
show_nodes(struct routing *r, struct evbuffer *out)
{
	const struct nodedb_entry *e;
	const char	*why;
	uint64_t	 now = vnetd_now_ms();
	size_t		 i, k;
	int		 idx;

	evbuffer_add_printf(out, "%%columns node\tseq\tage\tlifetime\t"
	    "reachable\thops\tlinks\tmacs\taddresses\n");
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (node_decode(e->raw, e->len, r->rec, &why) != NODE_OK)
			continue;
		idx = spf_find(r->spf, e->name);
		evbuffer_add_printf(out, "%s\t%llu\t%llu\t%u\t%s\t%u\t",
		    e->name, (unsigned long long)e->seq,
		    (unsigned long long)((now - e->received_ms) / 1000),
		    e->lifetime, e->self ? "self" : idx != SPF_NONE &&
		    spf_reachable(r->spf, idx) ? "yes" : "no",
		    idx != SPF_NONE ? spf_hops(r->spf, idx) : 0);
		for (k = 0; k < r->rec->nlinks; k++)
			evbuffer_add_printf(out, "%s%s", k ? "," : "",
			    r->rec->links[k].name);
		evbuffer_add_printf(out, "%s\t%u\t", r->rec->nlinks ? "" : "-",
		    r->rec->nmacs);
		for (k = 0; k < r->rec->naddrs; k++)
			evbuffer_add_printf(out, "%s%s", k ? "," : "",
			    r->rec->addrs[k]);
		evbuffer_add_printf(out, "%s\n", r->rec->naddrs ? "" : "-");
	}
}

static void
show_topology(struct routing *r, struct evbuffer *out)
{
	const struct nodedb_entry *e;
	const char	*why;
	size_t		 i, k;
	int		 a, b;

	evbuffer_add_printf(out, "%%columns node\tneighbour\trtt_ms\tstate\t"
	    "tree\n");
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (node_decode(e->raw, e->len, r->rec, &why) != NODE_OK)
			continue;
		a = spf_find(r->spf, e->name);
		for (k = 0; k < r->rec->nlinks; k++) {
			b = spf_find(r->spf, r->rec->links[k].name);
			evbuffer_add_printf(out, "%s\t%s\t%.3f\t%s\t%s\n",
			    e->name, r->rec->links[k].name,
			    r->rec->links[k].rtt_us / 1000.0,
			    a != SPF_NONE && b != SPF_NONE &&
			    spf_two_way(r->spf, a, b) ? "two-way" : "one-way",
			    a != SPF_NONE && b != SPF_NONE &&
			    spf_reachable(r->spf, a) &&
			    (spf_parent(r->spf, a) == b ||
			    spf_parent(r->spf, b) == a) ? "yes" : "no");
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

static size_t
collect(struct routing *r, struct trow **rows)
{
	const struct nodedb_entry *e;
	const char	*why;
	struct trow	*t;
	size_t		 i, k, n = 0;

	*rows = NULL;
	if ((t = reallocarray(NULL, nodedb_count(r->db) * NODE_ROWS_MAX + 1,
	    sizeof(*t))) == NULL)
		return 0;
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (node_decode(e->raw, e->len, r->rec, &why) != NODE_OK)
			continue;
		for (k = 0; k < r->rec->nrows; k++) {
			snprintf(t[n].node, sizeof(t[n].node), "%s", e->name);
			t[n++].row = r->rec->rows[k];
		}
	}
	qsort(t, n, sizeof(*t), trow_cmp);
	*rows = t;
	return n;
}

static void
show_traffic(struct routing *r, struct evbuffer *out)
{
	struct trow	*t;
	size_t		 i, n;
	char		 a[ETHER_ADDR_STRLEN], b[ETHER_ADDR_STRLEN];

	evbuffer_add_printf(out, "%%columns src\tdst\tnode\tbytes\tframes\t"
	    "rate1\trate10\n");
	n = collect(r, &t);
	for (i = 0; i < n; i++) {
		evbuffer_add_printf(out, "%s\t%s\t%s",
		    ether_format(t[i].row.src, a),
		    ether_format(t[i].row.dst, b), t[i].node);
		show_rate(out, &t[i].row.r);
	}
	free(t);
}

static void
show_traffic_nodes(struct routing *r, struct evbuffer *out)
{
	const struct nodedb_entry *e;
	const char	*why;
	size_t		 i, k;

	evbuffer_add_printf(out, "%%columns src\tdst\tbytes\tframes\trate1\t"
	    "rate10\n");
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (node_decode(e->raw, e->len, r->rec, &why) != NODE_OK)
			continue;
		for (k = 0; k < r->rec->ndsts; k++) {
			evbuffer_add_printf(out, "%s\t%s", e->name,
			    r->rec->dsts[k].name);
			show_rate(out, &r->rec->dsts[k].r);
		}
	}
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
	n = collect(r, &t);
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

void
routing_show(struct routing *r, const struct stmt *st, struct evbuffer *out)
{
	if (!r->on) {
		evbuffer_add_printf(out, "%%columns note\nrouting is static "
		    "(no control plane)\n");
		return;
	}
	switch (st->show) {
	case STMT_SHOW_NODES:
		show_nodes(r, out);
		break;
	case STMT_SHOW_TOPOLOGY:
		show_topology(r, out);
		break;
	case STMT_SHOW_TRAFFIC:
		show_traffic(r, out);
		break;
	case STMT_SHOW_TRAFFIC_NODES:
		show_traffic_nodes(r, out);
		break;
	case STMT_SHOW_TRAFFIC_TOPOLOGY:
		show_traffic_topology(r, st->num, out);
		break;
	case STMT_SHOW_ADAPT:
		show_adapt(r, out);
		break;
	default:
		break;
	}
}

void
routing_show_routes(struct routing *r, struct evbuffer *out)
{
	struct rmac	*m;
	size_t		 i;
	char		 a[ETHER_ADDR_STRLEN];

	if (!r->on)
		return;
	for (i = 0; i < MAC_BUCKETS; i++)
		for (m = r->routes[i]; m != NULL; m = m->next)
			if (m->port != NULL)
				evbuffer_add_printf(out, "any\t%s\tlink\t%s\t"
				    "%s\tauto\n", ether_format(m->mac, a),
				    fwd_port_name(m->port),
				    fwd_port_owner(m->port) != NULL ? "yes" :
				    "no");
}

void
routing_show_macs(struct routing *r, struct evbuffer *out)
{
	struct lmac	*lm;
	struct rmac	*rm;
	uint64_t	 now = vnetd_now_ms();
	size_t		 i;
	char		 a[ETHER_ADDR_STRLEN];

	if (!r->on)
		return;
	for (i = 0; i < MAC_BUCKETS; i++) {
		for (lm = r->local[i]; lm != NULL; lm = lm->next)
			evbuffer_add_printf(out, "%s\tinterface\t%s\t%llu\t%s\t"
			    "local\t%u\n", ether_format(lm->mac, a),
			    fwd_port_name(lm->port),
			    (unsigned long long)((now - lm->seen_ms) / 1000),
			    r->d->node, lm->version);
		for (rm = r->routes[i]; rm != NULL; rm = rm->next)
			evbuffer_add_printf(out, "%s\tlink\t%s\t-\t%s\t"
			    "control\t%u\n", ether_format(rm->mac, a),
			    rm->port != NULL ? fwd_port_name(rm->port) : "-",
			    rm->owner, rm->version);
	}
}

void
routing_show_stats(struct routing *r, struct evbuffer *out)
{
	struct nodedb_stats ds;
	struct adapt_stats as;

	if (!r->on)
		return;
	nodedb_stats(r->db, &ds);
#define ROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
	ROW("nodes", nodedb_count(r->db));
	ROW("node_seq", r->seq);
	ROW("records_in", r->st.records_in);
	ROW("records_out", r->st.records_out);
	ROW("records_bytes_out", r->st.bytes_out);
	ROW("records_skipped", r->st.records_skipped);
	ROW("records_originated", r->st.originated);
	ROW("records_malformed", r->st.malformed);
	ROW("records_refused", r->st.refused);
	ROW("records_seq_ahead", r->st.seq_ahead);
	ROW("records_db_full", ds.full);
	ROW("records_too_soon", ds.too_soon);
	ROW("records_late", ds.late);
	ROW("records_about_us", ds.self_newer);
	ROW("records_aged", ds.aged);
	ROW("routes_computed", r->st.recomputed);
	ROW("routes_changed_ms", r->changed_ms);
	ROW("auto_routes", r->nroutes);
	ROW("macs_local", r->nlocal);
	ROW("macs_refused", r->st.macs_refused);
	ROW("mac_claims", r->st.claims);
	ROW("macs_moved_away", r->st.moved_away);
	ROW("mac_conflicts", r->st.conflicts);
	ROW("traffic_overflow", traffic_overflow(r->tm));
	adapt_stats(r->adapt, &as);
	ROW("adapt_shortcuts", adapt_active(r->adapt));
	ROW("adapt_dials", as.dials);
	ROW("adapt_ups", as.ups);
	ROW("adapt_dial_failures", as.failures);
	ROW("adapt_deaths", as.deaths);
	ROW("adapt_drains", as.drains);
	ROW("adapt_closes", as.closes);
	ROW("adapt_max_refused", as.max_refused);
#undef ROW
}
