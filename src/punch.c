/* Holes being punched: at most one per node and PUNCH_MAX in all (punch.h). */
#include <stdio.h>
#include <string.h>

#include "punch.h"

static int
going(const struct punch_slot *s, uint64_t now)
{
	return s->until != 0 && now < s->until;
}

int
punch_take(struct punch *p, const char *node, uint64_t now)
{
	int	 i, free_at = -1;

	for (i = 0; i < PUNCH_MAX; i++) {
		if (going(&p->slot[i], now)) {
			if (strcmp(p->slot[i].node, node) == 0)
				return -1;	/* one at a time */
		} else if (free_at == -1)
			free_at = i;
	}
	if (free_at == -1)
		return -1;
	snprintf(p->slot[free_at].node, sizeof(p->slot[free_at].node), "%s",
	    node);
	p->slot[free_at].until = now + PUNCH_MS;
	return free_at;
}

void
punch_end(struct punch *p, int slot)
{
	if (slot >= 0 && slot < PUNCH_MAX)
		memset(&p->slot[slot], 0, sizeof(p->slot[slot]));
}

unsigned int
punch_count(const struct punch *p, uint64_t now)
{
	unsigned int	 i, n = 0;

	for (i = 0; i < PUNCH_MAX; i++)
		n += going(&p->slot[i], now);
	return n;
}
