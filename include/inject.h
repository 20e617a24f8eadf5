/*
 * What a capture backend injected lately, so that a captured frame that
 * equals one of them is recognised as having come back (a bridge port in
 * hairpin mode, a reflecting switch) and is not forwarded again.  A frame
 * is remembered by a hash of its head for INJECT_RECENT_MS; the last
 * INJECT_RECENT of them.  Pure: the clock is passed in.
 */
#ifndef VNET_INJECT_H
#define VNET_INJECT_H

#include <stddef.h>
#include <stdint.h>

#define INJECT_RECENT		256	/* injected frames remembered */
#define INJECT_RECENT_MS	1000	/* ... for this long at most */

struct inject_memory {
	size_t		next;		/* oldest entry of recent[] */
	struct {
		uint64_t	hash;
		uint64_t	when_ms;	/* 0: empty */
	}		recent[INJECT_RECENT];
};

void	inject_remember(struct inject_memory *, const uint8_t *frame,
	    size_t len, uint64_t now_ms);
/* 1 if the frame equals one remembered in the last INJECT_RECENT_MS. */
int	inject_seen(const struct inject_memory *, const uint8_t *frame,
	    size_t len, uint64_t now_ms);

#endif
