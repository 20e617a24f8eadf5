/* vnetctl: sends one statement to a running vnetd and prints the answer. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "paths.h"
#include "stmt.h"
#include "verb.h"

static const struct option longopts[] = {
	{ "help",	no_argument,	NULL,	'h' },
	{ "version",	no_argument,	NULL,	'V' },
	{ "complete",	no_argument,	NULL,	'C' },
	{ NULL,		0,		NULL,	0 },
};
/* "+": options end at the verb (reload -n is the verb's). */
#define OPTSTRING	"+s:tjHhV"

static void
usage(FILE *fp)
{
	const struct verb *v;
	size_t	 i, col = 6;

	fprintf(fp, "usage: vnetctl [-j | -t [-H]] [-s SOCKET] VERB [ARG ...]\n"
	    "       vnetctl help [VERB]\n"
	    "       vnetctl -h | -V\n"
	    "  -s SOCKET  the control socket of vnetd (default %s)\n"
	    "  -t         tables as tab-separated rows without a header\n"
	    "  -H         with -t, the column names as a first row\n"
	    "  -j         tables as JSON, as vnetd's http server gives them\n"
	    "  -h, --help     this text\n"
	    "  -V, --version  the version\n"
	    "verbs:", VNETD_SOCKET);
	for (i = 0; (v = verb_at(i)) != NULL; i++) {
		if (col + strlen(v->name) + 2 > 72) {
			fprintf(fp, "\n      ");
			col = 6;
		}
		col += fprintf(fp, " %s%s", v->name,
		    verb_at(i + 1) != NULL ? "," : "\n");
	}
}

/*
 * The statements only the configuration file gives, wrapped: those a
 * reload takes (reload 1), or those that need a restart.
 */
static void
help_file_only(int reload)
{
	enum stmt_kind	 kind;
	enum stmt_op	 op;
	const char	*kw;
	size_t		 i, col = 2;

	printf("\nIn the configuration file only (vnetd.conf(5)); %s:\n ",
	    reload ? "\"vnetctl reload\" applies a change of" :
	    "restart vnetd to change");
	for (i = 0; (kw = stmt_keyword_at(i, &kind, &op)) != NULL; i++) {
		if (stmt_runtime(kind) || stmt_reloadable(kind) != reload)
			continue;
		if (col + strlen(kw) + 1 > 72) {
			printf("\n ");
			col = 2;
		}
		col += (size_t)printf(" %s", kw);
	}
	printf("\n");
}

/*
 * A statement keyword that is no verb, one of the file's only: 1, or 2 if
 * a reload takes it.
 */
static int
file_only(const char *name)
{
	enum stmt_kind	 kind;
	enum stmt_op	 op;
	const char	*kw;
	size_t		 i;

	for (i = 0; (kw = stmt_keyword_at(i, &kind, &op)) != NULL; i++)
		if (strcmp(kw, name) == 0 && !stmt_runtime(kind))
			return stmt_reloadable(kind) ? 2 : 1;
	return 0;
}

static int
help(const char *name)
{
	const struct verb *v;
	char		 args[1024];
	size_t		 i;

	if (name == NULL) {
		printf("usage: vnetctl [-j | -t [-H]] [-s SOCKET] VERB [ARG ...]\n\n");
		for (i = 0; (v = verb_at(i)) != NULL; i++)
			printf("  %-14s %s\n", v->name, v->what);
		help_file_only(1);
		help_file_only(0);
		printf("\n\"vnetctl help VERB\" shows a verb's arguments; "
		    "vnetctl(8) has the details.\n");
		return 0;
	}
	if ((v = verb_find(name)) == NULL) {
		switch (file_only(name)) {
		case 2:
			printf("%s: a statement of the configuration file "
			    "only (vnetd.conf(5)); vnetd reads it at start and "
			    "at each reload: change it there and run vnetctl "
			    "reload\n", name);
			return 0;
		case 1:
			printf("%s: a statement of the configuration file "
			    "only (vnetd.conf(5)); vnetd reads it at start: "
			    "restart vnetd to change it\n", name);
			return 0;
		}
		fprintf(stderr, "vnetctl: unknown verb '%s'; \"vnetctl help\" "
		    "lists them\n", name);
		return 1;
	}
	printf("usage: vnetctl %s %s\n  %s\n", v->name,
	    verb_usage(v, args, sizeof(args)), v->what);
	return 0;
}

static void
complete_emit(const char *word, void *arg)
{
	printf("%s\n", word);
}

/*
 * --complete WORD...: the candidates for the word after those (the verb
 * and its arguments so far), one a line; with no word, the options too.
 * The bash completion's one source of verbs and keywords.
 */
static int
complete(int argc, char **argv)
{
	const char	*o;
	size_t		 i;

	if (argc == 0) {
		for (o = OPTSTRING; *o != '\0'; o++)
			if (*o != '+' && *o != ':')
				printf("-%c\n", *o);
		for (i = 0; longopts[i].name != NULL; i++)
			if (longopts[i].val != 'C')
				printf("--%s\n", longopts[i].name);
	}
	verb_complete(argc, argv, complete_emit, NULL);
	return fflush(stdout) == EOF;
}

