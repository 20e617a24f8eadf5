/* The control plane as a module of the daemon (routing_daemon.h). */
#include <sys/socket.h>
#include <sys/time.h>

#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <ifaddrs.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "conn.h"
#include "daemon.h"
#include "ether.h"
#include "iface.h"
/*
 * rd_guest_frame(), the switch's hook for every guest frame, reads the
 * interface's segment and counts its loops without a call; everything
 * else here goes through iface.h.
 */
#include "iface_impl.h"
#include "link.h"
#include "listen.h"
#include "log.h"
#include "punch.h"
#include "routing.h"
#include "routing_daemon.h"
#include "shortcut.h"
#include "sw.h"
#include "wire.h"

/*
 * Holes being punched (shortcut.h): a connection from the listener's port
 * toward a peer's NAT, at most one per peer and PUNCH_MAX in all, each
 * given PUNCH_MS to meet the peer's (punch.h decides; the sockets are
 * here, one per slot).
 */
struct rd_punch {
	struct routing_daemon	*rd;
	char			 node[NODE_NAME_MAX + 1];
	int			 fd;		/* -1: none */
	struct event		*ev;
	struct sockaddr_storage	 to;
	socklen_t		 tolen;
};

struct routing_daemon {
	struct vnetd	*d;
	struct routing	*r;
	struct event	*ev;		/* routing_poll() */
	struct punch	 holes;
	struct rd_punch	 punch[PUNCH_MAX];	/* by slot of holes */
};

/* The env: what the control plane may ask of the daemon. */

static uint64_t
rd_now(void *arg)
{
	(void)arg;
	return clock_now_ms();
}

static uint64_t
rd_wall(void *arg)
{
	struct timespec	 ts;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
rd_arm(void *arg, uint64_t delay_ms)
{
	struct routing_daemon	*rd = arg;
	struct timeval		 tv;

	if (rd->ev == NULL)
		return;
	tv.tv_sec = (time_t)(delay_ms / 1000);
	tv.tv_usec = (suseconds_t)(delay_ms % 1000 * 1000);
	evtimer_add(rd->ev, &tv);
}

static int
rd_send(void *arg, void *link, const uint8_t *p, size_t n)
{
	(void)arg;
	return link_send_node(link, p, n);
}

static uint32_t
rd_rtt(void *arg, void *link)
{
	(void)arg;
	return link_rtt_us(link);
}

static int
rd_alive(void *arg, void *link)
{
	struct routing_daemon	*rd = arg;
	struct link		*l;

	LINKS_FOREACH(l, &rd->d->links)
		if ((void *)l == link)
			return link_alive(l);
	return 0;
}

static size_t
rd_ifaces(void *arg, const char **only)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;
	const char		*name = NULL;
	size_t			 n = 0;

	IFACES_FOREACH(ifc, &rd->d->ifaces) {
		n++;
		name = iface_name(ifc);
	}
	if (only != NULL)
		*only = n == 1 ? name : NULL;
	return n;
}

struct rd_addrs {
	char		(*out)[NODE_ADDR_MAX + 1];
	size_t		 n, max;
};

static void
rd_addr_cb(const struct stmt *st, void *arg)
{
	struct rd_addrs	*a = arg;

	if (st->kind == STMT_LISTEN && a->n < a->max)
		stmt_hostport_format(&st->addr, a->out[a->n++],
		    NODE_ADDR_MAX + 1);
}

static size_t
rd_addrs(void *arg, char (*out)[NODE_ADDR_MAX + 1], size_t max)
{
	struct routing_daemon	*rd = arg;
	struct rd_addrs		 a = { out, 0, max };

	listen_config(&rd->d->listeners, rd_addr_cb, &a);
	return a.n;
}

/* A listener on every address: "*", 0.0.0.0 or ::. */
static int
rd_wildcard(const char *host, int *v4, int *v6)
{
	*v4 = strcmp(host, "*") == 0 || strcmp(host, "0.0.0.0") == 0 ||
	    strcmp(host, "::") == 0;
	*v6 = strcmp(host, "*") == 0 || strcmp(host, "::") == 0;
	return *v4 || *v6;
}

struct rd_cands {
	struct node_cand	*out;
	size_t			 n, max;
	struct ifaddrs		*ifa;	/* NULL: not read (yet) */
	int			 ifa_read;
};

