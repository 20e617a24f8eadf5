#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "clock.h"
#include "conn.h"
#include "link.h"
#include "link_impl.h"
#include "log.h"
#include "gro.h"
#include "metric.h"
#include "udp.h"
#include "wire.h"

static void	link_set_state(struct link *, enum link_state, const char *why);
static void	link_schedule(struct link *);
static void	link_dial(struct link *);
static void	link_conn_lost(struct link *, struct conn *, const char *why);
static void	link_drain(struct link *);
static void	link_free(struct link *);
static void	link_live_cb(evutil_socket_t, short, void *);
static void	link_live_start(struct link *, struct conn *);
static void	link_live_reconfigure(struct link *);
static void	links_live_repace(struct links *);
static void	link_live_params(const struct link *, uint32_t *, uint32_t *);
static void	link_conn_probe(void *, struct conn *,
		    const struct wire_probe *);
static void	link_keep(struct link *);
static void	link_dgram_start(struct link *);
static void	link_dgram_stop(struct link *, int withdraw);
static void	link_congestion_set(struct link *, struct conn *,
		    const char *cc);
static const struct port_ops link_port_ops;

/* Our hello, from the daemon: also where this node's name comes from. */
static void
links_hello(struct links *lks, struct wire_hello *h)
{
	memset(h, 0, sizeof(*h));
	lks->hooks.hello(lks->hooks.arg, h);
}

static const char *
link_state_name(enum link_state s)
{
	switch (s) {
	case LINK_IDLE:
		return "down";
	case LINK_CONNECTING:
	case LINK_HANDSHAKE:
		return "connecting";
	case LINK_UP:
		return "up";
	}
	return "?";
}

static const char *
link_state_debug(enum link_state s)
{
	static const char *const names[] = { "IDLE", "CONNECTING", "HANDSHAKE",
	    "UP" };

	return names[s];
}

struct link *
link_find(struct links *lks, const char *name)
{
	struct link	*l;

	TAILQ_FOREACH(l, &lks->list, entry)
		if (strcmp(l->name, name) == 0)
			return l;
	return NULL;
}

const char *
link_peer(const struct link *l)
{
	return l->peer[0] != '\0' ? l->peer : l->name;
}

/* The link a connection from node belongs to. */
static struct link *
link_find_peer(struct links *lks, const char *node)
{
	struct link	*l;

	TAILQ_FOREACH(l, &lks->list, entry)
		if (l->configured && strcmp(link_peer(l), node) == 0)
			return l;
	return link_find(lks, node);
}

/* The next attempt; for a down incoming link, the end of its keeping. */
static void
link_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct link	*l = arg;

	if (!l->configured) {
		log_debug("link %s: forgotten, down for %llu s", l->name,
		    (unsigned long long)(clock_now_ms() - l->state_since) /
		    1000);
		link_free(l);
		return;
	}
	link_dial(l);
}

static void
link_pace_cb(evutil_socket_t fd, short ev, void *arg)
{
	link_drain(arg);
}

void
link_options(struct links *lks, const char *name, struct sched_opts *o)
{
	struct sched_optent	*e;

	if ((e = sched_optlist_find(&lks->opts, name)) != NULL)
		*o = e->opts;
	else
		sched_opts_default(o);
}

/*
 * A new queue size: a new queue, with the old one's frames thrown away
 * (counted as flushed) and its counters kept.  The old queue stays if
 * there is no memory for the new one.
 */
static int
link_queue_set(struct link *l, size_t limit)
{
	size_t		 lost;

	if (limit == l->queue_max)
		return 0;
	if (sched_resize(&l->sched, limit, WIRE_FRAME_MAX, arc4random(),
	    &lost) == -1)
		return -1;
	l->sched.c.flushed += lost;
	l->queue_max = limit;
	return 0;
}

static struct link *
link_new(struct links *lks, const char *name)
{
	struct link		*l;
	struct sched_opts	 o;
	char			 err[128];

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->lks = lks;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->queue_max = LINK_QUEUE_DEFAULT;
	l->backoff_ms = LINK_BACKOFF_MIN;
	l->state_since = l->rate_at = clock_now_ms();
	link_options(lks, name, &o);
	if (sched_init(&l->sched, &o, l->queue_max, WIRE_HDR_LEN +
	    WIRE_FRAME_PREFIX, WIRE_FRAME_MAX, clock_now_us(),
	    arc4random()) == -1) {
		free(l);
		return NULL;
	}
	if (sw_port_add(lks->sw, &l->port, &link_port_ops, l, name, err,
	    sizeof(err)) == -1 ||
	    (l->ev_retry = evtimer_new(lks->base, link_retry_cb, l)) == NULL ||
	    (l->ev_pace = evtimer_new(lks->base, link_pace_cb, l)) == NULL ||
	    (l->ev_live = event_new(lks->base, -1, EV_PERSIST, link_live_cb,
	    l)) == NULL) {
		if (l->ev_retry != NULL)
			event_free(l->ev_retry);
		if (l->ev_pace != NULL)
			event_free(l->ev_pace);
		sw_port_del(lks->sw, &l->port);
		sched_free(&l->sched);
		free(l);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&lks->list, l, entry);
	return l;
}

/* Remembers the options a statement gives for its link name. */
static int
link_remember_options(struct links *lks, const struct stmt *st,
    struct sched_opts *o, char *err, size_t errlen)
{
	char	 why[512];

	if ((st->lopts & STMT_LOPT_CONGESTION) &&
	    link_congestion_check(st->congestion, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "link %s: %s", st->name, why);
		return -1;
	}
	link_options(lks, st->name, o);
	sched_opts_from_stmt(o, st);
	if (sched_optlist_set(&lks->opts, st->name, o) == NULL) {
		snprintf(err, errlen, "link %s: out of memory", st->name);
		return -1;
	}
	return 0;
}

/* A link takes options st gave (o, merged): its queue, and its connection. */
static void
link_take_options(struct link *l, const struct stmt *st,
    const struct sched_opts *o)
{
	sched_set_opts(&l->sched, o, clock_now_us());
	if ((st->lopts & STMT_LOPT_CONGESTION) && l->conn != NULL)
		link_congestion_set(l, l->conn, o->congestion);
	if (st->lopts & STMT_LOPT_LIVENESS)
		link_live_reconfigure(l);
	if (st->lopts & STMT_LOPT_TRANSPORT) {
		if (o->transport == STMT_TRANSPORT_TCP)
			link_dgram_stop(l, 1);
		else if (l->dpath != NULL)
			udp_path_set_transport(l->dpath, o->transport);
		else
			link_dgram_start(l);
	}
}

int
link_set_options(struct links *lks, const struct stmt *st, char *err,
    size_t errlen)
{
	struct link		*l;
	struct sched_opts	 o;

	/* The queue is the link's own, not an option kept for its name. */
	l = link_find(lks, st->name);
	if (st->queue != 0 && l == NULL) {
		snprintf(err, errlen, "set-link %s queue: no such link",
		    st->name);
		return -1;
	}
	if (st->queue != 0 && link_queue_set(l, st->queue) == -1) {
		snprintf(err, errlen, "set-link %s queue: out of memory",
		    st->name);
		return -1;
	}
	if (st->lopts == 0) {
		link_drain(l);
		return 0;
	}
	if (link_remember_options(lks, st, &o, err, errlen) == -1)
		return -1;
	if (l != NULL) {
		evtimer_del(l->ev_pace);
		link_take_options(l, st, &o);
		link_drain(l);
	}
	return 0;
}

int
link_add(struct links *lks, const struct stmt *st, char *err, size_t errlen)
{
	struct link		*l;
	struct sched_opts	 o;
	struct wire_hello	 ours;

	links_hello(lks, &ours);
	if (strcmp(st->name, ours.node) == 0) {
		snprintf(err, errlen, "link %s: that is this node's own name",
		    st->name);
		return -1;
	}
	if ((l = link_find(lks, st->name)) != NULL) {
		if (l->configured) {
			snprintf(err, errlen, "link %s already exists", st->name);
			return -1;
		}
		/* The peer dialled us first; from now on we dial too. */
		if (link_remember_options(lks, st, &o, err, errlen) == -1)
			return -1;
		link_take_options(l, st, &o);
	} else if (link_remember_options(lks, st, &o, err, errlen) == -1)
		return -1;
	else if ((l = link_new(lks, st->name)) == NULL) {
		snprintf(err, errlen, "link %s: out of memory", st->name);
		return -1;
	}
	evtimer_del(l->ev_retry);	/* a down incoming link's keeping */
	l->configured = 1;
	l->addr = st->addr;
	l->tls = st->tls;
	l->from_port = st->from_port;
	snprintf(l->peer, sizeof(l->peer), "%s", st->peer);
	if (link_queue_set(l, st->queue != 0 ? st->queue :
	    LINK_QUEUE_DEFAULT) == -1)
		log_warnx("link %s: no memory for a queue of %u bytes: it "
		    "keeps %zu", l->name, st->queue, l->queue_max);
	if (l->state == LINK_IDLE)
		link_dial(l);
	return 0;
}

int
link_del(struct links *lks, const char *name, char *err, size_t errlen)
{
	struct link	*l;

	if ((l = link_find(lks, name)) == NULL) {
		snprintf(err, errlen, "no link %s", name);
		return -1;
	}
	log_info("link %s: removed", l->name);
	link_free(l);
	sched_optlist_del(&lks->opts, name);
	return 0;
}

