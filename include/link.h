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
 * it joins the link of that name (created if need be) in state UP.  When two
 * connections for one link are up at once (both sides dialled, or the peer
 * reconnected before we noticed), both daemons keep the same one: the newer
 * if both were made by the same side, else the one made by the node whose
 * name sorts first.
 *
 * A TLS link runs the same messages inside TLS 1.3, read and written by the
 * link itself on its non-blocking socket (tls.h): records are read ahead
 * into OpenSSL's buffer with large reads and decrypted straight into the
 * receive buffer; messages to send gather in the connection's tx buffer
 * and go out as 16 KiB records.  The handshake runs from the same socket
 * events, after TCP is up.  Its connection's
 * certificate must name the node the link is for: on an outgoing link the
 * link's peer (its NAME, or `peer NODE`), checked when TLS is up and before
 * our hello goes out; on an incoming one the node its hello announces.  A
 * link configured with tls takes no plain connection.
 *
 * Nothing a peer sends grows memory without bound: a connection must finish
 * TCP, TLS and the hello exchange within LINK_HANDSHAKE_TIMEOUT (a deadline,
 * not an idle timer, so trickling bytes does not stretch it); at most
 * LINK_PENDING_MAX accepted connections wait for their hello at a time,
 * and at most LINK_PENDING_PER_ADDR of them from one address, so that one
 * address holding silent connections cannot keep other peers from linking;
 * messages are bounded by the wire format and read into a buffer of fixed
 * size (LINK_RX_SIZE, whose pages the kernel gives only as they fill); and
 * a link queues at most its queue size for a peer that reads slowly,
 * dropping (and counting) the rest.
 */
#ifndef VNET_LINK_H
#define VNET_LINK_H

#include <sys/queue.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>

#include "sched.h"
#include "sw.h"
#include "stmt.h"
#include "wire.h"

struct vnetd;
struct bufferevent;
struct event;
struct evbuffer;
struct fwd_port;
struct link;
struct ssl_st;

#define LINK_QUEUE_DEFAULT	(4 * 1024 * 1024)	/* bytes, per link */
#define LINK_BACKOFF_MIN	1000			/* ms */
#define LINK_BACKOFF_MAX	30000			/* ms */
#define LINK_HANDSHAKE_TIMEOUT	10			/* s */
/*
 * The queue stays where the scheduler sees it: the connection's output
 * buffer is refilled from the link's queue only up to LINK_OUT_MAX bytes
 * (when it drains to LINK_OUT_LOW), and the kernel holds at most about
 * LINK_NOTSENT_LOWAT bytes not yet sent (TCP_NOTSENT_LOWAT).
 */
#define LINK_OUT_MAX		(64 * 1024)
/* Node records waiting in a plain connection's output, at most. */
#define LINK_NODE_OUT_MAX	(1024 * 1024)
#define LINK_OUT_LOW		(16 * 1024)
#define LINK_NOTSENT_LOWAT	(64 * 1024)
#define LINK_PENDING_MAX	64	/* accepted, waiting for their hello */
#define LINK_PENDING_PER_ADDR	8	/* of those, from one address */
/*
 * A connection's receive buffer: messages are handled where they arrived;
 * room for several of the largest, so that moving a partial one to the
 * front is rare.  Up to LINK_RX_READS reads per wake-up.
 */
#define LINK_RX_SIZE		(512 * 1024)
#define LINK_RX_READS		4
#define LINK_RCVLOWAT_MAX	(128 * 1024)
/*
 * TLS: records decrypted per wake-up (then other events get their turn),
 * and the plaintext waiting to be written: what link_drain puts there
 * (below LINK_OUT_MAX, plus the last message) and a little for control.
 */
#define LINK_TLS_READS		64
#define LINK_TX_SIZE		(LINK_OUT_MAX + WIRE_HDR_LEN + WIRE_PAYLOAD_MAX + 4096)

enum link_state {
	LINK_IDLE = 0,
	LINK_CONNECTING,
	LINK_HANDSHAKE,
	LINK_UP,
};

enum conn_state {
	CONN_CONNECTING = 0,
	CONN_HANDSHAKE,
	CONN_UP,
	CONN_CLOSING,		/* flushing a BYE, then freed */
	CONN_TLS,		/* accepted, TLS handshake in progress */
};

