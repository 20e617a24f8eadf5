/*
 * libFuzzer target: the link wire codec, fed a byte stream the way a
 * connection's read loop sees it: header, bounded payload, next message.
 * Whatever decodes must encode back to what decodes the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_hello(const uint8_t *p, size_t n)
{
	struct wire_hello	 h, again;
	uint8_t			 buf[WIRE_HDR_LEN + WIRE_HELLO_MAX];
	const char		*why;
	size_t			 len;

	if (wire_hello_decode(p, n, &h, &why) == -1) {
		if (why == NULL)
			abort();
		return;
	}
	if ((len = wire_hello_encode(buf, sizeof(buf), &h)) == 0)
		abort();
	if (wire_hello_decode(buf + WIRE_HDR_LEN, len - WIRE_HDR_LEN, &again,
	    &why) == -1 || memcmp(&h, &again, sizeof(h)) != 0)
		abort();
}

static void
check_frame(const uint8_t *p, size_t n, uint8_t hops)
{
	struct wire_frame	 f;
	struct wire_hdr		 h;
	uint8_t			 pre[WIRE_HDR_LEN + WIRE_FRAME_PREFIX];
	const char		*why;

	if (wire_frame_decode(p, n, &f, &why) == -1)
		return;
	if (f.len < WIRE_FRAME_MIN || f.len > WIRE_FRAME_MAX ||
	    f.eth != p + WIRE_FRAME_PREFIX || f.len + WIRE_FRAME_PREFIX != n)
		abort();
	wire_frame_encode_prefix(pre, f.len, hops, f.origin, f.seq, f.vh);
	if (wire_hdr_decode(pre, sizeof(pre), &h, &why) == -1 ||
	    h.type != WIRE_FRAME || h.len != n ||
	    memcmp(pre + WIRE_HDR_LEN, p, WIRE_FRAME_PREFIX) != 0)
		abort();
}

static void
check_dgram(const uint8_t *p, size_t n)
{
	struct wire_dgram	 d, again;
	uint8_t			 buf[WIRE_HDR_LEN + WIRE_DGRAM_LEN];
	const char		*why = NULL;

	if (wire_dgram_decode(p, n, &d, &why) == -1) {
		if (why == NULL)
			abort();
		return;
	}
	wire_dgram_encode(buf, &d);
	if (memcmp(buf + WIRE_HDR_LEN, p, n) != 0 ||
	    wire_dgram_decode(buf + WIRE_HDR_LEN, WIRE_DGRAM_LEN, &again,
	    &why) == -1 || memcmp(&d, &again, sizeof(d)) != 0)
		abort();
}

static void
check_probe(const uint8_t *p, size_t n)
{
	struct wire_probe	 pr, again;
	uint8_t			 buf[WIRE_HDR_LEN + WIRE_PROBE_LEN];
	const char		*why = NULL;

	if (wire_probe_decode(p, n, &pr, &why) == -1) {
		if (why == NULL)
			abort();
		return;
	}
	wire_probe_encode(buf, &pr);
	if (memcmp(buf + WIRE_HDR_LEN, p, n) != 0 ||
	    wire_probe_decode(buf + WIRE_HDR_LEN, WIRE_PROBE_LEN, &again,
	    &why) == -1 || memcmp(&pr, &again, sizeof(pr)) != 0)
		abort();
}

static void
check_seen(const uint8_t *p, size_t n)
{
	struct wire_seen	 s, again;
	uint8_t			 buf[WIRE_HDR_LEN + 2 + WIRE_SEEN_ADDR_MAX];
	const char		*why = NULL;
	size_t			 len;

	if (wire_seen_decode(p, n, &s, &why) == -1) {
		if (why == NULL)
			abort();
		return;
	}
	if ((len = wire_seen_encode(buf, &s)) != WIRE_HDR_LEN + n ||
	    memcmp(buf + WIRE_HDR_LEN, p, n) != 0 ||
	    wire_seen_decode(buf + WIRE_HDR_LEN, n, &again, &why) == -1 ||
	    memcmp(&s, &again, sizeof(s)) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_hdr	 h;
	const char	*why;
	size_t		 off = 0;

	while (size - off >= WIRE_HDR_LEN) {
		why = NULL;
		if (wire_hdr_decode(data + off, size - off, &h, &why) == -1) {
			if (why == NULL)
				abort();
			break;
		}
		off += WIRE_HDR_LEN;
		if (h.len > WIRE_PAYLOAD_MAX)
			abort();	/* the decoder bounds every type */
		if (h.len > size - off)
			break;
		switch (h.type) {
		case WIRE_HELLO:
			check_hello(data + off, h.len);
			break;
		case WIRE_FRAME:
			check_frame(data + off, h.len, h.hops);
			break;
		case WIRE_DGRAM:
			if (h.len != WIRE_DGRAM_LEN)
				abort();	/* the decoder holds it to its size */
			check_dgram(data + off, h.len);
			break;
		case WIRE_PROBE:
			if (h.len != WIRE_PROBE_LEN)
				abort();
			check_probe(data + off, h.len);
			break;
		case WIRE_SEEN:
			if (h.len < 3 || h.len > 2 + WIRE_SEEN_ADDR_MAX)
				abort();
			check_seen(data + off, h.len);
			break;
		case WIRE_NODE:
			/* A record: its decoder is fuzz_node's. */
			if (h.len > WIRE_NODE_MAX)
				abort();
			break;
		case WIRE_KEEPALIVE:
		case WIRE_BYE:
			if (h.len != 0)
				abort();
			break;
		default:
			abort();
		}
		off += h.len;
	}
	return 0;
}
