#include <sys/ioctl.h>
#include <sys/socket.h>

#include <net/if.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "clock.h"
#include "ether.h"
#include "gso.h"
#include "iface.h"
#include "iface_impl.h"
#include "iothread.h"
#include "log.h"
#include "metric.h"
#include "wire.h"

/* Frames read per wake-up before the loop serves others. */
#define IFACE_READ_BATCH	64
/* Capture drops after this long without any are logged again. */
#define IFACE_DROPS_QUIET_MS	10000

static const struct port_ops iface_port_ops;

int
iface_dev_up(const char *dev, char *err, size_t errlen)
{
	struct ifreq	 ifr;
	int		 s, e;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1 ||
	    ((ifr.ifr_flags & IFF_UP) == 0 &&
	    (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) == -1))) {
		e = errno;
		if (e == ENODEV)
			snprintf(err, errlen, "device %s: no such device", dev);
		else
			snprintf(err, errlen, "%s: cannot bring up: %s", dev,
			    strerror(e));
		close(s);
		errno = e;
		return -1;
	}
	close(s);
	return 0;
}

/*
 * Brings the capture's count up to date; the first drops after a quiet
 * while are logged, so that a log shows when a capture started losing.
 */
uint64_t
iface_capture_drops(struct iface *ifc)
{
	uint64_t	 n, now;

	if (!ifc->up || ifc->ops->capture_drops == NULL)
		return ifc->c.capture_drops;
	if ((n = ifc->ops->capture_drops(ifc)) == 0)
		return ifc->c.capture_drops;
	now = clock_now_ms();
	ifc->c.capture_drops += n;
	if (ifc->drops_seen_ms == 0 ||
	    now - ifc->drops_seen_ms >= IFACE_DROPS_QUIET_MS)
		log_warnx("interface %s: the capture on %s is losing frames "
		    "(%llu so far): they come faster than they are read; a "
		    "larger buffer may help", ifc->name, iface_devname(ifc),
		    (unsigned long long)ifc->c.capture_drops);
	ifc->drops_seen_ms = now;
	return ifc->c.capture_drops;
}

/* What the interface is attached to, as logs and show name it. */
const char *
iface_devname(const struct iface *ifc)
{
	if (ifc->type == STMT_IF_QEMU)
		return ifc->conf.path;
	return ifc->dev[0] != '\0' ? ifc->dev : ifc->name;
}

struct iface *
iface_find(const struct iface_list *list, const char *name)
{
	struct iface	*ifc;

	TAILQ_FOREACH(ifc, list, entry)
		if (strcmp(ifc->name, name) == 0)
			return ifc;
	return NULL;
}

struct iface *
ifaces_first(const struct iface_list *list)
{
	return TAILQ_FIRST(list);
}

struct iface *
iface_next(const struct iface *ifc)
{
	return TAILQ_NEXT(ifc, entry);
}

void
ifaces_free(struct iface_list *list)
{
	struct iface	*ifc;

	while ((ifc = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, ifc, entry);
		iface_free(ifc);
	}
}

const char *
iface_name(const struct iface *ifc)
{
	return ifc->name;
}

const struct stmt *
iface_conf(const struct iface *ifc)
{
	return &ifc->conf;
}

const char *
iface_segment(const struct iface *ifc)
{
	return ifc->conf.segment;
}

int
iface_standby(const struct iface *ifc)
{
	return ifc->standby;
}

const struct iface_counters *
iface_counters(const struct iface *ifc)
{
	return &ifc->c;
}

void
iface_input(struct iface *ifc, const uint8_t *vh, const uint8_t *eth,
    size_t len)
{
	struct sw_frame	 f = { vh, eth, len, 0, 0, 0 };

	if (len < ETHER_HDR_LEN)
		return;
	if (ifc->standby) {
		ifc->c.standby_in++;
		return;
	}
	ifc->c.frames_in++;
	ifc->c.bytes_in += (uint64_t)len;
	sw_input(ifc->env->sw, &ifc->port, &f);
}

