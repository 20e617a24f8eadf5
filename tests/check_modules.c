/*
 * The daemon's modules (daemon.h): the layers above it are reached only
 * through the hooks a module registers, in the order they were added.  A
 * daemon in one process, no root, no sockets but its event base.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "daemon.h"
#include "stmt.h"

struct fake {
	const char	*name;
	char		*trace;		/* shared: "name:hook " appended */
	size_t		 tracelen;
	struct stmt	 conf;		/* what config writes */
	int		 start_fails;
	int		 made;		/* link_made answers */
	unsigned int	 applied;
};

static void
trace(struct fake *f, const char *hook)
{
	size_t	 n = strlen(f->trace);

	snprintf(f->trace + n, f->tracelen - n, "%s:%s ", f->name, hook);
}

static int
fake_apply(void *arg, const struct stmt *st, char *err, size_t errlen)
{
	struct fake	*f = arg;

	f->applied++;
	trace(f, "apply");
	if (st->kind == STMT_ADAPT) {
		snprintf(err, errlen, "%s refuses", f->name);
		return -1;
	}
	return 0;
}

static int
fake_start(void *arg)
{
	struct fake	*f = arg;

	trace(f, "start");
	return f->start_fails ? -1 : 0;
}

static void
fake_tick(void *arg)
{
	trace(arg, "tick");
}

static void
fake_show(void *arg, const struct stmt *st, struct evbuffer *out)
{
	struct fake	*f = arg;

	evbuffer_add_printf(out, "%s %d\n", f->name, (int)st->show);
}

static const char *
fake_columns(void *arg, enum stmt_show what)
{
	struct fake	*f = arg;

	return what == STMT_SHOW_INTERFACES ? f->name : NULL;
}

static void
fake_config(void *arg, void (*cb)(const struct stmt *, void *), void *cbarg)
{
	struct fake	*f = arg;

	cb(&f->conf, cbarg);
}

static int
fake_link_made(void *arg, const struct link *l)
{
	struct fake	*f = arg;

	return f->made;
}

static void
fake_stop(void *arg)
{
	trace(arg, "stop");
}

static void
fake_free(void *arg)
{
	trace(arg, "free");
}

static void
fake_add(struct vnetd *d, struct fake *f, const char *name, char *tr,
    size_t trlen, enum stmt_kind kind)
{
	struct vnetd_module	 m;

	memset(f, 0, sizeof(*f));
	f->name = name;
	f->trace = tr;
	f->tracelen = trlen;
	memset(&m, 0, sizeof(m));
	m.name = name;
	m.arg = f;
	m.kinds[0] = kind;
	m.nkinds = 1;
	m.apply = fake_apply;
	m.start = fake_start;
	m.tick = fake_tick;
	m.show = fake_show;
	m.columns = fake_columns;
	m.config = fake_config;
	m.link_made = fake_link_made;
	m.stop = fake_stop;
	m.free = fake_free;
	ck_assert_int_eq(vnetd_module_add(d, &m), 0);
}

static void
parse(const char *line, struct stmt *st)
{
	struct stmt_error	 e;

	ck_assert_msg(stmt_parse(line, st, &e) == 1, "%s: %s", line, e.msg);
}

static char *
text(struct evbuffer *b)
{
	evbuffer_add(b, "", 1);
	return (char *)evbuffer_pullup(b, -1);
}

static void
print_cb(const struct stmt *st, void *arg)
{
	struct evbuffer	*out = arg;
	char		 line[STMT_LINE_MAX];

	stmt_print(st, line, sizeof(line));
	evbuffer_add_printf(out, "%s\n", line);
}

