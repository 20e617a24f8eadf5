/*
 * The inside of an interface, for the iface module alone: iface.c and its
 * backends (tap.c, pcapif.c, afpacket.c, qemuif.c).  Everyone else holds
 * a struct iface through iface.h's functions.
 */
#ifndef VNET_IFACE_IMPL_H
#define VNET_IFACE_IMPL_H

/* After iface.h (which it completes; including it here would be a cycle). */
#ifndef VNET_IFACE_H
#error "iface_impl.h needs iface.h first"
#endif

struct iface {
	TAILQ_ENTRY(iface)	 entry;
	struct iface_env	*env;
	const struct iface_ops	*ops;
	char			 name[STMT_NAME_MAX + 1];
	char			 dev[STMT_DEV_MAX + 1];	/* as configured ("" = name) */
	enum stmt_iftype	 type;
	int			 fd;
	int			 up;
	struct event		*ev;
	struct port		 port;		/* its side of the switch */
	struct iface_counters	 c;
	struct stmt		 conf;		/* the statement it was made from */
	void			*softc;		/* the backend's state */
	struct event		*ev_watch;	/* present(), tick(), reopening */
	unsigned int		 open_failures;	/* in a row, while down */
	struct iothread		*io;		/* threads yes: the device's */
	uint64_t		 drops_seen_ms;	/* last capture drop noticed */
	int			 removing;	/* del-interface, not exit */
	void			*backend;	/* attach()'s state */
	/*
	 * With `segment NAME`: 1 while another node forwards the segment
	 * (routing_seg.c): what the device captures is dropped, nothing is
	 * written to it.  From the start until the election says otherwise.
	 */
	int			 standby;
};

#endif
