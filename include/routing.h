/*
 * The control plane (`routing auto`): node records flooded between
 * daemons, the node database, automatic routes to every guest MAC of the
 * network, the broadcast tree, MAC migration and the traffic matrix.
 *
 * It is made of pure parts (node.h: the record codec, nodedb.h: the
 * database and flooding decisions, spf.h: paths and the tree, traffic.h:
 * the matrix, adapt.h: the shortcut policy) and of this core, which is
 * split on its seams, one file each:
 *
 *   routing.c        the state, its life and its clock, links coming and
 *                    going, messages in, guests' frames in, statistics
 *   routing_flood.c  what goes out: our record (origination), flooding,
 *                    the database exchange, late records, ageing
 *   routing_mac.c    the MACs: ours (seen on local ports) and the claims
 *                    of others, the winner of each, its automatic route
 *   routing_path.c   the path computation and its result installed into
 *                    forwarding (fwd.h) as automatic routes, incrementally
 *   routing_traffic.c  the traffic matrix's reports, routed only to the
 *                    nodes that want them
 *   routing_seg.c    LAN segments: the designated forwarder of each
 *                    segment attached by several nodes, elected through
 *                    the topology records
 *   routing_show.c   the show tables of the above
 *   shortcut.c       the glue between adapt.h and the links (shortcut.h)
 *
 * The core calls nothing above it and walks none of the daemon's lists:
 * everything it needs from below comes through struct routing_env (send a
 * message on a link, a link's round trip, the number of local interfaces,
 * this node's addresses, the clock, a timer, statements for making and
 * removing shortcut links), and everything it hears comes in through the
 * calls below (a link up or down, a message, a guest's frame).  Its result
 * goes into the one forwarding table the data path reads: fwd_decide()
 * calls no one per frame.  routing_daemon.h binds it to a struct vnetd; a
 * test drives it with an env of its own and an injected clock
 * (tests/check_routing.c runs many in one process).
 *
 * What a node says about itself (node.h has the records and the protocol):
 * its topology record (its links to peers that take records, with their
 * TCP round trip, its underlay addresses, `advertise` or else its
 * listeners, and its flags, NODE_F_NORELAY among them for `relay no`:
 * spf.h routes no one else's traffic through it, and fwd.h sends nothing
 * from a link on by a link there) and its MAC pages (the MACs seen as
 * sources on its interfaces, each with a version).  Each record goes out when it
 * changes (at most one origination per ROUTING_ORIG_MIN_MS) and every
 * refresh interval (`routing auto refresh SECONDS`, default
 * ROUTING_REFRESH_DEFAULT) in any case; records live three intervals.  Its
 * traffic rows go only to the nodes that ask (routing_traffic.c).
 *
 * Migration (macown.h has the rules): a MAC that another node owns, seen
 * as a source here, is claimed with a version one above the one known,
 * and waits: its frames are dropped here until the owner lets it go, which
 * it does when the MAC is silent there (or its interface is gone), not
 * while it still sends (a conflict: logged and counted).  The owner a node
 * knew keeps the MAC in its eyes while it claims it; a MAC no one held
 * goes to the highest version (then the name that sorts first).  A claim
 * more than MACOWN_STEP over the version held is refused; a MAC that moves
 * MACOWN_MOVES times in MACOWN_WINDOW_MS is frozen where it is.
 *
 * Limits, each counted when it refuses something: a peer's record over
 * node.h's limits (MACs, links, size) or with a sequence more than
 * ROUTING_SEQ_AHEAD above the wall clock in ms is dropped; the database
 * holds NODEDB_RECORDS_MAX records (NODEDB_BYTES_MAX bytes) per network; a
 * record replaces the copy held at most once per NODEDB_MIN_ARRIVAL_MS;
 * this node claims at most NODE_MACS_MAX MACs; it keeps the traffic
 * reports of ROUTING_REPORTS_MAX nodes.  A malformed record closes the
 * link that sent it.  Path computations run at once up to
 * ROUTING_SPF_BURST in a row, then one per ROUTING_SPF_HOLD_MS, so a burst
 * of records costs a few.
 */
#ifndef VNET_ROUTING_H
#define VNET_ROUTING_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"
#include "routing_env.h"
#include "stmt.h"

struct evbuffer;
struct fwd;
struct fwd_port;

