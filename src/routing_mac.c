/*
 * The MACs of the control plane: those this node claims (sources seen on
 * its interfaces, each interface within its share), the claims of other
 * nodes with the link toward each owner, and the one automatic route of
 * each MAC that follows from them, kept in forwarding (fwd.h): a guest
 * here goes to its interface, another node's to the next hop.
 *
 * Who wins a MAC is macown.h's: the owner we knew keeps it while it claims
 * it, and lets it go only when it is silent there; a claim over it waits
 * (pending) and the frames behind it are dropped; versions go up by a
 * bounded step; a MAC that moves too often is frozen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"
#include "hash.h"
#include "log.h"
#include "macown.h"
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

	if ((lm = routing_mac_local(r, mac)) != NULL && !lm->pending)
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
	size_t	 n = r->env.ifaces(r->env.arg, NULL);

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

static struct routing_rmac *
rmac_in(struct routing *r, struct routing_rmac **tab, const uint8_t *mac)
{
	struct routing_rmac	*m;

	if (tab == NULL)
		return NULL;
	for (m = tab[routing_mac_bucket(r, mac)]; m != NULL; m = m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0)
			return m;
	return NULL;
}

static struct routing_mob *
mob_find(struct routing *r, const uint8_t *mac, int make)
{
	struct routing_mob	*m;
	unsigned int		 b = routing_mac_bucket(r, mac);

	for (m = r->mob[b]; m != NULL; m = m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0)
			return m;
	if (!make || r->nmob >= ROUTING_MOB_MAX ||
	    (m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	memcpy(m->mac, mac, ETHER_ADDR_LEN);
	m->next = r->mob[b];
	r->mob[b] = m;
	r->nmob++;
	return m;
}

static int
mac_frozen(struct routing *r, const uint8_t *mac, uint64_t now)
{
	struct routing_mob	*m = mob_find(r, mac, 0);

	return m != NULL && macown_frozen(&m->m, now);
}

/* The MAC went to node to (as we see it): one move; too many freeze it. */
static void
mob_moved(struct routing *r, const uint8_t *mac, const char *to, uint64_t now)
{
	struct routing_mob	*m;
	char			 a[ETHER_ADDR_STRLEN];

	if ((m = mob_find(r, mac, 1)) == NULL || !macown_move(&m->m, now))
		return;
	snprintf(m->owner, sizeof(m->owner), "%s", to);
	r->st.frozen++;
	log_warnx("routing: MAC %s moved %d times within %d s: frozen at "
	    "node %s for %d s", ether_format(mac, a), MACOWN_MOVES,
	    MACOWN_WINDOW_MS / 1000, to, MACOWN_HOLD_MS / 1000);
}

/* A frame from in whose source is another's: dropped, counted at in. */
static int
foreign(struct routing *r, struct fwd_port *in, const uint8_t *src,
    const char *whose)
{
	struct routing_foreign	*f, *nf;
	char			 a[ETHER_ADDR_STRLEN];
	size_t			 i, cap;

	r->st.foreign_src++;
	for (i = 0; i < r->nforeign; i++)
		if (r->foreign[i].port == in)
			break;
	if (i == r->nforeign) {
		if (r->nforeign == r->foreigncap) {
			cap = r->foreigncap > 0 ? 2 * r->foreigncap : 8;
			if ((nf = reallocarray(r->foreign, cap,
			    sizeof(*nf))) == NULL)
				return -1;
			r->foreign = nf;
			r->foreigncap = cap;
		}
		f = &r->foreign[r->nforeign];
		if ((f->port = fwd_port_ref(r->fwd, fwd_port_kind(in),
		    fwd_port_name(in))) == NULL)
			return -1;
		f->n = 0;
		r->nforeign++;
	}
	r->foreign[i].n++;
	if (routing_may_log(r, 9))
		log_warnx("routing: frames from MAC %s at interface %s "
		    "dropped: the MAC is %s's", ether_format(src, a),
		    fwd_port_name(in), whose);
	return -1;
}

uint64_t
routing_mac_foreign(const struct routing *r, const char *port)
{
	size_t	 i;

	for (i = 0; i < r->nforeign; i++)
		if (strcmp(fwd_port_name(r->foreign[i].port), port) == 0)
			return r->foreign[i].n;
	return 0;
}

