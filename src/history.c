/* The one-second history of links and interfaces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "history.h"
#include "iface.h"
#include "link.h"
#include "out.h"
#include "sched.h"

struct history_series {
	enum history_kind	 kind;
	char			 name[STMT_NAME_MAX + 1];
	uint64_t		 first, last;	/* ticks it has samples for */
	struct history_sample	 s[HISTORY_LEN];
};

struct history {
	uint64_t		 ticks;		/* ticks begun */
	uint64_t		 t_ms[HISTORY_LEN];
	struct history_series	*series[HISTORY_SERIES_MAX];
	size_t			 n;
	uint64_t		 refused;
};

struct history *
history_new(void)
{
	return calloc(1, sizeof(struct history));
}

void
history_free(struct history *h)
{
	size_t	 i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n; i++)
		free(h->series[i]);
	free(h);
}

static struct history_series *
history_find(const struct history *h, enum history_kind kind,
    const char *name)
{
	size_t	 i;

	for (i = 0; i < h->n; i++)
		if (h->series[i]->kind == kind &&
		    strcmp(h->series[i]->name, name) == 0)
			return h->series[i];
	return NULL;
}

void
history_begin(struct history *h, uint64_t now_ms)
{
	h->t_ms[h->ticks % HISTORY_LEN] = now_ms;
	h->ticks++;
}

void
history_put(struct history *h, enum history_kind kind, const char *name,
    const struct history_sample *smp)
{
	struct history_series	*s;
	uint64_t		 cur;

	if (h->ticks == 0)
		return;
	cur = h->ticks - 1;
	if ((s = history_find(h, kind, name)) == NULL) {
		if (h->n == HISTORY_SERIES_MAX ||
		    (s = calloc(1, sizeof(*s))) == NULL) {
			h->refused++;
			return;
		}
		s->kind = kind;
		snprintf(s->name, sizeof(s->name), "%s", name);
		s->first = cur;
		h->series[h->n++] = s;
	}
	s->last = cur;
	s->s[cur % HISTORY_LEN] = *smp;
}

void
history_end(struct history *h)
{
	size_t	 i = 0;

	while (i < h->n) {
		if (h->series[i]->last + 1 == h->ticks) {
			i++;
			continue;
		}
		free(h->series[i]);
		h->series[i] = h->series[--h->n];
	}
}

/* The oldest tick of s still in the ring. */
static uint64_t
history_oldest(const struct history *h, const struct history_series *s)
{
	uint64_t	 lo = h->ticks > HISTORY_LEN ? h->ticks - HISTORY_LEN : 0;

	return s->first > lo ? s->first : lo;
}

static double
history_delta(uint64_t a, uint64_t b, double secs)
{
	/* A link that came up again counts from zero. */
	return b >= a ? (double)(b - a) / secs : 0;
}

int
history_rates(const struct history *h, enum history_kind kind,
    const char *name, struct history_rates *r)
{
	static const uint64_t		 win[2] = { 1, 10 };
	const struct history_series	*s;
	const struct history_sample	*a, *b;
	uint64_t			 prev, oldest;
	double				 secs;
	int				 i;

	memset(r, 0, sizeof(*r));
	if ((s = history_find(h, kind, name)) == NULL)
		return -1;
	oldest = history_oldest(h, s);
	for (i = 0; i < 2; i++) {
		prev = s->last >= oldest + win[i] ? s->last - win[i] : oldest;
		if (prev == s->last)
			continue;
		secs = (double)(h->t_ms[s->last % HISTORY_LEN] -
		    h->t_ms[prev % HISTORY_LEN]) / 1000;
		if (secs <= 0)
			continue;
		a = &s->s[prev % HISTORY_LEN];
		b = &s->s[s->last % HISTORY_LEN];
		r->bps_in[i] = 8 * history_delta(a->bytes_in, b->bytes_in, secs);
		r->bps_out[i] = 8 * history_delta(a->bytes_out, b->bytes_out,
		    secs);
		r->fps_in[i] = history_delta(a->frames_in, b->frames_in, secs);
		r->fps_out[i] = history_delta(a->frames_out, b->frames_out,
		    secs);
	}
	return 0;
}

const char *
history_fields(const struct history *h, enum history_kind kind,
    const char *name, char *buf, size_t len)
{
	struct history_rates	 r;

	history_rates(h, kind, name, &r);
	snprintf(buf, len, "\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f",
	    r.bps_in[0], r.bps_out[0], r.fps_in[0], r.fps_out[0],
	    r.bps_in[1], r.bps_out[1], r.fps_in[1], r.fps_out[1]);
	return buf;
}

enum history_field {
	HF_T, HF_BPS_IN, HF_BPS_OUT, HF_FPS_IN, HF_FPS_OUT, HF_CE, HF_DROPS,
	HF_P99,
};

