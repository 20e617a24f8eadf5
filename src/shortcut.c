/* Shortcuts: adapt.h's decisions carried out on the links (shortcut.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "adapt.h"
#include "log.h"
#include "metric.h"
#include "node.h"
#include "nodedb.h"
#include "routing_impl.h"
#include "shortcut.h"
#include "traffic.h"

/*
 * Where shortcuts connected lately: a record's candidates are its node's
 * (signed, on a TLS network), but an insider can name any address as its
 * own, and so can each insider; at most SHORTCUT_TARGET_DIALS connections
 * a minute go to one address, whatever node names it, so that the
 * network's nodes cannot be made to connect to a third party.
 */
#define SHORTCUT_TARGETS	256	/* addresses followed; then the oldest */
#define SHORTCUT_TARGET_DIALS	3
#define SHORTCUT_TARGET_MS	60000

struct shortcut_target {
	char		 addr[NODE_ADDR_MAX + 1];	/* "": free */
	uint64_t	 at[SHORTCUT_TARGET_DIALS];	/* the last dials, ms */
	unsigned int	 next;
};

struct shortcut {
	struct adapt	*adapt;		/* NULL without routing auto */
	struct stmt	 conf;		/* as configured, for show config */
	int		 set;
	struct shortcut_target targets[SHORTCUT_TARGETS];
	uint64_t	 bounded;	/* dials not made for it */
};

struct shortcut *
shortcut_new(void)
{
	return calloc(1, sizeof(struct shortcut));
}

void
shortcut_free(struct shortcut *sc)
{
	if (sc == NULL)
		return;
	adapt_free(sc->adapt);
	free(sc);
}

static int
ours(enum adapt_state s)
{
	return s == ADAPT_DIALING || s == ADAPT_UP || s == ADAPT_BELOW ||
	    s == ADAPT_DRAINING;
}

static void
shortcut_log(const char *line, void *arg)
{
	(void)arg;
	log_info("%s", line);
}

static void
shortcut_configure(struct shortcut *sc)
{
	const struct stmt *st = &sc->conf;
	struct adapt_conf c;

	c.shortcuts = st->flag;
	c.threshold = st->rate ? st->rate / 8 : ADAPT_THRESHOLD_DEFAULT;
	c.hold = st->adapt.hold ? st->adapt.hold : ADAPT_HOLD_DEFAULT;
	c.idle = st->adapt.idle ? st->adapt.idle : ADAPT_IDLE_DEFAULT;
	c.max = st->adapt.max ? st->adapt.max : ADAPT_MAX_DEFAULT;
	adapt_set_conf(sc->adapt, &c);
}

int
shortcut_start(struct routing *r)
{
	struct shortcut	*sc = r->sc;

	r->running = 1;
	if (!r->on) {
		if (sc->set && sc->conf.flag)
			log_warnx("adapt shortcuts: needs routing auto; "
			    "ignored");
		return 0;
	}
	if ((sc->adapt = adapt_new(r->node, shortcut_log, r)) == NULL)
		return -1;
	if (sc->set)
		shortcut_configure(sc);
	return 0;
}

int
shortcut_apply(struct routing *r, const struct stmt *st, char *err,
    size_t errlen)
{
	struct shortcut	*sc = r->sc;

	if (st->adapt.verb != 0) {
		/* A switch for run time: the file says shortcuts yes or no. */
		if (!r->running) {
			snprintf(err, errlen, "adapt %s: only at run time "
			    "(vnetctl); the file sets adapt shortcuts yes|no",
			    st->adapt.verb == STMT_ADAPT_OFF ? "off" : "on");
			return -1;
		}
		if (sc->adapt == NULL) {
			snprintf(err, errlen, "adapt: needs routing auto");
			return -1;
		}
		adapt_pause(sc->adapt, st->adapt.verb == STMT_ADAPT_OFF);
		log_info("adapt: %s", st->adapt.verb == STMT_ADAPT_OFF ?
		    "off: shortcuts drain, none are made" : "on");
		return 0;
	}
	sc->conf = *st;
	sc->set = 1;
	if (sc->adapt != NULL)
		shortcut_configure(sc);
	return 0;
}

