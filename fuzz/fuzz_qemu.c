/*
 * libFuzzer target: QEMU's stream framing (qemuif_parse), fed a byte stream
 * in pieces the way a connection's reads hand it over: the input's first
 * byte sets the size of each read.  Every frame passed must lie inside the
 * stream with the length its prefix gave; what the parser says it used must
 * be whole frames; a length out of range must be refused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iface.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct walk {
	const uint8_t	*base;
	size_t		 len;
	size_t		 at;		/* where the next frame's prefix is */
	int		 frames;
};

static int
frame_cb(const uint8_t *frame, size_t len, void *arg)
{
	struct walk	*w = arg;
	const uint8_t	*p = w->base + w->at;
	uint32_t	 n;

	n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
	if (n != len || frame != p + QEMUIF_HDR_LEN || len == 0 ||
	    len > QEMUIF_FRAME_MAX || w->at + QEMUIF_HDR_LEN + len > w->len)
		abort();
	w->at += QEMUIF_HDR_LEN + len;
	w->frames++;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t	 buf[QEMUIF_HDR_LEN + QEMUIF_FRAME_MAX];
	struct walk	 w;
	size_t		 have = 0, used, step, off = 1;
	int		 n;

	if (size < 1)
		return 0;
	step = (size_t)data[0] * 37 + 1;
	while (off < size) {
		size_t take = size - off < step ? size - off : step;

		if (take > sizeof(buf) - have)
			take = sizeof(buf) - have;
		memcpy(buf + have, data + off, take);
		have += take;
		off += take;
		memset(&w, 0, sizeof(w));
		w.base = buf;
		w.len = have;
		n = qemuif_parse(buf, have, &used, frame_cb, &w);
		if (n == -1)
			return 0;
		if (n != w.frames || used != w.at || used > have)
			abort();
		memmove(buf, buf + used, have - used);
		have -= used;
		/* A full buffer without a frame would be a stuck stream. */
		if (have == sizeof(buf))
			abort();
	}
	return 0;
}
