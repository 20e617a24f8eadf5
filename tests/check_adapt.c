/*
 * The shortcut decisions (adapt.h) with an injected clock: hold, dial,
 * up, idle, drain, close; a dial that fails backs off, doubling to the
 * cap; a shortcut that dies falls back; only the node that sorts first
 * dials; max; a hand-written link wins; adapt off drains; every change
 * logs one line, but for those that only follow the links when shortcuts
 * are off.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapt.h"
#include "stmt.h"

#define MBIT	(1000 * 1000 / 8)	/* bytes/s */

struct logbuf {
	unsigned int	 n;
	char		 last[ADAPT_LOG_MAX];
};

static void
logcb(const char *line, void *arg)
{
	struct logbuf	*l = arg;

	ck_assert_ptr_null(strchr(line, '\n'));
	if (l == NULL)
		return;
	snprintf(l->last, sizeof(l->last), "%s", line);
	l->n++;
}

static struct adapt *
mk(const char *self, struct logbuf *lb)
{
	struct adapt	*a = adapt_new(self, logcb, lb);
	struct adapt_conf c = { 1, 10 * MBIT, 3, 5, 2 };

	ck_assert_ptr_nonnull(a);
	adapt_set_conf(a, &c);
	return a;
}

static enum adapt_state
state(struct adapt *a, const char *peer)
{
	const struct adapt_peer *p = adapt_find(a, peer);

	ck_assert_ptr_nonnull(p);
	return p->state;
}

START_TEST(life_cycle)
{
	struct logbuf	 lb = { 0, "" };
	struct adapt	*a = mk("host1", &lb);
	uint64_t	 t = 1000;

	/* Below the threshold: nothing. */
	ck_assert_int_eq(adapt_observe(a, "host3", 9 * MBIT, ADAPT_LINK_NONE,
	    t), ADAPT_NONE);
	ck_assert_int_eq(state(a, "host3"), ADAPT_RELAY);
	/* Above, but not yet for the hold time. */
	ck_assert_int_eq(adapt_observe(a, "host3", 12 * MBIT, ADAPT_LINK_NONE,
	    t += 1000), ADAPT_NONE);
	ck_assert_int_eq(state(a, "host3"), ADAPT_ABOVE);
	ck_assert_int_eq(adapt_observe(a, "host3", 12 * MBIT, ADAPT_LINK_NONE,
	    t += 2000), ADAPT_NONE);
	/* A dip restarts the hold. */
	ck_assert_int_eq(adapt_observe(a, "host3", 1 * MBIT, ADAPT_LINK_NONE,
	    t += 500), ADAPT_NONE);
	ck_assert_int_eq(state(a, "host3"), ADAPT_RELAY);
	adapt_observe(a, "host3", 12 * MBIT, ADAPT_LINK_NONE, t += 500);
	ck_assert_int_eq(adapt_observe(a, "host3", 12 * MBIT,
	    ADAPT_LINK_NONE, t += 2999), ADAPT_NONE);
	ck_assert_int_eq(adapt_observe(a, "host3", 13 * MBIT,
	    ADAPT_LINK_NONE, t += 1), ADAPT_DIAL);
	ck_assert_int_eq(state(a, "host3"), ADAPT_DIALING);
	ck_assert_ptr_nonnull(strstr(lb.last, "pair host1-host3"));
	ck_assert_ptr_nonnull(strstr(lb.last, "13.0mbit"));
	ck_assert_int_eq(adapt_active(a), 1);
	ck_assert_int_eq(adapt_observe(a, "host3", 13 * MBIT,
	    ADAPT_LINK_OURS_DOWN, t += 1000), ADAPT_NONE);
	ck_assert_int_eq(adapt_observe(a, "host3", 13 * MBIT,
	    ADAPT_LINK_OURS_UP, t += 100), ADAPT_NONE);
	ck_assert_int_eq(state(a, "host3"), ADAPT_UP);
	ck_assert_uint_eq(adapt_find(a, "host3")->trigger, 13 * MBIT);
	/* Between half and the whole threshold it stays. */
	ck_assert_int_eq(adapt_observe(a, "host3", 6 * MBIT,
	    ADAPT_LINK_OURS_UP, t += 100000), ADAPT_NONE);
	ck_assert_int_eq(state(a, "host3"), ADAPT_UP);
	/* Below half for idle seconds: drain, then close. */
	adapt_observe(a, "host3", 4 * MBIT, ADAPT_LINK_OURS_UP, t += 1000);
	ck_assert_int_eq(state(a, "host3"), ADAPT_BELOW);
	ck_assert_int_eq(adapt_observe(a, "host3", 4 * MBIT,
	    ADAPT_LINK_OURS_UP, t += 4999), ADAPT_NONE);
	ck_assert_int_eq(adapt_draining(a, "host3"), 0);
	ck_assert_int_eq(adapt_observe(a, "host3", 4 * MBIT,
	    ADAPT_LINK_OURS_UP, t += 1), ADAPT_DRAIN);
	ck_assert_int_eq(adapt_draining(a, "host3"), 1);
	ck_assert_int_eq(adapt_observe(a, "host3", 0, ADAPT_LINK_OURS_UP,
	    t += ADAPT_DRAIN_MS - 1), ADAPT_NONE);
	ck_assert_int_eq(adapt_observe(a, "host3", 0, ADAPT_LINK_OURS_UP,
	    t += 1), ADAPT_CLOSE);
	ck_assert_int_eq(state(a, "host3"), ADAPT_RELAY);
	ck_assert_int_eq(adapt_active(a), 0);
	ck_assert_uint_ge(lb.n, 8);
	adapt_free(a);
}
END_TEST

