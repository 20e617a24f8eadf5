/*
 * Frames cut to fit a datagram path, and put back together.  Pure: bytes
 * and a clock in.
 *
 * A wire message longer than the path's datagrams carry (pmtu.h) goes in
 * FRAG datagrams (dgram.h), each holding a 12-byte piece header and a run
 * of the message's bytes:
 *
 *   u32 message id (the sender's, counting up), u32 offset, u32 total length
 *
 * Cutting in the link protocol, rather than clamping the guests' TCP MSS,
 * is what lets anything a guest sends cross a path narrower than the
 * guests' MTU: a ping with DF, UDP, IPv6 (no fragmentation on the way),
 * TCP whose SYN went by another path.  A lost piece loses its frame, as a
 * lost fragment does in IP.
 *
 * The receiver puts back at most DFRAG_SLOTS messages at a time, each
 * bounded by DFRAG_MAX; a message not whole within DFRAG_TIMEOUT_MS, or
 * whose slot a newer message needs, is dropped and counted.  The pieces
 * come only from authenticated datagrams, so only the peer of the link can
 * use up its slots.
 */
#ifndef VNET_DFRAG_H
#define VNET_DFRAG_H

#include <stddef.h>
#include <stdint.h>

#define DFRAG_HDR_LEN		12
#define DFRAG_SLOTS		8
#define DFRAG_MAX		(70 * 1024)
#define DFRAG_TIMEOUT_MS	1000

struct dfrag_slot {
	uint32_t	 id;
	uint32_t	 total;		/* 0: free */
	uint32_t	 got;
	uint64_t	 born;		/* ms */
	uint8_t		*buf;		/* DFRAG_MAX, kept once allocated */
};

struct dfrag_stats {
	uint64_t	 whole;		/* messages put back together */
	uint64_t	 dropped;	/* given up: late, pushed out */
	uint64_t	 malformed;
};

struct dfrag {
	struct dfrag_slot	 s[DFRAG_SLOTS];
	uint32_t		 next_id;	/* sending */
	struct dfrag_stats	 st;
};

void	 dfrag_init(struct dfrag *);
void	 dfrag_free(struct dfrag *);
/*
 * The piece header of bytes [off, off + n) of a message of total bytes;
 * the sender takes a new id per message with dfrag_id().
 */
uint32_t dfrag_id(struct dfrag *);
void	 dfrag_hdr_encode(uint8_t out[DFRAG_HDR_LEN], uint32_t id,
	    uint32_t off, uint32_t total);
/*
 * A piece arrived: 1 with the whole message in *msg, *len (valid until the
 * next call), 0 if it waits for more, -1 if the piece is malformed or there
 * is no memory (counted).
 */
int	 dfrag_input(struct dfrag *, uint64_t now_ms, const uint8_t *p,
	    size_t n, const uint8_t **msg, size_t *len);

#endif