static void
rd_cand_add(struct rd_cands *c, uint8_t kind, const char *addr)
{
	size_t	 i;

	if (addr[0] == '\0' || strlen(addr) > NODE_ADDR_MAX)
		return;
	/* One address once, as the first (the surest) kind that gave it. */
	for (i = 0; i < c->n; i++)
		if (strcmp(c->out[i].addr, addr) == 0)
			return;
	if (c->n == c->max)
		return;
	c->out[c->n].kind = kind;
	snprintf(c->out[c->n].addr, sizeof(c->out[c->n].addr), "%s", addr);
	c->n++;
}

/* 1 if addr's host part is that of one of our host candidates. */
static int
rd_cand_own_host(const struct rd_cands *c, const char *addr)
{
	const char	*colon = strrchr(addr, ':'), *oc;
	size_t		 i;

	if (colon == NULL)
		return 0;
	for (i = 0; i < c->n; i++)
		if (c->out[i].kind == NODE_CAND_HOST &&
		    (oc = strrchr(c->out[i].addr, ':')) != NULL &&
		    oc - c->out[i].addr == colon - addr &&
		    strncmp(c->out[i].addr, addr, (size_t)(colon - addr)) == 0)
			return 1;
	return 0;
}

/* A wildcard listener's port at each interface address of its families. */
static void
rd_cand_ifaces(struct rd_cands *c, uint16_t port, int v4, int v6)
{
	struct ifaddrs	*i;
	char		 a[INET6_ADDRSTRLEN + 8];

	if (!c->ifa_read) {
		c->ifa_read = 1;
		if (getifaddrs(&c->ifa) == -1)
			c->ifa = NULL;
	}
	for (i = c->ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (i->ifa_addr->sa_family == AF_INET && v4) {
			struct sockaddr_in in = *(struct sockaddr_in *)
			    (void *)i->ifa_addr;

			in.sin_port = htons(port);
			rd_cand_add(c, NODE_CAND_HOST, conn_addr_text(
			    (struct sockaddr *)&in, a, sizeof(a)));
		} else if (i->ifa_addr->sa_family == AF_INET6 && v6) {
			struct sockaddr_in6 in6 = *(struct sockaddr_in6 *)
			    (void *)i->ifa_addr;

			/* A link-local address needs a scope no peer knows. */
			if (IN6_IS_ADDR_LINKLOCAL(&in6.sin6_addr))
				continue;
			in6.sin6_port = htons(port);
			rd_cand_add(c, NODE_CAND_HOST, conn_addr_text(
			    (struct sockaddr *)&in6, a, sizeof(a)));
		}
	}
}

static void
rd_cand_listener(const struct stmt *st, void *arg)
{
	struct rd_cands	*c = arg;
	char		 a[NODE_ADDR_MAX + 1];
	int		 v4, v6;

	if (st->kind != STMT_LISTEN)
		return;
	if (rd_wildcard(st->addr.host, &v4, &v6))
		rd_cand_ifaces(c, st->addr.port, v4, v6);
	else {
		stmt_hostport_format(&st->addr, a, sizeof(a));
		rd_cand_add(c, NODE_CAND_HOST, a);
	}
}

/* At most this many of each kind a peer tells (a proxy has many peers). */
#define RD_SEEN_MAX	4

static size_t
rd_cands(void *arg, struct node_cand *out, size_t max)
{
	struct routing_daemon	*rd = arg;
	struct rd_cands		 c = { out, 0, max, NULL, 0 };
	static const uint8_t	 kinds[] = { NODE_CAND_SEEN_IN,
				    NODE_CAND_SEEN_UDP, NODE_CAND_SEEN_OUT };
	struct link		*l;
	struct conn		*conn;
	size_t			 k, before, n;
	const char		*a;
	uint8_t			 kind;

	listen_config(&rd->d->listeners, rd_cand_listener, &c);
	if (c.ifa != NULL)
		freeifaddrs(c.ifa);
	/* What the peers say, the kinds most worth dialling first. */
	for (k = 0; k < sizeof(kinds); k++) {
		before = c.n;
		LINKS_FOREACH(l, &rd->d->links) {
			if ((conn = link_conn(l)) == NULL || !link_is_up(l))
				continue;
			if (kinds[k] == NODE_CAND_SEEN_UDP)
				a = conn->seen[WIRE_SEEN_DGRAM - 1];
			else
				a = conn->seen[WIRE_SEEN_CONN - 1];
			/* Who dialled whom says what the far end saw. */
			kind = kinds[k] != NODE_CAND_SEEN_UDP &&
			    conn->outgoing ? NODE_CAND_SEEN_OUT :
			    kinds[k] == NODE_CAND_SEEN_UDP ? NODE_CAND_SEEN_UDP :
			    NODE_CAND_SEEN_IN;
			if (kind != kinds[k])
				continue;
			/* Seen at an address of its own: no NAT, nothing new. */
			if (kind == NODE_CAND_SEEN_OUT && rd_cand_own_host(&c, a))
				continue;
			n = c.n;
			rd_cand_add(&c, kind, a);
			if (c.n != n && c.n - before >= RD_SEEN_MAX)
				break;
		}
	}
	return c.n;
}

