/*
 * libFuzzer target: the packet header parser and the rewriters on whatever
 * a guest or a peer might send.  Beyond not crashing, every rewrite of a
 * packet whose checksums were right must leave them right (the incremental
 * updates against a full recomputation), and segmentation must accept or
 * refuse without touching memory it does not own.  A header gso_check()
 * lets through never multiplies a frame: its segments are at most one per
 * floor-sized piece of it.
 *
 * Input: [vnet header:12][frame...].
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gso.h"
#include "pkt.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct segs {
	size_t	 n;
	int	 cut;		/* GSO: segments were built, not passed whole */
};

static void
seg_cb(const uint8_t *seg, size_t len, void *arg)
{
	struct pkt	 p;
	struct segs	*s = arg;

	s->n++;
	if (!s->cut)
		return;		/* the frame itself, as it came */
	/* What segmentation makes parses, with right checksums. */
	if (pkt_parse(&p, seg, len) != PKT_OK)
		abort();
	if (p.tcp && pkt_tcp_csum(seg, &p) != (seg[p.l4off + 16] << 8 |
	    seg[p.l4off + 17]))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t		 segbuf[70000];
	struct gso_hdr		 h;
	struct pkt		 p;
	struct pkt_tcpopt	 o;
	uint8_t			*f;
	struct segs		 segs = { 0, 0 };
	const char		*why;
	size_t			 len;
	int			 ok, n;

	if (size < GSO_VNET_HDR_LEN || size > GSO_VNET_HDR_LEN + 65536)
		return 0;
	gso_hdr_decode(data, &h);
	len = size - GSO_VNET_HDR_LEN;
	/* An exact-size copy: any overread is past the allocation. */
	if ((f = malloc(len ? len : 1)) == NULL)
		return 0;
	memcpy(f, data + GSO_VNET_HDR_LEN, len);

	if (pkt_parse(&p, f, len) == PKT_OK && p.ipver != 0) {
		if (p.ipver == 4)
			put_u16(f + p.l3off + 10, pkt_ipv4_csum(f, &p));
		if (p.tcp) {
			(void)pkt_tcp_options(&p, f, &o);
			put_u16(f + p.l4off + 16, pkt_tcp_csum(f, &p));
			pkt_tcp_set_win(f, &p, (uint16_t)(p.win ^ h.gso_size), 0);
			pkt_tcp_set_flags(f, &p, (uint8_t)(p.flags ^ h.flags), 0);
			if (pkt_tcp_csum(f, &p) != (f[p.l4off + 16] << 8 |
			    f[p.l4off + 17]))
				abort();
		}
		(void)pkt_mark_ce(f, &p);
		if (p.ipver == 4 && pkt_ipv4_csum(f, &p) !=
		    (f[p.l3off + 10] << 8 | f[p.l3off + 11]))
			abort();
	}
	/* Segments are built only from a TCP frame with payload to cut. */
	segs.cut = (h.gso_type & ~GSO_ECN) != GSO_NONE &&
	    pkt_parse(&p, f, len) == PKT_OK && p.tcp &&
	    len > p.l4off + p.tcp_hlen;
	ok = gso_check(&h, f, len, &why) == 0;
	n = gso_segment(&h, f, len, segbuf, sizeof(segbuf), seg_cb, &segs);
	if (ok && n > 0 && (size_t)n > len / GSO_MIN_SIZE_V4 + 1)
		abort();
	free(f);
	return 0;
}
