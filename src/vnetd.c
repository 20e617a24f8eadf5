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
#include "link.h"
#include "log.h"
#include "priv.h"

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

static void
log_warning(const char *msg, void *arg)
{
	log_warnx("%s", msg);
}

/*
 * -n: what the file alone cannot tell, checked without side effects: that
 * the user and the group exist and that the TLS files load and fit this
 * node.  Reports FILE:LINE: message; returns the number of errors.
 */
static int
check_system(const struct config *cf)
{
	struct vnetd	 d;
	const struct stmt *st;
	struct stmt	 tmp;
	char		 err[512];
	int		 errors = 0, tls_line = 0, line;
	size_t		 i;

	if (vnetd_init(&d) == -1) {
		fprintf(stderr, "vnetd: initialising: %s\n", strerror(errno));
		return 1;
	}
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < cf->lines.n; i++) {
		st = stmt_vec_get(&cf->lines, i, &tmp);
		line = cf->lines.v[i].line;
		/*
		 * What the kernel lets a link use; unless run as root, a
		 * refusal may only be ours (the daemon has CAP_NET_ADMIN).
		 */
		if ((st->lopts & STMT_LOPT_CONGESTION) &&
		    link_congestion_check(st->congestion, err,
		    sizeof(err)) == -1 && (errno != EPERM || geteuid() == 0)) {
			fprintf(stderr, "%s:%d: link %s: %s\n", cf->file,
			    line, st->name, err);
			errors++;
		}
		if (config_stmt_order(st) != 0)
			continue;
		if (st->kind == STMT_TLS_CERT)
			tls_line = line;
		if (vnetd_apply(&d, st, 0, err, sizeof(err)) == -1) {
			fprintf(stderr, "%s:%d: %s\n", cf->file, line, err);
			errors++;
		}
	}
	if (errors == 0 && tls_line != 0) {
		if (vnetd_tls(&d, err, sizeof(err)) == NULL) {
			fprintf(stderr, "%s:%d: %s\n", cf->file, tls_line, err);
			errors++;
		} else if (d.tls_warning[0] != '\0')
			fprintf(stderr, "%s:%d: warning: %s\n", cf->file,
			    tls_line, d.tls_warning);
	}
	vnetd_free(&d);
	return errors;
}

static int
cmp_order(const void *a, const void *b)
{
	const struct stmt_item *x = a, *y = b;
	int	 ox = config_kind_order(x->kind), oy = config_kind_order(y->kind);

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
	struct stmt	 tmp;
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
		config_warnings(&cf, print_error, NULL);
		if (check_system(&cf) != 0) {
			config_clear(&cf);
			return 1;
		}
		if (verbose)
			fprintf(stderr, "%s: configuration OK\n", conffile);
		config_clear(&cf);
		return 0;
	}

	log_init("vnetd", foreground, verbose);
	config_warnings(&cf, log_warning, NULL);
	if (vnetd_init(&d) == -1)
		fatal("initialising");
	/* Settings, listeners, interfaces, links, routes: each finds what it names. */
	qsort(cf.lines.v, cf.lines.n, sizeof(cf.lines.v[0]), cmp_order);
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < cf.lines.n; i++)
		if (vnetd_apply(&d, stmt_vec_get(&cf.lines, i, &tmp), 0, err,
		    sizeof(err)) == -1)
			fatalx("%s:%d: %s", cf.file, cf.lines.v[i].line, err);
	config_clear(&cf);
	/* Reload reads it again after the daemon has changed directory. */
	if (realpath(conffile, d.config_file) == NULL)
		snprintf(d.config_file, sizeof(d.config_file), "%s", conffile);
	/* Now, while the key is readable: links added later may want TLS. */
	if (d.tls_cert[0] != '\0') {
		if (vnetd_tls(&d, err, sizeof(err)) == NULL)
			fatalx("%s", err);
		log_info("TLS: certificate %s, CA %s%s%s", d.tls_cert,
		    d.tls_ca, d.tls_crl[0] != '\0' ? ", CRL " : "",
		    d.tls_crl);
		if (d.tls_warning[0] != '\0')
			log_warnx("warning: %s", d.tls_warning);
	}

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
	/* Devices, sockets and files are open: root is no longer needed. */
	if (d.user[0] != '\0') {
		if (priv_drop(d.user_uid, d.user_gid, err, sizeof(err)) == -1)
			fatalx("user %s: %s", d.user, err);
		log_info("running as user %s (uid %ld) with CAP_NET_ADMIN only",
		    d.user, (long)d.user_uid);
	}
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
	if (pidfile != NULL && unlink(pidfile) == -1)
		log_warn("pidfile %s", pidfile);
	return d.exit_code;
}
