/*
 * Reload's difference: the running state and a new configuration in, the
 * changes out, in the order they are applied.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reload.h"
#include "sched.h"
#include "stmt.h"

#define LIST_MAX	32

struct list {
	struct stmt	st[LIST_MAX];
	size_t		n;
};

/* One statement a line, '|' between lines. */
static void
list_parse(const char *text, struct list *l)
{
	struct stmt_error	 err;
	char			 buf[4096], *line, *save = NULL;
	int			 r;

	l->n = 0;
	snprintf(buf, sizeof(buf), "%s", text);
	for (line = strtok_r(buf, "|", &save); line != NULL;
	    line = strtok_r(NULL, "|", &save)) {
		ck_assert_uint_lt(l->n, LIST_MAX);
		r = stmt_parse(line, &l->st[l->n], &err);
		ck_assert_msg(r >= 0, "'%s': %s", line, err.msg);
		if (r == 1)
			l->n++;
	}
}

/* The plan printed as statements, '|' between them. */
static void
plan_text(const struct reload_plan *pl, char *out, size_t len)
{
	char	 line[STMT_LINE_MAX];
	struct stmt tmp;
	size_t	 i;

	memset(&tmp, 0, sizeof(tmp));
	out[0] = '\0';
	for (i = 0; i < pl->steps.n; i++) {
		stmt_print(stmt_vec_get(&pl->steps, i, &tmp), line,
		    sizeof(line));
		if (i > 0)
			strncat(out, "|", len - strlen(out) - 1);
		strncat(out, line, len - strlen(out) - 1);
	}
}

#define RUNNING	"node proxy|network home|control /run/vnetd.sock|" \
	"keepalive 10|learn no|listen *:7870|" \
	"interface lan pcap eth0 filter arp|interface guest tap vtap0|" \
	"link h1 10.0.0.1:7870|link h2 10.0.0.2:7870|" \
	"route any 02:00:00:00:00:01 link h1|" \
	"route any 02:00:00:00:00:02 link h2|route any any interface lan"

