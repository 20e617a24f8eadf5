/*
 * Link liveness (liveness.h) with an injected clock: two ends exchange
 * probes over a simulated link that can lose everything either way.  A
 * cut is noticed within the detection time by both ends, a cut in one
 * direction too (three-way), the return waits for the hold time, which
 * doubles for a flapping link and starts over after a quiet minute; a
 * peer without probes is judged by the frames alone; every change is one
 * callback with its reason; an idle link that quickens polls, and finds a
 * death in the fast detection time.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liveness.h"

struct end {
	struct liveness	 lv;
	unsigned int	 changes;
	char		 why[LIVENESS_WHY_MAX];
	uint64_t	 down_at, up_at;	/* last changes, ms */
	int		 answer;	/* polled: a probe at the next step */
};

struct sim {
	struct end	 a, b;
	uint64_t	 now;
	int		 ab_lost, ba_lost;	/* a -> b, b -> a */
};

static void
changed(void *arg, const struct liveness *lv, enum liveness_state from,
    const char *why)
{
	struct end	*e = arg;

	ck_assert_int_ne(from, lv->state);
	ck_assert(why != NULL && why[0] != '\0');
	snprintf(e->why, sizeof(e->why), "%s", why);
	e->changes++;
	if (lv->state == LIVENESS_DOWN)
		e->down_at = lv->since;
	if (lv->state == LIVENESS_UP)
		e->up_at = lv->since;
}

static void
sim_init(struct sim *s)
{
	memset(s, 0, sizeof(*s));
	s->now = 1000;
	liveness_init(&s->a.lv, LIVENESS_INTERVAL_DEFAULT,
	    LIVENESS_MULT_DEFAULT, 1, s->now, changed, &s->a);
	liveness_init(&s->b.lv, LIVENESS_INTERVAL_DEFAULT,
	    LIVENESS_MULT_DEFAULT, 1, s->now, changed, &s->b);
}

/* A poll is answered at the peer's next step, as link.c answers it. */
static void
step_end(struct end *from, struct end *to, int lost, uint64_t now)
{
	int	 polled;

	if (!liveness_tick(&from->lv, now) && !from->answer)
		return;
	from->answer = 0;
	polled = liveness_polling(&from->lv);
	liveness_probe_sent(&from->lv, now);
	if (!lost) {
		liveness_probe(&to->lv, now, from->lv.state,
		    from->lv.interval);
		to->answer |= polled;
	}
}

/* Runs the pair for ms, in 10 ms steps. */
static void
sim_run(struct sim *s, uint64_t ms)
{
	uint64_t	 end = s->now + ms;

	for (; s->now < end; s->now += 10) {
		step_end(&s->a, &s->b, s->ab_lost, s->now);
		step_end(&s->b, &s->a, s->ba_lost, s->now);
	}
}

START_TEST(steady)
{
	struct sim	 s;

	sim_init(&s);
	sim_run(&s, 10000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_UP);
	ck_assert_uint_eq(s.a.changes, 0);
	/* 5 probes a second at 200 ms, and one at the start. */
	ck_assert_uint_ge(s.a.lv.probes_sent, 50);
	ck_assert_uint_le(s.a.lv.probes_sent, 51);
	ck_assert_uint_eq(liveness_detect(&s.a.lv), 600);
	ck_assert(liveness_alive(&s.a.lv));
}
END_TEST

/* One end wants 2 s (its only link): both send at that pace. */
START_TEST(slower_end_paces)
{
	struct sim	 s;
	uint64_t	 cut;

	sim_init(&s);
	liveness_set(&s.b.lv, LIVENESS_ALONE_INTERVAL, LIVENESS_MULT_DEFAULT,
	    s.now);
	sim_run(&s, 20000);
	ck_assert_uint_le(s.a.lv.probes_sent, 12);
	ck_assert_uint_le(s.b.lv.probes_sent, 12);
	ck_assert_uint_eq(liveness_detect(&s.a.lv), 3 * LIVENESS_ALONE_INTERVAL);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
	ck_assert_uint_eq(s.a.changes + s.b.changes, 0);
	/* Still noticed, in the slower detection time. */
	s.ab_lost = s.ba_lost = 1;
	cut = s.now;
	sim_run(&s, 3 * LIVENESS_ALONE_INTERVAL + 500);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	ck_assert_uint_le(s.a.down_at - cut, 3 * LIVENESS_ALONE_INTERVAL + 100);
}
END_TEST

