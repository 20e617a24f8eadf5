/* The show renderer (out.c) and the one-second history (history.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "out.h"

struct sbuf {
	char	 b[4096];
	size_t	 n;
};

static void
sink(const char *s, size_t len, void *arg)
{
	struct sbuf *sb = arg;

	ck_assert_uint_lt(sb->n + len, sizeof(sb->b));
	memcpy(sb->b + sb->n, s, len);
	sb->n += len;
	sb->b[sb->n] = '\0';
}

static const char *
render(enum out_format fmt, const char *const *lines)
{
	static struct sbuf	 sb;
	struct out		*o;

	memset(&sb, 0, sizeof(sb));
	o = out_new(fmt, sink, &sb);
	ck_assert_ptr_nonnull(o);
	for (; *lines != NULL; lines++)
		ck_assert_int_eq(out_line(o, *lines), 0);
	out_end(o);
	out_free(o);
	return sb.b;
}

START_TEST(out_json_escapes)
{
	const char *const lines[] = { "%columns name\tvalue\tnote",
	    "a\"b\\c\t12\tx\x01y\xc3", "n\t-\t007", "short", NULL };

	ck_assert_str_eq(render(OUT_JSON, lines),
	    "[\n{\"name\":\"a\\\"b\\\\c\",\"value\":12,"
	    "\"note\":\"x\\u0001y\\u00c3\"},\n"
	    "{\"name\":\"n\",\"value\":null,\"note\":\"007\"},\n"
	    "{\"name\":\"short\",\"value\":null,\"note\":null}\n]\n");
}
END_TEST

START_TEST(out_json_pairs)
{
	const char *const lines[] = { "%columns name\tvalue",
	    "frames_in\t12", "since\t3s", "rate\t-", "short", NULL };
	const char *const none[] = { "%columns name\tvalue", NULL };

	/* A table of names and values: one object. */
	ck_assert_str_eq(render(OUT_JSON, lines),
	    "{\n\"frames_in\":12,\n\"since\":\"3s\",\n\"rate\":null,\n"
	    "\"short\":null\n}\n");
	ck_assert_str_eq(render(OUT_JSON, none), "{}\n");
}
END_TEST

START_TEST(out_json_numbers)
{
	ck_assert(out_is_number("0", 1));
	ck_assert(out_is_number("-12.5", 5));
	ck_assert(out_is_number("0.25", 4));
	ck_assert(!out_is_number("01", 2));
	ck_assert(!out_is_number("1.", 2));
	ck_assert(!out_is_number("-", 1));
	ck_assert(!out_is_number("1e5", 3));
	ck_assert(!out_is_number("12kbit", 6));
	ck_assert(!out_is_number("", 0));
}
END_TEST

START_TEST(out_json_empty_and_lines)
{
	const char *const none[] = { "%columns a\tb", NULL };
	const char *const plain[] = { "node x", NULL };

	ck_assert_str_eq(render(OUT_JSON, none), "[]\n");
	ck_assert_str_eq(render(OUT_JSON, plain), "[\n\"node x\"\n]\n");
}
END_TEST

START_TEST(out_text_and_tsv)
{
	const char *const lines[] = { "%columns name\tv", "abc\t1", "d\t22",
	    NULL };

	ck_assert_str_eq(render(OUT_TEXT, lines),
	    "name  v\nabc   1\nd     22\n");
	ck_assert_str_eq(render(OUT_TSV, lines), "abc\t1\nd\t22\n");
	ck_assert_str_eq(render(OUT_TSV_HEADER, lines),
	    "name\tv\nabc\t1\nd\t22\n");
}
END_TEST

/*
 * List columns (show nodes): arrays in JSON, of values or of objects; the
 * tables print the cells as they come under the bare names.
 */
