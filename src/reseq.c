/*
 * Resequencing at the tunnel's edge (see reseq.h).
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "gso.h"
#include "hash.h"
#include "pkt.h"
#include "reseq.h"

/* One frame held: a copy, with its offload header. */
struct held {
	struct held	*next;
	void		*to;
	struct sw_frame	 f;
	size_t		 size;		/* counted against the bounds */
	uint8_t		 data[];
};

struct slot {
	uint32_t	 key;
	int		 used;
	void		*to;
	void		*from;		/* the link the flow arrives by */
	uint64_t	 last_us;	/* its last frame by it */
	uint64_t	 gap_us;	/* mean gap between them */
	/* A hold: frames by holdp wait for from to fall quiet. */
	void		*holdp;
	uint64_t	 hold_us;	/* when it began */
	uint64_t	 held_last_us;	/* the last frame held */
	struct held	*head, **tail;
	size_t		 bytes;
	TAILQ_ENTRY(slot) entry;	/* in holding, while held */
};

TAILQ_HEAD(slot_list, slot);

struct reseq {
	reseq_deliver_fn	 deliver;
	void			*arg;
	reseq_check_fn		 check;
	void			*check_arg;
	uint32_t		 seed;
	struct reseq_stats	 st;
	struct slot_list	 holding;
	struct slot		 slots[RESEQ_SLOTS];
};

struct reseq *
reseq_new(reseq_deliver_fn deliver, void *arg)
{
	struct reseq	*q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->deliver = deliver;
	q->arg = arg;
	q->seed = arc4random();
	TAILQ_INIT(&q->holding);
	return q;
}

/* The frames held go, in order, to their port (or nowhere: drop). */
static void
drain(struct reseq *q, struct slot *s, int deliver)
{
	struct held	*h;

	while ((h = s->head) != NULL) {
		s->head = h->next;
		q->st.held_bytes -= h->size;
		s->bytes -= h->size;
		if (deliver)
			q->deliver(q->arg, h->to, &h->f);
		free(h);
	}
	s->tail = &s->head;
}

void
reseq_free(struct reseq *q)
{
	struct slot	*s;

	if (q == NULL)
		return;
	while ((s = TAILQ_FIRST(&q->holding)) != NULL) {
		TAILQ_REMOVE(&q->holding, s, entry);
		drain(q, s, 0);
	}
	free(q);
}

const struct reseq_stats *
reseq_stats(const struct reseq *q)
{
	return &q->st;
}

uint32_t
reseq_key(const struct reseq *q, const uint8_t *eth, size_t len,
    const void *to)
{
	uint32_t	 h = HASH_FNV_BASIS ^ q->seed;

	return pkt_flow_hash(hash_fnv1a(h, &to, sizeof(to)), eth, len);
}

/* How long the old link must be quiet for the flow. */
static uint64_t
quiet_us(const struct slot *s)
{
	uint64_t	 q = 4 * s->gap_us;

	if (q < RESEQ_QUIET_MIN_US)
		return RESEQ_QUIET_MIN_US;
	return q > RESEQ_QUIET_MAX_US ? RESEQ_QUIET_MAX_US : q;
}

static uint64_t
due_us(const struct slot *s)
{
	uint64_t	 quiet = s->last_us + quiet_us(s);
	uint64_t	 max = s->hold_us + RESEQ_HOLD_MAX_US;

	return quiet < max ? quiet : max;
}

/* A frame by the flow's link: the mean gap learns from it. */
static void
seen(struct slot *s, uint64_t now_us)
{
	uint64_t	 gap = now_us > s->last_us ? now_us - s->last_us : 0;

	if (gap > RESEQ_QUIET_MAX_US)
		gap = RESEQ_QUIET_MAX_US;
	if (s->gap_us == 0)
		s->gap_us = gap;
	else
		s->gap_us = s->gap_us - s->gap_us / 8 + gap / 8;
	s->last_us = now_us;
}

/* Ends the hold: the frames held go, in order; the new link is the flow's. */
static void
release(struct reseq *q, struct slot *s, uint64_t *counter)
{
	(*counter)++;
	TAILQ_REMOVE(&q->holding, s, entry);
	s->from = s->holdp;
	s->holdp = NULL;
	s->last_us = s->held_last_us;
	s->gap_us = 0;
	drain(q, s, 1);
}