static void
rd_punch_close(struct rd_punch *p)
{
	if (p->ev != NULL)
		event_free(p->ev);
	p->ev = NULL;
	if (p->fd != -1)
		close(p->fd);
	p->fd = -1;
}

static void
rd_punch_end(struct routing_daemon *rd, struct rd_punch *p)
{
	rd_punch_close(p);
	punch_end(&rd->holes, (int)(p - rd->punch));
}

static void
rd_punch_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct rd_punch	*p = arg;
	struct routing_daemon *rd = p->rd;
	char		 a[INET6_ADDRSTRLEN + 8];
	int		 err = 0;
	socklen_t	 len = sizeof(err);

	conn_addr_text((struct sockaddr *)&p->to, a, sizeof(a));
	if ((ev & EV_TIMEOUT) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err,
	    &len) == -1 || err != 0) {
		log_debug("adapt: no hole toward %s at %s yet: %s", p->node, a,
		    ev & EV_TIMEOUT ? "no answer" : strerror(err));
		rd_punch_end(rd, p);
		return;
	}
	log_info("adapt: hole toward %s punched: a connection with %s, "
	    "taken as the peer's shortcut", p->node, a);
	event_free(p->ev);
	p->ev = NULL;
	p->fd = -1;
	punch_end(&rd->holes, (int)(p - rd->punch));
	links_accept(&rd->d->links, fd, (struct sockaddr *)&p->to,
	    (int)p->tolen, rd->d->tls_cert[0] != '\0', 1);
}

static void
rd_punch(void *arg, const char *node, const char *addr, uint16_t lport)
{
	struct routing_daemon	*rd = arg;
	struct rd_punch		*p;
	struct sockaddr_storage	 to;
	struct timeval		 tv = { PUNCH_MS / 1000, PUNCH_MS % 1000 * 1000 };
	int			 len = sizeof(to), slot;

	memset(&to, 0, sizeof(to));
	if (evutil_parse_sockaddr_port(addr, (struct sockaddr *)&to,
	    &len) == -1 || (slot = punch_take(&rd->holes, node,
	    rd_now(rd))) == -1)
		return;
	p = &rd->punch[slot];
	rd_punch_close(p);	/* its time is over, its timer not yet run */
	p->to = to;
	p->tolen = (socklen_t)len;
	p->rd = rd;
	snprintf(p->node, sizeof(p->node), "%s", node);
	if ((p->fd = conn_socket_from(p->to.ss_family, lport)) == -1) {
		log_warn("adapt: a socket on port %u to punch toward %s",
		    lport, node);
		rd_punch_end(rd, p);
		return;
	}
	if ((connect(p->fd, (struct sockaddr *)&p->to, p->tolen) == -1 &&
	    errno != EINPROGRESS) ||
	    (p->ev = event_new(rd->d->base, p->fd, EV_WRITE, rd_punch_cb,
	    p)) == NULL || event_add(p->ev, &tv) == -1) {
		log_warn("adapt: punching toward %s at %s", node, addr);
		rd_punch_end(rd, p);
		return;
	}
	log_info("adapt: punching toward %s at %s from port %u", node, addr,
	    lport);
}