/*
 * The slow end speeds up (a host's second link came up): the other end
 * hears of the fast pace before its own next probe is due, and neither may
 * time the other out on the new detection time while the probes already
 * on their way still keep the old pace.
 */
START_TEST(pace_speeds_up)
{
	struct sim	 s;
	uint64_t	 t;

	sim_init(&s);
	liveness_set(&s.b.lv, LIVENESS_ALONE_INTERVAL, LIVENESS_MULT_DEFAULT,
	    s.now);
	sim_run(&s, 10000);
	/* At every phase of the slow pace. */
	for (t = 0; t < LIVENESS_ALONE_INTERVAL; t += 130) {
		liveness_set(&s.b.lv, LIVENESS_ALONE_INTERVAL,
		    LIVENESS_MULT_DEFAULT, s.now);
		sim_run(&s, 10000 + t);
		liveness_set(&s.b.lv, LIVENESS_INTERVAL_DEFAULT,
		    LIVENESS_MULT_DEFAULT, s.now);
		sim_run(&s, 5000);
		ck_assert_uint_eq(s.a.changes + s.b.changes, 0);
		ck_assert_uint_eq(liveness_detect(&s.a.lv),
		    3 * LIVENESS_INTERVAL_DEFAULT);
	}
	/* And a cut is noticed at the fast pace again, once the old pace's
	 * detection time has passed. */
	sim_run(&s, 3 * LIVENESS_ALONE_INTERVAL);
	t = s.now;
	s.ab_lost = s.ba_lost = 1;
	sim_run(&s, 1000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	ck_assert_uint_le(s.a.down_at - t, 600);
}
END_TEST

/*
 * An idle link at the slow pace whose frames begin again: it quickens and
 * polls.  Answered (at any phase of the slow pace), nothing changes and
 * the fast detection time holds at once; a link that died while idle is
 * found dead within the fast detection time of the poll, where the old
 * detection time alone would wait for the slow one.
 */
START_TEST(idle_poll)
{
	struct sim	 s;
	uint64_t	 t;
	int		 poll;

	sim_init(&s);
	for (t = 0; t < LIVENESS_ALONE_INTERVAL; t += 130) {
		liveness_set(&s.a.lv, LIVENESS_ALONE_INTERVAL,
		    LIVENESS_MULT_DEFAULT, s.now);
		sim_run(&s, 10000 + t);
		ck_assert_uint_eq(liveness_detect(&s.b.lv),
		    3 * LIVENESS_ALONE_INTERVAL);
		liveness_set(&s.a.lv, LIVENESS_INTERVAL_DEFAULT,
		    LIVENESS_MULT_DEFAULT, s.now);
		liveness_poll(&s.a.lv, s.now);
		ck_assert(liveness_polling(&s.a.lv));
		sim_run(&s, 50);
		ck_assert(!liveness_polling(&s.a.lv));
		ck_assert_uint_eq(s.a.lv.poll_sent, 0);
		ck_assert_uint_eq(s.a.lv.slow_until, 0);
		sim_run(&s, 5000);
		ck_assert_uint_eq(s.a.changes + s.b.changes, 0);
	}
	/* Dead while idle: with the poll, then without. */
	for (poll = 1; poll >= 0; poll--) {
		sim_init(&s);
		liveness_set(&s.a.lv, LIVENESS_ALONE_INTERVAL,
		    LIVENESS_MULT_DEFAULT, s.now);
		sim_run(&s, 10000);
		s.ab_lost = s.ba_lost = 1;
		sim_run(&s, 1000);
		ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
		t = s.now;
		liveness_set(&s.a.lv, LIVENESS_INTERVAL_DEFAULT,
		    LIVENESS_MULT_DEFAULT, s.now);
		if (poll)
			liveness_poll(&s.a.lv, s.now);
		while (s.a.lv.state != LIVENESS_DOWN && s.now - t < 10000)
			sim_run(&s, 10);
		ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
		if (poll) {
			ck_assert_uint_le(s.a.down_at - t,
			    3 * LIVENESS_INTERVAL_DEFAULT + 10);
			ck_assert_msg(strstr(s.a.why, "no answer to a poll") !=
			    NULL, "%s", s.a.why);
		} else
			ck_assert_uint_gt(s.a.down_at - t, 2000);
	}
	/* No poll toward a peer that sends no probes. */
	sim_init(&s);
	s.a.lv.peer_interval = 0;
	liveness_poll(&s.a.lv, s.now);
	ck_assert(!liveness_polling(&s.a.lv));
}
END_TEST

/*
 * The peer's probes missing (half the detection time unheard): never in a
 * steady exchange, nor while a quickened pace is judged by the old time;
 * soon after a cut, before the link is declared dead.
 */
START_TEST(missing)
{
	struct sim	 s;
	uint64_t	 t, first = 0;

	sim_init(&s);
	for (t = 0; t < 3000; t += 10) {
		sim_run(&s, 10);
		ck_assert_int_eq(liveness_missing(&s.a.lv, s.now), 0);
	}
	liveness_set(&s.b.lv, LIVENESS_ALONE_INTERVAL, LIVENESS_MULT_DEFAULT,
	    s.now);
	sim_run(&s, 10000);
	liveness_set(&s.b.lv, LIVENESS_INTERVAL_DEFAULT, LIVENESS_MULT_DEFAULT,
	    s.now);
	for (t = 0; t < 5000; t += 10) {
		sim_run(&s, 10);
		ck_assert_int_eq(liveness_missing(&s.a.lv, s.now), 0);
		ck_assert_int_eq(liveness_missing(&s.b.lv, s.now), 0);
	}
	sim_run(&s, 2 * LIVENESS_ALONE_INTERVAL);	/* past the old time */
	t = s.now;
	s.ba_lost = 1;
	while (s.a.lv.state != LIVENESS_DOWN && s.now - t < 2000) {
		sim_run(&s, 10);
		if (first == 0 && liveness_missing(&s.a.lv, s.now))
			first = s.now;
	}
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	ck_assert_uint_ne(first, 0);
	ck_assert_uint_lt(first, s.a.down_at);
	ck_assert_uint_le(first - t, 3 * LIVENESS_INTERVAL_DEFAULT / 2 + 20);
}
END_TEST

START_TEST(cut_both_ways)
{
	struct sim	 s;
	uint64_t	 cut;

	sim_init(&s);
	sim_run(&s, 1000);
	cut = s.now;
	s.ab_lost = s.ba_lost = 1;
	sim_run(&s, 2000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_DOWN);
	/* The last probe heard came up to 200 ms before the cut. */
	ck_assert_uint_le(s.a.down_at - cut, 600);
	ck_assert_uint_le(s.b.down_at - cut, 600);
	ck_assert_str_eq(s.a.lv.lost_why, "no probe heard for 600 ms");
	ck_assert_uint_eq(s.a.lv.losses, 1);
	ck_assert(!liveness_alive(&s.a.lv));

	/* Back: heard both ways, then UP only after the 2 s hold. */
	s.ab_lost = s.ba_lost = 0;
	cut = s.now;
	sim_run(&s, 1900);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_HOLD);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_HOLD);
	sim_run(&s, 600);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_UP);
	ck_assert_uint_ge(s.a.up_at - cut, LIVENESS_HOLD_MIN);
	ck_assert_str_eq(s.a.why, "alive for the hold time");
}
END_TEST