/* Copies the frame to the end of the hold; -1 if a bound stops it. */
static int
hold(struct reseq *q, struct slot *s, void *to,
    const struct sw_frame *f, uint64_t now_us)
{
	struct held	*h;
	size_t		 vlen = f->vh != NULL ? GSO_VNET_HDR_LEN : 0;
	size_t		 size = sizeof(*h) + vlen + f->len;

	if (s->bytes + size > RESEQ_FLOW_BYTES ||
	    q->st.held_bytes + size > RESEQ_BYTES ||
	    (h = malloc(size)) == NULL)
		return -1;
	h->next = NULL;
	h->to = to;
	h->f = *f;
	h->size = size;
	if (vlen > 0) {
		memcpy(h->data, f->vh, vlen);
		h->f.vh = h->data;
	}
	memcpy(h->data + vlen, f->eth, f->len);
	h->f.eth = h->data + vlen;
	*s->tail = h;
	s->tail = &h->next;
	s->bytes += size;
	s->held_last_us = now_us;
	q->st.held_bytes += size;
	q->st.held++;
	return 0;
}

void
reseq_set_check(struct reseq *q, reseq_check_fn fn, void *arg)
{
	q->check = fn;
	q->check_arg = arg;
}

int
reseq_input(struct reseq *q, uint32_t key, void *from, void *to,
    const struct sw_frame *f, uint64_t now_us)
{
	struct slot	*s = &q->slots[key & (RESEQ_SLOTS - 1)];
	int		 ours = s->used && s->key == key && s->to == to;

	/* Not by the flow's links: is it by one its source may use? */
	if (q->check != NULL && (!ours || (from != s->from &&
	    from != s->holdp)) && !q->check(q->check_arg, from, f)) {
		q->st.off_path++;
		return 0;
	}

	if (!ours) {
		/* A new flow, or another in its slot. */
		if (s->holdp != NULL)
			release(q, s, &q->st.released_other);
		s->used = 1;
		s->key = key;
		s->to = to;
		s->from = from;
		s->last_us = now_us;
		s->gap_us = 0;
		s->tail = &s->head;
		return 0;
	}
	if (s->holdp != NULL) {
		if (from == s->from) {
			/* Older than the held ones: on at once. */
			q->st.old_after_new++;
			seen(s, now_us);
			return 0;
		}
		if (from == s->holdp) {
			if (now_us >= due_us(s))
				release(q, s, now_us - s->last_us >=
				    quiet_us(s) ? &q->st.released_quiet :
				    &q->st.released_max);
			else if (hold(q, s, to, f, now_us) == 0)
				return 1;
			else
				release(q, s, &q->st.released_full);
			s->last_us = now_us;
			return 0;
		}
		/* A third link: no order to keep any more. */
		release(q, s, &q->st.released_other);
	}
	if (from == s->from) {
		seen(s, now_us);
		return 0;
	}
	if (now_us - s->last_us >= quiet_us(s) ||
	    (s->holdp = from, s->hold_us = now_us,
	    hold(q, s, to, f, now_us) == -1)) {
		/* The old link has been quiet long enough (or no room). */
		s->holdp = NULL;
		s->from = from;
		s->last_us = now_us;
		s->gap_us = 0;
		return 0;
	}
	q->st.holds++;
	TAILQ_INSERT_TAIL(&q->holding, s, entry);
	return 1;
}

uint64_t
reseq_poll(struct reseq *q, uint64_t now_us)
{
	struct slot	*s, *next;
	uint64_t	 due, first = 0;

	for (s = TAILQ_FIRST(&q->holding); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (now_us >= (due = due_us(s))) {
			release(q, s, now_us - s->last_us >= quiet_us(s) ?
			    &q->st.released_quiet : &q->st.released_max);
			continue;
		}
		if (first == 0 || due < first)
			first = due;
	}
	return first;
}

uint64_t
reseq_next(const struct reseq *q)
{
	const struct slot *s;
	uint64_t	 due, first = 0;

	TAILQ_FOREACH(s, &q->holding, entry) {
		due = due_us(s);
		if (first == 0 || due < first)
			first = due;
	}
	return first;
}

void
reseq_forget(struct reseq *q, const void *p)
{
	struct slot	*s;
	size_t		 i;

	for (i = 0; i < RESEQ_SLOTS; i++) {
		s = &q->slots[i];
		if (!s->used || (s->to != p && s->from != p && s->holdp != p))
			continue;
		if (s->holdp != NULL) {
			q->st.released_other++;
			TAILQ_REMOVE(&q->holding, s, entry);
			s->holdp = NULL;
			if (s->to == p)
				drain(q, s, 0);
			else
				drain(q, s, 1);
		}
		s->used = 0;
	}
}
