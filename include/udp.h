/*
 * The datagram side of links: the daemon's UDP sockets and each link's
 * datagram path over them.  The crypto and framing are dgram.h's, the
 * pieces dfrag.h's, the MTU search pmtu.h's; this file does the I/O, the
 * timers and the path's state.
 *
 * Sockets: one per listener address, on the listener's port (`listen
 * HOST:PORT` binds TCP and UDP alike), and, for a daemon that only dials,
 * one of its own per address family.  All of them feed one table of
 * receiver indices: a datagram goes to the path whose index its header
 * names, whatever its source address.  Reads take up to UDP_RX_BATCH
 * datagrams a system call (recvmmsg, with UDP_GRO where the kernel has
 * it); datagrams to send gather while the loop runs and go out in one
 * sendmmsg per socket (equal-sized ones to one peer as one UDP_SEGMENT
 * train), at the end of the loop's turn or when UDP_TX_BATCH wait.
 *
 * A path belongs to one TCP (or TLS) connection of a link and lives as long
 * as it: each side sends a DGRAM offer over the connection (wire.h: its
 * receiver index, its UDP port, on a plain link its secret); with both
 * offers in, the keys are made (over TLS from the session's exporter under
 * the label "EXPORTER-vnet-datagram", the context naming the direction,
 * the epoch and both indices, so that no two paths ever share a key) and
 * the side that dialled starts probing the other's address at the offered
 * port.  Over a punched pair (conn.h: a shortcut through both ends' NATs)
 * both sides start at once, each to the connection's far end as it is (the
 * other's NAT binding, its seen-udp candidate, that the pair was punched
 * on) from the socket on the connection's own port: each NAT takes the
 * other's datagrams as answers to its own, as it took the SYNs.  Otherwise
 * the side that was dialled learns where its peer is from the first
 * datagram that authenticates, and follows it when an authenticated one
 * comes from elsewhere (a NAT rebinding, a roaming peer); a datagram that
 * does not authenticate is counted and dropped, never answered.
 *
 * The path's states, every change through one function that logs it:
 *
 *   OFFERED --both offers--> PROBING --a probe answered--> UP
 *                               |  ^                        |
 *                 no answer in  v  | an answer     no answer within dead
 *                 dead       FALLBACK <---------------------+
 *                            (probes again with back-off, 1 probe
 *                             interval doubling up to UDP_BACKOFF_MAX)
 *
 * Frames go by datagrams while UP, by the connection otherwise (`transport
 * auto`); while an UP path's answers are late (past suspect, below dead)
 * they go both ways, and the far side drops the copies (the switch's
 * duplicate suppression).  What went by datagrams since the probe that was
 * last answered is not known to have arrived: the path keeps the last
 * UDP_RECENT_BYTES of frames it sent (UDP_RECENT_MAX at most, each of at
 * most UDP_RECENT_ONE bytes: no super-frames), and when the answers are
 * late, those sent after that probe go again by the connection, so a
 * failing path loses no frame of a light flow (a ping, an interactive
 * session); a bulk flow sends more than is kept, and its TCP recovers the
 * rest.  `transport udp` sends by datagrams whenever the keys and an
 * endpoint are there, answered or not: no fallback.
 *
 * TCP super-frames: while the peer reports no loss, a link that takes
 * offload frames sends them whole, in pieces of the path MTU that leave as
 * one UDP_SEGMENT train and are put back together at the far end, which
 * writes them whole to its TAP device: a 64 KiB frame costs a few system
 * calls, not forty.  A lost piece would lose the whole super-frame, so once
 * a probe's reply says that the peer counted datagrams lost (more than the
 * probes that went unanswered: the MTU search's are meant to be lost; and
 * not those the peer's own socket dropped, full, SO_RXQ_OVFL), super-frames
 * are cut into segments for UDP_LOSSY_MS, each segment its own datagram, and
 * a loss costs the guest's TCP one segment.
 *
 * Cut or not, the segments of one TCP flow that arrive in one read are
 * coalesced again (gro.h) before they go to the switch, where this
 * daemon's devices take offload frames.
 *
 * Probes: a liveness probe every probe interval (UDP_PROBE_MS, or the
 * environment's VNET_UDP_PROBE_MS, meant for tests; ten times that on an
 * idle path, an eighth of it while the path is in doubt and frames go by
 * datagrams and the connection both, until a probe is answered), and the path MTU
 * search's padded probes (pmtu.h) while UP.  A reply is the probe's id and
 * size: never larger than the probe.  Frames whose datagram would be
 * larger than the path MTU go in pieces (dfrag.h).
 *
 * Limits: a path holds at most DFRAG_SLOTS frames being put back together;
 * datagrams that the socket does not take at once are dropped and counted
 * (there is no retransmission: the guests' TCP sees the loss, as on a
 * wire).
 */
#ifndef VNET_UDP_H
#define VNET_UDP_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>

#include "dfrag.h"
#include "dgram.h"
#include "pmtu.h"
#include "stmt.h"
#include "wire.h"

struct conn;
struct event;
struct event_base;
struct udp;
struct udp_path;

#define UDP_PROBE_MS		1000
#define UDP_IDLE_PROBES		10	/* times UDP_PROBE_MS on an idle path */
#define UDP_BACKOFF_MAX		30000	/* ms */
#define UDP_RX_BATCH		32
#define UDP_TX_BATCH		256
#define UDP_TX_BUFFER		(1024 * 1024)
#define UDP_LOSSY_MS		3000
#define UDP_INDEX_BUCKETS	256
#define UDP_SOCKBUF		(4 * 1024 * 1024)
#define UDP_RECENT_BYTES	(256 * 1024)
#define UDP_RECENT_MAX		1024
#define UDP_RECENT_ONE		4096

