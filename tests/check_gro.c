/*
 * Receive coalescing (gro.h): super-frames cut by gso_segment() into
 * segments, as a datagram link carries them, come back as one super-frame
 * whose offload header, lengths and pseudo-header checksum let gso.h cut
 * it again into the same segments; anything that breaks a run (another
 * flow, a gap, a flag, a bad checksum, a short segment) ends it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gro.h"
#include "gso.h"
#include "pkt.h"

#include "gso_frames.h"

struct seglist {
	uint8_t		 data[80][2048];
	size_t		 len[80];
	int		 n;
};

static void
seg_cb(const uint8_t *seg, size_t len, void *arg)
{
	struct seglist	*l = arg;

	ck_assert_int_lt(l->n, 80);
	ck_assert_uint_le(len, sizeof(l->data[0]));
	memcpy(l->data[l->n], seg, len);
	l->len[l->n++] = len;
}

struct outlist {
	uint8_t		 data[8][70000];
	size_t		 len[8];
	uint8_t		 vh[8][GSO_VNET_HDR_LEN];
	int		 has_vh[8];
	uint32_t	 seq[8];
	int		 n;
};

static void
out_cb(void *arg, const struct gro_frame *f)
{
	struct outlist	*o = arg;

	ck_assert_int_lt(o->n, 8);
	memcpy(o->data[o->n], f->eth, f->len);
	o->len[o->n] = f->len;
	o->has_vh[o->n] = f->vh != NULL;
	if (f->vh != NULL)
		memcpy(o->vh[o->n], f->vh, GSO_VNET_HDR_LEN);
	o->seq[o->n] = f->seq;
	o->n++;
}

static void
cut(int ipver, size_t payload, uint16_t mss, struct seglist *l, uint8_t *f,
    size_t *flen, struct gso_hdr *h)
{
	static uint8_t	 buf[4096];

	*flen = superframe(f, ipver, payload, TCP_ACK | TCP_PSH, h, mss);
	memset(l, 0, sizeof(*l));
	ck_assert_int_gt(gso_segment(h, f, *flen, buf, sizeof(buf), seg_cb, l),
	    1);
}

static void
feed(struct gro *g, struct seglist *l, int from, int to, struct outlist *o)
{
	struct gro_frame gf;
	int		 i;

	for (i = from; i < to; i++) {
		gf.vh = NULL;
		gf.eth = l->data[i];
		gf.len = l->len[i];
		gf.hops = 16;
		gf.origin = 7;
		gf.seq = 100 + (uint32_t)i;
		gro_input(g, &gf, out_cb, o);
	}
}

/* The super-frame made again: its segments must be those it was cut into. */
static void
roundtrip(int ipver, size_t payload, uint16_t mss)
{
	static struct seglist	 l, again;
	static struct outlist	 o;
	static uint8_t		 f[70000], buf[4096];
	struct gso_hdr		 h, h2;
	struct gro		 g;
	const char		*why;
	size_t			 flen;
	int			 i;

	cut(ipver, payload, mss, &l, f, &flen, &h);
	ck_assert_int_eq(gro_init(&g), 0);
	memset(&o, 0, sizeof(o));
	feed(&g, &l, 0, l.n, &o);
	gro_flush(&g, out_cb, &o);
	ck_assert_int_eq(o.n, 1);
	ck_assert(o.has_vh[0]);
	ck_assert_uint_eq(o.seq[0], 100);
	ck_assert_uint_eq(o.len[0], flen);
	gso_hdr_decode(o.vh[0], &h2);
	ck_assert_uint_eq(h2.gso_size, mss);
	ck_assert_uint_eq(h2.gso_type, ipver == 4 ? GSO_TCPV4 : GSO_TCPV6);
	ck_assert_int_eq(gso_check(&h2, o.data[0], o.len[0], &why), 0);
	memset(&again, 0, sizeof(again));
	ck_assert_int_eq(gso_segment(&h2, o.data[0], o.len[0], buf,
	    sizeof(buf), seg_cb, &again), l.n);
	for (i = 0; i < l.n; i++) {
		ck_assert_uint_eq(again.len[i], l.len[i]);
		/* The same bytes, but for the IPv4 ids gso gives anew. */
		if (ipver == 4) {
			memcpy(again.data[i] + 18, l.data[i] + 18, 2);
			memcpy(again.data[i] + 24, l.data[i] + 24, 2);
		}
		ck_assert_int_eq(memcmp(again.data[i], l.data[i], l.len[i]), 0);
	}
	ck_assert(g.st.merged == (uint64_t)l.n - 1);
	ck_assert(g.st.super == 1);
	gro_free(&g);
}

START_TEST(roundtrip_v4) { roundtrip(4, 60000, 1448); } END_TEST
START_TEST(roundtrip_v6) { roundtrip(6, 40000, 1348); } END_TEST
START_TEST(roundtrip_short_last) { roundtrip(4, 10 * 1400 + 77, 1400); } END_TEST

/* What breaks a run. */
START_TEST(runs_end)
{
	static struct seglist	 l;
	static struct outlist	 o;
	static uint8_t		 f[70000];
	struct gso_hdr		 h;
	struct gro		 g;
	struct gro_frame	 gf;
	size_t			 flen;
	uint8_t			 save;

	cut(4, 10 * 1448, 1448, &l, f, &flen, &h);
	ck_assert_int_eq(gro_init(&g), 0);

	/* A gap: segment 3 missing. */
	memset(&o, 0, sizeof(o));
	feed(&g, &l, 0, 3, &o);
	feed(&g, &l, 4, 10, &o);
	gro_flush(&g, out_cb, &o);
	ck_assert_int_eq(o.n, 2);
	ck_assert(o.has_vh[0] && o.has_vh[1]);
	ck_assert_uint_eq(o.seq[1], 104);

	/* A bad checksum: that segment goes as it is, alone. */
	memset(&o, 0, sizeof(o));
	l.data[5][l.len[5] - 1] ^= 1;
	feed(&g, &l, 0, 10, &o);
	gro_flush(&g, out_cb, &o);
	ck_assert_int_eq(o.n, 3);
	ck_assert(!o.has_vh[1]);
	ck_assert_uint_eq(o.len[1], l.len[5]);
	l.data[5][l.len[5] - 1] ^= 1;

	/* Another flow between: each run on its own. */
	memset(&o, 0, sizeof(o));
	feed(&g, &l, 0, 2, &o);
	save = l.data[2][34 + 1];
	l.data[2][34 + 1] ^= 1;		/* the source port */
	feed(&g, &l, 2, 3, &o);
	l.data[2][34 + 1] = save;
	gro_flush(&g, out_cb, &o);
	ck_assert_int_eq(o.n, 2);
	ck_assert(o.has_vh[0]);
	ck_assert(!o.has_vh[1]);	/* one segment: as it came */

	/* A frame with an offload header, or not TCP, passes at once. */
	memset(&o, 0, sizeof(o));
	feed(&g, &l, 0, 1, &o);
	gf.vh = (const uint8_t *)"\x01\x01\0\0\0\0\0\0\0\0\0\0";
	gf.eth = f;
	gf.len = flen;
	gf.hops = 16;
	gf.origin = 7;
	gf.seq = 1;
	gro_input(&g, &gf, out_cb, &o);
	ck_assert_int_eq(o.n, 2);
	ck_assert(!gro_holding(&g));
	gro_free(&g);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("gro");
	TCase	*tc = tcase_create("gro");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, roundtrip_v4);
	tcase_add_test(tc, roundtrip_v6);
	tcase_add_test(tc, roundtrip_short_last);
	tcase_add_test(tc, runs_end);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