static const struct {
	const char	*old, *new;
	const char	*plan;		/* NULL: refused */
	size_t		 nprep;
} cases[] = {
	/* Nothing changed, in another order and spelling. */
	{ RUNNING,
	  "route any any interface lan|node proxy|network home|"
	  "add-link h2 10.0.0.2:7870|link h1 10.0.0.1:7870|"
	  "interface guest tap vtap0|listen *:7870|learn no|keepalive 10|"
	  "interface lan pcap eth0 promisc yes filter \"arp\"|"
	  "route any 02:00:00:00:00:01 link h1|"
	  "route any 02:00:00:00:00:02 link h2|control /run/vnetd.sock",
	  "", 0 },
	/* Settings the new file leaves out are not changes. */
	{ RUNNING,
	  "listen *:7870|interface lan pcap eth0 filter arp|"
	  "interface guest tap vtap0|link h1 10.0.0.1:7870|"
	  "link h2 10.0.0.2:7870|route any 02:00:00:00:00:01 link h1|"
	  "route any 02:00:00:00:00:02 link h2|route any any interface lan",
	  "", 0 },
	/* A link removed and one added; the routes follow. */
	{ "node a|link h1 10.0.0.1:1|link h2 10.0.0.2:1|"
	  "route any 02:00:00:00:00:02 link h2",
	  "node a|link h1 10.0.0.1:1|link h3 10.0.0.3:1|"
	  "route any 02:00:00:00:00:03 link h3",
	  "del-route any 02:00:00:00:00:02 link h2|del-link h2|"
	  "link h3 10.0.0.3:1|route any 02:00:00:00:00:03 link h3", 0 },
	/* A link whose address changed is made again; h1 is not touched. */
	{ "link h1 10.0.0.1:1|link h2 10.0.0.2:1",
	  "link h1 10.0.0.1:1|link h2 10.0.0.9:1",
	  "del-link h2|link h2 10.0.0.9:1", 0 },
	/*
	 * Link options: the running state shows a link's merged options on
	 * its link statement, the file may give them with set-link; options
	 * alone changed are set again whole, the connection kept; options
	 * by name that the file no longer has return to their defaults.
	 */
	{ "link h1 10.0.0.1:1 aqm codel target 5ms interval 100ms "
	  "congestion reno|set-link h9 rate 10mbit",
	  "set-link h9 rate 10mbit|link h1 10.0.0.1:1|"
	  "set-link h1 aqm codel|set-link h1 congestion reno", "", 0 },
	{ "link h1 10.0.0.1:1 aqm codel target 5ms interval 100ms "
	  "congestion reno",
	  "link h1 10.0.0.1:1 congestion cubic",
	  "set-link h1 rate none aqm fq_codel target 5ms interval 100ms "
	  "congestion cubic transport tcp", 0 },
	{ "link h1 10.0.0.1:1 rate 1mbit",
	  "link h1 10.0.0.1:1 congestion reno rate 2mbit|"
	  "set-link h1 rate 1mbit",
	  "set-link h1 rate 1mbit aqm fq_codel target 5ms interval 100ms "
	  "congestion reno transport tcp", 0 },
	{ "set-link h9 rate 10mbit congestion reno|set-link h8 aqm off",
	  "set-link h9 rate 10mbit",
	  "set-link h9 rate 10mbit aqm fq_codel target 5ms interval 100ms "
	  "congestion default transport tcp|set-link h8 rate none aqm "
	  "fq_codel target 5ms interval 100ms congestion default transport "
	  "tcp", 0 },
	{ "", "set-link h9 congestion reno|set-link h8 congestion default",
	  "set-link h9 rate none aqm fq_codel target 5ms interval 100ms "
	  "congestion reno transport tcp", 0 },
	/* A transport changed alone is a set-link too. */
	{ "link h1 10.0.0.1:1 transport auto", "link h1 10.0.0.1:1",
	  "set-link h1 rate none aqm fq_codel target 5ms interval 100ms "
	  "congestion default transport tcp", 0 },
	/* A name with options becomes a link, and a link a name again. */
	{ "set-link h9 aqm off|link h2 10.0.0.2:1 rate 1mbit",
	  "link h9 10.0.0.9:1|set-link h2 rate 1mbit",
	  "del-link h2|link h9 10.0.0.9:1 rate none aqm fq_codel target 5ms "
	  "interval 100ms congestion default transport tcp|set-link h2 rate "
	  "1mbit aqm fq_codel target 5ms interval 100ms congestion default "
	  "transport tcp", 0 },
	/* A link made again keeps the options the file gives it. */
	{ "link h2 10.0.0.2:1 rate 1mbit",
	  "link h2 10.0.0.3:1|set-link h2 rate 1mbit",
	  "del-link h2|link h2 10.0.0.3:1 rate 1mbit", 0 },
	/* New listeners and interfaces of new names come first. */
	{ "listen *:1|interface a tap|route any any interface a",
	  "listen *:2|interface a tap|interface b pcap eth1|"
	  "route any any interface b",
	  "listen *:2|interface b pcap eth1|"
	  "del-route any any interface a|del-listen *:1|"
	  "route any any interface b", 2 },
	/* A changed interface is removed and made again, after the settings. */
	{ "keepalive 10|learn no|interface lan pcap eth0 filter arp",
	  "keepalive 5|learn yes|interface lan pcap eth0 filter ip",
	  "del-interface lan|keepalive 5|learn yes|"
	  "interface lan pcap eth0 filter ip", 0 },
	{ "interface lan pcap eth0", "interface lan pcap eth0 promisc no",
	  "del-interface lan|interface lan pcap eth0 promisc no", 0 },
	{ "interface g tap", "interface g tap g", "", 0 },
	{ "interface g tap", "interface g pcap g",
	  "del-interface g|interface g pcap g", 0 },
	{ "interface g tap", "", "del-interface g", 0 },
	/* Every kind of change at once, in the order they are applied. */
	{ RUNNING,
	  "node proxy|network home|keepalive 20|learn no|listen *:7871|"
	  "interface lan pcap eth0 filter arp|interface guest2 tap vtap1|"
	  "link h1 10.0.0.1:7870|link h3 10.0.0.3:7870|"
	  "route any 02:00:00:00:00:01 link h1|"
	  "route any 02:00:00:00:00:03 link h3|route any any interface lan",
	  "listen *:7871|interface guest2 tap vtap1|"
	  "del-route any 02:00:00:00:00:02 link h2|del-link h2|"
	  "del-interface guest|del-listen *:7870|keepalive 20|"
	  "link h3 10.0.0.3:7870|route any 02:00:00:00:00:03 link h3", 2 },
	/*
	 * vcc policies: a changed one is removed and given again, last; a
	 * class given in parts is rebuilt from them.
	 */
	{ "vcc g ecn virtual|vcc share g window 1000|vcc class c weight 3",
	  "vcc g ecn virtual|vcc class c weight 3|vcc share g window 2000",
	  "del-vcc share g|vcc share g window 2000", 0 },
	{ "vcc g ecn virtual|vcc class c match tcp-port 80 weight 3",
	  "vcc class c match tcp-port 80|vcc class c weight 3|route any any link l",
	  "del-vcc g ecn|del-vcc class c|route any any link l|"
	  "vcc class c match tcp-port 80|vcc class c weight 3", 0 },
	{ "vcc class c weight 3", "vcc class c weight 3", "", 0 },
	/* The TLS files are read again: their statements change by reload. */
	{ "tls-cert /c|tls-key /k|tls-ca /a",
	  "tls-cert /c|tls-key /k|tls-ca /a|tls-crl /r", "tls-crl /r", 0 },
	{ "tls-cert /c|tls-key /k|tls-ca /a",
	  "tls-cert /c2|tls-key /k2|tls-ca /a", "tls-cert /c2|tls-key /k2", 0 },
	/* What a running daemon cannot change. */
	{ "node a|network n", "node b|network n", NULL, 0 },
	{ "node a|network n", "node a|network m", NULL, 0 },
	{ "control /a", "control /b", NULL, 0 },
	{ "node a", "network n", NULL, 0 },
};

