/*
 * Connections: one TCP connection to another daemon, from TCP up through
 * the hello exchange to the BYE.
 *
 * A connection frames the wire messages (wire.h), says and checks hello,
 * keeps the peer alive with keepalives and closes it when silent; it knows
 * nothing of links.  What it learns goes up through the callbacks its owner
 * (link.c) set in struct conns: it joined (its hello passed), a frame or a
 * node record arrived, it is lost.  Its link is an opaque pointer here.
 *
 * The bytes go through a transport (struct conn_io): plain TCP, written by
 * a bufferevent (this file), or TLS 1.3 (conn_tls.c): records are read
 * ahead into OpenSSL's buffer with large reads and decrypted straight into
 * the receive buffer; messages to send gather in the connection's tx
 * buffer and go out as 16 KiB records.  The TLS handshake runs from the
 * same socket events, after TCP is up.  Its connection's certificate must
 * name the node the connection is for: on an outgoing one the node it
 * dialled (conn_dial()'s expect), checked when TLS is up and before our
 * hello goes out; on an incoming one the node its hello announces.
 *
 * Nothing a peer sends grows memory without bound: a connection must finish
 * TCP, TLS and the hello exchange within CONN_HANDSHAKE_TIMEOUT (a deadline,
 * not an idle timer, so trickling bytes does not stretch it); at most
 * CONN_PENDING_MAX accepted connections wait for their hello at a time,
 * and at most CONN_PENDING_PER_ADDR of them from one address, so that one
 * address holding silent connections cannot keep other peers from linking;
 * messages are bounded by the wire format and read into a buffer of fixed
 * size (CONN_RX_SIZE, whose pages the kernel gives only as they fill).
 *
 * A connection is never freed under its caller: one that must close where
 * it cannot be (the caller may be forwarding over it) is closed from the
 * loop (conn_fail_later()), and an established one is told why with a BYE,
 * flushed within a second from the closing list.
 */
#ifndef VNET_CONN_H
#define VNET_CONN_H

#include <sys/queue.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <stddef.h>
#include <stdint.h>

#include "stmt.h"
#include "wire.h"

struct bufferevent;
struct evbuffer;
struct event;
struct event_base;
struct evdns_base;
struct link;
struct metric_out;
struct ssl_ctx_st;
struct x509_st;
struct conn;
struct conns;

#define CONN_HANDSHAKE_TIMEOUT	10			/* s */
/*
 * The link's queue stays where its scheduler sees it: the connection's
 * output is refilled from it only up to CONN_OUT_MAX bytes (when it drains
 * to CONN_OUT_LOW), and the kernel holds at most about CONN_NOTSENT_LOWAT
 * bytes not yet sent (TCP_NOTSENT_LOWAT).
 */
#define CONN_OUT_MAX		(64 * 1024)
/* Node records waiting in a plain connection's output, at most. */
#define CONN_NODE_OUT_MAX	(1024 * 1024)
#define CONN_OUT_LOW		(16 * 1024)
#define CONN_NOTSENT_LOWAT	(64 * 1024)
#define CONN_PENDING_MAX	64	/* accepted, waiting for their hello */
#define CONN_PENDING_PER_ADDR	8	/* of those, from one address */
/*
 * A connection's receive buffer: messages are handled where they arrived;
 * room for several of the largest, so that moving a partial one to the
 * front is rare.  Up to CONN_RX_READS reads per wake-up.
 */
#define CONN_RX_SIZE		(512 * 1024)
#define CONN_RX_READS		4
#define CONN_RCVLOWAT_MAX	(128 * 1024)
/*
 * TLS: records decrypted per wake-up (then other events get their turn),
 * and the plaintext waiting to be written: what a link's drain puts there
 * (below CONN_OUT_MAX, plus the last message) and a little for control.
 */
#define CONN_TLS_READS		64
#define CONN_TX_SIZE		(CONN_OUT_MAX + WIRE_HDR_LEN + WIRE_PAYLOAD_MAX + 4096)

enum conn_state {
	CONN_CONNECTING = 0,
	CONN_HANDSHAKE,
	CONN_UP,
	CONN_CLOSING,		/* flushing a BYE, then freed */
	CONN_TLS,		/* accepted, TLS handshake in progress */
};