START_TEST(backoff)
{
	struct logbuf	 lb = { 0, "" };
	struct adapt	*a = mk("a", &lb);
	uint64_t	 t = 0, want = ADAPT_BACKOFF_MIN;
	int		 i;

	for (i = 0; i < 12; i++) {
		adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += 1000);
		ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT,
		    ADAPT_LINK_NONE, t += 3000), ADAPT_DIAL);
		ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT,
		    ADAPT_LINK_OURS_DOWN, t += ADAPT_DIAL_MS - 1), ADAPT_NONE);
		ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT,
		    ADAPT_LINK_OURS_DOWN, t += 1), ADAPT_CLOSE);
		ck_assert_int_eq(state(a, "b"), ADAPT_BACKOFF);
		ck_assert_uint_eq(adapt_find(a, "b")->retry_ms - t, want);
		ck_assert_uint_eq(adapt_find(a, "b")->failures, i + 1);
		/* A failed dial tries the next candidate. */
		ck_assert_uint_eq(adapt_find(a, "b")->addr, i + 1);
		/* Nothing during the back-off. */
		ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT,
		    ADAPT_LINK_NONE, t += want - 1), ADAPT_NONE);
		ck_assert_int_eq(state(a, "b"), ADAPT_BACKOFF);
		adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += 1);
		ck_assert_int_eq(state(a, "b"), ADAPT_RELAY);
		want = want * 2 > ADAPT_BACKOFF_MAX ? ADAPT_BACKOFF_MAX :
		    want * 2;
	}
	ck_assert_uint_eq(want, ADAPT_BACKOFF_MAX);
	adapt_free(a);
}
END_TEST

START_TEST(dies)
{
	struct adapt	*a = mk("a", NULL);
	uint64_t	 t = 0;

	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += 1000);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 3000), ADAPT_DIAL);
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_OURS_UP, t += 100);
	ck_assert_int_eq(state(a, "b"), ADAPT_UP);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT,
	    ADAPT_LINK_OURS_DOWN, t += 1000), ADAPT_CLOSE);
	ck_assert_int_eq(state(a, "b"), ADAPT_BACKOFF);
	/* It worked there: the next dial goes to the same candidate. */
	ck_assert_uint_eq(adapt_find(a, "b")->addr, 0);
	adapt_free(a);
}
END_TEST

