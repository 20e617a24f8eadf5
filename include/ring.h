/*
 * A ring of frames between two threads: one producer, one consumer, no
 * locks.  Records (a length and the bytes, 8-byte aligned) lie whole in
 * one buffer of fixed size: one that does not fit before the end is put at
 * the beginning, behind a skip mark.  The producer reserves room for the
 * largest record it may write, fills it (a read(2) straight into the
 * ring), and commits what it wrote; the consumer peeks at the oldest
 * record, uses it in place and releases it.
 *
 * Positions only grow; head is written by the producer alone, tail by the
 * consumer alone, both sequentially consistent, so that each side's
 * "the other has caught up" test cannot miss the other's last move:
 *
 *   - ring_commit() returns 1 when the consumer had taken everything
 *     before this record: it may be asleep, wake it.
 *   - a producer that finds no room calls ring_want_room() and, if that
 *     still finds none, sleeps; ring_release() returns 1 when it must be
 *     woken.
 *
 * The sleeping and waking (eventfds, poll) are the caller's.
 */
#ifndef VNET_RING_H
#define VNET_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct ring {
	uint8_t			*buf;
	size_t			 size;		/* bytes, a multiple of 8 */
	_Atomic uint64_t	 head;		/* the producer's */
	_Atomic uint64_t	 tail;		/* the consumer's */
	_Atomic int		 want_room;	/* the producer waits */
	/* The producer's own. */
	uint64_t		 res_at;	/* where the reservation starts */
	uint64_t		 res_rec;	/* its record (after a skip) */
	size_t			 res_max;
	/* The consumer's own. */
	uint64_t		 peek_at;	/* the record peeked */
	uint64_t		 peek_next;	/* the position after it */
};

/* size: bytes of ring (at least twice the largest record); 0 or -1. */
int	 ring_init(struct ring *, size_t size);
void	 ring_free(struct ring *);
/* The largest record a ring of this size takes. */
size_t	 ring_max_record(const struct ring *);

/* Producer: room for max bytes, or NULL when there is none. */
uint8_t	*ring_reserve(struct ring *, size_t max);
/* Producer: publishes len (<= the reserved max) bytes; 1: wake the consumer. */
int	 ring_commit(struct ring *, size_t len);
/*
 * Producer, after ring_reserve() failed: asks to be woken when the
 * consumer makes room.  Returns 1 if room for max appeared meanwhile
 * (then try again at once instead of sleeping).
 */
int	 ring_want_room(struct ring *, size_t max);

/* Consumer: the oldest record (its length in *len), or NULL when empty. */
uint8_t	*ring_peek(struct ring *, size_t *len);
/* Consumer: frees the record peeked; 1: wake the producer. */
int	 ring_release(struct ring *);
/* Records' bytes waiting, skips and headers included. */
size_t	 ring_used(struct ring *);

#endif