/*
 * A source seen on a local interface (port in): ours, a move between our
 * interfaces once it is silent at the other, or a claim over another
 * node's that waits for it to let go.  -1: the frame is to be dropped.
 */
int
routing_mac_seen(struct routing *r, struct fwd_port *in, const uint8_t *src,
    uint64_t now)
{
	struct routing_lmac	*lm;
	struct routing_rmac	*rm;
	char			 m[ETHER_ADDR_STRLEN];
	unsigned int		 b;

	if ((lm = routing_mac_local(r, src)) != NULL) {
		if (lm->port != in) {
			if (fwd_port_owner(lm->port) != NULL &&
			    now - lm->seen_ms < MACOWN_SILENT_MS)
				return foreign(r, in, src,
				    fwd_port_name(lm->port));
			(void)share_add(r, lm->port, -1);
			fwd_port_unref(r->fwd, lm->port);
			lm->port = fwd_port_ref(r->fwd, fwd_port_kind(in),
			    fwd_port_name(in));
			(void)share_add(r, lm->port, 1);
			routing_mac_install(r, src);
		}
		lm->seen_ms = now;
		return lm->pending ? foreign(r, in, src, "another node") : 0;
	}
	rm = routing_mac_remote(r, src);
	if (rm != NULL && mac_frozen(r, src, now)) {
		r->st.claims_frozen++;
		return foreign(r, in, src, rm->owner);
	}
	if (r->nlocal >= NODE_MACS_MAX || share_full(r, in) ||
	    share_add(r, in, 0) == -1) {
		r->st.macs_refused++;
		return rm != NULL ? foreign(r, in, src, rm->owner) : 0;
	}
	if ((lm = calloc(1, sizeof(*lm))) == NULL)
		return rm != NULL ? -1 : 0;
	memcpy(lm->mac, src, ETHER_ADDR_LEN);
	lm->version = 1;
	if (rm != NULL) {
		lm->version = macown_next(rm->version);
		lm->pending = 1;
		r->st.claims_waiting++;
		log_info("routing: MAC %s, node %s's, sends here: claimed "
		    "with version %u, taken once %s lets it go",
		    ether_format(src, m), rm->owner, lm->version, rm->owner);
	}
	if ((lm->port = fwd_port_ref(r->fwd, fwd_port_kind(in),
	    fwd_port_name(in))) == NULL) {
		free(lm);
		return rm != NULL ? -1 : 0;
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
	return lm->pending ? foreign(r, in, src, rm->owner) : 0;
}

void
routing_mac_restore(struct routing *r)
{
	struct routing_lmac *lm;
	struct fwd_port	*port;
	const char	*only;
	uint64_t	 now = routing_now(r);
	uint16_t	 i;
	char		 m[ETHER_ADDR_STRLEN];
	size_t		 n = 0;

	if (r->rec->kind != NODE_KIND_MACS ||
	    now - r->started_ms >= ROUTING_RESTORE_MS ||
	    r->env.ifaces(r->env.arg, &only) != 1 || only == NULL ||
	    (port = fwd_port_find(r->fwd, FWD_IFACE, only)) == NULL ||
	    fwd_port_owner(port) == NULL)
		return;
	/* A LAN segment's MACs are its forwarder's, which may be another. */
	if (r->env.port_segment != NULL &&
	    r->env.port_segment(r->env.arg, only) != NULL)
		return;
	for (i = 0; i < r->rec->nmacs; i++) {
		/* Ours already, or another node's now (it moved meanwhile). */
		if (routing_mac_local(r, r->rec->macs[i].mac) != NULL ||
		    routing_mac_remote(r, r->rec->macs[i].mac) != NULL ||
		    routing_mac_seen(r, port, r->rec->macs[i].mac, now) != 0 ||
		    (lm = routing_mac_local(r, r->rec->macs[i].mac)) == NULL)
			continue;
		lm->version = r->rec->macs[i].version;
		n++;
		log_info("routing: MAC %s taken back from our record of before "
		    "the restart, on interface %s",
		    ether_format(r->rec->macs[i].mac, m), only);
	}
	r->restored += n;
}

void
routing_mac_bound(struct routing *r, const char *owner,
    struct routing_page *pg)
{
	struct routing_lmac	*lm;
	struct routing_rmac	*rm;
	char			 a[ETHER_ADDR_STRLEN];
	uint32_t		 held;
	size_t			 k;

	for (k = 0; k < pg->nmacs; k++) {
		rm = routing_mac_remote(r, pg->macs[k].mac);
		lm = routing_mac_local(r, pg->macs[k].mac);
		held = rm != NULL ? rm->version : lm != NULL ? lm->version : 0;
		if (macown_version_ok(held, pg->macs[k].version))
			continue;
		r->st.version_jumps++;
		if (routing_may_log(r, 10))
			log_warnx("routing: node %s claims MAC %s with version "
			    "%u, more than %d over the %u held: refused", owner,
			    ether_format(pg->macs[k].mac, a),
			    pg->macs[k].version, MACOWN_STEP, held);
		pg->macs[k].version = 0;
	}
}

/*
 * Another node's claim over a MAC we hold: kept off while the MAC sends
 * here, is frozen, or jumps its version; else the MAC is let go.  1 if we
 * keep it.
 */
static int
keep_local(struct routing *r, struct routing_lmac *lm, const char *owner,
    const struct node_mac *nm, uint64_t now)
{
	struct routing_mob	*mb = mob_find(r, nm->mac, 0);
	enum macown_answer	 a;
	char			 m[ETHER_ADDR_STRLEN];

	if (lm->version > nm->version || (lm->version == nm->version &&
	    strcmp(r->node, owner) < 0))
		return 1;
	if (routing_seg_keeps(r, fwd_port_name(lm->port), owner)) {
		r->st.segment_kept++;
		return 1;
	}
	a = macown_answer(lm->version, nm->version, lm->seen_ms,
	    fwd_port_owner(lm->port) != NULL, mb != NULL ? &mb->m : NULL, now);
	if (a == MACOWN_YIELD) {
		log_info("routing: MAC %s moved to node %s",
		    ether_format(nm->mac, m), owner);
		r->st.moved_away++;
		mob_moved(r, nm->mac, owner, now);
		local_del(r, nm->mac);
		return 0;
	}
	lm->contested = 1;
	/* Each claim is counted and logged once, not at each computation. */
	if (lm->answered == nm->version && strcmp(lm->answered_to, owner) == 0)
		return 1;
	lm->answered = nm->version;
	snprintf(lm->answered_to, sizeof(lm->answered_to), "%s", owner);
	if (a == MACOWN_KEEP_LIVE)
		r->st.conflicts++;
	else if (a == MACOWN_KEEP_FROZEN)
		r->st.claims_frozen++;
	else
		r->st.version_jumps++;
	if (a == MACOWN_KEEP_LIVE)
		log_warnx("routing: MAC %s claimed by node %s (version %u) "
		    "while it still sends here (version %u): kept",
		    ether_format(nm->mac, m), owner, nm->version, lm->version);
	else
		log_warnx("routing: MAC %s claimed by node %s (version %u, "
		    "ours %u): kept, %s", ether_format(nm->mac, m), owner,
		    nm->version, lm->version, macown_answer_name(a));
	return 1;
}

/*
 * One remote claim.  The owner we knew (the table before this computation)
 * keeps the MAC while it claims it; else the highest version wins, then
 * the lower name, our own pending claim among them.
 */
void
routing_mac_claim(struct routing *r, const char *owner,
    const struct node_mac *nm, const char *via)
{
	struct routing_lmac	*lm;
	struct routing_rmac	*rm, *o;
	unsigned int		 b;
	uint64_t		 now = routing_now(r);
	int			 incumbent;

	if (nm->version == 0)
		return;		/* refused when it came */
	if ((lm = routing_mac_local(r, nm->mac)) != NULL && !lm->pending &&
	    keep_local(r, lm, owner, nm, now))
		return;
	lm = routing_mac_local(r, nm->mac);
	o = rmac_in(r, r->prev, nm->mac);
	incumbent = o != NULL && strcmp(o->owner, owner) == 0;
	if ((rm = routing_mac_remote(r, nm->mac)) != NULL) {
		if (rm->held || (!incumbent && (rm->version > nm->version ||
		    (rm->version == nm->version &&
		    strcmp(rm->owner, owner) < 0))))
			return;
	} else {
		if (!incumbent && lm != NULL && lm->pending &&
		    (lm->version > nm->version || (lm->version == nm->version &&
		    strcmp(r->node, owner) < 0)))
			return;
		if ((rm = calloc(1, sizeof(*rm))) == NULL)
			return;
		memcpy(rm->mac, nm->mac, ETHER_ADDR_LEN);
		b = routing_mac_bucket(r, nm->mac);
		rm->next = r->routes[b];
		r->routes[b] = rm;
		r->nroutes++;
	}
	rm->version = nm->version;
	rm->held = incumbent;
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
	struct routing_rmac	*m, *mn, *o;
	uint64_t		 now = routing_now(r);
	size_t			 i;

	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->routes[i]; m != NULL; m = m->next) {
			if ((o = rmac_in(r, old, m->mac)) != NULL &&
			    strcmp(o->owner, m->owner) != 0)
				mob_moved(r, m->mac, m->owner, now);
			routing_mac_install(r, m->mac);
		}
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = old[i]; m != NULL; m = mn) {
			mn = m->next;
			if (routing_mac_remote(r, m->mac) == NULL)
				routing_mac_install(r, m->mac);
			free(m);
		}
}

