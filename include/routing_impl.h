/*
 * The control plane's state, shared by its files (routing.h lists them);
 * nothing outside src/routing*.c and src/shortcut.c includes this.
 */
#ifndef VNET_ROUTING_IMPL_H
#define VNET_ROUTING_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ether.h"
#include "macown.h"
#include "node.h"
#include "nodesig.h"
#include "routing_env.h"
#include "stmt.h"

struct adapt;
struct nodedb;
struct nodedb_entry;
struct shortcut;
struct spf;
struct traffic;

#define ROUTING_MAC_BUCKETS	1024
#define ROUTING_LOG_EVERY_MS	1000	/* refusals logged at most this often */
#define ROUTING_MOB_MAX		4096	/* MACs whose moves are followed */

/* A link that is up, as the control plane knows it. */
struct routing_nbr {
	void		*link;				/* the env's handle */
	char		 name[STMT_NAME_MAX + 1];	/* the link's */
	char		 peer[NODE_NAME_MAX + 1];	/* "": no control plane */
	int		 configured;
	int		 shortcut;	/* the peer dialled it as one */
	int		 tree;		/* on the broadcast tree */
};

/* What a record says, decoded once when it comes (nodedb's cache). */
struct routing_topo {
	uint32_t		 flags;
	uint16_t		 nlinks, naddrs, nsegs;
	struct node_seg		 segs[NODE_SEGS_MAX];
	struct node_link	*links;
	char			(*addrs)[NODE_ADDR_MAX + 1];
	uint16_t		 ncands;
	struct node_cand	*cands;
};

struct routing_page {
	uint16_t		 nmacs;
	struct node_mac		 macs[];
};

/* The traffic rows a node sent us (routing_traffic.c). */
struct routing_report {
	char			 origin[NODE_NAME_MAX + 1];
	uint64_t		 at;		/* ms, when it came */
	uint16_t		 nrows, ndsts;
	struct node_row		 rows[NODE_ROWS_MAX];
	struct node_dst		 dsts[NODE_ROWS_MAX];
};

#define ROUTING_DIRTY_TOPO	0x100	/* with a bit per MAC page below */

/*
 * A MAC this node claims: a source seen on one of its interfaces.  A
 * pending claim is over a MAC another node holds: it is in our record (so
 * that the owner can let it go) but not taken, and the frames from it are
 * dropped, until the owner withdraws it (macown.h).
 */
struct routing_lmac {
	struct routing_lmac	*next;
	uint8_t			 mac[ETHER_ADDR_LEN];
	uint32_t		 version;
	unsigned int		 page;		/* the record it is in */
	struct fwd_port		*port;		/* the interface's, referenced */
	uint64_t		 seen_ms;
	int			 pending;
	int			 contested;	/* a claim kept off: look again */
	uint32_t		 answered;	/* the claim last kept off */
	char			 answered_to[NODE_NAME_MAX + 1];
};

/* The moves of a MAC that moved lately (macown.h's damping). */
struct routing_mob {
	struct routing_mob	*next;
	uint8_t			 mac[ETHER_ADDR_LEN];
	char			 owner[NODE_NAME_MAX + 1];	/* frozen at */
	struct macown_mob	 m;
};

/* Frames dropped at an interface: their source MAC was another's. */
struct routing_foreign {
	struct fwd_port		*port;		/* referenced */
	uint64_t		 n;
};

/* How many local MACs an interface (its forwarding port) holds. */
struct routing_share {
	const struct fwd_port	*port;
	size_t			 n;
};

/* A MAC another node claims, and the link toward it ("": none). */
struct routing_rmac {
	struct routing_rmac	*next;
	uint8_t			 mac[ETHER_ADDR_LEN];
	uint32_t		 version;
	char			 owner[NODE_NAME_MAX + 1];
	char			 via[STMT_NAME_MAX + 1];
	int			 held;	/* the owner we knew claims it still */
};