/* Why the direct path failed: the caller's words, kept bounded per pair. */
START_TEST(failure_words)
{
	struct logbuf	 lb = { 0, "" };
	struct adapt	*a = mk("a", &lb);
	const struct adapt_peer *p;
	char		 longer[2 * ADAPT_WHY_MAX];
	uint64_t	 t = 0;

	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += 1000);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 3000), ADAPT_DIAL);
	adapt_dialled(a, "b", "198.51.100.7:7870 (seen-udp)");
	adapt_note(a, "b", "no answer from 198.51.100.7:7870 after 3 tries");
	adapt_note(a, "nobody", "no entry: ignored");
	ck_assert_ptr_null(adapt_find(a, "nobody"));
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT,
	    ADAPT_LINK_OURS_DOWN, t += ADAPT_DIAL_MS), ADAPT_CLOSE);
	p = adapt_find(a, "b");
	ck_assert_str_eq(p->failure,
	    "no answer from 198.51.100.7:7870 after 3 tries");
	ck_assert_str_eq(p->note, "");
	ck_assert_ptr_nonnull(strstr(lb.last, "dialing -> backoff, dial "
	    "failed or timed out: no answer from 198.51.100.7:7870"));
	/* Without words from the caller, the state machine's own. */
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += ADAPT_BACKOFF_MIN);
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += 1000);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 3000), ADAPT_DIAL);
	ck_assert_str_eq(adapt_find(a, "b")->cand, "");
	/* A long one is cut to fit. */
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	adapt_note(a, "b", longer);
	ck_assert_uint_eq(strlen(adapt_find(a, "b")->note), ADAPT_WHY_MAX - 1);
	adapt_note(a, "b", "");
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT,
	    ADAPT_LINK_OURS_DOWN, t += ADAPT_DIAL_MS), ADAPT_CLOSE);
	ck_assert_str_eq(adapt_find(a, "b")->failure,
	    "dial failed or timed out");
	/* Up: the winner named, the failure gone. */
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += 2 * ADAPT_BACKOFF_MIN);
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += 1000);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 3000), ADAPT_DIAL);
	adapt_dialled(a, "b", "192.0.2.1:7870 (host)");
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_OURS_UP, t += 100);
	ck_assert_int_eq(state(a, "b"), ADAPT_UP);
	ck_assert_str_eq(adapt_find(a, "b")->failure, "");
	ck_assert_ptr_nonnull(strstr(lb.last, "by candidate 192.0.2.1:7870 "
	    "(host)"));
	adapt_free(a);
}
END_TEST

START_TEST(who_dials)
{
	struct adapt	*a = mk("host3", NULL);
	uint64_t	 t = 0;
	int		 i;

	for (i = 0; i < 10; i++)
		ck_assert_int_eq(adapt_observe(a, "host1", 20 * MBIT,
		    ADAPT_LINK_NONE, t += 1000), ADAPT_NONE);
	ck_assert_int_eq(state(a, "host1"), ADAPT_ABOVE);
	ck_assert_int_eq(adapt_observe(a, "host1", 20 * MBIT,
	    ADAPT_LINK_PEERS, t += 1000), ADAPT_NONE);
	ck_assert_int_eq(state(a, "host1"), ADAPT_PEER);
	/* max counts the peer's shortcuts too. */
	ck_assert_int_eq(adapt_active(a), 1);
	adapt_observe(a, "host1", 0, ADAPT_LINK_NONE, t += 1000);
	ck_assert_int_eq(state(a, "host1"), ADAPT_RELAY);
	adapt_free(a);
}
END_TEST

