/* The rules of MAC ownership (macown.h): pure, the clock given. */
#include <stddef.h>
#include <stdint.h>

#include "macown.h"

int
macown_version_ok(uint32_t held, uint32_t claimed)
{
	return held == 0 || (uint64_t)claimed <= (uint64_t)held + MACOWN_STEP;
}

uint32_t
macown_next(uint32_t v)
{
	return v == UINT32_MAX ? UINT32_MAX : v + 1;
}

enum macown_answer
macown_answer(uint32_t held, uint32_t claimed, uint64_t seen_ms, int port_up,
    const struct macown_mob *mob, uint64_t now)
{
	if (!macown_version_ok(held, claimed))
		return MACOWN_KEEP_JUMP;
	if (mob != NULL && macown_frozen(mob, now))
		return MACOWN_KEEP_FROZEN;
	if (!port_up || now - seen_ms >= MACOWN_SILENT_MS)
		return MACOWN_YIELD;
	return MACOWN_KEEP_LIVE;
}

int
macown_frozen(const struct macown_mob *m, uint64_t now)
{
	return m->frozen_until > now;
}

int
macown_move(struct macown_mob *m, uint64_t now)
{
	if (macown_frozen(m, now))
		return 0;
	if (m->moves == 0 || now - m->since_ms >= MACOWN_WINDOW_MS) {
		m->since_ms = now;
		m->moves = 0;
	}
	if (++m->moves < MACOWN_MOVES)
		return 0;
	m->moves = 0;
	m->frozen_until = now + MACOWN_HOLD_MS;
	return 1;
}

int
macown_idle(const struct macown_mob *m, uint64_t now)
{
	return !macown_frozen(m, now) &&
	    (m->moves == 0 || now - m->since_ms >= MACOWN_WINDOW_MS);
}

const char *
macown_answer_name(enum macown_answer a)
{
	switch (a) {
	case MACOWN_YIELD:
		return "yield";
	case MACOWN_KEEP_LIVE:
		return "it still sends here";
	case MACOWN_KEEP_FROZEN:
		return "it is frozen";
	case MACOWN_KEEP_JUMP:
		return "version out of bounds";
	}
	return "?";
}
