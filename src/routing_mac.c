/*
 * The MACs of the control plane: those this node claims (sources seen on
 * its interfaces, each interface within its share), the claims of other
 * nodes with the link toward each owner, and the one automatic route of
 * each MAC that follows from them, kept in forwarding (fwd.h): a guest
 * here goes to its interface, another node's to the next hop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"
#include "hash.h"
#include "log.h"
#include "routing.h"
#include "routing_impl.h"

/* Seeded: peers name the MACs in their records and could aim them. */
unsigned int
routing_mac_bucket(const struct routing *r, const uint8_t *mac)
{
	return hash_fnv1a(r->seed, mac, ETHER_ADDR_LEN) % ROUTING_MAC_BUCKETS;
}

struct routing_lmac *
routing_mac_local(struct routing *r, const uint8_t *mac)
{
	struct routing_lmac	*m;

	for (m = r->local[routing_mac_bucket(r, mac)]; m != NULL; m = m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0)
			return m;
	return NULL;
}

struct routing_rmac *
routing_mac_remote(struct routing *r, const uint8_t *mac)
{
	struct routing_rmac	*m;

	for (m = r->routes[routing_mac_bucket(r, mac)]; m != NULL;
	    m = m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0)
			return m;
	return NULL;
}

void
routing_mac_install(struct routing *r, const uint8_t *mac)
{
	struct routing_lmac	*lm;
	struct routing_rmac	*rm;
	int			 v = 0;

	if ((lm = routing_mac_local(r, mac)) != NULL)
		v = fwd_auto_set(r->fwd, mac, FWD_IFACE,
		    fwd_port_name(lm->port));
	else if ((rm = routing_mac_remote(r, mac)) != NULL &&
	    rm->via[0] != '\0')
		v = fwd_auto_set(r->fwd, mac, FWD_LINK, rm->via);
	else
		fwd_auto_del(r->fwd, mac);
	if (v == -1) {
		/* Better no route than a stale one. */
		fwd_auto_del(r->fwd, mac);
		if (routing_may_log(r, 8))
			log_warnx("routing: out of memory for automatic routes");
	}
}

/*
 * Each interface may hold its share of the local MACs: NODE_MACS_MAX over
 * the number of interfaces, so that a guest flooding source MACs on one
 * cannot keep another's guests out of the node's record.
 */
static size_t
share_quota(const struct routing *r)
{
	size_t	 n = r->env.ifaces(r->env.arg);

	return NODE_MACS_MAX / (n > 0 ? n : 1);
}

static struct routing_share *
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
	struct routing_share	*s, *ns;
	size_t			 cap;

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
	const struct routing_share *s = share_find(r, port);

	return s != NULL && s->n >= share_quota(r);
}

static void
local_del(struct routing *r, const uint8_t *mac_arg)
{
	struct routing_lmac	**mp, *m;
	uint8_t			  mac[ETHER_ADDR_LEN];

	/* A copy: mac_arg may be the entry's own, freed below. */
	memcpy(mac, mac_arg, ETHER_ADDR_LEN);
	for (mp = &r->local[routing_mac_bucket(r, mac)]; (m = *mp) != NULL;
	    mp = &m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0) {
			*mp = m->next;
			(void)share_add(r, m->port, -1);
			fwd_port_unref(r->fwd, m->port);
			r->page_n[m->page]--;
			routing_flood_mark(r, 1U << m->page);
			free(m);
			r->nlocal--;
			routing_mac_install(r, mac);
			return;
		}
}

/* A source seen on a local interface (port in): ours, or claimed now. */
void
routing_mac_seen(struct routing *r, struct fwd_port *in, const uint8_t *src,
    uint64_t now)
{
	struct routing_lmac	*lm;
	struct routing_rmac	*rm;
	char			 m[ETHER_ADDR_STRLEN];
	unsigned int		 b;

	if ((lm = routing_mac_local(r, src)) != NULL) {
		lm->seen_ms = now;
		if (lm->port != in) {
			/* A move between interfaces is not refused. */
			(void)share_add(r, lm->port, -1);
			fwd_port_unref(r->fwd, lm->port);
			lm->port = fwd_port_ref(r->fwd, fwd_port_kind(in),
			    fwd_port_name(in));
			(void)share_add(r, lm->port, 1);
			routing_mac_install(r, src);
		}
		return;
	}
	if (r->nlocal >= NODE_MACS_MAX || share_full(r, in) ||
	    share_add(r, in, 0) == -1) {
		r->st.macs_refused++;
		return;
	}
	if ((lm = calloc(1, sizeof(*lm))) == NULL)
		return;
	memcpy(lm->mac, src, ETHER_ADDR_LEN);
	lm->version = 1;
	if ((rm = routing_mac_remote(r, src)) != NULL) {
		/* Saturated: 0 is no version on the wire. */
		lm->version = rm->version == UINT32_MAX ? UINT32_MAX :
		    rm->version + 1;
		r->st.claims++;
		log_info("routing: MAC %s, node %s's, is here now: claimed "
		    "with version %u", ether_format(src, m), rm->owner,
		    lm->version);
	}
	if ((lm->port = fwd_port_ref(r->fwd, fwd_port_kind(in),
	    fwd_port_name(in))) == NULL) {
		free(lm);
		return;
	}
	(void)share_add(r, lm->port, 1);
	lm->seen_ms = now;
	/* The first page with room: the others are not sent again. */
	for (lm->page = 0; r->page_n[lm->page] >= NODE_PAGE_MACS; lm->page++)
		;
	r->page_n[lm->page]++;
	b = routing_mac_bucket(r, src);
	lm->next = r->local[b];
	r->local[b] = lm;
	r->nlocal++;
	routing_mac_install(r, src);
	routing_flood_mark(r, 1U << lm->page);
	routing_path_soon(r);
}

