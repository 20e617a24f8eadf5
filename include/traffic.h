/*
 * The traffic matrix as the node where frames enter from guests sees it:
 * per (source MAC, destination MAC) and per destination node, bytes and
 * frames since counting began and rates over the last second and the last
 * ten.  Pure: frames and a clock (ms) in, rows out.
 *
 * Bounded: at most TRAFFIC_PAIRS_MAX pairs and TRAFFIC_NODES_MAX
 * destination nodes; a frame of a pair (or node) that does not fit is
 * counted in overflow and nowhere else.  A pair or node idle for
 * TRAFFIC_IDLE_MS is forgotten, making room.
 */
#ifndef VNET_TRAFFIC_H
#define VNET_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"

#define TRAFFIC_PAIRS_MAX	4096
#define TRAFFIC_NODES_MAX	1024
#define TRAFFIC_IDLE_MS		(600 * 1000)

struct traffic;

/* seed: of the hash tables, random where guests or peers pick the keys. */
struct traffic	*traffic_new(uint64_t now_ms, uint32_t seed);
void		 traffic_free(struct traffic *);
/* One frame of len bytes from src to dst, for node dst_node ("*": none). */
void		 traffic_count(struct traffic *, const uint8_t *src,
		    const uint8_t *dst, const char *dst_node, size_t len,
		    uint64_t now_ms);
/* Brings the rates up to now; call about once a second. */
void		 traffic_tick(struct traffic *, uint64_t now_ms);
/*
 * The heaviest rows (by rate over 10 s, then bytes), at most max of
 * each; returns how many were written.
 */
size_t		 traffic_pairs(struct traffic *, struct node_row *, size_t max);
size_t		 traffic_nodes(struct traffic *, struct node_dst *, size_t max);
/* Frames that found no room. */
uint64_t	 traffic_overflow(const struct traffic *);
/* A number that changes whenever a count does (to know when to send). */
uint64_t	 traffic_version(const struct traffic *);

#endif