void
iface_input_vnet(struct iface *ifc, const uint8_t *buf, size_t n)
{
	if (n >= GSO_VNET_HDR_LEN)
		iface_input(ifc, sw_vh(buf), buf + GSO_VNET_HDR_LEN,
		    n - GSO_VNET_HDR_LEN);
}

/* Closes the device; the port stops carrying frames. */
static void
iface_close_dev(struct iface *ifc)
{
	(void)iface_capture_drops(ifc);
	if (ifc->io != NULL) {
		ifc->c.drops += iothread_tx_errors(ifc->io);
		iothread_stop(ifc->io);
		ifc->io = NULL;
	}
	if (ifc->ev != NULL) {
		event_free(ifc->ev);
		ifc->ev = NULL;
	}
	sw_port_down(&ifc->port);
	ifc->ops->close(ifc);
	ifc->up = 0;
}

/* A failure of the device: the one transition from up to down. */
static void
iface_down(struct iface *ifc, const char *why)
{
	if (!ifc->up)
		return;
	iface_close_dev(ifc);
	if (ifc->ops->present != NULL)
		log_warnx("interface %s: %s, interface down; waiting for "
		    "device %s to come back", ifc->name, why,
		    iface_devname(ifc));
	else
		log_warnx("interface %s: %s, interface down", ifc->name, why);
}

void
iface_read_failed(struct iface *ifc, int e)
{
	char	 why[STMT_PATH_MAX + 320];

	ifc->c.read_errors++;
	snprintf(why, sizeof(why), "read from %s: %s", iface_devname(ifc),
	    strerror(e));
	iface_down(ifc, why);
}

uint64_t
iface_drops(const struct iface *ifc)
{
	return ifc->c.drops + (ifc->io != NULL ?
	    iothread_tx_errors(ifc->io) : 0);
}

static void
iface_readcb(evutil_socket_t fd, short ev, void *arg)
{
	struct iface	*ifc = arg;
	char		 err[256], why[STMT_PATH_MAX + 320];
	uint8_t		*buf;
	size_t		 buflen;
	ssize_t		 n;
	int		 i;

	if (ifc->ops->dispatch != NULL) {
		if (ifc->ops->dispatch(ifc, IFACE_READ_BATCH, err,
		    sizeof(err)) == -1) {
			ifc->c.read_errors++;
			snprintf(why, sizeof(why), "%s on %s failed: %s",
			    ifc->type == STMT_IF_QEMU ? "connection" : "capture",
			    iface_devname(ifc), err);
			iface_down(ifc, why);
		}
		return;
	}
	/* Read into the switch's buffer, where vCC may rewrite in place. */
	buf = sw_rxbuf(ifc->env->sw, &buflen);
	for (i = 0; i < IFACE_READ_BATCH; i++) {
		n = ifc->ops->read(ifc, buf, buflen);
		if (n == 0)
			return;
		if (n < 0) {
			/* The device is gone: stop, rather than spin on it. */
			ifc->c.read_errors++;
			snprintf(why, sizeof(why), "read from %s: %s",
			    iface_devname(ifc), strerror(errno));
			iface_down(ifc, why);
			return;
		}
		if (!ifc->ops->vnet_hdr)
			iface_input(ifc, NULL, buf, (size_t)n);
		else
			iface_input_vnet(ifc, buf, (size_t)n);
	}
}

static void
iface_io_input(void *arg, const uint8_t *buf, size_t n)
{
	iface_input_vnet(arg, buf, n);
}

static void
iface_io_failed(void *arg, int e)
{
	iface_read_failed(arg, e);
}