/*
 * A transport: how a connection's bytes meet its socket.  The reader is the
 * socket's read event (conn_read_start()); it reads into the receive buffer
 * (conn_rx_room()) and hands what arrived to conn_input().
 */
struct conn_io {
	const char	*name;		/* "plain", "TLS" */
	int		 autoflush;	/* the output writes itself */
	size_t		 node_out_max;	/* node records waiting, at most */
	/*
	 * TCP is up (dialled or accepted): what must come before the hello,
	 * which ends in conn_connected().  0, or -1 without memory.
	 */
	int		 (*start)(struct conn *);
	void		 (*readcb)(int, short, void *);
	/* Appends to the output: 0, or -1 if it does not fit (or no memory). */
	int		 (*add)(struct conn *, const void *, size_t);
	/* Room for n more bytes in one allocation, if that helps. */
	void		 (*reserve)(struct conn *, size_t n);
	/* Writes what waits, as the socket takes it: -1 with c->fail. */
	int		 (*flush)(struct conn *);
	size_t		 (*out_len)(const struct conn *);
	/* See conn_send_direct(). */
	int		 (*direct)(struct conn *, const uint8_t *pre,
			    size_t prelen, const uint8_t *eth, size_t len);
	/* The hello passed: the transport's part of going up. */
	void		 (*established)(struct conn *);
	/* Sends the BYE and frees c once out: 0, or -1 to free c now. */
	int		 (*bye)(struct conn *, const void *, size_t);
	/* Has the loop call back soon (to close c, c->fail set). */
	void		 (*wake)(struct conn *);
	/* 0 if the peer proved to be node (plain: nothing to prove). */
	int		 (*check_peer)(struct conn *, const char *node, char *why,
			    size_t);
	/*
	 * Keying material of the session (TLS: its exporter, RFC 8446 7.5,
	 * under label with context ctx): 0, or -1 (plain: there is none).
	 * The AEAD the session negotiated, as dgram.h names it (plain: 0).
	 */
	int		 (*exporter)(struct conn *, const char *label,
			    const uint8_t *ctx, size_t ctxlen, uint8_t *out,
			    size_t outlen);
	int		 (*aead)(const struct conn *);
	/* What it is, for the log: 0, or -1 if nothing worth saying. */
	int		 (*describe)(const struct conn *, char *, size_t);
	void		 (*free)(struct conn *);
};

extern const struct conn_io conn_plain_io;
extern const struct conn_io conn_tls_io;

struct conn {
	TAILQ_ENTRY(conn)	 entry;		/* cs->pending or cs->closing */
	struct conns		*cs;
	struct link		*link;		/* the owner's; NULL while pending */
	const struct conn_io	*io;
	void			*io_state;	/* the transport's */
	struct bufferevent	*bev;
	enum conn_state		 state;
	int			 outgoing;
	int			 pending;	/* on cs->pending */
	int			 closing;	/* on cs->closing */
	char			 peer[STMT_HOST_MAX + 10];	/* HOST:PORT */
	char			 from[INET6_ADDRSTRLEN];	/* accepted: HOST */
	char			 name[STMT_NAME_MAX + 1];	/* dialled: its link */
	char			 expect[STMT_NAME_MAX + 1];	/* dialled: the node */
	struct wire_hello	 hello;		/* the peer's, once received */
	uint32_t		 caps;		/* ours, as our hello said */
	uint16_t		 hello_extra;	/* caps of this connection only */
	uint64_t		 up_since;	/* ms */
	/*
	 * Where the peer sees this side (its SEEN messages, wire.h), ""
	 * until it says: [0] the connection's near end, [1] our datagrams.
	 */
	char			 seen[2][WIRE_SEEN_ADDR_MAX + 1];
	struct event		*ev_keepalive;
	struct event		*ev_deadline;	/* handshake, until UP */
	struct event		*ev_read;	/* the socket's (not a plain bev's) */
	uint8_t			*rx;		/* CONN_RX_SIZE, or NULL */
	size_t			 rx_off, rx_end;	/* unread: [off, end) */
	size_t			 need;		/* bytes the next message lacks */
	uint64_t		 msgs_in;	/* messages heard, any kind */
	int			 rcvlowat;	/* SO_RCVLOWAT set, 0: 1 */
	/*
	 * The peer is taken for gone (silent, or its liveness lost): a close
	 * resets the connection (SO_LINGER 0) instead of a FIN that would
	 * wait for minutes of retransmissions in FIN_WAIT, holding the
	 * address pair a hole is punched again on.
	 */
	int			 dead;
	/*
	 * A punched pair (a shortcut through both ends' NATs): the peer's
	 * address is its NAT's binding, which both ends' datagrams go to at
	 * once (udp.h) as both ends' SYNs did.
	 */
	int			 punched;
	const char		*fail;		/* why, when it must close */
	char			 fail_buf[160];	/* fail, when composed */
};