START_TEST(out_lists)
{
	const char *const lines[] = { "%columns node\tlinks[]\tc[addr/kind]",
	    "a\tb,c\t10.0.0.1:7870/host,10.0.0.2:1/seen-udp",
	    "d\t-\t-", "e\t12\tx:1,y/z/w", "f", NULL };

	ck_assert_str_eq(render(OUT_JSON, lines),
	    "[\n{\"node\":\"a\",\"links\":[\"b\",\"c\"],"
	    "\"c\":[{\"addr\":\"10.0.0.1:7870\",\"kind\":\"host\"},"
	    "{\"addr\":\"10.0.0.2:1\",\"kind\":\"seen-udp\"}]},\n"
	    "{\"node\":\"d\",\"links\":[],\"c\":[]},\n"
	    /* A field missing is null, the last takes the rest. */
	    "{\"node\":\"e\",\"links\":[12],\"c\":[{\"addr\":\"x:1\","
	    "\"kind\":null},{\"addr\":\"y\",\"kind\":\"z/w\"}]},\n"
	    /* A short row: unknown, not empty. */
	    "{\"node\":\"f\",\"links\":null,\"c\":null}\n]\n");
	ck_assert_str_eq(render(OUT_TEXT, lines),
	    "node  links  c\n"
	    "a     b,c    10.0.0.1:7870/host,10.0.0.2:1/seen-udp\n"
	    "d     -      -\n"
	    "e     12     x:1,y/z/w\n"
	    "f\n");
	ck_assert_str_eq(render(OUT_TSV_HEADER, lines),
	    "node\tlinks\tc\na\tb,c\t10.0.0.1:7870/host,10.0.0.2:1/seen-udp\n"
	    "d\t-\t-\ne\t12\tx:1,y/z/w\nf\n");
}
END_TEST

START_TEST(history_rates_and_ring)
{
	struct history		*h = history_new();
	struct history_sample	 s;
	struct history_rates	 r;
	uint64_t		 t;

	ck_assert_ptr_nonnull(h);
	memset(&s, 0, sizeof(s));
	/* 1,000 bytes and 10 frames a second in, for 700 seconds. */
	for (t = 0; t < 700; t++) {
		s.bytes_in = t * 1000;
		s.frames_in = t * 10;
		history_begin(h, 5000 + t * 1000);
		history_put(h, HISTORY_LINK, "a", &s);
		history_end(h);
	}
	ck_assert_int_eq(history_rates(h, HISTORY_LINK, "a", &r), 0);
	ck_assert(r.bps_in[0] == 8000 && r.bps_in[1] == 8000);
	ck_assert(r.fps_in[0] == 10 && r.fps_in[1] == 10);
	ck_assert(r.bps_out[0] == 0);
	ck_assert_int_eq(history_rates(h, HISTORY_IFACE, "a", &r), -1);
	/* A counter that starts again from zero is no negative rate. */
	s.bytes_in = 0;
	history_begin(h, 5000 + t * 1000);
	history_put(h, HISTORY_LINK, "a", &s);
	history_end(h);
	history_rates(h, HISTORY_LINK, "a", &r);
	ck_assert(r.bps_in[0] == 0);
	/* A link not put at a tick is gone. */
	history_begin(h, 5000 + (t + 1) * 1000);
	history_end(h);
	ck_assert_int_eq(history_rates(h, HISTORY_LINK, "a", &r), -1);
	history_free(h);
}
END_TEST

START_TEST(history_bounded)
{
	struct history		*h = history_new();
	struct history_sample	 s;
	char			 name[16];
	int			 i;

	memset(&s, 0, sizeof(s));
	history_begin(h, 1000);
	for (i = 0; i < HISTORY_SERIES_MAX + 10; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		history_put(h, HISTORY_LINK, name, &s);
	}
	history_end(h);
	ck_assert_uint_eq(history_refused(h), 10);
	history_free(h);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("out");
	TCase	*tc = tcase_create("out");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, out_json_escapes);
	tcase_add_test(tc, out_json_pairs);
	tcase_add_test(tc, out_json_numbers);
	tcase_add_test(tc, out_json_empty_and_lines);
	tcase_add_test(tc, out_text_and_tsv);
	tcase_add_test(tc, out_lists);
	tcase_add_test(tc, history_rates_and_ring);
	tcase_add_test(tc, history_bounded);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
