/* vnetctl: sends one statement to a running vnetd and prints the answer. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: vnetctl [-j | -t [-H]] [-s SOCKET] VERB [ARG ...]\n"
	    "verbs: add-link, del-link, add-route, del-route, add-interface,\n"
	    "       del-interface, add-listen, del-listen, learn, keepalive,\n"
	    "       set-link NAME OPTIONS, reload, save [FILE], vcc, del-vcc,\n"
	    "       show links|routes|interfaces|macs|stats|config|flows|vcc,\n"
	    "       show link NAME\n");
	exit(1);
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

int
main(int argc, char **argv)
{
	const char	*sock = VNETD_SOCKET;
	char		 req[CTL_REQUEST_MAX], err[512];
	char		 cwd[PATH_MAX], abspath[PATH_MAX + 2];
	int		 ch, tabular = 0, header = 0, json = 0, fd, r;
	enum out_format	 fmt;

	while ((ch = getopt(argc, argv, "s:tjHh")) != -1) {
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
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0 || (json && tabular) || (header && !tabular))
		usage();
	if (json)
		fmt = OUT_JSON;
	else if (tabular)
		fmt = header ? OUT_TSV_HEADER : OUT_TSV;
	else
		fmt = OUT_TEXT;
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
	if ((fd = ctl_connect(sock)) == -1) {
		fprintf(stderr, "vnetctl: %s: %s\n", sock, strerror(errno));
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