/* A LAN segment this node attaches (routing_seg.c draws the machine). */
enum routing_seg_state {
	ROUTING_SEG_STANDBY,
	ROUTING_SEG_PENDING,
	ROUTING_SEG_ACTIVE,
};

struct routing_seg {
	char			 name[NODE_NAME_MAX + 1];
	enum routing_seg_state	 state;
	uint64_t		 pending_ms;	/* elected since; 0: not */
	uint32_t		 epoch;		/* of our last takeover */
	uint32_t		 epoch_seen;	/* the highest in any record */
	char			 forwarder[NODE_NAME_MAX + 1];	/* "": none */
	uint64_t		 takeovers;	/* times it became ACTIVE */
	uint64_t		 announced;	/* RARPs sent on taking over */
};

struct routing_stats {
	uint64_t	records_in, records_out, bytes_out, records_skipped;
	uint64_t	malformed, refused, seq_ahead;
	uint64_t	macs_refused;	/* local table full */
	uint64_t	claims;		/* MACs taken over from another node */
	uint64_t	moved_away;	/* local MACs another node claimed */
	uint64_t	withdrawn_down;	/* local MACs of an interface gone down */
	uint64_t	withdrawn_standby;	/* ... of a segment another forwards */
	uint64_t	segment_kept;	/* claims kept off a forwarded LAN's MAC */
	uint64_t	conflicts;	/* ... while still sending here */
	uint64_t	claims_waiting;	/* ours over another node's MAC, made */
	uint64_t	claims_frozen;	/* claims kept off a frozen MAC */
	uint64_t	version_jumps;	/* claims out of macown.h's bounds */
	uint64_t	frozen;		/* MACs frozen for moving too often */
	uint64_t	foreign_src;	/* frames from another's MAC, dropped */
	uint64_t	originated;
	uint64_t	recomputed;
	uint64_t	reports_in, reports_out, reports_forwarded;
	uint64_t	reports_dropped;
	/* Records refused unchecked or failing the check (nodesig.h). */
	uint64_t	sig_refused[NODESIG_NRESULTS];
	uint64_t	unsigned_out;	/* ours, left unsigned: no key */
};

struct routing {
	struct routing_env	 env;
	struct fwd		*fwd;
	char			 node[NODE_NAME_MAX + 1];
	uint32_t		 seed;		/* of the MAC tables */
	int			 on, started;
	uint64_t		 started_ms;
	uint64_t		 restored;	/* MACs taken back, a count */
	int			 running;	/* routing_start() was called */
	unsigned int		 refresh;	/* s; 0: the default */
	int			 has_advertise;
	struct stmt_hostport	 advertise;
	int			 norelay;	/* `relay no` */
	/* The candidates our topology record says now. */
	struct node_cand	 cands[NODE_CANDS_MAX];
	size_t			 ncands;

	struct nodedb		*db;
	struct nodesig		*sig;		/* checked records, certificates */
	struct spf		*spf;
	struct traffic		*tm;
	struct node_rec		*rec;		/* decode and encode scratch */
	uint8_t			*enc;		/* NODE_RECORD_MAX */

	uint64_t		 seq;
	uint64_t		 last_orig_ms;
	uint64_t		 refreshed_ms;	/* all our records sent anew */
	uint64_t		 orig_not_before;	/* ms */
	unsigned int		 dirty;		/* ROUTING_DIRTY_TOPO, pages */
	unsigned int		 pages_sent;	/* pages we have a record of */
	unsigned int		 page_n[NODE_MAC_PAGES];	/* MACs in each */
	uint64_t		 spf_tat;	/* ms, routing_path_soon() */

	/* Traffic reports (routing_traffic.c). */
	uint64_t		 interest_until;	/* ms: we want the rows */
	uint64_t		 last_report_ms;
	uint64_t		 traffic_sent;	/* traffic_version() then */
	int			 traffic_moving;	/* rates > 0 when sent */
	int			 report_now;	/* a node newly wants rows */
	struct routing_report	**reports;	/* by origin */
	size_t			 nreports, reportcap;
	uint8_t			*rbuf;		/* NODE_RECORD_MAX, forwarding */