START_TEST(test_diff)
{
	struct list		*old, *new;
	struct reload_plan	 pl;
	char			 err[256], got[8192];
	int			 r;

	old = calloc(1, sizeof(*old));
	new = calloc(1, sizeof(*new));
	ck_assert_ptr_nonnull(old);
	ck_assert_ptr_nonnull(new);
	list_parse(cases[_i].old, old);
	list_parse(cases[_i].new, new);
	err[0] = '\0';
	r = reload_diff(old->st, old->n, new->st, new->n, &pl, err,
	    sizeof(err));
	if (cases[_i].plan == NULL) {
		ck_assert_int_eq(r, -1);
		ck_assert_msg(strstr(err, "cannot change at run time") != NULL,
		    "message: %s", err);
		ck_assert_uint_eq(pl.steps.n, 0);
	} else {
		ck_assert_msg(r == 0, "refused: %s", err);
		plan_text(&pl, got, sizeof(got));
		ck_assert_str_eq(got, cases[_i].plan);
		ck_assert_uint_eq(pl.nprep, cases[_i].nprep);
	}
	reload_plan_clear(&pl);
	free(old);
	free(new);
}
END_TEST

/* A del- change and a statement of what it removes. */
static int
removes(const struct stmt *c, const struct stmt *o)
{
	struct stmt	 t;

	if (o->kind != c->kind)
		return 0;
	if (c->kind == STMT_LINK || c->kind == STMT_INTERFACE)
		return strcmp(o->name, c->name) == 0;
	t = *c;
	t.op = STMT_OP_SET;
	return stmt_equal(o, &t);
}

