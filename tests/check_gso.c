#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gso.h"
#include "pkt.h"

#include "gso_frames.h"

struct collect {
	uint8_t		 data[70000];
	size_t		 used;
	int		 n;
	uint32_t	 next_seq;
	int		 ipver;
	size_t		 mss;
	uint8_t		 flags[64];
	uint16_t	 id_prev;
};

static void
collect_cb(const uint8_t *seg, size_t len, void *arg)
{
	struct collect	*c = arg;
	struct pkt	 p;

	ck_assert_int_eq(pkt_parse(&p, seg, len), PKT_OK);
	ck_assert_int_eq(p.ipver, c->ipver);
	ck_assert_uint_le(p.payload, c->mss);
	ck_assert_uint_eq(p.l3end, len);
	/* Every segment's checksums are right. */
	ck_assert_uint_eq(pkt_tcp_csum(seg, &p), seg[p.l4off + 16] << 8 |
	    seg[p.l4off + 17]);
	if (p.ipver == 4) {
		uint16_t id = (uint16_t)(seg[p.l3off + 4] << 8 |
		    seg[p.l3off + 5]);

		ck_assert_uint_eq(pkt_ipv4_csum(seg, &p), seg[p.l3off + 10] << 8 |
		    seg[p.l3off + 11]);
		if (c->n > 0)
			ck_assert_uint_eq(id, (uint16_t)(c->id_prev + 1));
		c->id_prev = id;
		/* ECT on the super-frame is on every segment. */
		ck_assert_uint_eq(p.ecn, PKT_ECN_ECT0);
	}
	if (c->n == 0)
		c->next_seq = p.seq;
	ck_assert_int_lt(c->n, 64);
	c->flags[c->n] = p.flags;
	ck_assert_uint_eq(p.seq, c->next_seq);
	c->next_seq += (uint32_t)p.payload;
	memcpy(c->data + c->used, seg + p.l4off + p.tcp_hlen, p.payload);
	c->used += p.payload;
	c->n++;
}

START_TEST(segment_tcp)
{
	static uint8_t	 f[70000], buf[2048];
	static struct collect c;
	struct gso_hdr	 h;
	int		 ipver = _i % 2 ? 6 : 4;
	size_t		 payload = _i < 2 ? 60000 : 1448 * 3, len, i, hl;
	int		 n;

	memset(&c, 0, sizeof(c));
	c.ipver = ipver;
	c.mss = 1448;
	len = superframe(f, ipver, payload,
	    TCP_ACK | TCP_PSH | TCP_FIN | TCP_CWR, &h, 1448);
	hl = h.hdr_len;
	n = gso_segment(&h, f, len, buf, sizeof(buf), collect_cb, &c);
	ck_assert_int_eq(n, (int)((payload + 1447) / 1448));
	ck_assert_int_eq(c.n, n);
	ck_assert_uint_eq(c.used, payload);
	for (i = 0; i < payload; i++)
		ck_assert_uint_eq(c.data[i], f[hl + i]);
	for (i = 0; i < (size_t)n; i++) {
		uint8_t want = TCP_ACK;

		if (i == 0)
			want |= TCP_CWR;
		if (i == (size_t)n - 1)
			want |= TCP_FIN | TCP_PSH;
		ck_assert_uint_eq(c.flags[i], want);
	}
}
END_TEST

/* A frame that only needs its checksum: completed to the full value. */
START_TEST(csum_only)
{
	static uint8_t	 f[70000], buf[2048];
	static struct collect c;
	struct gso_hdr	 h;
	size_t		 len = superframe(f, 4, 500, TCP_ACK, &h, 1448);

	memset(&c, 0, sizeof(c));
	c.ipver = 4;
	c.mss = 1448;
	h.gso_type = GSO_NONE;
	ck_assert_int_eq(gso_is_plain(&h), 0);
	ck_assert_int_eq(gso_segment(&h, f, len, buf, sizeof(buf), collect_cb,
	    &c), 1);
	ck_assert_int_eq(c.n, 1);
	ck_assert_uint_eq(c.used, 500);
}
END_TEST

START_TEST(refused)
{
	static uint8_t	 f[70000], buf[2048];
	static struct collect c;
	struct gso_hdr	 h;
	size_t		 len = superframe(f, 4, 5000, TCP_ACK, &h, 1448);

	memset(&c, 0, sizeof(c));
	h.gso_type = GSO_UDP;
	ck_assert_int_eq(gso_segment(&h, f, len, buf, sizeof(buf), collect_cb,
	    &c), -1);
	h.gso_type = GSO_TCPV6;		/* an IPv4 frame said to be IPv6 */
	ck_assert_int_eq(gso_segment(&h, f, len, buf, sizeof(buf), collect_cb,
	    &c), -1);
	h.gso_type = GSO_TCPV4;
	ck_assert_int_eq(gso_segment(&h, f, len - 1, buf, sizeof(buf),
	    collect_cb, &c), -1);	/* IP length disagrees with the frame */
	ck_assert_int_eq(gso_segment(&h, f, len, buf, 100, collect_cb, &c),
	    -1);			/* no room for a segment */
	h.csum_start = 60000;
	h.gso_type = GSO_NONE;
	ck_assert_int_eq(gso_segment(&h, f, len, buf, sizeof(buf), collect_cb,
	    &c), -1);
	ck_assert_int_eq(c.n, 0);
}
END_TEST

