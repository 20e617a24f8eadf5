#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapt.h"

struct adapt {
	char			 self[ADAPT_NAME_MAX + 1];
	struct adapt_conf	 conf;
	int			 off;
	struct adapt_peer	*peers;		/* by name */
	size_t			 n, cap;
	struct adapt_stats	 st;
	void			(*log)(const char *, void *);
	void			*arg;
};

static const char *const state_names[] = {
	[ADAPT_RELAY] = "relay",
	[ADAPT_ABOVE] = "above",
	[ADAPT_DIALING] = "dialing",
	[ADAPT_UP] = "up",
	[ADAPT_BELOW] = "below",
	[ADAPT_DRAINING] = "draining",
	[ADAPT_BACKOFF] = "backoff",
	[ADAPT_MANUAL] = "manual",
	[ADAPT_PEER] = "peer",
};

const char *
adapt_state_name(enum adapt_state s)
{
	if ((size_t)s >= sizeof(state_names) / sizeof(state_names[0]))
		return "?";
	return state_names[s];
}

char *
adapt_rate_format(uint64_t bps, char *buf, size_t len)
{
	double	 bits = (double)bps * 8;

	if (bits >= 1e9)
		snprintf(buf, len, "%.1fgbit", bits / 1e9);
	else if (bits >= 1e6)
		snprintf(buf, len, "%.1fmbit", bits / 1e6);
	else if (bits >= 1e3)
		snprintf(buf, len, "%.1fkbit", bits / 1e3);
	else
		snprintf(buf, len, "%.0fbit", bits);
	return buf;
}

struct adapt *
adapt_new(const char *self, void (*log)(const char *, void *), void *arg)
{
	struct adapt	*a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	snprintf(a->self, sizeof(a->self), "%s", self);
	a->conf.threshold = ADAPT_THRESHOLD_DEFAULT;
	a->conf.hold = ADAPT_HOLD_DEFAULT;
	a->conf.idle = ADAPT_IDLE_DEFAULT;
	a->conf.max = ADAPT_MAX_DEFAULT;
	a->log = log;
	a->arg = arg;
	return a;
}

void
adapt_free(struct adapt *a)
{
	if (a == NULL)
		return;
	free(a->peers);
	free(a);
}

void
adapt_set_conf(struct adapt *a, const struct adapt_conf *c)
{
	a->conf = *c;
}

const struct adapt_conf *
adapt_conf(const struct adapt *a)
{
	return &a->conf;
}

void
adapt_pause(struct adapt *a, int off)
{
	a->off = off;
}

static int
lookup(const struct adapt *a, const char *name, size_t *at)
{
	size_t	 lo = 0, hi = a->n, mid;
	int	 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(a->peers[mid].name, name)) == 0) {
			*at = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return 0;
}

const struct adapt_peer *
adapt_find(const struct adapt *a, const char *peer)
{
	size_t	 i;

	return lookup(a, peer, &i) ? &a->peers[i] : NULL;
}

static struct adapt_peer *
get(struct adapt *a, const char *name)
{
	struct adapt_peer *p;
	size_t		 i, cap;

	if (lookup(a, name, &i))
		return &a->peers[i];
	if (a->n == ADAPT_PEERS_MAX) {
		a->st.full++;
		return NULL;
	}
	if (a->n == a->cap) {
		cap = a->cap ? a->cap * 2 : 16;
		if ((p = reallocarray(a->peers, cap, sizeof(*p))) == NULL)
			return NULL;
		a->peers = p;
		a->cap = cap;
	}
	memmove(&a->peers[i + 1], &a->peers[i], (a->n - i) * sizeof(*p));
	a->n++;
	p = &a->peers[i];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->backoff_ms = ADAPT_BACKOFF_MIN;
	p->reason = "no traffic yet";
	return p;
}

size_t
adapt_count(const struct adapt *a)
{
	return a->n;
}

const struct adapt_peer *
adapt_at(const struct adapt *a, size_t i)
{
	return i < a->n ? &a->peers[i] : NULL;
}

int
adapt_draining(const struct adapt *a, const char *peer)
{
	const struct adapt_peer *p = adapt_find(a, peer);

	return p != NULL && p->state == ADAPT_DRAINING;
}

static int
ours(enum adapt_state s)
{
	return s == ADAPT_DIALING || s == ADAPT_UP || s == ADAPT_BELOW ||
	    s == ADAPT_DRAINING;
}

unsigned int
adapt_active(const struct adapt *a)
{
	unsigned int	 k = 0;
	size_t		 i;

	for (i = 0; i < a->n; i++)
		k += ours(a->peers[i].state) ||
		    a->peers[i].state == ADAPT_PEER;
	return k;
}

void
adapt_stats(const struct adapt *a, struct adapt_stats *st)
{
	*st = a->st;
}

/* The states that follow links this node did not make. */
static int
passive(enum adapt_state s)
{
	return s == ADAPT_MANUAL || s == ADAPT_PEER;
}

