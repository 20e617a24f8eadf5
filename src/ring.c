/*
 * A single-producer, single-consumer ring of records: see ring.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

#define RING_HDR	8
#define RING_SKIP	UINT32_MAX

static size_t
ring_align(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int
ring_init(struct ring *r, size_t size)
{
	memset(r, 0, sizeof(*r));
	r->size = size & ~(size_t)7;
	if (r->size < 4 * RING_HDR || (r->buf = malloc(r->size)) == NULL)
		return -1;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	atomic_init(&r->want_room, 0);
	return 0;
}

void
ring_free(struct ring *r)
{
	free(r->buf);
	r->buf = NULL;
}

size_t
ring_max_record(const struct ring *r)
{
	return r->size / 2 - RING_HDR;
}

/*
 * Where a record of need bytes (header included) goes when the producer is
 * at head: *rec, and the bytes it takes from head (a skip included).
 */
static uint64_t
ring_place(const struct ring *r, uint64_t head, size_t need, uint64_t *rec)
{
	size_t	 off = (size_t)(head % r->size);

	if (off + need <= r->size) {
		*rec = head;
		return need;
	}
	*rec = head + (r->size - off);
	return (r->size - off) + need;
}

static int
ring_has_room(struct ring *r, size_t need, uint64_t *rec)
{
	uint64_t	 head = atomic_load_explicit(&r->head,
			    memory_order_relaxed);
	uint64_t	 tail = atomic_load(&r->tail);
	uint64_t	 take = ring_place(r, head, need, rec);

	return head + take - tail <= r->size;
}

uint8_t *
ring_reserve(struct ring *r, size_t max)
{
	size_t		 need = RING_HDR + ring_align(max);
	uint64_t	 rec;

	if (max > ring_max_record(r) || !ring_has_room(r, need, &rec))
		return NULL;
	r->res_at = atomic_load_explicit(&r->head, memory_order_relaxed);
	r->res_rec = rec;
	r->res_max = max;
	return r->buf + (size_t)(rec % r->size) + RING_HDR;
}

int
ring_commit(struct ring *r, size_t len)
{
	uint32_t	 v;
	size_t		 off;

	if (len > r->res_max)
		len = r->res_max;
	if (r->res_rec != r->res_at) {
		/* The record starts again at the beginning: mark the rest. */
		off = (size_t)(r->res_at % r->size);
		if (r->size - off >= sizeof(v)) {
			v = RING_SKIP;
			memcpy(r->buf + off, &v, sizeof(v));
		}
	}
	v = (uint32_t)len;
	memcpy(r->buf + (size_t)(r->res_rec % r->size), &v, sizeof(v));
	r->res_max = 0;
	atomic_store(&r->head, r->res_rec + RING_HDR + ring_align(len));
	/* The consumer had caught up: it may be asleep. */
	return atomic_load(&r->tail) == r->res_at;
}

int
ring_want_room(struct ring *r, size_t max)
{
	uint64_t	 rec;

	atomic_store(&r->want_room, 1);
	if (ring_has_room(r, RING_HDR + ring_align(max), &rec)) {
		atomic_store(&r->want_room, 0);
		return 1;
	}
	return 0;
}

uint8_t *
ring_peek(struct ring *r, size_t *len)
{
	uint64_t	 tail = atomic_load_explicit(&r->tail,
			    memory_order_relaxed);
	uint64_t	 head = atomic_load(&r->head);
	size_t		 off;
	uint32_t	 v;

	if (tail == head)
		return NULL;
	off = (size_t)(tail % r->size);
	/* A skip: the mark, or an end too short to hold one. */
	if (r->size - off < RING_HDR)
		v = RING_SKIP;
	else
		memcpy(&v, r->buf + off, sizeof(v));
	if (v == RING_SKIP) {
		tail += r->size - off;
		off = 0;
		memcpy(&v, r->buf, sizeof(v));
	}
	r->peek_at = tail;
	r->peek_next = tail + RING_HDR + ring_align(v);
	*len = v;
	return r->buf + off + RING_HDR;
}

int
ring_release(struct ring *r)
{
	atomic_store(&r->tail, r->peek_next);
	if (atomic_load(&r->want_room) &&
	    atomic_exchange(&r->want_room, 0))
		return 1;
	return 0;
}

size_t
ring_used(struct ring *r)
{
	return (size_t)(atomic_load(&r->head) - atomic_load(&r->tail));
}
