/*
 * save over the operator's file (save.h), a case each: comments, blank
 * lines, order and spelling kept; a statement changed at run time replaces
 * its line, comment kept; one removed is dropped; new ones appended, those
 * at their defaults left out; what only the file sets stays as written in
 * the daemon's own file; no file: the running state alone; a file that is
 * no configuration is refused as a base.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "save.h"
#include "stmt.h"

/* The running state, one statement a line. */
static void
run_of(struct stmt_vec *v, const char *text)
{
	char		 line[STMT_LINE_MAX];
	const char	*p, *nl;
	struct stmt	 st;
	struct stmt_error err;

	memset(v, 0, sizeof(*v));
	for (p = text; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		ck_assert_ptr_nonnull(nl);
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		ck_assert_msg(stmt_parse(line, &st, &err) == 1, "%s: %s", line,
		    err.msg);
		ck_assert_int_eq(stmt_vec_add(v, &st, 0), 0);
	}
}

/* The test's defaults: keepalive 10, learn no, network vnet. */
static int
is_default(const struct stmt *st, void *arg)
{
	switch (st->kind) {
	case STMT_KEEPALIVE:
		return st->num == 10;
	case STMT_LEARN:
		return !st->flag;
	case STMT_NETWORK:
		return strcmp(st->name, "vnet") == 0;
	default:
		return 0;
	}
}

/* save_merge() of base over run must give want, with these counts. */
static void
merge_is(const char *base, int own, const char *run, const char *want,
    size_t kept, size_t replaced, size_t dropped, size_t added)
{
	struct stmt_vec	 v;
	struct save_stats ss;
	size_t		 len;
	char		*out;

	run_of(&v, run);
	out = save_merge(base, base != NULL ? strlen(base) : 0, own, &v,
	    is_default, NULL, &len, &ss);
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(len, strlen(out));
	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(ss.kept, kept);
	ck_assert_uint_eq(ss.replaced, replaced);
	ck_assert_uint_eq(ss.dropped, dropped);
	ck_assert_uint_eq(ss.added, added);
	free(out);
	stmt_vec_clear(&v);
}

#define RUN_STAR \
	"node proxy\n" "network vnet\n" "keepalive 10\n" "learn no\n" \
	"listen *:7870 tls\n" "link host1 192.0.2.21:7870 tls\n" \
	"route any 02:00:00:00:00:01 link host1\n"

START_TEST(unchanged_as_written)
{
	const char *base =
	    "# the proxy\n"
	    "node   proxy\n"
	    "\n"
	    "listen *:7870   tls    # everyone\n"
	    "link host1 \"192.0.2.21:7870\" tls\n"
	    "  # host1's guest\n"
	    "add-route any 02:00:00:00:00:01 link host1\n";

	merge_is(base, 1, RUN_STAR, base, 4, 0, 0, 0);
}
END_TEST

START_TEST(changed_replaces_its_line)
{
	const char *base =
	    "node proxy\n"
	    "keepalive 20   # slow peers\n"
	    "listen *:7870 tls\n"
	    "link host1 192.0.2.21:7870 tls # the first host\n"
	    "route any 02:00:00:00:00:01 link host1\n";
	const char *run =
	    "node proxy\n" "keepalive 5\n" "listen *:7870 tls\n"
	    "link host1 192.0.2.21:7870 tls rate 10mbit\n"
	    "route any 02:00:00:00:00:01 link host1\n";

	merge_is(base, 1, run,
	    "node proxy\n"
	    "keepalive 5  # slow peers\n"
	    "listen *:7870 tls\n"
	    "link host1 192.0.2.21:7870 tls rate 10mbit  # the first host\n"
	    "route any 02:00:00:00:00:01 link host1\n", 3, 2, 0, 0);
}
END_TEST

START_TEST(removed_is_dropped)
{
	const char *base =
	    "node proxy\n"
	    "listen *:7870 tls\n"
	    "link host1 192.0.2.21:7870 tls\n"
	    "# host2, gone\n"
	    "link host2 192.0.2.22:7870 tls\n"
	    "route any 02:00:00:00:00:01 link host1\n"
	    "route any 02:00:00:00:00:02 link host2\n";

	merge_is(base, 1, RUN_STAR,
	    "node proxy\n"
	    "listen *:7870 tls\n"
	    "link host1 192.0.2.21:7870 tls\n"
	    "# host2, gone\n"
	    "route any 02:00:00:00:00:01 link host1\n", 4, 0, 2, 0);
}
END_TEST

