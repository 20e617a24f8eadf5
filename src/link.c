#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <linux/sockios.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "daemon.h"
#include "fwd.h"
#include "history.h"
#include "link.h"
#include "routing.h"
#include "log.h"
#include "tls.h"
#include "wire.h"

static void	link_set_state(struct link *, enum link_state, const char *why);
static void	link_schedule(struct link *);
static void	link_dial(struct link *);
static void	link_conn_lost(struct link *, struct conn *, const char *why);
static void	conn_sockreadcb(evutil_socket_t, short, void *);
static void	conn_tls_readcb(evutil_socket_t, short, void *);
static void	conn_tls_writecb(evutil_socket_t, short, void *);
static int	conn_tls_flush(struct conn *);
static void	conn_eventcb(struct bufferevent *, short, void *);
static const char *conn_closed_why(const struct conn *);
static void	conn_close(struct conn *, const char *why, int bad);
static void	link_drain(struct link *);
static void	conn_congestion(struct conn *, const char *cc);
static const struct port_ops link_port_ops;

const char *
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
link_find(struct vnetd *d, const char *name)
{
	struct link	*l;

	TAILQ_FOREACH(l, &d->links, entry)
		if (strcmp(l->name, name) == 0)
			return l;
	return NULL;
}

/* The node at the other end: `peer NODE`, or the link's own name. */
static const char *
link_peer(const struct link *l)
{
	return l->peer[0] != '\0' ? l->peer : l->name;
}

/* The link a connection from node belongs to. */
static struct link *
link_find_peer(struct vnetd *d, const char *node)
{
	struct link	*l;

	TAILQ_FOREACH(l, &d->links, entry)
		if (l->configured && strcmp(link_peer(l), node) == 0)
			return l;
	return link_find(d, node);
}

static void
link_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	link_dial(arg);
}

static void
link_pace_cb(evutil_socket_t fd, short ev, void *arg)
{
	link_drain(arg);
}

