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

#include "conn.h"
#include "log.h"
#include "metric.h"
#include "wire.h"

static void	conn_sockreadcb(evutil_socket_t, short, void *);
static void	conn_eventcb(struct bufferevent *, short, void *);
static void	conn_flush(struct conn *);

void
conns_init(struct conns *cs, struct event_base *base, struct evdns_base *dns,
    uint64_t (*now_ms)(void), const struct conn_cbs *cbs, void *arg)
{
	memset(cs, 0, sizeof(*cs));
	cs->base = base;
	cs->dns = dns;
	cs->now_ms = now_ms;
	cs->cbs = cbs;
	cs->arg = arg;
	TAILQ_INIT(&cs->pending);
	TAILQ_INIT(&cs->closing);
}

void
conns_free_pending(struct conns *cs)
{
	struct conn	*c;

	while ((c = TAILQ_FIRST(&cs->pending)) != NULL)
		conn_free(c);
}

void
conns_free_closing(struct conns *cs)
{
	struct conn	*c;

	/* The BYEs just queued go out now, if the peers take them. */
	while ((c = TAILQ_FIRST(&cs->closing)) != NULL) {
		conn_flush(c);
		conn_free(c);
	}
}

int
conn_tls(const struct conn *c)
{
	return c->io == &conn_tls_io;
}

int
conn_fd(const struct conn *c)
{
	return bufferevent_getfd(c->bev);
}

static void
conn_sockopts(evutil_socket_t fd)
{
	int	 one = 1, lowat = CONN_NOTSENT_LOWAT;

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

static void
conn_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct conn	*c = arg;

	if (c->state == CONN_CLOSING) {
		conn_free(c);		/* its BYE did not get out in time */
		return;
	}
	c->cs->stats.handshake_timeouts++;
	log_warnx("%s: no handshake within %d s", c->peer,
	    CONN_HANDSHAKE_TIMEOUT);
	conn_close(c, "handshake timeout", 0);
}

