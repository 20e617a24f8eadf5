/*
 * Paths over the node graph.  Pure: nodes and the links each node's record
 * lists go in, a next hop per node and the broadcast tree come out.
 *
 * A link counts only when both ends list it (OSPF's two-way check), so a
 * node that is gone stops being reachable as soon as its neighbours'
 * records drop it, long before its own record ages out.  Its cost is the
 * round trip the node at the near end measured.
 *
 * Unicast: shortest paths from self by hop count, ties broken by the sum
 * of round trips, then by the name of the first hop (Dijkstra on the pair).
 *
 * A node that relays nothing (`relay no`, spf_set_relay()) is never a
 * transit hop: a path may start or end there, never pass through.  Two
 * nodes whose every path passes through such nodes cannot reach each
 * other.
 *
 * Broadcast and multicast: one tree per backbone, the same on every node
 * that holds the same database, so that a frame sent along it reaches
 * every node it can reach exactly once, with cycles or without.  A
 * backbone is a connected set of the nodes that relay; its tree is the
 * shortest path tree (by hops) from its node whose name sorts first, each
 * node's parent being the neighbour one hop nearer the root whose name
 * sorts first.  A node that relays nothing is a leaf: of each backbone
 * next to it, under its neighbour there nearest that root (by name among
 * equals); its own frames go to each of those, and straight to a
 * neighbour of its kind only if the two share no backbone (else that one
 * hears it through the backbone).  With every node relaying, that is the
 * one tree from the reachable node whose name sorts first.  A node
 * forwards a broadcast on its tree links only, never back the way it
 * came; a node that relays nothing forwards none (fwd.h).
 */
#ifndef VNET_SPF_H
#define VNET_SPF_H

#include <stddef.h>
#include <stdint.h>

#define SPF_NONE	(-1)

struct spf;

struct spf	*spf_new(void);
void		 spf_free(struct spf *);
/* Forgets every node and link. */
void		 spf_clear(struct spf *);
/* The index of a node, added if new; -1 when out of memory. */
int		 spf_node(struct spf *, const char *name);
int		 spf_find(const struct spf *, const char *name);	/* or SPF_NONE */
const char	*spf_name(const struct spf *, int i);
size_t		 spf_count(const struct spf *);
/* from's record lists a link to to with this round trip; 0 or -1. */
int		 spf_link(struct spf *, int from, int to, uint32_t rtt_us);
/* 1 if both ends list the link between a and b. */
int		 spf_two_way(const struct spf *, int a, int b);
/* 0: node i relays nothing between others (`relay no`); 1, the default. */
void		 spf_set_relay(struct spf *, int i, int relay);
int		 spf_relay(const struct spf *, int i);

/* Computes paths from self and the broadcast tree; 0, or -1 out of memory. */
int		 spf_run(struct spf *, int self);
/* After spf_run: 1 if node i can be reached from self (self included). */
int		 spf_reachable(const struct spf *, int i);
/* The neighbour of self that is the first hop toward i; SPF_NONE if none. */
int		 spf_next_hop(const struct spf *, int i);
unsigned int	 spf_hops(const struct spf *, int i);
/* 1 if the link between a and b is in the broadcast tree (after spf_run). */
int		 spf_tree_edge(const struct spf *, int a, int b);
/* 1 if the link between self and neighbour n is in the broadcast tree. */
int		 spf_tree_link(const struct spf *, int n);

#endif
