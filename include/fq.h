/*
 * Flow queueing with CoDel per flow, in the manner of fq_codel (RFC 8290):
 * frames are hashed by their inner flow (IP addresses, protocol, TCP ports;
 * MAC addresses and EtherType for what is not IP) into FQ_FLOWS queues,
 * served by deficit round robin a quantum of bytes at a time, flows that
 * just became active first.  A flow that sends little (a ping, an ACK
 * stream, a DNS query) so never waits behind a bulk flow's queue, and each
 * flow's CoDel signals that flow alone.
 *
 * When the queue is full, room is made as RFC 8290 (section 4.1.3) does:
 * frames are dropped from the head of the flow with the most bytes queued,
 * up to half of them (at most FQ_DROP_BATCH at a time), so a flow that
 * floods the queue (a broadcast storm, a bulk sender) loses its own
 * frames while a sparse flow's frame still gets in.
 *
 * Frames live in buffers from a pool that keeps what it frees: after
 * warming up, queueing costs no allocation for frames up to FQ_BUF_DATA
 * bytes (with their wire prefix); larger ones get a buffer of their own.
 *
 * Pure like aqm: the caller passes the clock.
 */
#ifndef VNET_FQ_H
#define VNET_FQ_H

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include "aqm.h"

#define FQ_FLOWS	1024
#define FQ_QUANTUM	1514
#define FQ_BUF_DATA	(2048 - 32)
#define FQ_DROP_BATCH	64	/* frames dropped at most per full queue */

struct fq_buf {
	struct fq_buf	*next;
	uint64_t	 ts;
	uint32_t	 len;
	uint32_t	 cap;
	uint8_t		 data[];
};

struct fq_flow {
	TAILQ_ENTRY(fq_flow)	 entry;
	struct fq_buf		*head, *tail;
	int			 listed;	/* on new or old */
	size_t			 backlog;	/* bytes queued */
	int64_t			 deficit;
	struct aqm		 aqm;
};
TAILQ_HEAD(fq_flowlist, fq_flow);

struct fq {
	size_t			 limit;		/* bytes of data queued */
	size_t			 prefix;	/* bytes before each frame */
	size_t			 bytes, count;
	uint32_t		 seed;
	struct fq_flowlist	 new_flows, old_flows;
	struct fq_buf		*pool;		/* free small buffers */
	struct fq_flow		*flows;		/* FQ_FLOWS of them, or NULL */
	struct aqm_params	 params;	/* every flow's */
};

int		 fq_init(struct fq *, size_t limit, size_t prefix,
		    const struct aqm_params *, uint32_t seed);
void		 fq_free(struct fq *);
/* New AQM parameters for every flow. */
void		 fq_set_params(struct fq *, const struct aqm_params *);
/*
 * Queues prefix + frame, first dropping from the fattest flow if the queue
 * is full (counted in *drops); -1 when the frame itself cannot be queued
 * (larger than the limit, or memory is short).
 */
int		 fq_enqueue(struct fq *, uint64_t now, const uint8_t *prefix,
		    const uint8_t *frame, size_t len, uint64_t *drops);
/*
 * The next buffer to send, NULL when nothing is queued; the AQM's verdict on
 * frames dropped on the way is counted in *drops, and *marked says whether
 * the one returned was marked CE.  The buffer goes back with fq_release().
 */
struct fq_buf	*fq_dequeue(struct fq *, uint64_t now, uint64_t *drops,
		    int *marked);
void		 fq_release(struct fq *, struct fq_buf *);
void		 fq_flush(struct fq *);
/* Which of the FQ_FLOWS queues a frame goes to. */
size_t		 fq_hash(const struct fq *, const uint8_t *frame, size_t len);

#endif
