#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "daemon.h"
#include "ether.h"
#include "fwd.h"
#include "iface.h"
#include "log.h"
#include "vcc.h"
#include "wire.h"

/* Frames read per wake-up before the loop serves others. */
#define IFACE_READ_BATCH	64

const char *
iface_devname(const struct iface *ifc)
{
	return ifc->dev[0] != '\0' ? ifc->dev : ifc->name;
}

struct iface *
iface_find(struct vnetd *d, const char *name)
{
	struct iface	*ifc;

	TAILQ_FOREACH(ifc, &d->ifaces, entry)
		if (strcmp(ifc->name, name) == 0)
			return ifc;
	return NULL;
}

static void
iface_readcb(evutil_socket_t fd, short ev, void *arg)
{
	struct iface	*ifc = arg;
	struct vnetd	*d = ifc->d;
	ssize_t		 n;
	int		 i;

	for (i = 0; i < IFACE_READ_BATCH; i++) {
		n = ifc->ops->read(ifc, d->rxbuf, d->rxbuf_len);
		if (n == 0)
			return;
		if (n < 0) {
			/* The device is gone: stop, rather than spin on it. */
			ifc->c.read_errors++;
			log_warn("interface %s: read from %s, interface down",
			    ifc->name, iface_devname(ifc));
			event_del(ifc->ev);
			fwd_port_detach(ifc->port);
			ifc->up = 0;
			return;
		}
		if (n < ETHER_HDR_LEN)
			continue;
		ifc->c.frames_in++;
		ifc->c.bytes_in += (uint64_t)n;
		/* What the guest sends is translated in place. */
		vcc_frame(d->vcc, ifc->name, VCC_FROM_GUEST, d->rxbuf,
		    (size_t)n, d->rxbuf, 0, vnetd_now_us());
		vnetd_forward(d, ifc->port, d->rxbuf, (size_t)n,
		    WIRE_HOPS_DEFAULT, d->origin, d->seq++);
	}
}

int
iface_add(struct vnetd *d, const struct stmt *st, char *err, size_t errlen)
{
	struct iface	*ifc, *o;

	if (iface_find(d, st->name) != NULL) {
		snprintf(err, errlen, "interface %s already exists", st->name);
		return -1;
	}
	if ((ifc = calloc(1, sizeof(*ifc))) == NULL) {
		snprintf(err, errlen, "interface %s: out of memory", st->name);
		return -1;
	}
	ifc->d = d;
	ifc->fd = -1;
	ifc->type = st->iftype;
	ifc->ops = &tap_ops;
	snprintf(ifc->name, sizeof(ifc->name), "%s", st->name);
	snprintf(ifc->dev, sizeof(ifc->dev), "%s", st->dev);
	TAILQ_FOREACH(o, &d->ifaces, entry)
		if (strcmp(iface_devname(o), iface_devname(ifc)) == 0) {
			snprintf(err, errlen, "interface %s: device %s is "
			    "already used by interface %s", ifc->name,
			    iface_devname(ifc), o->name);
			free(ifc);
			return -1;
		}
	if ((ifc->fd = ifc->ops->open(ifc, err, errlen)) == -1) {
		free(ifc);
		return -1;
	}
	ifc->ev = event_new(d->base, ifc->fd, EV_READ | EV_PERSIST,
	    iface_readcb, ifc);
	ifc->port = fwd_port_ref(d->fwd, FWD_IFACE, ifc->name);
	if (ifc->ev == NULL || ifc->port == NULL || event_add(ifc->ev, NULL)) {
		snprintf(err, errlen, "interface %s: out of memory", ifc->name);
		iface_free(ifc);
		return -1;
	}
	fwd_port_attach(ifc->port, ifc);
	ifc->up = 1;
	TAILQ_INSERT_TAIL(&d->ifaces, ifc, entry);
	log_info("interface %s: %s device %s", ifc->name, ifc->ops->type,
	    iface_devname(ifc));
	return 0;
}

/* Frees an interface that is not (or no longer) on d->ifaces. */
void
iface_free(struct iface *ifc)
{
	if (ifc->port != NULL) {
		fwd_port_detach(ifc->port);
		fwd_port_unref(ifc->d->fwd, ifc->port);
	}
	if (ifc->ev != NULL)
		event_free(ifc->ev);
	ifc->ops->close(ifc);
	free(ifc);
}

int
iface_del(struct vnetd *d, const char *name, char *err, size_t errlen)
{
	struct iface	*ifc;

	if ((ifc = iface_find(d, name)) == NULL) {
		snprintf(err, errlen, "no interface %s", name);
		return -1;
	}
	TAILQ_REMOVE(&d->ifaces, ifc, entry);
	log_info("interface %s: removed", ifc->name);
	iface_free(ifc);
	return 0;
}

void
iface_send(struct iface *ifc, const uint8_t *eth, size_t len)
{
	struct vnetd	*d = ifc->d;

	/* Other ports may get the same frame: a rewrite goes to a copy. */
	if (len <= d->rxbuf_len && vcc_frame(d->vcc, ifc->name, VCC_TO_GUEST,
	    eth, len, d->txbuf, 0, vnetd_now_us()) == VCC_REWRITTEN)
		eth = d->txbuf;
	if (ifc->ops->write(ifc, eth, len) == -1) {
		ifc->c.drops++;
		return;
	}
	ifc->c.frames_out++;
	ifc->c.bytes_out += len;
}