static struct conn *
conn_new(struct conns *cs, evutil_socket_t fd, int outgoing, int tls)
{
	struct conn	*c;
	struct timeval	 tv = { CONN_HANDSHAKE_TIMEOUT, 0 };

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->cs = cs;
	c->outgoing = outgoing;
	c->io = tls ? &conn_tls_io : &conn_plain_io;
	if (outgoing)
		c->state = CONN_CONNECTING;
	else
		c->state = tls ? CONN_TLS : CONN_HANDSHAKE;
	if ((c->ev_deadline = evtimer_new(cs->base, conn_deadline_cb,
	    c)) == NULL) {
		free(c);
		return NULL;
	}
	/*
	 * Every connection has a socket bufferevent: it connects (resolving
	 * the name first), and a plain connection writes through it.  A TLS
	 * connection leaves it once TCP is up (conn_tls.c).
	 */
	if ((c->bev = bufferevent_socket_new(cs->base, fd,
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

void
conn_unpend(struct conn *c)
{
	if (c->pending) {
		TAILQ_REMOVE(&c->cs->pending, c, entry);
		c->pending = 0;
		c->cs->npending--;
	}
	if (c->closing) {
		TAILQ_REMOVE(&c->cs->closing, c, entry);
		c->closing = 0;
	}
}

void
conn_free(struct conn *c)
{
	struct linger	 lg = { 1, 0 };
	evutil_socket_t	 fd;

	conn_unpend(c);
	if (c->dead && (fd = bufferevent_getfd(c->bev)) != -1)
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	if (c->ev_keepalive != NULL)
		event_free(c->ev_keepalive);
	if (c->ev_deadline != NULL)
		event_free(c->ev_deadline);
	if (c->ev_read != NULL)
		event_free(c->ev_read);
	c->io->free(c);		/* the socket is the bufferevent's */
	bufferevent_free(c->bev);
	free(c->rx);
	free(c);
}

static void
conn_flush(struct conn *c)
{
	(void)c->io->flush(c);
}

void
conn_fail_later(struct conn *c, const char *why)
{
	if (c->fail == NULL)
		c->fail = why;
	c->io->wake(c);
}

size_t
conn_out_len(const struct conn *c)
{
	return c->io->out_len(c);
}

void
conn_reserve(struct conn *c, size_t n)
{
	c->io->reserve(c, n);
}

int
conn_add(struct conn *c, const void *p, size_t n)
{
	return c->io->add(c, p, n);
}

int
conn_push(struct conn *c)
{
	if (c->io->autoflush)
		return 0;
	if (c->io->flush(c) == -1) {
		conn_fail_later(c, c->fail);
		return 0;
	}
	return 1;
}

int
conn_send_direct(struct conn *c, const uint8_t *pre, size_t prelen,
    const uint8_t *eth, size_t len)
{
	return c->io->direct(c, pre, prelen, eth, len);
}

/*
 * Sends a message of ours (hello, keepalive, BYE): into the output and out.
 * A failure closes c from the loop.
 */
static void
conn_write(struct conn *c, const void *p, size_t n)
{
	if (c->io->add(c, p, n) == -1) {
		if (c->state != CONN_UP || n > WIRE_HDR_LEN)
			conn_fail_later(c, "out of memory");
		return;		/* a keepalive: the link is not moving anyway */
	}
	(void)conn_push(c);
}

int
conn_send_node(struct conn *c, const uint8_t *p, size_t n)
{
	uint8_t	 hdr[WIRE_HDR_LEN];

	if (c->closing)
		return -1;
	/*
	 * Records bypass the link's queue, so a peer that does not read must
	 * not make them pile up: past a bound (the TLS buffer's room, or
	 * CONN_NODE_OUT_MAX) a record is left out; the next refresh repairs
	 * what it would have said.
	 */
	if (conn_out_len(c) + sizeof(hdr) + n > c->io->node_out_max)
		return -1;
	wire_node_encode_hdr(hdr, n);
	conn_write(c, hdr, sizeof(hdr));
	conn_write(c, p, n);
	return 0;
}

int
conn_send_dgram(struct conn *c, const struct wire_dgram *d)
{
	uint8_t	 buf[WIRE_HDR_LEN + WIRE_DGRAM_LEN];

	if (c->closing || c->state != CONN_UP ||
	    !(c->hello.caps & WIRE_CAP_DGRAM) ||
	    conn_out_len(c) + sizeof(buf) > c->io->node_out_max)
		return -1;
	wire_dgram_encode(buf, d);
	conn_write(c, buf, sizeof(buf));
	return 0;
}

int
conn_send_probe(struct conn *c, const struct wire_probe *pr)
{
	uint8_t	 buf[WIRE_HDR_LEN + WIRE_PROBE_LEN];

	/* Behind a backed-up output a probe says nothing the peer can use. */
	if (c->closing || c->state != CONN_UP ||
	    !(c->hello.caps & WIRE_CAP_LIVENESS) ||
	    conn_out_len(c) + sizeof(buf) > c->io->node_out_max)
		return -1;
	wire_probe_encode(buf, pr);
	conn_write(c, buf, sizeof(buf));
	return 0;
}

int
conn_send_seen(struct conn *c, uint8_t kind, const char *addr)
{
	uint8_t		 buf[WIRE_HDR_LEN + 2 + WIRE_SEEN_ADDR_MAX];
	struct wire_seen s;
	size_t		 n;

	memset(&s, 0, sizeof(s));
	s.kind = kind;
	snprintf(s.addr, sizeof(s.addr), "%s", addr);
	if (c->closing || c->state != CONN_UP ||
	    !(c->hello.caps & WIRE_CAP_SEEN) ||
	    (n = wire_seen_encode(buf, &s)) == 0 ||
	    conn_out_len(c) + n > c->io->node_out_max)
		return -1;
	conn_write(c, buf, n);
	return 0;
}

const char *
conn_addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	char	 host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host,
			    sizeof(host));
			snprintf(buf, len, "%s:%u", host,
			    ntohs(in6->sin6_port));
		} else {
			inet_ntop(AF_INET6, &in6->sin6_addr, host,
			    sizeof(host));
			snprintf(buf, len, "[%s]:%u", host,
			    ntohs(in6->sin6_port));
		}
	} else
		snprintf(buf, len, "-");
	return buf;
}