/* Opens the device and puts the interface up; -1 with errno kept. */
static int
iface_open_dev(struct iface *ifc, char *err, size_t errlen)
{
	struct iothread_cb cb = { iface_io_input, iface_io_failed, ifc };
	char		 why[256];
	size_t		 frame_max;
	int		 saved;

	(void)sw_rxbuf(ifc->env->sw, &frame_max);

	/* `up yes`: a hypervisor may leave its TAP device down. */
	if (ifc->type == STMT_IF_PCAP && ifc->conf.up &&
	    iface_dev_up(iface_devname(ifc), err, errlen) == -1)
		return -1;
	if ((ifc->fd = ifc->ops->open(ifc, err, errlen)) == -1 &&
	    errno == EAFNOSUPPORT && ifc->ops->fallback != NULL) {
		log_warnx("interface %s: %s; using %s instead", ifc->name, err,
		    ifc->ops->fallback == &pcapif_ops ? "libpcap" :
		    ifc->ops->fallback->type);
		ifc->ops = ifc->ops->fallback;
		ifc->fd = ifc->ops->open(ifc, err, errlen);
	}
	if (ifc->fd == -1)
		return -1;
	/* `threads yes`: a TAP device is read and written by its threads. */
	if (ifc->env->threads && ifc->ops->vnet_hdr &&
	    ifc->ops->write_vh != NULL &&
	    (ifc->io = iothread_start(ifc->env->base, ifc->fd, frame_max, &cb,
	    why, sizeof(why))) == NULL)
		log_warnx("interface %s: no threads (%s): read and written "
		    "by the main thread", ifc->name, why);
	if (ifc->io == NULL) {
		ifc->ev = event_new(ifc->env->base, ifc->fd, EV_READ | EV_PERSIST,
		    iface_readcb, ifc);
		if (ifc->ev == NULL || event_add(ifc->ev, NULL) == -1) {
			saved = errno;
			snprintf(err, errlen, "interface %s: out of memory",
			    ifc->name);
			iface_close_dev(ifc);
			errno = saved;
			return -1;
		}
	}
	sw_port_up(&ifc->port);
	ifc->up = 1;
	return 0;
}

/*
 * Once a second for backends that look at their device (tick()) or can
 * lose it (present()): take the interface down when the device is gone,
 * bring it up when it is back.
 * A device that fails to open the same way every second is logged once.
 */
static void
iface_watch_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct iface	*ifc = arg;

	if (ifc->ops->tick != NULL && ifc->fd != -1)
		ifc->ops->tick(ifc);
	if (ifc->ops->present == NULL)
		return;
	if (ifc->up) {
		(void)iface_capture_drops(ifc);
		if (!ifc->ops->present(ifc)) {
			ifc->c.read_errors++;
			iface_down(ifc, "device gone");
		}
		return;
	}
	iface_dev_appeared(ifc);
}

void
iface_dev_appeared(struct iface *ifc)
{
	char	 err[256];

	if (ifc->up)
		return;
	if (iface_open_dev(ifc, err, sizeof(err)) == -1) {
		if (errno != ENODEV && ifc->open_failures++ == 0)
			log_warnx("interface %s: %s; trying again every "
			    "second", ifc->name, err);
		return;
	}
	ifc->open_failures = 0;
	log_info("interface %s: device %s is back, interface up", ifc->name,
	    iface_devname(ifc));
}

