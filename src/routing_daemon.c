/* The control plane as a module of the daemon (routing_daemon.h). */
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "clock.h"
#include "daemon.h"
#include "ether.h"
#include "iface.h"
#include "link.h"
#include "listen.h"
#include "log.h"
#include "routing.h"
#include "routing_daemon.h"
#include "shortcut.h"
#include "sw.h"
#include "wire.h"

struct routing_daemon {
	struct vnetd	*d;
	struct routing	*r;
	struct event	*ev;		/* routing_poll() */
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

	TAILQ_FOREACH(l, &rd->d->links.list, entry)
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

	TAILQ_FOREACH(ifc, &rd->d->ifaces, entry) {
		n++;
		name = ifc->name;
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

static int
rd_configured(void *arg, const char *name)
{
	struct routing_daemon	*rd = arg;
	struct link		*l;

	return (l = link_find(&rd->d->links, name)) != NULL && l->configured;
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

	TAILQ_FOREACH(ifc, &rd->d->ifaces, entry) {
		if (ifc->conf.segment[0] == '\0')
			continue;
		for (k = 0; k < n; k++)
			if (strcmp(out[k], ifc->conf.segment) == 0)
				break;
		if (k == n && n < max)
			snprintf(out[n++], NODE_NAME_MAX + 1, "%s",
			    ifc->conf.segment);
	}
	return n;
}

static void
rd_segment_set(void *arg, const char *seg, int active)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;

	TAILQ_FOREACH(ifc, &rd->d->ifaces, entry)
		if (strcmp(ifc->conf.segment, seg) == 0)
			iface_set_standby(ifc, !active);
}

static void
rd_announce(void *arg, const char *seg, const uint8_t *mac)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;

	TAILQ_FOREACH(ifc, &rd->d->ifaces, entry)
		if (strcmp(ifc->conf.segment, seg) == 0)
			iface_announce(ifc, mac);
}

static const char *
rd_port_segment(void *arg, const char *port)
{
	struct routing_daemon	*rd = arg;
	struct iface		*ifc;

	if ((ifc = iface_find(&rd->d->ifaces, port)) == NULL ||
	    ifc->conf.segment[0] == '\0')
		return NULL;
	return ifc->conf.segment;
}

/* Without routing auto no one elects: a segment's interfaces forward. */
static void
rd_segments_unelected(struct routing_daemon *rd)
{
	struct iface		*ifc;

	TAILQ_FOREACH(ifc, &rd->d->ifaces, entry)
		if (ifc->standby) {
			log_warnx("interface %s: segment %s without routing "
			    "auto: forwarded here, no forwarder elected",
			    ifc->name, ifc->conf.segment);
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
	rl.name = l->name;
	rl.peer = link_node_peer(l);
	rl.configured = l->configured;
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

	return shortcut_origin(rd->r, l->name, l->configured, trigger, len,
	    reason);
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
rd_mod_show(void *arg, const struct stmt *st, struct evbuffer *out)
{
	struct routing_daemon	*rd = arg;

	switch (st->show) {
	case STMT_SHOW_MACS:
		routing_show_macs(rd->r, out);
		break;
	case STMT_SHOW_STATS:
		routing_show_stats(rd->r, out);
		break;
	case STMT_SHOW_NODES:
	case STMT_SHOW_TOPOLOGY:
	case STMT_SHOW_TRAFFIC:
	case STMT_SHOW_TRAFFIC_NODES:
	case STMT_SHOW_TRAFFIC_TOPOLOGY:
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
	const char		*fwdr = "-", *state = "-";

	if (what != STMT_SHOW_INTERFACES || !routing_on(rd->r) ||
	    (ifc = iface_find(&rd->d->ifaces, row)) == NULL)
		return NULL;
	if (ifc->conf.segment[0] != '\0')
		fwdr = routing_segment_forwarder(rd->r, ifc->conf.segment,
		    &state);
	snprintf(buf, len, "\t%llu\t%s\t%s\t%s\t%llu\t%llu\t%llu\t%llu",
	    (unsigned long long)routing_foreign(rd->r, row),
	    ifc->conf.segment[0] != '\0' ? ifc->conf.segment : "-", fwdr,
	    state, (unsigned long long)ifc->c.standby_in,
	    (unsigned long long)ifc->c.standby_out,
	    (unsigned long long)ifc->c.segment_looped,
	    (unsigned long long)ifc->c.announced);
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

	return shortcut_made(rd->r, l->name, l->configured);
}

static void
rd_mod_free(void *arg)
{
	struct routing_daemon	*rd = arg;

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
		.ifaces = rd_ifaces, .addrs = rd_addrs,
		.configured = rd_configured, .apply = rd_apply, .tls = rd_tls,
		.tls_ctx = rd_tls_ctx, .segments = rd_segments,
		.segment_set = rd_segment_set, .announce = rd_announce,
		.port_segment = rd_port_segment,
	};
	struct vnetd_module	 m = {
		.name = "routing",
		.kinds = { STMT_ROUTING, STMT_ADVERTISE, STMT_ADAPT },
		.nkinds = 3, .apply = rd_mod_apply, .caps = rd_mod_caps,
		.start = rd_mod_start, .tick = rd_mod_tick, .show = rd_mod_show,
		.columns = rd_mod_columns, .fields = rd_mod_fields,
		.config = rd_mod_config, .link_made = rd_mod_link_made,
		.link_input = rd_link_node, .link_up = rd_link_up,
		.link_down = rd_link_down, .link_origin = rd_link_origin,
		.free = rd_mod_free,
	};
	struct sw_hooks		 hooks;

	if ((rd = calloc(1, sizeof(*rd))) == NULL)
		return -1;
	rd->d = d;
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