static void
link_free(struct link *l)
{
	struct links	*lks = l->lks;
	struct conn	*c;
	int		 was_up = l->state == LINK_UP;

	link_dgram_stop(l, 0);
	if ((c = l->conn) != NULL) {
		l->conn = NULL;
		c->link = NULL;
		conn_close(c, "link removed", 0);
	}
	if ((c = l->dialing) != NULL) {
		l->dialing = NULL;
		c->link = NULL;
		conn_free(c);
	}
	sw_port_del(lks->sw, &l->port);
	event_free(l->ev_retry);
	event_free(l->ev_pace);
	event_free(l->ev_live);
	sched_free(&l->sched);
	TAILQ_REMOVE(&lks->list, l, entry);
	free(l);
	if (was_up) {
		lks->hooks.down(lks->hooks.arg, NULL);
		links_live_repace(lks);
	}
}

/*
 * The number of links up changed: the pace of the links we dialled may
 * (link_live_params); those whose pace stays are left as they are.
 */
static void
links_live_repace(struct links *lks)
{
	struct link	*l;
	uint32_t	 interval, mult;

	TAILQ_FOREACH(l, &lks->list, entry) {
		if (l->state != LINK_UP || !l->configured)
			continue;
		link_live_params(l, &interval, &mult);
		if (interval != l->live.interval || mult != l->live.mult)
			link_live_reconfigure(l);
	}
}

static void
link_set_state(struct link *l, enum link_state state, const char *why)
{
	int	 was_up = l->state == LINK_UP;

	if (l->state == state)
		return;
	if (state == LINK_UP || l->state == LINK_UP)
		log_info("link %s: %s -> %s%s%s", l->name,
		    link_state_debug(l->state), link_state_debug(state),
		    why ? ": " : "", why ? why : "");
	else
		log_debug("link %s: %s -> %s%s%s", l->name,
		    link_state_debug(l->state), link_state_debug(state),
		    why ? ": " : "", why ? why : "");
	if (l->state == LINK_UP) {
		/* What waited for the lost connection is stale now. */
		evtimer_del(l->ev_pace);
		event_del(l->ev_live);
		sched_flush(&l->sched);
	}
	l->state = state;
	l->state_since = clock_now_ms();
	if (state != LINK_UP && why != NULL) {
		snprintf(l->last_error, sizeof(l->last_error), "%s", why);
		l->last_error_at = l->state_since;
	}
	if (state == LINK_UP) {
		sw_port_up(&l->port);
		l->lks->hooks.up(l->lks->hooks.arg, l);
	} else
		sw_port_down(&l->port);
	if (state != LINK_UP && was_up)
		l->lks->hooks.down(l->lks->hooks.arg, l);
	if ((state == LINK_UP) != was_up)
		links_live_repace(l->lks);
}

/* Capped exponential backoff with jitter, so that restarted peers spread. */
static void
link_schedule(struct link *l)
{
	struct timeval	 tv;
	unsigned int	 ms;

	ms = l->backoff_ms * 3 / 4 + arc4random_uniform(l->backoff_ms / 2 + 1);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(l->ev_retry, &tv);
	l->retry_at = clock_now_ms() + ms;
	log_debug("link %s: next attempt in %u ms", l->name, ms);
	l->backoff_ms *= 2;
	if (l->backoff_ms > LINK_BACKOFF_MAX)
		l->backoff_ms = LINK_BACKOFF_MAX;
}

/* A TCP socket's congestion control into buf (STMT_CONGESTION_MAX + 1). */
static int
congestion_get(evutil_socket_t fd, char *buf)
{
	socklen_t	 len = STMT_CONGESTION_MAX + 1;

	memset(buf, 0, len);
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, buf, &len) == -1)
		return -1;
	buf[STMT_CONGESTION_MAX] = '\0';
	return 0;
}

/* What a new TCP socket gets here: the system's default.  0 or -1. */
static int
congestion_default(char *buf)
{
	int	 fd, r;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	r = congestion_get(fd, buf);
	close(fd);
	return r;
}

/* Sets a connection's congestion control; "" is the system's.  0 or -1. */
static int
congestion_set(evutil_socket_t fd, const char *cc)
{
	char	 def[STMT_CONGESTION_MAX + 1];

	if (cc[0] == '\0') {
		if (congestion_default(def) == -1)
			return -1;
		cc = def;
	}
	return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc,
	    (socklen_t)strlen(cc));
}

int
link_congestion_check(const char *cc, char *err, size_t errlen)
{
	char	 have[256];
	FILE	*f;
	int	 fd, r, saved;

	if (cc[0] == '\0')
		return 0;
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1) {
		snprintf(err, errlen, "congestion %s: socket: %s", cc,
		    strerror(errno));
		return -1;
	}
	r = congestion_set(fd, cc);
	saved = errno;
	close(fd);
	if (r == 0)
		return 0;
	have[0] = '\0';
	if ((f = fopen(saved == EPERM ?
	    "/proc/sys/net/ipv4/tcp_allowed_congestion_control" :
	    "/proc/sys/net/ipv4/tcp_available_congestion_control",
	    "r")) != NULL) {
		if (fgets(have, sizeof(have), f) == NULL)
			have[0] = '\0';
		have[strcspn(have, "\n")] = '\0';
		fclose(f);
	}
	if (saved == ENOENT)
		snprintf(err, errlen, "congestion %s: the kernel has no TCP "
		    "congestion control of that name (it has: %s)", cc,
		    have[0] != '\0' ? have : "?");
	else if (saved == EPERM)
		snprintf(err, errlen, "congestion %s: not allowed without "
		    "CAP_NET_ADMIN (allowed: %s)", cc,
		    have[0] != '\0' ? have : "?");
	else
		snprintf(err, errlen, "congestion %s: %s", cc,
		    strerror(saved));
	errno = saved;
	return -1;
}

static const char *
link_congestion(const struct link *l, char *buf)
{
	evutil_socket_t	 fd;

	if (l->conn == NULL || (fd = conn_fd(l->conn)) < 0 ||
	    congestion_get(fd, buf) == -1)
		return "-";
	return buf;
}

/* The link's congestion control for its connection c, now up. */
static void
link_congestion_set(struct link *l, struct conn *c, const char *cc)
{
	evutil_socket_t	 fd;

	if ((fd = conn_fd(c)) < 0)
		return;
	if (congestion_set(fd, cc) == -1)
		log_warn("link %s: TCP congestion control %s", l->name,
		    cc[0] != '\0' ? cc : "default");
}

static void
link_dial(struct link *l)
{
	struct links	*lks = l->lks;
	struct conn	*c;
	char		 peer[STMT_HOST_MAX + 10];

	if (!l->configured || l->dialing != NULL || l->state == LINK_UP)
		return;
	l->retry_at = 0;
	stmt_hostport_format(&l->addr, peer, sizeof(peer));
	if ((c = conn_dial(&lks->conns, l, l->name, link_peer(l), peer,
	    l->tls)) == NULL) {
		log_warn("link %s: connection", l->name);
		link_schedule(l);
		return;
	}
	l->dialing = c;
	c->punched = l->from_port != 0;
	if (lks->hooks.shortcut != NULL &&
	    lks->hooks.shortcut(lks->hooks.arg, l))
		c->hello_extra = WIRE_CAP_SHORTCUT;
	link_set_state(l, LINK_CONNECTING, NULL);
	log_debug("link %s: connecting to %s%s", l->name, c->peer,
	    l->tls ? " (TLS)" : "");
	if ((l->from_port != 0 ? conn_connect_from(c, l->addr.host,
	    l->addr.port, l->from_port) : conn_connect(c, l->addr.host,
	    l->addr.port)) == -1) {
		l->dialing = NULL;
		c->link = NULL;
		conn_free(c);
		log_warnx("link %s: cannot connect to %s", l->name, peer);
		link_set_state(l, LINK_IDLE, "connect failed");
		link_schedule(l);
	}
}

/*
 * Which of two live connections of one link both sides keep: see link.h.
 * Returns 1 if the new one wins.
 */
static int
conn_new_wins(struct links *lks, const struct conn *old, const struct conn *new)
{
	struct wire_hello ours;
	const char	*old_by, *new_by;

	links_hello(lks, &ours);
	old_by = old->outgoing ? ours.node : old->hello.node;
	new_by = new->outgoing ? ours.node : new->hello.node;
	if (strcmp(old_by, new_by) == 0)
		return 1;
	return strcmp(new_by, old_by) < 0;
}

/*
 * A second incoming connection in the name of a node whose connection is
 * still alive (heard within one and a half of its probe intervals, or a
 * second) is a clone, a copied VM with the node's name and certificate:
 * it is refused, the older kept.  Taking the newcomer, as for a node that
 * came back, would have the two replace each other at every reconnect.
 * A node that really came back has a silent or closed old connection: it
 * gets in once that is so, at its next try.
 */
static int
link_clone(struct link *l, const struct conn *c)
{
	const struct liveness	*lv = &l->live;
	uint64_t		 now = clock_now_ms(), recent;

	if (c->outgoing || l->conn->outgoing || l->state != LINK_UP ||
	    !liveness_alive(lv))
		return 0;
	recent = (lv->interval > lv->peer_interval ? lv->interval :
	    lv->peer_interval) * 3 / 2;
	if (recent < 1000)
		recent = 1000;
	if (now - lv->heard >= recent)
		return 0;
	if (l->clone_logged == 0 || now - l->clone_logged >= 10000) {
		l->clone_logged = now;
		log_warnx("link %s: refused %s: node %s is connected already "
		    "from %s and alive; two machines with its name and "
		    "certificate (a cloned VM?): give the copy a node name and "
		    "certificate of its own (logged every 10 s at most; "
		    "show refused)", l->name, c->peer, c->hello.node,
		    l->conn->peer);
	}
	return 1;
}

