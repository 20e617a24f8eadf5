#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pkt.h"

/*
 * Builds real frames: Ethernet (+ optional tags), IPv4 or IPv6 (+ optional
 * extension header), TCP with options and payload, checksums computed the
 * long way.
 */
struct build {
	int	ipver, vlans, ext, ecn, flags, optlen, payload;
};

static const uint8_t syn_opts[20] = {
	2, 4, 0x05, 0xb4,		/* MSS 1460 */
	4, 2,				/* SACK permitted */
	8, 10, 0, 0, 0, 1, 0, 0, 0, 0,	/* timestamps 1, 0 */
	1,				/* NOP */
	3, 3, 7,			/* window scale 7 */
};

static size_t
build(uint8_t *f, const struct build *b)
{
	struct pkt	 p;
	size_t		 o = 12, l3, l4, len;
	int		 i;

	memset(f, 0, 2048);
	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
	for (i = 0; i < b->vlans; i++) {
		put_u16(f + o, i == 0 && b->vlans > 1 ? PKT_ETH_QINQ :
		    PKT_ETH_VLAN);
		put_u16(f + o + 2, (uint16_t)(100 + i));
		o += 4;
	}
	put_u16(f + o, b->ipver == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6);
	l3 = o + 2;
	if (b->ipver == 4) {
		l4 = l3 + 20;
		f[l3] = 0x45;
		f[l3 + 1] = (uint8_t)b->ecn;
		f[l3 + 8] = 64;
		f[l3 + 9] = PKT_PROTO_TCP;
		memcpy(f + l3 + 12, "\x0a\x4d\0\x01\x0a\x4d\0\x02", 8);
	} else {
		l4 = l3 + 40 + (b->ext ? 8 : 0);
		f[l3] = 0x60;
		f[l3 + 1] = (uint8_t)(b->ecn << 4);
		f[l3 + 6] = b->ext ? 60 : PKT_PROTO_TCP;
		f[l3 + 7] = 64;
		f[l3 + 8] = 0xfd;
		f[l3 + 23] = 1;
		f[l3 + 24] = 0xfd;
		f[l3 + 39] = 2;
		if (b->ext) {
			f[l3 + 40] = PKT_PROTO_TCP;	/* dest. options, 8 bytes */
			f[l3 + 41] = 0;
			f[l3 + 42] = 1;			/* PadN */
			f[l3 + 43] = 4;
		}
	}
	put_u16(f + l4, 40000);
	put_u16(f + l4 + 2, 5201);
	put_u32(f + l4 + 4, 1000);
	put_u32(f + l4 + 8, 2000);
	f[l4 + 12] = (uint8_t)((20 + b->optlen) / 4 << 4);
	f[l4 + 13] = (uint8_t)b->flags;
	put_u16(f + l4 + 14, 502);
	memcpy(f + l4 + 20, syn_opts, (size_t)b->optlen);
	for (i = 0; i < b->payload; i++)
		f[l4 + 20 + (size_t)b->optlen + (size_t)i] = (uint8_t)(i * 7);
	len = l4 + 20 + (size_t)b->optlen + (size_t)b->payload;
	if (b->ipver == 4)
		put_u16(f + l3 + 2, (uint16_t)(len - l3));
	else
		put_u16(f + l3 + 4, (uint16_t)(len - l3 - 40));
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	if (b->ipver == 4)
		put_u16(f + l3 + 10, pkt_ipv4_csum(f, &p));
	put_u16(f + l4 + 16, pkt_tcp_csum(f, &p));
	return len;
}

static const struct build shapes[] = {
	{ 4, 0, 0, PKT_ECN_ECT0, TCP_SYN, 20, 0 },
	{ 4, 1, 0, PKT_ECN_NOT_ECT, TCP_ACK, 0, 100 },
	{ 4, 2, 0, PKT_ECN_ECT1, TCP_ACK | TCP_PSH, 0, 1 },
	{ 6, 0, 0, PKT_ECN_ECT0, TCP_SYN | TCP_ACK, 20, 0 },
	{ 6, 1, 1, PKT_ECN_NOT_ECT, TCP_ACK, 0, 1200 },
	{ 6, 0, 1, PKT_ECN_CE, TCP_ACK | TCP_ECE, 0, 3 },
};

