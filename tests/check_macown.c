/*
 * The rules of MAC ownership (macown.h) with an injected clock: bounded
 * versions (saturated), an owner's answer to a claim (silent, gone, still
 * sending, frozen, out of bounds), and the damping: five moves within the
 * window freeze, moves further apart do not, the freeze ends after the
 * hold and the record is then idle.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "macown.h"

START_TEST(versions)
{
	ck_assert_int_eq(macown_version_ok(0, UINT32_MAX), 1);
	ck_assert_int_eq(macown_version_ok(1, 2), 1);
	ck_assert_int_eq(macown_version_ok(1, 1 + MACOWN_STEP), 1);
	ck_assert_int_eq(macown_version_ok(1, 2 + MACOWN_STEP), 0);
	ck_assert_int_eq(macown_version_ok(7, UINT32_MAX), 0);
	ck_assert_int_eq(macown_version_ok(UINT32_MAX - 1, UINT32_MAX), 1);
	ck_assert_uint_eq(macown_next(1), 2);
	ck_assert_uint_eq(macown_next(UINT32_MAX), UINT32_MAX);
}
END_TEST

START_TEST(answers)
{
	struct macown_mob	 mob = { 0, 0, 0 };
	uint64_t		 t = 100000;

	/* Sent 10 ms ago: kept; a second ago: let go; interface gone: let go. */
	ck_assert_int_eq(macown_answer(3, 4, t - 10, 1, NULL, t),
	    MACOWN_KEEP_LIVE);
	ck_assert_int_eq(macown_answer(3, 4, t - MACOWN_SILENT_MS, 1, NULL, t),
	    MACOWN_YIELD);
	ck_assert_int_eq(macown_answer(3, 4, t - 10, 0, NULL, t), MACOWN_YIELD);
	/* However silent, a jump is refused. */
	ck_assert_int_eq(macown_answer(3, UINT32_MAX, 0, 0, NULL, t),
	    MACOWN_KEEP_JUMP);
	/* Frozen: kept even when gone. */
	mob.frozen_until = t + 1;
	ck_assert_int_eq(macown_answer(3, 4, 0, 0, &mob, t),
	    MACOWN_KEEP_FROZEN);
	ck_assert_int_eq(macown_answer(3, 4, 0, 0, &mob, t + 1), MACOWN_YIELD);
}
END_TEST

START_TEST(damping)
{
	struct macown_mob	 m = { 0, 0, 0 };
	uint64_t		 t = 5000;
	int			 i;

	for (i = 1; i < MACOWN_MOVES; i++) {
		ck_assert_int_eq(macown_move(&m, t), 0);
		t += 10000;
	}
	ck_assert_int_eq(macown_frozen(&m, t), 0);
	ck_assert_int_eq(macown_idle(&m, t), 0);
	ck_assert_int_eq(macown_move(&m, t), 1);
	ck_assert_int_eq(macown_frozen(&m, t), 1);
	/* Frozen: moves are not counted, and no second alarm. */
	ck_assert_int_eq(macown_move(&m, t + 1), 0);
	ck_assert_int_eq(macown_frozen(&m, t + MACOWN_HOLD_MS - 1), 1);
	ck_assert_int_eq(macown_idle(&m, t + MACOWN_HOLD_MS - 1), 0);
	/* The hold is over: free to go, and forgettable. */
	ck_assert_int_eq(macown_frozen(&m, t + MACOWN_HOLD_MS), 0);
	ck_assert_int_eq(macown_idle(&m, t + MACOWN_HOLD_MS), 1);
}
END_TEST

START_TEST(slow_moves)
{
	struct macown_mob	 m = { 0, 0, 0 };
	uint64_t		 t = 0;
	int			 i;

	/* Four moves a window, window after window: never frozen. */
	for (i = 0; i < 40; i++) {
		ck_assert_int_eq(macown_move(&m, t), 0);
		t += MACOWN_WINDOW_MS / (MACOWN_MOVES - 1);
	}
	ck_assert_int_eq(macown_idle(&m, t + MACOWN_WINDOW_MS), 1);
}
END_TEST

int
main(void)
{
	Suite	*su = suite_create("macown");
	TCase	*tc = tcase_create("macown");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, versions);
	tcase_add_test(tc, answers);
	tcase_add_test(tc, damping);
	tcase_add_test(tc, slow_moves);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
