/*
 * Forwarding: where does a frame go.  Pure: no sockets, no event loop, no
 * log; time comes in as an argument (milliseconds, any monotonic origin).
 *
 * Ports are the places a frame can go: links and local interfaces, each
 * known by kind and name.  Rules (routes) and learned MACs refer to ports by
 * reference, and a port exists as soon as something names it, so a route may
 * name a link before it is up (an incoming link is named by its peer).  A
 * port carries frames only while its owner has attached it (link up,
 * interface open).
 *
 * Rules: SRC and DST are each any, an exact MAC, or not-MAC.  Rank: the
 * destination counts before the source, exact beats not- beats any:
 *     rank = 3 * spec(dst) + spec(src),   spec(any)=0, spec(not)=1, spec(mac)=2.
 * Among rules that match the frame and whose port is attached and is not the
 * port the frame came in on, those of the best rank all get a copy (each port
 * at most once).  A rule's port that is not attached makes the rule not match,
 * so a lower-ranked rule takes over.  A broadcast or multicast destination
 * matches rules whose DST is any, not-X (X other than it), or that address.
 *
 * Learning (off by default): the source MAC of every frame is learned against
 * its arrival port (refreshed on every frame, aged out after 300 s).  Each
 * port holds at most a share of the table (FWD_PORT_SHARE): a port past it
 * replaces its own least recently seen MAC.  A full table makes room for a
 * newcomer by ageing out, else by dropping the least recently seen MAC of
 * the port that holds the most, so a flood of source addresses from one
 * port (or a few) never keeps another port's newcomers out.  For a
 * frame no rule covers: a unicast destination with a learned, attached port
 * (other than the arrival port) goes there; anything else is flooded to every
 * attached port but the arrival one.  Without learning such a frame is
 * dropped and counted.
 *
 * Automatic routes (`routing auto`, routing.h) rank below every rule and
 * above learning.  The control plane installs them here as its result
 * changes (fwd_auto_set(), fwd_auto_del()): a port per unicast MAC (a
 * guest here, or the next hop toward the node that owns it), and which
 * ports are in the broadcast set (fwd_port_set_flood(): by default every
 * port is; the control plane takes out the links to its peers that are not
 * on the broadcast tree).  With them on (fwd_auto_on()), a frame no rule
 * matches goes: to its MAC's automatic port if it has one (dropped if that
 * is the arrival port or detached); if its destination is a broadcast or
 * multicast, to every attached port of the broadcast set but the arrival
 * port (none: dropped); else learning (or the drop) decides as before.
 * Nothing is asked per frame: one hash lookup, as for learned MACs.
 *
 * Relaying (`relay no`, fwd_set_relay()): a node that relays nothing
 * sends no frame that came by a link out by a link, whatever chose the
 * ports; the copies for its interfaces stay.  A unicast frame so refused
 * is counted (relay_refused): its sender's paths went through a node that
 * says it relays nothing, stale or not.
 *
 * Cost: lookups are hash lookups on the destination and source MAC plus a
 * scan of the rules that have no exact MAC at all (normally a handful); the
 * number of exact-MAC rules and of learned MACs does not change the cost.
 */
#ifndef VNET_FWD_H
#define VNET_FWD_H

#include <stddef.h>
#include <stdint.h>

#include "stmt.h"

#define FWD_AGE_MS		(300 * 1000)
#define FWD_MAC_MAX_DEFAULT	65536
/* A port (interface or link) learns at most mac_max / FWD_PORT_SHARE MACs. */
#define FWD_PORT_SHARE		4

enum fwd_kind {
	FWD_LINK = TARGET_LINK,
	FWD_IFACE = TARGET_INTERFACE,
};

struct fwd;
struct fwd_port;

enum fwd_how {
	FWD_DROP = 0,		/* nothing matched (or all matches were the arrival port) */
	FWD_RULE,		/* rules chose the ports */
	FWD_LEARNED,		/* learned unicast destination */
	FWD_FLOOD,		/* flooded by the learning switch */
	FWD_AUTO,		/* automatic routes chose the ports (or the drop) */
};