START_TEST(max_and_manual)
{
	struct adapt	*a = mk("a", NULL);
	uint64_t	 t = 0;

	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t);
	adapt_observe(a, "c", 20 * MBIT, ADAPT_LINK_NONE, t);
	adapt_observe(a, "d", 20 * MBIT, ADAPT_LINK_NONE, t);
	t += 3000;
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t),
	    ADAPT_DIAL);
	ck_assert_int_eq(adapt_observe(a, "c", 20 * MBIT, ADAPT_LINK_NONE, t),
	    ADAPT_DIAL);
	/* max 2 */
	ck_assert_int_eq(adapt_observe(a, "d", 20 * MBIT, ADAPT_LINK_NONE, t),
	    ADAPT_NONE);
	ck_assert_int_eq(state(a, "d"), ADAPT_ABOVE);
	/* A hand-written link to b: ours drains, then closes. */
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_OURS_UP, t += 100);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_MANUAL,
	    t += 100), ADAPT_DRAIN);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_MANUAL,
	    t += ADAPT_DRAIN_MS), ADAPT_CLOSE);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_MANUAL,
	    t += 100), ADAPT_NONE);
	ck_assert_int_eq(state(a, "b"), ADAPT_MANUAL);
	/* Room again: d dials. */
	ck_assert_int_eq(adapt_observe(a, "d", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 100), ADAPT_DIAL);
	adapt_free(a);
}
END_TEST

/* At max, a peer's new shortcut is refused; with room it is taken. */
START_TEST(max_counts_peers)
{
	struct adapt_stats st;
	struct adapt	*a = mk("x", NULL);
	uint64_t	 t = 0;

	/* max 2: two peers (names sorting first) dialled us. */
	ck_assert_int_eq(adapt_observe(a, "a", 20 * MBIT, ADAPT_LINK_PEERS,
	    t += 100), ADAPT_NONE);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_PEERS,
	    t += 100), ADAPT_NONE);
	ck_assert_int_eq(adapt_active(a), 2);
	/* A third: refused, and this node dials none of its own either. */
	ck_assert_int_eq(adapt_observe(a, "c", 20 * MBIT, ADAPT_LINK_PEERS,
	    t += 100), ADAPT_REFUSE);
	ck_assert_int_ne(state(a, "c"), ADAPT_PEER);
	adapt_observe(a, "y", 20 * MBIT, ADAPT_LINK_NONE, t += 100);
	ck_assert_int_eq(adapt_observe(a, "y", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 5000), ADAPT_NONE);
	ck_assert_int_eq(state(a, "y"), ADAPT_ABOVE);
	adapt_stats(a, &st);
	ck_assert_uint_ge(st.max_refused, 2);
	/* One goes: c's next try is taken. */
	adapt_observe(a, "a", 0, ADAPT_LINK_NONE, t += 100);
	ck_assert_int_eq(adapt_observe(a, "c", 20 * MBIT, ADAPT_LINK_PEERS,
	    t += 100), ADAPT_NONE);
	ck_assert_int_eq(state(a, "c"), ADAPT_PEER);
	adapt_free(a);
}
END_TEST

/*
 * Without shortcuts a hand-written link or a peer's shortcut is followed
 * (show adapt lists it) but not logged; a refusal, an action, is.
 */
START_TEST(quiet_without_shortcuts)
{
	struct logbuf	 lb = { 0, "" };
	struct adapt	*a = adapt_new("x", logcb, &lb);
	struct adapt_conf c = { 0, 10 * MBIT, 3, 5, 1 };
	uint64_t	 t = 0;

	ck_assert_ptr_nonnull(a);
	adapt_set_conf(a, &c);
	adapt_observe(a, "y", 0, ADAPT_LINK_MANUAL, t += 1000);
	ck_assert_int_eq(state(a, "y"), ADAPT_MANUAL);
	adapt_observe(a, "y", 0, ADAPT_LINK_NONE, t += 1000);
	ck_assert_int_eq(state(a, "y"), ADAPT_RELAY);
	adapt_observe(a, "a", 20 * MBIT, ADAPT_LINK_PEERS, t += 1000);
	ck_assert_int_eq(state(a, "a"), ADAPT_PEER);
	ck_assert_uint_eq(lb.n, 0);
	/* max 1: a second peer's shortcut is refused, and that is logged. */
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_PEERS,
	    t += 1000), ADAPT_REFUSE);
	ck_assert_uint_eq(lb.n, 1);
	ck_assert_ptr_nonnull(strstr(lb.last, "max shortcuts reached"));
	/* With shortcuts the same change is logged. */
	c.shortcuts = 1;
	adapt_set_conf(a, &c);
	adapt_observe(a, "y", 0, ADAPT_LINK_MANUAL, t += 1000);
	ck_assert_uint_eq(lb.n, 2);
	ck_assert_ptr_nonnull(strstr(lb.last, "-> manual"));
	adapt_free(a);
}
END_TEST