int
iface_add(struct iface_list *list, struct iface_env *env,
    const struct stmt *st, char *err, size_t errlen)
{
	struct iface	*ifc, *o;
	struct timeval	 tv = { 1, 0 };

	if (iface_find(list, st->name) != NULL) {
		snprintf(err, errlen, "interface %s already exists", st->name);
		return -1;
	}
	if ((ifc = calloc(1, sizeof(*ifc))) == NULL) {
		snprintf(err, errlen, "interface %s: out of memory", st->name);
		return -1;
	}
	ifc->env = env;
	ifc->fd = -1;
	ifc->type = st->iftype;
	ifc->ops = st->iftype == STMT_IF_PCAP ? &afpacket_ops :
	    st->iftype == STMT_IF_QEMU ? &qemuif_ops : &tap_ops;
	ifc->conf = *st;
	ifc->standby = st->segment[0] != '\0';
	ifc->conf.op = STMT_OP_SET;
	snprintf(ifc->name, sizeof(ifc->name), "%s", st->name);
	snprintf(ifc->dev, sizeof(ifc->dev), "%s", st->dev);
	TAILQ_FOREACH(o, list, entry)
		if (o->type != STMT_IF_QEMU && ifc->type != STMT_IF_QEMU &&
		    strcmp(iface_devname(o), iface_devname(ifc)) == 0) {
			snprintf(err, errlen, "interface %s: device %s is "
			    "already used by interface %s", ifc->name,
			    iface_devname(ifc), o->name);
			free(ifc);
			return -1;
		}
	if (sw_port_add(env->sw, &ifc->port, &iface_port_ops, ifc, ifc->name,
	    err, errlen) == -1) {
		free(ifc);
		return -1;
	}
	if (ifc->ops->present != NULL || ifc->ops->tick != NULL) {
		ifc->ev_watch = event_new(env->base, -1, EV_PERSIST,
		    iface_watch_cb, ifc);
		if (ifc->ev_watch == NULL ||
		    event_add(ifc->ev_watch, &tv) == -1) {
			snprintf(err, errlen, "interface %s: out of memory",
			    ifc->name);
			iface_free(ifc);
			return -1;
		}
	}
	if (ifc->ops->attach != NULL && ifc->ops->attach(ifc, err,
	    errlen) == -1) {
		iface_free(ifc);
		return -1;
	}
	if (iface_open_dev(ifc, err, errlen) == -1) {
		/* A device that is not there yet may come: wait for it. */
		if (ifc->ops->present == NULL || errno != ENODEV) {
			iface_free(ifc);
			return -1;
		}
		log_warnx("interface %s: %s; interface down until it appears",
		    ifc->name, err);
	}
	TAILQ_INSERT_TAIL(list, ifc, entry);
	log_info("interface %s: %s device %s%s", ifc->name, ifc->ops->type,
	    iface_devname(ifc), ifc->up ? "" : " (down)");
	return 0;
}

/* Frees an interface that is not (or no longer) on its list. */
void
iface_free(struct iface *ifc)
{
	if (ifc->ev_watch != NULL)
		event_free(ifc->ev_watch);
	iface_close_dev(ifc);
	if (ifc->ops->detach != NULL)
		ifc->ops->detach(ifc);
	sw_port_del(ifc->env->sw, &ifc->port);
	free(ifc);
}

int
iface_del(struct iface_list *list, const char *name, char *err,
    size_t errlen)
{
	struct iface	*ifc;

	if ((ifc = iface_find(list, name)) == NULL) {
		snprintf(err, errlen, "no interface %s", name);
		return -1;
	}
	TAILQ_REMOVE(list, ifc, entry);
	log_info("interface %s: removed", ifc->name);
	ifc->removing = 1;
	iface_free(ifc);
	return 0;
}

static void
iface_write(struct iface *ifc, const uint8_t *eth, size_t len)
{
	if (ifc->ops->write(ifc, eth, len) == -1) {
		ifc->c.drops++;
		return;
	}
	ifc->c.frames_out++;
	ifc->c.bytes_out += len;
}

void
iface_set_standby(struct iface *ifc, int standby)
{
	ifc->standby = standby != 0;
}

void
iface_announce(struct iface *ifc, const uint8_t *mac)
{
	/* RFC 903: Ethernet, IPv4, reverse request, sender = target = mac. */
	static const uint8_t	 head[] = { 0x80, 0x35, 0x00, 0x01, 0x08, 0x00,
	    0x06, 0x04, 0x00, 0x03 };
	uint8_t			 f[60];

	if (!ifc->up || ifc->standby)
		return;
	memset(f, 0, sizeof(f));
	memset(f, 0xff, ETHER_ADDR_LEN);
	memcpy(f + 6, mac, ETHER_ADDR_LEN);
	memcpy(f + 12, head, sizeof(head));
	memcpy(f + 22, mac, ETHER_ADDR_LEN);
	memcpy(f + 32, mac, ETHER_ADDR_LEN);
	ifc->c.announced++;
	iface_write(ifc, f, sizeof(f));
}

/*
 * The port's transmit: the switch has done vCC, and cut the frame unless
 * the device takes offload frames (iface_port_features()).
 */