int
shortcut_on(const struct routing *r)
{
	return r->sc->adapt != NULL && adapt_conf(r->sc->adapt)->shortcuts;
}

int
shortcut_draining(struct routing *r, const struct routing_nbr *n)
{
	return r->sc->adapt != NULL && n->configured &&
	    adapt_draining(r->sc->adapt, n->name);
}

/* The up link of that name, or NULL. */
static struct routing_nbr *
nbr_named(struct routing *r, const char *name)
{
	size_t	 i;

	for (i = 0; i < r->nnbrs; i++)
		if (strcmp(r->nbrs[i].name, name) == 0)
			return &r->nbrs[i];
	return NULL;
}

/* What links the pair has (see adapt.h). */
static enum adapt_link
classify(struct routing *r, const char *peer)
{
	const struct adapt_peer *p = adapt_find(r->sc->adapt, peer);
	struct routing_nbr *n;
	size_t		 i;

	if (r->env.configured(r->env.arg, peer)) {
		if (p != NULL && ours(p->state))
			return (n = nbr_named(r, peer)) != NULL &&
			    n->configured && n->peer[0] != '\0' ?
			    ADAPT_LINK_OURS_UP : ADAPT_LINK_OURS_DOWN;
		return ADAPT_LINK_MANUAL;
	}
	/* An incoming link is the peer's shortcut only if its hello says so. */
	for (i = 0; i < r->nnbrs; i++) {
		n = &r->nbrs[i];
		if (strcmp(n->peer, peer) == 0)
			return !n->configured && strcmp(peer, r->node) < 0 &&
			    n->shortcut ? ADAPT_LINK_PEERS : ADAPT_LINK_MANUAL;
	}
	return ADAPT_LINK_NONE;
}

/* A listener on a wildcard address tells nobody where to dial. */
static int
dialable(const char *a)
{
	return strncmp(a, "0.0.0.0:", 8) != 0 && strncmp(a, "[::]:", 5) != 0 &&
	    strncmp(a, "*:", 2) != 0;
}

/* The length of addr's host part ("HOST:PORT", IPv6 in brackets). */
static size_t
host_len(const char *addr)
{
	const char	*colon = strrchr(addr, ':');

	return colon != NULL ? (size_t)(colon - addr) : strlen(addr);
}

static uint16_t
port_of(const char *addr)
{
	const char	*colon = strrchr(addr, ':');
	long		 v;
	char		*end;

	if (colon == NULL)
		return 0;
	v = strtol(colon + 1, &end, 10);
	return *end == '\0' && v > 0 && v <= 65535 ? (uint16_t)v : 0;
}

/*
 * Where a node's datagrams are seen coming from when that is not one of
 * its own addresses: the binding of its listener's port on the NAT in
 * front of it, where a hole may be punched.  NULL: not behind a NAT.
 */
static const char *
nat_binding(const struct node_cand *c, size_t n)
{
	size_t	 i, k, hl;

	for (i = 0; i < n; i++) {
		if (c[i].kind != NODE_CAND_SEEN_UDP)
			continue;
		hl = host_len(c[i].addr);
		for (k = 0; k < n; k++)
			if (c[k].kind == NODE_CAND_HOST &&
			    host_len(c[k].addr) == hl &&
			    strncmp(c[k].addr, c[i].addr, hl) == 0)
				break;
		if (k == n)
			return c[i].addr;
	}
	return NULL;
}

/* Our listener's port (our first host candidate's), 0: none. */
static uint16_t
own_port(const struct routing *r)
{
	size_t	 i;

	for (i = 0; i < r->ncands; i++)
		if (r->cands[i].kind == NODE_CAND_HOST)
			return port_of(r->cands[i].addr);
	return 0;
}

/*
 * Both ends behind NATs, each knowing the other's binding: a hole is
 * punched (the dialler from its listener's port to the peer's binding,
 * the peer from its own to ours at the same time).  The peer's binding,
 * or NULL.
 */
