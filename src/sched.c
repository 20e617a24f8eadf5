#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

void
sched_opts_default(struct sched_opts *o)
{
	o->rate = 0;
	aqm_params_default(&o->aqm);
	o->congestion[0] = '\0';
	o->transport = STMT_TRANSPORT_TCP;
	o->live_interval = o->live_mult = 0;
}

void
sched_opts_from_stmt(struct sched_opts *o, const struct stmt *st)
{
	if (st->lopts & STMT_LOPT_RATE)
		o->rate = st->rate;
	if (st->lopts & STMT_LOPT_AQM) {
		aqm_params_default(&o->aqm);
		if (st->aqm == STMT_AQM_OFF)
			o->aqm.kind = AQM_OFF;
		else if (st->aqm == STMT_AQM_FQ_CODEL)
			o->aqm.kind = AQM_FQ_CODEL;
		else
			o->aqm.kind = AQM_CODEL;
		if (st->aqm_target != 0)
			o->aqm.target = st->aqm_target;
		if (st->aqm_interval != 0)
			o->aqm.interval = st->aqm_interval;
	}
	if (st->lopts & STMT_LOPT_CONGESTION)
		snprintf(o->congestion, sizeof(o->congestion), "%s",
		    st->congestion);
	if (st->lopts & STMT_LOPT_TRANSPORT)
		o->transport = st->transport;
	if (st->lopts & STMT_LOPT_LIVENESS) {
		o->live_interval = st->live_interval;
		o->live_mult = st->live_mult;
	}
}

void
sched_opts_to_stmt(const struct sched_opts *o, struct stmt *st)
{
	struct aqm_params	 def;

	aqm_params_default(&def);
	st->lopts = 0;
	st->rate = o->rate;
	if (o->rate != 0)
		st->lopts |= STMT_LOPT_RATE;
	st->aqm = o->aqm.kind == AQM_OFF ? STMT_AQM_OFF :
	    o->aqm.kind == AQM_FQ_CODEL ? STMT_AQM_FQ_CODEL : STMT_AQM_CODEL;
	st->aqm_target = o->aqm.kind == AQM_OFF ? 0 : o->aqm.target;
	st->aqm_interval = o->aqm.kind == AQM_OFF ? 0 : o->aqm.interval;
	if (o->aqm.kind != def.kind || o->aqm.target != def.target ||
	    o->aqm.interval != def.interval)
		st->lopts |= STMT_LOPT_AQM;
	snprintf(st->congestion, sizeof(st->congestion), "%s", o->congestion);
	if (o->congestion[0] != '\0')
		st->lopts |= STMT_LOPT_CONGESTION;
	st->transport = o->transport;
	if (o->transport != STMT_TRANSPORT_TCP)
		st->lopts |= STMT_LOPT_TRANSPORT;
	st->live_interval = o->live_interval;
	st->live_mult = o->live_mult;
	if (o->live_interval != 0 || o->live_mult != 0)
		st->lopts |= STMT_LOPT_LIVENESS;
}

static int
sched_fq(const struct sched *s)
{
	return s->opts.aqm.kind == AQM_FQ_CODEL;
}

static void
sched_unhold(struct sched *s)
{
	if (s->held != NULL) {
		fq_release(&s->fq, s->held);
		s->held = NULL;
	}
}

int
sched_init(struct sched *s, const struct sched_opts *o, size_t limit,
    size_t prefix, size_t maxframe, uint64_t now, uint32_t seed)
{
	memset(s, 0, sizeof(*s));
	s->prefix = prefix;
	s->opts = *o;
	if (lq_init(&s->q, limit, prefix + maxframe) == -1)
		return -1;
	if (fq_init(&s->fq, limit, prefix, &o->aqm, seed) == -1) {
		lq_free(&s->q);
		return -1;
	}
	sched_set_opts(s, o, now);
	return 0;
}

void
sched_free(struct sched *s)
{
	sched_unhold(s);
	lq_free(&s->q);
	fq_free(&s->fq);
}

/*
 * A new queue limit: new, empty queues in place of the old ones, whose
 * frames are thrown away (returned, for the caller to count); options,
 * shaper, counters and samples stay.  Done in place because a struct fq
 * cannot be copied: its flow lists point back into it.  On failure (no
 * memory) the old queues stay.
 */
int
sched_resize(struct sched *s, size_t limit, size_t maxframe, uint32_t seed,
    size_t *lost)
{
	struct lq	 q;

	if (lq_init(&q, limit, s->prefix + maxframe) == -1)
		return -1;
	*lost = sched_frames(s);
	sched_unhold(s);
	lq_free(&s->q);
	s->q = q;
	fq_free(&s->fq);
	if (fq_init(&s->fq, limit, s->prefix, &s->opts.aqm, seed) == -1)
		return -1;	/* fq_init cannot fail today; q is already set */
	return 0;
}

size_t
sched_frames(const struct sched *s)
{
	return sched_fq(s) ? s->fq.count : s->q.count;
}

size_t
sched_bytes(const struct sched *s)
{
	return sched_fq(s) ? s->fq.bytes : s->q.bytes + s->q.count * s->prefix;
}

