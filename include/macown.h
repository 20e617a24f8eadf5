/*
 * Who a guest MAC belongs to: the pure rules the control plane
 * (routing_mac.c) applies to claims, with the clock given.
 *
 * A MAC belongs to the node whose claim was taken first (the incumbent)
 * until that node lets it go; a newer or higher claim by another node
 * waits.  The owner lets go of a MAC (withdraws it from its record) when
 * another node claims it and the MAC is silent here: no frame from it for
 * MACOWN_SILENT_MS, or its interface down or gone.  That is what a real
 * migration looks like from the old host; a guest still sending here is
 * kept, however high the other claim's version.
 *
 * A claim's version may be at most MACOWN_STEP above the version held for
 * the MAC (none held: any version): legitimate claims go up by one.
 *
 * Mobility damping, as EVPN's duplicate MAC detection: MACOWN_MOVES moves
 * of a MAC within MACOWN_WINDOW_MS freeze it where it is for
 * MACOWN_HOLD_MS; while frozen its owner lets it go to no claim and no
 * node claims it, so a MAC that two guests share stops flapping.
 */
#ifndef VNET_MACOWN_H
#define VNET_MACOWN_H

#include <stdint.h>

#define MACOWN_SILENT_MS	1000
#define MACOWN_STEP		16
#define MACOWN_MOVES		5
#define MACOWN_WINDOW_MS	(180 * 1000)
#define MACOWN_HOLD_MS		(180 * 1000)

/* What the owner of a MAC does with another node's claim. */
enum macown_answer {
	MACOWN_YIELD,		/* silent here, or its interface gone: let go */
	MACOWN_KEEP_LIVE,	/* it still sends here */
	MACOWN_KEEP_FROZEN,	/* it moved too often: it stays */
	MACOWN_KEEP_JUMP,	/* the claim's version is out of bounds */
};

/* The moves of one MAC (zeroed: none yet). */
struct macown_mob {
	uint64_t	 since_ms;	/* the window's first move */
	uint64_t	 frozen_until;	/* ms; 0: not frozen */
	unsigned int	 moves;		/* in the window */
};

/* 1 if claimed is within bounds over held (0: none held). */
int		 macown_version_ok(uint32_t held, uint32_t claimed);
/* One above v, saturated (0 is no version on the wire). */
uint32_t	 macown_next(uint32_t v);
/*
 * The owner's answer to a claim of version claimed over its own (held):
 * seen_ms when the MAC last sent here, port_up whether its interface is
 * there, mob its moves (NULL: none).
 */
enum macown_answer macown_answer(uint32_t held, uint32_t claimed,
		    uint64_t seen_ms, int port_up, const struct macown_mob *mob,
		    uint64_t now);
/* One move of the MAC; 1 if this move froze it. */
int		 macown_move(struct macown_mob *, uint64_t now);
int		 macown_frozen(const struct macown_mob *, uint64_t now);
/* 1 when the record holds nothing worth keeping (may be freed). */
int		 macown_idle(const struct macown_mob *, uint64_t now);
const char	*macown_answer_name(enum macown_answer);

#endif