	/* Timers: when each is due (ms), 0 for never; armed: asked for. */
	uint64_t		 orig_at, compute_at, late_at, tick_at, seg_at;
	uint64_t		 round_at;	/* shortcuts, on a report heard */
	uint64_t		 round_last;	/* when they last ran */
	uint64_t		 armed_at;

	struct routing_nbr	*nbrs;
	size_t			 nnbrs, nbrcap;

	struct routing_lmac	*local[ROUTING_MAC_BUCKETS];
	size_t			 nlocal;
	struct routing_share	*shares;	/* per interface holding MACs */
	size_t			 nshares, sharecap;
	struct routing_rmac	*routes[ROUTING_MAC_BUCKETS];
	size_t			 nroutes;
	struct routing_rmac	**prev;		/* the table before, computing */
	struct routing_mob	*mob[ROUTING_MAC_BUCKETS];
	size_t			 nmob;
	struct routing_foreign	*foreign;	/* per interface that dropped */
	size_t			 nforeign, foreigncap;

	struct routing_seg	 segs[NODE_SEGS_MAX];	/* routing_seg.c */
	size_t			 nsegs;
	uint64_t		 peer_since_ms;	/* had a peer since; 0: none */

	struct routing_stats	 st;
	struct shortcut		*sc;		/* shortcuts (shortcut.h) */
	uint32_t		 digest;	/* of the routes and the tree */
	uint64_t		 changed_ms;	/* when that last changed */
	uint64_t		 logged_ms[16];	/* by kind of refusal */
};

/* routing.c */
uint64_t	 routing_now(const struct routing *);
void		 routing_schedule(struct routing *);
int		 routing_may_log(struct routing *, unsigned int kind);
unsigned int	 routing_refresh_s(const struct routing *);
struct routing_nbr *routing_nbr_find(struct routing *, void *link);
/* The up link whose peer is node name and that is not draining, or NULL. */
struct routing_nbr *routing_nbr_to(struct routing *, const char *name);

/* routing_flood.c */
/* Our record(s) to send anew (ROUTING_DIRTY_TOPO, 1 << page), soon. */
void		 routing_flood_mark(struct routing *, unsigned int what);
void		 routing_flood_soon(struct routing *, uint64_t delay_ms);
void		 routing_flood_originate(struct routing *);
void		 routing_flood_send(struct routing *, struct routing_nbr *,
		    const uint8_t *p, size_t n);
void		 routing_flood_all_but(struct routing *, void *except,
		    const uint8_t *p, size_t n);
void		 routing_flood_exchange(struct routing *, struct routing_nbr *);
int		 routing_flood_input(struct routing *, struct routing_nbr *,
		    const uint8_t *p, size_t n, const char **why);
void		 routing_flood_late(struct routing *);
void		 routing_flood_tick(struct routing *);
/* Our candidates now (out: NODE_CANDS_MAX), `advertise` first. */
size_t		 routing_flood_cands(struct routing *, struct node_cand *out);
/*
 * Signs our record in p (n bytes, NODE_RECORD_MAX of room) on a TLS
 * network: the length to send, n on a plain one, 0 if it cannot be sent.
 */
size_t		 routing_flood_sign(struct routing *, uint8_t *p, size_t n);

/* routing_mac.c */
unsigned int	 routing_mac_bucket(const struct routing *, const uint8_t *mac);
struct routing_lmac *routing_mac_local(struct routing *, const uint8_t *mac);
struct routing_rmac *routing_mac_remote(struct routing *, const uint8_t *mac);
/* One remote claim, with the link toward its owner (NULL: none). */
void		 routing_mac_claim(struct routing *, const char *owner,
		    const struct node_mac *, const char *via);
