/*
 * A token-bucket shaper for a link's frames.  Pure: the caller passes the
 * clock (microseconds) and the size of the frame it wants to send; the
 * shaper answers how long to wait.
 *
 * The rate is in bits per second of Ethernet frame (header and payload, no
 * FCS, no vnet or TCP/IP encapsulation): a link at `rate 10mbit` carries
 * what a 10 Mbit/s Ethernet would, whatever the tunnel adds.  The bucket
 * holds SHAPER_BURST_US worth of the rate, and at least two full-size
 * frames; a frame may leave whenever the bucket is not in debt, which may
 * put it in debt by up to that frame.  So over any span T at most
 * burst + rate * T + one frame leave, and the long-run rate is exact.
 */
#ifndef VNET_SHAPER_H
#define VNET_SHAPER_H

#include <stddef.h>
#include <stdint.h>

#define SHAPER_RATE_MIN		8000ULL			/* bit/s */
#define SHAPER_RATE_MAX		1000000000000ULL	/* 1 Tbit/s */
#define SHAPER_BURST_US		5000
#define SHAPER_BURST_FRAMES	2
#define SHAPER_FRAME		1514

struct shaper {
	uint64_t	rate;		/* bit/s; 0: no limit */
	int64_t		burst;		/* bit-microseconds (bits * 1e6) */
	int64_t		tokens;		/* the same unit; < 0: in debt */
	uint64_t	last;		/* us, last refill */
};

/* rate 0 makes a shaper that never holds a frame back. */
void		 shaper_init(struct shaper *, uint64_t rate, uint64_t now);
/* The bucket depth in bytes for a rate. */
uint64_t	 shaper_burst_bytes(uint64_t rate);
/*
 * 0 if a frame may leave now, else the microseconds until one may.  The
 * wait ends as soon as the bucket is out of debt, so that a late wake-up
 * (timers here have a millisecond's grain, and a busy host adds more)
 * finds a whole burst's room before tokens overflow and are lost.
 */
uint64_t	 shaper_wait(struct shaper *, uint64_t now);
/* A frame of len bytes left. */
void		 shaper_charge(struct shaper *, size_t len);

#endif
