#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

static struct wire_hello
hello(const char *node, const char *net)
{
	struct wire_hello h;

	memset(&h, 0, sizeof(h));
	h.version = WIRE_VERSION;
	h.keepalive = 10;
	snprintf(h.node, sizeof(h.node), "%s", node);
	snprintf(h.network, sizeof(h.network), "%s", net);
	return h;
}

START_TEST(hello_roundtrip)
{
	struct wire_hello h = hello("host1", "home"), g;
	struct wire_hdr	 hdr;
	uint8_t		 buf[WIRE_HDR_LEN + WIRE_HELLO_MAX];
	const char	*why = NULL;
	size_t		 n;

	n = wire_hello_encode(buf, sizeof(buf), &h);
	ck_assert_uint_eq(n, WIRE_HDR_LEN + 4 + 6 + 1 + 5 + 1 + 4);
	ck_assert_int_eq(wire_hdr_decode(buf, n, &hdr, &why), 0);
	ck_assert_uint_eq(hdr.type, WIRE_HELLO);
	ck_assert_uint_eq(hdr.len, n - WIRE_HDR_LEN);
	ck_assert_int_eq(wire_hello_decode(buf + WIRE_HDR_LEN, hdr.len, &g,
	    &why), 0);
	ck_assert_uint_eq(g.version, WIRE_VERSION);
	ck_assert_uint_eq(g.keepalive, 10);
	ck_assert_str_eq(g.node, "host1");
	ck_assert_str_eq(g.network, "home");
	/* A buffer too small is refused, not overrun. */
	ck_assert_uint_eq(wire_hello_encode(buf, n - 1, &h), 0);
}
END_TEST

/* Every truncation of a valid hello is rejected with a reason. */
START_TEST(hello_truncated)
{
	struct wire_hello h = hello("proxy", "vnet"), g;
	uint8_t		 buf[WIRE_HDR_LEN + WIRE_HELLO_MAX];
	const char	*why;
	size_t		 n, i;

	n = wire_hello_encode(buf, sizeof(buf), &h) - WIRE_HDR_LEN;
	for (i = 0; i < n; i++) {
		why = NULL;
		ck_assert_int_eq(wire_hello_decode(buf + WIRE_HDR_LEN, i, &g,
		    &why), -1);
		ck_assert_ptr_nonnull(why);
	}
	/* And one byte too many is rejected too. */
	buf[WIRE_HDR_LEN + n] = 0;
	ck_assert_int_eq(wire_hello_decode(buf + WIRE_HDR_LEN, n + 1, &g, &why),
	    -1);
	ck_assert_str_eq(why, "trailing bytes in hello");
}
END_TEST

START_TEST(hello_bad_fields)
{
	struct wire_hello h = hello("proxy", "vnet"), g;
	uint8_t		 buf[WIRE_HDR_LEN + WIRE_HELLO_MAX], *p = buf + WIRE_HDR_LEN;
	const char	*why;
	size_t		 n;

	n = wire_hello_encode(buf, sizeof(buf), &h) - WIRE_HDR_LEN;
	p[0] = 'X';
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), -1);
	ck_assert_str_eq(why, "not a vnet hello");
	p[0] = 'V';
	p[5] = 2;	/* version 2 */
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), -1);
	ck_assert_str_eq(why, "unsupported protocol version");
	p[5] = 1;
	p[8] = 0;
	p[9] = 0;	/* keepalive 0 */
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), -1);
	ck_assert_str_eq(why, "keepalive out of range");
	p[9] = 10;
	p[11] = '/';	/* node name "/roxy" */
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), -1);
	ck_assert_str_eq(why, "bad node name");
	p[11] = 'p';
	p[10] = 0;	/* empty node name */
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), -1);
	ck_assert_str_eq(why, "bad node name");
	p[10] = 200;	/* longer than the message */
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), -1);
	p[10] = 5;
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), 0);
	/* A NUL inside a name: "p\0oxy" must not pass for "p" (found by fuzz_wire). */
	p[12] = '\0';
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), -1);
	ck_assert_str_eq(why, "bad node name");
	p[12] = 'r';
	p[n - 1] = '\0';	/* last byte of the network name */
	ck_assert_int_eq(wire_hello_decode(p, n, &g, &why), -1);
	ck_assert_str_eq(why, "bad network name");
}
END_TEST