/* One remote claim; the highest version wins, then the lower name. */
void
routing_mac_claim(struct routing *r, const char *owner,
    const struct node_mac *nm, const char *via)
{
	struct routing_lmac	*lm;
	struct routing_rmac	*rm;
	char			 m[ETHER_ADDR_STRLEN];
	unsigned int		 b;
	uint64_t		 now = routing_now(r);

	if ((lm = routing_mac_local(r, nm->mac)) != NULL) {
		if (lm->version > nm->version || (lm->version == nm->version &&
		    strcmp(r->node, owner) < 0))
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
	}
	if ((rm = routing_mac_remote(r, nm->mac)) != NULL) {
		if (rm->version > nm->version || (rm->version == nm->version &&
		    strcmp(rm->owner, owner) < 0))
			return;
	} else {
		if ((rm = calloc(1, sizeof(*rm))) == NULL)
			return;
		memcpy(rm->mac, nm->mac, ETHER_ADDR_LEN);
		b = routing_mac_bucket(r, nm->mac);
		rm->next = r->routes[b];
		r->routes[b] = rm;
		r->nroutes++;
	}
	rm->version = nm->version;
	snprintf(rm->owner, sizeof(rm->owner), "%s", owner);
	snprintf(rm->via, sizeof(rm->via), "%s", via != NULL ? via : "");
}

void
routing_mac_swap(struct routing *r, struct routing_rmac **old)
{
	memcpy(old, r->routes, sizeof(r->routes));
	memset(r->routes, 0, sizeof(r->routes));
	r->nroutes = 0;
}

/*
 * The claims are in anew: every MAC of the new table and of the old one
 * gets its route from what is known now.  fwd_auto_set() of the route a
 * MAC has already changes nothing, so only the differences reach the
 * forwarding table.
 */
void
routing_mac_settle(struct routing *r, struct routing_rmac **old)
{
	struct routing_rmac	*m, *mn;
	size_t			 i;

	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->routes[i]; m != NULL; m = m->next)
			routing_mac_install(r, m->mac);
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = old[i]; m != NULL; m = mn) {
			mn = m->next;
			if (routing_mac_remote(r, m->mac) == NULL)
				routing_mac_install(r, m->mac);
			free(m);
		}
}

void
routing_mac_age(struct routing *r, uint64_t now)
{
	struct routing_lmac	*m, *mn;
	char			 s[ETHER_ADDR_STRLEN];
	size_t			 i;

	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->local[i]; m != NULL; m = mn) {
			mn = m->next;
			if (now - m->seen_ms >= ROUTING_LOCAL_AGE_MS)
				local_del(r, m->mac);
			else if (fwd_port_owner(m->port) == NULL) {
				/* Its interface is down or gone: so is it. */
				log_info("routing: MAC %s withdrawn: interface "
				    "%s is down", ether_format(m->mac, s),
				    fwd_port_name(m->port));
				r->st.withdrawn_down++;
				local_del(r, m->mac);
			}
		}
}

void
routing_mac_free(struct routing *r)
{
	struct routing_lmac	*m, *mn;
	struct routing_rmac	*rm, *rmn;
	size_t			 i;

	for (i = 0; i < ROUTING_MAC_BUCKETS; i++) {
		for (m = r->local[i]; m != NULL; m = mn) {
			mn = m->next;
			fwd_port_unref(r->fwd, m->port);
			free(m);
		}
		r->local[i] = NULL;
		for (rm = r->routes[i]; rm != NULL; rm = rmn) {
			rmn = rm->next;
			free(rm);
		}
		r->routes[i] = NULL;
	}
	r->nlocal = r->nroutes = 0;
}
