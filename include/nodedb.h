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
 *   NODEDB_TOO_SOON  not yet: a newer copy of a node's record less than
 *                    NODEDB_MIN_ARRIVAL_MS after the last (OSPF's
 *                    MinLSArrival; the originator spaces its own further).
 *                    The newest such copy is kept aside and taken by
 *                    nodedb_late() once that time has passed, unless a
 *                    newer one came meanwhile: copies that crossed the
 *                    network by paths of different delays still arrive.
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
 * Per network: a thousand nodes with a topology record and a few MAC
 * pages each, and the bytes of as many records as a hostile insider could
 * fill them with, bounded.
 */
#define NODEDB_RECORDS_MAX	8192
#define NODEDB_BYTES_MAX	(32 * 1024 * 1024)
#define NODEDB_MIN_ARRIVAL_MS	50

struct nodedb;

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
	uint8_t		*late;		/* a newer copy that came too soon */
	size_t		 late_len;
	uint64_t	 late_seq;
	uint16_t	 late_lifetime;
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
	uint64_t	accepted, same, older, self_newer, full, too_soon, aged;
	uint64_t	late;		/* too-soon copies taken later */
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
 * its fixed part as decoded.
 */
enum nodedb_result nodedb_offer(struct nodedb *, const uint8_t *raw, size_t n,
		    const struct node_hdr *, uint64_t now_ms);
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
 * Takes the copies kept aside as too soon whose time has come, as if they
 * arrived now, calling cb with each entry so that it is sent on; returns
 * how many are still waiting (call again NODEDB_MIN_ARRIVAL_MS later).
 */
size_t		 nodedb_late(struct nodedb *, uint64_t now_ms,
		    void (*cb)(const struct nodedb_entry *, void *), void *arg);

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