#define ROUTING_REFRESH_DEFAULT	1800		/* s, as OSPF's LSRefreshTime */
#define ROUTING_REFRESH_MAX	3600		/* s; records live 3 times it */
#define ROUTING_ORIG_MIN_MS	200
#define ROUTING_SPF_HOLD_MS	50		/* between two computations */
#define ROUTING_SPF_BURST	4		/* ... after so many at once */
#define ROUTING_TRAFFIC_MS	5000
#define ROUTING_INTEREST_MS	(300 * 1000)	/* the matrix asked for */
#define ROUTING_REPORTS_MAX	1024		/* origins whose rows we keep */
#define ROUTING_LOCAL_AGE_MS	(300 * 1000)
/* How long after a start our own old MAC pages are taken back. */
#define ROUTING_RESTORE_MS	(30 * 1000)
#define ROUTING_CONFLICT_MS	1000
#define ROUTING_SEQ_AHEAD	(1ULL << 32)
#define ROUTING_TICK_MS		1000
/* Shortcut rounds run early on a report, at most this often. */
#define ROUTING_ROUND_MIN_MS	100
/*
 * LAN segments (routing_seg.c): an elected node takes a segment over once
 * its election has held ROUTING_SEG_HOLD_MS, and not before
 * ROUTING_SEG_SETTLE_MS after it first had a peer.
 */
#define ROUTING_SEG_HOLD_MS	100
#define ROUTING_SEG_SETTLE_MS	2000

struct routing;

/* fwd is where the automatic routes go. */
struct routing	*routing_new(const struct routing_env *, struct fwd *);
void		 routing_free(struct routing *);
/* `routing auto|static [refresh N]`, `advertise HOST:PORT`, `adapt ...`. */
int		 routing_apply(struct routing *, const struct stmt *, char *err,
		    size_t errlen);
/* After the configuration is in, as node; 0 or -1. */
int		 routing_start(struct routing *, const char *node);
/* Runs what is due (the env's arm() asked for it). */
void		 routing_poll(struct routing *);
/* 1 with routing auto. */
int		 routing_on(const struct routing *);
/* Its statements for `show config`: routing, advertise, adapt. */
void		 routing_config(struct routing *,
		    void (*cb)(const struct stmt *, void *), void *arg);

/* From links: one came up, one went down (NULL: some link that was up). */
void		 routing_link_up(struct routing *, const struct routing_link *);
void		 routing_link_down(struct routing *, void *link);
/* A message from link: -1 (with *why) when malformed: the link must close. */
int		 routing_input(struct routing *, void *link, const uint8_t *p,
		    size_t n, const char **why);
/*
 * 1 if a frame with source MAC src may come by link (the env's handle):
 * the link is to the node that owns src, or the one this node's route to
 * src takes.  A source no record names may come only by a link to a peer
 * without the control plane; without routing, any link may.
 */
int		 routing_on_path(struct routing *, void *link,
		    const uint8_t *src);
/*
 * A guest's frame, from the interface whose port is in: 0, or -1 when it
 * must be dropped (its source MAC is another guest's, routing_mac.c).
 */
int		 routing_guest_frame(struct routing *, struct fwd_port *in,
		    const uint8_t *eth, size_t len);
/*
 * A frame captured on a segment's interface with source MAC src: 1 if a
 * reachable remote node holds src (the frame went out on the LAN by
 * another forwarder, or loops): it must not enter the overlay.
 */
int		 routing_seg_foreign(struct routing *, const uint8_t *src);
/*
 * Segment seg's forwarder as this node sees it ("-": none or no such
 * segment), and this node's state for it (standby, pending, active).
 */
const char	*routing_segment_forwarder(struct routing *, const char *seg,
		    const char **state);

/* Frames routing_guest_frame() dropped from the interface named port. */
uint64_t	 routing_foreign(const struct routing *, const char *port);

/*
 * show: nodes, topology, traffic (and nodes, topology with st->num as its
 * threshold), adapt; then rows of show macs and show stats.
 */
void		 routing_show(struct routing *, const struct stmt *,
		    struct evbuffer *);
struct showwin;
/* Rows of the page w (showwin.h; NULL: all). */
void		 routing_show_macs(struct routing *, struct showwin *,
		    struct evbuffer *);
void		 routing_show_stats(struct routing *, struct evbuffer *);
/* Its families of /metrics (metric.h): nodes, shortcuts; none if static. */
struct metric_out;
void		 routing_metrics(struct routing *, const struct metric_out *);

/* For tests and show: nodes and records held, automatic routes installed. */
size_t		 routing_nodes(const struct routing *);
size_t		 routing_records(const struct routing *);
/* Control-plane messages and their bytes (with wire headers) sent. */
void		 routing_counts(const struct routing *, uint64_t *msgs,
		    uint64_t *bytes);
size_t		 routing_routes(const struct routing *);
/* The last change of routes, reachable nodes or tree (ms, monotonic). */
uint64_t	 routing_changed_ms(const struct routing *);

#endif
