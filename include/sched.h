/*
 * A link's scheduler: its frame queue (lq), the AQM that judges each frame
 * as it leaves (aqm) and the shaper that paces them (shaper), with the
 * counters and sojourn-time samples that `show link` reports.  Pure, like
 * its parts: the link passes the clock in and moves what comes out onto
 * its connection; this never touches the event loop or a socket.
 *
 * Each queued record is a blob: `prefix` bytes of wire header, then the
 * Ethernet frame, which the AQM may mark CE in place.
 *
 * With `aqm off` or `aqm codel` the frames wait in one FIFO (lq) under one
 * CoDel; with `aqm fq_codel` in per-flow queues (fq), each with its CoDel.
 * Changing between the two throws the queue away (counted as flushed).
 */
#ifndef VNET_SCHED_H
#define VNET_SCHED_H

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include "aqm.h"
#include "fq.h"
#include "lq.h"
#include "shaper.h"
#include "stmt.h"

#define SCHED_SAMPLES		1024		/* sojourn times kept */
#define SCHED_WINDOW		10000000	/* us: "recent" for show */

/* What a link's options say: a rate and an AQM. */
/*
 * A link's options, remembered by link name.  The scheduler uses rate and
 * aqm; congestion is for the link's TCP connections (link.c), "" for the
 * system's default, and travels with the others.
 */
struct sched_opts {
	uint64_t		rate;	/* bit/s, 0: none */
	struct aqm_params	aqm;
	char			congestion[STMT_CONGESTION_MAX + 1];
	enum stmt_transport	transport;	/* for link.c and udp.c */
	/* For link.c's liveness, as stmt.h: 0, the global one. */
	uint32_t		live_interval, live_mult;
};

struct sched_counters {
	uint64_t	tail_drops;	/* queue full: the arriving frame */
	uint64_t	fat_drops;	/* queue full: the fattest flow's */
	uint64_t	ce_marks;	/* marked by the AQM */
	uint64_t	aqm_drops;	/* dropped by the AQM */
	uint64_t	flushed;	/* thrown away when the link went down */
};

struct sched_sample {
	uint64_t	at;		/* us, when it left the queue */
	uint32_t	sojourn;	/* us */
};

struct sched {
	struct sched_opts	 opts;
	size_t			 prefix;
	struct lq		 q;		/* off, codel */
	struct aqm		 aqm;
	struct fq		 fq;		/* fq_codel */
	struct fq_buf		*held;		/* handed out, back next call */
	struct shaper		 shaper;
	struct sched_counters	 c;
	struct sched_sample	 samples[SCHED_SAMPLES];
	size_t			 nsamples;	/* ever taken */
};

enum sched_result {
	SCHED_SEND = 0,		/* *it is the next record to send */
	SCHED_EMPTY,		/* nothing queued */
	SCHED_WAIT,		/* the shaper holds the head for *wait us */
};

struct sched_quantiles {
	size_t		n;		/* samples in the window */
	uint32_t	p50, p99, max;	/* us */
};

void	 sched_opts_default(struct sched_opts *);
/* The options a link statement or set-link gives (only those it names). */
void	 sched_opts_from_stmt(struct sched_opts *, const struct stmt *);
/*
 * Sets the options fields of a statement to o: every value, and in lopts
 * those that are not the default (what a printed statement shows).
 */
void	 sched_opts_to_stmt(const struct sched_opts *, struct stmt *);

int	 sched_init(struct sched *, const struct sched_opts *, size_t limit,
	    size_t prefix, size_t maxframe, uint64_t now, uint32_t seed);
void	 sched_free(struct sched *);
/*
 * Empty queues of a new limit in place of the old ones (their frames in
 * *lost); the rest of the scheduler stays.  -1 (the old queues kept) when
 * memory is short.
 */
int	 sched_resize(struct sched *, size_t limit, size_t maxframe,
	    uint32_t seed, size_t *lost);
/* New options: the AQM and shaper start afresh, the queue is kept. */
void	 sched_set_opts(struct sched *, const struct sched_opts *, uint64_t now);
/* Queues prefix and frame; -1 (counted) if the queue is full. */
int	 sched_enqueue(struct sched *, uint64_t now, const uint8_t *prefix,
	    const uint8_t *frame, size_t len);
/*
 * The next record to send, taken off the queue (its data valid until the
 * next call to any sched function): frames the AQM drops on the way are counted and
 * skipped.
 */
enum sched_result sched_dequeue(struct sched *, uint64_t now,
	    struct lq_item *it, uint64_t *wait);
/*
 * Whether a frame may go out at once, past the queue: nothing waits and
 * no rate paces the link.  Such a frame is then reported with
 * sched_bypassed() (a sojourn of 0; the AQM sees an empty queue), so that
 * it counts as if it had passed through.
 */
int	 sched_may_bypass(const struct sched *);
void	 sched_bypassed(struct sched *, uint64_t now);
/* Throws the queue away (counted as flushed). */
void	 sched_flush(struct sched *);
/* Frames and bytes (prefixes included) queued. */
size_t	 sched_frames(const struct sched *);
size_t	 sched_bytes(const struct sched *);
void	 sched_quantiles(const struct sched *, uint64_t now,
	    struct sched_quantiles *);

/* Options remembered by link name, for links that come and go. */
struct sched_optent {
	TAILQ_ENTRY(sched_optent) entry;
	char			 name[STMT_NAME_MAX + 1];
	struct sched_opts	 opts;
};
TAILQ_HEAD(sched_optlist, sched_optent);

struct sched_optent *sched_optlist_find(struct sched_optlist *, const char *);
/* Sets (adds) the entry for name; NULL when out of memory. */
struct sched_optent *sched_optlist_set(struct sched_optlist *, const char *,
	    const struct sched_opts *);
void	 sched_optlist_del(struct sched_optlist *, const char *);
void	 sched_optlist_clear(struct sched_optlist *);

#endif
