/*
 * vnetctl's verb table (verb.h) against the parser and the daemon: every
 * statement the daemon takes at run time is a verb and no other is; what
 * the command language says works at run time is what the daemon lets
 * through; every keyword a verb completes to is in its usage; show
 * completes to exactly what the parser takes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "stmt.h"
#include "verb.h"

struct words {
	char	 w[64][32];
	size_t	 n;
};

static void
collect(const char *word, void *arg)
{
	struct words	*ws = arg;

	ck_assert_uint_lt(ws->n, 64);
	snprintf(ws->w[ws->n++], sizeof(ws->w[0]), "%s", word);
}

static int
has(const struct words *ws, const char *w)
{
	size_t	 i;

	for (i = 0; i < ws->n; i++)
		if (strcmp(ws->w[i], w) == 0)
			return 1;
	return 0;
}

/* 1 if word is a token of text (tokens: runs of [a-z0-9_-]). */
static int
in_text(const char *text, const char *word)
{
	size_t	 n = strlen(word);
	const char *p;

	for (p = text; (p = strstr(p, word)) != NULL; p++) {
		int before = p == text || strchr("abcdefghijklmnopqrstuvwxyz"
		    "0123456789_-", p[-1]) == NULL;
		int after = p[n] == '\0' || strchr("abcdefghijklmnopqrstuvwxyz"
		    "0123456789_-", p[n]) == NULL;

		if (before && after)
			return 1;
	}
	return 0;
}

START_TEST(runtime_is_the_daemons)
{
	int	 k;

	for (k = 1; k <= STMT_KIND_LAST; k++)
		ck_assert_msg(stmt_runtime(k) == !vnetd_startup_only(k),
		    "statement %s: stmt_runtime() says %d, but the daemon "
		    "%s it at run time: change one to agree",
		    stmt_keyword(k, STMT_OP_SET), stmt_runtime(k),
		    vnetd_startup_only(k) ? "refuses" : "takes");
	/* What vnetctl's help says a reload takes, the daemon's reload takes. */
	for (k = 1; k <= STMT_KIND_LAST; k++)
		ck_assert_msg(!stmt_reloadable(k) || (!stmt_runtime(k) &&
		    vnetd_reloadable(k)), "statement %s: stmt_reloadable() "
		    "says a reload takes it, but it is a verb or the "
		    "daemon's reload refuses it", stmt_keyword(k, STMT_OP_SET));
}
END_TEST

START_TEST(runtime_statements_are_verbs)
{
	enum stmt_kind	 kind;
	enum stmt_op	 op;
	const char	*kw;
	size_t		 i;

	for (i = 0; (kw = stmt_keyword_at(i, &kind, &op)) != NULL; i++) {
		if (stmt_runtime(kind))
			ck_assert_msg(verb_find(kw) != NULL, "%s works at run "
			    "time but is no verb of vnetctl's", kw);
		else
			ck_assert_msg(verb_find(kw) == NULL, "%s is a verb, "
			    "but the daemon takes it only from the file", kw);
	}
}
END_TEST

START_TEST(verbs_are_statements)
{
	const struct verb *v;
	enum stmt_kind	 kind;
	const char	*kw;
	size_t		 i, j;

	for (i = 0; (v = verb_at(i)) != NULL; i++) {
		if (strcmp(v->name, "help") == 0)
			continue;
		for (j = 0; (kw = stmt_keyword_at(j, &kind, NULL)) != NULL;
		    j++)
			if (strcmp(kw, v->name) == 0)
				break;
		ck_assert_msg(kw != NULL, "verb %s: the parser has no such "
		    "statement", v->name);
		ck_assert_msg(stmt_runtime(kind), "verb %s: not at run time",
		    v->name);
		ck_assert_ptr_eq(verb_find(v->name), v);
	}
}
END_TEST

/* Every keyword of every rule is in the verb's help (usage and line). */
START_TEST(completions_are_in_the_usage)
{
	const struct verb *v;
	const struct verb_rule *r;
	char		 usage[1024], help[1200], tok[32];
	const char	*p;
	size_t		 i, n;

	for (i = 0; (v = verb_at(i)) != NULL; i++) {
		verb_usage(v, usage, sizeof(usage));
		snprintf(help, sizeof(help), "%s %s", usage, v->what);
		for (r = v->rules; r != NULL && r->pos != 0; r++) {
			if (r->after != NULL)
				ck_assert_msg(in_text(help, r->after),
				    "verb %s: '%s' is not in its help '%s'",
				    v->name, r->after, help);
			for (p = r->words; *p != '\0'; p += n) {
				if ((n = strcspn(p, " ")) == 0) {
					n = 1;
					continue;
				}
				snprintf(tok, sizeof(tok), "%.*s", (int)n, p);
				if (tok[0] == '@')
					continue;
				ck_assert_msg(in_text(help, tok), "verb %s "
				    "completes to '%s', which its help '%s' "
				    "does not name", v->name, tok, help);
			}
		}
	}
}
END_TEST

START_TEST(show_completes_what_the_parser_takes)
{
	struct words	 ws = { .n = 0 };
	char		*argv[] = { "show", "traffic" };
	const char	*w, *args;
	struct stmt	 st;
	struct stmt_error err;
	char		 line[64];
	size_t		 i;

	verb_complete(1, argv, collect, &ws);
	for (i = 0; (w = stmt_show_at(i, &args)) != NULL; i++) {
		ck_assert_msg(has(&ws, w), "show %s is not completed", w);
		snprintf(line, sizeof(line), "show %s%s", w,
		    strcmp(args, "NAME") == 0 ? " x" : "");
		ck_assert_msg(stmt_parse(line, &st, &err) == 1, "%s: %s",
		    line, err.msg);
	}
	ck_assert_uint_eq(ws.n, i);
	ck_assert(has(&ws, "adapt"));
	ws.n = 0;
	verb_complete(2, argv, collect, &ws);
	ck_assert_uint_eq(ws.n, 3);
	ck_assert(has(&ws, "nodes") && has(&ws, "topology") &&
	    has(&ws, "matrix"));
	ws.n = 0;
	argv[1] = "link";
	verb_complete(2, argv, collect, &ws);
	ck_assert_uint_eq(ws.n, 1);
	ck_assert_str_eq(ws.w[0], "@link");
}
END_TEST

START_TEST(verbs_complete_first)
{
	struct words	 ws = { .n = 0 };
	const struct verb *v;
	size_t		 i;

	verb_complete(0, NULL, collect, &ws);
	for (i = 0; (v = verb_at(i)) != NULL; i++)
		ck_assert(has(&ws, v->name));
	ck_assert_uint_eq(ws.n, i);
	ck_assert_ptr_nonnull(verb_find("adapt"));
	ck_assert_ptr_eq(verb_find("route"), verb_find("add-route"));
	ck_assert_ptr_eq(verb_find("add-vcc"), verb_find("vcc"));
	ck_assert_ptr_null(verb_find("offload"));
	ck_assert_ptr_null(verb_find("nope"));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("verb");
	TCase	*tc = tcase_create("table");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, runtime_is_the_daemons);
	tcase_add_test(tc, runtime_statements_are_verbs);
	tcase_add_test(tc, verbs_are_statements);
	tcase_add_test(tc, completions_are_in_the_usage);
	tcase_add_test(tc, show_completes_what_the_parser_takes);
	tcase_add_test(tc, verbs_complete_first);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