/* c's hello passed: it joins its link.  Returns -1 if c was closed instead. */
static int
link_conn_join(void *arg, struct conn *c)
{
	struct links	*lks = arg;
	struct link	*l = c->link;

	if (l == NULL) {
		l = link_find_peer(lks, c->hello.node);
		/* Configured for TLS: a plain connection cannot stand in. */
		if (l != NULL && l->tls && !conn_tls(c)) {
			log_warnx("link %s: refused: a plain connection from "
			    "%s, but the link is configured with tls", l->name,
			    c->peer);
			lks->conns.stats.refused++;
			link_refusal_add(lks, c->peer, c->hello.node, "a plain "
			    "connection, but the link is configured with tls");
			conn_close(c, "plain connection for a TLS link", 0);
			return -1;
		}
		conn_unpend(c);
		if (l == NULL &&
		    (l = link_new(lks, c->hello.node)) == NULL) {
			log_warnx("link %s: out of memory", c->hello.node);
			conn_free(c);
			return -1;
		}
		c->link = l;
	} else if (l->dialing == c)
		l->dialing = NULL;

	if (l->conn != NULL && link_clone(l, c)) {
		lks->conns.stats.clones++;
		link_refusal_add(lks, c->peer, c->hello.node, "node connected "
		    "already and alive: a clone (the same name and certificate "
		    "on another machine)?");
		c->link = NULL;
		conn_close(c, "a clone of a connected node", 0);
		return -1;
	}
	if (l->conn != NULL) {
		if (!conn_new_wins(lks, l->conn, c)) {
			log_info("link %s: keeping the existing connection, "
			    "closing the one from %s", l->name, c->peer);
			c->link = NULL;
			conn_close(c, "duplicate connection", 0);
			return -1;
		}
		log_info("link %s: a newer connection from %s replaces the "
		    "old one", l->name, c->peer);
		link_dgram_stop(l, 0);
		l->conn->link = NULL;
		conn_close(l->conn, "replaced", 0);
		l->conn = NULL;
	}
	if (l->dialing != NULL) {
		/* We were dialling while the peer dialled us: stop. */
		l->dialing->link = NULL;
		conn_free(l->dialing);
		l->dialing = NULL;
	}
	evtimer_del(l->ev_retry);
	l->retry_at = 0;
	l->conn = c;
	return 0;
}

/*
 * A shortcut's transport (link.h): what a `link` or `set-link` statement
 * said for its name, else auto if a link this node dials by its own
 * statement asks for datagrams, else tcp.
 */
enum stmt_transport
links_shortcut_transport(struct links *lks, const char *name)
{
	struct sched_optent	*e;
	struct link		*l;

	if ((e = sched_optlist_find(&lks->opts, name)) != NULL)
		return e->opts.transport;
	TAILQ_FOREACH(l, &lks->list, entry)
		if (l->configured && l->sched.opts.transport !=
		    STMT_TRANSPORT_TCP && (lks->hooks.shortcut == NULL ||
		    !lks->hooks.shortcut(lks->hooks.arg, l)))
			return STMT_TRANSPORT_AUTO;
	return STMT_TRANSPORT_TCP;
}

/* c, joined, is up: so is its link. */
static void
link_conn_established(void *arg, struct conn *c)
{
	struct link		*l = c->link;
	struct sched_opts	 o;
	char			 desc[128];

	/* The peer's shortcut: its transport by the same rule as ours. */
	if (!c->outgoing && (c->hello.caps & WIRE_CAP_SHORTCUT) &&
	    !l->configured) {
		o = l->sched.opts;
		o.transport = links_shortcut_transport(l->lks, l->name);
		sched_set_opts(&l->sched, &o, clock_now_us());
	}
	if (l->sched.opts.congestion[0] != '\0')
		link_congestion_set(l, c, l->sched.opts.congestion);
	if (c->io->describe(c, desc, sizeof(desc)) == 0)
		log_info("link %s: %s, certificate of node %s verified",
		    l->name, desc, c->hello.node);
	l->backoff_ms = LINK_BACKOFF_MIN;
	l->c.connects++;
	link_live_start(l, c);
	link_set_state(l, LINK_UP, c->peer);
	link_dgram_start(l);
}

/*
 * A down incoming link stays listed for a while (link.h), making room by
 * forgetting the oldest such link.
 */
static void
link_keep(struct link *l)
{
	struct links	*lks = l->lks;
	struct link	*m, *oldest;
	struct timeval	 tv;
	size_t		 n;

	for (;;) {
		n = 0;
		oldest = NULL;
		TAILQ_FOREACH(m, &lks->list, entry) {
			if (m == l || m->configured || m->state != LINK_IDLE)
				continue;
			n++;
			if (oldest == NULL || m->state_since < oldest->state_since)
				oldest = m;
		}
		if (n < lks->gone_max || oldest == NULL)
			break;
		log_debug("link %s: forgotten, to keep link %s", oldest->name,
		    l->name);
		link_free(oldest);
	}
	if (lks->gone_max == 0) {
		link_free(l);
		return;
	}
	tv.tv_sec = lks->gone_keep_ms / 1000;
	tv.tv_usec = lks->gone_keep_ms % 1000 * 1000;
	evtimer_add(l->ev_retry, &tv);
}

/* The connection c of link l is gone; l goes down and, if configured, redials. */
static void
link_conn_lost(struct link *l, struct conn *c, const char *why)
{
	if (l->dialing == c) {
		l->dialing = NULL;
		if (l->conn == NULL) {
			link_set_state(l, LINK_IDLE, why);
			link_schedule(l);
		}
		return;
	}
	if (l->conn != c)
		return;
	link_dgram_stop(l, 0);
	l->conn = NULL;
	if (l->dialing != NULL)
		return;		/* state stays CONNECTING */
	link_set_state(l, LINK_IDLE, why);
	if (l->configured)
		link_schedule(l);
	else if ((c->hello.caps & WIRE_CAP_SHORTCUT) || l->c.connects == 0)
		link_free(l);	/* a shortcut the peer closed: nothing to say */
	else
		link_keep(l);
}


/* Liveness (liveness.h): the probes, and a dead link out of the routes. */

/* The interval (ms, 0: no probes) and multiplier l goes by. */
static void
link_live_params(const struct link *l, uint32_t *interval, uint32_t *mult)
{
	const struct sched_opts	*o = &l->sched.opts;
	struct link		*o2;
	int			 up = 0;

	*interval = o->live_interval != 0 ? o->live_interval :
	    l->lks->live_interval;
	if (*interval == STMT_LIVENESS_OFF)
		*interval = 0;
	/*
	 * The network-wide pace is for failing over.  The end that dials (a
	 * host, to its proxies) knows whether it has anywhere else to go:
	 * with no other link up it asks for the slow pace, which the peer
	 * follows (liveness.h), so a host's only link to its proxy is probed
	 * slowly both ways, and a host with two proxies fast.  A link that
	 * has carried no frame for LIVENESS_IDLE_MS is slow too (it fails no
	 * guest), and polls when frames come again (liveness.h).  The
	 * listening end always asks for the fast one: its other links go to
	 * other peers, not another way to this one.  A link's own liveness is
	 * kept as set.
	 */
	if (o->live_interval == 0 && *interval != 0 && l->configured &&
	    *interval < LIVENESS_ALONE_INTERVAL) {
		TAILQ_FOREACH(o2, &l->lks->list, entry)
			if ((up += o2->state == LINK_UP) >= 2)
				break;
		if (up < 2 || (l->live_idle && l->lks->live_idle_slow))
			*interval = LIVENESS_ALONE_INTERVAL;
	}
	*mult = o->live_mult != 0 ? o->live_mult : l->lks->live_mult;
	if (*mult == 0)
		*mult = LIVENESS_MULT_DEFAULT;
}

/* How often l's liveness looks at the clock. */
static void
link_live_timer(struct link *l)
{
	struct timeval	 tv;
	uint32_t	 ms = l->live.interval;

	/* A quarter interval: a death is seen within that of its time. */
	ms = ms == 0 ? 100 : ms / 4 < 10 ? 10 : ms / 4 > 250 ? 250 : ms / 4;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = ms % 1000 * 1000;
	event_add(l->ev_live, &tv);
}

static void
link_live_changed(void *arg, const struct liveness *lv,
    enum liveness_state from, const char *why)
{
	struct link	*l = arg;

	if (lv->state == LIVENESS_DOWN && from != LIVENESS_UP)
		log_debug("link %s: liveness %s -> down: %s", l->name,
		    liveness_state_name(from), why);
	if (from == LIVENESS_UP) {
		l->live_lost_at = lv->since;
		snprintf(l->live_why, sizeof(l->live_why), "%s", why);
		l->live_losses++;
		if (l->conn != NULL)
			l->conn->dead = 1;
		log_warnx("link %s: liveness lost: %s; out of the routes "
		    "until it is alive for %u ms", l->name, why, lv->hold);
		sw_port_down(&l->port);
		l->lks->hooks.down(l->lks->hooks.arg, l);
	} else if (lv->state == LIVENESS_UP) {
		log_warnx("link %s: alive for %u ms again, %llu ms after "
		    "its loss: back in the routes", l->name, lv->hold,
		    (unsigned long long)(lv->since - l->live_lost_at));
		if (l->conn != NULL)
			l->conn->dead = 0;
		sw_port_up(&l->port);
		l->lks->hooks.up(l->lks->hooks.arg, l);
	} else if (lv->state != LIVENESS_DOWN)
		log_debug("link %s: liveness %s -> %s: %s", l->name,
		    liveness_state_name(from),
		    liveness_state_name(lv->state), why);
}

/* What l heard and sent since the last look, then the clock; a probe. */
static void link_live_reconfigure(struct link *);

