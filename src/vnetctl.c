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

/*
 * The verbs a person types, for help and for the usage shown when a
 * statement does not parse.  The daemon's parser (stmt.c) stays the
 * authority on what is valid: a verb missing here is still sent.
 */
struct verb {
	const char	*name;
	const char	*args;
	const char	*what;
};

static const struct verb verbs[] = {
	{ "add-link", "NAME HOST:PORT [tls] [peer NODE] [queue BYTES] "
	    "[rate RATE|none] [aqm off|codel|fq_codel [target TIME] "
	    "[interval TIME]] [congestion CC|default]",
	    "dial another vnetd and keep the link up" },
	{ "del-link", "NAME", "close link NAME and stop dialling it" },
	{ "set-link", "NAME [rate RATE|none] [aqm off|codel|fq_codel "
	    "[target TIME] [interval TIME]] [congestion CC|default]",
	    "change a link's shaping, queue management or congestion control" },
	{ "add-route", "SRC DST link|interface NAME",
	    "forward frames from SRC to DST (MAC, any or not-MAC) to NAME" },
	{ "del-route", "SRC DST link|interface NAME", "remove a route" },
	{ "add-interface", "NAME tap [DEV] | NAME pcap DEV [promisc yes|no] "
	    "[filter EXPR]", "attach a TAP device or capture a device" },
	{ "del-interface", "NAME", "detach interface NAME" },
	{ "add-listen", "ADDR:PORT [tls] [allow CIDR[,CIDR...]]",
	    "accept links on ADDR:PORT" },
	{ "del-listen", "ADDR:PORT", "stop accepting links on ADDR:PORT" },
	{ "learn", "yes|no", "forward by learnt MAC addresses, as a switch" },
	{ "keepalive", "SECONDS", "the interval of keepalives (1..3600)" },
	{ "offload", "yes|no", "large frames between the TAP devices and "
	    "links" },
	{ "threads", "yes|no", "I/O threads for the links" },
	{ "vcc", "IFACE ecn virtual | share IFACE window BYTES | class NAME "
	    "[ATTRIBUTE...]", "virtual congestion control of guests' TCP" },
	{ "del-vcc", "IFACE ecn | share IFACE | class NAME",
	    "remove a vcc policy" },
	{ "reload", "[-n]", "apply what changed in the configuration file; "
	    "-n: show the changes, apply nothing" },
	{ "save", "[FILE]", "write the running state to the configuration "
	    "file or FILE" },
	{ "show", "links [all]|link NAME|refused|routes|interfaces|macs|"
	    "stats|config|flows|vcc|nodes|topology|traffic [nodes|topology "
	    "[THRESHOLD]]", "show the running state" },
	{ "help", "[VERB]", "list the verbs, or show how to use VERB" },
};

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

static void
usage(FILE *fp)
{
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
	for (size_t i = 0, col = 6; i < nitems(verbs); i++) {
		if (col + strlen(verbs[i].name) + 2 > 72) {
			fprintf(fp, "\n      ");
			col = 6;
		}
		col += fprintf(fp, " %s%s", verbs[i].name,
		    i + 1 < nitems(verbs) ? "," : "\n");
	}
}

/* The verb a statement keyword is, by its add- form where it has one. */
static const struct verb *
verb_find(const char *name)
{
	static const char *const aliases[][2] = {
		{ "link", "add-link" }, { "route", "add-route" },
		{ "interface", "add-interface" }, { "listen", "add-listen" },
		{ "add-vcc", "vcc" },
	};
	size_t	 i;

	for (i = 0; i < nitems(aliases); i++)
		if (strcmp(name, aliases[i][0]) == 0)
			name = aliases[i][1];
	for (i = 0; i < nitems(verbs); i++)
		if (strcmp(name, verbs[i].name) == 0)
			return &verbs[i];
	return NULL;
}

static int
help(const char *name)
{
	const struct verb *v;
	size_t	 i;

	if (name == NULL) {
		printf("usage: vnetctl [-j | -t [-H]] [-s SOCKET] VERB [ARG ...]\n\n");
		for (i = 0; i < nitems(verbs); i++)
			printf("  %-14s %s\n", verbs[i].name, verbs[i].what);
		printf("\n\"vnetctl help VERB\" shows a verb's arguments; "
		    "vnetctl(8) has the details.\n");
		return 0;
	}
	if ((v = verb_find(name)) == NULL) {
		fprintf(stderr, "vnetctl: unknown verb '%s'; \"vnetctl help\" "
		    "lists them\n", name);
		return 1;
	}
	printf("usage: vnetctl %s %s\n  %s\n", v->name, v->args, v->what);
	return 0;
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
		fprintf(stderr, "usage: vnetctl %s %s\n", v->name, v->args);
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
	static const struct option longopts[] = {
		{ "help",	no_argument,	NULL,	'h' },
		{ "version",	no_argument,	NULL,	'V' },
		{ NULL,		0,		NULL,	0 },
	};
	const char	*sock = VNETD_SOCKET;
	char		 req[CTL_REQUEST_MAX], err[512];
	char		 cwd[PATH_MAX], abspath[PATH_MAX + 2];
	int		 ch, tabular = 0, header = 0, json = 0, fd, r;
	enum out_format	 fmt;

	/* "+": options end at the verb (reload -n is the verb's). */
	while ((ch = getopt_long(argc, argv, "+s:tjHhV", longopts, NULL)) != -1) {
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
		default:
			usage(stderr);
			return 1;
		}
	}
	argc -= optind;
	argv += optind;
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
