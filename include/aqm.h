/*
 * The active queue manager of a link's queue: CoDel (RFC 8289).
 *
 * Pure: the caller hands in the clock, the frame at the head of the queue,
 * when it was queued and how many bytes stay queued behind it; the AQM says
 * whether the frame goes on as it is, goes on marked CE, or is dropped.  It
 * never reads a clock, touches a socket or logs, so unit tests drive it with
 * an injected clock and real packet bytes.
 *
 * CoDel signals once the sojourn time (time spent queued) has stayed at or
 * above the target for a whole interval; while it stays above, the next
 * signals come at interval / sqrt(count) spacing (the control law), count
 * growing by one per signal.  A signal marks an ECN-capable IPv4 or IPv6
 * packet (ECT(0) or ECT(1)) CE, the IPv4 header checksum fixed, and drops
 * anything else.
 *
 * Times are in microseconds.
 */
#ifndef VNET_AQM_H
#define VNET_AQM_H

#include <stddef.h>
#include <stdint.h>

#define AQM_TARGET_DEFAULT	5000		/* us */
#define AQM_INTERVAL_DEFAULT	100000		/* us */
#define AQM_TIME_MIN		100		/* us, for target and interval */
#define AQM_TIME_MAX		60000000	/* us */
/* No signal while at most this much stays queued (RFC 8289: MAXPACKET). */
#define AQM_MTU			1514

enum aqm_kind {
	AQM_OFF = 0,
	AQM_CODEL,
	AQM_FQ_CODEL,		/* CoDel per flow, flows served in turn (fq) */
};

struct aqm_params {
	enum aqm_kind	kind;
	uint32_t	target;		/* us */
	uint32_t	interval;	/* us */
};

enum aqm_verdict {
	AQM_PASS = 0,
	AQM_MARK,		/* marked CE; send it */
	AQM_DROP,
};

struct aqm {
	struct aqm_params p;
	int		 above;		/* sojourn >= target since first_above - interval */
	uint64_t	 first_above;	/* when it will have been above for an interval */
	int		 dropping;	/* in the signalling state */
	uint32_t	 count;		/* signals in this signalling state */
	uint32_t	 lastcount;	/* count when the last one began */
	uint64_t	 signal_next;	/* when the next signal is due */
	uint64_t	 marks;		/* frames marked CE */
	uint64_t	 drops;		/* frames dropped */
};

/*
 * The defaults: fq_codel, 5 ms target, 100 ms interval.  Measured (see
 * bench/latency-under-load): with 4 bulk flows on a 100mbit link, a ping's
 * p99 RTT was 5 ms with per-flow queues and 19 ms with one CoDel queue.
 */
void		 aqm_params_default(struct aqm_params *);
void		 aqm_init(struct aqm *, const struct aqm_params *);

/*
 * The frame at the head of the queue is being taken off at time now; it was
 * queued at enqueued, and backlog bytes stay queued after it.  On AQM_MARK
 * the frame has been rewritten in place.
 */
enum aqm_verdict aqm_dequeue(struct aqm *, uint64_t now, uint64_t enqueued,
		    size_t backlog, uint8_t *frame, size_t len);

/* The queue ran empty: CoDel leaves its signalling state. */
void		 aqm_empty(struct aqm *);

/* t + interval / sqrt(count), in integer arithmetic. */
uint64_t	 aqm_control_law(uint64_t t, uint32_t interval, uint32_t count);

#endif