/* The peer is told where its connection comes from (or went to). */
static void
conn_tell_seen(struct conn *c)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	char			 a[INET6_ADDRSTRLEN + 8];

	if (!(c->hello.caps & WIRE_CAP_SEEN) ||
	    getpeername(bufferevent_getfd(c->bev), (struct sockaddr *)&ss,
	    &len) == -1 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return;
	(void)conn_send_seen(c, WIRE_SEEN_CONN,
	    conn_addr_text((struct sockaddr *)&ss, a, sizeof(a)));
}

/*
 * Starts reading.  The socket is read here, not by the bufferevent, into
 * the connection's own buffer, so that a read takes what the kernel has
 * (libevent's takes at most 4 KiB) and frames are handed on from where
 * they arrived, without a copy; over TLS, records decrypt into it.
 * timeout: the silence that closes the connection, NULL for none.
 */
int
conn_read_start(struct conn *c, const struct timeval *timeout)
{
	evutil_socket_t	 fd;

	if (c->ev_read == NULL) {
		if ((fd = bufferevent_getfd(c->bev)) < 0)
			return -1;
		if ((c->ev_read = event_new(c->cs->base, fd,
		    EV_READ | EV_PERSIST, c->io->readcb, c)) == NULL)
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
	struct wire_hello	 h;
	uint8_t			 buf[WIRE_HDR_LEN + WIRE_HELLO_MAX];
	size_t			 n;

	c->cs->cbs->hello(c->cs->arg, &h);
	h.caps |= c->hello_extra;
	c->caps = h.caps;
	n = wire_hello_encode(buf, sizeof(buf), &h);
	c->state = CONN_HANDSHAKE;
	conn_write(c, buf, n);
	if (conn_read_start(c, NULL) == -1)
		log_warn("%s: cannot read", c->peer);	/* the deadline ends it */
}

struct conn *
conn_dial(struct conns *cs, struct link *l, const char *name,
    const char *expect, const char *peer, int tls)
{
	struct conn	*c;

	if ((c = conn_new(cs, -1, 1, tls)) == NULL)
		return NULL;
	c->link = l;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->expect, sizeof(c->expect), "%s", expect);
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	return c;
}

int
conn_connect(struct conn *c, const char *host, uint16_t port)
{
	/* A literal needs no lookup; a name is resolved without blocking. */
	return bufferevent_socket_connect_hostname(c->bev, c->cs->dns,
	    AF_UNSPEC, host, port);
}

int
conn_socket_from(int family, uint16_t lport)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	int			 fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(lport);
		len = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(lport);
		len = sizeof(struct sockaddr_in6);
	}
	if ((fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&ss, len) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

int
conn_connect_from(struct conn *c, const char *host, uint16_t port,
    uint16_t lport)
{
	struct sockaddr_storage	 ss;
	int			 len = sizeof(ss), fd;
	char			 hp[STMT_HOST_MAX + 16];

	snprintf(hp, sizeof(hp), strchr(host, ':') != NULL ? "[%s]:%u" :
	    "%s:%u", host, port);
	if (evutil_parse_sockaddr_port(hp, (struct sockaddr *)&ss, &len) == -1 ||
	    (fd = conn_socket_from(ss.ss_family, lport)) == -1)
		return -1;
	if (bufferevent_setfd(c->bev, fd) == -1) {
		close(fd);
		return -1;
	}
	return bufferevent_socket_connect(c->bev, (struct sockaddr *)&ss, len);
}

static void
keepalive_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct conn	*c = arg;
	uint8_t		 buf[WIRE_HDR_LEN];

	wire_empty_encode(buf, WIRE_KEEPALIVE);
	conn_write(c, buf, sizeof(buf));
}