/* The MAC's automatic route, from what is known now. */
void		 routing_mac_install(struct routing *, const uint8_t *mac);
/* Takes the remote table, leaving an empty one (to be filled anew). */
void		 routing_mac_swap(struct routing *, struct routing_rmac **old);
/* Frees a table taken, installing each MAC's route anew. */
void		 routing_mac_settle(struct routing *, struct routing_rmac **old);
/* A source seen on a local interface: 0, or -1 if the frame must go. */
int		 routing_mac_seen(struct routing *, struct fwd_port *in,
		    const uint8_t *src, uint64_t now);
/*
 * Our own MAC page from before a restart came back (in r->rec): within
 * ROUTING_RESTORE_MS of the start, its MACs are taken as local again, on
 * the node's only interface, as if just seen there, so that guests that
 * are quiet stay reachable until they age out (ROUTING_LOCAL_AGE_MS)
 * instead of being withdrawn by the first new record.  With several
 * interfaces nothing says which was whose: they wait for a frame.
 */
void		 routing_mac_restore(struct routing *);
/*
 * A MAC page of node owner came: its claims over what we hold by more
 * than macown.h's step are refused (their version set to 0), counted.
 */
void		 routing_mac_bound(struct routing *, const char *owner,
		    struct routing_page *);
/* After a computation: pending claims whose MAC is let go are taken. */
void		 routing_mac_promote(struct routing *);
/* Frames dropped at the interface named so (0: none). */
uint64_t	 routing_mac_foreign(const struct routing *, const char *port);
void		 routing_mac_age(struct routing *, uint64_t now);
/*
 * The local MACs learned on the interfaces of segment seg, which this node
 * no longer forwards, withdrawn (they are the forwarder's now): how many.
 */
size_t		 routing_mac_standby(struct routing *, const char *seg);
void		 routing_mac_free(struct routing *);

/* The cache of records of nodedb (routing_flood.c). */
void		 routing_cache_free(void *);
const struct routing_topo *routing_topo(const struct nodedb_entry *);
const struct routing_page *routing_page(const struct nodedb_entry *);

/* routing_traffic.c */
int		 routing_traffic_input(struct routing *, struct routing_nbr *,
		    const uint8_t *p, size_t n, const char **why);
void		 routing_traffic_tick(struct routing *);
/* The matrix was asked for here: we want the others' rows for a while. */
void		 routing_traffic_interest(struct routing *);
uint32_t	 routing_traffic_flags(struct routing *);
const struct routing_report *routing_traffic_report(const struct routing *,
		    const char *origin);
/*
 * A pair of ours has just gone over the threshold: our row toward its
 * peer goes to the peer at once, not at the next report, so that both
 * ends see the pair's rate within a round trip of each other.
 */
void		 routing_traffic_tell(struct routing *, const char *to);
void		 routing_traffic_free(struct routing *);

/* routing_seg.c */
/* Elects the forwarder of each local segment anew and acts on it. */
void		 routing_seg_run(struct routing *);
/* Our segments and their state, into our topology record. */
void		 routing_seg_record(struct routing *, struct node_rec *);
struct routing_seg *routing_seg_find(struct routing *, const char *name);
/*
 * 1 if a claim by node owner over a MAC learned on local interface port
 * is kept off as the segment's: we forward the segment port attaches and
 * owner attaches it too (its claim can only be from before we took over:
 * a LAN's MACs are its forwarder's).
 */
int		 routing_seg_keeps(struct routing *, const char *port,
		    const char *owner);
const char	*routing_seg_state_name(enum routing_seg_state);

/* routing_show.c: the rows nodes and nodes_reachable of show stats. */
void		 routing_show_nodes_stats(struct routing *, struct evbuffer *);

/* routing_path.c */
void		 routing_path_soon(struct routing *);
void		 routing_path_compute(struct routing *);
/* A link's place in the broadcast set, from what is known now. */
void		 routing_path_flood(struct routing *, struct routing_nbr *);

#endif