START_TEST(off)
{
	struct adapt	*a = mk("a", NULL);
	uint64_t	 t = 0;

	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 3000), ADAPT_DIAL);
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_OURS_UP, t += 100);
	adapt_pause(a, 1);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_OURS_UP,
	    t += 100), ADAPT_DRAIN);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_OURS_UP,
	    t += ADAPT_DRAIN_MS), ADAPT_CLOSE);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 100000), ADAPT_NONE);
	ck_assert_int_eq(state(a, "b"), ADAPT_RELAY);
	adapt_pause(a, 0);
	adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE, t += 100);
	ck_assert_int_eq(adapt_observe(a, "b", 20 * MBIT, ADAPT_LINK_NONE,
	    t += 3000), ADAPT_DIAL);
	adapt_free(a);
}
END_TEST

START_TEST(forget)
{
	struct adapt	*a = mk("a", NULL);

	adapt_observe(a, "b", 0, ADAPT_LINK_NONE, 0);
	adapt_observe(a, "c", 0, ADAPT_LINK_NONE, 0);
	adapt_round_end(a);
	ck_assert_uint_eq(adapt_count(a), 2);
	adapt_observe(a, "c", 0, ADAPT_LINK_NONE, 0);
	adapt_round_end(a);
	ck_assert_uint_eq(adapt_count(a), 1);
	ck_assert_ptr_null(adapt_find(a, "b"));
	adapt_free(a);
}
END_TEST

START_TEST(statement)
{
	static const char *const good[] = {
		"adapt shortcuts yes",
		"adapt shortcuts no",
		"adapt shortcuts yes threshold 2mbit hold 3 idle 10 max 4",
		"adapt off",
		"adapt on",
	};
	static const char *const bad[] = {
		"adapt", "adapt maybe", "adapt shortcuts", "adapt shortcuts ja",
		"adapt shortcuts yes hold 0", "adapt shortcuts yes hold",
		"adapt shortcuts yes max 99999", "adapt shortcuts yes foo 1",
		"adapt shortcuts yes hold 1 hold 2", "adapt off now",
		"adapt shortcuts yes threshold fast",
	};
	struct stmt	 st, st2;
	struct stmt_error err;
	char		 buf[256];
	size_t		 i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_int_eq(stmt_parse(good[i], &st, &err), 1);
		ck_assert_int_eq(st.kind, STMT_ADAPT);
		stmt_print(&st, buf, sizeof(buf));
		ck_assert_str_eq(buf, good[i]);
		ck_assert_int_eq(stmt_parse(buf, &st2, &err), 1);
		ck_assert(stmt_equal(&st, &st2));
	}
	ck_assert_int_eq(stmt_parse(good[2], &st, &err), 1);
	ck_assert_uint_eq(st.rate, 2000000);
	ck_assert_uint_eq(st.adapt.hold, 3);
	ck_assert_uint_eq(st.adapt.idle, 10);
	ck_assert_uint_eq(st.adapt.max, 4);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(stmt_parse(bad[i], &st, &err), -1);
		ck_assert(err.msg[0] != '\0');
	}
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("adapt");
	TCase	*tc = tcase_create("adapt");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, life_cycle);
	tcase_add_test(tc, backoff);
	tcase_add_test(tc, dies);
	tcase_add_test(tc, failure_words);
	tcase_add_test(tc, who_dials);
	tcase_add_test(tc, max_and_manual);
	tcase_add_test(tc, max_counts_peers);
	tcase_add_test(tc, quiet_without_shortcuts);
	tcase_add_test(tc, off);
	tcase_add_test(tc, forget);
	tcase_add_test(tc, statement);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
