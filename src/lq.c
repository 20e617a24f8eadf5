#include <stdlib.h>
#include <string.h>

#include "lq.h"

/* The record header, kept 8-byte aligned. */
struct lq_rec {
	uint64_t	 ts;
	uint32_t	 len;
	uint32_t	 pad;
};

#define LQ_ALIGN(n)	(((n) + 7) & ~(size_t)7)
#define LQ_RECLEN(len)	(sizeof(struct lq_rec) + LQ_ALIGN(len))

int
lq_init(struct lq *q, size_t limit, size_t maxlen)
{
	memset(q, 0, sizeof(*q));
	/*
	 * Headers ride on top of the limit, and the space skipped at the end
	 * when a record wraps costs at most one record.
	 */
	q->size = LQ_ALIGN(limit) + limit / 64 * sizeof(struct lq_rec) +
	    2 * LQ_RECLEN(maxlen);
	q->limit = limit;
	if ((q->ring = malloc(q->size)) == NULL)
		return -1;
	return 0;
}

void
lq_free(struct lq *q)
{
	free(q->ring);
	q->ring = NULL;
}

void
lq_flush(struct lq *q)
{
	q->head = q->tail = q->end = 0;
	q->wrapped = 0;
	q->bytes = q->count = 0;
}

int
lq_push(struct lq *q, uint64_t ts, const void *a, size_t alen, const void *b,
    size_t blen)
{
	struct lq_rec	 r;
	size_t		 len = alen + blen, need = LQ_RECLEN(len), at;

	if (len > UINT32_MAX || q->bytes + len > q->limit)
		return -1;
	if (q->wrapped) {
		if (q->head - q->tail < need)
			return -1;
		at = q->tail;
	} else if (q->size - q->tail >= need) {
		at = q->tail;
	} else if (q->head >= need) {
		/* The upper part ends here; go on at the start. */
		q->end = q->tail;
		q->wrapped = 1;
		at = 0;
	} else
		return -1;
	r.ts = ts;
	r.len = (uint32_t)len;
	r.pad = 0;
	memcpy(q->ring + at, &r, sizeof(r));
	if (alen > 0)
		memcpy(q->ring + at + sizeof(r), a, alen);
	if (blen > 0)
		memcpy(q->ring + at + sizeof(r) + alen, b, blen);
	q->tail = at + need;
	q->bytes += len;
	q->count++;
	return 0;
}

int
lq_peek(struct lq *q, struct lq_item *it)
{
	struct lq_rec	 r;

	if (q->count == 0)
		return -1;
	memcpy(&r, q->ring + q->head, sizeof(r));
	it->data = q->ring + q->head + sizeof(r);
	it->len = r.len;
	it->ts = r.ts;
	return 0;
}

void
lq_pop(struct lq *q)
{
	struct lq_rec	 r;

	if (q->count == 0)
		return;
	memcpy(&r, q->ring + q->head, sizeof(r));
	q->head += LQ_RECLEN(r.len);
	q->bytes -= r.len;
	if (--q->count == 0) {
		/* Empty: start again at the beginning, the data left intact. */
		q->head = q->tail = q->end = 0;
		q->wrapped = 0;
		return;
	}
	if (q->wrapped && q->head == q->end) {
		q->head = 0;
		q->wrapped = 0;
	}
}