struct conn_stats {
	uint64_t	bad_messages;	/* closed for malformed input */
	uint64_t	refused;	/* handshakes refused */
	uint64_t	tls_refused;	/* peer certificates we refused */
	uint64_t	tls_failed;	/* other TLS failures (refused by the peer, not TLS) */
	uint64_t	pending_full;	/* connections closed: too many pending */
	uint64_t	pending_addr_full;	/* the same, from one address */
	uint64_t	handshake_timeouts;	/* no handshake within the limit */
	uint64_t	clones;		/* a second live connection of a node */
};

/* What a connection tells its owner; arg is conns.arg. */
struct conn_cbs {
	/* Our hello: what we are and ask for. */
	void		 (*hello)(void *arg, struct wire_hello *);
	/* The TLS context, NULL if there is none. */
	struct ssl_ctx_st *(*tls)(void *arg);
	/* A dialled connection is up (TCP, and TLS if any): the hello goes. */
	void		 (*connected)(void *arg, struct conn *);
	/*
	 * The peer's hello passed: c joins its link (c->link set), or is
	 * closed (-1) if the link will not have it.
	 */
	int		 (*join)(void *arg, struct conn *);
	/* c is up and carries its link's frames. */
	void		 (*established)(void *arg, struct conn *);
	/* A frame arrived on an established c.  It never closes c. */
	void		 (*frame)(void *arg, struct conn *, uint8_t hops,
			    const struct wire_frame *);
	/* A node record: 0, or -1 with why (c closes, as malformed). */
	int		 (*node)(void *arg, struct conn *, const uint8_t *,
			    size_t, const char **why);
	/* c, with a link, closes: the link forgets it (c->link is NULL after). */
	void		 (*lost)(void *arg, struct conn *, const char *why);
	/* A peer was refused (already logged and counted). node: or NULL. */
	void		 (*refused)(void *arg, const char *peer,
			    const char *node, const char *why);
	/* Room in c's output: more may go. */
	void		 (*writable)(void *arg, struct conn *);
	/* A PROBE (wire.h, liveness.h) from the peer of an established c. */
	void		 (*probe)(void *arg, struct conn *,
			    const struct wire_probe *);
	/* A DGRAM message (wire.h): 0, or -1 with why (c closes). */
	int		 (*dgram)(void *arg, struct conn *,
			    const struct wire_dgram *, const char **why);
};

TAILQ_HEAD(conn_list, conn);

/* The connections of one daemon. */
struct conns {
	struct event_base	*base;
	struct evdns_base	*dns;
	uint64_t		 (*now_ms)(void);
	const struct conn_cbs	*cbs;
	void			*arg;
	struct conn_list	 pending;	/* accepted, before their hello */
	struct conn_list	 closing;	/* flushing a BYE */
	size_t			 npending;	/* on the pending list */
	uint64_t		 pending_full_logged;	/* ms */
	uint64_t		 pending_addr_logged;	/* ms */
	struct conn_stats	 stats;
};

void		 conns_init(struct conns *, struct event_base *,
		    struct evdns_base *, uint64_t (*now_ms)(void),
		    const struct conn_cbs *, void *arg);
/* Frees the pending connections. */
void		 conns_free_pending(struct conns *);
/* Sends what the closing connections still have, if it goes now; frees them. */
void		 conns_free_closing(struct conns *);
/*
 * The counters: rows of show stats; the samples of vnet_refused_total
 * (its head is the caller's: the listeners add theirs); the failures'
 * families.
 */
void		 conns_show_stats(const struct conns *, struct evbuffer *);
void		 conns_metrics_refused(const struct conns *,
		    const struct metric_out *);
void		 conns_metrics(const struct conns *, const struct metric_out *);

