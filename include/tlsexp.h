/*
 * Certificate expiry warnings for a daemon that keeps running: this
 * node's certificate and each peer's are looked at now and then, and a
 * warning is due once per certificate each time it crosses one of the
 * thresholds (30 days, 7 days, 1 day left, and expired), not at every
 * look.  Pure: the time is handed in (a Unix time, since a certificate's
 * notAfter is one), so a test can cross the thresholds with a fake clock.
 */
#ifndef VNET_TLSEXP_H
#define VNET_TLSEXP_H

#include <stddef.h>

#include "stmt.h"

#define TLSEXP_DAY_S	86400LL
/* The thresholds, in seconds left; the first is vnetd -n's and start's. */
#define TLSEXP_WARN_S	(30 * TLSEXP_DAY_S)
#define TLSEXP_LEVELS	4	/* 30 days, 7 days, 1 day, expired */

/*
 * How far a certificate with left seconds is: 0 (30 days or more), 1
 * (under 30 days), 2 (under 7), 3 (under 1), 4 (expired: none left).
 */
int	 tlsexp_level(long long left);

/* One certificate as last looked at: its notAfter and the level warned of. */
struct tlsexp {
	char		 name[STMT_NAME_MAX + 1];	/* the node */
	long long	 not_after;
	int		 level;
	long long	 seen;		/* when last looked at */
};

/*
 * The certificate of e, with not_after, at now: the level it reached if
 * that is past the one warned of (a warning is due; it counts as given),
 * else 0.  Another notAfter is another certificate, and starts again at 0.
 */
int	 tlsexp_step(struct tlsexp *e, long long not_after, long long now);

/*
 * The level warned of already (at the load that reported it): e holds
 * not_after at its level at now, so the next step warns only past it.
 */
void	 tlsexp_prime(struct tlsexp *e, long long not_after, long long now);

/* The peers' certificates: by node, the one looked at longest ago replaced. */
#define TLSEXP_BOOK_MAX	256
struct tlsexp_book {
	struct tlsexp	 e[TLSEXP_BOOK_MAX];
	size_t		 n;
};

/* name's entry in b, made (or the oldest one reused) if need be. */
struct tlsexp	*tlsexp_find(struct tlsexp_book *b, const char *name,
		    long long now);

/*
 * The warning for a certificate that reached level, at now: "expires in
 * 6 days, on 2026-05-01 12:00:00 UTC" or "expired on ...", into buf.
 */
void	 tlsexp_when(char *buf, size_t len, long long not_after,
	    long long now);

#endif