static const char *
punchable(const struct routing *r, const struct routing_topo *rec)
{
	if (own_port(r) == 0 || nat_binding(r->cands, r->ncands) == NULL)
		return NULL;
	return nat_binding(rec->cands, rec->ncands);
}

/* Where a peer is seen from outside (a NAT's address), or NULL. */
static const char *
nat_of(const struct routing_topo *rec)
{
	size_t	 i;

	for (i = 0; i < rec->ncands; i++)
		if (rec->cands[i].kind == NODE_CAND_SEEN_OUT ||
		    rec->cands[i].kind == NODE_CAND_SEEN_UDP)
			return rec->cands[i].addr;
	return NULL;
}

/* How the pair's direct path stands, for show adapt (bounded there). */
static void __attribute__((format(printf, 3, 4)))
note(struct routing *r, const char *peer, const char *fmt, ...)
{
	char		 why[ADAPT_WHY_MAX];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	adapt_note(r->sc->adapt, peer, why);
}

/*
 * Why a peer's record gives nothing to dial, in words: a node behind a NAT
 * has only what its peers see of it, where no listener waits.
 */
static void
why_undialable(struct routing *r, const char *peer,
    const struct routing_topo *rec)
{
	char		 seen[3 * (NODE_ADDR_MAX + 12)];
	size_t		 i, off = 0;
	int		 w;

	seen[0] = '\0';
	for (i = 0; i < rec->ncands; i++) {
		if (node_cand_dialable(rec->cands[i].kind))
			continue;
		w = snprintf(seen + off, sizeof(seen) - off, "%s%s %s",
		    off ? ", " : "", node_cand_name(rec->cands[i].kind),
		    rec->cands[i].addr);
		if (w < 0 || (size_t)w >= sizeof(seen) - off)
			break;
		off += (size_t)w;
	}
	if (off > 0) {
		log_warnx("adapt: node %s gives no address to dial: it is "
		    "seen behind a NAT (%s), with no listener there; the "
		    "traffic stays on the relay", peer, seen);
		note(r, peer, "no address to dial: seen behind a NAT (%s), "
		    "with no listener there", seen);
	} else {
		log_warnx("adapt: node %s gives no address to dial", peer);
		note(r, peer, "no address to dial");
	}
}

/* The entry of addr (made, in the place of the oldest, if need be). */
static struct shortcut_target *
target(struct shortcut *sc, const char *addr)
{
	struct shortcut_target *t, *old = NULL;
	size_t		 i;

	for (i = 0; i < SHORTCUT_TARGETS; i++) {
		t = &sc->targets[i];
		if (strcmp(t->addr, addr) == 0)
			return t;
		if (old == NULL || t->addr[0] == '\0' ||
		    (old->addr[0] != '\0' &&
		    t->at[(t->next + SHORTCUT_TARGET_DIALS - 1) %
		    SHORTCUT_TARGET_DIALS] < old->at[(old->next +
		    SHORTCUT_TARGET_DIALS - 1) % SHORTCUT_TARGET_DIALS]))
			old = t;
	}
	memset(old, 0, sizeof(*old));
	snprintf(old->addr, sizeof(old->addr), "%s", addr);
	return old;
}

/* 1 if a connection to addr may go now (and it is counted), else 0. */
static int
target_take(struct routing *r, const char *addr)
{
	struct shortcut_target *t = target(r->sc, addr);
	uint64_t	 now = routing_now(r);

	if (t->at[t->next] != 0 && now - t->at[t->next] < SHORTCUT_TARGET_MS)
		return 0;
	t->at[t->next] = now != 0 ? now : 1;
	t->next = (t->next + 1) % SHORTCUT_TARGET_DIALS;
	return 1;
}

