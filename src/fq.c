#include <stdlib.h>
#include <string.h>

#include "fq.h"
#include "hash.h"
#include "pkt.h"

int
fq_init(struct fq *q, size_t limit, size_t prefix, const struct aqm_params *p,
    uint32_t seed)
{
	memset(q, 0, sizeof(*q));
	q->limit = limit;
	q->prefix = prefix;
	q->seed = seed;
	q->params = *p;
	TAILQ_INIT(&q->new_flows);
	TAILQ_INIT(&q->old_flows);
	return 0;
}

/*
 * The flow queues (about 140 KiB) are made when the first frame comes:
 * a daemon with many links, most of them idle or down, keeps only what it
 * uses resident.
 */
static int
fq_flows_alloc(struct fq *q)
{
	size_t	 i;

	if ((q->flows = calloc(FQ_FLOWS, sizeof(*q->flows))) == NULL)
		return -1;
	for (i = 0; i < FQ_FLOWS; i++)
		aqm_init(&q->flows[i].aqm, &q->params);
	return 0;
}

void
fq_set_params(struct fq *q, const struct aqm_params *p)
{
	size_t	 i;

	q->params = *p;
	for (i = 0; q->flows != NULL && i < FQ_FLOWS; i++)
		aqm_init(&q->flows[i].aqm, p);
}

static void
buf_free(struct fq_buf *b)
{
	free(b);
}

void
fq_release(struct fq *q, struct fq_buf *b)
{
	if (b->cap != FQ_BUF_DATA) {
		buf_free(b);
		return;
	}
	b->next = q->pool;
	q->pool = b;
}

void
fq_flush(struct fq *q)
{
	struct fq_flow	*f;
	struct fq_buf	*b;
	size_t		 i;

	for (i = 0; q->flows != NULL && i < FQ_FLOWS; i++) {
		f = &q->flows[i];
		while ((b = f->head) != NULL) {
			f->head = b->next;
			fq_release(q, b);
		}
		f->tail = NULL;
		f->backlog = 0;
		f->listed = 0;
		aqm_empty(&f->aqm);
	}
	TAILQ_INIT(&q->new_flows);
	TAILQ_INIT(&q->old_flows);
	q->bytes = q->count = 0;
}

void
fq_free(struct fq *q)
{
	struct fq_buf	*b;

	if (q->flows != NULL)
		fq_flush(q);
	while ((b = q->pool) != NULL) {
		q->pool = b->next;
		buf_free(b);
	}
	free(q->flows);
	q->flows = NULL;
}

size_t
fq_hash(const struct fq *q, const uint8_t *frame, size_t len)
{
	/* The seed keeps peers from aiming at one queue. */
	return pkt_flow_hash(HASH_FNV_BASIS ^ q->seed, frame, len) % FQ_FLOWS;
}

static struct fq_buf	*flow_pop(struct fq *, struct fq_flow *);

/* Small frames take a whole buffer: their number is bounded too. */
static int
fq_full(const struct fq *q, size_t need)
{
	return q->bytes + need > q->limit || q->count >= q->limit / 512;
}

/*
 * RFC 8290's fq_codel_drop(): half the fattest flow's bytes (at most
 * FQ_DROP_BATCH frames) go from its head, the frames that have waited
 * longest.  A linear scan, as in Linux: it runs once per full queue, and
 * the batch makes the next few arrivals find room.
 */
static size_t
fq_drop_fattest(struct fq *q, uint64_t *drops)
{
	struct fq_flow	*fat = NULL;
	struct fq_buf	*b;
	size_t		 i, goal, freed = 0, n = 0;

	for (i = 0; i < FQ_FLOWS; i++)
		if (fat == NULL || q->flows[i].backlog > fat->backlog)
			fat = &q->flows[i];
	if (fat == NULL)
		return 0;
	goal = fat->backlog / 2;
	while (n < FQ_DROP_BATCH && (n == 0 || freed < goal) &&
	    (b = flow_pop(q, fat)) != NULL) {
		freed += b->len;
		fq_release(q, b);
		(*drops)++;
		n++;
	}
	return n;
}

int
fq_enqueue(struct fq *q, uint64_t now, const uint8_t *prefix,
    const uint8_t *frame, size_t len, uint64_t *drops)
{
	struct fq_flow	*f;
	struct fq_buf	*b;
	size_t		 need = q->prefix + len;

	if (q->flows == NULL && fq_flows_alloc(q) == -1)
		return -1;
	if (need > q->limit || need > UINT32_MAX || q->limit / 512 == 0)
		return -1;
	while (fq_full(q, need))
		if (fq_drop_fattest(q, drops) == 0)
			return -1;
	if (need <= FQ_BUF_DATA && q->pool != NULL) {
		b = q->pool;
		q->pool = b->next;
	} else {
		size_t cap = need <= FQ_BUF_DATA ? FQ_BUF_DATA : need;

		if ((b = malloc(sizeof(*b) + cap)) == NULL)
			return -1;
		b->cap = (uint32_t)cap;
	}
	b->next = NULL;
	b->ts = now;
	b->len = (uint32_t)need;
	memcpy(b->data, prefix, q->prefix);
	memcpy(b->data + q->prefix, frame, len);

	f = &q->flows[fq_hash(q, frame, len)];
	if (f->tail != NULL)
		f->tail->next = b;
	else
		f->head = b;
	f->tail = b;
	f->backlog += need;
	q->bytes += need;
	q->count++;
	if (!f->listed) {
		f->listed = 1;
		f->deficit = FQ_QUANTUM;
		TAILQ_INSERT_TAIL(&q->new_flows, f, entry);
	}
	return 0;
}

static struct fq_buf *
flow_pop(struct fq *q, struct fq_flow *f)
{
	struct fq_buf	*b = f->head;

	if (b == NULL)
		return NULL;
	if ((f->head = b->next) == NULL)
		f->tail = NULL;
	f->backlog -= b->len;
	q->bytes -= b->len;
	q->count--;
	return b;
}

struct fq_buf *
fq_dequeue(struct fq *q, uint64_t now, uint64_t *drops, int *marked)
{
	struct fq_flowlist	*list;
	struct fq_flow		*f;
	struct fq_buf		*b;
	enum aqm_verdict	 v;

	*marked = 0;
	for (;;) {
		list = &q->new_flows;
		if ((f = TAILQ_FIRST(list)) == NULL) {
			list = &q->old_flows;
			if ((f = TAILQ_FIRST(list)) == NULL)
				return NULL;
		}
		if (f->deficit <= 0) {
			f->deficit += FQ_QUANTUM;
			TAILQ_REMOVE(list, f, entry);
			TAILQ_INSERT_TAIL(&q->old_flows, f, entry);
			continue;
		}
		/* This flow's CoDel, dropping as it says. */
		v = AQM_DROP;
		while ((b = flow_pop(q, f)) != NULL) {
			v = aqm_dequeue(&f->aqm, now, b->ts, q->bytes,
			    b->data + q->prefix, b->len - q->prefix);
			if (v != AQM_DROP)
				break;
			(*drops)++;
			fq_release(q, b);
		}
		if (b == NULL) {
			aqm_empty(&f->aqm);
			TAILQ_REMOVE(list, f, entry);
			/* RFC 8290: a new flow gone empty waits its turn once. */
			if (list == &q->new_flows &&
			    !TAILQ_EMPTY(&q->old_flows))
				TAILQ_INSERT_TAIL(&q->old_flows, f, entry);
			else
				f->listed = 0;
			continue;
		}
		*marked = v == AQM_MARK;
		f->deficit -= b->len - (int64_t)q->prefix;
		return b;
	}
}