/*
 * A link statement or set-link applied as the daemon applies it: the
 * options go to the link of that name, or are kept by name, and the state
 * shows them as the daemon does (vnetd_config()).
 */
static void
model_link_options(struct list *l, const struct stmt *c)
{
	struct sched_opts	 o;
	size_t			 j;

	for (j = 0; j < l->n; j++)
		if ((l->st[j].kind == STMT_LINK ||
		    l->st[j].kind == STMT_SET_LINK) &&
		    strcmp(l->st[j].name, c->name) == 0)
			break;
	sched_opts_default(&o);
	if (j < l->n)
		sched_opts_from_stmt(&o, &l->st[j]);
	sched_opts_from_stmt(&o, c);
	if (c->kind == STMT_LINK && j < l->n)
		l->st[j] = l->st[--l->n];	/* options of the name */
	if (c->kind == STMT_LINK || j == l->n) {
		ck_assert_uint_lt(l->n, LIST_MAX);
		j = l->n++;
		l->st[j] = *c;
	}
	sched_opts_to_stmt(&o, &l->st[j]);
	if (l->st[j].kind == STMT_SET_LINK && l->st[j].lopts == 0)
		l->st[j] = l->st[--l->n];
}

/* The plan applied to the old state gives the new one. */
START_TEST(test_apply_plan)
{
	struct list		*old, *new;
	struct reload_plan	 pl;
	struct stmt		 tmp;
	char			 err[256];
	size_t			 i, j;

	memset(&tmp, 0, sizeof(tmp));
	old = calloc(1, sizeof(*old));
	new = calloc(1, sizeof(*new));
	ck_assert_ptr_nonnull(old);
	ck_assert_ptr_nonnull(new);
	list_parse(cases[_i].old, old);
	list_parse(cases[_i].new, new);
	if (cases[_i].plan == NULL)
		goto done;
	ck_assert_int_eq(reload_diff(old->st, old->n, new->st, new->n, &pl,
	    err, sizeof(err)), 0);
	for (i = 0; i < pl.steps.n; i++) {
		const struct stmt *c = stmt_vec_get(&pl.steps, i, &tmp);

		if (c->op == STMT_OP_SET) {
			/* A setting replaces the old value. */
			if (c->kind == STMT_KEEPALIVE || c->kind == STMT_LEARN ||
			    c->kind == STMT_TLS_CERT || c->kind == STMT_TLS_KEY)
				for (j = 0; j < old->n; j++)
					if (old->st[j].kind == c->kind)
						old->st[j] = old->st[--old->n];
			if (c->kind == STMT_LINK || c->kind == STMT_SET_LINK) {
				model_link_options(old, c);
				continue;
			}
			ck_assert_uint_lt(old->n, LIST_MAX);
			old->st[old->n++] = *c;
			continue;
		}
		for (j = 0; j < old->n; j++)
			if (removes(c, &old->st[j]))
				break;
		ck_assert_msg(j < old->n, "change %zu removes nothing", i);
		old->st[j] = old->st[--old->n];
	}
	reload_plan_clear(&pl);
	/* Same statements now, so the difference is empty. */
	ck_assert_int_eq(reload_diff(old->st, old->n, new->st, new->n, &pl,
	    err, sizeof(err)), 0);
	ck_assert_uint_eq(pl.steps.n, 0);
	reload_plan_clear(&pl);
 done:
	free(old);
	free(new);
}
END_TEST

#define SPACE		120000	/* routes a random list draws from */

/* Route number id of the space, printed: three targets, 40,000 MACs. */
static void
route_text(unsigned int id, char *buf, size_t len)
{
	snprintf(buf, len, "route any 02:00:00:%02x:%02x:%02x %s",
	    id / 3 % 256, id / 3 / 256 % 256, id / 3 / 65536,
	    id % 3 == 0 ? "interface guest" : id % 3 == 1 ? "link h1" :
	    "link h2");
}