void
conn_writable(struct conn *c)
{
	if (c->link != NULL)
		c->cs->cbs->writable(c->cs->arg, c);
}

/* Returns -1 if c was closed instead. */
static int
conn_established(struct conn *c)
{
	struct conns	*cs = c->cs;
	struct wire_hello ours;
	struct timeval	 tv;

	if (cs->cbs->join(cs->arg, c) == -1)
		return -1;
	evtimer_del(c->ev_deadline);
	c->state = CONN_UP;
	c->up_since = cs->now_ms();

	/* Silent for three of the peer's intervals: the link is down. */
	tv.tv_sec = 3 * c->hello.keepalive;
	tv.tv_usec = 0;
	(void)conn_read_start(c, &tv);
	c->io->established(c);
	cs->cbs->hello(cs->arg, &ours);
	tv.tv_sec = ours.keepalive;
	c->ev_keepalive = event_new(cs->base, -1, EV_PERSIST, keepalive_cb, c);
	if (c->ev_keepalive != NULL)
		event_add(c->ev_keepalive, &tv);
	conn_tell_seen(c);
	cs->cbs->established(cs->arg, c);
	return 0;
}

void
conn_close(struct conn *c, const char *why, int bad)
{
	struct conns	*cs = c->cs;
	uint8_t		 buf[WIRE_HDR_LEN];
	int		 was_up = c->state == CONN_UP;

	if (bad)
		cs->stats.bad_messages++;
	if (c->link != NULL)
		cs->cbs->lost(cs->arg, c, why);
	else if (c->pending) {
		log_info("connection from %s: closing: %s", c->peer, why);
		conn_unpend(c);
	}
	c->link = NULL;
	if (c->ev_keepalive != NULL) {
		event_free(c->ev_keepalive);
		c->ev_keepalive = NULL;
	}
	if (!was_up || bad || c->dead || c->state == CONN_CLOSING) {
		c->state = CONN_CLOSING;
		conn_free(c);
		return;
	}
	c->state = CONN_CLOSING;
	TAILQ_INSERT_TAIL(&cs->closing, c, entry);
	c->closing = 1;
	wire_empty_encode(buf, WIRE_BYE);
	conn_read_stop(c);
	if (c->io->bye(c, buf, sizeof(buf)) == -1)
		conn_free(c);
}

void
conn_refused(struct conn *c, const char *node, const char *why)
{
	c->cs->cbs->refused(c->cs->arg, c->peer, node, why);
}

static int
conn_hello(struct conn *c, const uint8_t *p, size_t n)
{
	struct conns	*cs = c->cs;
	struct wire_hello ours;
	const char	*why;
	char		 why_buf[160];

	/*
	 * A refusal is counted once, as refused (not as a bad message too),
	 * and the link it was for (ours, when we dialled) says why.
	 */
	if (wire_hello_decode(p, n, &c->hello, &why) == -1) {
		log_warnx("%s: refused: %s", c->peer, why);
		cs->stats.refused++;
		conn_refused(c, NULL, why);
		conn_close(c, why, 0);
		return -1;
	}
	cs->cbs->hello(cs->arg, &ours);
	if (strcmp(c->hello.network, ours.network) != 0) {
		log_warnx("%s: refused: node %s is in network %s, not %s",
		    c->peer, c->hello.node, c->hello.network, ours.network);
		cs->stats.refused++;
		snprintf(why_buf, sizeof(why_buf), "node %s is in network %s, "
		    "not %s", c->hello.node, c->hello.network, ours.network);
		conn_refused(c, c->hello.node, why_buf);
		conn_close(c, why_buf, 0);
		return -1;
	}
	if (strcmp(c->hello.node, ours.node) == 0) {
		log_warnx("%s: refused: peer has our own node name %s",
		    c->peer, ours.node);
		cs->stats.refused++;
		snprintf(why_buf, sizeof(why_buf), "peer has our own node "
		    "name %s", ours.node);
		conn_refused(c, c->hello.node, why_buf);
		conn_close(c, why_buf, 0);
		return -1;
	}
	if (c->outgoing && strcmp(c->hello.node, c->expect) != 0) {
		log_warnx("link %s: refused: %s is node %s, not %s",
		    c->name, c->peer, c->hello.node, c->expect);
		cs->stats.refused++;
		snprintf(why_buf, sizeof(why_buf), "the peer is node %s, "
		    "not %s", c->hello.node, c->expect);
		conn_refused(c, c->hello.node, why_buf);
		conn_close(c, why_buf, 0);
		return -1;
	}
	/* The certificate must be that of the node the hello claims to be. */
	if (!c->outgoing && c->io->check_peer(c, c->hello.node, why_buf,
	    sizeof(why_buf)) == -1) {
		log_warnx("%s: refused: %s", c->peer, why_buf);
		cs->stats.tls_refused++;
		conn_refused(c, c->hello.node, why_buf);
		conn_close(c, "certificate names another node", 0);
		return -1;
	}
	return conn_established(c);
}