struct conn {
	TAILQ_ENTRY(conn)	 entry;		/* d->pending or d->closing */
	struct vnetd		*d;
	struct link		*link;		/* NULL while pending */
	struct bufferevent	*bev;
	enum conn_state		 state;
	int			 outgoing;
	int			 pending;	/* on d->pending */
	int			 closing;	/* on d->closing */
	char			 peer[STMT_HOST_MAX + 10];	/* HOST:PORT */
	char			 from[INET6_ADDRSTRLEN];	/* accepted: HOST */
	struct wire_hello	 hello;		/* the peer's, once received */
	uint64_t		 up_since;	/* ms */
	struct event		*ev_keepalive;
	int			 tls;
	struct event		*ev_deadline;	/* handshake, until UP */
	struct event		*ev_read;	/* the socket's (not a plain bev's) */
	uint8_t			*rx;		/* LINK_RX_SIZE, or NULL */
	size_t			 rx_off, rx_end;	/* unread: [off, end) */
	int			 rcvlowat;	/* SO_RCVLOWAT set, 0: 1 */
	const char		*fail;		/* why, when it must close */
	char			 fail_buf[160];	/* fail, when composed */
	/* TLS only: */
	struct ssl_st		*ssl;
	int			 tls_up;	/* handshake done */
	int			 rd_wants_wr;	/* a read waits to write */
	int			 wr_wants_rd;	/* a write waits to read */
	struct event		*ev_write;	/* the socket's, when it must */
	uint8_t			*tx;		/* LINK_TX_SIZE, or NULL */
	size_t			 tx_off, tx_end;	/* unwritten: [off, end) */
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

struct link {
	TAILQ_ENTRY(link)	 entry;
	struct vnetd		*d;
	char			 name[STMT_NAME_MAX + 1];
	int			 configured;	/* has an address to dial */
	struct stmt_hostport	 addr;
	enum link_state		 state;
	struct conn		*conn;		/* the one carrying frames */
	struct conn		*dialing;	/* our attempt in progress */
	struct event		*ev_retry;
	unsigned int		 backoff_ms;
	size_t			 queue_max;
	struct port		 port;		/* its side of the switch */
	struct link_counters	 c;
	struct sched		 sched;		/* the frames waiting to go */
	struct event		*ev_pace;	/* the shaper's wake-up */
	int			 tls;		/* configured with tls */
	char			 peer[STMT_NAME_MAX + 1];	/* "" = name */
	/* Why it is as it is, for `show links` and `show link`: */
	uint64_t		 state_since;	/* ms, the last change of state */
	uint64_t		 retry_at;	/* ms, the next attempt; 0: none */
	char			 last_error[LINK_WHY_MAX];
	uint64_t		 last_error_at;	/* ms; 0: none yet */
	uint64_t		 rate_at;	/* ms, the last rate sample */
	uint64_t		 rate_bytes_in, rate_bytes_out;	/* at rate_at */
	uint64_t		 rate_in, rate_out;	/* bit/s, the last sample's */
};

struct link	*link_find(struct vnetd *, const char *name);
/* `link NAME HOST:PORT`: creates a configured link and starts dialling. */
int		 link_add(struct vnetd *, const struct stmt *, char *err, size_t errlen);
int		 link_del(struct vnetd *, const char *name, char *err, size_t errlen);
void		 link_free(struct link *);
const char	*link_state_name(enum link_state);
/*
 * `set-link NAME OPTIONS`: the options given replace those remembered for
 * NAME (the rest stay), and apply at once if link NAME exists.
 */
int		 link_set_options(struct vnetd *, const struct stmt *, char *err,
		    size_t errlen);
/*
 * 0 if this kernel lets the daemon use TCP congestion control cc ("" is
 * the system's), else -1 with errno and a message in err.
 */
int		 link_congestion_check(const char *cc, char *err,
		    size_t errlen);
/*
 * The TCP congestion control the link's connection uses, into buf
 * (STMT_CONGESTION_MAX + 1 bytes), or "-" without a connection.
 */
const char	*link_congestion(const struct link *, char *buf);
/* The options link NAME has or will have. */
void		 link_options(struct vnetd *, const char *name,
		    struct sched_opts *);

/*
 * Remembers a refused peer for `show refused` (the caller logs and counts
 * the refusal, once).  node: what its hello announced, or NULL.
 */
void		 link_refusal_add(struct vnetd *, const char *peer,
		    const char *node, const char *why);
/* Every second: each link's rates in and out over the last seconds. */
void		 link_tick(struct vnetd *, uint64_t now_ms);
/* `show links` (all: every counter), `show link NAME`, `show refused`. */
void		 link_show_links(struct vnetd *, int all, struct evbuffer *);
int		 link_show(struct vnetd *, const char *name, struct evbuffer *,
		    char *err, size_t errlen);
void		 link_show_refused(struct vnetd *, struct evbuffer *);
/*
 * The control plane's view of a link (routing.h): the peer's node name if
 * the link is up and the peer takes node records, else NULL; sending one
 * record (ahead of queued frames); the connection's TCP round trip (0 if
 * unknown).
 */
const char	*link_node_peer(const struct link *);
/* -1: not sent (no control plane there, or its output is backed up). */
int		 link_send_node(struct link *, const uint8_t *p, size_t n);
uint32_t	 link_rtt_us(const struct link *);

/* An accepted connection (over TLS or not): starts its handshake. */
void		 conn_accept(struct vnetd *, int fd, const struct sockaddr *,
		    int socklen, int tls);
void		 conn_free(struct conn *);
/* Writes what c has queued, as far as the socket takes it now. */
void		 conn_flush(struct conn *);

#endif