struct fwd_stats {
	uint64_t	rule_hits;	/* frames forwarded by rules */
	uint64_t	learned_hits;	/* frames forwarded to a learned port */
	uint64_t	floods;		/* frames flooded */
	uint64_t	no_route;	/* frames dropped: nothing covers them */
	uint64_t	macs_learned;	/* new MAC table entries */
	uint64_t	macs_moved;	/* entries that changed port */
	uint64_t	macs_aged;	/* entries removed by ageing */
	uint64_t	mac_table_full;	/* MACs not learned: table full */
	uint64_t	macs_replaced;	/* port at its share: its oldest went */
	uint64_t	macs_evicted;	/* table full: the fullest port's went */
	uint64_t	duplicates;	/* frames suppressed by fwd_seen() */
	uint64_t	seen_conflicts;	/* (origin, seq) reused, other bytes */
	uint64_t	auto_hits;	/* frames forwarded by automatic routes */
	uint64_t	relay_refused;	/* unicast from a link not sent on by one */
};

struct fwd	*fwd_new(size_t mac_max);	/* 0 = FWD_MAC_MAX_DEFAULT */
void		 fwd_free(struct fwd *);

/* Finds or creates the port (kind, name) and takes a reference. */
struct fwd_port	*fwd_port_ref(struct fwd *, enum fwd_kind, const char *name);
/* Drops a reference; the last one removes the port, its learned MACs too. */
void		 fwd_port_unref(struct fwd *, struct fwd_port *);
/* Looks a port up without creating it or taking a reference; NULL if none. */
struct fwd_port	*fwd_port_find(struct fwd *, enum fwd_kind, const char *name);
/* Attaches an owner (the port starts carrying frames) or detaches it. */
void		 fwd_port_attach(struct fwd_port *, void *owner);
void		 fwd_port_detach(struct fwd_port *);
void		*fwd_port_owner(const struct fwd_port *);	/* NULL: detached */
const char	*fwd_port_name(const struct fwd_port *);
enum fwd_kind	 fwd_port_kind(const struct fwd_port *);

/*
 * Rules.  The rule keeps a reference on its port.  add: 0, or -1 with errno
 * EEXIST for an identical rule.  del: 0, or -1 with errno ENOENT.
 */
int		 fwd_route_add(struct fwd *, const struct stmt_match *src,
		    const struct stmt_match *dst, enum fwd_kind, const char *name);
int		 fwd_route_del(struct fwd *, const struct stmt_match *src,
		    const struct stmt_match *dst, enum fwd_kind, const char *name);
size_t		 fwd_route_count(const struct fwd *);
/*
 * Calls cb for at most max rules, in the order they were added, from the
 * one *at holds (NULL: the first) on, and leaves the next in *at (NULL:
 * none left); returns how many.  A walk in steps, for a copy made between
 * frames: valid while no rule is deleted, so the caller compares
 * fwd_route_changes() between steps and starts again when it moved.
 */
size_t		 fwd_route_walk(struct fwd *, void **at, size_t max,
		    void (*cb)(const struct stmt_match *src,
		    const struct stmt_match *dst, const struct fwd_port *port,
		    void *arg), void *arg);
/* Counts every rule added or deleted. */
uint64_t	 fwd_route_changes(const struct fwd *);
/* Calls cb for every rule, in the order they were added. */
void		 fwd_route_foreach(struct fwd *,
		    void (*cb)(const struct stmt_match *src,
		    const struct stmt_match *dst, const struct fwd_port *port,
		    void *arg), void *arg);

void		 fwd_set_learn(struct fwd *, int on);
int		 fwd_get_learn(const struct fwd *);
/* 0: no frame from a link leaves by a link (`relay no`); 1, the default. */
void		 fwd_set_relay(struct fwd *, int on);

/*
 * Decides where a frame goes.  in is the arrival port (never in the result).
 * On return *out points at an array, owned by fwd and valid until the next
 * call that changes fwd, of the ports to send a copy to; the count is
 * returned (0: drop).  *how says why.  Does not allocate.
 */