/*
 * l has carried a frame again after an idle time, or none for
 * LIVENESS_IDLE_MS: its pace follows (link_live_params), and a quicker
 * one polls the peer (liveness.h).
 */
static void
link_live_idle(struct link *l, uint64_t now, int idle)
{
	uint32_t	 before = l->live.interval;

	if (idle == l->live_idle || !l->lks->live_idle_slow)
		return;
	l->live_idle = idle;
	link_live_reconfigure(l);
	if (l->dpath != NULL)
		udp_path_idle(l->dpath, idle);
	if (!idle && l->live.interval < before &&
	    (l->conn->hello.caps & WIRE_CAP_DGRAM_LIVE))
		liveness_poll(&l->live, now);
}

static void
link_live_run(struct link *l, uint64_t now)
{
	struct conn		*c = l->conn;
	struct wire_probe	 pr;
	int			 dgram, tcp = 0, missing, now_too;

	if (c == NULL || l->state != LINK_UP)
		return;
	if (c->msgs_in != l->live_msgs || l->c.frames_in != l->live_frames_in)
		liveness_heard(&l->live, now);
	if (l->c.frames_out != l->live_frames_out)
		liveness_sent(&l->live, now);
	if (l->c.frames_out != l->live_frames_out ||
	    l->c.frames_in != l->live_frames_in)
		l->live_frame_at = now;
	link_live_idle(l, now, now - l->live_frame_at >= LIVENESS_IDLE_MS);
	l->live_msgs = c->msgs_in;
	l->live_frames_in = l->c.frames_in;
	l->live_frames_out = l->c.frames_out;
	/*
	 * A probe at once when the peer's go missing here, or when the peer
	 * says ours do (once each time), not at the next one's time: by the
	 * connection, it reaches the peer before its evidence from the data
	 * (frames sent, nothing heard) calls the link dead.
	 */
	missing = (c->hello.caps & WIRE_CAP_DGRAM_LIVE) &&
	    l->live.probing && l->live.interval != 0 &&
	    liveness_missing(&l->live, now);
	/* None of ours at all where we send none (liveness off here). */
	now_too = ((missing && !l->live_missing) || l->live_answer) &&
	    l->live.probing && l->live.interval != 0;
	l->live_missing = missing;
	l->live_answer = 0;
	if (!liveness_tick(&l->live, now) && !now_too)
		return;
	pr.state = (uint8_t)l->live.state;
	pr.mult = (uint8_t)l->live.mult;
	pr.interval = (uint16_t)l->live.interval;
	/*
	 * By a datagram where the link's frames go by datagrams, so that a
	 * lossy path's retransmissions never hold a probe back; by the
	 * connection too while a probe has gone unheard here (the datagrams
	 * may be what is blocked) or the peer's came by it (it misses ours),
	 * so that a path that still carries the connection stays alive
	 * while the frames fall back to it.  Not sent at all (output backed
	 * up): tried again at the next look.
	 */
	if (c->hello.caps & WIRE_CAP_DGRAM_LIVE) {
		if (missing)
			pr.state |= WIRE_PROBE_MISSING;
		if (liveness_polling(&l->live))
			pr.state |= WIRE_PROBE_POLL;
		dgram = l->dpath != NULL &&
		    udp_path_mode(l->dpath) == UDP_MODE_UDP &&
		    udp_path_send_live(l->dpath, &pr) == 0;
	} else
		dgram = 0;
	l->live.data_slack = dgram;
	if (!dgram || (pr.state & WIRE_PROBE_FLAGS) ||
	    now < l->live_tcp_until)
		tcp = conn_send_probe(c, &pr) == 0;
	if (dgram || tcp)
		liveness_probe_sent(&l->live, now);
}

static void
link_live_cb(evutil_socket_t fd, short ev, void *arg)
{
	link_live_run(arg, clock_now_ms());
}

/* c is up for l: its liveness starts, UP. */
static void
link_live_start(struct link *l, struct conn *c)
{
	uint32_t	 interval, mult;

	link_live_params(l, &interval, &mult);
	liveness_init(&l->live, interval, mult,
	    (c->hello.caps & WIRE_CAP_LIVENESS) != 0, clock_now_ms(),
	    link_live_changed, l);
	l->live_msgs = c->msgs_in;
	l->live_frames_in = l->c.frames_in;
	l->live_frames_out = l->c.frames_out;
	l->live_frame_at = clock_now_ms();
	l->live_idle = 0;
	link_live_timer(l);
}

/* New parameters for a link that is up. */
static void
link_live_reconfigure(struct link *l)
{
	uint32_t	 interval, mult;

	if (l->state != LINK_UP)
		return;
	link_live_params(l, &interval, &mult);
	liveness_set(&l->live, interval, mult, clock_now_ms());
	event_del(l->ev_live);
	link_live_timer(l);
}

void
links_set_liveness(struct links *lks, uint32_t interval, uint32_t mult)
{
	struct link	*l;

	lks->live_interval = interval;
	lks->live_mult = mult;
	TAILQ_FOREACH(l, &lks->list, entry)
		link_live_reconfigure(l);
}

void
links_set_idle_slow(struct links *lks, int on)
{
	struct link	*l;

	if (lks->live_idle_slow == on)
		return;
	lks->live_idle_slow = on;
	TAILQ_FOREACH(l, &lks->list, entry) {
		l->live_idle = 0;
		link_live_reconfigure(l);
		if (l->dpath != NULL)
			udp_path_idle(l->dpath, 0);
	}
}

static void
link_live_probe(struct link *l, const struct wire_probe *pr, uint64_t now)
{
	/*
	 * A peer that misses ours: ours go both ways for a detection time,
	 * and if they went by datagrams, so do the frames until the path
	 * proves itself again.
	 */
	/* A poll: our next probe at the next look, now. */
	if ((pr->state & WIRE_PROBE_POLL) && !l->live_answer) {
		l->live_answer = 1;
		event_active(l->ev_live, EV_TIMEOUT, 0);
	}
	if (pr->state & WIRE_PROBE_MISSING) {
		if (now >= l->live_tcp_until) {
			/* Answered at the next look: at most once a time. */
			l->live_answer = 1;
			event_active(l->ev_live, EV_TIMEOUT, 0);
		}
		l->live_tcp_until = now + liveness_detect(&l->live);
		if (l->dpath != NULL &&
		    udp_path_mode(l->dpath) == UDP_MODE_UDP)
			udp_path_doubt(l->dpath);
	}
	/*
	 * A change's probe goes at the next look, not from here: a backlog
	 * of probes arriving at once makes at most one a quarter interval.
	 */
	liveness_probe(&l->live, now,
	    (enum liveness_state)(pr->state & ~WIRE_PROBE_FLAGS),
	    pr->interval);
}

static void
link_conn_probe(void *arg, struct conn *c, const struct wire_probe *pr)
{
	struct link	*l = c->link;
	uint64_t	 now = clock_now_ms();

	if (l == NULL || l->state != LINK_UP)
		return;
	link_live_probe(l, pr, now);
}

/* A liveness probe by a datagram (udp.h). */
static void
link_dgram_live(void *arg, const struct wire_probe *pr)
{
	struct link	*l = arg;

	if (l->state == LINK_UP && l->conn != NULL)
		link_live_probe(l, pr, clock_now_ms());
}

int
link_alive(const struct link *l)
{
	return l->state == LINK_UP && liveness_alive(&l->live);
}

/* The connection callbacks (conn.h): what the links hear from connections. */

static void
link_conn_hello(void *arg, struct wire_hello *h)
{
	links_hello(arg, h);
}

static struct ssl_ctx_st *
link_conn_tls(void *arg)
{
	struct links	*lks = arg;

	return lks->hooks.tls(lks->hooks.arg);
}

static void
link_conn_connected(void *arg, struct conn *c)
{
	log_debug("link %s: connected to %s", c->link->name, c->peer);
	link_set_state(c->link, LINK_HANDSHAKE, NULL);
}

/* A frame from l's peer, by its connection or by datagrams. */
static void
link_frame_in(struct link *l, uint8_t hops, const struct wire_frame *f)
{
	struct sw_frame	 sf;

	if (l->live_idle)	/* quicken and poll now, not at the next look */
		event_active(l->ev_live, EV_TIMEOUT, 0);
	l->c.frames_in++;
	l->c.bytes_in += f->len;
	sf.vh = sw_vh(f->vh);
	sf.eth = f->eth;
	sf.len = f->len;
	sf.hops = hops;
	sf.origin = f->origin;
	sf.seq = f->seq;
	sw_input(l->lks->sw, &l->port, &sf);
}

static void
link_conn_frame(void *arg, struct conn *c, uint8_t hops,
    const struct wire_frame *f)
{
	link_frame_in(c->link, hops, f);
}

static int
link_conn_node(void *arg, struct conn *c, const uint8_t *p, size_t n,
    const char **why)
{
	struct links	*lks = arg;

	/*
	 * Out of the routing for now: its records wait for the database
	 * exchange of its return.
	 */
	if (!link_alive(c->link))
		return 0;
	return lks->hooks.node(lks->hooks.arg, c->link, p, n, why);
}

static void
link_conn_closing(void *arg, struct conn *c, const char *why)
{
	struct link	*l = c->link;

	log_info("link %s: closing connection %s: %s", l->name, c->peer, why);
	c->link = NULL;
	link_conn_lost(l, c, why);
}

static void
link_conn_refused(void *arg, const char *peer, const char *node,
    const char *why)
{
	link_refusal_add(arg, peer, node, why);
}

/* Room in the connection's output: refill it from the link's queue. */
static void
link_conn_writable(void *arg, struct conn *c)
{
	if (c->link->conn == c)
		link_drain(c->link);
}

