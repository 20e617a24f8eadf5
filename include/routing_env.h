/*
 * What the control plane (routing.h) is given by whoever runs it: the
 * daemon (routing_daemon.h), or a test that runs many in one process.
 */
#ifndef VNET_ROUTING_ENV_H
#define VNET_ROUTING_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"

struct stmt;
struct ssl_ctx_st;

/* Where a link's dial stands, as the layer below knows it. */
enum routing_dial_state {
	ROUTING_DIAL_NONE = 0,		/* no such link, or no dial yet */
	ROUTING_DIAL_SYN,		/* connecting, no answer yet */
	ROUTING_DIAL_HANDSHAKE,		/* connected, the hello not done */
	ROUTING_DIAL_FAILED,		/* the last attempt failed: error */
	ROUTING_DIAL_UP,
};

#define ROUTING_DIAL_ERROR_MAX	160
struct routing_dial {
	enum routing_dial_state	 state;
	unsigned int		 tries;	/* SYN: SYNs sent so far */
	int			 refused; /* FAILED: connection refused */
	char			 error[ROUTING_DIAL_ERROR_MAX];	/* FAILED */
};

/*
 * What the control plane needs from below, each with arg.  A link is the
 * env's handle, given with routing_link_up().
 */
struct routing_env {
	void		*arg;
	/* Monotonic ms (timers, ages); the wall clock in ms (sequences). */
	uint64_t	 (*now_ms)(void *arg);
	uint64_t	 (*wall_ms)(void *arg);
	/* Call routing_poll() in delay_ms (replacing the last request). */
	void		 (*arm)(void *arg, uint64_t delay_ms);
	/* Sends one message (a record) on link: 0, or -1 when not sent. */
	int		 (*send)(void *arg, void *link, const uint8_t *p,
			    size_t n);
	uint32_t	 (*rtt_us)(void *arg, void *link);	/* 0: unknown */
	/* 1 while link is still up (after a link that was up is gone). */
	int		 (*alive)(void *arg, void *link);
	/*
	 * How many local interfaces there are (each gets a share of MACs);
	 * with only one, *only (if not NULL) is set to its name, else NULL.
	 */
	size_t		 (*ifaces)(void *arg, const char **only);
	/* This node's listeners' addresses ("HOST:PORT"), at most max. */
	size_t		 (*addrs)(void *arg, char (*out)[NODE_ADDR_MAX + 1],
			    size_t max);
	/*
	 * This node's candidates but `advertise` (node.h NODE_SEC_CANDS),
	 * at most max; NULL: addrs(), each taken as NODE_CAND_HOST.
	 */
	size_t		 (*cands)(void *arg, struct node_cand *out, size_t max);
	/*
	 * A hole toward node's NAT: connect from local port lport to addr
	 * ("HOST:PORT") and, once through, take the connection as one
	 * accepted (its TLS server side), as the peer's dial from its own
	 * listener's port meets ours.  At most one at a time per node; NULL:
	 * no punching.
	 */
	void		 (*punch)(void *arg, const char *node, const char *addr,
			    uint16_t lport);
	/*
	 * How the dial of the configured link name stands (a shortcut's,
	 * for show adapt's words); NULL: nothing known.
	 */
	void		 (*dial)(void *arg, const char *name,
			    struct routing_dial *out);
	/* 1 if a configured link (one with an address to dial) is named so. */
	int		 (*configured)(void *arg, const char *name);
	/* Shortcuts: a statement as from vnetctl (link, del-link). */
	int		 (*apply)(void *arg, const struct stmt *, char *err,
			    size_t errlen);
	/* 1 if links are to be dialled over TLS. */
	int		 (*tls)(void *arg);
	/*
	 * 1 if a shortcut to peer is to carry its frames by datagrams
	 * (`transport auto`, link.h links_shortcut_transport()); NULL: never.
	 */
	int		 (*dgram)(void *arg, const char *peer);
	/*
	 * The TLS context as it is now (reloads replace it), whose key signs
	 * our records and whose CA store checks others'; NULL (or no such
	 * function): a plain network, records unsigned and taken unchecked.
	 */
	struct ssl_ctx_st *(*tls_ctx)(void *arg);
	/*
	 * Optional, LAN segments (routing_seg.c): the distinct segments of
	 * the local interfaces (at most max); the interfaces of segment seg
	 * forward (active 1) or capture and drop, injecting nothing (0); a
	 * frame from mac sent out on segment seg's interfaces to make the
	 * LAN's switches learn where mac is now; an interface's segment.
	 */
	size_t		 (*segments)(void *arg, char (*out)[NODE_NAME_MAX + 1],
			    size_t max);
	void		 (*segment_set)(void *arg, const char *seg, int active);
	void		 (*announce)(void *arg, const char *seg,
			    const uint8_t *mac);
	/* The segment of the interface named port, or NULL. */
	const char	*(*port_segment)(void *arg, const char *port);
	/* Records held at most; 0: NODEDB_RECORDS_MAX (nodedb.h). */
	size_t		 records_max;
};

/* What a link that came up is (routing_link_up()). */
struct routing_link {
	void		*link;		/* the env's handle */
	const char	*name;		/* the link's name (its port's) */
	const char	*peer;		/* its node, NULL: no control plane */
	int		 configured;	/* we dial it */
	int		 shortcut;	/* the peer dialled it as a shortcut */
};

#endif
