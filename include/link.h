/*
 * Links: TCP connections to other daemons.
 *
 * A link is a named peer.  A configured link (`link NAME HOST:PORT`) keeps
 * trying to be up; an incoming link exists while its peer is connected and
 * is named by the node name the peer announces.  A link carries frames
 * through at most one connection (struct conn) at a time.
 *
 * Link states, every change through link_set_state(), which logs it:
 *
 *   IDLE ----connect timer----> CONNECTING --TCP up--> HANDSHAKE --hello ok--> UP
 *     ^                              |                     |                  |
 *     +------- backoff 1s..30s ------+---------------------+---- error -------+
 *
 * An incoming connection is pending (no link) until its hello arrives; then
 * it joins the link of that name (created if need be) in state UP.  When
 * that connection goes, the incoming link stays, down with the reason, for
 * LINK_GONE_KEEP (so that `show links` says what became of the peer), and
 * takes the peer's next connection, counters and all; at most LINK_GONE_MAX
 * are kept, the oldest forgotten first (a peer that keeps changing its
 * name makes no more of them).  A peer's shortcut (adapt), which its
 * dialler closes when it is no longer needed, is forgotten at once.  When two
 * connections for one link are up at once (both sides dialled, or the peer
 * reconnected before we noticed), both daemons keep the same one: the newer
 * if both were made by the same side, else the one made by the node whose
 * name sorts first.
 *
 * The connection itself (framing, hello, keepalive, plain and TLS I/O, the
 * bounds on what a peer can make it hold) is conn.h's; a TLS link's
 * connection must show the certificate of the node the link is for.  A
 * link configured with tls takes no plain connection.
 *
 * A link's frames may go in UDP datagrams instead (`transport udp|auto`):
 * the connection stays for everything else and offers the datagram path
 * (udp.h), which lives as long as the connection.  The queue, AQM and rate
 * are the same either way.
 *
 * A link that is up has a liveness (liveness.h): probes every interval
 * (`liveness` globally, or the link option), and when they stop, or the
 * peer says it hears nothing, or frames go unanswered, the link leaves the
 * switch and the routing (hooks.down) while its connection stays; it comes
 * back (hooks.up) after the hold time.  link_alive() is that verdict.
 *
 * A link queues at most its queue size for a peer that reads slowly,
 * dropping (and counting) the rest.
 */
#ifndef VNET_LINK_H
#define VNET_LINK_H

#include <sys/queue.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "liveness.h"
#include "sched.h"
#include "sw.h"
#include "stmt.h"
#include "wire.h"

struct conn;
struct event;
struct event_base;
struct evbuffer;
struct evdns_base;
struct link;
struct links;
struct metric_out;
struct ssl_ctx_st;
struct udp;
struct udp_path;

#define LINK_QUEUE_DEFAULT	(4 * 1024 * 1024)	/* bytes, per link */
#define LINK_BACKOFF_MIN	1000			/* ms */
#define LINK_BACKOFF_MAX	30000			/* ms */
#define LINK_GONE_KEEP		(10 * 60 * 1000)	/* ms, see above */
#define LINK_GONE_MAX		64

enum link_state {
	LINK_IDLE = 0,
	LINK_CONNECTING,
	LINK_HANDSHAKE,
	LINK_UP,
};

struct link_counters {
	uint64_t	frames_in, bytes_in;
	uint64_t	frames_out, bytes_out;
	uint64_t	drops;		/* tail and AQM drops (see sched) */
	uint64_t	connects;	/* times it came up */
};

/* A peer refused lately (`show refused`): the last LINK_REFUSED_MAX. */
#define LINK_REFUSED_MAX	32
#define LINK_WHY_MAX		160
struct link_refusal {
	uint64_t	 at;				/* ms */
	char		 peer[STMT_HOST_MAX + 10];	/* HOST:PORT */
	char		 node[STMT_NAME_MAX + 1];	/* "" before a hello */
	char		 why[LINK_WHY_MAX];
};
struct link_refusals {
	struct link_refusal	 r[LINK_REFUSED_MAX];
	size_t			 next;		/* the slot to write */
	uint64_t		 total;
};