static void
rd_dial(void *arg, const char *name, struct routing_dial *out)
{
	struct routing_daemon	*rd = arg;
	struct link		*l;
	struct tcp_info		 ti;
	socklen_t		 len = sizeof(ti);
	int			 fd;

	memset(out, 0, sizeof(*out));
	if ((l = link_find(&rd->d->links, name)) == NULL ||
	    !link_configured(l))
		return;
	if (link_is_up(l) && !link_alive(l) && link_live_why(l)[0] != '\0') {
		/* Up, but out of the routes: liveness lost it. */
		out->state = ROUTING_DIAL_FAILED;
		snprintf(out->error, sizeof(out->error), "liveness lost: %s",
		    link_live_why(l));
		return;
	}
	if (link_is_up(l)) {
		out->state = ROUTING_DIAL_UP;
		return;
	}
	/* This link is the shortcut's own: any error is this attempt's. */
	if (link_last_error(l)[0] != '\0') {
		out->state = ROUTING_DIAL_FAILED;
		out->refused = strstr(link_last_error(l), "refused") != NULL;
		snprintf(out->error, sizeof(out->error), "%s",
		    link_last_error(l));
		return;
	}
	if (link_dialing(l) == NULL || (fd = conn_fd(link_dialing(l))) < 0)
		return;
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
	    ti.tcpi_state == TCP_SYN_SENT) {
		out->state = ROUTING_DIAL_SYN;
		out->tries = ti.tcpi_retransmits + 1u;
	} else
		out->state = ROUTING_DIAL_HANDSHAKE;
}

static int
rd_configured(void *arg, const char *name)
{
	struct routing_daemon	*rd = arg;
	struct link		*l;

	return (l = link_find(&rd->d->links, name)) != NULL &&
	    link_configured(l);
}

static int
rd_apply(void *arg, const struct stmt *st, char *err, size_t errlen)
{
	struct routing_daemon	*rd = arg;

	return vnetd_apply(rd->d, st, 1, err, errlen);
}

static int
rd_tls(void *arg)
{
	struct routing_daemon	*rd = arg;

	return rd->d->tls_cert[0] != '\0';
}

static int
rd_dgram(void *arg, const char *peer)
{
	struct routing_daemon	*rd = arg;

	return links_shortcut_transport(&rd->d->links, peer) !=
	    STMT_TRANSPORT_TCP;
}

static struct ssl_ctx_st *
rd_tls_ctx(void *arg)
{
	struct routing_daemon	*rd = arg;
	char			 err[256];

	if (rd->d->tls_cert[0] == '\0')
		return NULL;
	return vnetd_tls(rd->d, err, sizeof(err));
}

static size_t
rd_segments(void *arg, char (*out)[NODE_NAME_MAX + 1], size_t max)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;
	size_t			 n = 0, k;
	const char		*seg;

	IFACES_FOREACH(ifc, &rd->d->ifaces) {
		if ((seg = iface_segment(ifc))[0] == '\0')
			continue;
		for (k = 0; k < n; k++)
			if (strcmp(out[k], seg) == 0)
				break;
		if (k == n && n < max)
			snprintf(out[n++], NODE_NAME_MAX + 1, "%s", seg);
	}
	return n;
}

static void
rd_segment_set(void *arg, const char *seg, int active)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;

	IFACES_FOREACH(ifc, &rd->d->ifaces)
		if (strcmp(iface_segment(ifc), seg) == 0)
			iface_set_standby(ifc, !active);
}

static void
rd_announce(void *arg, const char *seg, const uint8_t *mac)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;

	IFACES_FOREACH(ifc, &rd->d->ifaces)
		if (strcmp(iface_segment(ifc), seg) == 0)
			iface_announce(ifc, mac);
}

static const char *
rd_port_segment(void *arg, const char *port)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;

	if ((ifc = iface_find(&rd->d->ifaces, port)) == NULL ||
	    iface_segment(ifc)[0] == '\0')
		return NULL;
	return iface_segment(ifc);
}

/* Without routing auto no one elects: a segment's interfaces forward. */
static void
rd_segments_unelected(struct routing_daemon *rd)
{
	struct iface		*ifc;

	IFACES_FOREACH(ifc, &rd->d->ifaces)
		if (iface_standby(ifc)) {
			log_warnx("interface %s: segment %s without routing "
			    "auto: forwarded here, no forwarder elected",
			    iface_name(ifc), iface_segment(ifc));
			iface_set_standby(ifc, 0);
		}
}

