/*
 * Receive coalescing: consecutive TCP segments of one flow, as a datagram
 * link delivers them (one segment a datagram), put back into one
 * super-frame with a virtio-net header (gso.h), so that the switch hands
 * the guest's TAP device one write of up to 64 KiB instead of forty
 * (what Linux GRO and wireguard-go do).  A port that takes no offload
 * gets the super-frame cut again by the switch.  Pure: frames in, frames
 * out through a callback; no allocation after gro_init().
 *
 * A segment joins the one held if it continues it exactly: the same
 * Ethernet, IP and TCP headers but for the lengths, IPv4 id, checksums and
 * sequence number (so the same flow, ACK, window, options and TOS), its
 * sequence number where the held data ends, no flag but ACK and PSH, a
 * payload no larger than the first segment's (the segment size), the same
 * origin and hop limit; and only while the held ones are all full-sized,
 * no PSH came, the whole stays within 64 KiB and GRO_SEGS segments.  Its
 * TCP checksum must be right (a segment the guest's kernel would drop is
 * never hidden in a super-frame).  IPv4 without options or IPv6 without
 * extension headers; segments smaller than gso.h's floor are not merged.
 * Anything else ends what is held (it goes first) and goes on as it came.
 *
 * The caller ends a batch with gro_flush(): nothing is held across reads.
 */
#ifndef VNET_GRO_H
#define VNET_GRO_H

#include <stddef.h>
#include <stdint.h>

#define GRO_MAX		(65535 + 14 + 8)	/* an IP packet, Ethernet, tags */
#define GRO_SEGS	64

struct gro_frame {
	const uint8_t	*vh;		/* GSO_VNET_HDR_LEN bytes, NULL: plain */
	const uint8_t	*eth;
	size_t		 len;
	uint8_t		 hops;
	uint32_t	 origin, seq;
};

struct gro_stats {
	uint64_t	 merged;	/* segments that joined another */
	uint64_t	 super;		/* super-frames made */
};

struct gro {
	uint8_t		*buf;		/* GRO_MAX */
	size_t		 len;		/* 0: nothing held */
	size_t		 l3off, l4off, hdrlen;
	int		 ipver;
	uint32_t	 next_seq;
	size_t		 mss;
	unsigned int	 segs;
	int		 closed;	/* PSH, or a short segment: no more */
	uint8_t		 flags;		/* TCP flags, OR of all */
	uint8_t		 hops;
	uint32_t	 origin, seq;
	uint8_t		 vh[12];
	struct gro_stats st;
};

typedef void	 gro_out_fn(void *arg, const struct gro_frame *);

/* 0, or -1 without memory. */
int		 gro_init(struct gro *);
void		 gro_free(struct gro *);
/* A frame arrived: held, or passed on to out (what was held first). */
void		 gro_input(struct gro *, const struct gro_frame *, gro_out_fn *,
		    void *arg);
/* The batch is over: what is held goes to out. */
void		 gro_flush(struct gro *, gro_out_fn *, void *arg);
int		 gro_holding(const struct gro *);

#endif