size_t		 fwd_decide(struct fwd *, const uint8_t dst[ETHER_ADDR_LEN],
		    const uint8_t src[ETHER_ADDR_LEN], struct fwd_port *in,
		    uint64_t now_ms, struct fwd_port ***out, enum fwd_how *how);

/* Removes learned MACs idle for FWD_AGE_MS or more; call about once a second. */
void		 fwd_age(struct fwd *, uint64_t now_ms);
size_t		 fwd_mac_count(const struct fwd *);
/* Calls cb for every learned MAC with its age in ms. */
void		 fwd_mac_foreach(struct fwd *, uint64_t now_ms,
		    void (*cb)(const uint8_t mac[ETHER_ADDR_LEN],
		    const struct fwd_port *port, uint64_t age_ms, void *arg),
		    void *arg);

/*
 * Duplicate suppression for frames that travel the overlay: every frame
 * carries (origin, seq), origin being random per daemon start.  Returns 1 if
 * this pair was seen recently with the same frame (the frame must be
 * dropped, and is counted), else records it and returns 0.  Remembers at
 * least the last 8192 frames.
 *
 * The pair alone is not the frame's identity: any peer can send any pair,
 * and one that sends another daemon's next sequence numbers first would
 * make that daemon's real frames look like copies.  So each pair is stored
 * with a fingerprint of the frame (its length and first bytes, leaving out
 * what a queue's CE mark may change on the way), and a frame is a copy only
 * if that pair came before with the same fingerprint: a copy suppressed is
 * one whose bytes were delivered already.  A pair seen again with other
 * bytes is counted (seen_conflicts) and goes on.
 */
int		 fwd_seen(struct fwd *, uint32_t origin, uint32_t seq,
		    const uint8_t *eth, size_t len);

/*
 * Automatic routes.  set: the MAC's port is (kind, name) from now on (the
 * table keeps a reference on the port); 0, or -1 out of memory (the MAC
 * keeps what it had).  del: none for the MAC.  clear: none at all.
 */
void		 fwd_auto_on(struct fwd *, int on);
int		 fwd_auto_set(struct fwd *, const uint8_t mac[ETHER_ADDR_LEN],
		    enum fwd_kind, const char *name);
void		 fwd_auto_del(struct fwd *, const uint8_t mac[ETHER_ADDR_LEN]);
void		 fwd_auto_clear(struct fwd *);
size_t		 fwd_auto_count(const struct fwd *);
/* The MAC's automatic port, or NULL. */
struct fwd_port	*fwd_auto_get(struct fwd *, const uint8_t mac[ETHER_ADDR_LEN]);
void		 fwd_auto_foreach(struct fwd *,
		    void (*cb)(const uint8_t mac[ETHER_ADDR_LEN],
		    const struct fwd_port *port, void *arg), void *arg);
/* 1 (the default): p is in the automatic broadcast set. */
void		 fwd_port_set_flood(struct fwd_port *p, int on);
int		 fwd_port_flood(const struct fwd_port *p);

void		 fwd_stats(const struct fwd *, struct fwd_stats *);

/*
 * show routes and show macs (fwd_show.c, apart so that the tables need no
 * libevent): the column line and a row per static route or learned
 * address; show routes then the automatic routes to links (kind auto; the
 * guests here are in the control plane's show macs).
 */
struct evbuffer;
struct metric_out;
struct showwin;
/* Rows of the page w (showwin.h; NULL: all). */
void		 fwd_show_routes(struct fwd *, struct showwin *,
		    struct evbuffer *);
/*
 * The frame counters (rule_hits, learned_hits, floods, no_route): their
 * rows of show stats, and a family each in /metrics (metric.h).
 */
void		 fwd_show_stats(const struct fwd *, struct evbuffer *);
void		 fwd_metrics(const struct fwd *, const struct metric_out *);
void		 fwd_show_macs(struct fwd *, uint64_t now_ms, struct showwin *,
		    struct evbuffer *);

#endif
