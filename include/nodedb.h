/*
 * The node database: the newest copy of every record of the network, the
 * same on every daemon once flooding has settled.  A record is known by
 * its origin, kind and id (node.h); each has its own sequence.  Pure:
 * records come in as bytes already checked by node_decode(), time as an
 * argument (ms, any monotonic origin); it sends nothing itself but says
 * what flooding must do with each record offered:
 *
 *   NODEDB_NEW       stored (newer than the copy held, or the first): send
 *                    it on every other link
 *   NODEDB_SAME      the copy held: nothing (it came round another way)
 *   NODEDB_OLDER     older than the copy held: send ours back to the
 *                    sender, which is behind
 *   NODEDB_SELF      about this node, newer than our own or the same
 *                    sequence with other contents (our record from before a
 *                    restart, or a forgery): originate again above it
 *   NODEDB_FULL      refused: NODEDB_RECORDS_MAX (or the max given) held
 *   NODEDB_TOO_SOON  not yet: a newer copy of a record held, less than
 *                    NODEDB_MIN_ARRIVAL_MS after the last (OSPF's
 *                    MinLSArrival; the originator spaces its own further),
 *                    or past its origin's rate: NODEDB_ORIGIN_RATE
 *                    records a second after a burst of NODEDB_ORIGIN_BURST
 *                    (a start or a refresh sends every record of a node at
 *                    once).  Delayed, not lost: the newest such copy from
 *                    each link is kept aside and handed back by
 *                    nodedb_late() once the record's and the origin's
 *                    turn has come; copies that crossed the network by
 *                    paths of different delays still arrive, and one
 *                    node's records cost their receivers a bounded rate
 *                    of checks, floods and computations, however fast
 *                    they come.
 *
 * Ageing (OSPF's MaxAge, counted where the copy is held): a record lives
 * its lifetime from when it arrived unless a newer one replaces it; the
 * originator sends a fresh one every third of it.  Our own never ages.
 * The lifetime held is the sender's bounded by ours (nodedb_set_bounds):
 * a node cannot make its records outlive what this one grants.
 *
 * Room: a full database takes a record from a new origin, or a bigger
 * copy, by dropping records of origins that gone() says are unreachable,
 * the longest held first; only when none is left is the record refused.
 * The departed never keep out a node that joins.
 */
#ifndef VNET_NODEDB_H
#define VNET_NODEDB_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"

/*
 * Per network: ten thousand nodes with a topology record and two MAC
 * pages each, and the bytes of as many records signed (a certificate and
 * a signature: 0.7 KiB with ECDSA P-256, about 1.3 KiB with RSA 2048, up
 * to 2 KiB), bounded.  Only an insider on a plain network can fill them
 * (with TLS a record is taken only in a name its certificate holds: an
 * insider fills its own node's nine); what a record costs beside its
 * bytes is the entry, its place in the table and index and its decoded
 * copy, a few hundred bytes.
 */
#define NODEDB_RECORDS_MAX	32768
#define NODEDB_BYTES_MAX	(64 * 1024 * 1024)
#define NODEDB_MIN_ARRIVAL_MS	50
#define NODEDB_ORIGIN_RATE	10	/* records a second of one origin */
#define NODEDB_ORIGIN_BURST	18	/* twice a node's topology and pages */
#define NODEDB_WAITS_MAX	16	/* links' copies kept aside per record */

struct nodedb;

/*
 * A newer copy of a record that came too soon, kept aside unchecked (its
 * signature is checked when it is handed back): the newest from one link
 * (from), so that an insider's copies in another node's name can only
 * displace its own.
 */
struct nodedb_wait {
	struct nodedb_wait	*next;		/* newest first */
	const void		*from;
	uint64_t		 seq;
	uint8_t			*raw;
	size_t			 len;
};

struct nodedb_entry {
	char		 name[NODE_NAME_MAX + 1];
	uint8_t		 kind;
	uint16_t	 id;
	uint64_t	 seq;
	uint16_t	 lifetime;	/* s */
	uint64_t	 received_ms;
	uint8_t		*raw;
	size_t		 len;
	int		 self;
	struct nodedb_wait *wait;	/* newer copies kept aside */
	/* The origin's bucket, in its first entry: thousandths, when. */
	uint32_t	 tokens;
	uint64_t	 tokens_ms;
	/*
	 * The caller's (what it decoded of raw), set with nodedb_set_cache();
	 * freed by the function given to nodedb_new() when raw changes or
	 * the entry goes.
	 */
	void		*cache;
	uint32_t	 hash;		/* of the key, for the table */
};