/* The datagram path (udp.h): frames from it, its mode changing. */

static void
link_dgram_frame(void *arg, uint8_t hops, const struct wire_frame *f)
{
	link_frame_in(arg, hops, f);
}

static void
link_dgram_changed(void *arg)
{
	struct link	*l = arg;

	link_drain(l);
	if (l->conn != NULL)
		(void)conn_push(l->conn);
}

/* A frame the datagram path may have lost, again by the connection. */
static void
link_dgram_resend(void *arg, const uint8_t *msg, size_t len)
{
	struct link	*l = arg;

	if (l->conn != NULL && l->conn->state == CONN_UP)
		(void)conn_add(l->conn, msg, len);
}

/* The peer is told where its datagrams come from (its candidates). */
static void
link_dgram_endpoint(void *arg, const char *addr)
{
	struct link	*l = arg;

	if (l->conn != NULL)
		(void)conn_send_seen(l->conn, WIRE_SEEN_DGRAM, addr);
}

static const struct udp_path_cbs link_dgram_cbs = {
	.frame = link_dgram_frame,
	.changed = link_dgram_changed,
	.resend = link_dgram_resend,
	.endpoint = link_dgram_endpoint,
	.live = link_dgram_live,
};

/* An up link whose options ask for datagrams offers them to its peer. */
static void
link_dgram_start(struct link *l)
{
	if (l->dpath != NULL || l->conn == NULL || l->state != LINK_UP ||
	    l->sched.opts.transport == STMT_TRANSPORT_TCP ||
	    l->lks->udp == NULL)
		return;
	l->dpath = udp_path_new(l->lks->udp, l->conn, l->sched.opts.transport,
	    &link_dgram_cbs, l);
	if (l->dpath == NULL && !(l->conn->hello.caps & WIRE_CAP_DGRAM))
		log_info("link %s: the peer takes no datagrams: frames go by "
		    "the connection", l->name);
}

static void
link_dgram_stop(struct link *l, int withdraw)
{
	if (l->dpath == NULL)
		return;
	udp_path_free(l->dpath, withdraw);
	l->dpath = NULL;
}

static int
link_conn_dgram(void *arg, struct conn *c, const struct wire_dgram *d,
    const char **why)
{
	struct link	*l = c->link;

	/* Not asked for here (transport tcp): the peer sends by TCP. */
	if (l == NULL || l->conn != c || l->dpath == NULL)
		return 0;
	return udp_path_offer(l->dpath, d, why);
}

static const struct conn_cbs link_conn_cbs = {
	.hello = link_conn_hello,
	.tls = link_conn_tls,
	.connected = link_conn_connected,
	.join = link_conn_join,
	.established = link_conn_established,
	.frame = link_conn_frame,
	.node = link_conn_node,
	.lost = link_conn_closing,
	.refused = link_conn_refused,
	.writable = link_conn_writable,
	.dgram = link_conn_dgram,
	.probe = link_conn_probe,
};

void
links_init(struct links *lks, struct sw *sw, const struct links_hooks *hooks)
{
	memset(lks, 0, sizeof(*lks));
	TAILQ_INIT(&lks->list);
	TAILQ_INIT(&lks->opts);
	TAILQ_INIT(&lks->conns.pending);
	TAILQ_INIT(&lks->conns.closing);
	lks->sw = sw;
	lks->hooks = *hooks;
	lks->gone_keep_ms = LINK_GONE_KEEP;
	lks->gone_max = LINK_GONE_MAX;
	lks->live_interval = LIVENESS_INTERVAL_DEFAULT;
	lks->live_idle_slow = 1;
}

void
links_start(struct links *lks, struct event_base *base,
    struct evdns_base *dns)
{
	lks->base = base;
	conns_init(&lks->conns, base, dns, clock_now_ms, &link_conn_cbs, lks);
	if ((lks->udp = udp_new(base, clock_now_ms)) == NULL)
		log_warnx("links: no memory for datagrams");
}

void
links_udp_listen(struct links *lks, const struct stmt_hostport *hp)
{
	if (lks->udp != NULL)
		udp_listen(lks->udp, hp);
}

void
links_udp_unlisten(struct links *lks, const struct stmt_hostport *hp)
{
	if (lks->udp != NULL)
		udp_unlisten(lks->udp, hp);
}

uint64_t
links_udp_unknown(const struct links *lks)
{
	return lks->udp != NULL ? udp_unknown(lks->udp) : 0;
}

void
links_free(struct links *lks)
{
	struct link	*l;

	conns_free_pending(&lks->conns);
	while ((l = TAILQ_FIRST(&lks->list)) != NULL)
		link_free(l);
	conns_free_closing(&lks->conns);
	sched_optlist_clear(&lks->opts);
	udp_free(lks->udp);
	lks->udp = NULL;
}

void
links_accept(struct links *lks, int fd, const struct sockaddr *sa,
    int socklen, int tls, int punched)
{
	conn_accept(&lks->conns, fd, sa, socklen, tls, punched);
}

/*
 * Moves frames from the link's queue to its connection while the output
 * buffer has room and the shaper lets them go; the AQM judges each on the
 * way.  Keepalives and handshakes are written to the output directly: they
 * never wait behind data.
 */
static enum udp_mode
link_mode(const struct link *l)
{
	return l->dpath != NULL ? udp_path_mode(l->dpath) : UDP_MODE_TCP;
}

/* link_drain() for a link whose frames go by datagrams only. */
static void
link_drain_dgram(struct link *l)
{
	struct lq_item	 it;
	struct timeval	 tv;
	uint64_t	 now, wait;

	if (evtimer_pending(l->ev_pace, NULL))
		return;
	now = clock_now_us();
	for (;;) {
		switch (sched_dequeue(&l->sched, now, &it, &wait)) {
		case SCHED_EMPTY:
			return;
		case SCHED_WAIT:
			tv.tv_sec = (time_t)(wait / 1000000);
			tv.tv_usec = (suseconds_t)(wait % 1000000);
			evtimer_add(l->ev_pace, &tv);
			return;
		case SCHED_SEND:
			break;
		}
		if (udp_path_send(l->dpath, it.data, it.len, NULL, 0) == -1) {
			l->c.drops++;
			continue;
		}
		l->c.frames_out++;
		l->c.bytes_out += it.len - l->sched.prefix;
	}
}

static void
link_drain(struct link *l)
{
	struct conn	*c = l->conn;
	struct lq_item	 it;
	struct timeval	 tv;
	uint64_t	 now, wait;
	size_t		 len;
	int		 more = 1, both = 0;

	switch (link_mode(l)) {
	case UDP_MODE_UDP:
		link_drain_dgram(l);
		return;
	case UDP_MODE_BOTH:
		both = 1;
		break;
	case UDP_MODE_TCP:
		break;
	}
	if (c == NULL || c->state != CONN_UP ||
	    evtimer_pending(l->ev_pace, NULL) ||
	    (len = conn_out_len(c)) >= CONN_OUT_MAX)
		return;
	/* One allocation for the batch, not one per frame or two. */
	if (sched_frames(&l->sched) > 1)
		conn_reserve(c, CONN_OUT_MAX - len);
	now = clock_now_us();
 again:
	while (more && conn_out_len(c) < CONN_OUT_MAX) {
		switch (sched_dequeue(&l->sched, now, &it, &wait)) {
		case SCHED_EMPTY:
			more = 0;
			continue;
		case SCHED_WAIT:
			tv.tv_sec = (time_t)(wait / 1000000);
			tv.tv_usec = (suseconds_t)(wait % 1000000);
			evtimer_add(l->ev_pace, &tv);
			more = 0;
			continue;
		case SCHED_SEND:
			break;
		}
		/* Answers are late: the far side drops the second copy. */
		if (both)
			(void)udp_path_send(l->dpath, it.data, it.len, NULL, 0);
		if (conn_add(c, it.data, it.len) == -1) {
			l->c.drops++;
			continue;
		}
		l->c.frames_out++;
		l->c.bytes_out += it.len - l->sched.prefix;
	}
	/*
	 * A bufferevent writes by itself, and calls back when it has.  TLS
	 * records are written here; what the socket took at once makes room
	 * that no event will announce, so the queue is drained into it now.
	 */
	if (conn_push(c) && more && conn_out_len(c) <= CONN_OUT_LOW)
		goto again;
}

/*
 * A frame that need not wait goes straight toward the connection's socket:
 * nothing queued in the link, no rate (conn_send_direct() says what else).
 * That saves the two copies (into the queue, into the output buffer) that
 * the way through the queue costs.  Returns 0 if the frame went (or was
 * handed on), -1 to queue it.
 */
static int
link_send_direct(struct link *l, const uint8_t *pre, size_t prelen,
    const uint8_t *eth, size_t len)
{
	int	 r;

	if (!sched_may_bypass(&l->sched) || evtimer_pending(l->ev_pace, NULL))
		return -1;
	if ((r = conn_send_direct(l->conn, pre, prelen, eth, len)) == -1)
		return -1;
	if (r == 1)
		return 0;
	sched_bypassed(&l->sched, clock_now_us());
	l->c.frames_out++;
	l->c.bytes_out += len;
	return 0;
}

/*
 * The port's transmit: a frame the switch hands over, already cut unless
 * link_port_features() says the peer takes offload frames.
 */
