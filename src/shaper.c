#include "shaper.h"

#define US	1000000ULL

uint64_t
shaper_burst_bytes(uint64_t rate)
{
	uint64_t	 b = rate / 8 * SHAPER_BURST_US / US;

	if (b < SHAPER_BURST_FRAMES * SHAPER_FRAME)
		b = SHAPER_BURST_FRAMES * SHAPER_FRAME;
	return b;
}

void
shaper_init(struct shaper *s, uint64_t rate, uint64_t now)
{
	s->rate = rate;
	s->burst = (int64_t)shaper_burst_bytes(rate) * 8 * US;
	s->tokens = s->burst;
	s->last = now;
}

static void
shaper_refill(struct shaper *s, uint64_t now)
{
	uint64_t	 dt;

	if (now <= s->last)
		return;
	dt = now - s->last;
	s->last = now;
	/* Compared first: dt * rate overflows after long idle at high rates. */
	if (dt >= (uint64_t)(s->burst - s->tokens) / s->rate + 1)
		s->tokens = s->burst;
	else
		s->tokens += (int64_t)(dt * s->rate);
}

uint64_t
shaper_wait(struct shaper *s, uint64_t now)
{
	int64_t		 need;

	if (s->rate == 0)
		return 0;
	shaper_refill(s, now);
	if (s->tokens >= 0)
		return 0;
	need = -s->tokens;
	return ((uint64_t)need + s->rate - 1) / s->rate;
}

void
shaper_charge(struct shaper *s, size_t len)
{
	if (s->rate == 0)
		return;
	s->tokens -= (int64_t)len * 8 * US;
}