START_TEST(apply_by_kind)
{
	struct vnetd	 d;
	struct fake	 a, b;
	struct stmt	 st;
	char		 tr[256] = "", err[256];

	ck_assert_int_eq(vnetd_init(&d), 0);
	parse("routing auto", &st);
	/* Nothing above the daemon: said, not done. */
	ck_assert_int_eq(vnetd_apply(&d, &st, 0, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not available") != NULL, "%s", err);
	fake_add(&d, &a, "a", tr, sizeof(tr), STMT_HTTP);
	fake_add(&d, &b, "b", tr, sizeof(tr), STMT_ROUTING);
	ck_assert_int_eq(vnetd_apply(&d, &st, 0, err, sizeof(err)), 0);
	ck_assert_uint_eq(a.applied, 0);
	ck_assert_uint_eq(b.applied, 1);
	/* A module's error is the statement's. */
	d.modules[1].kinds[1] = STMT_ADAPT;
	d.modules[1].nkinds = 2;
	parse("adapt off", &st);
	ck_assert_int_eq(vnetd_apply(&d, &st, 1, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "b refuses");
	/* The daemon's own statements are not handed up. */
	parse("keepalive 7", &st);
	ck_assert_int_eq(vnetd_apply(&d, &st, 1, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.keepalive, 7);
	ck_assert_str_eq(tr, "b:apply b:apply ");
	vnetd_free(&d);
}
END_TEST

START_TEST(show_after_the_daemon)
{
	struct vnetd	 d;
	struct fake	 a, b;
	struct evbuffer	*out = evbuffer_new();
	char		 tr[256] = "", want[512], *s;

	ck_assert_int_eq(vnetd_init(&d), 0);
	fake_add(&d, &a, "a", tr, sizeof(tr), STMT_HTTP);
	fake_add(&d, &b, "b", tr, sizeof(tr), STMT_ROUTING);
	vnetd_show_what(&d, STMT_SHOW_NODES, out);
	snprintf(want, sizeof(want), "a %d\nb %d\n", STMT_SHOW_NODES,
	    STMT_SHOW_NODES);
	ck_assert_str_eq(text(out), want);
	evbuffer_drain(out, evbuffer_get_length(out));
	vnetd_show_what(&d, STMT_SHOW_STATS, out);
	s = text(out);
	ck_assert_msg(strncmp(s, "%columns name\tvalue\n", 20) == 0, "%s", s);
	snprintf(want, sizeof(want), "\na %d\nb %d\n", STMT_SHOW_STATS,
	    STMT_SHOW_STATS);
	ck_assert_str_eq(s + strlen(s) - strlen(want), want);
	/* Columns the modules add follow the interface's own, in order. */
	evbuffer_drain(out, evbuffer_get_length(out));
	vnetd_show_what(&d, STMT_SHOW_INTERFACES, out);
	snprintf(want, sizeof(want), "%%columns name\ttype\tdev\tstate\t"
	    "frames_in\tbytes_in\tframes_out\tbytes_out\tdrops\t"
	    "capture_drops" "ab\n" "a %d\nb %d\n", STMT_SHOW_INTERFACES,
	    STMT_SHOW_INTERFACES);
	ck_assert_str_eq(text(out), want);
	evbuffer_free(out);
	vnetd_free(&d);
}
END_TEST

START_TEST(config_and_made_links)
{
	struct vnetd	 d;
	struct fake	 a;
	struct stmt	 st;
	struct evbuffer	*out = evbuffer_new();
	char		 tr[256] = "", err[256], *s, *threads, *mine, *link;

	ck_assert_int_eq(vnetd_init(&d), 0);
	fake_add(&d, &a, "a", tr, sizeof(tr), STMT_HTTP);
	parse("routing auto", &a.conf);
	parse("link far 127.0.0.1:1", &st);
	ck_assert_int_eq(vnetd_apply(&d, &st, 0, err, sizeof(err)), 0);
	vnetd_config(&d, print_cb, out);
	s = text(out);
	/* After the settings, before the links. */
	ck_assert_ptr_nonnull(threads = strstr(s, "threads "));
	ck_assert_ptr_nonnull(mine = strstr(s, "routing auto\n"));
	ck_assert_ptr_nonnull(link = strstr(s, "link far "));
	ck_assert(threads < mine);
	ck_assert(mine < link);
	/* A link the module made is its own, not the configuration's. */
	a.made = 1;
	evbuffer_drain(out, evbuffer_get_length(out));
	vnetd_config(&d, print_cb, out);
	s = text(out);
	ck_assert_ptr_null(strstr(s, "link far "));
	ck_assert_ptr_nonnull(strstr(s, "routing auto\n"));
	evbuffer_free(out);
	vnetd_free(&d);
}
END_TEST

static void
stop_loop(evutil_socket_t fd, short ev, void *arg)
{
	event_base_loopbreak(arg);
}

START_TEST(lifecycle_order)
{
	struct vnetd	 d;
	struct fake	 a, b;
	struct event	*ev;
	struct timeval	 tv = { 1, 300000 };
	char		 tr[256] = "";

	ck_assert_int_eq(vnetd_init(&d), 0);
	fake_add(&d, &a, "a", tr, sizeof(tr), STMT_HTTP);
	fake_add(&d, &b, "b", tr, sizeof(tr), STMT_ROUTING);
	ck_assert_int_eq(vnetd_start(&d), 0);
	ck_assert_str_eq(tr, "a:start b:start ");
	/* The one-second tick reaches every module. */
	ev = evtimer_new(d.base, stop_loop, d.base);
	ck_assert_ptr_nonnull(ev);
	evtimer_add(ev, &tv);
	event_base_dispatch(d.base);
	event_free(ev);
	ck_assert_str_eq(tr, "a:start b:start a:tick b:tick ");
	tr[0] = '\0';
	/* Every module stops before any is freed. */
	vnetd_free(&d);
	ck_assert_str_eq(tr, "a:stop b:stop a:free b:free ");
}
END_TEST

START_TEST(start_fails)
{
	struct vnetd	 d;
	struct fake	 a, b;
	char		 tr[256] = "";

	ck_assert_int_eq(vnetd_init(&d), 0);
	fake_add(&d, &a, "a", tr, sizeof(tr), STMT_HTTP);
	fake_add(&d, &b, "b", tr, sizeof(tr), STMT_ROUTING);
	a.start_fails = 1;
	ck_assert_int_eq(vnetd_start(&d), -1);
	ck_assert_str_eq(tr, "a:start ");
	vnetd_free(&d);
}
END_TEST

START_TEST(table_full)
{
	struct vnetd		 d;
	struct vnetd_module	 m;
	size_t			 i;

	ck_assert_int_eq(vnetd_init(&d), 0);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < VNETD_MODULES_MAX; i++)
		ck_assert_int_eq(vnetd_module_add(&d, &m), 0);
	ck_assert_int_eq(vnetd_module_add(&d, &m), -1);
	vnetd_free(&d);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("modules");
	TCase	*tc = tcase_create("modules");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, apply_by_kind);
	tcase_add_test(tc, show_after_the_daemon);
	tcase_add_test(tc, config_and_made_links);
	tcase_add_test(tc, lifecycle_order);
	tcase_add_test(tc, start_fails);
	tcase_add_test(tc, table_full);
	tcase_set_timeout(tc, 20);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
