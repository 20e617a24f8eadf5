/*
 * The holes being punched (punch.h) on an injected clock: one toward a
 * node at a time, PUNCH_MAX in all, each slot free again when its punch
 * ends or PUNCH_MS after it began; asked once a round for each of more
 * peers than slots, as shortcut.c asks, no node has two going and no more
 * than PUNCH_MAX go at once.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "punch.h"

START_TEST(one_per_node)
{
	struct punch	 p;
	uint64_t	 t = 1000;
	int		 s;

	memset(&p, 0, sizeof(p));
	ck_assert_int_ge(s = punch_take(&p, "host1", t), 0);
	ck_assert_int_eq(punch_take(&p, "host1", t + 1), -1);
	ck_assert_int_eq(punch_take(&p, "host1", t + PUNCH_MS - 1), -1);
	/* Another node meanwhile. */
	ck_assert_int_ge(punch_take(&p, "host2", t + 1), 0);
	ck_assert_uint_eq(punch_count(&p, t + 1), 2);
	/* Its time is over: again. */
	ck_assert_int_eq(punch_take(&p, "host1", t + PUNCH_MS), s);
	/* Ended (through or failed): again at once. */
	punch_end(&p, s);
	ck_assert_uint_eq(punch_count(&p, t + PUNCH_MS), 1);
	ck_assert_int_ge(punch_take(&p, "host1", t + PUNCH_MS), 0);
	punch_end(&p, -1);
	punch_end(&p, PUNCH_MAX);
}
END_TEST

START_TEST(bound_in_all)
{
	struct punch	 p;
	char		 name[16];
	uint64_t	 t = 5000;
	int		 i, s, first = -1;

	memset(&p, 0, sizeof(p));
	for (i = 0; i < PUNCH_MAX; i++) {
		snprintf(name, sizeof(name), "host%d", i);
		ck_assert_int_ge(s = punch_take(&p, name, t + (uint64_t)i), 0);
		if (first == -1)
			first = s;
	}
	ck_assert_uint_eq(punch_count(&p, t + PUNCH_MAX), PUNCH_MAX);
	ck_assert_int_eq(punch_take(&p, "late", t + PUNCH_MAX), -1);
	/* The first one's time is over, the others' not. */
	ck_assert_int_eq(punch_take(&p, "late", t + PUNCH_MS), first);
	ck_assert_int_eq(punch_take(&p, "later", t + PUNCH_MS), -1);
	punch_end(&p, 3);
	ck_assert_int_eq(punch_take(&p, "later", t + PUNCH_MS), 3);
	ck_assert_uint_eq(punch_count(&p, t + PUNCH_MS), PUNCH_MAX);
	ck_assert_uint_eq(punch_count(&p, t + 2 * PUNCH_MS + PUNCH_MAX), 0);
}
END_TEST

/*
 * 20 peers above the threshold, each asked for once a second (shortcut.c's
 * round) for a minute, none through: the starts of each node's punches
 * are PUNCH_MS apart, never more than PUNCH_MAX at once, and the slots
 * are all used.
 */
START_TEST(rounds)
{
	struct punch	 p;
	uint64_t	 last[20], t, starts = 0;
	char		 name[16];
	int		 i;

	memset(&p, 0, sizeof(p));
	memset(last, 0, sizeof(last));
	for (t = 1000; t < 61000; t += 1000) {
		for (i = 0; i < 20; i++) {
			snprintf(name, sizeof(name), "host%02d", i);
			if (punch_take(&p, name, t + (uint64_t)i) == -1)
				continue;
			starts++;
			if (last[i] != 0)
				ck_assert_uint_ge(t + (uint64_t)i - last[i],
				    PUNCH_MS);
			last[i] = t + (uint64_t)i;
		}
		ck_assert_uint_le(punch_count(&p, t + 20), PUNCH_MAX);
	}
	/* 8 slots of 4 s for 60 s: 120 starts, as many as there can be. */
	ck_assert_uint_eq(starts, 60000 / PUNCH_MS * PUNCH_MAX);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("punch");
	TCase	*tc = tcase_create("punch");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, one_per_node);
	tcase_add_test(tc, bound_in_all);
	tcase_add_test(tc, rounds);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