/*
 * Room for at least one whole message at the end of the receive buffer:
 * the part of a message already there moves to the front (at most one
 * message, once per buffer's worth).  Returns the room, 0 without memory.
 */
size_t
conn_rx_room(struct conn *c)
{
	if (c->rx == NULL) {
		if ((c->rx = malloc(CONN_RX_SIZE)) == NULL)
			return 0;
		c->rx_off = c->rx_end = 0;
	}
	if (c->rx_off == c->rx_end)
		c->rx_off = c->rx_end = 0;
	else if (CONN_RX_SIZE - c->rx_end < WIRE_HDR_LEN + WIRE_PAYLOAD_MAX) {
		memmove(c->rx, c->rx + c->rx_off, c->rx_end - c->rx_off);
		c->rx_end -= c->rx_off;
		c->rx_off = 0;
	}
	return CONN_RX_SIZE - c->rx_end;
}

/*
 * Handles the whole messages in the receive buffer, in place; c->need is
 * then what the next message lacks.  Returns -1 if c was closed (and may
 * be freed).
 */
int
conn_input(struct conn *c)
{
	struct conns	*cs = c->cs;
	struct wire_hdr	 h;
	struct wire_frame f;
	struct wire_dgram dg;
	struct wire_probe pr;
	struct wire_seen seen;
	const uint8_t	*p;
	const char	*why;
	size_t		 avail;

	for (;;) {
		p = c->rx + c->rx_off;
		avail = c->rx_end - c->rx_off;
		if (avail < WIRE_HDR_LEN) {
			c->need = WIRE_HDR_LEN - avail;
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
			c->need = WIRE_HDR_LEN + h.len - avail;
			return 0;
		}
		c->rx_off += WIRE_HDR_LEN + h.len;
		p += WIRE_HDR_LEN;
		c->msgs_in++;

		switch (h.type) {
		case WIRE_HELLO:
			if (conn_hello(c, p, h.len) == -1)
				return -1;
			break;
		case WIRE_KEEPALIVE:
			break;
		case WIRE_NODE:
			if (!(c->caps & WIRE_CAP_NODES))
				why = "node record, but none was asked for";
			else if (cs->cbs->node(cs->arg, c, p, h.len,
			    &why) == 0)
				break;
			log_warnx("%s: malformed node record: %s", c->peer,
			    why);
			conn_close(c, why, 1);
			return -1;
		case WIRE_DGRAM:
			if (!(c->caps & WIRE_CAP_DGRAM))
				why = "datagram offer, but none was asked for";
			else if (wire_dgram_decode(p, h.len, &dg, &why) == 0 &&
			    cs->cbs->dgram(cs->arg, c, &dg, &why) == 0)
				break;
			log_warnx("%s: malformed datagram offer: %s", c->peer,
			    why);
			conn_close(c, why, 1);
			return -1;
		case WIRE_PROBE:
			if (!(c->caps & WIRE_CAP_LIVENESS))
				why = "probe, but none was asked for";
			else if (wire_probe_decode(p, h.len, &pr, &why) == 0) {
				cs->cbs->probe(cs->arg, c, &pr);
				break;
			}
			log_warnx("%s: malformed probe: %s", c->peer, why);
			conn_close(c, why, 1);
			return -1;
		case WIRE_SEEN:
			if (!(c->caps & WIRE_CAP_SEEN))
				why = "address report, but none was asked for";
			else if (wire_seen_decode(p, h.len, &seen, &why) == 0) {
				/* A kind of a later version says nothing here. */
				if (seen.kind == WIRE_SEEN_CONN ||
				    seen.kind == WIRE_SEEN_DGRAM)
					memcpy(c->seen[seen.kind - 1],
					    seen.addr, sizeof(seen.addr));
				break;
			}
			log_warnx("%s: malformed address report: %s", c->peer,
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
			/* Forwarding never closes this connection. */
			cs->cbs->frame(cs->arg, c, h.hops, &f);
			break;
		}
	}
}

/* TCP (and TLS, if any) is up: an incoming connection says hello, an outgoing one checks first. */
void
conn_connected(struct conn *c)
{
	char	 why[160];

	conn_sockopts(bufferevent_getfd(c->bev));
	if (!c->outgoing) {
		conn_send_hello(c);
		return;
	}
	if (c->io->check_peer(c, c->expect, why, sizeof(why)) == -1) {
		log_warnx("link %s: refused %s: %s", c->name, c->peer, why);
		c->cs->stats.tls_refused++;
		conn_refused(c, c->expect, why);
		conn_close(c, why, 0);
		return;
	}
	c->cs->cbs->connected(c->cs->arg, c);
	conn_send_hello(c);
}

static void
conn_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;
	char		 why[160];
	int		 err = EVUTIL_SOCKET_ERROR();

	if (what & BEV_EVENT_CONNECTED) {
		if (c->io->start(c) == -1)
			conn_close(c, "cannot start TLS: out of memory", 0);
		return;
	}
	if (c->fail != NULL)
		snprintf(why, sizeof(why), "%s", c->fail);
	else if (what & BEV_EVENT_TIMEOUT) {
		c->dead = c->state == CONN_UP;
		snprintf(why, sizeof(why), "%s",
		    c->state == CONN_UP ? "peer silent" : "handshake timeout");
	} else if (what & BEV_EVENT_EOF)
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

/*
 * A peer that refuses us closes before the handshake is done, and only
 * its side knows why: say where to look.
 */
const char *
conn_closed_why(const struct conn *c)
{
	if (c->state == CONN_UP || c->state == CONN_CLOSING)
		return "connection closed by peer";
	/* A TLS listener closes on a plain hello at once. */
	if (c->outgoing && !conn_tls(c))
		return "closed by the peer during the handshake: refused, or "
		    "its listener is TLS and this link has no tls? (the "
		    "peer's vnetctl show refused says which)";
	return "closed by the peer during the handshake: refused? (the "
	    "peer's vnetctl show refused says why)";
}

/* Pending connections from host: a scan, CONN_PENDING_MAX at most. */
static size_t
conn_pending_from(struct conns *cs, const char *host)
{
	struct conn	*c;
	size_t		 n = 0;

	TAILQ_FOREACH(c, &cs->pending, entry)
		if (strcmp(c->from, host) == 0)
			n++;
	return n;
}

void
conn_accept(struct conns *cs, int fd, const struct sockaddr *sa,
    int socklen, int tls, int punched)
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
	if (cs->npending >= CONN_PENDING_MAX) {
		cs->stats.pending_full++;
		now = cs->now_ms();
		if (now - cs->pending_full_logged >= 1000) {
			cs->pending_full_logged = now;
			log_warnx("connection from %s closed: %d connections "
			    "are waiting for their handshake (%llu closed so "
			    "far)", host, CONN_PENDING_MAX,
			    (unsigned long long)cs->stats.pending_full);
		}
		evutil_closesocket(fd);
		return;
	}
	/* Nor may one address take all the slots that others need. */
	if (conn_pending_from(cs, host) >= CONN_PENDING_PER_ADDR) {
		cs->stats.pending_addr_full++;
		now = cs->now_ms();
		if (now - cs->pending_addr_logged >= 1000) {
			cs->pending_addr_logged = now;
			log_warnx("connection from %s closed: %d connections "
			    "from that address are waiting for their "
			    "handshake (%llu closed so far)", host,
			    CONN_PENDING_PER_ADDR,
			    (unsigned long long)cs->stats.pending_addr_full);
		}
		evutil_closesocket(fd);
		return;
	}
	conn_sockopts(fd);
	if ((c = conn_new(cs, fd, 0, tls)) == NULL) {
		log_warn("accept");
		evutil_closesocket(fd);
		return;
	}
	c->punched = punched;
	snprintf(c->from, sizeof(c->from), "%s", host);
	snprintf(c->peer, sizeof(c->peer), sa->sa_family == AF_INET6 ?
	    "[%s]:%u" : "%s:%u", host, port);
	TAILQ_INSERT_TAIL(&cs->pending, c, entry);
	c->pending = 1;
	cs->npending++;
	log_debug("connection from %s%s", c->peer, tls ? " (TLS)" : "");
	if (c->io->start(c) == -1)
		conn_close(c, "cannot start TLS: out of memory", 0);
}

