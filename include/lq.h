/*
 * A link's frame queue: a FIFO of byte records in one ring buffer, each
 * record a blob (the wire prefix and the frame) and the time it was queued.
 * No allocation per frame: the ring is allocated once, with room for the
 * queue limit; the kernel gives it pages only as the queue first grows
 * into them.
 *
 * Records are contiguous in the ring (one that does not fit before the end
 * starts again at the beginning), so a frame at the head can be rewritten
 * in place and handed on with one copy.
 *
 * Pure: no clock, no event loop; times are whatever the caller passes.
 */
#ifndef VNET_LQ_H
#define VNET_LQ_H

#include <stddef.h>
#include <stdint.h>

struct lq {
	uint8_t		*ring;
	size_t		 size;		/* of the ring */
	size_t		 limit;		/* of the blob bytes queued */
	size_t		 head;		/* oldest record */
	size_t		 tail;		/* where the next record goes */
	size_t		 end;		/* when wrapped: end of the upper part */
	int		 wrapped;	/* tail is below head */
	size_t		 bytes;		/* blob bytes queued */
	size_t		 count;		/* records queued */
};

struct lq_item {
	uint8_t		*data;		/* into the ring */
	size_t		 len;
	uint64_t	 ts;
};

/* A queue of at most limit bytes of blobs of at most maxlen bytes each. */
int	 lq_init(struct lq *, size_t limit, size_t maxlen);
void	 lq_free(struct lq *);
/*
 * Queues the concatenation of a and b (either may be empty) stamped ts; -1
 * if the limit would be passed (the caller counts a tail drop).
 */
int	 lq_push(struct lq *, uint64_t ts, const void *a, size_t alen,
	    const void *b, size_t blen);
/* The oldest record; 0, or -1 if the queue is empty. */
int	 lq_peek(struct lq *, struct lq_item *);
/* Removes the oldest record.  Its data stays readable until the next push. */
void	 lq_pop(struct lq *);
void	 lq_flush(struct lq *);

#endif