/* Joins the words into one request line, quoting where the parser needs it. */
static int
join_args(int argc, char **argv, char *buf, size_t len)
{
	size_t	 o = 0;
	int	 i;
	const char *p;

	for (i = 0; i < argc; i++) {
		int quote = argv[i][0] == '\0' ||
		    strpbrk(argv[i], " \t#\"\\") != NULL;

		if (i > 0 && o < len)
			buf[o++] = ' ';
		if (quote && o < len)
			buf[o++] = '"';
		for (p = argv[i]; *p != '\0' && o < len; p++) {
			if (*p == '\n' || *p == '\r')
				return -1;
			if (quote && (*p == '"' || *p == '\\') && o < len)
				buf[o++] = '\\';
			if (o < len)
				buf[o++] = *p;
		}
		if (quote && o < len)
			buf[o++] = '"';
	}
	if (o >= len)
		return -1;
	buf[o] = '\0';
	return 0;
}

/*
 * A request that does not parse here would not parse in the daemon either
 * (one parser): say so with the verb's usage, without a round trip.
 */
static int
check_syntax(const char *verb, const char *req)
{
	struct stmt		 st;
	struct stmt_error	 perr;
	const struct verb	*v;
	char			 args[1024];

	if (stmt_parse(req, &st, &perr) == 1)
		return 0;
	v = verb_find(verb);
	if (v == NULL && strncmp(perr.msg, "unknown statement", 17) == 0) {
		fprintf(stderr, "vnetctl: unknown verb '%s'; \"vnetctl help\" "
		    "lists them\n", verb);
		return -1;
	}
	fprintf(stderr, "vnetctl: %s\n", perr.msg);
	if (v != NULL)
		fprintf(stderr, "usage: vnetctl %s %s\n", v->name,
		    verb_usage(v, args, sizeof(args)));
	return -1;
}

/* Why connecting failed, and what usually fixes it. */
static void
connect_error(const char *sock, int error)
{
	const char *hint;

	switch (error) {
	case ENOENT:
	case ECONNREFUSED:
		hint = "is vnetd running? If it uses another socket (vnetd -s, "
		    "or `control` in its configuration), name it with -s";
		break;
	case EACCES:
	case EPERM:
		hint = "the control socket needs root or membership of the "
		    "`control-group` of vnetd.conf";
		break;
	case ENAMETOOLONG:
		hint = "a socket path is at most 107 bytes";
		break;
	case ENOTSOCK:
		hint = "that is not a socket: choose vnetd's with -s";
		break;
	default:
		hint = NULL;
	}
	fprintf(stderr, "vnetctl: cannot connect to %s: %s%s%s\n", sock,
	    strerror(error), hint != NULL ? ": " : "", hint != NULL ? hint : "");
}

int
main(int argc, char **argv)
{
	const char	*sock = VNETD_SOCKET;
	char		 req[CTL_REQUEST_MAX], err[512];
	char		 cwd[PATH_MAX], abspath[PATH_MAX + 2];
	int		 ch, tabular = 0, header = 0, json = 0, fd, r;
	int		 completing = 0;
	enum out_format	 fmt;

	while ((ch = getopt_long(argc, argv, OPTSTRING, longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			sock = optarg;
			break;
		case 't':
			tabular = 1;
			break;
		case 'H':
			header = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("vnetctl %s\n", PACKAGE_VERSION);
			return 0;
		case 'C':
			completing = 1;
			break;
		default:
			usage(stderr);
			return 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (completing)
		return complete(argc, argv);
	if (argc == 0 || (json && tabular) || (header && !tabular)) {
		usage(stderr);
		return 1;
	}
	if (json)
		fmt = OUT_JSON;
	else if (tabular)
		fmt = header ? OUT_TSV_HEADER : OUT_TSV;
	else
		fmt = OUT_TEXT;
	if (strcmp(argv[0], "help") == 0) {
		if (argc > 2) {
			fprintf(stderr, "usage: vnetctl help [VERB]\n");
			return 1;
		}
		return help(argc == 2 ? argv[1] : NULL);
	}
	/* The daemon runs in /: a file to save to is named from here. */
	if (strcmp(argv[0], "save") == 0 && argc == 2 && argv[1][0] != '/' &&
	    argv[1][0] != '\0') {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			fprintf(stderr, "vnetctl: getcwd: %s\n",
			    strerror(errno));
			return 1;
		}
		snprintf(abspath, sizeof(abspath), "%s/%s", cwd, argv[1]);
		argv[1] = abspath;
	}
	if (join_args(argc, argv, req, sizeof(req)) == -1) {
		fprintf(stderr, "vnetctl: request too long or contains a "
		    "line break\n");
		return 1;
	}
	if (check_syntax(argv[0], req) == -1)
		return 1;
	if ((fd = ctl_connect(sock)) == -1) {
		connect_error(sock, errno);
		return 1;
	}
	r = ctl_request(fd, req, stdout, stderr, fmt, err, sizeof(err));
	close(fd);
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "vnetctl: stdout: %s\n", strerror(errno));
		return 1;
	}
	if (r != 0) {
		fprintf(stderr, "vnetctl: %s\n", err);
		return 1;
	}
	return 0;
}
