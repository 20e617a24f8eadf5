/* vnetd: the VNET overlay daemon. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "control.h"
#include "daemon.h"
#include "log.h"

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: vnetd [-Fnv] [-f FILE] [-s SOCKET] "
	    "[-p PIDFILE]\n");
	exit(1);
}

static void
print_error(const char *msg, void *arg)
{
	fprintf(stderr, "%s\n", msg);
}

static int
cmp_order(const void *a, const void *b)
{
	const struct config_line *x = a, *y = b;
	int	 ox = config_stmt_order(&x->st), oy = config_stmt_order(&y->st);

	if (ox != oy)
		return ox - oy;
	return x->line - y->line;
}

/*
 * Detaches from the terminal: fork, setsid (a new session without a
 * controlling terminal), fork again (no longer a session leader, so no
 * terminal can be acquired), change to /, standard descriptors on
 * /dev/null.  The first process waits until the daemon says it is running
 * (pid file written) and exits 0, or 1 if the daemon died first: whoever
 * started vnetd learns whether it started, and finds the pid file there.
 * Returns, in the daemon, the descriptor to report readiness on.
 */
static int
daemonize(void)
{
	int	 fd, p[2];
	ssize_t	 n;
	char	 c;

	if (pipe2(p, O_CLOEXEC) == -1)
		fatal("pipe");
	switch (fork()) {
	case -1:
		fatal("fork");
	case 0:
		break;
	default:
		close(p[1]);
		c = 0;
		do {
			n = read(p[0], &c, 1);
		} while (n == -1 && errno == EINTR);
		_exit(n == 1 && c == 'r' ? 0 : 1);
	}
	close(p[0]);
	if (setsid() == -1)
		fatal("setsid");
	switch (fork()) {
	case -1:
		fatal("fork");
	case 0:
		break;
	default:
		_exit(0);
	}
	if (chdir("/") == -1)
		fatal("chdir /");
	umask(022);
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	return p[1];
}

static int
write_pidfile(const char *path)
{
	FILE	*fp;

	if ((fp = fopen(path, "w")) == NULL)
		return -1;
	fprintf(fp, "%ld\n", (long)getpid());
	return fclose(fp);
}

int
main(int argc, char **argv)
{
	struct vnetd	 d;
	struct config	 cf;
	const char	*conffile = VNETD_CONF, *sock = NULL, *pidfile = NULL;
	char		 err[512], c = 'r';
	int		 ch, foreground = 0, check = 0, verbose = 0, ready = -1;
	size_t		 i;

	while ((ch = getopt(argc, argv, "Ff:np:s:vh")) != -1) {
		switch (ch) {
		case 'F':
			foreground = 1;
			break;
		case 'f':
			conffile = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	/* Errors are printed FILE:LINE: message, one a line. */
	if (config_load(conffile, &cf, print_error, NULL) != 0) {
		config_clear(&cf);
		return 1;
	}
	if (check) {
		if (verbose)
			fprintf(stderr, "%s: configuration OK\n", conffile);
		config_clear(&cf);
		return 0;
	}

	log_init("vnetd", foreground, verbose);
	if (vnetd_init(&d) == -1)
		fatal("initialising");
	/* Settings, listeners, interfaces, links, routes: each finds what it names. */
	qsort(cf.lines, cf.n, sizeof(cf.lines[0]), cmp_order);
	for (i = 0; i < cf.n; i++)
		if (vnetd_apply(&d, &cf.lines[i].st, 0, err, sizeof(err)) == -1)
			fatalx("%s:%d: %s", cf.file, cf.lines[i].line, err);
	config_clear(&cf);
	/* Reload reads it again after the daemon has changed directory. */
	if (realpath(conffile, d.config_file) == NULL)
		snprintf(d.config_file, sizeof(d.config_file), "%s", conffile);

	d.control_fixed = sock != NULL;
	if (sock != NULL)
		snprintf(d.control_path, sizeof(d.control_path), "%s", sock);
	if (d.control_path[0] == '\0')
		snprintf(d.control_path, sizeof(d.control_path), "%s",
		    VNETD_SOCKET);
	if ((d.control = control_open(&d, d.control_path, err,
	    sizeof(err))) == NULL)
		fatalx("%s", err);
	if (vnetd_start(&d) == -1)
		fatal("starting the event loop");

	if (!foreground) {
		ready = daemonize();
		/* The event base must learn that it is in a new process. */
		if (event_reinit(d.base) == -1)
			fatalx("event_reinit");
	}
	if (pidfile != NULL && write_pidfile(pidfile) == -1)
		log_warn("pidfile %s", pidfile);
	if (ready != -1) {
		(void)write(ready, &c, 1);
		close(ready);
	}
	log_info("node %s in network %s running, control socket %s",
	    d.node, d.network, d.control_path);

	d.exit_code = 1;
	event_base_dispatch(d.base);

	log_info("exiting");
	vnetd_free(&d);
	if (pidfile != NULL)
		unlink(pidfile);
	return d.exit_code;
}