void
link_options(struct vnetd *d, const char *name, struct sched_opts *o)
{
	struct sched_optent	*e;

	if ((e = sched_optlist_find(&d->linkopts, name)) != NULL)
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
link_new(struct vnetd *d, const char *name)
{
	struct link		*l;
	struct sched_opts	 o;
	char			 err[128];

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->d = d;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->queue_max = LINK_QUEUE_DEFAULT;
	l->backoff_ms = LINK_BACKOFF_MIN;
	l->state_since = l->rate_at = vnetd_now_ms();
	link_options(d, name, &o);
	if (sched_init(&l->sched, &o, l->queue_max, WIRE_HDR_LEN +
	    WIRE_FRAME_PREFIX, WIRE_FRAME_MAX, vnetd_now_us(),
	    arc4random()) == -1) {
		free(l);
		return NULL;
	}
	if (sw_port_add(d->sw, &l->port, &link_port_ops, l, name, err,
	    sizeof(err)) == -1 ||
	    (l->ev_retry = evtimer_new(d->base, link_retry_cb, l)) == NULL ||
	    (l->ev_pace = evtimer_new(d->base, link_pace_cb, l)) == NULL) {
		if (l->ev_retry != NULL)
			event_free(l->ev_retry);
		sw_port_del(d->sw, &l->port);
		sched_free(&l->sched);
		free(l);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&d->links, l, entry);
	return l;
}

/* Remembers the options a statement gives for its link name. */
static int
link_remember_options(struct vnetd *d, const struct stmt *st,
    struct sched_opts *o, char *err, size_t errlen)
{
	char	 why[512];

	if ((st->lopts & STMT_LOPT_CONGESTION) &&
	    link_congestion_check(st->congestion, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "link %s: %s", st->name, why);
		return -1;
	}
	link_options(d, st->name, o);
	sched_opts_from_stmt(o, st);
	if (sched_optlist_set(&d->linkopts, st->name, o) == NULL) {
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
	sched_set_opts(&l->sched, o, vnetd_now_us());
	if ((st->lopts & STMT_LOPT_CONGESTION) && l->conn != NULL)
		conn_congestion(l->conn, o->congestion);
}

int
link_set_options(struct vnetd *d, const struct stmt *st, char *err,
    size_t errlen)
{
	struct link		*l;
	struct sched_opts	 o;

	/* The queue is the link's own, not an option kept for its name. */
	l = link_find(d, st->name);
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
	if (link_remember_options(d, st, &o, err, errlen) == -1)
		return -1;
	if (l != NULL) {
		evtimer_del(l->ev_pace);
		link_take_options(l, st, &o);
		link_drain(l);
	}
	return 0;
}

int
link_add(struct vnetd *d, const struct stmt *st, char *err, size_t errlen)
{
	struct link		*l;
	struct sched_opts	 o;

	if (strcmp(st->name, d->node) == 0) {
		snprintf(err, errlen, "link %s: that is this node's own name",
		    st->name);
		return -1;
	}
	if ((l = link_find(d, st->name)) != NULL) {
		if (l->configured) {
			snprintf(err, errlen, "link %s already exists", st->name);
			return -1;
		}
		/* The peer dialled us first; from now on we dial too. */
		if (link_remember_options(d, st, &o, err, errlen) == -1)
			return -1;
		link_take_options(l, st, &o);
	} else if (link_remember_options(d, st, &o, err, errlen) == -1)
		return -1;
	else if ((l = link_new(d, st->name)) == NULL) {
		snprintf(err, errlen, "link %s: out of memory", st->name);
		return -1;
	}
	l->configured = 1;
	l->addr = st->addr;
	l->tls = st->tls;
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
link_del(struct vnetd *d, const char *name, char *err, size_t errlen)
{
	struct link	*l;

	if ((l = link_find(d, name)) == NULL) {
		snprintf(err, errlen, "no link %s", name);
		return -1;
	}
	log_info("link %s: removed", l->name);
	link_free(l);
	sched_optlist_del(&d->linkopts, name);
	return 0;
}

void
link_free(struct link *l)
{
	struct vnetd	*d = l->d;
	struct conn	*c;
	int		 was_up = l->state == LINK_UP;

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
	sw_port_del(d->sw, &l->port);
	event_free(l->ev_retry);
	event_free(l->ev_pace);
	sched_free(&l->sched);
	TAILQ_REMOVE(&d->links, l, entry);
	free(l);
	if (was_up)
		routing_link_down(d->routing, NULL);
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
		sched_flush(&l->sched);
	}
	l->state = state;
	l->state_since = vnetd_now_ms();
	if (state != LINK_UP && why != NULL) {
		snprintf(l->last_error, sizeof(l->last_error), "%s", why);
		l->last_error_at = l->state_since;
	}
	if (state == LINK_UP) {
		sw_port_up(&l->port);
		routing_link_up(l->d->routing, l);
	} else
		sw_port_down(&l->port);
	if (state != LINK_UP && was_up)
		routing_link_down(l->d->routing, l);
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
	l->retry_at = vnetd_now_ms() + ms;
	log_debug("link %s: next attempt in %u ms", l->name, ms);
	l->backoff_ms *= 2;
	if (l->backoff_ms > LINK_BACKOFF_MAX)
		l->backoff_ms = LINK_BACKOFF_MAX;
}

static void
conn_sockopts(evutil_socket_t fd)
{
	int	 one = 1, lowat = LINK_NOTSENT_LOWAT;

	if (fd < 0)
		return;
	/* Small frames (ACKs, pings) must not wait behind Nagle. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/*
	 * Frames the kernel holds unsent are out of the AQM's sight and
	 * delay all that follows: keep them few, the queue in the link.
	 */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat,
	    sizeof(lowat));
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

const char *
link_congestion(const struct link *l, char *buf)
{
	evutil_socket_t	 fd;

	if (l->conn == NULL || (fd = bufferevent_getfd(l->conn->bev)) < 0 ||
	    congestion_get(fd, buf) == -1)
		return "-";
	return buf;
}

/* The link's congestion control for its connection c, now up. */
static void
conn_congestion(struct conn *c, const char *cc)
{
	evutil_socket_t	 fd;

	if ((fd = bufferevent_getfd(c->bev)) < 0)
		return;
	if (congestion_set(fd, cc) == -1)
		log_warn("link %s: TCP congestion control %s",
		    c->link != NULL ? c->link->name : c->peer,
		    cc[0] != '\0' ? cc : "default");
}

static void
conn_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct conn	*c = arg;

	if (c->state == CONN_CLOSING) {
		conn_free(c);		/* its BYE did not get out in time */
		return;
	}
	c->d->stats.handshake_timeouts++;
	log_warnx("%s: no handshake within %d s", c->peer,
	    LINK_HANDSHAKE_TIMEOUT);
	conn_close(c, "handshake timeout", 0);
}

static struct conn *
conn_new(struct vnetd *d, evutil_socket_t fd, int outgoing, int tls)
{
	struct conn	*c;
	struct timeval	 tv = { LINK_HANDSHAKE_TIMEOUT, 0 };

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->d = d;
	c->outgoing = outgoing;
	c->tls = tls;
	if (outgoing)
		c->state = CONN_CONNECTING;
	else
		c->state = tls ? CONN_TLS : CONN_HANDSHAKE;
	if ((c->ev_deadline = evtimer_new(d->base, conn_deadline_cb,
	    c)) == NULL) {
		free(c);
		return NULL;
	}
	/*
	 * Every connection has a socket bufferevent: it connects (resolving
	 * the name first), and a plain connection writes through it.  A TLS
	 * connection leaves it once TCP is up (conn_tls_start).
	 */
	if ((c->bev = bufferevent_socket_new(d->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		event_free(c->ev_deadline);
		free(c);
		return NULL;
	}
	evtimer_add(c->ev_deadline, &tv);
	/* Large writes: fewer calls per byte when frames are big. */
	bufferevent_set_max_single_write(c->bev, 256 * 1024);
	bufferevent_setcb(c->bev, NULL, NULL, conn_eventcb, c);
	return c;
}

static void
conn_unpend(struct conn *c)
{
	if (c->pending) {
		TAILQ_REMOVE(&c->d->pending, c, entry);
		c->pending = 0;
		c->d->npending--;
	}
	if (c->closing) {
		TAILQ_REMOVE(&c->d->closing, c, entry);
		c->closing = 0;
	}
}

void
conn_free(struct conn *c)
{
	conn_unpend(c);
	if (c->ev_keepalive != NULL)
		event_free(c->ev_keepalive);
	if (c->ev_deadline != NULL)
		event_free(c->ev_deadline);
	if (c->ev_read != NULL)
		event_free(c->ev_read);
	if (c->ev_write != NULL)
		event_free(c->ev_write);
	if (c->ssl != NULL)
		SSL_free(c->ssl);	/* the socket is the bufferevent's */
	bufferevent_free(c->bev);
	free(c->rx);
	free(c->tx);
	free(c);
}

void
conn_flush(struct conn *c)
{
	if (c->tls) {
		if (c->tls_up)
			(void)conn_tls_flush(c);
		return;
	}
	(void)evbuffer_write(bufferevent_get_output(c->bev),
	    bufferevent_getfd(c->bev));
}

/*
 * A connection that must close, found where it cannot be closed (the
 * caller may be forwarding over it): closed from the loop, at once.
 */
static void
conn_fail_later(struct conn *c, const char *why)
{
	if (c->fail == NULL)
		c->fail = why;
	if (c->tls && c->ev_read != NULL)
		event_active(c->ev_read, EV_READ, 0);
	else
		bufferevent_trigger_event(c->bev, BEV_EVENT_ERROR,
		    BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * Appends a message to a TLS connection's tx buffer.  Returns -1 if it does
 * not fit (or no memory): never the case for what link_drain adds.
 */
static int
conn_tx_add(struct conn *c, const void *p, size_t n)
{
	if (c->tx == NULL) {
		if ((c->tx = malloc(LINK_TX_SIZE)) == NULL)
			return -1;
		c->tx_off = c->tx_end = 0;
	}
	if (c->tx_off == c->tx_end)
		c->tx_off = c->tx_end = 0;
	if (LINK_TX_SIZE - c->tx_end < n) {
		/* A record OpenSSL waits to send may move (tls.c). */
		memmove(c->tx, c->tx + c->tx_off, c->tx_end - c->tx_off);
		c->tx_end -= c->tx_off;
		c->tx_off = 0;
		if (LINK_TX_SIZE - c->tx_end < n)
			return -1;
	}
	memcpy(c->tx + c->tx_end, p, n);
	c->tx_end += n;
	return 0;
}

/* Bytes handed to the connection and not yet to the kernel. */
static size_t
conn_out_len(struct conn *c)
{
	if (c->tls)
		return c->tx_end - c->tx_off;
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/*
 * Sends a message of ours (hello, keepalive, BYE): through the bufferevent,
 * or into the tx buffer and out.  A failure closes c from the loop.
 */
static void
conn_write(struct conn *c, const void *p, size_t n)
{
	if (!c->tls) {
		if (bufferevent_write(c->bev, p, n) == -1)
			conn_fail_later(c, "out of memory");
		return;
	}
	if (conn_tx_add(c, p, n) == -1) {
		if (c->state != CONN_UP || n > WIRE_HDR_LEN)
			conn_fail_later(c, "out of memory");
		return;		/* a keepalive: the link is not moving anyway */
	}
	if (conn_tls_flush(c) == -1)
		conn_fail_later(c, c->fail);
}

/*
 * Starts reading.  The socket is read here, not by the bufferevent, into
 * the connection's own buffer, so that a read takes what the kernel has
 * (libevent's takes at most 4 KiB) and frames are handed on from where
 * they arrived, without a copy; over TLS, records decrypt into it.
 * timeout: the silence that closes the connection, NULL for none.
 */
static int
conn_read_start(struct conn *c, const struct timeval *timeout)
{
	evutil_socket_t	 fd;

	if (c->ev_read == NULL) {
		if ((fd = bufferevent_getfd(c->bev)) < 0)
			return -1;
		if ((c->ev_read = event_new(c->d->base, fd,
		    EV_READ | EV_PERSIST, c->tls ? conn_tls_readcb :
		    conn_sockreadcb, c)) == NULL)
			return -1;
	}
	return event_add(c->ev_read, timeout);
}

static void
conn_read_stop(struct conn *c)
{
	bufferevent_disable(c->bev, EV_READ);
	if (c->ev_read != NULL)
		event_del(c->ev_read);
}

static void
conn_send_hello(struct conn *c)
{
	struct vnetd		*d = c->d;
	struct wire_hello	 h;
	uint8_t			 buf[WIRE_HDR_LEN + WIRE_HELLO_MAX];
	size_t			 n;

	memset(&h, 0, sizeof(h));
	h.version = WIRE_VERSION;
	h.caps = (d->ifenv.offload ? WIRE_CAP_GSO : 0) | routing_caps(d->routing);
	h.keepalive = (uint16_t)d->keepalive;
	snprintf(h.node, sizeof(h.node), "%s", d->node);
	snprintf(h.network, sizeof(h.network), "%s", d->network);
	n = wire_hello_encode(buf, sizeof(buf), &h);
	c->state = CONN_HANDSHAKE;
	if (!c->tls)
		bufferevent_enable(c->bev, EV_WRITE);
	conn_write(c, buf, n);
	if (conn_read_start(c, NULL) == -1)
		log_warn("%s: cannot read", c->peer);	/* the deadline ends it */
}

static void
link_dial(struct link *l)
{
	struct vnetd	*d = l->d;
	struct conn	*c;

	if (!l->configured || l->dialing != NULL || l->state == LINK_UP)
		return;
	l->retry_at = 0;
	if ((c = conn_new(d, -1, 1, l->tls)) == NULL) {
		log_warn("link %s: connection", l->name);
		link_schedule(l);
		return;
	}
	c->link = l;
	l->dialing = c;
	stmt_hostport_format(&l->addr, c->peer, sizeof(c->peer));
	link_set_state(l, LINK_CONNECTING, NULL);
	log_debug("link %s: connecting to %s%s", l->name, c->peer,
	    l->tls ? " (TLS)" : "");
	/* A literal needs no lookup; a name is resolved without blocking. */
	if (bufferevent_socket_connect_hostname(c->bev, d->dns, AF_UNSPEC,
	    l->addr.host, l->addr.port) == -1) {
		l->dialing = NULL;
		c->link = NULL;
		conn_free(c);
		log_warnx("link %s: cannot connect to %s", l->name, c->peer);
		link_set_state(l, LINK_IDLE, "connect failed");
		link_schedule(l);
	}
}

static void
keepalive_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct conn	*c = arg;
	uint8_t		 buf[WIRE_HDR_LEN];

	wire_empty_encode(buf, WIRE_KEEPALIVE);
	conn_write(c, buf, sizeof(buf));
}

/*
 * Which of two live connections of one link both sides keep: see link.h.
 * Returns 1 if the new one wins.
 */
static int
conn_new_wins(struct vnetd *d, const struct conn *old, const struct conn *new)
{
	const char	*old_by, *new_by;

	old_by = old->outgoing ? d->node : old->hello.node;
	new_by = new->outgoing ? d->node : new->hello.node;
	if (strcmp(old_by, new_by) == 0)
		return 1;
	return strcmp(new_by, old_by) < 0;
}

/* Room in the output buffer: refill it from the link's queue. */
static void
conn_writecb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	if (c->link != NULL && c->link->conn == c)
		link_drain(c->link);
}

/* Returns -1 if c was closed instead. */
static int
conn_established(struct conn *c)
{
	struct vnetd	*d = c->d;
	struct link	*l = c->link;
	struct timeval	 tv;
	char		 desc[128];

	if (l == NULL) {
		l = link_find_peer(d, c->hello.node);
		/* Configured for TLS: a plain connection cannot stand in. */
		if (l != NULL && l->tls && !c->tls) {
			log_warnx("link %s: refused: a plain connection from "
			    "%s, but the link is configured with tls", l->name,
			    c->peer);
			d->stats.refused++;
			link_refusal_add(d, c->peer, c->hello.node, "a plain "
			    "connection, but the link is configured with tls");
			conn_close(c, "plain connection for a TLS link", 0);
			return -1;
		}
		conn_unpend(c);
		if (l == NULL &&
		    (l = link_new(d, c->hello.node)) == NULL) {
			log_warnx("link %s: out of memory", c->hello.node);
			conn_free(c);
			return -1;
		}
		c->link = l;
	} else if (l->dialing == c)
		l->dialing = NULL;

	if (l->conn != NULL) {
		if (!conn_new_wins(d, l->conn, c)) {
			log_info("link %s: keeping the existing connection, "
			    "closing the one from %s", l->name, c->peer);
			c->link = NULL;
			conn_close(c, "duplicate connection", 0);
			return -1;
		}
		log_info("link %s: a newer connection from %s replaces the "
		    "old one", l->name, c->peer);
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
	evtimer_del(c->ev_deadline);
	l->conn = c;
	c->state = CONN_UP;
	if (l->sched.opts.congestion[0] != '\0')
		conn_congestion(c, l->sched.opts.congestion);
	if (c->tls) {
		tls_describe(c->ssl, desc, sizeof(desc));
		log_info("link %s: %s, certificate of node %s verified",
		    l->name, desc, c->hello.node);
	}
	c->up_since = vnetd_now_ms();
	l->backoff_ms = LINK_BACKOFF_MIN;
	l->c.connects++;

	/* Silent for three of the peer's intervals: the link is down. */
	tv.tv_sec = 3 * c->hello.keepalive;
	tv.tv_usec = 0;
	(void)conn_read_start(c, &tv);
	if (!c->tls) {
		bufferevent_setcb(c->bev, NULL, conn_writecb, conn_eventcb, c);
		bufferevent_setwatermark(c->bev, EV_WRITE, LINK_OUT_LOW, 0);
	}
	tv.tv_sec = d->keepalive;
	c->ev_keepalive = event_new(d->base, -1, EV_PERSIST, keepalive_cb, c);
	if (c->ev_keepalive != NULL)
		event_add(c->ev_keepalive, &tv);
	link_set_state(l, LINK_UP, c->peer);
	return 0;
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
	l->conn = NULL;
	if (l->dialing != NULL)
		return;		/* state stays CONNECTING */
	link_set_state(l, LINK_IDLE, why);
	if (l->configured)
		link_schedule(l);
	else
		link_free(l);	/* an incoming link lives with its connection */
}

static void
closing_writecb(struct bufferevent *bev, void *arg)
{
	conn_free(arg);
}

static void
closing_eventcb(struct bufferevent *bev, short what, void *arg)
{
	conn_free(arg);
}

/*
 * Closes a connection.  Detached first from its link (which may redial).  An
 * established one is told why with a BYE, flushed within a second.
 */
static void
conn_close(struct conn *c, const char *why, int bad)
{
	struct vnetd	*d = c->d;
	struct link	*l = c->link;
	struct timeval	 tv = { 1, 0 };
	uint8_t		 buf[WIRE_HDR_LEN];
	int		 was_up = c->state == CONN_UP;

	if (bad)
		d->stats.bad_messages++;
	if (l != NULL) {
		log_info("link %s: closing connection %s: %s", l->name,
		    c->peer, why);
		c->link = NULL;
		link_conn_lost(l, c, why);
	} else if (c->pending) {
		log_info("connection from %s: closing: %s", c->peer, why);
		conn_unpend(c);
	}
	if (c->ev_keepalive != NULL) {
		event_free(c->ev_keepalive);
		c->ev_keepalive = NULL;
	}
	if (!was_up || bad || c->state == CONN_CLOSING) {
		c->state = CONN_CLOSING;
		conn_free(c);
		return;
	}
	c->state = CONN_CLOSING;
	TAILQ_INSERT_TAIL(&d->closing, c, entry);
	c->closing = 1;
	wire_empty_encode(buf, WIRE_BYE);
	conn_read_stop(c);
	if (c->tls) {
		/* The write event frees it once out, the deadline if not. */
		if (conn_tx_add(c, buf, sizeof(buf)) == -1 ||
		    conn_tls_flush(c) == -1 || c->tx_off == c->tx_end) {
			conn_free(c);
			return;
		}
		evtimer_add(c->ev_deadline, &tv);
		return;
	}
	bufferevent_write(c->bev, buf, sizeof(buf));
	bufferevent_set_timeouts(c->bev, NULL, &tv);
	bufferevent_setcb(c->bev, NULL, closing_writecb, closing_eventcb, c);
}

static int
conn_hello(struct conn *c, const uint8_t *p, size_t n)
{
	struct vnetd	*d = c->d;
	const char	*why;
	char		 why_buf[160];

	/*
	 * A refusal is counted once, as refused (not as a bad message too),
	 * and the link it was for (ours, when we dialled) says why.
	 */
	if (wire_hello_decode(p, n, &c->hello, &why) == -1) {
		log_warnx("%s: refused: %s", c->peer, why);
		d->stats.refused++;
		link_refusal_add(d, c->peer, NULL, why);
		conn_close(c, why, 0);
		return -1;
	}
	if (strcmp(c->hello.network, d->network) != 0) {
		log_warnx("%s: refused: node %s is in network %s, not %s",
		    c->peer, c->hello.node, c->hello.network, d->network);
		d->stats.refused++;
		snprintf(why_buf, sizeof(why_buf), "node %s is in network %s, "
		    "not %s", c->hello.node, c->hello.network, d->network);
		link_refusal_add(d, c->peer, c->hello.node, why_buf);
		conn_close(c, why_buf, 0);
		return -1;
	}
	if (strcmp(c->hello.node, d->node) == 0) {
		log_warnx("%s: refused: peer has our own node name %s",
		    c->peer, d->node);
		d->stats.refused++;
		snprintf(why_buf, sizeof(why_buf), "peer has our own node "
		    "name %s", d->node);
		link_refusal_add(d, c->peer, c->hello.node, why_buf);
		conn_close(c, why_buf, 0);
		return -1;
	}
	if (c->outgoing && strcmp(c->hello.node, link_peer(c->link)) != 0) {
		log_warnx("link %s: refused: %s is node %s, not %s",
		    c->link->name, c->peer, c->hello.node, link_peer(c->link));
		d->stats.refused++;
		snprintf(why_buf, sizeof(why_buf), "the peer is node %s, "
		    "not %s", c->hello.node, link_peer(c->link));
		link_refusal_add(d, c->peer, c->hello.node, why_buf);
		conn_close(c, why_buf, 0);
		return -1;
	}
	/* The certificate must be that of the node the hello claims to be. */
	if (c->tls && !c->outgoing && tls_check_peer(c->ssl, c->hello.node,
	    why_buf, sizeof(why_buf)) == -1) {
		log_warnx("%s: refused: %s", c->peer, why_buf);
		d->stats.tls_refused++;
		link_refusal_add(d, c->peer, c->hello.node, why_buf);
		conn_close(c, "certificate names another node", 0);
		return -1;
	}
	return conn_established(c);
}

/*
 * A plain connection wakes its reader when the message it waits for can be
 * complete, not for every segment of it: SO_RCVLOWAT is the rest of that
 * message (the kernel still wakes it early under memory pressure).  A TLS
 * connection's bytes are records, not messages: left alone.
 */
static void
conn_rcvlowat(struct conn *c, size_t need)
{
	int	 lowat;

	if (c->tls || c->ev_read == NULL)
		return;
	lowat = need > LINK_RCVLOWAT_MAX ? LINK_RCVLOWAT_MAX : (int)need;
	if (lowat < 1)
		lowat = 1;
	if (lowat == c->rcvlowat)
		return;
	if (setsockopt(event_get_fd(c->ev_read), SOL_SOCKET, SO_RCVLOWAT,
	    &lowat, sizeof(lowat)) == 0)
		c->rcvlowat = lowat;
}

/*
 * Room for at least one whole message at the end of the receive buffer:
 * the part of a message already there moves to the front (at most one
 * message, once per buffer's worth).  Returns the room, 0 without memory.
 */
static size_t
conn_rx_room(struct conn *c)
{
	if (c->rx == NULL) {
		if ((c->rx = malloc(LINK_RX_SIZE)) == NULL)
			return 0;
		c->rx_off = c->rx_end = 0;
	}
	if (c->rx_off == c->rx_end)
		c->rx_off = c->rx_end = 0;
	else if (LINK_RX_SIZE - c->rx_end < WIRE_HDR_LEN + WIRE_PAYLOAD_MAX) {
		memmove(c->rx, c->rx + c->rx_off, c->rx_end - c->rx_off);
		c->rx_end -= c->rx_off;
		c->rx_off = 0;
	}
	return LINK_RX_SIZE - c->rx_end;
}

/*
 * Handles the whole messages in the receive buffer, in place.  Returns -1
 * if c was closed (and may be freed).
 */
static int
conn_input(struct conn *c)
{
	struct vnetd	*d = c->d;
	struct wire_hdr	 h;
	struct wire_frame f;
	struct sw_frame	 sf;
	struct link	*l;
	const uint8_t	*p;
	const char	*why;
	size_t		 avail;

	for (;;) {
		p = c->rx + c->rx_off;
		avail = c->rx_end - c->rx_off;
		if (avail < WIRE_HDR_LEN) {
			conn_rcvlowat(c, WIRE_HDR_LEN - avail);
			return 0;
		}
		if (wire_hdr_decode(p, WIRE_HDR_LEN, &h, &why) == -1) {
			log_warnx("%s: malformed message: %s", c->peer, why);
			conn_close(c, why, 1);
			return -1;
		}
		if (c->state != CONN_UP && h.type != WIRE_HELLO) {
			log_warnx("%s: message before hello", c->peer);
			conn_close(c, "message before hello", 1);
			return -1;
		}
		if (c->state == CONN_UP && h.type == WIRE_HELLO) {
			log_warnx("%s: second hello", c->peer);
			conn_close(c, "second hello", 1);
			return -1;
		}
		if (avail < WIRE_HDR_LEN + h.len) {
			conn_rcvlowat(c, WIRE_HDR_LEN + h.len - avail);
			return 0;
		}
		c->rx_off += WIRE_HDR_LEN + h.len;
		p += WIRE_HDR_LEN;

		switch (h.type) {
		case WIRE_HELLO:
			if (conn_hello(c, p, h.len) == -1)
				return -1;
			break;
		case WIRE_KEEPALIVE:
			break;
		case WIRE_NODE:
			if (!(routing_caps(d->routing) & WIRE_CAP_NODES))
				why = "node record, but none was asked for";
			else if (routing_input(d->routing, c->link, p, h.len,
			    &why) == 0)
				break;
			log_warnx("%s: malformed node record: %s", c->peer,
			    why);
			conn_close(c, why, 1);
			return -1;
		case WIRE_BYE:
			conn_close(c, "peer said goodbye", 0);
			return -1;
		case WIRE_FRAME:
			if (wire_frame_decode(p, h.len, &f, &why) == -1) {
				log_warnx("%s: malformed frame: %s", c->peer,
				    why);
				conn_close(c, why, 1);
				return -1;
			}
			l = c->link;
			l->c.frames_in++;
			l->c.bytes_in += f.len;
			sf.vh = sw_vh(f.vh);
			sf.eth = f.eth;
			sf.len = f.len;
			sf.hops = h.hops;
			sf.origin = f.origin;
			sf.seq = f.seq;
			/* Forwarding never closes this connection. */
			sw_input(d->sw, &l->port, &sf);
			break;
		}
	}
}

/* A plain connection's socket is readable (or silent too long). */
static void
conn_sockreadcb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;
	ssize_t		 n;
	size_t		 room;
	int		 i;

	if (what & EV_TIMEOUT) {
		conn_close(c, c->state == CONN_UP ? "peer silent" :
		    "handshake timeout", 0);
		return;
	}
	/* A few reads at most, then the other events get their turn. */
	for (i = 0; i < LINK_RX_READS; i++) {
		if ((room = conn_rx_room(c)) == 0) {
			conn_close(c, "out of memory", 0);
			return;
		}
		n = read(fd, c->rx + c->rx_end, room);
		if (n == 0) {
			conn_close(c, conn_closed_why(c), 0);
			return;
		}
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				return;
			conn_close(c, strerror(errno), 0);
			return;
		}
		c->rx_end += (size_t)n;
		if (conn_input(c) == -1)
			return;
		if ((size_t)n < room)
			return;		/* the socket is empty */
	}
}

/*
 * A TLS connection failed: say why, and count it as a refusal when it was
 * this side that refused the peer's certificate.  first: the first OpenSSL
 * error, 0 for none (sockerr then says what the system call met).
 */
static void
conn_tls_error(struct conn *c, int sockerr, unsigned long first, char *why,
    size_t len)
{
	if (first == 0 && SSL_get_verify_result(c->ssl) == X509_V_OK) {
		/* Not TLS's doing: the connection itself failed. */
		snprintf(why, len, "%s", sockerr != 0 ?
		    evutil_socket_error_to_string(sockerr) :
		    "connection failed");
		return;
	}
	if (tls_failure(c->ssl, first, why, len)) {
		c->d->stats.tls_refused++;
		link_refusal_add(c->d, c->peer, NULL, why);
		log_warnx("%s: refused: %s", c->peer, why);
	} else if (c->state != CONN_UP) {
		c->d->stats.tls_failed++;
		log_warnx("%s: TLS handshake failed: %s", c->peer, why);
	}
}

/*
 * What a TLS call that did not succeed means for c: waiting is 0, the end
 * is -1 with the reason in c->fail (the caller closes c, or has it closed).
 */
static int
conn_tls_wait(struct conn *c, enum tls_io r, unsigned long err, int writing)
{
	int	 sockerr = errno;

	switch (r) {
	case TLS_IO_OK:
		return 0;
	case TLS_IO_WANT_READ:
		if (writing)
			c->wr_wants_rd = 1;	/* ev_read is always on */
		return 0;
	case TLS_IO_WANT_WRITE:
		if (!writing)
			c->rd_wants_wr = 1;
		event_add(c->ev_write, NULL);
		return 0;
	case TLS_IO_CLOSED:
		c->fail = conn_closed_why(c);
		return -1;
	case TLS_IO_ERROR:
		break;
	}
	conn_tls_error(c, sockerr, err, c->fail_buf, sizeof(c->fail_buf));
	c->fail = c->fail_buf;
	return -1;
}

/*
 * Writes the tx buffer as records, as far as the socket takes them; the
 * write event finishes the job.  Returns -1 with c->fail set if c must
 * close (the caller closes it, or has it closed).
 */
static int
conn_tls_flush(struct conn *c)
{
	unsigned long	 err;
	enum tls_io	 r;
	size_t		 n;

	c->wr_wants_rd = 0;
	while (c->tx_off < c->tx_end) {
		r = tls_write(c->ssl, c->tx + c->tx_off, c->tx_end - c->tx_off,
		    &n, &err);
		if (r != TLS_IO_OK)
			return conn_tls_wait(c, r, err, 1);
		c->tx_off += n;
	}
	c->tx_off = c->tx_end = 0;
	return 0;
}

/* TLS is up: an incoming connection says hello, an outgoing one checks first. */
static void
conn_connected(struct conn *c)
{
	char	 why[160];

	conn_sockopts(bufferevent_getfd(c->bev));
	if (c->state == CONN_TLS) {
		log_debug("%s: TLS handshake done", c->peer);
		conn_send_hello(c);
		return;
	}
	if (c->tls && tls_check_peer(c->ssl, link_peer(c->link), why,
	    sizeof(why)) == -1) {
		log_warnx("link %s: refused %s: %s", c->link->name, c->peer,
		    why);
		c->d->stats.tls_refused++;
		link_refusal_add(c->d, c->peer, link_peer(c->link), why);
		conn_close(c, why, 0);
		return;
	}
	log_debug("link %s: connected to %s", c->link->name, c->peer);
	link_set_state(c->link, LINK_HANDSHAKE, NULL);
	conn_send_hello(c);
}

/* One step of the TLS handshake (which may close c). */
static void
conn_tls_handshake(struct conn *c)
{
	unsigned long	 err;
	enum tls_io	 r;

	if ((r = tls_handshake(c->ssl, &err)) != TLS_IO_OK) {
		if (conn_tls_wait(c, r, err, 0) == -1)
			conn_close(c, c->fail, 0);
		return;
	}
	c->tls_up = 1;
	c->rd_wants_wr = 0;
	event_del(c->ev_write);
	/* Records read ahead with the handshake's last are read on the next turn. */
	event_active(c->ev_read, EV_READ, 0);
	conn_connected(c);
}

/*
 * TCP is up (or accepted): TLS takes the socket from the bufferevent, and
 * the handshake starts from the loop.
 */
static int
conn_tls_start(struct conn *c)
{
	evutil_socket_t	 fd;

	if ((fd = bufferevent_getfd(c->bev)) < 0 || c->d->tls == NULL)
		return -1;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	if ((c->ssl = tls_conn_new(c->d->tls, fd, c->outgoing)) == NULL ||
	    (c->ev_write = event_new(c->d->base, fd, EV_WRITE,
	    conn_tls_writecb, c)) == NULL ||
	    conn_read_start(c, NULL) == -1)
		return -1;
	event_active(c->ev_write, EV_WRITE, 0);
	return 0;
}

/*
 * What a TLS connection's socket events do first: close it if it must, or
 * run the handshake.  Returns 1 if that was all (c may be gone).
 */
static int
conn_tls_event_done(struct conn *c)
{
	if (c->fail != NULL) {
		conn_close(c, c->fail, 0);
		return 1;
	}
	if (!c->tls_up) {
		conn_tls_handshake(c);
		return 1;
	}
	return 0;
}

/*
 * Writes what waits in the tx buffer and refills it from the link's queue
 * once there is room.  Returns -1 if c was closed.
 */
static int
conn_tls_write_more(struct conn *c)
{
	if (conn_tls_flush(c) == -1) {
		conn_close(c, c->fail, 0);
		return -1;
	}
	if (c->link != NULL && c->link->conn == c &&
	    conn_out_len(c) <= LINK_OUT_LOW)
		link_drain(c->link);
	return 0;
}

/* A TLS connection's socket is readable (or silent too long). */
static void
conn_tls_readcb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;
	unsigned long	 err;
	enum tls_io	 r;
	size_t		 room, n;
	int		 i;

	if (what & EV_TIMEOUT) {
		conn_close(c, c->state == CONN_UP ? "peer silent" :
		    "handshake timeout", 0);
		return;
	}
	if (conn_tls_event_done(c) ||
	    (c->wr_wants_rd && conn_tls_write_more(c) == -1))
		return;
	for (i = 0; i < LINK_TLS_READS; i++) {
		if ((room = conn_rx_room(c)) == 0) {
			conn_close(c, "out of memory", 0);
			return;
		}
		r = tls_read(c->ssl, c->rx + c->rx_end, room, &n, &err);
		if (r != TLS_IO_OK) {
			if (conn_tls_wait(c, r, err, 0) == -1)
				conn_close(c, c->fail, 0);
			return;
		}
		c->rx_end += n;
		if (conn_input(c) == -1)
			return;
	}
	/* Records read ahead and not decrypted: after the other events. */
	if (SSL_has_pending(c->ssl))
		event_active(c->ev_read, EV_READ, 0);
}

/* A TLS connection's socket is writable, or its handshake is to start. */
static void
conn_tls_writecb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	if (c->state == CONN_CLOSING) {
		if (conn_tls_flush(c) == -1 || c->tx_off == c->tx_end)
			conn_free(c);
		return;
	}
	if (conn_tls_event_done(c))
		return;
	if (c->rd_wants_wr) {
		c->rd_wants_wr = 0;
		event_active(c->ev_read, EV_READ, 0);
	}
	(void)conn_tls_write_more(c);
}

static void
conn_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;
	char		 why[160];
	int		 err = EVUTIL_SOCKET_ERROR();

	if (what & BEV_EVENT_CONNECTED) {
		if (!c->tls)
			conn_connected(c);
		else if (conn_tls_start(c) == -1)
			conn_close(c, "cannot start TLS: out of memory", 0);
		return;
	}
	if (c->fail != NULL)
		snprintf(why, sizeof(why), "%s", c->fail);
	else if (what & BEV_EVENT_TIMEOUT)
		snprintf(why, sizeof(why), "%s",
		    c->state == CONN_UP ? "peer silent" : "handshake timeout");
	else if (what & BEV_EVENT_EOF)
		snprintf(why, sizeof(why), "%s", conn_closed_why(c));
	else if (what & BEV_EVENT_ERROR) {
		int dnserr = bufferevent_socket_get_dns_error(bev);

		if (dnserr != 0)
			snprintf(why, sizeof(why), "%s",
			    evutil_gai_strerror(dnserr));
		else
			snprintf(why, sizeof(why), "%s",
			    evutil_socket_error_to_string(err));
	} else
		snprintf(why, sizeof(why), "event 0x%x", what);
	conn_close(c, why, 0);
}

