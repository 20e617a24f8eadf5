/*
 * Resequencing at the tunnel's edge: when a flow's frames start to arrive
 * by another link (its route moved, say onto a shortcut), frames still on
 * the old path would reach the guest after the first ones by the new path.
 * TCP takes such reordering as loss.  So a flow's frames by the new link
 * are held until the old link has been quiet for the flow for a while,
 * then handed on in order.
 *
 * A flow is the inner IP flow (addresses, protocol, TCP or UDP ports; for
 * other frames, the Ethernet header) toward one output port.  Per flow the
 * table keeps the link it arrives by, when it last did and the mean gap
 * between its frames.  A frame of the flow by another link is held when the
 * old link delivered the flow less than `quiet` ago, where quiet is four
 * times the flow's mean gap, at least RESEQ_QUIET_MIN_US and at most
 * RESEQ_QUIET_MAX_US (5 ms and 20 ms: a relay short of CPU stalls for
 * milliseconds, and a hold costs the flow that delay once).  The held frames go, in order, once the old link has
 * been quiet that long, or after RESEQ_HOLD_MAX_US whatever happens, or
 * when the held bytes reach a bound (per flow and in all): a hold only ever
 * delays frames, it never drops one.  Frames by the old link meanwhile go
 * at once (they are the older ones).
 *
 * Bounded: RESEQ_SLOTS flows, direct-mapped by a seeded hash (a colliding
 * flow takes the slot; frames held there go first); RESEQ_FLOW_BYTES held
 * per flow and RESEQ_BYTES in all (per switch, so per daemon).
 */
#ifndef VNET_RESEQ_H
#define VNET_RESEQ_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

#define RESEQ_SLOTS		4096
#define RESEQ_QUIET_MIN_US	5000
#define RESEQ_QUIET_MAX_US	20000
#define RESEQ_HOLD_MAX_US	100000
#define RESEQ_FLOW_BYTES	(1024 * 1024)
#define RESEQ_BYTES		(4 * 1024 * 1024)

struct reseq;

struct reseq_stats {
	uint64_t	holds;		/* flows held after a change of link */
	uint64_t	held;		/* frames held */
	uint64_t	old_after_new;	/* frames by the old link that came
					   after newer ones by the new link
					   (held): out of order without it */
	uint64_t	released_quiet;	/* holds ended: the old link quiet */
	uint64_t	released_max;	/* ... at RESEQ_HOLD_MAX_US */
	uint64_t	released_full;	/* ... at a bound of bytes */
	uint64_t	released_other;	/* ... a third link, a collision, a
					   port gone */
	uint64_t	held_bytes;	/* now */
	uint64_t	off_path;	/* frames by a link their source's
					   path does not take: on, unheld,
					   the flow's state left alone */
};

/* Hands a frame held on to port to. */
typedef void	(*reseq_deliver_fn)(void *arg, void *to,
		    const struct sw_frame *);

struct reseq	*reseq_new(reseq_deliver_fn, void *arg);
void		 reseq_free(struct reseq *);

/*
 * Optional: 1 if frame f may come by port from (a path its source may
 * take).  Asked only of a frame by a link other than its flow's: one that
 * fails goes on at once and changes nothing, so frames sent by a link
 * that does not carry a flow (an insider's, under the flow's addresses)
 * can neither start a hold nor take the flow over.
 */
typedef int	(*reseq_check_fn)(void *arg, void *from,
		    const struct sw_frame *f);
void		 reseq_set_check(struct reseq *, reseq_check_fn, void *arg);

/* The flow a frame belongs to, toward an output port. */
uint32_t	 reseq_key(const struct reseq *, const uint8_t *eth,
		    size_t len, const void *to);

/*
 * A frame of flow key arrived by port from, for port to: 0 if it goes on
 * now (after any held frames it must follow, which are delivered first), 1
 * if it was copied and held.
 */
int		 reseq_input(struct reseq *, uint32_t key, void *from,
		    void *to, const struct sw_frame *, uint64_t now_us);

/*
 * Ends the holds that are due.  Returns when the next one is (0: none
 * held): the caller calls again then.
 */
uint64_t	 reseq_poll(struct reseq *, uint64_t now_us);

/* When the next hold is due (0: none held). */
uint64_t	 reseq_next(const struct reseq *);

/* Port p goes away: holds that involve it end (frames to it are dropped). */
void		 reseq_forget(struct reseq *, const void *p);

const struct reseq_stats *reseq_stats(const struct reseq *);

#endif
