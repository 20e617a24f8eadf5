/*
 * libFuzzer target: what a datagram socket hands the daemon, through the
 * same steps as udp.c: the receiver index, opening (authentication and
 * the replay window), then by type the wire message inside, a piece
 * (dfrag) put back together, or a probe.  The first byte picks how the
 * rest arrives: as it is (a forgery: it must never open), or sealed by the
 * peer first (so the parsers behind authentication see the bytes), as
 * DATA (a frame message), FRAG or PROBE, under AES-256-GCM or the plain tag.  One session
 * lives across inputs, so the replay window and reassembly keep state.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dfrag.h"
#include "dgram.h"
#include "wire.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_MAX	(DFRAG_MAX + DGRAM_OVERHEAD)

struct side {
	int	 dir;
};

static int
secret(void *arg, uint32_t epoch, int tx, uint8_t out[DGRAM_SECRET_LEN])
{
	const struct side *s = arg;
	int		 dir = tx ? s->dir : !s->dir;
	size_t		 i;

	for (i = 0; i < DGRAM_SECRET_LEN; i++)
		out[i] = (uint8_t)(epoch + (uint32_t)dir * 3 + i);
	return 0;
}

struct fuzz_state {
	struct side	 sa, sb;
	struct dgram	 tx[2], rx[2];	/* [plain, AES-256-GCM] */
	struct dfrag	 frag;
	uint64_t	 now;
	uint8_t		 buf[FUZZ_MAX];
};

static struct fuzz_state *
state(void)
{
	static struct fuzz_state *st;
	struct dgram_keysrc	 a, b;
	int			 i;

	if (st != NULL)
		return st;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		abort();
	st->sb.dir = 1;
	a = (struct dgram_keysrc){ secret, &st->sa };
	b = (struct dgram_keysrc){ secret, &st->sb };
	for (i = 0; i < 2; i++) {
		if (dgram_init(&st->tx[i], i ? DGRAM_AES256GCM : DGRAM_PLAIN,
		    10, 20, &a, 0) == -1 ||
		    dgram_init(&st->rx[i], i ? DGRAM_AES256GCM : DGRAM_PLAIN,
		    20, 10, &b, 0) == -1)
			abort();
		st->tx[i].rekey_packets = 50;
	}
	dfrag_init(&st->frag);
	return st;
}

static void
message(const uint8_t *p, size_t n)
{
	struct dgram_frame	 f;

	if (dgram_frame_decode(p, n, &f) == 0 &&
	    (f.eth < p || f.eth + f.len != p + n || f.len < WIRE_FRAME_MIN ||
	    (f.vh != NULL && f.vh != p + DGRAM_FRAME_HDR)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_state	*st = state();
	struct dgram_rx		 rx;
	struct dgram_probe	 pr;
	struct wire_probe	 lp;
	const char		*why;
	const uint8_t		*msg;
	size_t			 n, mlen;
	uint8_t			 how, type;
	int			 c, r;

	if (size < 1 || size - 1 > DFRAG_MAX)
		return 0;
	how = data[0];
	c = how & 1;
	st->now += how >> 4;
	n = size - 1;
	if ((how & 6) == 0) {
		/* As it is: never authentic. */
		memcpy(st->buf, data + 1, n);
		if (dgram_open(&st->rx[c], st->now, st->buf, n, &rx) == 0)
			abort();
		(void)dgram_receiver(data + 1, n);
		return 0;
	}
	type = (how & 6) == 2 ? DGRAM_DATA : (how & 6) == 4 ? DGRAM_FRAG :
	    (how & 16) ? DGRAM_LIVE : DGRAM_PROBE;
	memcpy(st->buf + DGRAM_HDR_LEN, data + 1, n);
	if ((n = dgram_seal(&st->tx[c], st->now, type, st->buf, n)) == 0)
		return 0;
	if (how & 8)
		st->buf[n - 1] ^= 1;	/* the tag broken: dropped */
	r = dgram_open(&st->rx[c], st->now, st->buf, n, &rx);
	if ((how & 8) ? r != -1 : r != 0)
		abort();
	if (r == -1)
		return 0;
	if (rx.payload != st->buf + DGRAM_HDR_LEN ||
	    rx.len != n - DGRAM_OVERHEAD || rx.type != type)
		abort();
	switch (rx.type) {
	case DGRAM_DATA:
		message(rx.payload, rx.len);
		break;
	case DGRAM_FRAG:
		if (dfrag_input(&st->frag, st->now, rx.payload, rx.len, &msg,
		    &mlen) == 1) {
			if (mlen > DFRAG_MAX)
				abort();
			message(msg, mlen);
		}
		break;
	case DGRAM_PROBE:
		(void)dgram_probe_decode(rx.payload, rx.len, &pr);
		break;
	case DGRAM_LIVE:
		if (wire_probe_decode(rx.payload, rx.len, &lp, &why) == 0 &&
		    ((lp.state & ~WIRE_PROBE_FLAGS) > 3 || lp.mult < 2))
			abort();
		break;
	}
	return 0;
}