static void
rd_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct routing_daemon	*rd = arg;

	(void)fd;
	(void)ev;
	routing_poll(rd->r);
}

/* The switch's hook: a guest's frame, before forwarding. */
static int
rd_guest_frame(void *arg, struct port *p, const uint8_t *eth, size_t len)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;

	if (p->ops->guest && (ifc = p->owner) != NULL &&
	    ifc->conf.segment[0] != '\0' &&
	    routing_seg_foreign(rd->r, eth + ETHER_ADDR_LEN)) {
		ifc->c.segment_looped++;
		return -1;
	}
	return routing_guest_frame(rd->r, p->fp, eth, len);
}

/* The switch's hook: may a frame from src come by this link? */
static int
rd_on_path(void *arg, struct port *from, const uint8_t *src)
{
	struct routing_daemon	*rd = arg;

	return routing_on_path(rd->r, from->owner, src);
}

/* The links' hooks. */

static int
rd_link_node(void *arg, struct link *l, const uint8_t *p, size_t n,
    const char **why)
{
	struct routing_daemon	*rd = arg;

	return routing_input(rd->r, l, p, n, why);
}

static void
rd_link_up(void *arg, struct link *l)
{
	struct routing_daemon	*rd = arg;
	struct routing_link	 rl;

	rl.link = l;
	rl.name = link_name(l);
	rl.peer = link_node_peer(l);
	rl.configured = link_configured(l);
	rl.shortcut = link_peer_shortcut(l);
	routing_link_up(rd->r, &rl);
}

static void
rd_link_down(void *arg, struct link *l)
{
	struct routing_daemon	*rd = arg;

	routing_link_down(rd->r, l);
}

static const char *
rd_link_origin(void *arg, const struct link *l, char *trigger, size_t len,
    const char **reason)
{
	struct routing_daemon	*rd = arg;

	return shortcut_origin(rd->r, link_name(l), link_configured(l),
	    trigger, len, reason);
}

/* The module's hooks. */

static int
rd_mod_apply(void *arg, const struct stmt *st, char *err, size_t errlen)
{
	struct routing_daemon	*rd = arg;

	return routing_apply(rd->r, st, err, errlen);
}

static uint16_t
rd_mod_caps(void *arg)
{
	struct routing_daemon	*rd = arg;

	if (!routing_on(rd->r))
		return 0;
	return WIRE_CAP_NODES |
	    (rd->d->tls_cert[0] != '\0' ? WIRE_CAP_SIGNED : 0);
}

static int
rd_mod_start(void *arg)
{
	struct routing_daemon	*rd = arg;

	if (routing_on(rd->r) &&
	    (rd->ev = evtimer_new(rd->d->base, rd_timer_cb, rd)) == NULL)
		return -1;
	if (!routing_on(rd->r))
		rd_segments_unelected(rd);
	return routing_start(rd->r, rd->d->node);
}

static void
rd_mod_tick(void *arg)
{
	struct routing_daemon	*rd = arg;

	if (!routing_on(rd->r))
		rd_segments_unelected(rd);
}

static void
rd_mod_metrics(void *arg, const struct metric_out *mo)
{
	struct routing_daemon	*rd = arg;

	routing_metrics(rd->r, mo);
}

static void
rd_mod_show(void *arg, const struct stmt *st, struct evbuffer *out)
{
	struct routing_daemon	*rd = arg;

	switch (st->show) {
	case STMT_SHOW_MACS:
		routing_show_macs(rd->r, st->win, out);
		break;
	case STMT_SHOW_STATS:
		routing_show_stats(rd->r, out);
		break;
	case STMT_SHOW_NODES:
	case STMT_SHOW_TOPOLOGY:
	case STMT_SHOW_TRAFFIC:
	case STMT_SHOW_TRAFFIC_NODES:
	case STMT_SHOW_TRAFFIC_TOPOLOGY:
	case STMT_SHOW_TRAFFIC_MATRIX:
	case STMT_SHOW_ADAPT:
		routing_show(rd->r, st, out);
		break;
	default:
		break;
	}
}

/* show interfaces: the frames dropped for a source MAC that is another's. */
static const char *
rd_mod_columns(void *arg, enum stmt_show what)
{
	struct routing_daemon	*rd = arg;

	return what == STMT_SHOW_INTERFACES && routing_on(rd->r) ?
	    "\tforeign_src\tsegment\tforwarder\tseg_state\tstandby_in"
	    "\tstandby_out\tsegment_looped\tannounced" : NULL;
}