/* Pending connections from host: a scan, LINK_PENDING_MAX at most. */
static size_t
conn_pending_from(struct vnetd *d, const char *host)
{
	struct conn	*c;
	size_t		 n = 0;

	TAILQ_FOREACH(c, &d->pending, entry)
		if (strcmp(c->from, host) == 0)
			n++;
	return n;
}

void
conn_accept(struct vnetd *d, int fd, const struct sockaddr *sa, int socklen,
    int tls)
{
	struct conn	*c;
	char		 host[INET6_ADDRSTRLEN];
	uint16_t	 port = 0;
	uint64_t	 now;

	host[0] = '\0';
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;
		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		port = ntohs(sin6->sin6_port);
	}
	/*
	 * A flood of connections that never say hello must not take all
	 * descriptors and memory: past the limit, new ones are closed at
	 * once (and logged at most once a second, or the log is the flood).
	 */
	if (d->npending >= LINK_PENDING_MAX) {
		d->stats.pending_full++;
		now = vnetd_now_ms();
		if (now - d->pending_full_logged >= 1000) {
			d->pending_full_logged = now;
			log_warnx("connection from %s closed: %d connections "
			    "are waiting for their handshake (%llu closed so "
			    "far)", host, LINK_PENDING_MAX,
			    (unsigned long long)d->stats.pending_full);
		}
		evutil_closesocket(fd);
		return;
	}
	/* Nor may one address take all the slots that others need. */
	if (conn_pending_from(d, host) >= LINK_PENDING_PER_ADDR) {
		d->stats.pending_addr_full++;
		now = vnetd_now_ms();
		if (now - d->pending_addr_logged >= 1000) {
			d->pending_addr_logged = now;
			log_warnx("connection from %s closed: %d connections "
			    "from that address are waiting for their "
			    "handshake (%llu closed so far)", host,
			    LINK_PENDING_PER_ADDR,
			    (unsigned long long)d->stats.pending_addr_full);
		}
		evutil_closesocket(fd);
		return;
	}
	conn_sockopts(fd);
	if ((c = conn_new(d, fd, 0, tls)) == NULL) {
		log_warn("accept");
		evutil_closesocket(fd);
		return;
	}
	snprintf(c->from, sizeof(c->from), "%s", host);
	snprintf(c->peer, sizeof(c->peer), sa->sa_family == AF_INET6 ?
	    "[%s]:%u" : "%s:%u", host, port);
	TAILQ_INSERT_TAIL(&d->pending, c, entry);
	c->pending = 1;
	d->npending++;
	log_debug("connection from %s%s", c->peer, tls ? " (TLS)" : "");
	if (!tls)
		conn_send_hello(c);
	else if (conn_tls_start(c) == -1)
		conn_close(c, "cannot start TLS: out of memory", 0);
}

