/*
 * One frame on its way through the switch (sw.h), as every stage of the
 * data path sees it: the switch, and the resequencer that may hold it
 * (reseq.h).  The bytes are the caller's; a stage that keeps a frame
 * copies them.
 */
#ifndef VNET_FRAME_H
#define VNET_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* One frame on its way through the switch. */
struct sw_frame {
	const uint8_t	*vh;		/* virtio-net header, NULL: plain */
	const uint8_t	*eth;
	size_t		 len;
	uint8_t		 hops;		/* hop limit left */
	uint32_t	 origin;	/* the daemon it entered first */
	uint32_t	 seq;
};

#endif