enum nodedb_result {
	NODEDB_NEW = 0,
	NODEDB_SAME,
	NODEDB_OLDER,
	NODEDB_SELF,
	NODEDB_FULL,
	NODEDB_TOO_SOON,
	NODEDB_NOMEM,
};

struct nodedb_stats {
	uint64_t	accepted, same, older, self_newer, full, aged;
	uint64_t	delayed;	/* copies kept aside (NODEDB_TOO_SOON) */
	uint64_t	late;		/* copies kept aside, handed back */
	uint64_t	evicted;	/* of unreachable origins, for room */
	uint64_t	lifetime_cut;	/* lifetimes above ours, bounded */
};

/*
 * self: this node's name; max: records held at most (0: the default);
 * cache_free (may be NULL) frees what nodedb_set_cache() was given.
 */
struct nodedb	*nodedb_new(const char *self, size_t max,
		    void (*cache_free)(void *));
void		 nodedb_free(struct nodedb *);
/*
 * lifetime_max: the most this node grants a record (s, 0: the sender's);
 * gone (may be NULL): 1 for an origin with no path, whose records may be
 * dropped for room.
 */
void		 nodedb_set_bounds(struct nodedb *, uint16_t lifetime_max,
		    int (*gone)(const char *origin, void *arg), void *arg);

/*
 * A record from a peer (raw, n bytes, node_decode() said NODE_OK) with
 * its fixed part as decoded.  A copy kept aside (NODEDB_TOO_SOON) is
 * from NULL, as if from a link of its own.
 */
enum nodedb_result nodedb_offer(struct nodedb *, const uint8_t *raw, size_t n,
		    const struct node_hdr *, uint64_t now_ms);
/*
 * Before a record is checked (h from node_peek()): 1 if it is a newer
 * copy of a record held that would be NODEDB_TOO_SOON now, and was kept
 * aside as from link from (or dropped: an older copy than that link's, or
 * no room), so that it costs no check now; 0: check it and offer it.
 */
int		 nodedb_defer(struct nodedb *, const uint8_t *raw, size_t n,
		    const struct node_hdr *, const void *from, uint64_t now_ms);
/* One of our own records, replacing the last; 0, or -1 out of memory. */
int		 nodedb_originate(struct nodedb *, const uint8_t *raw, size_t n,
		    const struct node_hdr *, uint64_t now_ms);
/*
 * Removes the records whose lifetime is over, calling cb (may be NULL)
 * with each before it goes; returns how many went.
 */
size_t		 nodedb_age(struct nodedb *, uint64_t now_ms,
		    void (*cb)(const struct nodedb_entry *, void *), void *arg);

/*
 * The copies kept aside whose turn has come (the record's interval over
 * and a token in its origin's bucket), taken out of the database and
 * handed to cb one record at a time, newest first, until cb says 1 (it
 * took one: checked and offered it; the rest are older) or none is left;
 * cb may offer records meanwhile.  Returns how many records still wait
 * (call again NODEDB_MIN_ARRIVAL_MS later).
 */
size_t		 nodedb_late(struct nodedb *, uint64_t now_ms,
		    int (*cb)(const uint8_t *raw, size_t n, const void *from,
		    void *arg), void *arg);

const struct nodedb_entry *nodedb_get(const struct nodedb *, const char *name,
		    uint8_t kind, uint16_t id);
/*
 * The records, ours included, in order of (origin, kind, id): i in
 * 0..nodedb_count()-1; the index of one (as for nodedb_at()), or -1.
 */
int		 nodedb_index(const struct nodedb *, const char *name,
		    uint8_t kind, uint16_t id);
size_t		 nodedb_count(const struct nodedb *);
/*
 * 1 (counted as NODEDB_SAME) if raw is byte for byte the copy held of
 * its record: it needs no decoding.
 */
int		 nodedb_same(struct nodedb *, const uint8_t *raw, size_t n,
		    const struct node_hdr *);
/* Topology records held: the nodes known. */
size_t		 nodedb_nodes(const struct nodedb *);
/* Replaces the cache of record i (freeing the last). */
void		 nodedb_set_cache(struct nodedb *, size_t i, void *cache);
const struct nodedb_entry *nodedb_at(const struct nodedb *, size_t i);
void		 nodedb_stats(const struct nodedb *, struct nodedb_stats *);
const char	*nodedb_result_name(enum nodedb_result);

#endif
