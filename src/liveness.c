/*
 * Link liveness: the state machine of liveness.h.  Pure: no clock but the
 * one passed in, no I/O.
 */
#include <stdio.h>
#include <string.h>

#include "liveness.h"

const char *
liveness_state_name(enum liveness_state s)
{
	switch (s) {
	case LIVENESS_DOWN:
		return "down";
	case LIVENESS_INIT:
		return "init";
	case LIVENESS_HOLD:
		return "hold";
	case LIVENESS_UP:
		return "up";
	}
	return "?";
}

/* The one way a state changes. */
static void
liveness_change(struct liveness *lv, enum liveness_state to, uint64_t now,
    const char *why)
{
	enum liveness_state	 from = lv->state;

	if (from == to)
		return;
	if (to == LIVENESS_DOWN && (from == LIVENESS_UP ||
	    from == LIVENESS_HOLD)) {
		/* A death soon after coming back, or in the hold: a flap. */
		if (from == LIVENESS_HOLD || (lv->up_at != 0 &&
		    now - lv->up_at < LIVENESS_FLAP_MS))
			lv->hold = lv->hold * 2 > LIVENESS_HOLD_MAX ?
			    LIVENESS_HOLD_MAX : lv->hold * 2;
		else
			lv->hold = LIVENESS_HOLD_MIN;
		lv->lost_at = now;
		lv->losses++;
		lv->poll = 0;
		lv->poll_sent = 0;
		snprintf(lv->lost_why, sizeof(lv->lost_why), "%s", why);
	}
	if (to == LIVENESS_UP)
		lv->up_at = now;
	lv->state = to;
	lv->since = now;
	lv->next_probe = now;	/* the peer hears of a change at once */
	if (lv->cb != NULL)
		lv->cb(lv->arg, lv, from, why);
}

void
liveness_init(struct liveness *lv, uint32_t interval, uint32_t mult,
    int probing, uint64_t now, liveness_change_cb cb, void *arg)
{
	memset(lv, 0, sizeof(*lv));
	lv->state = LIVENESS_UP;
	lv->interval = interval;
	lv->mult = mult;
	lv->probing = probing;
	lv->since = now;
	lv->heard = now;
	lv->next_probe = now;
	lv->hold = LIVENESS_HOLD_MIN;
	lv->cb = cb;
	lv->arg = arg;
}

static uint32_t
liveness_period(const struct liveness *lv)
{
	return lv->interval > lv->peer_interval ? lv->interval :
	    lv->peer_interval;
}

/*
 * The period was old (with the old multiplier) and may be shorter now:
 * probe at the new pace at once, time out on the old for a while.
 */
static void
liveness_quicken(struct liveness *lv, uint32_t old, uint32_t old_mult,
    uint64_t now)
{
	uint32_t	 period = liveness_period(lv);
	uint64_t	 before = (uint64_t)old_mult * old;

	if (old == 0 || lv->peer_interval == 0 ||
	    before <= (uint64_t)lv->mult * period)
		return;
	lv->slow_until = now + before;
	lv->slow_detect = before;
	if (lv->next_probe > now + period)
		lv->next_probe = now + period;
}

void
liveness_set(struct liveness *lv, uint32_t interval, uint32_t mult,
    uint64_t now)
{
	uint32_t	 old = liveness_period(lv), old_mult = lv->mult;

	lv->interval = interval;
	lv->mult = mult;
	lv->next_probe = now;
	liveness_quicken(lv, old, old_mult, now);
}

uint64_t
liveness_detect(const struct liveness *lv)
{
	/* Silence means something only from a peer that probes. */
	if (lv->peer_interval == 0)
		return 0;
	return (uint64_t)lv->mult * liveness_period(lv);
}

/* How long frames may go unanswered from a talking peer. */
static uint64_t
liveness_data_ms(const struct liveness *lv)
{
	uint32_t	 n = lv->mult > 2 ? lv->mult - 1 : 2;
	uint64_t	 period = liveness_period(lv);

	if (lv->peer_interval == 0)
		return LIVENESS_DATA_MS;
	return (uint64_t)n * period + (lv->data_slack ? period / 2 : 0);
}

void
liveness_heard(struct liveness *lv, uint64_t now)
{
	if (now != lv->heard) {
		lv->heard_prev = lv->heard;
		lv->heard = now;
	}
	lv->sent_unheard = 0;
	/* An answer to our poll: the new pace holds both ways from now. */
	if (lv->poll_sent != 0) {
		lv->poll_sent = 0;
		lv->slow_until = 0;
	}
	/* From a peer without probes, hearing it is all there is. */
	if (lv->state == LIVENESS_DOWN && lv->peer_interval == 0)
		liveness_change(lv, LIVENESS_HOLD, now, "heard again");
}