static void
iface_port_transmit(struct port *p, const struct sw_frame *f)
{
	struct iface	*ifc = p->owner;

	if (!ifc->up) {
		ifc->c.drops++;
		return;
	}
	if (ifc->standby) {
		ifc->c.standby_out++;
		return;
	}
	if (ifc->ops->write_vh == NULL) {
		iface_write(ifc, f->eth, f->len);
		return;
	}
	if (ifc->io != NULL ? iothread_send(ifc->io, f->vh, f->eth, f->len) ==
	    -1 : ifc->ops->write_vh(ifc, f->vh, f->eth, f->len) == -1) {
		ifc->c.drops++;
		return;
	}
	ifc->c.frames_out++;
	ifc->c.bytes_out += f->len;
}

static unsigned int
iface_port_features(const struct port *p)
{
	const struct iface *ifc = p->owner;

	return ifc->ops->write_vh != NULL ? SW_F_OFFLOAD : 0;
}

static const char *
iface_port_name(const struct port *p)
{
	const struct iface *ifc = p->owner;

	return ifc->name;
}

static const struct port_ops iface_port_ops = {
	.kind = "interface",
	.guest = 1,
	.transmit = iface_port_transmit,
	.features = iface_port_features,
	.name = iface_port_name,
};

void
iface_show_columns(const char *more, struct evbuffer *out)
{
	evbuffer_add_printf(out, "%%columns %s%s\n", IFACE_SHOW_COLUMNS, more);
}

void
iface_show(struct iface *ifc, const char *more, struct evbuffer *out)
{
	evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%llu\t%llu\t%llu\t%llu\t"
	    "%llu\t%llu%s\n", ifc->name, ifc->ops->type, iface_devname(ifc),
	    ifc->up ? "up" : "down",
	    (unsigned long long)ifc->c.frames_in,
	    (unsigned long long)ifc->c.bytes_in,
	    (unsigned long long)ifc->c.frames_out,
	    (unsigned long long)ifc->c.bytes_out,
	    (unsigned long long)iface_drops(ifc),
	    (unsigned long long)iface_capture_drops(ifc), more);
}

/* The families with a sample per interface and direction: counters. */
static const struct iface_dir_metric {
	const char	*name, *help;
	size_t		 in, out;	/* in struct iface_counters */
} iface_dir_metrics[] = {
	{ "vnet_interface_bytes_total",
	  "Bytes of frames the interface carried, by direction.",
	  offsetof(struct iface_counters, bytes_in),
	  offsetof(struct iface_counters, bytes_out) },
	{ "vnet_interface_frames_total",
	  "Frames the interface carried, by direction.",
	  offsetof(struct iface_counters, frames_in),
	  offsetof(struct iface_counters, frames_out) },
};

static uint64_t
iface_counter(const struct iface *ifc, size_t off)
{
	uint64_t	 v;

	memcpy(&v, (const uint8_t *)&ifc->c + off, sizeof(v));
	return v;
}

void
iface_metrics(const struct iface_list *ifaces, const struct metric_out *mo)
{
	const struct iface_dir_metric *m;
	const struct iface	*ifc;
	size_t			 i;

	metric_family(mo, "vnet_interface_up", METRIC_GAUGE,
	    "1 if the interface is up, else 0.");
	TAILQ_FOREACH(ifc, ifaces, entry)
		metric_sample(mo, "vnet_interface_up", "interface", ifc->name,
		    NULL, NULL, ifc->up != 0);
	for (i = 0; i < sizeof(iface_dir_metrics) /
	    sizeof(iface_dir_metrics[0]); i++) {
		m = &iface_dir_metrics[i];
		metric_family(mo, m->name, METRIC_COUNTER, m->help);
		TAILQ_FOREACH(ifc, ifaces, entry) {
			metric_sample(mo, m->name, "interface", ifc->name,
			    "dir", "in", iface_counter(ifc, m->in));
			metric_sample(mo, m->name, "interface", ifc->name,
			    "dir", "out", iface_counter(ifc, m->out));
		}
	}
	metric_family(mo, "vnet_interface_drops_total", METRIC_COUNTER,
	    "Frames the interface dropped.");
	TAILQ_FOREACH(ifc, ifaces, entry)
		metric_sample(mo, "vnet_interface_drops_total", "interface",
		    ifc->name, NULL, NULL, iface_drops(ifc));
}