static void
target_bounded(struct routing *r, const char *peer, const char *addr)
{
	r->sc->bounded++;
	if (routing_may_log(r, 12))
		log_warnx("adapt: not connecting to %s for node %s: %d "
		    "connections went there within %d s (whatever node "
		    "names it)", addr, peer, SHORTCUT_TARGET_DIALS,
		    SHORTCUT_TARGET_MS / 1000);
	note(r, peer, "not dialled: %d connections went to %s within %d s",
	    SHORTCUT_TARGET_DIALS, addr, SHORTCUT_TARGET_MS / 1000);
}

static void
dial(struct routing *r, const char *peer, const struct routing_topo *rec)
{
	const struct adapt_peer *p = adapt_find(r->sc->adapt, peer);
	struct stmt_error perr;
	struct stmt	 st;
	char		 line[STMT_NAME_MAX + NODE_ADDR_MAX + 32], err[256];
	const char	*addrs[NODE_ADDRS_MAX], *hole = punchable(r, rec);
	const char	*kinds[NODE_ADDRS_MAX];
	char		 cand[ADAPT_CAND_MAX];
	size_t		 i, n = 0;
	int		 tls = r->env.tls(r->env.arg), ok, punch;

	/*
	 * Its candidates with a listener there, in the order it gave them
	 * (advertise, its interfaces, where peers dialled it); a node of an
	 * older version has only its addresses.  Behind NATs both, the hole
	 * in the peer's comes first.
	 */
	if (hole != NULL) {
		kinds[n] = node_cand_name(NODE_CAND_SEEN_UDP);
		addrs[n++] = hole;
	}
	for (i = 0; i < rec->ncands && n < NODE_ADDRS_MAX; i++)
		if (node_cand_dialable(rec->cands[i].kind) &&
		    dialable(rec->cands[i].addr)) {
			kinds[n] = node_cand_name(rec->cands[i].kind);
			addrs[n++] = rec->cands[i].addr;
		}
	for (i = 0; n == 0 && i < rec->naddrs; i++)
		if (dialable(rec->addrs[i])) {
			kinds[n] = "address";
			addrs[n++] = rec->addrs[i];
		}
	if (n == 0 || p == NULL) {
		why_undialable(r, peer, rec);
		return;
	}
	/* The candidate of this attempt, else the next one not bounded. */
	for (i = 0; i < n; i++)
		if (target_take(r, addrs[(p->addr + i) % n]))
			break;
	if (i == n) {
		target_bounded(r, peer, addrs[p->addr % n]);
		return;
	}
	if (i > 0) {
		addrs[p->addr % n] = addrs[(p->addr + i) % n];
		kinds[p->addr % n] = kinds[(p->addr + i) % n];
	}
	/* TLS with the usual checks unless this node runs without it. */
	snprintf(line, sizeof(line), "link %s %s%s%s", peer,
	    addrs[p->addr % n], tls ? " tls" : "", r->env.dgram != NULL &&
	    r->env.dgram(r->env.arg, peer) ? " transport auto" : "");
	err[0] = '\0';
	memset(&perr, 0, sizeof(perr));
	ok = stmt_parse(line, &st, &perr) == 1;
	punch = hole != NULL && addrs[p->addr % n] == hole;
	if (punch)
		st.from_port = own_port(r);
	snprintf(cand, sizeof(cand), "%s (%s)", addrs[p->addr % n],
	    kinds[p->addr % n]);
	adapt_dialled(r->sc->adapt, peer, cand);
	if (!ok || r->env.apply(r->env.arg, &st, err, sizeof(err)) == -1) {
		log_warnx("adapt: cannot dial %s (%s): %s", peer, line,
		    perr.msg[0] != '\0' ? perr.msg : err);
		note(r, peer, "cannot dial %s: %s", addrs[p->addr % n],
		    perr.msg[0] != '\0' ? perr.msg : err);
	} else
		log_info("adapt: dialling %s at %s%s (candidate %zu of %zu, "
		    "%s%s%s%s)", peer, addrs[p->addr % n], tls ? " over TLS" :
		    "", p->addr % n + 1, n, kinds[p->addr % n],
		    punch ? ": punching its NAT's binding "
		    "from our listener's port, as it punches ours" : "",
		    !punch && nat_of(rec) != NULL ?
		    "; seen behind a NAT at " : "",
		    !punch && nat_of(rec) != NULL ? nat_of(rec) : "");
}