static const char *
rd_mod_fields(void *arg, enum stmt_show what, const char *row, char *buf,
    size_t len)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;
	const struct iface_counters *ic;
	const char		*fwdr = "-", *state = "-", *seg;

	if (what != STMT_SHOW_INTERFACES || !routing_on(rd->r) ||
	    (ifc = iface_find(&rd->d->ifaces, row)) == NULL)
		return NULL;
	seg = iface_segment(ifc);
	ic = iface_counters(ifc);
	if (seg[0] != '\0')
		fwdr = routing_segment_forwarder(rd->r, seg, &state);
	snprintf(buf, len, "\t%llu\t%s\t%s\t%s\t%llu\t%llu\t%llu\t%llu",
	    (unsigned long long)routing_foreign(rd->r, row),
	    seg[0] != '\0' ? seg : "-", fwdr,
	    state, (unsigned long long)ic->standby_in,
	    (unsigned long long)ic->standby_out,
	    (unsigned long long)ic->segment_looped,
	    (unsigned long long)ic->announced);
	return buf;
}

static void
rd_mod_config(void *arg, void (*cb)(const struct stmt *, void *),
    void *cbarg)
{
	struct routing_daemon	*rd = arg;

	routing_config(rd->r, cb, cbarg);
}

static int
rd_mod_link_made(void *arg, const struct link *l)
{
	struct routing_daemon	*rd = arg;

	return shortcut_made(rd->r, link_name(l), link_configured(l));
}

static void
rd_mod_free(void *arg)
{
	struct routing_daemon	*rd = arg;
	size_t			 i;

	for (i = 0; i < PUNCH_MAX; i++)
		rd_punch_close(&rd->punch[i]);
	if (rd->d->sw != NULL)
		sw_set_hooks(rd->d->sw, NULL);
	routing_free(rd->r);
	if (rd->ev != NULL)
		event_free(rd->ev);
	free(rd);
}

int
routing_daemon_add(struct vnetd *d)
{
	struct routing_daemon	*rd;
	struct routing_env	 env = {
		.now_ms = rd_now, .wall_ms = rd_wall, .arm = rd_arm,
		.send = rd_send, .rtt_us = rd_rtt, .alive = rd_alive,
		.ifaces = rd_ifaces, .addrs = rd_addrs, .cands = rd_cands,
		.punch = rd_punch, .dial = rd_dial,
		.configured = rd_configured, .apply = rd_apply, .tls = rd_tls,
		.dgram = rd_dgram, .tls_ctx = rd_tls_ctx, .segments = rd_segments,
		.segment_set = rd_segment_set, .announce = rd_announce,
		.port_segment = rd_port_segment,
	};
	struct vnetd_module	 m = {
		.name = "routing",
		.kinds = { STMT_ROUTING, STMT_ADVERTISE, STMT_ADAPT,
		    STMT_RELAY },
		.nkinds = 4, .apply = rd_mod_apply, .caps = rd_mod_caps,
		.start = rd_mod_start, .tick = rd_mod_tick, .show = rd_mod_show,
		.metrics = rd_mod_metrics,
		.columns = rd_mod_columns, .fields = rd_mod_fields,
		.config = rd_mod_config, .link_made = rd_mod_link_made,
		.link_input = rd_link_node, .link_up = rd_link_up,
		.link_down = rd_link_down, .link_origin = rd_link_origin,
		.free = rd_mod_free,
	};
	struct sw_hooks		 hooks;
	size_t			 i;

	if ((rd = calloc(1, sizeof(*rd))) == NULL)
		return -1;
	rd->d = d;
	for (i = 0; i < PUNCH_MAX; i++)
		rd->punch[i].fd = -1;
	env.arg = rd;
	m.arg = rd;
	if ((rd->r = routing_new(&env, d->fwd)) == NULL ||
	    vnetd_module_add(d, &m) == -1) {
		routing_free(rd->r);
		free(rd);
		return -1;
	}
	hooks.guest_frame = rd_guest_frame;
	hooks.on_path = rd_on_path;
	hooks.arg = rd;
	sw_set_hooks(d->sw, &hooks);
	return 0;
}