START_TEST(frame_roundtrip)
{
	uint8_t		 buf[WIRE_HDR_LEN + WIRE_FRAME_PREFIX + 60];
	struct wire_hdr	 hdr;
	struct wire_frame f;
	const char	*why;
	size_t		 i;

	for (i = 0; i < 60; i++)
		buf[WIRE_HDR_LEN + WIRE_FRAME_PREFIX + i] = (uint8_t)i;
	wire_frame_encode_prefix(buf, 60, 16, 0xdeadbeef, 42,
	    (const uint8_t *)"\x01\x01\x36\0\xa8\x05\x22\0\x10\0\0\0");
	ck_assert_int_eq(wire_hdr_decode(buf, WIRE_HDR_LEN, &hdr, &why), 0);
	ck_assert_uint_eq(hdr.type, WIRE_FRAME);
	ck_assert_uint_eq(hdr.hops, 16);
	ck_assert_uint_eq(hdr.len, WIRE_FRAME_PREFIX + 60);
	ck_assert_int_eq(wire_frame_decode(buf + WIRE_HDR_LEN, hdr.len, &f,
	    &why), 0);
	ck_assert_uint_eq(f.origin, 0xdeadbeef);
	ck_assert_uint_eq(f.seq, 42);
	ck_assert_uint_eq(f.len, 60);
	ck_assert_ptr_eq(f.eth, buf + WIRE_HDR_LEN + WIRE_FRAME_PREFIX);
	/* The offload header travels unchanged, just before the frame. */
	ck_assert_ptr_eq(f.vh, f.eth - WIRE_VNET_HDR_LEN);
	ck_assert_int_eq(memcmp(f.vh, "\x01\x01\x36\0\xa8\x05\x22\0\x10\0\0\0",
	    WIRE_VNET_HDR_LEN), 0);
	/* No header given: zeros. */
	wire_frame_encode_prefix(buf, 60, 16, 1, 2, NULL);
	ck_assert_int_eq(wire_frame_decode(buf + WIRE_HDR_LEN, WIRE_FRAME_PREFIX +
	    60, &f, &why), 0);
	ck_assert_int_eq(memcmp(f.vh, "\0\0\0\0\0\0\0\0\0\0\0\0",
	    WIRE_VNET_HDR_LEN), 0);
	ck_assert_int_eq(memcmp(f.eth + 10, (uint8_t[]){ 10, 11, 12 }, 3), 0);
	/* Runt frames: shorter than an Ethernet header. */
	ck_assert_int_eq(wire_frame_decode(buf + WIRE_HDR_LEN,
	    WIRE_FRAME_PREFIX + 13, &f, &why), -1);
	ck_assert_int_eq(wire_frame_decode(buf + WIRE_HDR_LEN, 7, &f, &why), -1);
}
END_TEST