START_TEST(parse_shapes)
{
	const struct build *b = &shapes[_i];
	uint8_t		 f[2048];
	struct pkt	 p;
	size_t		 len = build(f, b);

	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	ck_assert_int_eq(p.ipver, b->ipver);
	ck_assert_uint_eq(p.vlans, (size_t)b->vlans);
	ck_assert_uint_eq(p.ecn, (unsigned)b->ecn);
	ck_assert_int_eq(p.tcp, 1);
	ck_assert_uint_eq(p.sport, 40000);
	ck_assert_uint_eq(p.dport, 5201);
	ck_assert_uint_eq(p.seq, 1000);
	ck_assert_uint_eq(p.ack, 2000);
	ck_assert_uint_eq(p.flags, (unsigned)b->flags);
	ck_assert_uint_eq(p.win, 502);
	ck_assert_uint_eq(p.tcp_hlen, 20 + (size_t)b->optlen);
	ck_assert_uint_eq(p.payload, (size_t)b->payload);
	ck_assert_uint_eq(p.l3end, len);
	/* The checksums build() wrote verify. */
	ck_assert_uint_eq(pkt_tcp_csum(f, &p), (f[p.l4off + 16] << 8) |
	    f[p.l4off + 17]);
}
END_TEST

/* Every prefix of a valid frame parses as truncated (or not IP), never OK with TCP. */
START_TEST(truncated)
{
	const struct build *b = &shapes[_i];
	uint8_t		 f[2048], *copy;
	struct pkt	 p;
	size_t		 len = build(f, b), n;
	enum pkt_status	 st;

	for (n = 0; n < len; n++) {
		/* An exact-size heap copy lets ASan catch any overread. */
		copy = malloc(n ? n : 1);
		memcpy(copy, f, n);
		st = pkt_parse(&p, copy, n);
		ck_assert_msg(st == PKT_TRUNCATED, "len %zu of %zu: %d", n,
		    len, st);
		free(copy);
	}
}
END_TEST

START_TEST(malformed)
{
	uint8_t		 f[2048];
	struct pkt	 p;
	size_t		 len;
	struct build	 b4 = { 4, 0, 0, 0, TCP_ACK, 0, 10 };
	struct build	 b6 = { 6, 0, 0, 0, TCP_ACK, 0, 10 };

	len = build(f, &b4);
	f[14] = 0x44;			/* IHL 4 */
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_MALFORMED);
	len = build(f, &b4);
	f[14] = 0x65;			/* version 6 in an IPv4 frame */
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_MALFORMED);
	len = build(f, &b4);
	put_u16(f + 16, 10);		/* total length < header */
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_MALFORMED);
	len = build(f, &b4);
	put_u16(f + 16, (uint16_t)(len - 14 + 1));	/* past the frame */
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_TRUNCATED);
	len = build(f, &b4);
	f[34 + 12] = 0x40;		/* TCP data offset 16 bytes */
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_MALFORMED);
	len = build(f, &b4);
	f[34 + 12] = 0xf0;		/* 60-byte TCP header in a 30-byte segment */
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_TRUNCATED);
	len = build(f, &b6);
	put_u16(f + 18, 0);		/* IPv6 jumbogram */
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_MALFORMED);
	len = build(f, &b6);
	f[14] = 0x40;
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_MALFORMED);
	/* Not IP at all: ARP. */
	len = build(f, &b4);
	put_u16(f + 12, 0x0806);
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_NOT_IP);
	/* Padding after the IP packet (a short frame padded to 60) is ignored. */
	len = build(f, &b4);
	ck_assert_int_eq(pkt_parse(&p, f, len + 6), PKT_OK);
	ck_assert_uint_eq(p.l3end, len);
	ck_assert_uint_eq(p.payload, 10);
}
END_TEST

START_TEST(fragments)
{
	uint8_t		 f[2048];
	struct pkt	 p;
	struct build	 b4 = { 4, 0, 0, 0, TCP_ACK, 0, 10 };
	size_t		 len = build(f, &b4);

	put_u16(f + 14 + 6, 0x0010);	/* offset 128: a non-first fragment */
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	ck_assert_int_eq(p.fragment, 1);
	ck_assert_int_eq(p.tcp, 0);
}
END_TEST

START_TEST(options)
{
	uint8_t		 f[2048];
	struct pkt	 p;
	struct pkt_tcpopt o;
	size_t		 len = build(f, &shapes[0]);

	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	ck_assert_int_eq(pkt_tcp_options(&p, f, &o), 0);
	ck_assert(o.mss_set && o.wscale_set && o.sack_ok && o.ts_set);
	ck_assert_uint_eq(o.mss, 1460);
	ck_assert_uint_eq(o.wscale, 7);
	ck_assert_uint_eq(o.tsval, 1);
	ck_assert_uint_eq(o.tsecr, 0);
	/* A window scale over 14 is read as 14. */
	f[p.l4off + 20 + 19] = 20;
	ck_assert_int_eq(pkt_tcp_options(&p, f, &o), 0);
	ck_assert_uint_eq(o.wscale, 14);
	/* An option running past the header is malformed. */
	f[p.l4off + 20 + 18] = 9;
	ck_assert_int_eq(pkt_tcp_options(&p, f, &o), -1);
	/* A zero length would loop forever if accepted. */
	f[p.l4off + 20 + 17] = 3;
	f[p.l4off + 20 + 18] = 0;
	ck_assert_int_eq(pkt_tcp_options(&p, f, &o), -1);
}
END_TEST