/* Every change of state: here, with its one line of log. */
static void
change(struct adapt *a, struct adapt_peer *p, enum adapt_state to,
    uint64_t now, const char *reason, const char *what, ...)
{
	char		 line[ADAPT_LOG_MAX], rate[32], thr[32];
	va_list		 ap;
	int		 n, quiet;

	n = snprintf(line, sizeof(line), "adapt: pair %s-%s at %s (threshold "
	    "%s): %s -> %s, %s", a->self, p->name,
	    adapt_rate_format(p->rate, rate, sizeof(rate)),
	    adapt_rate_format(a->conf.threshold, thr, sizeof(thr)),
	    adapt_state_name(p->state), adapt_state_name(to), reason);
	if (what != NULL && n > 0 && (size_t)n < sizeof(line)) {
		va_start(ap, what);
		snprintf(line + n, sizeof(line) - (size_t)n, ": ");
		n += 2;
		if ((size_t)n < sizeof(line))
			vsnprintf(line + n, sizeof(line) - (size_t)n, what, ap);
		va_end(ap);
	}
	/*
	 * Without shortcuts, following the links a pair has (a hand-written
	 * one, a peer's shortcut) decides nothing: kept, not logged.
	 */
	quiet = !a->conf.shortcuts && p->state != to &&
	    (passive(p->state) || passive(to));
	p->state = to;
	p->since_ms = now;
	p->reason = reason;
	if (a->log != NULL && !quiet)
		a->log(line, a->arg);
}

void
adapt_dialled(struct adapt *a, const char *peer, const char *cand)
{
	size_t	 i;

	if (lookup(a, peer, &i))
		snprintf(a->peers[i].cand, sizeof(a->peers[i].cand), "%s",
		    cand);
}

void
adapt_note(struct adapt *a, const char *peer, const char *why)
{
	size_t	 i;

	if (lookup(a, peer, &i))
		snprintf(a->peers[i].note, sizeof(a->peers[i].note), "%s",
		    why);
}

/*
 * A dial that failed moves on to the peer's next candidate; a shortcut
 * that died keeps the one it was up on (it worked: a NAT that lost its
 * binding takes a new punch there, the others never answered).
 */
static enum adapt_action
fail(struct adapt *a, struct adapt_peer *p, uint64_t now, const char *reason,
    int next)
{
	int	 other;

	if (p->up_ms != 0 && now - p->up_ms >= ADAPT_BACKOFF_RESET)
		p->backoff_ms = ADAPT_BACKOFF_MIN;
	p->retry_ms = now + p->backoff_ms;
	p->failures++;
	snprintf(p->failure, sizeof(p->failure), "%s", p->note[0] != '\0' ?
	    p->note : reason);
	p->note[0] = '\0';
	other = strcmp(p->failure, reason) != 0;
	change(a, p, ADAPT_BACKOFF, now, reason, "%s%sclosing it, next try in "
	    "%llu s", other ? p->failure : "", other ? "; " : "",
	    (unsigned long long)(p->backoff_ms / 1000));
	p->backoff_ms *= 2;
	if (p->backoff_ms > ADAPT_BACKOFF_MAX)
		p->backoff_ms = ADAPT_BACKOFF_MAX;
	p->addr += next != 0;
	p->up_ms = 0;
	return ADAPT_CLOSE;
}

static enum adapt_action
drain(struct adapt *a, struct adapt_peer *p, uint64_t now, const char *reason)
{
	a->st.drains++;
	change(a, p, ADAPT_DRAINING, now, reason, "routes back through the "
	    "relay, closing in %u ms", ADAPT_DRAIN_MS);
	return ADAPT_DRAIN;
}

enum adapt_action
adapt_observe(struct adapt *a, const char *name, uint64_t rate,
    enum adapt_link link, uint64_t now)
{
	struct adapt_peer *p;
	const struct adapt_conf *c = &a->conf;
	int		 on = c->shortcuts && !a->off;

