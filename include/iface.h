/*
 * Local interfaces: where guests' frames enter and leave the daemon.  The
 * generic part (naming, forwarding port, counters, event) is here; the
 * device itself sits behind iface_ops (TAP today).
 */
#ifndef VNET_IFACE_H
#define VNET_IFACE_H

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include "stmt.h"

struct vnetd;
struct event;
struct fwd_port;
struct iface;

struct iface_ops {
	const char	*type;
	/* Opens the device; returns a pollable non-blocking fd or -1 (err). */
	int		 (*open)(struct iface *, char *err, size_t errlen);
	/* Reads one frame: length, 0 when nothing is pending, -1 on error. */
	ssize_t		 (*read)(struct iface *, uint8_t *buf, size_t len);
	/* Writes one frame: 0, or -1 (errno set) when it was dropped. */
	int		 (*write)(struct iface *, const uint8_t *buf, size_t len);
	void		 (*close)(struct iface *);
};

struct iface_counters {
	uint64_t	frames_in, bytes_in;
	uint64_t	frames_out, bytes_out;
	uint64_t	drops;		/* writes the device refused */
	uint64_t	read_errors;
};

struct iface {
	TAILQ_ENTRY(iface)	 entry;
	struct vnetd		*d;
	const struct iface_ops	*ops;
	char			 name[STMT_NAME_MAX + 1];
	char			 dev[STMT_DEV_MAX + 1];	/* as configured ("" = name) */
	enum stmt_iftype	 type;
	int			 fd;
	int			 up;
	struct event		*ev;
	struct fwd_port		*port;
	struct iface_counters	 c;
};

struct iface	*iface_find(struct vnetd *, const char *name);
int		 iface_add(struct vnetd *, const struct stmt *, char *err, size_t errlen);
int		 iface_del(struct vnetd *, const char *name, char *err, size_t errlen);
void		 iface_free(struct iface *);
void		 iface_send(struct iface *, const uint8_t *eth, size_t len);
const char	*iface_devname(const struct iface *);

extern const struct iface_ops tap_ops;

#endif