START_TEST(cut_one_way)
{
	struct sim	 s;
	uint64_t	 cut;

	sim_init(&s);
	sim_run(&s, 1000);
	cut = s.now;
	s.ab_lost = 1;		/* a's probes are lost, b's arrive */
	sim_run(&s, 3000);
	/* b heard nothing; a heard b say so and left too. */
	ck_assert_int_eq(s.b.lv.state, LIVENESS_DOWN);
	ck_assert_str_eq(s.b.lv.lost_why, "no probe heard for 600 ms");
	ck_assert_int_eq(s.a.lv.state, LIVENESS_INIT);
	ck_assert_uint_eq(s.a.lv.losses, 1);
	ck_assert_str_eq(s.a.lv.lost_why, "the peer hears nothing from us");
	ck_assert_uint_le(s.a.down_at - cut, 800);
	ck_assert(!liveness_alive(&s.a.lv));

	s.ab_lost = 0;
	sim_run(&s, 3000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_UP);

	/* The other way round. */
	s.ba_lost = 1;
	sim_run(&s, 3000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_INIT);
	s.ba_lost = 0;
	sim_run(&s, 5000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_UP);
}
END_TEST

START_TEST(stale_backlog)
{
	struct sim	 s;
	unsigned int	 i, before;

	/*
	 * A stall of TCP: the probes of before and during the cut arrive at
	 * once when it ends.  They must not keep the ends changing.
	 */
	sim_init(&s);
	sim_run(&s, 1000);
	s.ab_lost = s.ba_lost = 1;
	sim_run(&s, 3000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	before = s.a.changes + s.b.changes;
	for (i = 0; i < 20; i++) {
		liveness_probe(&s.a.lv, s.now, i < 5 ? LIVENESS_UP :
		    LIVENESS_DOWN, 200);
		liveness_probe(&s.b.lv, s.now, i < 5 ? LIVENESS_UP :
		    LIVENESS_DOWN, 200);
	}
	s.ab_lost = s.ba_lost = 0;
	sim_run(&s, 3000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_UP);
	/* Each: DOWN -> INIT -> HOLD -> UP, nothing more. */
	ck_assert_uint_le(s.a.changes + s.b.changes - before, 6);
}
END_TEST

START_TEST(crossing)
{
	struct sim	 s;
	uint64_t	 sent;

	/*
	 * A peer still UP while we are DOWN is ignored: it hears our DOWN,
	 * goes down, and both come back through INIT.
	 */
	sim_init(&s);
	sim_run(&s, 1000);
	s.ba_lost = 1;
	sim_run(&s, 700);		/* a: DOWN, b not yet */
	s.ba_lost = 0;
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	liveness_probe(&s.a.lv, s.now, LIVENESS_UP, 200);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	sent = s.a.lv.probes_sent + s.b.lv.probes_sent;
	sim_run(&s, 3000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_UP);
	/* No storm: about 5 a second each, and a few for the changes. */
	ck_assert_uint_le(s.a.lv.probes_sent + s.b.lv.probes_sent - sent, 40);
}
END_TEST

START_TEST(dampening)
{
	struct sim	 s;
	uint32_t	 want = LIVENESS_HOLD_MIN;
	int		 i;

	sim_init(&s);
	sim_run(&s, 1000);
	/* Cut for 1 s every time it is back: the hold doubles each time. */
	for (i = 0; i < 6; i++) {
		s.ab_lost = s.ba_lost = 1;
		sim_run(&s, 1000);
		ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
		ck_assert_uint_eq(s.a.lv.hold, want);
		s.ab_lost = s.ba_lost = 0;
		sim_run(&s, want - 300);
		ck_assert_int_eq(s.a.lv.state, LIVENESS_HOLD);
		sim_run(&s, 600);
		ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
		want = want * 2 > LIVENESS_HOLD_MAX ? LIVENESS_HOLD_MAX :
		    want * 2;
	}
	ck_assert_uint_eq(s.a.lv.hold, LIVENESS_HOLD_MAX);
	/* A cut in the hold counts as a flap too. */
	s.ab_lost = s.ba_lost = 1;
	sim_run(&s, 1000);
	s.ab_lost = s.ba_lost = 0;
	sim_run(&s, 1000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_HOLD);
	s.ab_lost = s.ba_lost = 1;
	sim_run(&s, 1000);
	ck_assert_uint_eq(s.a.lv.hold, LIVENESS_HOLD_MAX);
	s.ab_lost = s.ba_lost = 0;
	sim_run(&s, LIVENESS_HOLD_MAX + 500);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_UP);
	/* Up for a minute: the next loss starts over. */
	sim_run(&s, LIVENESS_FLAP_MS);
	s.ab_lost = s.ba_lost = 1;
	sim_run(&s, 1000);
	ck_assert_uint_eq(s.a.lv.hold, LIVENESS_HOLD_MIN);
}
END_TEST