	if ((p = get(a, name)) == NULL)
		return ADAPT_NONE;
	p->seen = 1;
	p->rate = rate;
	/* A link of ours that outlived its entry's use (never expected). */
	if ((link == ADAPT_LINK_OURS_UP || link == ADAPT_LINK_OURS_DOWN) &&
	    !ours(p->state))
		return ADAPT_CLOSE;
	/* Links the pair has that are not ours come first. */
	if (link == ADAPT_LINK_MANUAL || link == ADAPT_LINK_PEERS) {
		if (ours(p->state) && p->state != ADAPT_DRAINING)
			return drain(a, p, now, link == ADAPT_LINK_MANUAL ?
			    "a hand-written link is up" : "the peer's link is "
			    "up");
		if (p->state == ADAPT_DRAINING)
			goto draining;
		if (link == ADAPT_LINK_MANUAL && p->state != ADAPT_MANUAL)
			change(a, p, ADAPT_MANUAL, now, "a hand-written link "
			    "is up", NULL);
		else if (link == ADAPT_LINK_PEERS && p->state != ADAPT_PEER) {
			if (adapt_active(a) >= c->max) {
				a->st.max_refused++;
				change(a, p, p->state, now, "max shortcuts "
				    "reached", "refusing %s's shortcut (%u up)",
				    p->name, c->max);
				return ADAPT_REFUSE;
			}
			p->trigger = rate;
			change(a, p, ADAPT_PEER, now, "the peer dialled us",
			    NULL);
		}
		return ADAPT_NONE;
	}
	switch (p->state) {
	case ADAPT_MANUAL:
	case ADAPT_PEER:
		change(a, p, ADAPT_RELAY, now, "the link between them is gone",
		    NULL);
		/* FALLTHROUGH */
	case ADAPT_RELAY:
		if (on && rate >= c->threshold)
			change(a, p, ADAPT_ABOVE, now, "traffic over the relay "
			    "above the threshold", "waiting %u s", c->hold);
		return ADAPT_NONE;
	case ADAPT_ABOVE:
		if (!on || rate < c->threshold) {
			change(a, p, ADAPT_RELAY, now, !on ? "adapt is off" :
			    "traffic below the threshold again", NULL);
			return ADAPT_NONE;
		}
		if (now - p->since_ms < (uint64_t)c->hold * 1000)
			return ADAPT_NONE;
		if (strcmp(a->self, p->name) > 0)
			return ADAPT_NONE;	/* the peer dials */
		if (adapt_active(a) >= c->max) {
			if (strcmp(p->reason, "max shortcuts reached") != 0) {
				uint64_t since = p->since_ms;

				/* Logged once; the hold already passed. */
				a->st.max_refused++;
				change(a, p, ADAPT_ABOVE, now, "max shortcuts "
				    "reached", "%u up or dialling", c->max);
				p->since_ms = since;
			}
			return ADAPT_NONE;
		}
		p->trigger = rate;
		p->attempts++;
		a->st.dials++;
		p->cand[0] = p->note[0] = '\0';
		change(a, p, ADAPT_DIALING, now, "above the threshold for the "
		    "hold time", "dialling %s", p->name);
		return ADAPT_DIAL;
	case ADAPT_DIALING:
		if (link == ADAPT_LINK_OURS_UP) {
			a->st.ups++;
			p->up_ms = now;
			p->failure[0] = p->note[0] = '\0';
			change(a, p, ADAPT_UP, now, "shortcut up", "the pair's "
			    "traffic moves onto it%s%s", p->cand[0] != '\0' ?
			    ", the direct path by candidate " : "", p->cand);
			return ADAPT_NONE;
		}
		if (!on)
			return fail(a, p, now, "adapt is off", 0);
		if (now - p->since_ms >= ADAPT_DIAL_MS) {
			a->st.failures++;
			return fail(a, p, now, "dial failed or timed out", 1);
		}
		return ADAPT_NONE;
	case ADAPT_UP:
	case ADAPT_BELOW:
		if (link != ADAPT_LINK_OURS_UP) {
			a->st.deaths++;
			return fail(a, p, now, "shortcut died", 0);
		}
		if (!on)
			return drain(a, p, now, "adapt is off");
		if (p->state == ADAPT_UP && rate < c->threshold / 2) {
			change(a, p, ADAPT_BELOW, now, "below half the "
			    "threshold", "closing after %u s", c->idle);
			return ADAPT_NONE;
		}
		if (p->state == ADAPT_BELOW) {
			if (rate >= c->threshold / 2)
				change(a, p, ADAPT_UP, now, "above half the "
				    "threshold again", NULL);
			else if (now - p->since_ms >= (uint64_t)c->idle * 1000)
				return drain(a, p, now, "idle");
		}
		return ADAPT_NONE;
	case ADAPT_DRAINING:
	draining:
		if (now - p->since_ms < ADAPT_DRAIN_MS)
			return ADAPT_NONE;
		a->st.closes++;
		p->up_ms = 0;
		change(a, p, ADAPT_RELAY, now, "drained", "closing the link");
		return ADAPT_CLOSE;
	case ADAPT_BACKOFF:
		if (now < p->retry_ms)
			return ADAPT_NONE;
		change(a, p, ADAPT_RELAY, now, "back-off over", NULL);
		return ADAPT_NONE;
	}
	return ADAPT_NONE;
}

void
adapt_round_end(struct adapt *a)
{
	size_t	 i = 0;

	while (i < a->n) {
		struct adapt_peer *p = &a->peers[i];

		if (!p->seen && (p->state == ADAPT_RELAY ||
		    p->state == ADAPT_ABOVE || p->state == ADAPT_MANUAL ||
		    p->state == ADAPT_PEER)) {
			memmove(p, p + 1, (a->n - i - 1) * sizeof(*p));
			a->n--;
			continue;
		}
		p->seen = 0;
		i++;
	}
}
