/*
 * Holes being punched toward peers' NATs (routing_env.h's punch, made by
 * routing_daemon.c): which may start now.  At most one toward a node at a
 * time and PUNCH_MAX in all, each for at most PUNCH_MS, unless its caller
 * ends it sooner (its connection went through or failed).  Pure: names and
 * a clock (ms) in, a slot out; the caller keeps the socket of each slot.
 */
#ifndef VNET_PUNCH_H
#define VNET_PUNCH_H

#include <stdint.h>

#include "node.h"

#define PUNCH_MAX	8
#define PUNCH_MS	4000	/* as long as a peer's dial takes to meet it */

struct punch_slot {
	char		 node[NODE_NAME_MAX + 1];
	uint64_t	 until;		/* ms; 0: free */
};

struct punch {
	struct punch_slot slot[PUNCH_MAX];
};

/*
 * A slot for a punch toward node at now, taken until now + PUNCH_MS: its
 * index, or -1 while one toward node goes on or all PUNCH_MAX do.
 */
int	 punch_take(struct punch *, const char *node, uint64_t now);
/* The punch of that slot is over (through, failed or timed out). */
void	 punch_end(struct punch *, int slot);
/* Punches going on at now. */
unsigned int punch_count(const struct punch *, uint64_t now);

#endif