static void
remove_link(struct routing *r, const char *name)
{
	struct stmt	 st;
	char		 err[128];

	memset(&st, 0, sizeof(st));
	st.kind = STMT_LINK;
	st.op = STMT_OP_DEL;
	snprintf(st.name, sizeof(st.name), "%s", name);
	if (r->env.apply(r->env.arg, &st, err, sizeof(err)) == -1)
		log_warnx("adapt: cannot remove link %s: %s", name, err);
}

static void
act(struct routing *r, const char *peer, enum adapt_action a,
    const struct routing_topo *rec)
{
	struct routing_nbr *n;

	switch (a) {
	case ADAPT_NONE:
		break;
	case ADAPT_DIAL:
		if (rec != NULL)
			dial(r, peer, rec);
		break;
	case ADAPT_DRAIN:
		routing_flood_soon(r, 0);
		routing_path_soon(r);
		break;
	case ADAPT_CLOSE:
		if (r->env.configured(r->env.arg, peer))
			remove_link(r, peer);
		routing_flood_soon(r, 0);
		routing_path_soon(r);
		break;
	case ADAPT_REFUSE:
		/* Only the peer's shortcut: what it dialled by hand stays. */
		if ((n = nbr_named(r, peer)) != NULL && !n->configured &&
		    n->shortcut)
			remove_link(r, peer);
		break;
	}
}

/*
 * A dial of ours in progress, or a shortcut of ours whose link is not up:
 * how it stands, in words, kept in the pair's entry, which turns it into
 * the failure show adapt gives if the dial times out or the link is lost.
 * A TCP dial through a NAT that drops it hears nothing (its SYNs are
 * counted); one to a host without a listener there is refused.
 */
static void
dial_note(struct routing *r, const char *peer, enum adapt_link link)
{
	const struct adapt_peer *p = adapt_find(r->sc->adapt, peer);
	struct routing_dial d;
	char		 addr[ADAPT_CAND_MAX];
	const char	*sp;

	if (p == NULL || r->env.dial == NULL || p->cand[0] == '\0' ||
	    link == ADAPT_LINK_OURS_UP || !(p->state == ADAPT_DIALING ||
	    p->state == ADAPT_UP || p->state == ADAPT_BELOW))
		return;
	/* The candidate's address, without its kind. */
	snprintf(addr, sizeof(addr), "%s", p->cand);
	if ((sp = strchr(addr, ' ')) != NULL)
		addr[sp - addr] = '\0';
	r->env.dial(r->env.arg, peer, &d);
	if (p->state != ADAPT_DIALING)
		note(r, peer, "the direct link by %s died: %s", addr,
		    d.state == ROUTING_DIAL_FAILED ? d.error : "gone");
	else if (d.state == ROUTING_DIAL_SYN)
		note(r, peer, "no answer from %s after %u tr%s: a symmetric "
		    "NAT or a firewall on one side", addr, d.tries,
		    d.tries == 1 ? "y" : "ies");
	else if (d.state == ROUTING_DIAL_HANDSHAKE)
		note(r, peer, "%s answered, but the handshake did not end "
		    "within %u s", addr, ADAPT_DIAL_MS / 1000);
	else if (d.state == ROUTING_DIAL_FAILED && d.refused)
		note(r, peer, "dial to %s refused", addr);
	else if (d.state == ROUTING_DIAL_FAILED)
		note(r, peer, "dial to %s failed: %s", addr, d.error);
}

/*
 * The peer dials (its name sorts first) and both are behind NATs: while
 * the pair is above the threshold, keep a connection toward the peer's
 * binding going from our listener's port, so that our NAT lets the
 * peer's dial in and the two meet (at most one at a time, env's bound).
 */