/* Offload headers from outside: what passes and what is dropped, and why. */
START_TEST(check_headers)
{
	static uint8_t	 f[70000], buf[2048];
	static struct collect c;
	struct gso_hdr	 h, good;
	const char	*why = NULL;
	size_t		 len;

	memset(&c, 0, sizeof(c));
	len = superframe(f, 4, 60000, TCP_ACK, &good, 1448);
	h = good;
	ck_assert_int_eq(gso_check(&h, f, len, &why), 0);
	h.gso_type |= GSO_ECN;
	ck_assert_int_eq(gso_check(&h, f, len, &why), 0);

	/* the amplification: segment size 1, and just under the floor */
	h = good;
	h.gso_size = 1;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	ck_assert_str_eq(why, "segment size below the floor");
	ck_assert_int_eq(gso_segment(&h, f, len, buf, sizeof(buf), collect_cb,
	    &c), -1);
	ck_assert_int_eq(c.n, 0);
	h.gso_size = GSO_MIN_SIZE_V4 - 1;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	h.gso_size = GSO_MIN_SIZE_V4;
	ck_assert_int_eq(gso_check(&h, f, len, &why), 0);
	/* larger than the payload: one segment, as the kernel may send */
	h.gso_size = 65500;
	ck_assert_int_eq(gso_check(&h, f, len, &why), 0);

	/* the type against the headers */
	h = good;
	h.gso_type = GSO_TCPV6;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	ck_assert_str_eq(why, "segmentation type does not match the headers");
	h.gso_type = GSO_UDP;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	h.gso_type = 0x7f;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	h = good;
	ck_assert_int_eq(gso_check(&h, f, len + 1, &why), -1);	/* trailer */
	f[14 + 9] = 17;				/* says UDP */
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	f[14 + 9] = PKT_PROTO_TCP;
	ck_assert_int_eq(gso_check(&h, f, 13, &why), -1);	/* runt */

	/* flags and checksum offsets */
	h = good;
	h.flags |= 0x04;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	ck_assert_str_eq(why, "unknown offload flags");
	h = good;
	h.csum_start = (uint16_t)(len - 1);
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	ck_assert_str_eq(why, "checksum offsets outside the frame");
	h.csum_start = 4;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);

	/* without segmentation: the checksum must lie inside, nothing else */
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(gso_check(&h, f, 60, &why), 0);
	h.gso_size = 1;				/* unused without a type */
	ck_assert_int_eq(gso_check(&h, f, 60, &why), 0);
	h.gso_type = GSO_ECN;
	ck_assert_int_eq(gso_check(&h, f, 60, &why), -1);

	/* IPv6: its own floor */
	len = superframe(f, 6, 60000, TCP_ACK, &good, 1448);
	h = good;
	ck_assert_int_eq(gso_check(&h, f, len, &why), 0);
	h.gso_size = GSO_MIN_SIZE_V6 - 1;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
	h.gso_size = GSO_MIN_SIZE_V6;
	ck_assert_int_eq(gso_check(&h, f, len, &why), 0);
	h.gso_type = GSO_TCPV4;
	ck_assert_int_eq(gso_check(&h, f, len, &why), -1);
}
END_TEST

START_TEST(hdr_codec)
{
	struct gso_hdr	 h = { GSO_F_NEEDS_CSUM, GSO_TCPV4 | GSO_ECN, 66, 1448,
	    34, 16 }, g;
	uint8_t		 b[GSO_VNET_HDR_LEN];

	gso_hdr_encode(b, &h);
	ck_assert_uint_eq(b[2], 66);	/* little-endian */
	ck_assert_uint_eq(b[4], 1448 & 0xff);
	ck_assert_uint_eq(b[5], 1448 >> 8);
	gso_hdr_decode(b, &g);
	ck_assert_int_eq(memcmp(&h, &g, sizeof(h)), 0);
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gso_is_plain(&g), 1);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("gso");
	TCase	*tc = tcase_create("segment");
	SRunner	*sr;
	int	 failed;

	tcase_add_loop_test(tc, segment_tcp, 0, 4);
	tcase_add_test(tc, csum_only);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, hdr_codec);
	tcase_add_test(tc, check_headers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