TAILQ_HEAD(link_list, link);

/*
 * What the links need from the daemon above them; arg is the hooks' own.
 * The control plane hears of links only through these.
 */
struct links_hooks {
	/* Our hello: this node, its network, keepalive and capabilities. */
	void		 (*hello)(void *arg, struct wire_hello *);
	/* The TLS context, NULL if there is none (yet). */
	struct ssl_ctx_st *(*tls)(void *arg);
	/* A node record from l's peer: 0, or -1 with why (l's connection closes). */
	int		 (*node)(void *arg, struct link *l, const uint8_t *,
			    size_t, const char **why);
	/* 1 if l is an automatic shortcut: its hello says so. */
	int		 (*shortcut)(void *arg, const struct link *l);
	/* l came up; l went down (NULL: a link that was up is gone). */
	void		 (*up)(void *arg, struct link *l);
	void		 (*down)(void *arg, struct link *l);
	/*
	 * `show links`: who made l (into trigger, a reason), and its history
	 * columns (HISTORY_COLUMNS), each with its leading tab.
	 */
	const char	*(*origin)(void *arg, const struct link *l,
			    char *trigger, size_t, const char **reason);
	const char	*(*history)(void *arg, const char *name, char *buf,
			    size_t);
	const char	*history_columns;	/* their names */
	void		*arg;
};

/* The links of one daemon, their connections, and what they share. */
struct links {
	struct link_list	 list;
	struct conns		 conns;		/* pending and closing, too */
	struct sched_optlist	 opts;		/* link options by name */
	struct link_refusals	 refused;	/* the peers refused lately */
	struct event_base	*base;
	struct sw		*sw;
	struct udp		*udp;		/* the datagram sockets */
	struct links_hooks	 hooks;
	/* `liveness`: the probe interval (ms, 0: off) and multiplier. */
	uint32_t		 live_interval, live_mult;
	int			 live_idle_slow;	/* idle links slow down */
	/* Down incoming links: how long kept, how many (tests make them less). */
	uint64_t		 gone_keep_ms;
	size_t			 gone_max;
};

/*
 * Sets up an empty table; links_start() gives it the event machinery,
 * before the first link.
 */
void		 links_init(struct links *, struct sw *,
		    const struct links_hooks *);
void		 links_start(struct links *, struct event_base *,
		    struct evdns_base *);
/*
 * `liveness`: the interval (ms, or STMT_LIVENESS_OFF) and multiplier (0:
 * the default) of links without their own; applies to those up at once.
 */
/*
 * 0: links keep the fast pace when idle too (a node with a segment
 * interface); 1, the default: an idle link probes at the slow pace.
 */
void		 links_set_idle_slow(struct links *, int on);
void		 links_set_liveness(struct links *, uint32_t interval,
		    uint32_t mult);
/* Frees every link and connection (sending what BYEs go at once). */
void		 links_free(struct links *);
struct link	*link_find(struct links *, const char *name);
/* `link NAME HOST:PORT`: creates a configured link and starts dialling. */
int		 link_add(struct links *, const struct stmt *, char *err, size_t errlen);
int		 link_del(struct links *, const char *name, char *err, size_t errlen);
/*
 * `set-link NAME OPTIONS`: the options given replace those remembered for
 * NAME (the rest stay), and apply at once if link NAME exists.
 */
int		 link_set_options(struct links *, const struct stmt *, char *err,
		    size_t errlen);
/*
 * 0 if this kernel lets the daemon use TCP congestion control cc ("" is
 * the system's), else -1 with errno and a message in err.
 */
int		 link_congestion_check(const char *cc, char *err,
		    size_t errlen);
/* The options link NAME has or will have. */
void		 link_options(struct links *, const char *name,
		    struct sched_opts *);

/*
 * Remembers a refused peer for `show refused` (the caller logs and counts
 * the refusal, once).  node: what its hello announced, or NULL.
 */
void		 link_refusal_add(struct links *, const char *peer,
		    const char *node, const char *why);