START_TEST(data_evidence)
{
	struct sim	 s;
	uint64_t	 t;

	/* A probing link: frames unanswered by a talker, 2 intervals. */
	sim_init(&s);
	sim_run(&s, 1010);	/* the last probe heard just now */
	s.ab_lost = s.ba_lost = 1;
	t = s.now;
	for (; s.now < t + 1000; s.now += 10) {
		liveness_sent(&s.a.lv, s.now);
		step_end(&s.a, &s.b, 1, s.now);
	}
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
	ck_assert_uint_le(s.a.down_at - t, 400);
	ck_assert(strncmp(s.a.lv.lost_why, "frames sent, nothing heard",
	    26) == 0);
}
END_TEST

START_TEST(old_peer)
{
	struct liveness	 lv;
	struct end	 e;
	uint64_t	 now = 1000, t;

	memset(&e, 0, sizeof(e));
	liveness_init(&lv, LIVENESS_INTERVAL_DEFAULT, LIVENESS_MULT_DEFAULT,
	    0, now, changed, &e);
	/* No probes go to it, and its silence alone says nothing. */
	ck_assert_int_eq(liveness_tick(&lv, now), 0);
	ck_assert_uint_eq(liveness_detect(&lv), 0);
	ck_assert_int_eq(liveness_tick(&lv, now + 60000), 0);
	ck_assert_int_eq(lv.state, LIVENESS_UP);
	now += 60000;

	/* A talking peer (every 100 ms), then frames go unanswered. */
	for (t = now; now < t + 1000; now += 100)
		liveness_heard(&lv, now);
	t = now;
	for (; now < t + 3000; now += 10) {
		liveness_sent(&lv, now);
		(void)liveness_tick(&lv, now);
		if (lv.state == LIVENESS_DOWN)
			break;
	}
	ck_assert_int_eq(lv.state, LIVENESS_DOWN);
	ck_assert_uint_ge(now - t, LIVENESS_DATA_MS);
	ck_assert_uint_le(now - t, LIVENESS_DATA_MS + 100);
	/* Anything heard: hold, then up. */
	liveness_heard(&lv, now);
	ck_assert_int_eq(lv.state, LIVENESS_HOLD);
	(void)liveness_tick(&lv, now + LIVENESS_HOLD_MIN);
	ck_assert_int_eq(lv.state, LIVENESS_UP);

	/* A peer heard seldom (keepalives) is not judged by frames. */
	now += LIVENESS_HOLD_MIN + 10000;
	liveness_heard(&lv, now);
	t = now;
	for (; now < t + 5000; now += 10) {
		liveness_sent(&lv, now);
		(void)liveness_tick(&lv, now);
	}
	ck_assert_int_eq(lv.state, LIVENESS_UP);
	ck_assert_uint_eq(e.changes, 3);
}
END_TEST

