#include <string.h>

#include "pmtu.h"

void
pmtu_init(struct pmtu *p, uint64_t now)
{
	memset(p, 0, sizeof(*p));
	p->lo = PMTU_FLOOR;
	p->max = PMTU_CEIL;
	p->hi = PMTU_CEIL + 1;
	p->timeout_ms = PMTU_TIMEOUT_MS;
	p->reprobe_ms = PMTU_REPROBE_MS;
	p->next_at = now;
}

int
pmtu_searching(const struct pmtu *p)
{
	return p->hi - p->lo > PMTU_STEP;
}

uint32_t
pmtu_get(const struct pmtu *p)
{
	return p->lo;
}

uint64_t
pmtu_wake(const struct pmtu *p)
{
	if (p->probing != 0)
		return p->sent_at + p->timeout_ms;
	return p->next_at;
}

/* The search is over: again after reprobe_ms, upward from what passes. */
static void
pmtu_done(struct pmtu *p, uint64_t now)
{
	p->searches++;
	p->next_at = now + p->reprobe_ms;
}

uint32_t
pmtu_probe(struct pmtu *p, uint64_t now)
{
	if (p->probing != 0) {
		if (now < p->sent_at + p->timeout_ms)
			return 0;
		if (++p->tries >= PMTU_TRIES) {
			p->hi = p->probing;
			p->probing = 0;
			p->tries = 0;
			if (!pmtu_searching(p)) {
				pmtu_done(p, now);
				return 0;
			}
		}
	} else if (now < p->next_at)
		return 0;
	if (p->probing == 0) {
		if (!pmtu_searching(p)) {
			p->hi = p->max + 1;	/* the periodic search */
			p->top_tried = 0;
		}
		/* The route's own MTU first: most paths carry it. */
		p->probing = p->top_tried ? p->lo + (p->hi - p->lo) / 2 :
		    p->hi - 1;
		p->top_tried = 1;
		p->tries = 0;
	}
	p->sent_at = now;
	return p->probing;
}

void
pmtu_ack(struct pmtu *p, uint32_t size, uint64_t now)
{
	if (size > p->lo && size < p->hi)
		p->lo = size;
	if (size != p->probing)
		return;
	p->probing = 0;
	p->tries = 0;
	if (pmtu_searching(p))
		p->next_at = now;
	else
		pmtu_done(p, now);
}

void
pmtu_emsgsize(struct pmtu *p, uint32_t size, uint64_t now)
{
	if (size < p->hi)
		p->hi = size;
	if (p->lo >= p->hi)
		p->lo = PMTU_FLOOR < p->hi ? PMTU_FLOOR : p->hi - 1;
	if (size == p->probing) {
		p->probing = 0;
		p->tries = 0;
	}
	if (pmtu_searching(p))
		p->next_at = now;
	else
		pmtu_done(p, now);
}

void
pmtu_set_max(struct pmtu *p, uint32_t max)
{
	if (max < PMTU_FLOOR)
		max = PMTU_FLOOR;
	p->max = max;
	if (p->hi > max + 1)
		p->hi = max + 1;
	p->top_tried = 0;
	if (p->lo > max)
		p->lo = max;
}