/*
 * How a shortcut's frames go (dialled by this node or by the peer named
 * name): the transport a `link` or `set-link` statement gave that name,
 * else auto if a link this node dials by its own `link` statement says
 * auto or udp, else tcp.
 */
enum stmt_transport links_shortcut_transport(struct links *,
		    const char *name);
/*
 * An accepted connection (over TLS or not) for the links; punched: a hole
 * punched toward a peer's NAT (conn.h).
 */
void		 links_accept(struct links *, int fd, const struct sockaddr *,
		    int socklen, int tls, int punched);
/*
 * A listener's address came or went: datagrams are taken there too (a
 * link's datagram path, `transport udp|auto`, udp.h).
 */
void		 links_udp_listen(struct links *, const struct stmt_hostport *);
void		 links_udp_unlisten(struct links *,
		    const struct stmt_hostport *);
/* Datagrams that named no link. */
uint64_t	 links_udp_unknown(const struct links *);
/* Every second: each link's rates in and out over the last seconds. */
void		 link_tick(struct links *, uint64_t now_ms);
/* `show links` (all: every counter), `show link NAME`, `show refused`. */

void		 link_show_links(struct links *, int all, struct evbuffer *);
int		 link_show(struct links *, const char *name, struct evbuffer *,
		    char *err, size_t errlen);
void		 link_show_refused(struct links *, struct evbuffer *);
/*
 * The control plane's view of a link (routing.h): the peer's node name if
 * the link is up and the peer takes node records, else NULL; sending one
 * record (ahead of queued frames); the connection's TCP round trip (0 if
 * unknown).
 */
const char	*link_node_peer(const struct link *);
/* 1 if l is up and its liveness says it carries traffic. */
int		 link_alive(const struct link *);
/* -1: not sent (no control plane there, or its output is backed up). */
/* 1 if l's peer said in its hello that it dialled l as a shortcut. */
int		 link_peer_shortcut(const struct link *l);
int		 link_send_node(struct link *, const uint8_t *p, size_t n);
uint32_t	 link_rtt_us(const struct link *);

/*
 * What the rest of the daemon may know of a link (struct link is
 * link_impl.h's).  The links in the order they were made:
 *	LINKS_FOREACH(l, &d->links) ...
 * (l must not be freed inside).
 */
struct link	*links_first(struct links *);
struct link	*link_next(struct link *);
#define LINKS_FOREACH(l, lks)						\
	for ((l) = links_first(lks); (l) != NULL; (l) = link_next(l))
const char	*link_name(const struct link *);
/* The node at the other end: `peer NODE`, or the link's own name. */
const char	*link_peer(const struct link *);
/* 1 in state LINK_UP (whatever its liveness says: link_alive()). */
int		 link_is_up(const struct link *);
/* 1 for a link made by a `link` statement (it has an address to dial). */
int		 link_configured(const struct link *);
/* The connection carrying frames; our dial in progress (NULL: none). */
struct conn	*link_conn(const struct link *);
struct conn	*link_dialing(const struct link *);
/* Why liveness took l out ("" if it did not); its last error ("": none). */
const char	*link_live_why(const struct link *);
const char	*link_last_error(const struct link *);
/* Its counters and its scheduler's (the history's samples). */
const struct link_counters *link_counters(const struct link *);
const struct sched *link_sched(const struct link *);
/*
 * The `link` statement that makes l again (st set up as STMT_LINK by the
 * caller): name, address, tls, peer and queue; the options are
 * link_options()'s.
 */
void		 link_to_stmt(const struct link *, struct stmt *st);

/* A link's datagram path, for the metrics (zeros when it has none). */
struct link_dgram {
	uint64_t	 path;		/* 1: it has one */
	uint64_t	 by_udp;	/* 1: frames go by datagrams now */
	uint64_t	 path_mtu;
	uint64_t	 sent, received;
	uint64_t	 lost, reordered, replayed, auth_failed;
};
void		 link_dgram_info(const struct link *, struct link_dgram *);
/* The links' families of /metrics (metric.h). */
void		 link_metrics(const struct links *, const struct metric_out *);

#endif