/* Every rewrite leaves checksums equal to a full recomputation. */
START_TEST(rewrite_checksums)
{
	const struct build *b = &shapes[_i];
	uint8_t		 f[2048];
	struct pkt	 p, q;
	size_t		 len = build(f, b);
	unsigned	 w;
	uint8_t		 e;

	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	for (w = 0; w < 65536; w += 257) {
		pkt_tcp_set_win(f, &p, (uint16_t)w, 0);
		ck_assert_int_eq(pkt_parse(&q, f, len), PKT_OK);
		ck_assert_uint_eq(q.win, w);
		ck_assert_uint_eq(pkt_tcp_csum(f, &q),
		    (f[q.l4off + 16] << 8) | f[q.l4off + 17]);
	}
	pkt_tcp_set_flags(f, &p, TCP_ACK | TCP_ECE | TCP_CWR, 0);
	ck_assert_int_eq(pkt_parse(&q, f, len), PKT_OK);
	ck_assert_uint_eq(q.flags, TCP_ACK | TCP_ECE | TCP_CWR);
	ck_assert_uint_eq(q.tcp_hlen, p.tcp_hlen);
	ck_assert_uint_eq(pkt_tcp_csum(f, &q), (f[q.l4off + 16] << 8) |
	    f[q.l4off + 17]);
	for (e = 0; e < 4; e++) {
		pkt_set_ecn(f, &p, e);
		ck_assert_int_eq(pkt_parse(&q, f, len), PKT_OK);
		ck_assert_uint_eq(q.ecn, e);
		if (q.ipver == 4)
			ck_assert_uint_eq(pkt_ipv4_csum(f, &q),
			    (f[q.l3off + 10] << 8) | f[q.l3off + 11]);
		else	/* the flow label and version are untouched */
			ck_assert_uint_eq(f[q.l3off] >> 4, 6);
	}
}
END_TEST

START_TEST(mark_ce)
{
	uint8_t		 f[2048];
	struct pkt	 p;
	size_t		 i, len;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		len = build(f, &shapes[i]);
		ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
		ck_assert_int_eq(pkt_mark_ce(f, &p),
		    shapes[i].ecn != PKT_ECN_NOT_ECT);
		ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
		ck_assert_uint_eq(p.ecn, shapes[i].ecn == PKT_ECN_NOT_ECT ?
		    PKT_ECN_NOT_ECT : PKT_ECN_CE);
		if (p.ipver == 4)
			ck_assert_uint_eq(pkt_ipv4_csum(f, &p),
			    (f[p.l3off + 10] << 8) | f[p.l3off + 11]);
	}
}
END_TEST

/* With partial checksums the TCP field is the device's business. */
START_TEST(partial)
{
	uint8_t		 f[2048];
	struct pkt	 p;
	size_t		 len = build(f, &shapes[1]);
	uint8_t		 c0, c1;

	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	c0 = f[p.l4off + 16];
	c1 = f[p.l4off + 17];
	pkt_tcp_set_win(f, &p, 7, 1);
	pkt_tcp_set_flags(f, &p, TCP_ACK | TCP_CWR, 1);
	ck_assert_uint_eq(f[p.l4off + 16], c0);
	ck_assert_uint_eq(f[p.l4off + 17], c1);
	ck_assert_uint_eq(p.win, 7);
}
END_TEST

START_TEST(csum_update_rfc1624)
{
	/* RFC 1624 section 4: the case where eqn. 2 gives 0x0000 wrongly. */
	ck_assert_uint_eq(pkt_csum_update(0xdd2f, 0x5555, 0x3285), 0x0000);
	ck_assert_uint_eq(pkt_csum_update(0x1234, 0x0000, 0x0000), 0x1234);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("pkt");
	TCase	*tc = tcase_create("headers");
	SRunner	*sr;
	int	 n = (int)(sizeof(shapes) / sizeof(shapes[0])), failed;

	tcase_add_loop_test(tc, parse_shapes, 0, n);
	tcase_add_loop_test(tc, truncated, 0, n);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, fragments);
	tcase_add_test(tc, options);
	tcase_add_loop_test(tc, rewrite_checksums, 0, n);
	tcase_add_test(tc, mark_ce);
	tcase_add_test(tc, partial);
	tcase_add_test(tc, csum_update_rfc1624);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