/* Plain TCP: a bufferevent writes, the socket is read here. */

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

	if (c->ev_read == NULL)
		return;
	lowat = need > CONN_RCVLOWAT_MAX ? CONN_RCVLOWAT_MAX : (int)need;
	if (lowat < 1)
		lowat = 1;
	if (lowat == c->rcvlowat)
		return;
	if (setsockopt(event_get_fd(c->ev_read), SOL_SOCKET, SO_RCVLOWAT,
	    &lowat, sizeof(lowat)) == 0)
		c->rcvlowat = lowat;
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
		c->dead = c->state == CONN_UP;
		conn_close(c, c->state == CONN_UP ? "peer silent" :
		    "handshake timeout", 0);
		return;
	}
	/* A few reads at most, then the other events get their turn. */
	for (i = 0; i < CONN_RX_READS; i++) {
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
		conn_rcvlowat(c, c->need);
		if ((size_t)n < room)
			return;		/* the socket is empty */
	}
}

static int
plain_start(struct conn *c)
{
	bufferevent_enable(c->bev, EV_WRITE);
	conn_connected(c);
	return 0;
}

static int
plain_add(struct conn *c, const void *p, size_t n)
{
	return bufferevent_write(c->bev, p, n);
}

static void
plain_reserve(struct conn *c, size_t n)
{
	/* One allocation for the batch, not one per frame or two. */
	(void)evbuffer_expand(bufferevent_get_output(c->bev), n);
}