static void
link_port_transmit(struct port *p, const struct sw_frame *f)
{
	struct link	*l = p->owner;
	uint8_t		 pre[WIRE_HDR_LEN + WIRE_FRAME_PREFIX];
	enum udp_mode	 mode = link_mode(l);

	if (l->live_idle)	/* quicken and poll now, not at the next look */
		event_active(l->ev_live, EV_TIMEOUT, 0);
	wire_frame_encode_prefix(pre, f->len, f->hops, f->origin, f->seq,
	    f->vh);
	if (mode == UDP_MODE_UDP && sched_may_bypass(&l->sched) &&
	    !evtimer_pending(l->ev_pace, NULL)) {
		if (udp_path_send(l->dpath, pre, sizeof(pre), f->eth,
		    f->len) == -1) {
			l->c.drops++;
			return;
		}
		sched_bypassed(&l->sched, clock_now_us());
		l->c.frames_out++;
		l->c.bytes_out += f->len;
		return;
	}
	if (mode == UDP_MODE_BOTH && sched_may_bypass(&l->sched))
		(void)udp_path_send(l->dpath, pre, sizeof(pre), f->eth,
		    f->len);
	if (mode != UDP_MODE_UDP &&
	    link_send_direct(l, pre, sizeof(pre), f->eth, f->len) == 0)
		return;
	if (sched_enqueue(&l->sched, clock_now_us(), pre, f->eth,
	    f->len) == -1)
		return;
	link_drain(l);
}

/*
 * A peer that takes no offload frames gets them cut.  So does a link with
 * a rate: it is a bottleneck like a real link, and its queue, marks and
 * drops work per packet, not per 64 KiB of them.
 */
static unsigned int
link_port_features(const struct port *p)
{
	const struct link *l = p->owner;

	if (l->conn == NULL || !(l->conn->hello.caps & WIRE_CAP_GSO) ||
	    l->sched.opts.rate != 0)
		return 0;
	switch (link_mode(l)) {
	case UDP_MODE_TCP:
		return SW_F_OFFLOAD;
	case UDP_MODE_UDP:
		/* Whole, in pieces, unless the path loses datagrams. */
		return udp_path_whole(l->dpath) ? SW_F_OFFLOAD : 0;
	case UDP_MODE_BOTH:
		break;
	}
	return 0;
}

static const char *
link_port_name(const struct port *p)
{
	const struct link *l = p->owner;

	return l->name;
}

static const struct port_ops link_port_ops = {
	.kind = "link",
	.guest = 0,
	.transmit = link_port_transmit,
	.features = link_port_features,
	.name = link_port_name,
};

/* Why links are down: refusals, rates, and the show tables. */

void
link_refusal_add(struct links *lks, const char *peer, const char *node,
    const char *why)
{
	struct link_refusals	*rs = &lks->refused;
	struct link_refusal	*r = &rs->r[rs->next];

	r->at = clock_now_ms();
	snprintf(r->peer, sizeof(r->peer), "%s", peer);
	snprintf(r->node, sizeof(r->node), "%s",
	    node != NULL && node[0] != '\0' ? node : "-");
	snprintf(r->why, sizeof(r->why), "%s", why);
	rs->next = (rs->next + 1) % LINK_REFUSED_MAX;
	rs->total++;
}

/* Rates are averaged over at least this long: one tick is too jumpy. */
#define LINK_RATE_WINDOW	2000	/* ms */

void
link_tick(struct links *lks, uint64_t now)
{
	struct link	*l;
	uint64_t	 dt;

	TAILQ_FOREACH(l, &lks->list, entry) {
		if ((dt = now - l->rate_at) < LINK_RATE_WINDOW)
			continue;
		l->rate_in = (l->c.bytes_in - l->rate_bytes_in) * 8000 / dt;
		l->rate_out = (l->c.bytes_out - l->rate_bytes_out) * 8000 / dt;
		l->rate_bytes_in = l->c.bytes_in;
		l->rate_bytes_out = l->c.bytes_out;
		l->rate_at = now;
	}
}

