/*
 * The pure parts of the capture and qemu backends: the memory of injected
 * frames (inject.c) and QEMU's stream framing (qemuif_parse).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iface.h"
#include "inject.h"

static uint8_t	 frame_a[60], frame_b[60];

static void
frames_init(void)
{
	memset(frame_a, 0, sizeof(frame_a));
	memcpy(frame_a, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x06", 14);
	memcpy(frame_b, frame_a, sizeof(frame_b));
	frame_b[30] = 1;
}

START_TEST(inject_seen_within_a_second)
{
	struct inject_memory	 m;

	frames_init();
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(inject_seen(&m, frame_a, sizeof(frame_a), 5000), 0);
	inject_remember(&m, frame_a, sizeof(frame_a), 5000);
	ck_assert_int_eq(inject_seen(&m, frame_a, sizeof(frame_a), 5000), 1);
	ck_assert_int_eq(inject_seen(&m, frame_a, sizeof(frame_a), 5999), 1);
	ck_assert_int_eq(inject_seen(&m, frame_a, sizeof(frame_a), 6000), 0);
	ck_assert_int_eq(inject_seen(&m, frame_b, sizeof(frame_b), 5000), 0);
}
END_TEST

/* A short frame that comes back padded to the minimum is the same frame. */
START_TEST(inject_padding)
{
	struct inject_memory	 m;

	frames_init();
	memset(&m, 0, sizeof(m));
	inject_remember(&m, frame_a, 42, 100);
	ck_assert_int_eq(inject_seen(&m, frame_a, sizeof(frame_a), 100), 1);
}
END_TEST

/* The oldest entries make room: a frame remembered INJECT_RECENT ago is gone. */
START_TEST(inject_bounded)
{
	struct inject_memory	 m;
	uint8_t			 f[60];
	int			 i;

	frames_init();
	memset(&m, 0, sizeof(m));
	inject_remember(&m, frame_a, sizeof(frame_a), 100);
	memcpy(f, frame_a, sizeof(f));
	for (i = 0; i < INJECT_RECENT; i++) {
		f[40] = (uint8_t)i;
		f[41] = (uint8_t)(i >> 8);
		f[42] = 0xee;
		inject_remember(&m, f, sizeof(f), 100);
	}
	ck_assert_int_eq(inject_seen(&m, frame_a, sizeof(frame_a), 100), 0);
}
END_TEST

struct got {
	size_t		 n;
	size_t		 stop_after;	/* got_cb stops the parse after so many */
	size_t		 len[8];
	uint8_t		 first[8];
};

static int
got_cb(const uint8_t *frame, size_t len, void *arg)
{
	struct got	*g = arg;

	ck_assert_uint_lt(g->n, 8);
	g->len[g->n] = len;
	g->first[g->n] = frame[0];
	g->n++;
	return g->n == g->stop_after;
}

START_TEST(qemu_frames)
{
	/* Two frames of 3 and 1 bytes, and the start of a third. */
	static const uint8_t	 s[] = { 0, 0, 0, 3, 0xa1, 0xa2, 0xa3,
	    0, 0, 0, 1, 0xb1, 0, 0, 0, 9, 0xc1 };
	struct got		 g;
	size_t			 used;

	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(qemuif_parse(s, sizeof(s), &used, got_cb, &g), 2);
	ck_assert_uint_eq(used, 12);
	ck_assert_uint_eq(g.len[0], 3);
	ck_assert_uint_eq(g.first[0], 0xa1);
	ck_assert_uint_eq(g.len[1], 1);
	ck_assert_uint_eq(g.first[1], 0xb1);
	/* Nothing whole yet: a partial prefix, then a partial frame. */
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(qemuif_parse(s, 3, &used, got_cb, &g), 0);
	ck_assert_uint_eq(used, 0);
	ck_assert_int_eq(qemuif_parse(s, 6, &used, got_cb, &g), 0);
	ck_assert_uint_eq(used, 0);
	ck_assert_uint_eq(g.n, 0);
}
END_TEST

/* The callback stops the parse (the interface went down under it). */
START_TEST(qemu_stop)
{
	static const uint8_t	 s[] = { 0, 0, 0, 3, 0xa1, 0xa2, 0xa3,
	    0, 0, 0, 1, 0xb1, 0, 0, 0, 1, 0xc1 };
	struct got		 g;
	size_t			 used;

	memset(&g, 0, sizeof(g));
	g.stop_after = 1;
	ck_assert_int_eq(qemuif_parse(s, sizeof(s), &used, got_cb, &g), 1);
	ck_assert_uint_eq(used, 7);
	ck_assert_uint_eq(g.n, 1);
	g.stop_after = 3;
	ck_assert_int_eq(qemuif_parse(s + used, sizeof(s) - used, &used,
	    got_cb, &g), 2);
	ck_assert_uint_eq(used, 10);
	ck_assert_uint_eq(g.n, 3);
}
END_TEST

START_TEST(qemu_bad_lengths)
{
	static const uint8_t	 zero[] = { 0, 0, 0, 0, 1 };
	static const uint8_t	 huge[] = { 0, 1, 0x10, 1 };	/* 69633 */
	static const uint8_t	 max[] = { 0, 1, 0x10, 0 };	/* 69632 */
	struct got		 g;
	size_t			 used;

	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(qemuif_parse(zero, sizeof(zero), &used, got_cb, &g), -1);
	ck_assert_int_eq(qemuif_parse(huge, sizeof(huge), &used, got_cb, &g), -1);
	/* The largest QEMU sends is only waited for. */
	ck_assert_int_eq(qemuif_parse(max, sizeof(max), &used, got_cb, &g), 0);
	ck_assert_uint_eq(g.n, 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("capture");
	TCase	*tc = tcase_create("inject");
	TCase	*tq = tcase_create("qemu");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, inject_seen_within_a_second);
	tcase_add_test(tc, inject_padding);
	tcase_add_test(tc, inject_bounded);
	tcase_add_test(tq, qemu_frames);
	tcase_add_test(tq, qemu_stop);
	tcase_add_test(tq, qemu_bad_lengths);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tq);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