void
routing_mac_promote(struct routing *r)
{
	struct routing_lmac	*m;
	char			 a[ETHER_ADDR_STRLEN];
	uint64_t		 now = routing_now(r);
	size_t			 i;

	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->local[i]; m != NULL; m = m->next) {
			if (!m->pending || routing_mac_remote(r, m->mac) != NULL)
				continue;
			m->pending = 0;
			r->st.claims++;
			log_info("routing: MAC %s is here now (version %u): "
			    "its owner let it go", ether_format(m->mac, a),
			    m->version);
			mob_moved(r, m->mac, r->node, now);
			routing_mac_install(r, m->mac);
		}
}

void
routing_mac_age(struct routing *r, uint64_t now)
{
	struct routing_lmac	*m, *mn;
	struct routing_mob	**bp, *mb;
	char			 s[ETHER_ADDR_STRLEN];
	size_t			 i;

	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (bp = &r->mob[i]; (mb = *bp) != NULL;)
			if (macown_idle(&mb->m, now)) {
				*bp = mb->next;
				free(mb);
				r->nmob--;
			} else
				bp = &mb->next;
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->local[i]; m != NULL; m = mn) {
			mn = m->next;
			if (m->contested && !mac_frozen(r, m->mac, now) &&
			    (now - m->seen_ms >= MACOWN_SILENT_MS ||
			    fwd_port_owner(m->port) == NULL)) {
				/* Silent now: the claim kept off may be taken. */
				m->contested = 0;
				m->answered = 0;
				routing_path_soon(r);
			}
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

size_t
routing_mac_standby(struct routing *r, const char *seg)
{
	struct routing_lmac	*m, *mn;
	const char		*g;
	size_t			 i, n = 0;

	if (r->env.port_segment == NULL)
		return 0;
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++)
		for (m = r->local[i]; m != NULL; m = mn) {
			mn = m->next;
			if ((g = r->env.port_segment(r->env.arg,
			    fwd_port_name(m->port))) == NULL ||
			    strcmp(g, seg) != 0)
				continue;
			r->st.withdrawn_standby++;
			local_del(r, m->mac);
			n++;
		}
	return n;
}

void
routing_mac_free(struct routing *r)
{
	struct routing_lmac	*m, *mn;
	struct routing_rmac	*rm, *rmn;
	struct routing_mob	*mb, *mbn;
	size_t			 i;

	for (i = 0; i < r->nforeign; i++)
		fwd_port_unref(r->fwd, r->foreign[i].port);
	free(r->foreign);
	r->foreign = NULL;
	r->nforeign = r->foreigncap = 0;
	for (i = 0; i < ROUTING_MAC_BUCKETS; i++) {
		for (mb = r->mob[i]; mb != NULL; mb = mbn) {
			mbn = mb->next;
			free(mb);
		}
		r->mob[i] = NULL;
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
	r->nlocal = r->nroutes = r->nmob = 0;
}