static int
plain_flush(struct conn *c)
{
	(void)evbuffer_write(bufferevent_get_output(c->bev),
	    bufferevent_getfd(c->bev));
	return 0;
}

static size_t
plain_out_len(const struct conn *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

/*
 * A frame that need not wait goes straight into the socket: nothing in the
 * output buffer and the kernel holding less than CONN_NOTSENT_LOWAT unsent,
 * as when the output would be written at once.  What the socket does not
 * take goes into the output buffer, ahead of all else.
 */
static int
plain_direct(struct conn *c, const uint8_t *pre, size_t prelen,
    const uint8_t *eth, size_t len)
{
	struct evbuffer	*out;
	struct iovec	 iov[2];
	evutil_socket_t	 fd;
	ssize_t		 n;
	size_t		 done;
	int		 unsent;

	out = bufferevent_get_output(c->bev);
	if (evbuffer_get_length(out) != 0 ||
	    (fd = bufferevent_getfd(c->bev)) < 0)
		return -1;
	if (ioctl(fd, SIOCOUTQNSD, &unsent) == -1 ||
	    unsent >= CONN_NOTSENT_LOWAT)
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
	return 0;
lost:
	/*
	 * Half a message is in the stream: the connection cannot go on.  It
	 * is closed from the loop: the caller may be forwarding over it.
	 */
	conn_fail_later(c, "out of memory");
	return 1;
}

/* Room in the output buffer: refill it from the link's queue. */
static void
plain_writecb(struct bufferevent *bev, void *arg)
{
	conn_writable(arg);
}

static void
plain_established(struct conn *c)
{
	bufferevent_setcb(c->bev, NULL, plain_writecb, conn_eventcb, c);
	bufferevent_setwatermark(c->bev, EV_WRITE, CONN_OUT_LOW, 0);
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

static int
plain_bye(struct conn *c, const void *p, size_t n)
{
	struct timeval	 tv = { 1, 0 };

	bufferevent_write(c->bev, p, n);
	bufferevent_set_timeouts(c->bev, NULL, &tv);
	bufferevent_setcb(c->bev, NULL, closing_writecb, closing_eventcb, c);
	return 0;
}

static void
plain_wake(struct conn *c)
{
	bufferevent_trigger_event(c->bev, BEV_EVENT_ERROR,
	    BEV_TRIG_DEFER_CALLBACKS);
}

static int
plain_check_peer(struct conn *c, const char *node, char *why, size_t len)
{
	return 0;
}

static int
plain_describe(const struct conn *c, char *buf, size_t len)
{
	return -1;
}

static void
plain_free(struct conn *c)
{
}

static int
plain_exporter(struct conn *c, const char *label, const uint8_t *ctx,
    size_t ctxlen, uint8_t *out, size_t outlen)
{
	return -1;
}

static int
plain_aead(const struct conn *c)
{
	return 0;
}

const struct conn_io conn_plain_io = {
	.name = "plain",
	.autoflush = 1,
	.node_out_max = CONN_NODE_OUT_MAX,
	.start = plain_start,
	.readcb = conn_sockreadcb,
	.add = plain_add,
	.reserve = plain_reserve,
	.flush = plain_flush,
	.out_len = plain_out_len,
	.direct = plain_direct,
	.established = plain_established,
	.bye = plain_bye,
	.wake = plain_wake,
	.check_peer = plain_check_peer,
	.exporter = plain_exporter,
	.aead = plain_aead,
	.describe = plain_describe,
	.free = plain_free,
};

/*
 * The counters of connections, each named once: show stats and /metrics
 * render from these tables.  The refusals are one family by reason.
 */
#define CS(row, field, help) METRIC_STAT(row, struct conn_stats, field, help)
static const struct metric_stat conns_refusals[] = {
	CS("refused", refused, NULL),
	CS("tls_refused", tls_refused, NULL),
	CS("clones_refused", clones, NULL),
	CS("pending_full", pending_full, NULL),
	CS("pending_addr_full", pending_addr_full, NULL),
	CS("handshake_timeouts", handshake_timeouts, NULL),
};
static const struct metric_stat conns_failures[] = {
	CS("bad_messages", bad_messages, "Connections closed for a malformed "
	    "message."),
	CS("tls_failed", tls_failed, "TLS handshakes that failed other than "
	    "by this node refusing the peer's certificate (that is "
	    "vnet_refused_total{reason=\"tls_refused\"}): the peer refused "
	    "ours, or the other end does not speak TLS."),
};
#undef CS

void
conns_show_stats(const struct conns *cs, struct evbuffer *out)
{
	metric_stat_rows(out, conns_failures, sizeof(conns_failures) /
	    sizeof(conns_failures[0]), &cs->stats);
	metric_stat_rows(out, conns_refusals, sizeof(conns_refusals) /
	    sizeof(conns_refusals[0]), &cs->stats);
}

void
conns_metrics_refused(const struct conns *cs, const struct metric_out *mo)
{
	metric_stat_samples(mo, "vnet_refused_total", "reason", conns_refusals,
	    sizeof(conns_refusals) / sizeof(conns_refusals[0]), &cs->stats);
}

void
conns_metrics(const struct conns *cs, const struct metric_out *mo)
{
	metric_stat_families(mo, conns_failures, sizeof(conns_failures) /
	    sizeof(conns_failures[0]), &cs->stats);
}