static void
punch_back(struct routing *r, const char *peer,
    const struct routing_topo *rec)
{
	const struct adapt_peer *p = adapt_find(r->sc->adapt, peer);
	const char	*hole;

	if (p == NULL || p->state != ADAPT_ABOVE || strcmp(peer, r->node) >= 0 ||
	    r->env.punch == NULL || !adapt_conf(r->sc->adapt)->shortcuts ||
	    (hole = punchable(r, rec)) == NULL)
		return;
	r->env.punch(r->env.arg, peer, hole, own_port(r));
}

void
shortcut_round(struct routing *r)
{
	struct adapt	*ad = r->sc->adapt;
	const struct nodedb_entry *e;
	const struct routing_report *rp;
	const struct adapt_peer *p;
	struct node_dst	 out[NODE_ROWS_MAX];
	enum adapt_link	 link;
	uint64_t	 now = routing_now(r), rate;
	size_t		 i, k, n;
	char		 peer[NODE_NAME_MAX + 1];
	int		 above;

	if (ad == NULL)
		return;
	n = traffic_nodes(r->tm, out, NODE_ROWS_MAX);
	for (i = 0; i < nodedb_count(r->db); i++) {
		e = nodedb_at(r->db, i);
		if (e->self || routing_topo(e) == NULL)
			continue;
		rate = 0;
		for (k = 0; k < n; k++)
			if (strcmp(out[k].name, e->name) == 0)
				rate += out[k].r.rate1;
		/* What the peer's guests send to ours: its last report. */
		if ((rp = routing_traffic_report(r, e->name)) != NULL)
			for (k = 0; k < rp->ndsts; k++)
				if (strcmp(rp->dsts[k].name, r->node) == 0)
					rate += rp->dsts[k].r.rate1;
		snprintf(peer, sizeof(peer), "%s", e->name);
		link = classify(r, peer);
		dial_note(r, peer, link);
		p = adapt_find(ad, peer);
		above = p != NULL && p->state == ADAPT_ABOVE;
		/* act() may remove links, never records: e stays. */
		act(r, peer, adapt_observe(ad, peer, rate, link, now),
		    routing_topo(e));
		/* Over the threshold here: the peer hears it now. */
		if (!above && (p = adapt_find(ad, peer)) != NULL &&
		    p->state == ADAPT_ABOVE)
			routing_traffic_tell(r, peer);
		punch_back(r, peer, routing_topo(e));
	}
	/* Ours to nodes whose records are gone: no traffic to keep them. */
	for (i = 0; i < adapt_count(ad); i++) {
		p = adapt_at(ad, i);
		if (!ours(p->state) || nodedb_get(r->db, p->name,
		    NODE_KIND_TOPO, 0) != NULL)
			continue;
		snprintf(peer, sizeof(peer), "%s", p->name);
		act(r, peer, adapt_observe(ad, peer, 0, classify(r, peer),
		    now), NULL);
	}
	adapt_round_end(ad);
}

int
shortcut_made(const struct routing *r, const char *name, int configured)
{
	const struct adapt_peer *p;

	if (r == NULL || r->sc->adapt == NULL || !configured)
		return 0;
	p = adapt_find(r->sc->adapt, name);
	return p != NULL && ours(p->state);
}

const char *
shortcut_origin(const struct routing *r, const char *name, int configured,
    char *trigger, size_t len, const char **reason)
{
	const struct adapt_peer *p;

	snprintf(trigger, len, "-");
	*reason = "-";
	if (r == NULL || r->sc->adapt == NULL ||
	    (p = adapt_find(r->sc->adapt, name)) == NULL ||
	    !(shortcut_made(r, name, configured) ||
	    (p->state == ADAPT_PEER && !configured)))
		return "-";
	adapt_rate_format(p->trigger, trigger, len);
	*reason = p->state == ADAPT_PEER ? "dialled by the peer" : p->reason;
	return "auto";
}