START_TEST(new_ones_appended_without_defaults)
{
	const char *base =
	    "node proxy\n"
	    "listen *:7870 tls\n";
	const char *run = RUN_STAR "learn yes\n"
	    "route any 02:00:00:00:00:02 link host2\n";

	/* keepalive 10, learn no, network vnet: the defaults, not added. */
	merge_is(base, 1, run,
	    "node proxy\n"
	    "listen *:7870 tls\n"
	    "link host1 192.0.2.21:7870 tls\n"
	    "route any 02:00:00:00:00:01 link host1\n"
	    "learn yes\n"
	    "route any 02:00:00:00:00:02 link host2\n", 2, 0, 0, 4);
}
END_TEST

/* A default the operator wrote stays; one changed to the default too. */
START_TEST(defaults_written_stay)
{
	const char *base =
	    "node proxy\n"
	    "keepalive 10\n"
	    "learn yes\n";

	merge_is(base, 1, "node proxy\nkeepalive 10\nlearn no\n",
	    "node proxy\nkeepalive 10\nlearn no\n", 2, 1, 0, 0);
}
END_TEST

/* What only the file sets is the file's in its own file, else replaced. */
START_TEST(file_only_kept_in_own_file)
{
	const char *base =
	    "node renamed   # after the restart\n"
	    "tls-cert /etc/vnetd/new.crt\n"
	    "keepalive 20\n";
	const char *run =
	    "node proxy\n" "tls-cert /etc/vnetd/proxy.crt\n"
	    "keepalive 20\n";

	merge_is(base, 1, run, base, 3, 0, 0, 0);
	merge_is(base, 0, run,
	    "node proxy  # after the restart\n"
	    "tls-cert /etc/vnetd/proxy.crt\n"
	    "keepalive 20\n", 1, 2, 0, 0);
}
END_TEST

START_TEST(no_file)
{
	merge_is(NULL, 0, RUN_STAR "learn yes\n",
	    "node proxy\n"
	    "listen *:7870 tls\n"
	    "link host1 192.0.2.21:7870 tls\n"
	    "route any 02:00:00:00:00:01 link host1\n"
	    "learn yes\n", 0, 0, 0, 5);
}
END_TEST

/* A class given in parts is one class running: its first line takes it. */
START_TEST(parts_become_one)
{
	const char *base =
	    "interface vm1 tap\n"
	    "vcc class fast match tcp-port 5201\n"
	    "vcc class fast weight 3\n";

	merge_is(base, 1,
	    "interface vm1 tap\nvcc class fast match tcp-port 5201 weight 3\n",
	    "interface vm1 tap\n"
	    "vcc class fast match tcp-port 5201 weight 3\n", 1, 1, 1, 0);
}
END_TEST

/* The last line without its newline, and CRLF lines: taken as lines. */
START_TEST(line_ends)
{
	merge_is("node proxy\r\nlisten *:7870 tls", 1,
	    "node proxy\nlisten *:7870 tls\n",
	    "node proxy\r\nlisten *:7870 tls\n", 2, 0, 0, 0);
}
END_TEST

START_TEST(no_configuration)
{
	struct stmt_vec	 v;
	struct save_stats ss;
	size_t		 len;
	char		 big[STMT_LINE_MAX + 10];

	run_of(&v, RUN_STAR);
	errno = 0;
	ck_assert_ptr_null(save_merge("root:secret\n", 12, 0, &v, is_default,
	    NULL, &len, &ss));
	ck_assert_int_eq(errno, EINVAL);
	memset(big, '#', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	errno = 0;
	ck_assert_ptr_null(save_merge(big, strlen(big), 1, &v, is_default,
	    NULL, &len, &ss));
	ck_assert_int_eq(errno, EINVAL);
	stmt_vec_clear(&v);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("save");
	TCase	*tc = tcase_create("merge");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, unchanged_as_written);
	tcase_add_test(tc, changed_replaces_its_line);
	tcase_add_test(tc, removed_is_dropped);
	tcase_add_test(tc, new_ones_appended_without_defaults);
	tcase_add_test(tc, defaults_written_stay);
	tcase_add_test(tc, file_only_kept_in_own_file);
	tcase_add_test(tc, no_file);
	tcase_add_test(tc, parts_become_one);
	tcase_add_test(tc, line_ends);
	tcase_add_test(tc, no_configuration);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