static const char *const history_field_names[] = {
	"t_ms", "bps_in", "bps_out", "fps_in", "fps_out", "ce_marks",
	"drops", "sojourn_p99_us",
};

int
history_json(const struct history *h, enum history_kind kind,
    const char *name, void (*sink)(const char *, size_t, void *), void *arg)
{
	const struct history_series	*s;
	const struct history_sample	*a, *b;
	uint64_t			 t, oldest;
	size_t				 f;
	char				 num[48];
	double				 secs, v;
	int				 n;

	if ((s = history_find(h, kind, name)) == NULL)
		return -1;
	oldest = history_oldest(h, s);
	sink("{\"name\":", 8, arg);
	out_json_string(s->name, strlen(s->name), sink, arg);
	n = snprintf(num, sizeof(num), ",\"interval_ms\":1000,\"len\":%d",
	    HISTORY_LEN);
	sink(num, (size_t)n, arg);
	for (f = 0; f < sizeof(history_field_names) /
	    sizeof(history_field_names[0]); f++) {
		n = snprintf(num, sizeof(num), ",\"%s\":[",
		    history_field_names[f]);
		sink(num, (size_t)n, arg);
		for (t = oldest + 1; t <= s->last; t++) {
			a = &s->s[(t - 1) % HISTORY_LEN];
			b = &s->s[t % HISTORY_LEN];
			secs = (double)(h->t_ms[t % HISTORY_LEN] -
			    h->t_ms[(t - 1) % HISTORY_LEN]) / 1000;
			if (secs <= 0)
				secs = 1;
			switch ((enum history_field)f) {
			case HF_T:
				v = (double)h->t_ms[t % HISTORY_LEN];
				break;
			case HF_BPS_IN:
				v = 8 * history_delta(a->bytes_in, b->bytes_in,
				    secs);
				break;
			case HF_BPS_OUT:
				v = 8 * history_delta(a->bytes_out,
				    b->bytes_out, secs);
				break;
			case HF_FPS_IN:
				v = history_delta(a->frames_in, b->frames_in,
				    secs);
				break;
			case HF_FPS_OUT:
				v = history_delta(a->frames_out,
				    b->frames_out, secs);
				break;
			case HF_CE:
				v = history_delta(a->ce_marks, b->ce_marks, 1);
				break;
			case HF_DROPS:
				v = history_delta(a->drops, b->drops, 1);
				break;
			case HF_P99:
			default:
				v = b->p99_us == UINT32_MAX ? -1 :
				    (double)b->p99_us;
				break;
			}
			if (v < 0)
				n = snprintf(num, sizeof(num), "%snull",
				    t == oldest + 1 ? "" : ",");
			else
				n = snprintf(num, sizeof(num), "%s%.0f",
				    t == oldest + 1 ? "" : ",", v);
			sink(num, (size_t)n, arg);
		}
		sink("]", 1, arg);
	}
	sink("}\n", 2, arg);
	return 0;
}

uint64_t
history_refused(const struct history *h)
{
	return h->refused;
}

void
history_collect(struct history *h, struct vnetd *d)
{
	struct link		*l;
	struct iface		*ifc;
	struct history_sample	 smp;
	struct sched_quantiles	 qt;
	uint64_t		 now = vnetd_now_us();

	history_begin(h, now / 1000);
	LINKS_FOREACH(l, &d->links) {
		const struct link_counters *lc = link_counters(l);
		const struct sched *sc = link_sched(l);

		memset(&smp, 0, sizeof(smp));
		smp.bytes_in = lc->bytes_in;
		smp.bytes_out = lc->bytes_out;
		smp.frames_in = lc->frames_in;
		smp.frames_out = lc->frames_out;
		smp.ce_marks = sc->c.ce_marks;
		smp.drops = lc->drops + sc->c.tail_drops + sc->c.fat_drops +
		    sc->c.aqm_drops;
		sched_quantiles(sc, now, &qt);
		smp.p99_us = qt.n > 0 ? qt.p99 : UINT32_MAX;
		history_put(h, HISTORY_LINK, link_name(l), &smp);
	}
	IFACES_FOREACH(ifc, &d->ifaces) {
		const struct iface_counters *ic = iface_counters(ifc);

		memset(&smp, 0, sizeof(smp));
		smp.bytes_in = ic->bytes_in;
		smp.bytes_out = ic->bytes_out;
		smp.frames_in = ic->frames_in;
		smp.frames_out = ic->frames_out;
		smp.drops = iface_drops(ifc);
		smp.p99_us = UINT32_MAX;
		history_put(h, HISTORY_IFACE, iface_name(ifc), &smp);
	}
	history_end(h);
}