/*
 * Random lists of many thousand routes, each route at most once in a list
 * (as in the daemon and in a checked file), with a few, half or most of
 * them in both: the plan is exactly the old routes the new list lacks,
 * removed in the old list's order, then the new routes the old list
 * lacks, added in the new list's order.  The expected plan comes from a
 * table of which routes each list has, not from an index.
 */
START_TEST(test_diff_big)
{
	static const char *const settings[] = { "node a", "network n",
	    "control /run/vnetd.sock", "keepalive 10", "learn no",
	    "offload yes", "threads no", "interface guest tap vtap0",
	    "link h1 10.0.0.1:7870" };
	struct stmt_vec		 v[2] = { { NULL, 0, 0 }, { NULL, 0, 0 } };
	struct reload_plan	 pl;
	struct stmt		 st, tmp;
	struct stmt_error	 perr;
	unsigned int		*ids[2], id, seed = 1410 + (unsigned int)_i;
	uint8_t			*in[2];
	char			 want[STMT_LINE_MAX], got[128];
	char			 err[256];
	size_t			 n[2], i, k = 0;
	int			 side;

	n[0] = _i == 0 ? 2000 : 50000;
	n[1] = _i == 1 ? 30000 : n[0];
	memset(&tmp, 0, sizeof(tmp));
	for (side = 0; side < 2; side++) {
		in[side] = calloc(SPACE, 1);
		ids[side] = calloc(n[side], sizeof(unsigned int));
		ck_assert_ptr_nonnull(in[side]);
		ck_assert_ptr_nonnull(ids[side]);
		for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
			ck_assert_int_eq(stmt_parse(settings[i], &st, &perr), 1);
			ck_assert_int_eq(stmt_vec_add(&v[side], &st, 0), 0);
		}
		for (i = 0; i < n[side]; i++) {
			/* Case 2: the new list is the old one, 2% changed. */
			if (side == 1 && _i == 2 && i % 50 != 0)
				id = ids[0][i];
			else
				do {
					id = (unsigned int)rand_r(&seed) % SPACE;
				} while (in[side][id]);
			in[side][id] = 1;
			ids[side][i] = id;
			route_text(id, want, sizeof(want));
			ck_assert_int_eq(stmt_parse(want, &st, &perr), 1);
			ck_assert_int_eq(stmt_vec_add(&v[side], &st, 0), 0);
		}
	}
	ck_assert_int_eq(reload_diff_vec(&v[0], &v[1], &pl, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(pl.nprep, 0);
	for (side = 0; side < 2; side++) {
		for (i = 0; i < n[side]; i++) {
			id = ids[side][i];
			if (in[!side][id])
				continue;
			route_text(id, got, sizeof(got));
			snprintf(want, sizeof(want), "%s%s", side == 0 ?
			    "del-" : "", got);
			ck_assert_uint_lt(k, pl.steps.n);
			stmt_print(stmt_vec_get(&pl.steps, k, &tmp), got,
			    sizeof(got));
			ck_assert_str_eq(got, want);
			k++;
		}
	}
	ck_assert_uint_eq(k, pl.steps.n);
	/* The plan did have work to do, and did not redo everything. */
	ck_assert_uint_gt(k, 0);
	ck_assert_uint_lt(k, n[0] + n[1]);
	reload_plan_clear(&pl);
	for (side = 0; side < 2; side++) {
		free(in[side]);
		free(ids[side]);
		stmt_vec_clear(&v[side]);
	}
}
END_TEST

static Suite *
reload_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("reload");
	tc = tcase_create("diff");
	tcase_add_loop_test(tc, test_diff, 0,
	    sizeof(cases) / sizeof(cases[0]));
	tcase_add_loop_test(tc, test_apply_plan, 0,
	    sizeof(cases) / sizeof(cases[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("big");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_diff_big, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(reload_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