void
shortcut_show(struct routing *r, struct evbuffer *out)
{
	struct adapt	*ad = r->sc->adapt;
	const struct adapt_peer *p;
	uint64_t	 now = routing_now(r);
	char		 a[32], b[32];
	size_t		 i;

	if (ad == NULL)
		return;
	evbuffer_add_printf(out, "%%columns peer\tstate\trate\ttrigger\t"
	    "since_s\tattempts\tfailures\tretry_s\tnext_backoff_s\treason\t"
	    "candidate\tfailure\n");
	for (i = 0; i < adapt_count(ad); i++) {
		p = adapt_at(ad, i);
		evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%llu\t%u\t%u\t%llu\t"
		    "%llu\t%s\t%s\t%s\n", p->name, adapt_state_name(p->state),
		    adapt_rate_format(p->rate, a, sizeof(a)),
		    adapt_rate_format(p->trigger, b, sizeof(b)),
		    (unsigned long long)((now - p->since_ms) / 1000),
		    p->attempts, p->failures,
		    (unsigned long long)(p->state == ADAPT_BACKOFF &&
		    p->retry_ms > now ? (p->retry_ms - now + 999) / 1000 : 0),
		    (unsigned long long)(p->backoff_ms / 1000), p->reason,
		    p->cand[0] != '\0' ? p->cand : "-",
		    p->failure[0] != '\0' ? p->failure : "-");
	}
}

/* The shortcut policy's counters (adapt.h), named once, and its gauge. */
#define AS(row, field, help) METRIC_STAT(row, struct adapt_stats, field, help)
static const struct metric_stat shortcut_counters[] = {
	AS("adapt_dials", dials, "Shortcut links dialled."),
	AS("adapt_ups", ups, "Shortcut links that came up."),
	AS("adapt_dial_failures", failures, "Shortcut dials that failed or "
	    "timed out."),
	AS("adapt_deaths", deaths, "Shortcut links lost after coming up."),
	AS("adapt_drains", drains, "Shortcuts drained: traffic fell under "
	    "the threshold."),
	AS("adapt_closes", closes, "Shortcut links closed after draining."),
	AS("adapt_max_refused", max_refused, "Shortcuts not made: at the "
	    "maximum."),
};
#undef AS

struct shortcut_now {
	uint64_t	adapt_shortcuts;
};

/* The shortcuts' own counters. */
static const struct metric_stat shortcut_own[] = {
	METRIC_STAT("adapt_dials_bounded", struct shortcut, bounded,
	    "Shortcut dials not made: the address's bound of dials a "
	    "minute."),
};

static const struct metric_stat shortcut_gauges[] = {
	METRIC_STAT("adapt_shortcuts", struct shortcut_now, adapt_shortcuts,
	    "Shortcuts up or being made, by this node or dialled by the "
	    "peer."),
};

/* The counters and gauges as they are now, for both renderings. */
static void
shortcut_snapshot(struct routing *r, struct adapt_stats *as,
    struct shortcut_now *sn)
{
	adapt_stats(r->sc->adapt, as);
	sn->adapt_shortcuts = adapt_active(r->sc->adapt);
}

void
shortcut_show_stats(struct routing *r, struct evbuffer *out)
{
	struct adapt_stats as;
	struct shortcut_now sn;

	shortcut_snapshot(r, &as, &sn);
	metric_stat_rows(out, shortcut_gauges, 1, &sn);
	metric_stat_rows(out, shortcut_counters, sizeof(shortcut_counters) /
	    sizeof(shortcut_counters[0]), &as);
	metric_stat_rows(out, shortcut_own, 1, r->sc);
}

void
shortcut_metrics(struct routing *r, const struct metric_out *mo)
{
	struct adapt_stats as;
	struct shortcut_now sn;

	if (r->sc->adapt == NULL)
		return;
	shortcut_snapshot(r, &as, &sn);
	metric_stat_gauges(mo, shortcut_gauges, 1, &sn);
	metric_stat_families(mo, shortcut_counters, sizeof(shortcut_counters) /
	    sizeof(shortcut_counters[0]), &as);
	metric_stat_families(mo, shortcut_own, 1, r->sc);
}

void
shortcut_config(struct routing *r, void (*cb)(const struct stmt *, void *),
    void *arg)
{
	if (r->sc->set)
		cb(&r->sc->conf, arg);
}
