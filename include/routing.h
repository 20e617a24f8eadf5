/*
 * The control plane (`routing auto`): node records flooded between
 * daemons, the node database, automatic routes to every guest MAC of the
 * network, the broadcast tree, MAC migration and the traffic matrix.
 *
 * This is the glue between the pure parts (node.h: the record codec,
 * nodedb.h: the database and flooding decisions, spf.h: paths and the
 * tree, traffic.h: the matrix) and the daemon.  It touches the rest
 * through a few calls only: links tell it when they come up or go down
 * and hand it NODE messages (link_node_peer(), link_send_node() go the
 * other way); interfaces hand it every frame a guest sends; forwarding
 * asks it for a frame no rule matched (fwd_set_auto()).
 *
 * What a node says about itself: its links to peers that take records
 * (with their TCP round trip), the MACs seen as sources on its interfaces
 * (each with a version), its underlay addresses (`advertise`, else its
 * listeners) and its heaviest traffic rows.  It sends a record when that
 * changes (at most one per ROUTING_ORIG_MIN_MS), when its traffic changed
 * (at most every ROUTING_TRAFFIC_MS), and every refresh interval (`routing
 * auto refresh SECONDS`, default ROUTING_REFRESH_DEFAULT) in any case; its
 * records live three intervals.
 *
 * Migration: a MAC that another node owns, seen as a source here, is
 * claimed with a version one above the highest known.  The highest version
 * wins everywhere (then the name that sorts first); a node whose claim
 * lost drops the MAC from its record.  A local MAC lost while it was still
 * sending here (within ROUTING_CONFLICT_MS) is a conflict: logged and
 * counted.
 *
 * Limits, each counted when it refuses something: a peer's record over
 * node.h's limits (MACs, links, size) or with a sequence more than
 * ROUTING_SEQ_AHEAD above the wall clock in ms is dropped; the database
 * holds NODEDB_RECORDS_MAX records per network; a node's record replaces
 * the copy held at most once per NODEDB_MIN_ARRIVAL_MS; this node claims
 * at most NODE_MACS_MAX MACs.  A malformed record closes the link that
 * sent it.
 */
#ifndef VNET_ROUTING_H
#define VNET_ROUTING_H

#include <stddef.h>
#include <stdint.h>

#include "stmt.h"

struct vnetd;
struct link;
struct iface;
struct evbuffer;

#define ROUTING_REFRESH_DEFAULT	30		/* s */
#define ROUTING_REFRESH_MAX	1200		/* s; records live 3 times it */
#define ROUTING_ORIG_MIN_MS	200
#define ROUTING_TRAFFIC_MS	5000
#define ROUTING_LOCAL_AGE_MS	(300 * 1000)
#define ROUTING_CONFLICT_MS	1000
#define ROUTING_SEQ_AHEAD	(1ULL << 32)

struct routing;

struct routing	*routing_new(struct vnetd *);
void		 routing_free(struct routing *);
/* `routing auto|static [refresh N]` and `advertise HOST:PORT`. */
int		 routing_apply(struct routing *, const struct stmt *, char *err,
		    size_t errlen);
/* Starts the timers; after the configuration is in. 0 or -1. */
int		 routing_start(struct routing *);
/* The capabilities our hellos announce for the control plane. */
uint16_t	 routing_caps(const struct routing *);

/* From links: one came up, one went down, a NODE message arrived. */
void		 routing_link_up(struct routing *, struct link *);
void		 routing_link_down(struct routing *, struct link *);
/* -1 (with *why) when the record is malformed: the link must close. */
int		 routing_input(struct routing *, struct link *,
		    const uint8_t *p, size_t n, const char **why);

/* show: its own tables, each with its %columns line. */
void		 routing_show(struct routing *, const struct stmt *,
		    struct evbuffer *);
/* Rows of `show routes` (after the rules) and `show macs`. */
void		 routing_show_routes(struct routing *, struct evbuffer *);
void		 routing_show_macs(struct routing *, struct evbuffer *);
/* Rows of `show stats`: "name\tvalue\n". */
void		 routing_show_stats(struct routing *, struct evbuffer *);
/*
 * Shortcuts (adapt.h): 1 if link l is one this node made (never saved);
 * `show links`: "auto" for a shortcut (ours or the peer's) with the rate
 * that made it in trigger and why in *reason, else "-".
 */
int		 routing_link_auto(const struct routing *, const struct link *);
const char	*routing_link_origin(const struct routing *, const struct link *,
		    char *trigger, size_t len, const char **reason);
/* Its statements for `show config`: routing, advertise, adapt. */
void		 routing_config(struct routing *,
		    void (*cb)(const struct stmt *, void *), void *arg);

#endif