/*
 * Moves frames from the link's queue to its connection while the output
 * buffer has room and the shaper lets them go; the AQM judges each on the
 * way.  Keepalives and handshakes are written to the output directly: they
 * never wait behind data.
 */
static void
link_drain(struct link *l)
{
	struct conn	*c = l->conn;
	struct evbuffer	*out = NULL;
	struct lq_item	 it;
	struct timeval	 tv;
	uint64_t	 now, wait;
	size_t		 len;
	int		 more = 1, r;

	if (c == NULL || c->state != CONN_UP ||
	    evtimer_pending(l->ev_pace, NULL) ||
	    (len = conn_out_len(c)) >= LINK_OUT_MAX)
		return;
	if (!c->tls) {
		out = bufferevent_get_output(c->bev);
		/* One allocation for the batch, not one per frame or two. */
		if (sched_frames(&l->sched) > 1)
			(void)evbuffer_expand(out, LINK_OUT_MAX - len);
	}
	now = vnetd_now_us();
 again:
	while (more && conn_out_len(c) < LINK_OUT_MAX) {
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
		r = out != NULL ? evbuffer_add(out, it.data, it.len) :
		    conn_tx_add(c, it.data, it.len);
		if (r == -1) {
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
	if (!c->tls)
		return;
	if (conn_tls_flush(c) == -1) {
		conn_fail_later(c, c->fail);
		return;
	}
	if (more && conn_out_len(c) <= LINK_OUT_LOW)
		goto again;
}

/*
 * A TLS connection's direct way: the frame goes into the empty tx buffer
 * (the one copy encryption needs contiguous) and out as records.
 */
static int
link_send_tls(struct link *l, const uint8_t *pre, size_t prelen,
    const uint8_t *eth, size_t len)
{
	struct conn	*c = l->conn;

	if (c->tx_off != c->tx_end || c->wr_wants_rd)
		return -1;
	if (conn_tx_add(c, pre, prelen) == -1)
		return -1;
	if (conn_tx_add(c, eth, len) == -1) {
		c->tx_off = c->tx_end = 0;
		return -1;
	}
	if (conn_tls_flush(c) == -1)
		conn_fail_later(c, c->fail);
	sched_bypassed(&l->sched, vnetd_now_us());
	l->c.frames_out++;
	l->c.bytes_out += len;
	return 0;
}

/*
 * A frame that need not wait goes straight into a connection's socket:
 * nothing queued in the link or its output buffer, no rate, and (plain)
 * the kernel holding less than LINK_NOTSENT_LOWAT unsent, as when the
 * output would be written at once.  That saves the two copies (into the
 * queue, into the output buffer) that the way through the queue costs.
 * What the socket does not take goes into the output buffer, ahead of all
 * else.  Returns 0 if the frame went (or was handed on), -1 to queue it.
 */
static int
link_send_direct(struct link *l, const uint8_t *pre, size_t prelen,
    const uint8_t *eth, size_t len)
{
	struct evbuffer	*out;
	struct iovec	 iov[2];
	evutil_socket_t	 fd;
	ssize_t		 n;
	size_t		 done;
	int		 unsent;

	if (!sched_may_bypass(&l->sched) || evtimer_pending(l->ev_pace, NULL))
		return -1;
	if (l->conn->tls)
		return link_send_tls(l, pre, prelen, eth, len);
	out = bufferevent_get_output(l->conn->bev);
	if (evbuffer_get_length(out) != 0 ||
	    (fd = bufferevent_getfd(l->conn->bev)) < 0)
		return -1;
	if (ioctl(fd, SIOCOUTQNSD, &unsent) == -1 ||
	    unsent >= LINK_NOTSENT_LOWAT)
		return -1;
	iov[0].iov_base = (void *)(uintptr_t)pre;
	iov[0].iov_len = prelen;
	iov[1].iov_base = (void *)(uintptr_t)eth;
	iov[1].iov_len = len;
	if ((n = writev(fd, iov, 2)) == -1)
		return -1;	/* full, or an error the bufferevent will see */
	done = (size_t)n;
	if (done < prelen) {
		if (evbuffer_add(out, pre + done, prelen - done) == -1 ||
		    evbuffer_add(out, eth, len) == -1)
			goto lost;
	} else if (done < prelen + len &&
	    evbuffer_add(out, eth + (done - prelen), prelen + len - done) == -1)
		goto lost;
	sched_bypassed(&l->sched, vnetd_now_us());
	l->c.frames_out++;
	l->c.bytes_out += len;
	return 0;
lost:
	/*
	 * Half a message is in the stream: the connection cannot go on.  It
	 * is closed from the loop: the caller may be forwarding over it.
	 */
	conn_fail_later(l->conn, "out of memory");
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

	wire_frame_encode_prefix(pre, f->len, f->hops, f->origin, f->seq,
	    f->vh);
	if (link_send_direct(l, pre, sizeof(pre), f->eth, f->len) == 0)
		return;
	if (sched_enqueue(&l->sched, vnetd_now_us(), pre, f->eth,
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
	return SW_F_OFFLOAD;
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

/*
 * A peer that refuses us closes before the handshake is done, and only
 * its side knows why: say where to look.
 */
static const char *
conn_closed_why(const struct conn *c)
{
	if (c->state == CONN_UP || c->state == CONN_CLOSING)
		return "connection closed by peer";
	return "closed by the peer during the handshake: refused? (the "
	    "peer's vnetctl show refused says why)";
}

void
link_refusal_add(struct vnetd *d, const char *peer, const char *node,
    const char *why)
{
	struct link_refusals	*rs = &d->refused;
	struct link_refusal	*r = &rs->r[rs->next];

	r->at = vnetd_now_ms();
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
link_tick(struct vnetd *d, uint64_t now)
{
	struct link	*l;
	uint64_t	 dt;

	TAILQ_FOREACH(l, &d->links, entry) {
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

void
link_show_links(struct vnetd *d, int all, struct evbuffer *out)
{
	struct link	*l;
	uint64_t	 now = vnetd_now_ms();
	char		 addr[STMT_HOST_MAX + 10], rate[32], since[32];
	char		 in[16], outr[16], rates[160], trigger[32];
	const char	*peer, *origin, *reason;

	if (!all)
		evbuffer_add_printf(out, "%%columns name\tstate\tpeer\tsince\t"
		    "rate_in\trate_out\tlast_error\torigin\n");
	else
		evbuffer_add_printf(out, "%%columns name\tstate\tdir\tpeer\t"
		    "frames_in\tbytes_in\tframes_out\tbytes_out\tdrops\t"
		    "connects\tqueue_bytes\tqueue_frames\tce_marks\t"
		    "aqm_drops\ttail_drops\trate\tfat_drops\torigin\ttrigger\t"
		    "since\trate_in\trate_out\tlast_error\treason" HISTORY_COLUMNS
		    "\n");
	TAILQ_FOREACH(l, &d->links, entry) {
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
		origin = routing_link_origin(d->routing, l, trigger,
		    sizeof(trigger), &reason);
		if (!all) {
			evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t"
			    "%s\n", l->name, link_state_name(l->state), peer,
			    since, in, outr, l->last_error[0] != '\0' ?
			    l->last_error : "-", origin);
			continue;
		}
		evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%llu\t%llu\t%llu\t"
		    "%llu\t%llu\t%llu\t%zu\t%zu\t%llu\t%llu\t%llu\t%s\t%llu\t"
		    "%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", l->name,
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
		    origin, trigger, since, in, outr,
		    l->last_error[0] != '\0' ? l->last_error : "-", reason,
		    history_fields(d->history, HISTORY_LINK, l->name, rates,
		    sizeof(rates)));
	}
}

int
link_show(struct vnetd *d, const char *name, struct evbuffer *out,
    char *err, size_t errlen)
{
	struct link		*l;
	const struct sched	*sc;
	struct sched_quantiles	 qt;
	uint64_t		 now = vnetd_now_ms();
	char			 buf[STMT_HOST_MAX + 10], cc[STMT_CONGESTION_MAX + 1];

	if ((l = link_find(d, name)) == NULL) {
		snprintf(err, errlen, "no link %s", name);
		return -1;
	}
	sc = &l->sched;
	sched_quantiles(sc, vnetd_now_us(), &qt);
	evbuffer_add_printf(out, "%%columns name\tvalue\n");
#define ROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
#define ROWS(n, v) evbuffer_add_printf(out, "%s\t%s\n", n, v)
	ROWS("name", l->name);
	ROWS("state", link_state_name(l->state));
	ROWS("dir", (l->conn != NULL ? l->conn->outgoing : l->configured) ?
	    "out" : "in");
	ROWS("peer", link_peer_text(l, buf, sizeof(buf)));
	ROWS("node", link_peer(l));
	ROWS("tls", l->tls || (l->conn != NULL && l->conn->tls) ? "yes" :
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
#undef ROW
#undef ROWS
	return 0;
}

void
link_show_refused(struct vnetd *d, struct evbuffer *out)
{
	const struct link_refusals *rs = &d->refused;
	const struct link_refusal *r;
	uint64_t	 now = vnetd_now_ms();
	size_t		 i, n;
	char		 ago[32];

	evbuffer_add_printf(out, "%%columns ago\tpeer\tnode\twhy\n");
	n = rs->total < LINK_REFUSED_MAX ? (size_t)rs->total :
	    LINK_REFUSED_MAX;
	/* The latest first. */
	for (i = 1; i <= n; i++) {
		r = &rs->r[(rs->next + LINK_REFUSED_MAX - i) % LINK_REFUSED_MAX];
		evbuffer_add_printf(out, "%s\t%s\t%s\t%s\n",
		    link_ago(now - r->at, ago, sizeof(ago)), r->peer, r->node,
		    r->why);
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
link_send_node(struct link *l, const uint8_t *p, size_t n)
{
	uint8_t	 hdr[WIRE_HDR_LEN];
	size_t	 room;

	if (link_node_peer(l) == NULL || l->conn->closing)
		return -1;
	/*
	 * Records bypass the link's queue, so a peer that does not read must
	 * not make them pile up: past a bound (the TLS buffer's room, or
	 * LINK_NODE_OUT_MAX) a record is left out; the next refresh repairs
	 * what it would have said.
	 */
	room = l->conn->tls ? LINK_TX_SIZE : LINK_NODE_OUT_MAX;
	if (conn_out_len(l->conn) + sizeof(hdr) + n > room)
		return -1;
	wire_node_encode_hdr(hdr, n);
	conn_write(l->conn, hdr, sizeof(hdr));
	conn_write(l->conn, p, n);
	return 0;
}

uint32_t
link_rtt_us(const struct link *l)
{
	struct tcp_info	 ti;
	socklen_t	 len = sizeof(ti);
	evutil_socket_t	 fd;

	if (l->conn == NULL || (fd = bufferevent_getfd(l->conn->bev)) < 0 ||
	    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1)
		return 0;
	return ti.tcpi_rtt;
}
