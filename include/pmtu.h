/*
 * Path MTU search for a datagram path: the largest datagram (UDP payload)
 * that reaches the peer.  Pure: sizes and a clock in, the next probe out.
 *
 * The first probe of a search is the largest the local route takes
 * (pmtu_set_max()); if it goes unanswered, a binary search between what is known to pass (lo, at first PMTU_FLOOR:
 * what IPv6 guarantees) and what is known not to (hi): a probe of the
 * middle size is padded to it; an answer raises lo, PMTU_TRIES probes
 * unanswered within the timeout lower hi, and so does a send that fails
 * with EMSGSIZE (the local device's MTU, or an ICMP fragmentation-needed
 * from the underlay that the kernel remembered for the route).  Done when
 * the two are within PMTU_STEP; then searched again every reprobe_ms
 * (the path may have grown), and again at once after an EMSGSIZE (it
 * shrank).  Data always goes at lo, which has passed.
 */
#ifndef VNET_PMTU_H
#define VNET_PMTU_H

#include <stddef.h>
#include <stdint.h>

#define PMTU_FLOOR		1232	/* 1280 less IPv6 and UDP */
#define PMTU_CEIL		65507
#define PMTU_STEP		16
#define PMTU_TRIES		2
#define PMTU_TIMEOUT_MS		1000
#define PMTU_REPROBE_MS		600000

struct pmtu {
	uint32_t	 lo, hi;	/* passed; not passed */
	uint32_t	 max;		/* the local bound; hi starts there + 1 */
	uint32_t	 probing;	/* the size out, 0: none */
	unsigned int	 tries;		/* of that size */
	int		 top_tried;	/* this search probed hi - 1 */
	uint64_t	 sent_at;	/* ms */
	uint64_t	 next_at;	/* ms: the next search */
	uint64_t	 timeout_ms, reprobe_ms;
	uint64_t	 searches;	/* finished */
};

void		 pmtu_init(struct pmtu *, uint64_t now_ms);
/*
 * The size to probe now, or 0 (nothing to probe, or a probe is out and
 * not yet late).  The caller sends it and, if the send fails with
 * EMSGSIZE, says so with pmtu_emsgsize().
 */
uint32_t	 pmtu_probe(struct pmtu *, uint64_t now_ms);
/* When to call pmtu_probe() again, at the latest (ms). */
uint64_t	 pmtu_wake(const struct pmtu *);
void		 pmtu_ack(struct pmtu *, uint32_t size, uint64_t now_ms);
void		 pmtu_emsgsize(struct pmtu *, uint32_t size, uint64_t now_ms);
/* No datagram above max can pass (the local route's MTU says so). */
void		 pmtu_set_max(struct pmtu *, uint32_t max);
/* The largest datagram to send. */
uint32_t	 pmtu_get(const struct pmtu *);
int		 pmtu_searching(const struct pmtu *);

#endif
