/*
 * Certificate expiry warnings, once per certificate per threshold
 * (tlsexp.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tlsexp.h"

static const long long	tlsexp_thresholds[TLSEXP_LEVELS] = {
	TLSEXP_WARN_S, 7 * TLSEXP_DAY_S, TLSEXP_DAY_S, 1
};

int
tlsexp_level(long long left)
{
	int	 i;

	for (i = TLSEXP_LEVELS; i > 0; i--)
		if (left < tlsexp_thresholds[i - 1])
			return i;
	return 0;
}

void
tlsexp_prime(struct tlsexp *e, long long not_after, long long now)
{
	e->not_after = not_after;
	e->level = tlsexp_level(not_after - now);
	e->seen = now;
}

int
tlsexp_step(struct tlsexp *e, long long not_after, long long now)
{
	int	 level = tlsexp_level(not_after - now);

	if (e->not_after != not_after) {
		e->not_after = not_after;
		e->level = 0;
	}
	e->seen = now;
	if (level <= e->level)
		return 0;
	e->level = level;
	return level;
}

struct tlsexp *
tlsexp_find(struct tlsexp_book *b, const char *name, long long now)
{
	struct tlsexp	*e, *oldest = NULL;
	size_t		 i;

	for (i = 0; i < b->n; i++) {
		e = &b->e[i];
		if (strcmp(e->name, name) == 0)
			return e;
		if (oldest == NULL || e->seen < oldest->seen)
			oldest = e;
	}
	e = b->n < TLSEXP_BOOK_MAX ? &b->e[b->n++] : oldest;
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->seen = now;
	return e;
}

void
tlsexp_when(char *buf, size_t len, long long not_after, long long now)
{
	long long	 left = not_after - now, n;
	const char	*unit;
	struct tm	 tm;
	char		 date[32];

	gmtime_r(&(time_t){ (time_t)not_after }, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
	if (left < 1) {
		snprintf(buf, len, "expired on %s", date);
		return;
	}
	if (left >= TLSEXP_DAY_S) {
		n = left / TLSEXP_DAY_S;
		unit = "day";
	} else if (left >= 3600) {
		n = left / 3600;
		unit = "hour";
	} else {
		n = (left + 59) / 60;
		unit = "minute";
	}
	snprintf(buf, len, "expires in %lld %s%s, on %s", n, unit,
	    n == 1 ? "" : "s", date);
}