/* A duration for a person: 45s, 12m05s, 3h07m, 2d04h. */
static const char *
link_ago(uint64_t ms, char *buf, size_t len)
{
	uint64_t s = ms / 1000;

	if (s < 60)
		snprintf(buf, len, "%llus", (unsigned long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%llum%02llus", (unsigned long long)s / 60,
		    (unsigned long long)s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lluh%02llum",
		    (unsigned long long)s / 3600,
		    (unsigned long long)s % 3600 / 60);
	else
		snprintf(buf, len, "%llud%02lluh",
		    (unsigned long long)s / 86400,
		    (unsigned long long)s % 86400 / 3600);
	return buf;
}

/* A rate for a person, to two or three digits: 0, 812k, 9.4M, 1.2G (bit/s). */
static const char *
link_rate(uint64_t bps, char *buf, size_t len)
{
	static const char units[] = " kMGT";
	double	 v = (double)bps;
	int	 u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu", (unsigned long long)bps);
	else
		snprintf(buf, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

static const char *
link_peer_text(const struct link *l, char *buf, size_t len)
{
	if (l->conn != NULL)
		return l->conn->peer;
	if (l->configured)
		return stmt_hostport_format(&l->addr, buf, len);
	return "-";
}

/*
 * The transport columns of `show links all`, each with its leading tab:
 * where frames go, the datagram path's state, MTU and counters.
 */
#define LINK_LIVE_COLUMNS "\tliveness\tprobe_ms\tdetect_ms\t" \
	"liveness_lost\tliveness_lost_s\tliveness_why\tliveness_losses\t" \
	"probes_sent\tprobes_heard"

/*
 * l's liveness columns, each with its leading tab: the state now, the
 * interval of its probes and the detection time (ms, 0: none), the last
 * loss (ago, or "-"), why, and the counts.
 */
static const char *
link_live_columns(const struct link *l, uint64_t now, char *buf, size_t len)
{
	const struct liveness	*lv = &l->live;
	char			 ago[32], ago_s[24];
	int			 up = l->state == LINK_UP;

	if (l->live_lost_at != 0) {
		link_ago(now - l->live_lost_at, ago, sizeof(ago));
		snprintf(ago_s, sizeof(ago_s), "%llu",
		    (unsigned long long)((now - l->live_lost_at) / 1000));
	} else {
		snprintf(ago, sizeof(ago), "-");
		snprintf(ago_s, sizeof(ago_s), "-");
	}
	snprintf(buf, len, "\t%s\t%u\t%llu\t%s\t%s\t%s\t%llu\t%llu\t%llu",
	    up ? liveness_state_name(lv->state) : "-", up ? lv->interval : 0,
	    up ? (unsigned long long)liveness_detect(lv) : 0ULL, ago, ago_s,
	    l->live_why[0] != '\0' ? l->live_why : "-",
	    (unsigned long long)l->live_losses,
	    up ? (unsigned long long)lv->probes_sent : 0ULL,
	    up ? (unsigned long long)lv->probes_heard : 0ULL);
	return buf;
}

#define LINK_DGRAM_COLUMNS "\ttransport\tdgram_state\tpath_mtu\t" \
	"dgram_lost\tdgram_reordered\tdgram_replayed\tdgram_auth_failed"

static const char *
link_transport_now(const struct link *l)
{
	switch (link_mode(l)) {
	case UDP_MODE_UDP:
		return "udp";
	case UDP_MODE_BOTH:
		return "udp+tcp";
	case UDP_MODE_TCP:
		break;
	}
	return "tcp";
}

static const char *
link_dgram_columns(const struct link *l, char *buf, size_t len)
{
	const struct dgram_stats *ds;

	if (l->dpath == NULL) {
		snprintf(buf, len, "\t%s\t-\t-\t-\t-\t-\t-",
		    link_transport_now(l));
		return buf;
	}
	ds = udp_path_dgram_stats(l->dpath);
	snprintf(buf, len, "\t%s\t%s\t%u\t%llu\t%llu\t%llu\t%llu",
	    link_transport_now(l), udp_state_name(udp_path_state(l->dpath)),
	    udp_path_mtu(l->dpath), (unsigned long long)ds->lost,
	    (unsigned long long)ds->reordered,
	    (unsigned long long)ds->replayed,
	    (unsigned long long)ds->auth_failed);
	return buf;
}

void
link_show_links(struct links *lks, int all, struct evbuffer *out)
{
	struct link	*l;
	uint64_t	 now = clock_now_ms();
	char		 addr[STMT_HOST_MAX + 10], rate[32], since[32];
	char		 in[16], outr[16], rates[160], trigger[32], dg[160];
	char		 live[LIVENESS_WHY_MAX + 128];
	const char	*peer, *origin, *reason;

	if (!all)
		evbuffer_add_printf(out, "%%columns name\tstate\tpeer\tsince\t"
		    "rate_in\trate_out\tlast_error\torigin\tliveness\n");
	else
		evbuffer_add_printf(out, "%%columns name\tstate\tdir\tpeer\t"
		    "frames_in\tbytes_in\tframes_out\tbytes_out\tdrops\t"
		    "connects\tqueue_bytes\tqueue_frames\tce_marks\t"
		    "aqm_drops\ttail_drops\trate\tfat_drops\torigin\ttrigger\t"
		    "since\tsince_s\trate_in\trate_out\tlast_error\treason"
		    LINK_LIVE_COLUMNS "%s%s\n",
		    LINK_DGRAM_COLUMNS, lks->hooks.history_columns);
	TAILQ_FOREACH(l, &lks->list, entry) {
		const struct sched *sc = &l->sched;

		peer = link_peer_text(l, addr, sizeof(addr));
		link_ago(now - l->state_since, since, sizeof(since));
		if (l->state == LINK_UP) {
			link_rate(l->rate_in, in, sizeof(in));
			link_rate(l->rate_out, outr, sizeof(outr));
		} else {
			snprintf(in, sizeof(in), "-");
			snprintf(outr, sizeof(outr), "-");
		}
		origin = lks->hooks.origin(lks->hooks.arg, l, trigger,
		    sizeof(trigger), &reason);
		if (!all) {
			evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t"
			    "%s\t%s\n", l->name, link_state_name(l->state),
			    peer, since, in, outr, l->last_error[0] != '\0' ?
			    l->last_error : "-", origin, l->state == LINK_UP ?
			    liveness_state_name(l->live.state) : "-");
			continue;
		}
		evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%llu\t%llu\t%llu\t"
		    "%llu\t%llu\t%llu\t%zu\t%zu\t%llu\t%llu\t%llu\t%s\t%llu\t"
		    "%s\t%s\t%s\t%llu\t%s\t%s\t%s\t%s%s%s%s\n", l->name,
		    link_state_name(l->state),
		    (l->conn != NULL ? l->conn->outgoing : l->configured) ?
		    "out" : "in", peer,
		    (unsigned long long)l->c.frames_in,
		    (unsigned long long)l->c.bytes_in,
		    (unsigned long long)l->c.frames_out,
		    (unsigned long long)l->c.bytes_out,
		    (unsigned long long)(l->c.drops + sc->c.tail_drops +
		    sc->c.fat_drops + sc->c.aqm_drops),
		    (unsigned long long)l->c.connects,
		    sched_bytes(sc), sched_frames(sc),
		    (unsigned long long)sc->c.ce_marks,
		    (unsigned long long)sc->c.aqm_drops,
		    (unsigned long long)sc->c.tail_drops,
		    sc->opts.rate ? stmt_rate_format(sc->opts.rate, rate,
		    sizeof(rate)) : "-", (unsigned long long)sc->c.fat_drops,
		    origin, trigger, since,
		    (unsigned long long)((now - l->state_since) / 1000), in, outr,
		    l->last_error[0] != '\0' ? l->last_error : "-", reason,
		    link_live_columns(l, now, live, sizeof(live)),
		    link_dgram_columns(l, dg, sizeof(dg)),
		    lks->hooks.history(lks->hooks.arg, l->name, rates,
		    sizeof(rates)));
	}
}

/* The rows of `show link NAME` for its transport. */
static void
link_show_dgram(const struct link *l, struct evbuffer *out)
{
	const struct dgram_stats	*ds;
	const struct udp_path_stats	*us;
	const struct dfrag_stats	*fs;
	char				 buf[64];

#define DROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
	evbuffer_add_printf(out, "transport\t%s\n",
	    stmt_transport_name(l->sched.opts.transport));
	evbuffer_add_printf(out, "transport_now\t%s\n", link_transport_now(l));
	if (l->dpath == NULL) {
		evbuffer_add_printf(out, "dgram_state\t-\n");
		return;
	}
	ds = udp_path_dgram_stats(l->dpath);
	us = udp_path_stats(l->dpath);
	fs = udp_path_frag_stats(l->dpath);
	evbuffer_add_printf(out, "dgram_state\t%s\n",
	    udp_state_name(udp_path_state(l->dpath)));
	evbuffer_add_printf(out, "dgram_cipher\t%s\n",
	    udp_path_cipher(l->dpath));
	evbuffer_add_printf(out, "dgram_endpoint\t%s\n",
	    udp_path_endpoint(l->dpath, buf, sizeof(buf)));
	DROW("path_mtu", udp_path_mtu(l->dpath));
	DROW("dgram_sent", ds->sent);
	DROW("dgram_received", ds->received);
	DROW("dgram_lost", ds->lost);
	DROW("dgram_reordered", ds->reordered);
	DROW("dgram_replayed", ds->replayed);
	DROW("dgram_auth_failed", ds->auth_failed);
	DROW("dgram_malformed", ds->malformed + us->malformed);
	DROW("dgram_rekeys", ds->rekeys);
	DROW("dgram_peer_rekeys", ds->rx_rekeys);
	DROW("dgram_moved", us->moved);
	DROW("dgram_send_errors", us->send_errors);
	DROW("dgram_probes", us->probes);
	DROW("dgram_replies", us->replies);
	DROW("dgram_liveness_out", us->live_out);
	DROW("dgram_liveness_in", us->live_in);
	DROW("dgram_doubted", us->doubted);
	DROW("dgram_fallbacks", us->fallbacks);
	DROW("dgram_resent", us->resent);
	DROW("frag_whole", fs->whole);
	DROW("frag_dropped", fs->dropped);
	DROW("gro_merged", udp_path_gro_stats(l->dpath)->merged);
	DROW("gro_super", udp_path_gro_stats(l->dpath)->super);
#undef DROW
}

int
link_show(struct links *lks, const char *name, struct evbuffer *out,
    char *err, size_t errlen)
{
	struct link		*l;
	const struct sched	*sc;
	struct sched_quantiles	 qt;
	uint64_t		 now = clock_now_ms();
	char			 buf[STMT_HOST_MAX + 10], cc[STMT_CONGESTION_MAX + 1];

	if ((l = link_find(lks, name)) == NULL) {
		snprintf(err, errlen, "no link %s", name);
		return -1;
	}
	sc = &l->sched;
	sched_quantiles(sc, clock_now_us(), &qt);
	evbuffer_add_printf(out, "%%columns name\tvalue\n");
#define ROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
#define ROWS(n, v) evbuffer_add_printf(out, "%s\t%s\n", n, v)
	ROWS("name", l->name);
	ROWS("state", link_state_name(l->state));
	ROWS("dir", (l->conn != NULL ? l->conn->outgoing : l->configured) ?
	    "out" : "in");
	ROWS("peer", link_peer_text(l, buf, sizeof(buf)));
	ROWS("node", link_peer(l));
	ROWS("tls", l->tls || (l->conn != NULL && conn_tls(l->conn)) ? "yes" :
	    "no");
	ROWS("since", link_ago(now - l->state_since, buf, sizeof(buf)));
	ROW("since_s", (now - l->state_since) / 1000);
	ROWS("last_error", l->last_error[0] != '\0' ? l->last_error : "-");
	if (l->last_error_at != 0) {
		ROWS("last_error_ago", link_ago(now - l->last_error_at, buf,
		    sizeof(buf)));
		ROW("last_error_ago_s", (now - l->last_error_at) / 1000);
	} else {
		ROWS("last_error_ago", "-");
		ROWS("last_error_ago_s", "-");
	}
	if (l->retry_at != 0 && l->state != LINK_UP) {
		ROWS("next_attempt", link_ago(l->retry_at > now ?
		    l->retry_at - now + 999 : 0, buf, sizeof(buf)));
		ROW("next_attempt_ms", l->retry_at > now ? l->retry_at - now :
		    0);
	} else {
		ROWS("next_attempt", l->state == LINK_UP ? "-" :
		    l->configured ? "connecting" : "-");
		ROWS("next_attempt_ms", "-");
	}
	ROW("connects", l->c.connects);
	ROWS("rate", sc->opts.rate ? stmt_rate_format(sc->opts.rate, buf,
	    sizeof(buf)) : "-");
	ROW("rate_in", l->state == LINK_UP ? l->rate_in : 0);
	ROW("rate_out", l->state == LINK_UP ? l->rate_out : 0);
	ROWS("aqm", sc->opts.aqm.kind == AQM_OFF ? "off" :
	    sc->opts.aqm.kind == AQM_FQ_CODEL ? "fq_codel" : "codel");
	ROW("aqm_target_us", sc->opts.aqm.target);
	ROW("aqm_interval_us", sc->opts.aqm.interval);
	ROWS("congestion", link_congestion(l, cc));
	ROW("queue_bytes", sched_bytes(sc));
	ROW("queue_frames", sched_frames(sc));
	ROW("queue_limit", sc->q.limit);
	ROW("sojourn_samples", qt.n);
	ROW("sojourn_p50_us", qt.p50);
	ROW("sojourn_p99_us", qt.p99);
	ROW("sojourn_max_us", qt.max);
	ROW("ce_marks", sc->c.ce_marks);
	ROW("aqm_drops", sc->c.aqm_drops);
	ROW("tail_drops", sc->c.tail_drops);
	ROW("fat_drops", sc->c.fat_drops);
	ROW("flushed", sc->c.flushed);
	ROW("aqm_dropping", sc->aqm.dropping);
	ROW("aqm_count", sc->aqm.count);
	ROW("frames_out", l->c.frames_out);
	ROW("bytes_out", l->c.bytes_out);
	ROW("frames_in", l->c.frames_in);
	ROW("bytes_in", l->c.bytes_in);
	link_show_dgram(l, out);
#undef ROW
#undef ROWS
	return 0;
}

void
link_show_refused(struct links *lks, struct evbuffer *out)
{
	const struct link_refusals *rs = &lks->refused;
	const struct link_refusal *r;
	uint64_t	 now = clock_now_ms();
	size_t		 i, n;
	char		 ago[32];

	evbuffer_add_printf(out, "%%columns ago\tago_s\tpeer\tnode\twhy\n");
	n = rs->total < LINK_REFUSED_MAX ? (size_t)rs->total :
	    LINK_REFUSED_MAX;
	/* The latest first. */
	for (i = 1; i <= n; i++) {
		r = &rs->r[(rs->next + LINK_REFUSED_MAX - i) % LINK_REFUSED_MAX];
		evbuffer_add_printf(out, "%s\t%llu\t%s\t%s\t%s\n",
		    link_ago(now - r->at, ago, sizeof(ago)),
		    (unsigned long long)((now - r->at) / 1000), r->peer,
		    r->node, r->why);
	}
}

const char *
link_node_peer(const struct link *l)
{
	if (l->state != LINK_UP || l->conn == NULL ||
	    !(l->conn->hello.caps & WIRE_CAP_NODES))
		return NULL;
	return l->conn->hello.node;
}

int
link_peer_shortcut(const struct link *l)
{
	return l->state == LINK_UP && l->conn != NULL &&
	    (l->conn->hello.caps & WIRE_CAP_SHORTCUT) != 0;
}

int
link_send_node(struct link *l, const uint8_t *p, size_t n)
{
	if (link_node_peer(l) == NULL)
		return -1;
	return conn_send_node(l->conn, p, n);
}

struct link *
links_first(struct links *lks)
{
	return TAILQ_FIRST(&lks->list);
}

struct link *
link_next(struct link *l)
{
	return TAILQ_NEXT(l, entry);
}

const char *
link_name(const struct link *l)
{
	return l->name;
}

int
link_is_up(const struct link *l)
{
	return l->state == LINK_UP;
}

int
link_configured(const struct link *l)
{
	return l->configured;
}

struct conn *
link_conn(const struct link *l)
{
	return l->conn;
}

struct conn *
link_dialing(const struct link *l)
{
	return l->dialing;
}

const char *
link_live_why(const struct link *l)
{
	return l->live_why;
}

const char *
link_last_error(const struct link *l)
{
	return l->last_error;
}

const struct link_counters *
link_counters(const struct link *l)
{
	return &l->c;
}

const struct sched *
link_sched(const struct link *l)
{
	return &l->sched;
}

void
link_to_stmt(const struct link *l, struct stmt *st)
{
	snprintf(st->name, sizeof(st->name), "%s", l->name);
	st->addr = l->addr;
	st->tls = l->tls;
	snprintf(st->peer, sizeof(st->peer), "%s", l->peer);
	st->queue = l->queue_max == LINK_QUEUE_DEFAULT ? 0 :
	    (uint32_t)l->queue_max;
}

uint32_t
link_rtt_us(const struct link *l)
{
	struct tcp_info	 ti;
	socklen_t	 len = sizeof(ti);
	evutil_socket_t	 fd;

	if (l->conn == NULL || (fd = conn_fd(l->conn)) < 0 ||
	    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1)
		return 0;
	return ti.tcpi_rtt;
}

void
link_dgram_info(const struct link *l, struct link_dgram *o)
{
	const struct dgram_stats *ds;

	memset(o, 0, sizeof(*o));
	if (l->dpath == NULL)
		return;
	ds = udp_path_dgram_stats(l->dpath);
	o->path = 1;
	o->by_udp = link_mode(l) != UDP_MODE_TCP;
	o->path_mtu = udp_path_mtu(l->dpath);
	o->sent = ds->sent;
	o->received = ds->received;
	o->lost = ds->lost;
	o->reordered = ds->reordered;
	o->replayed = ds->replayed;
	o->auth_failed = ds->auth_failed;
}

/*
 * /metrics: a family per row of this table, a sample per link (two, in
 * and out, for one by direction).
 */
struct link_metric {
	const char		*name, *help;
	enum metric_type	 type;
	int			 by_dir;
	uint64_t		 (*value)(const struct link *, int out);
};

static uint64_t
link_m_up(const struct link *l, int out)
{
	(void)out;
	return l->state == LINK_UP;
}

static uint64_t
link_m_bytes(const struct link *l, int out)
{
	return out ? l->c.bytes_out : l->c.bytes_in;
}

static uint64_t
link_m_frames(const struct link *l, int out)
{
	return out ? l->c.frames_out : l->c.frames_in;
}

static uint64_t
link_m_drops(const struct link *l, int out)
{
	(void)out;
	return l->c.drops + l->sched.c.tail_drops + l->sched.c.fat_drops +
	    l->sched.c.aqm_drops;
}

static uint64_t
link_m_ce(const struct link *l, int out)
{
	(void)out;
	return l->sched.c.ce_marks;
}

static uint64_t
link_m_connects(const struct link *l, int out)
{
	(void)out;
	return l->c.connects;
}

static uint64_t
link_m_queue(const struct link *l, int out)
{
	(void)out;
	return sched_bytes(&l->sched);
}

static uint64_t
link_m_losses(const struct link *l, int out)
{
	(void)out;
	return l->live_losses;
}

static const struct link_metric link_metrics_table[] = {
	{ "vnet_link_up", "1 if the link is up (established), else 0.",
	    METRIC_GAUGE, 0, link_m_up },
	{ "vnet_link_bytes_total", "Bytes of frames carried by the link, by "
	    "direction.", METRIC_COUNTER, 1, link_m_bytes },
	{ "vnet_link_frames_total", "Frames carried by the link, by "
	    "direction.", METRIC_COUNTER, 1, link_m_frames },
	{ "vnet_link_drops_total", "Frames the link dropped (queue full, AQM, "
	    "fat flows, errors).", METRIC_COUNTER, 0, link_m_drops },
	{ "vnet_link_ce_marks_total", "Frames the link's AQM marked "
	    "Congestion Experienced.", METRIC_COUNTER, 0, link_m_ce },
	{ "vnet_link_connects_total", "Times the link came up.",
	    METRIC_COUNTER, 0, link_m_connects },
	{ "vnet_link_queue_bytes", "Bytes waiting in the link's queue.",
	    METRIC_GAUGE, 0, link_m_queue },
	{ "vnet_link_liveness_losses_total", "Times the link's liveness "
	    "declared its peer dead (probes or data unanswered).",
	    METRIC_COUNTER, 0, link_m_losses },
};

/* The datagram paths of links (transport udp|auto). */
static void
link_metrics_dgram(const struct links *lks, const struct metric_out *mo)
{
	static const struct {
		const char	*name, *help;
		enum metric_type type;
		size_t		 off;
	} m[] = {
#define DG(f) offsetof(struct link_dgram, f)
		{ "vnet_link_udp", "1 if the link's frames go by UDP "
		    "datagrams now, else 0.", METRIC_GAUGE, DG(by_udp) },
		{ "vnet_link_path_mtu_bytes", "The largest datagram "
		    "(UDP payload) the link's path carries.", METRIC_GAUGE,
		    DG(path_mtu) },
		{ "vnet_link_datagrams_sent_total", "Datagrams "
		    "sent on the link's datagram path.", METRIC_COUNTER,
		    DG(sent) },
		{ "vnet_link_datagrams_received_total",
		    "Authentic datagrams received on the link's datagram "
		    "path.", METRIC_COUNTER, DG(received) },
		{ "vnet_link_datagrams_lost_total", "Datagrams "
		    "from the peer that never came.", METRIC_COUNTER,
		    DG(lost) },
		{ "vnet_link_datagrams_reordered_total",
		    "Datagrams that came after a later one.", METRIC_COUNTER,
		    DG(reordered) },
		{ "vnet_link_datagrams_replayed_total",
		    "Datagrams dropped: seen before.", METRIC_COUNTER,
		    DG(replayed) },
		{ "vnet_link_datagrams_auth_failed_total",
		    "Datagrams dropped: not authentic.", METRIC_COUNTER,
		    DG(auth_failed) },
#undef DG
	};
	struct link_dgram	 g;
	const struct link	*l;
	size_t			 i;
	uint64_t		 v;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		metric_family(mo, m[i].name, m[i].type, m[i].help);
		TAILQ_FOREACH(l, &lks->list, entry) {
			link_dgram_info(l, &g);
			if (!g.path)
				continue;
			/* Every field is a uint64_t. */
			memcpy(&v, (const char *)&g + m[i].off, sizeof(v));
			metric_sample(mo, m[i].name, "link", l->name, NULL,
			    NULL, v);
		}
	}
}