/*
 * A connection for link l (named name, for the log) to node expect at peer
 * (HOST:PORT, for the log): NULL without memory.  conn_connect() then dials
 * it: 0, or -1 if it cannot even start (the caller frees c).  Apart, so
 * that the link knows c before any of its callbacks can run.
 */
struct conn	*conn_dial(struct conns *, struct link *l, const char *name,
		    const char *expect, const char *peer, int tls);
int		 conn_connect(struct conn *, const char *host, uint16_t port);
/*
 * The same to a numeric host from local port lport (SO_REUSEPORT, beside
 * the listener there): the NAT in front keeps the port, the far side's
 * connect to it meets ours (a TCP simultaneous open).
 */
int		 conn_connect_from(struct conn *, const char *host,
		    uint16_t port, uint16_t lport);
/* A socket bound to lport of family as conn_connect_from() makes it. */
int		 conn_socket_from(int family, uint16_t lport);
/*
 * An accepted connection (over TLS or not): starts its handshake.  punched:
 * the far end of a hole punched toward a peer's NAT, taken as accepted.
 */
void		 conn_accept(struct conns *, int fd, const struct sockaddr *,
		    int socklen, int tls, int punched);
/*
 * Closes a connection.  Detached first from its link (which may redial).  An
 * established one is told why with a BYE, flushed within a second.  bad:
 * counted as a malformed message.
 */
void		 conn_close(struct conn *, const char *why, int bad);
void		 conn_free(struct conn *);
/* Takes c off the pending (or closing) list: its link has it now. */
void		 conn_unpend(struct conn *);
/* Closes c from the loop, at once: its caller may be forwarding over it. */
void		 conn_fail_later(struct conn *, const char *why);
int		 conn_tls(const struct conn *);
int		 conn_fd(const struct conn *);
/*
 * TLS (conn_tls.c): c's peer checked again under a new context, 0 if it
 * still verifies (or c is not TLS, or not through its handshake), else -1
 * with why; the peer's certificate, or NULL.
 */
int		 conn_tls_recheck(struct conn *, struct ssl_ctx_st *,
		    char *why, size_t);
struct x509_st	*conn_tls_peer_cert(const struct conn *);

/*
 * The output, for the link's drain: bytes handed to c and not yet to the
 * kernel; a hint of what comes; one message (0, or -1: not taken).
 */
size_t		 conn_out_len(const struct conn *);
void		 conn_reserve(struct conn *, size_t);
int		 conn_add(struct conn *, const void *, size_t);
/*
 * Has a transport that does not write by itself write now: 1 if it did
 * (so there may be room no event will announce), else 0.
 */
int		 conn_push(struct conn *);
/*
 * A frame that need not wait goes straight toward the socket: 0 if it went,
 * 1 if it was lost on the way (c closes from the loop), -1 to queue it.
 */
int		 conn_send_direct(struct conn *, const uint8_t *pre,
		    size_t prelen, const uint8_t *eth, size_t len);
/* One node record, ahead of queued frames: 0, or -1 (not sent). */
int		 conn_send_node(struct conn *, const uint8_t *p, size_t n);
/* A DGRAM message, ahead of queued frames: 0, or -1 (not sent). */
int		 conn_send_dgram(struct conn *, const struct wire_dgram *);
/* A PROBE: 0, or -1 if the peer takes none or the output is backed up. */
int		 conn_send_probe(struct conn *, const struct wire_probe *);
/*
 * Tells the peer where it is seen (kind WIRE_SEEN_*, addr "HOST:PORT"),
 * if its hello asked for it: 0, or -1 when not sent.
 */
int		 conn_send_seen(struct conn *, uint8_t kind, const char *addr);
/* "HOST:PORT" of a socket address (IPv6 in brackets, mapped IPv4 plain). */
const char	*conn_addr_text(const struct sockaddr *, char *, size_t);

/* For the transports (conn.c, conn_tls.c). */
int		 conn_read_start(struct conn *, const struct timeval *timeout);
size_t		 conn_rx_room(struct conn *);
int		 conn_input(struct conn *);
void		 conn_connected(struct conn *);
void		 conn_writable(struct conn *);
const char	*conn_closed_why(const struct conn *);
void		 conn_refused(struct conn *, const char *node, const char *why);

#endif