START_TEST(hdr_limits)
{
	uint8_t		 b[WIRE_HDR_LEN];
	struct wire_hdr	 h, o;
	const char	*why;

	memset(&h, 0, sizeof(h));
	h.type = WIRE_FRAME;
	h.len = WIRE_PAYLOAD_MAX;
	wire_hdr_encode(b, &h);
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), 0);
	ck_assert_uint_eq(o.len, WIRE_PAYLOAD_MAX);
	/* The largest frame is 64 KiB: one more byte is refused. */
	h.len = WIRE_PAYLOAD_MAX + 1;
	wire_hdr_encode(b, &h);
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), -1);
	ck_assert_str_eq(why, "oversized frame");
	h.len = 0xffffffff;
	wire_hdr_encode(b, &h);
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), -1);
	h.len = WIRE_FRAME_PREFIX + WIRE_FRAME_MIN - 1;
	wire_hdr_encode(b, &h);
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), -1);
	ck_assert_str_eq(why, "runt frame");

	h.type = WIRE_HELLO;
	h.len = WIRE_HELLO_MAX + 1;
	wire_hdr_encode(b, &h);
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), -1);
	ck_assert_str_eq(why, "oversized hello");

	h.type = WIRE_KEEPALIVE;
	h.len = 1;
	wire_hdr_encode(b, &h);
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), -1);
	wire_empty_encode(b, WIRE_KEEPALIVE);
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), 0);
	ck_assert_uint_eq(o.type, WIRE_KEEPALIVE);
	wire_empty_encode(b, WIRE_BYE);
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), 0);
	ck_assert_uint_eq(o.type, WIRE_BYE);

	/* Unknown type, reserved byte, flags. */
	wire_empty_encode(b, WIRE_KEEPALIVE);
	b[0] = 99;
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), -1);
	ck_assert_str_eq(why, "unknown message type");
	wire_empty_encode(b, WIRE_KEEPALIVE);
	b[3] = 1;
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), -1);
	wire_empty_encode(b, WIRE_KEEPALIVE);
	b[1] = 1;
	ck_assert_int_eq(wire_hdr_decode(b, sizeof(b), &o, &why), -1);
	/* Truncated header. */
	wire_empty_encode(b, WIRE_KEEPALIVE);
	ck_assert_int_eq(wire_hdr_decode(b, WIRE_HDR_LEN - 1, &o, &why), -1);
	ck_assert_str_eq(why, "short header");
}
END_TEST

/* Arbitrary bytes never crash the decoders and never yield out-of-range lengths. */
START_TEST(random_input)
{
	uint8_t		 b[64];
	struct wire_hdr	 h;
	struct wire_hello g;
	struct wire_frame f;
	const char	*why;
	int		 i;
	size_t		 j;

	srandom(1);
	for (i = 0; i < 100000; i++) {
		for (j = 0; j < sizeof(b); j++)
			b[j] = (uint8_t)random();
		if (i % 3 == 0)
			memcpy(b, "VNET\0\1", 6);
		if (wire_hdr_decode(b, sizeof(b), &h, &why) == 0)
			ck_assert_uint_le(h.len, WIRE_PAYLOAD_MAX);
		if (wire_hello_decode(b, (size_t)(i % 64), &g, &why) == 0) {
			ck_assert_uint_le(strlen(g.node), WIRE_NAME_MAX);
			ck_assert_uint_le(strlen(g.network), WIRE_NAME_MAX);
		}
		if (wire_frame_decode(b, (size_t)(i % 64), &f, &why) == 0)
			ck_assert_uint_eq(f.len, (size_t)(i % 64) - WIRE_FRAME_PREFIX);
	}
}
END_TEST

/* Every hello capability is a bit of its own. */
START_TEST(caps_distinct)
{
	static const uint16_t caps[] = {
		WIRE_CAP_GSO, WIRE_CAP_NODES_V1, WIRE_CAP_NODES,
		WIRE_CAP_SHORTCUT, WIRE_CAP_DGRAM, WIRE_CAP_SIGNED,
		WIRE_CAP_LIVENESS,
		WIRE_CAP_SEEN,
	};
	uint16_t	 seen = 0;
	size_t		 i;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		ck_assert_uint_eq(caps[i] & (caps[i] - 1), 0);
		ck_assert_uint_eq(seen & caps[i], 0);
		seen |= caps[i];
	}
}
END_TEST