void
sched_set_opts(struct sched *s, const struct sched_opts *o, uint64_t now)
{
	int	 was_fq = sched_fq(s);

	s->opts = *o;
	if (sched_fq(s) != was_fq)
		sched_flush(s);
	aqm_init(&s->aqm, &o->aqm);
	fq_set_params(&s->fq, &o->aqm);
	shaper_init(&s->shaper, o->rate, now);
}

int
sched_enqueue(struct sched *s, uint64_t now, const uint8_t *prefix,
    const uint8_t *frame, size_t len)
{
	int	 r;

	sched_unhold(s);
	if (sched_fq(s))
		r = fq_enqueue(&s->fq, now, prefix, frame, len,
		    &s->c.fat_drops);
	else
		r = lq_push(&s->q, now, prefix, s->prefix, frame, len);
	if (r == -1) {
		s->c.tail_drops++;
		return -1;
	}
	return 0;
}

static void
sched_sample(struct sched *s, uint64_t now, uint64_t ts)
{
	struct sched_sample	*sm = &s->samples[s->nsamples++ % SCHED_SAMPLES];
	uint64_t		 d = now > ts ? now - ts : 0;

	sm->at = now;
	sm->sojourn = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

enum sched_result
sched_dequeue(struct sched *s, uint64_t now, struct lq_item *it,
    uint64_t *wait)
{
	enum aqm_verdict	 v;
	int			 marked;

	sched_unhold(s);
	if (sched_fq(s)) {
		if (s->fq.count == 0)
			return SCHED_EMPTY;
		if ((*wait = shaper_wait(&s->shaper, now)) != 0)
			return SCHED_WAIT;
		s->held = fq_dequeue(&s->fq, now, &s->c.aqm_drops, &marked);
		if (s->held == NULL)
			return SCHED_EMPTY;
		it->data = s->held->data;
		it->len = s->held->len;
		it->ts = s->held->ts;
		sched_sample(s, now, it->ts);
		if (marked)
			s->c.ce_marks++;
		shaper_charge(&s->shaper, it->len - s->prefix);
		return SCHED_SEND;
	}
	for (;;) {
		if (lq_peek(&s->q, it) == -1) {
			aqm_empty(&s->aqm);
			return SCHED_EMPTY;
		}
		if ((*wait = shaper_wait(&s->shaper, now)) != 0)
			return SCHED_WAIT;
		lq_pop(&s->q);
		sched_sample(s, now, it->ts);
		v = aqm_dequeue(&s->aqm, now, it->ts, s->q.bytes,
		    it->data + s->prefix, it->len - s->prefix);
		if (v == AQM_DROP) {
			s->c.aqm_drops++;
			continue;
		}
		if (v == AQM_MARK)
			s->c.ce_marks++;
		shaper_charge(&s->shaper, it->len - s->prefix);
		return SCHED_SEND;
	}
}

int
sched_may_bypass(const struct sched *s)
{
	return s->opts.rate == 0 && s->q.count == 0 && s->fq.count == 0;
}

void
sched_bypassed(struct sched *s, uint64_t now)
{
	sched_unhold(s);
	sched_sample(s, now, now);
	if (!sched_fq(s))
		aqm_empty(&s->aqm);
}

void
sched_flush(struct sched *s)
{
	sched_unhold(s);
	s->c.flushed += s->q.count + s->fq.count;
	lq_flush(&s->q);
	fq_flush(&s->fq);
	aqm_empty(&s->aqm);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t	 x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void
sched_quantiles(const struct sched *s, uint64_t now, struct sched_quantiles *qt)
{
	uint32_t	 v[SCHED_SAMPLES];
	size_t		 i, n = 0, have;

	have = s->nsamples < SCHED_SAMPLES ? s->nsamples : SCHED_SAMPLES;
	for (i = 0; i < have; i++)
		if (s->samples[i].at + SCHED_WINDOW >= now)
			v[n++] = s->samples[i].sojourn;
	memset(qt, 0, sizeof(*qt));
	qt->n = n;
	if (n == 0)
		return;
	qsort(v, n, sizeof(v[0]), cmp_u32);
	/* Nearest rank. */
	qt->p50 = v[(n * 50 + 99) / 100 - 1];
	qt->p99 = v[(n * 99 + 99) / 100 - 1];
	qt->max = v[n - 1];
}

struct sched_optent *
sched_optlist_find(struct sched_optlist *l, const char *name)
{
	struct sched_optent	*e;

	TAILQ_FOREACH(e, l, entry)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

struct sched_optent *
sched_optlist_set(struct sched_optlist *l, const char *name,
    const struct sched_opts *o)
{
	struct sched_optent	*e;

	if ((e = sched_optlist_find(l, name)) == NULL) {
		if ((e = calloc(1, sizeof(*e))) == NULL)
			return NULL;
		strncpy(e->name, name, sizeof(e->name) - 1);
		TAILQ_INSERT_TAIL(l, e, entry);
	}
	e->opts = *o;
	return e;
}

void
sched_optlist_del(struct sched_optlist *l, const char *name)
{
	struct sched_optent	*e;

	if ((e = sched_optlist_find(l, name)) != NULL) {
		TAILQ_REMOVE(l, e, entry);
		free(e);
	}
}

void
sched_optlist_clear(struct sched_optlist *l)
{
	struct sched_optent	*e;

	while ((e = TAILQ_FIRST(l)) != NULL) {
		TAILQ_REMOVE(l, e, entry);
		free(e);
	}
}