void
liveness_probe(struct liveness *lv, uint64_t now, enum liveness_state peer,
    uint32_t peer_interval)
{
	uint32_t	 old = lv->peer_interval != 0 ? liveness_period(lv) : 0;

	lv->probes_heard++;
	if (peer_interval < LIVENESS_INTERVAL_MIN)
		peer_interval = LIVENESS_INTERVAL_MIN;
	if (peer_interval > LIVENESS_INTERVAL_MAX)
		peer_interval = LIVENESS_INTERVAL_MAX;
	lv->peer_interval = peer_interval;
	liveness_quicken(lv, old, lv->mult, now);
	liveness_heard(lv, now);
	/*
	 * As BFD (RFC 5880 6.8.6): DOWN moves only on a peer that is DOWN
	 * too (it hears us? not yet: INIT) or INIT (it hears us: HOLD); a
	 * peer still UP or in its HOLD is about to hear our DOWN and go down.
	 * So two ends whose probes cross, or a backlog of stale ones after a
	 * stall, cannot keep each other changing.
	 */
	switch (lv->state) {
	case LIVENESS_DOWN:
		if (peer == LIVENESS_DOWN)
			liveness_change(lv, LIVENESS_INIT, now,
			    "the peer is heard, it does not hear us yet");
		else if (peer == LIVENESS_INIT)
			liveness_change(lv, LIVENESS_HOLD, now,
			    "heard both ways again");
		break;
	case LIVENESS_INIT:
		if (peer != LIVENESS_DOWN)
			liveness_change(lv, LIVENESS_HOLD, now,
			    "heard both ways again");
		break;
	case LIVENESS_HOLD:
	case LIVENESS_UP:
		if (peer == LIVENESS_DOWN)
			liveness_change(lv, LIVENESS_DOWN, now,
			    "the peer hears nothing from us");
		break;
	}
}

void
liveness_poll(struct liveness *lv, uint64_t now)
{
	if (!lv->probing || lv->interval == 0 || lv->peer_interval == 0)
		return;
	lv->poll = 1;
	lv->poll_sent = 0;
	lv->next_probe = now;
}

int
liveness_polling(const struct liveness *lv)
{
	return lv->poll;
}

void
liveness_sent(struct liveness *lv, uint64_t now)
{
	if (lv->sent_unheard == 0)
		lv->sent_unheard = now;
}

/* The detection time in effect at now: an old, slower one while it holds. */
static uint64_t
liveness_detect_at(const struct liveness *lv, uint64_t now)
{
	uint64_t	 detect = liveness_detect(lv);

	if (now < lv->slow_until && detect != 0 && detect < lv->slow_detect)
		detect = lv->slow_detect;
	return detect;
}

int
liveness_missing(const struct liveness *lv, uint64_t now)
{
	uint64_t	 detect = liveness_detect_at(lv, now);

	return detect != 0 && now - lv->heard > detect / 2;
}

int
liveness_tick(struct liveness *lv, uint64_t now)
{
	char		 why[LIVENESS_WHY_MAX];
	uint64_t	 detect = liveness_detect_at(lv, now), data;

	if (lv->state != LIVENESS_DOWN && detect != 0 &&
	    now - lv->heard >= detect) {
		snprintf(why, sizeof(why), "no probe heard for %llu ms",
		    (unsigned long long)(now - lv->heard));
		liveness_change(lv, LIVENESS_DOWN, now, why);
	}
	/* A poll unanswered for the new detection time. */
	if ((lv->state == LIVENESS_UP || lv->state == LIVENESS_HOLD) &&
	    lv->poll_sent != 0 && liveness_detect(lv) != 0 &&
	    now - lv->poll_sent >= liveness_detect(lv)) {
		snprintf(why, sizeof(why), "no answer to a poll for %llu ms",
		    (unsigned long long)(now - lv->poll_sent));
		lv->poll_sent = 0;
		liveness_change(lv, LIVENESS_DOWN, now, why);
	}
	data = liveness_data_ms(lv);
	if (now < lv->slow_until && data < lv->slow_detect)
		data = lv->slow_detect;
	if ((lv->state == LIVENESS_UP || lv->state == LIVENESS_HOLD) &&
	    lv->sent_unheard != 0 && now - lv->sent_unheard >= data &&
	    lv->heard_prev != 0 &&
	    lv->heard - lv->heard_prev < LIVENESS_TALK_MS) {
		snprintf(why, sizeof(why), "frames sent, nothing heard for "
		    "%llu ms", (unsigned long long)(now - lv->heard));
		liveness_change(lv, LIVENESS_DOWN, now, why);
	}
	if (lv->state == LIVENESS_HOLD && now - lv->since >= lv->hold)
		liveness_change(lv, LIVENESS_UP, now, "alive for the hold time");
	return lv->probing && lv->interval != 0 && now >= lv->next_probe;
}

void
liveness_probe_sent(struct liveness *lv, uint64_t now)
{
	lv->probes_sent++;
	if (lv->poll) {
		lv->poll = 0;
		lv->poll_sent = now;
	}
	/* As slow as the slower end wants: it would not look sooner. */
	lv->next_probe = now + liveness_period(lv);
}

int
liveness_alive(const struct liveness *lv)
{
	return lv->state == LIVENESS_UP;
}