enum udp_state {
	UDP_OFFERED = 0,	/* our offer sent, the peer's not in */
	UDP_PROBING,		/* keys made, no answer yet */
	UDP_UP,			/* answered lately: frames go by datagrams */
	UDP_FALLBACK,		/* no answers: frames go by the connection */
};

/* Where a link's frames go now. */
enum udp_mode {
	UDP_MODE_TCP,
	UDP_MODE_UDP,
	UDP_MODE_BOTH,		/* UP, but answers are late */
};

struct udp_path_stats {
	uint64_t	moved;		/* endpoint changes followed */
	uint64_t	send_errors;	/* datagrams the socket refused */
	uint64_t	probes, replies;
	uint64_t	fallbacks;	/* times it went to FALLBACK */
	uint64_t	resent;		/* frames sent again by the connection */
	uint64_t	malformed;	/* authentic, but no message of ours */
	uint64_t	live_out, live_in;	/* liveness probes (DGRAM_LIVE) */
	uint64_t	doubted;	/* times the link doubted the path */
};

/* What a path tells its link; arg is the link's. */
struct udp_path_cbs {
	/* A frame arrived by a datagram. */
	void	 (*frame)(void *arg, uint8_t hops, const struct wire_frame *);
	/* The mode changed: the link's features and queue may follow. */
	void	 (*changed)(void *arg);
	/* A wire message to send again by the connection (see above). */
	void	 (*resend)(void *arg, const uint8_t *msg, size_t len);
	/* The peer's datagrams came from a new address ("HOST:PORT"). */
	void	 (*endpoint)(void *arg, const char *addr);
	/* A liveness probe arrived by a datagram (DGRAM_LIVE). */
	void	 (*live)(void *arg, const struct wire_probe *);
};

/* The daemon's UDP side. */
struct udp	*udp_new(struct event_base *, uint64_t (*now_ms)(void));
void		 udp_free(struct udp *);
/* A listener's address: a socket on it (logged if it cannot be had). */
void		 udp_listen(struct udp *, const struct stmt_hostport *);
void		 udp_unlisten(struct udp *, const struct stmt_hostport *);
/* Datagrams that named no path, or were no datagram of ours. */
uint64_t	 udp_unknown(const struct udp *);
/* Sends what waits now (the loop does it by itself, too). */
void		 udp_flush(struct udp *);

/*
 * A path for connection c of a link (its transport option t): sends our
 * offer.  NULL if the peer cannot take one, or out of memory.
 */
struct udp_path	*udp_path_new(struct udp *, struct conn *c,
		    enum stmt_transport t, const struct udp_path_cbs *,
		    void *arg);
/* Frees it, withdrawing the offer if withdraw and the connection is up. */
void		 udp_path_free(struct udp_path *, int withdraw);
void		 udp_path_set_transport(struct udp_path *, enum stmt_transport);
/* The peer's DGRAM message: 0, or -1 with why (the connection closes). */
int		 udp_path_offer(struct udp_path *, const struct wire_dgram *,
		    const char **why);
enum udp_mode	 udp_path_mode(const struct udp_path *);
/* 1 if super-frames may go whole: the peer reports no loss lately. */
int		 udp_path_whole(const struct udp_path *);
/*
 * Sends one wire message (a FRAME: header, prefix, frame, wire.h) by
 * datagrams, in pieces if it must: the whole message in pre (eth NULL), or
 * its header and prefix in pre and the frame in eth.  0, or -1 if it could
 * not go.
 */
int		 udp_path_send(struct udp_path *, const uint8_t *pre,
		    size_t prelen, const uint8_t *eth, size_t len);
/*
 * A liveness probe by a datagram (DGRAM_LIVE): 0, or -1 if the path has no
 * key or no peer address yet, or no room.  Never answered: each end sends
 * its own at its own pace, as BFD's asynchronous mode does.
 */
int		 udp_path_send_live(struct udp_path *,
		    const struct wire_probe *);
/*
 * The link has word that its datagrams do not arrive (the peer's probe by
 * the connection says it misses ours): frames go both ways (UDP_MODE_BOTH)
 * until a probe of the path's own is answered, as when replies are late.
 */
void		 udp_path_doubt(struct udp_path *);
/*
 * 1: the link carries no frames (liveness.h's idle): the path's probes go
 * every UDP_IDLE_PROBES intervals, enough for a NAT's binding.  0: frames
 * again: the frames go by the connection too until a probe sent at once
 * is answered, and the path is judged from then.
 */
void		 udp_path_idle(struct udp_path *, int idle);

/* For show: its state, path MTU, endpoint, and the counters. */
const char	*udp_state_name(enum udp_state);
enum udp_state	 udp_path_state(const struct udp_path *);
uint32_t	 udp_path_mtu(const struct udp_path *);
const char	*udp_path_endpoint(const struct udp_path *, char *, size_t);
const char	*udp_path_cipher(const struct udp_path *);
const struct dgram_stats *udp_path_dgram_stats(const struct udp_path *);
const struct udp_path_stats *udp_path_stats(const struct udp_path *);
const struct dfrag_stats *udp_path_frag_stats(const struct udp_path *);
struct gro_stats;
const struct gro_stats *udp_path_gro_stats(const struct udp_path *);

#endif