void
link_metrics(const struct links *lks, const struct metric_out *mo)
{
	const struct link_metric *m;
	const struct link	*l;
	size_t			 i;
	int			 s;

	for (i = 0; i < sizeof(link_metrics_table) /
	    sizeof(link_metrics_table[0]); i++) {
		m = &link_metrics_table[i];
		metric_family(mo, m->name, m->type, m->help);
		TAILQ_FOREACH(l, &lks->list, entry) {
			if (!m->by_dir) {
				metric_sample(mo, m->name, "link", l->name,
				    NULL, NULL, m->value(l, 0));
				continue;
			}
			metric_sample(mo, m->name, "link", l->name, "dir",
			    "in", m->value(l, 0));
			metric_sample(mo, m->name, "link", l->name, "dir",
			    "out", m->value(l, 1));
		}
	}
	metric_family(mo, "vnet_link_transport_info", METRIC_GAUGE, "1, with "
	    "the transport the link's frames take now (tcp, udp, udp+tcp).");
	TAILQ_FOREACH(l, &lks->list, entry)
		metric_sample(mo, "vnet_link_transport_info", "link", l->name,
		    "transport", link_transport_now(l), 1);
	link_metrics_dgram(lks, mo);
	/* Liveness, of links up: 1 for the state it is in, 0 for the rest. */
	metric_family(mo, "vnet_link_liveness_state", METRIC_GAUGE, "1 for "
	    "the liveness state of an established link (up, hold, init, "
	    "down), 0 for the others.");
	TAILQ_FOREACH(l, &lks->list, entry) {
		if (l->state != LINK_UP)
			continue;
		for (s = LIVENESS_DOWN; s <= LIVENESS_UP; s++)
			metric_sample(mo, "vnet_link_liveness_state", "link",
			    l->name, "state",
			    liveness_state_name((enum liveness_state)s),
			    l->live.state == (enum liveness_state)s);
	}
	metric_family(mo, "vnet_link_probe_interval_seconds", METRIC_GAUGE,
	    "The interval of an established link's liveness probes (0: it "
	    "sends none).");
	TAILQ_FOREACH(l, &lks->list, entry)
		if (l->state == LINK_UP)
			metric_sample_real(mo,
			    "vnet_link_probe_interval_seconds", "link",
			    l->name, NULL, NULL, l->live.interval / 1000.0);
}