START_TEST(no_probes_here)
{
	struct sim	 s;

	/* liveness off at a: it sends none, b falls back to the frames. */
	sim_init(&s);
	liveness_set(&s.a.lv, 0, LIVENESS_MULT_DEFAULT, s.now);
	sim_run(&s, 5000);
	ck_assert_uint_eq(s.a.lv.probes_sent, 0);
	ck_assert_int_eq(s.b.lv.state, LIVENESS_UP);
	ck_assert_uint_eq(liveness_detect(&s.b.lv), 0);
	/* a still watches b's probes. */
	s.ba_lost = 1;
	sim_run(&s, 1000);
	ck_assert_int_eq(s.a.lv.state, LIVENESS_DOWN);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("liveness");
	TCase	*tc = tcase_create("liveness");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, steady);
	tcase_add_test(tc, slower_end_paces);
	tcase_add_test(tc, pace_speeds_up);
	tcase_add_test(tc, idle_poll);
	tcase_add_test(tc, missing);
	tcase_add_test(tc, cut_both_ways);
	tcase_add_test(tc, cut_one_way);
	tcase_add_test(tc, stale_backlog);
	tcase_add_test(tc, crossing);
	tcase_add_test(tc, dampening);
	tcase_add_test(tc, data_evidence);
	tcase_add_test(tc, old_peer);
	tcase_add_test(tc, no_probes_here);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