START_TEST(probe_codec)
{
	struct wire_probe	 pr = { 3, 3, 200 }, back;
	uint8_t			 buf[WIRE_HDR_LEN + WIRE_PROBE_LEN];
	struct wire_hdr		 h;
	const char		*why;
	static const uint8_t	 bad[][WIRE_PROBE_LEN] = {
		{ 4, 3, 0, 200 },	/* no such state */
		{ 0x84, 3, 0, 200 },	/* nor with the missing bit */
		{ 3, 1, 0, 200 },	/* multiplier below 2 */
		{ 3, 3, 0, 9 },		/* interval below 10 ms */
		{ 3, 3, 0xea, 0x61 },	/* 60001 ms */
	};
	size_t			 i;

	wire_probe_encode(buf, &pr);
	ck_assert_int_eq(wire_hdr_decode(buf, sizeof(buf), &h, &why), 0);
	ck_assert_uint_eq(h.type, WIRE_PROBE);
	ck_assert_uint_eq(h.len, WIRE_PROBE_LEN);
	ck_assert_int_eq(wire_probe_decode(buf + WIRE_HDR_LEN,
	    WIRE_PROBE_LEN, &back, &why), 0);
	ck_assert_mem_eq(&pr, &back, sizeof(pr));
	ck_assert_int_eq(wire_probe_decode(buf + WIRE_HDR_LEN, 3, &back,
	    &why), -1);
	/* The state byte's high bit: the sender misses ours. */
	pr.state = 3 | WIRE_PROBE_MISSING;
	wire_probe_encode(buf, &pr);
	ck_assert_int_eq(wire_probe_decode(buf + WIRE_HDR_LEN,
	    WIRE_PROBE_LEN, &back, &why), 0);
	ck_assert_uint_eq(back.state, 3 | WIRE_PROBE_MISSING);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_int_eq(wire_probe_decode(bad[i], WIRE_PROBE_LEN,
		    &back, &why), -1);
		ck_assert_str_eq(why, "bad probe");
	}
	/* A probe header of another length is malformed. */
	buf[7] = 5;
	ck_assert_int_eq(wire_hdr_decode(buf, sizeof(buf), &h, &why), -1);
	ck_assert_str_eq(why, "probe of the wrong length");
}
END_TEST

START_TEST(seen_codec)
{
	struct wire_seen s, g;
	struct wire_hdr	 h;
	uint8_t		 buf[WIRE_HDR_LEN + 2 + WIRE_SEEN_ADDR_MAX];
	const char	*why = NULL;
	size_t		 n;

	memset(&s, 0, sizeof(s));
	s.kind = WIRE_SEEN_DGRAM;
	snprintf(s.addr, sizeof(s.addr), "198.51.100.2:7870");
	n = wire_seen_encode(buf, &s);
	ck_assert_uint_eq(n, WIRE_HDR_LEN + 2 + 17);
	ck_assert_int_eq(wire_hdr_decode(buf, n, &h, &why), 0);
	ck_assert_uint_eq(h.type, WIRE_SEEN);
	ck_assert_int_eq(wire_seen_decode(buf + WIRE_HDR_LEN, h.len, &g, &why),
	    0);
	ck_assert_uint_eq(g.kind, WIRE_SEEN_DGRAM);
	ck_assert_str_eq(g.addr, "198.51.100.2:7870");
	/* A length that does not fit, an unprintable byte, no address. */
	ck_assert_int_eq(wire_seen_decode(buf + WIRE_HDR_LEN, h.len - 1, &g,
	    &why), -1);
	buf[WIRE_HDR_LEN + 5] = ' ';
	ck_assert_int_eq(wire_seen_decode(buf + WIRE_HDR_LEN, h.len, &g, &why),
	    -1);
	s.addr[0] = '\0';
	ck_assert_uint_eq(wire_seen_encode(buf, &s), 0);
	/* The header holds the length to its bounds. */
	h.type = WIRE_SEEN;
	h.flags = h.hops = 0;
	h.len = 2;
	wire_hdr_encode(buf, &h);
	ck_assert_int_eq(wire_hdr_decode(buf, WIRE_HDR_LEN, &h, &why), -1);
	h.len = 2 + WIRE_SEEN_ADDR_MAX + 1;
	wire_hdr_encode(buf, &h);
	ck_assert_int_eq(wire_hdr_decode(buf, WIRE_HDR_LEN, &h, &why), -1);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("wire");
	TCase	*tc = tcase_create("codec");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, hello_roundtrip);
	tcase_add_test(tc, hello_truncated);
	tcase_add_test(tc, hello_bad_fields);
	tcase_add_test(tc, frame_roundtrip);
	tcase_add_test(tc, hdr_limits);
	tcase_add_test(tc, random_input);
	tcase_add_test(tc, caps_distinct);
	tcase_add_test(tc, probe_codec);
	tcase_add_test(tc, seen_codec);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
