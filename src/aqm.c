/*
 * CoDel, after the pseudocode of RFC 8289 and Linux's codel_impl.h.  The
 * dequeue loop of the RFC (drop, take the next packet, decide again) is
 * split here into one decision per frame: the caller asks again for the
 * next frame after a drop, which gives the same sequence of decisions.
 */
#include <string.h>

#include "aqm.h"
#include "pkt.h"

void
aqm_params_default(struct aqm_params *p)
{
	p->kind = AQM_FQ_CODEL;
	p->target = AQM_TARGET_DEFAULT;
	p->interval = AQM_INTERVAL_DEFAULT;
}

void
aqm_init(struct aqm *a, const struct aqm_params *p)
{
	memset(a, 0, sizeof(*a));
	a->p = *p;
}

static uint64_t
isqrt64(uint64_t x)
{
	uint64_t	 r = 0, bit = (uint64_t)1 << 62;

	while (bit > x)
		bit >>= 2;
	while (bit != 0) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else
			r >>= 1;
		bit >>= 2;
	}
	return r;
}

uint64_t
aqm_control_law(uint64_t t, uint32_t interval, uint32_t count)
{
	/* sqrt(count << 32) is sqrt(count) * 65536, to five more digits. */
	uint64_t root = isqrt64((uint64_t)(count ? count : 1) << 32);

	return t + ((uint64_t)interval << 16) / root;
}

/* RFC 8289 ok_to_drop: above target for at least an interval. */
static int
aqm_above(struct aqm *a, uint64_t now, uint64_t sojourn, size_t backlog)
{
	if (sojourn < a->p.target || backlog <= AQM_MTU) {
		a->above = 0;
		return 0;
	}
	if (!a->above) {
		a->above = 1;
		a->first_above = now + a->p.interval;
		return 0;
	}
	return now >= a->first_above;
}

/* Whether CoDel signals on this frame; moves its state machine. */
static int
aqm_codel(struct aqm *a, uint64_t now, uint64_t sojourn, size_t backlog)
{
	int		 above = aqm_above(a, now, sojourn, backlog);
	uint32_t	 delta;

	if (a->dropping) {
		if (!above) {
			a->dropping = 0;
			return 0;
		}
		if (now < a->signal_next)
			return 0;
		a->count++;
		a->signal_next = aqm_control_law(a->signal_next,
		    a->p.interval, a->count);
		return 1;
	}
	if (!above)
		return 0;
	a->dropping = 1;
	/*
	 * Back in the signalling state soon after leaving it: start from
	 * the rate it had reached rather than from scratch.
	 */
	delta = a->count - a->lastcount;
	if (delta > 1 && now < a->signal_next + 16 * (uint64_t)a->p.interval)
		a->count = delta;
	else
		a->count = 1;
	a->lastcount = a->count;
	a->signal_next = aqm_control_law(now, a->p.interval, a->count);
	return 1;
}

enum aqm_verdict
aqm_dequeue(struct aqm *a, uint64_t now, uint64_t enqueued, size_t backlog,
    uint8_t *frame, size_t len)
{
	struct pkt	 p;
	uint64_t	 sojourn = now > enqueued ? now - enqueued : 0;

	if (a->p.kind == AQM_OFF)
		return AQM_PASS;
	if (!aqm_codel(a, now, sojourn, backlog))
		return AQM_PASS;
	if (pkt_parse(&p, frame, len) == PKT_OK && pkt_mark_ce(frame, &p)) {
		a->marks++;
		return AQM_MARK;
	}
	a->drops++;
	return AQM_DROP;
}

void
aqm_empty(struct aqm *a)
{
	a->above = 0;
	a->dropping = 0;
}
