/* vnetd: the VNET overlay daemon. */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <getopt.h>
#include <libgen.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "control.h"
#include "daemon.h"
#include "history.h"
#include "http.h"
#include "link.h"
#include "log.h"
#include "paths.h"
#include "priv.h"
#include "reload.h"
#include "routing_daemon.h"

/*
 * The layers above the daemon: reload (and SIGHUP), the control plane, the
 * control socket, the status server and the history.  The daemon knows
 * none of them; they are its modules (daemon.h), added in this order, in
 * which the daemon calls them: the control plane's statistics come before
 * the control socket's, its statements in the configuration before the
 * status server's, and reload is cancelled before the control socket and
 * the status server close.
 */
struct upper {
	struct vnetd	*d;
	struct event	*hup;
	struct http	*http;		/* the status server, or NULL */
};

static void
upper_hup_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct upper	*u = arg;
	char		 err[512];

	log_info("SIGHUP: reloading %s", u->d->config_file);
	if (reload_start(u->d, NULL, NULL, NULL, err, sizeof(err)) == -1)
		log_warnx("%s", err);
}

static int
upper_reload_start(void *arg)
{
	struct upper	*u = arg;

	if ((u->hup = evsignal_new(u->d->base, SIGHUP, upper_hup_cb, u)) ==
	    NULL || event_add(u->hup, NULL) == -1)
		return -1;
	return 0;
}

static void
upper_reload_show(void *arg, const struct stmt *st, struct evbuffer *out)
{
	struct upper	*u = arg;

	if (st->show == STMT_SHOW_CONFIG)
		reload_show_note(u->d, out);
}

static void
upper_reload_stop(void *arg)
{
	struct upper	*u = arg;

	reload_cancel(u->d);
}

static void
upper_reload_free(void *arg)
{
	struct upper	*u = arg;

	if (u->hup != NULL)
		event_free(u->hup);
	u->hup = NULL;
}

static void
upper_control_show(void *arg, const struct stmt *st, struct evbuffer *out)
{
	struct upper	*u = arg;

	if (st->show == STMT_SHOW_STATS && u->d->control != NULL)
		control_show_stats(u->d->control, out);
}

static void
upper_control_stop(void *arg)
{
	struct upper	*u = arg;

	if (u->d->control != NULL)
		control_close(u->d->control);
	u->d->control = NULL;
}

static int
upper_http_apply(void *arg, const struct stmt *st, char *err, size_t errlen)
{
	struct upper	*u = arg;

	if (u->http != NULL) {
		snprintf(err, errlen, "http: given twice");
		return -1;
	}
	if ((u->http = http_new(u->d, st, err, errlen)) == NULL)
		return -1;
	return 0;
}

static void
upper_http_config(void *arg, void (*cb)(const struct stmt *, void *),
    void *cbarg)
{
	struct upper	*u = arg;

	if (u->http != NULL)
		cb(http_conf(u->http), cbarg);
}

static void
upper_http_stop(void *arg)
{
	struct upper	*u = arg;

	http_free(u->http);
	u->http = NULL;
}

static void
upper_history_tick(void *arg)
{
	struct upper	*u = arg;

	history_collect(u->d->history, u->d);
}

static const char *
upper_history_columns(void *arg, enum stmt_show what)
{
	return what == STMT_SHOW_INTERFACES ? HISTORY_COLUMNS : NULL;
}

static const char *
upper_history_fields(void *arg, enum stmt_show what, const char *row,
    char *buf, size_t len)
{
	struct upper	*u = arg;

	if (what != STMT_SHOW_INTERFACES)
		return NULL;
	return history_fields(u->d->history, HISTORY_IFACE, row, buf, len);
}

static void
upper_history_free(void *arg)
{
	struct upper	*u = arg;

	history_free(u->d->history);
	u->d->history = NULL;
}

/* The rates in show links come from the history. */
static const char *
upper_link_history(void *arg, const char *name, char *buf, size_t len)
{
	struct vnetd	*d = arg;

	return history_fields(d->history, HISTORY_LINK, name, buf, len);
}

/* After vnetd_init(); u lives as long as d.  0, or -1 (out of memory). */
static int
upper_add(struct upper *u, struct vnetd *d)
{
	const struct vnetd_module mods[] = {
		{ .name = "reload", .arg = u, .start = upper_reload_start,
		  .show = upper_reload_show, .stop = upper_reload_stop,
		  .free = upper_reload_free },
		{ .name = "control", .arg = u, .show = upper_control_show,
		  .stop = upper_control_stop },
		{ .name = "http", .arg = u, .kinds = { STMT_HTTP },
		  .nkinds = 1, .apply = upper_http_apply,
		  .config = upper_http_config, .stop = upper_http_stop },
		{ .name = "history", .arg = u, .tick = upper_history_tick,
		  .columns = upper_history_columns,
		  .fields = upper_history_fields,
		  .free = upper_history_free },
	};
	size_t	 i;

	memset(u, 0, sizeof(*u));
	u->d = d;
	if ((d->history = history_new()) == NULL)
		return -1;
	/* reload, then the control plane, then the rest. */
	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (vnetd_module_add(d, &mods[i]) == -1 ||
		    (i == 0 && routing_daemon_add(d) == -1))
			return -1;
	d->links.hooks.history = upper_link_history;
	d->links.hooks.history_columns = HISTORY_COLUMNS;
	return 0;
}

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: vnetd [-Fnv] [-f FILE] [-s SOCKET] [-p PIDFILE]\n"
	    "       vnetd -h | -V\n"
	    "  -f FILE     the configuration (default %s)\n"
	    "  -s SOCKET   the control socket (default: the file's `control`, "
	    "else\n              %s)\n"
	    "  -p PIDFILE  write the process id there\n"
	    "  -F          stay in the foreground, log to standard error\n"
	    "  -n          check the configuration and exit; -nv: say so if "
	    "it is OK\n"
	    "  -v          log debug messages too\n"
	    "  -h, --help     this text\n"
	    "  -V, --version  the version\n", VNETD_CONF, VNETD_SOCKET);
}

/*
 * The control socket's directory: the default one is made when missing
 * (it is usually on a tmpfs, gone after a reboot); any other must exist,
 * and the error says how to get past it.
 */
static void
control_dir(const char *sock, int is_default)
{
	char		 buf[PATH_MAX], *dir;
	struct stat	 sb;

	snprintf(buf, sizeof(buf), "%s", sock);
	dir = dirname(buf);
	if (stat(dir, &sb) == 0)
		return;
	if (errno == ENOENT && is_default && mkdir(dir, 0755) == 0)
		return;
	if (errno == ENOENT)
		fatalx("control socket %s: the directory %s does not exist: "
		    "create it (mkdir -p %s) or choose another socket with "
		    "-s or the `control` statement", sock, dir, dir);
	fatal("control socket %s: directory %s", sock, dir);
}

/*
 * Tells systemd (Type=notify) how the start went, by the datagram that
 * sd_notify(3) sends: no library needed.  Nothing without $NOTIFY_SOCKET.
 */
static void
notify_systemd(const char *state)
{
	const char		*path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 fd;

	if (path == NULL || (path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof(sun.sun_path))
		return;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if (path[0] == '@')
		sun.sun_path[0] = '\0';	/* an abstract address */
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len) == -1)
		log_warn("notifying systemd at %s", path);
	close(fd);
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
/*
 * The line of the tls-* statement that a TLS error or warning is about (it
 * starts with the statement's keyword), else that of tls-cert.
 */
static int
tls_line(const struct config *cf, const char *msg)
{
	static const struct {
		const char	*kw;
		enum stmt_kind	 kind;
	} kws[] = {
		{ "tls-key ", STMT_TLS_KEY }, { "tls-ca ", STMT_TLS_CA },
		{ "tls-crl ", STMT_TLS_CRL }, { "", STMT_TLS_CERT },
	};
	size_t	 i, j;

	for (i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		if (strncmp(msg, kws[i].kw, strlen(kws[i].kw)) != 0)
			continue;
		for (j = cf->lines.n; j-- > 0;)
			if (cf->lines.v[j].kind == kws[i].kind)
				return cf->lines.v[j].line;
	}
	return 0;
}

/*
 * Every TLS file that cannot be opened for reading, FILE:LINE: keyword
 * path: reason.  Returns how many.
 */
static int
check_tls_files(const struct config *cf, int *errors)
{
	const struct stmt *st;
	struct stmt	 tmp;
	size_t		 i;
	int		 fd, bad = 0;

	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < cf->lines.n; i++) {
		switch (cf->lines.v[i].kind) {
		case STMT_TLS_CERT:
		case STMT_TLS_KEY:
		case STMT_TLS_CA:
		case STMT_TLS_CRL:
			break;
		default:
			continue;
		}
		st = stmt_vec_get(&cf->lines, i, &tmp);
		/* Read now, but not by the unit (ProtectHome=yes). */
		if (strncmp(st->path, "/root/", 6) == 0 ||
		    strncmp(st->path, "/home/", 6) == 0 ||
		    strncmp(st->path, "/run/user/", 10) == 0)
			fprintf(stderr, "%s:%d: warning: %s %s: under /root, "
			    "/home or /run/user, which the systemd units hide "
			    "from vnetd (ProtectHome=yes): copy it beside %s\n",
			    cf->file, cf->lines.v[i].line,
			    stmt_keyword(st->kind, st->op), st->path,
			    VNETD_CONF);
		if ((fd = open(st->path, O_RDONLY | O_CLOEXEC)) != -1) {
			close(fd);
			continue;
		}
		fprintf(stderr, "%s:%d: %s %s: %s\n", cf->file,
		    cf->lines.v[i].line, stmt_keyword(st->kind, st->op),
		    st->path, strerror(errno));
		bad++;
	}
	*errors += bad;
	return bad;
}

static int
check_system(const struct config *cf)
{
	struct vnetd	 d;
	struct upper	 u;
	const struct stmt *st;
	struct stmt	 tmp;
	char		 err[512];
	int		 errors = 0, has_tls = 0, line;
	size_t		 i;

	if (vnetd_init(&d) == -1 || upper_add(&u, &d) == -1) {
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
		/*
		 * The status server's socket is the daemon's to bind: a
		 * running one holds its port, and -n must not say so.
		 */
		if (st->kind == STMT_HTTP)
			continue;
		if (st->kind == STMT_TLS_CERT)
			has_tls = 1;
		if (vnetd_apply(&d, st, 0, err, sizeof(err)) == -1) {
			fprintf(stderr, "%s:%d: %s\n", cf->file, line, err);
			errors++;
		}
	}
	/*
	 * An incomplete set was said by config_load(); a file that cannot be
	 * opened is said here, each on its line, since the context would stop
	 * at the first.
	 */
	if (has_tls && d.tls_key[0] != '\0' && d.tls_ca[0] != '\0' &&
	    check_tls_files(cf, &errors) == 0) {
		if (vnetd_tls(&d, err, sizeof(err)) == NULL) {
			fprintf(stderr, "%s:%d: %s\n", cf->file,
			    tls_line(cf, err), err);
			errors++;
		} else if (d.tls_warning[0] != '\0')
			fprintf(stderr, "%s:%d: warning: %s\n", cf->file,
			    tls_line(cf, d.tls_warning), d.tls_warning);
	}
	vnetd_free(&d);
	return errors;
}

/*
 * Routes to links that no statement makes and no peer can bring: a
 * misspelt name, or a node without a listener.  Warned, not refused: the
 * link may be added at run time.
 */
static void
check_routes(const struct config *cf, void (*warnf)(const char *, void *))
{
	const struct stmt *st;
	struct stmt	 tmp, probe;
	struct stmt_index links;
	char		 node[STMT_NAME_MAX + 1], msg[STMT_PATH_MAX + 256];
	int		 listens = 0, line;
	size_t		 i;

	vnetd_default_node(node, sizeof(node));
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < cf->lines.n; i++) {
		st = stmt_vec_get(&cf->lines, i, &tmp);
		if (st->kind == STMT_LISTEN && st->op == STMT_OP_SET)
			listens = 1;
		if (st->kind == STMT_NODE)
			snprintf(node, sizeof(node), "%s", st->name);
	}
	/* By name: a file of many routes is checked in linear time. */
	stmt_index_init(&links, &cf->lines, STMT_KEY_NAME);
	if (stmt_index_add_all(&links, STMT_LINK) == -1) {
		stmt_index_free(&links);
		return;		/* out of memory: a warning less */
	}
	memset(&probe, 0, sizeof(probe));
	probe.kind = STMT_LINK;
	for (i = 0; i < cf->lines.n; i++) {
		if (cf->lines.v[i].kind != STMT_ROUTE)
			continue;
		st = stmt_vec_get(&cf->lines, i, &tmp);
		line = cf->lines.v[i].line;
		if (st->op != STMT_OP_SET || st->target != TARGET_LINK)
			continue;
		snprintf(probe.name, sizeof(probe.name), "%s", st->name);
		if (strcmp(st->name, node) == 0)
			snprintf(msg, sizeof(msg), "%s:%d: warning: route to "
			    "link %s, this node's own name: no peer can bring "
			    "it, the route is never used", cf->file, line,
			    st->name);
		else if (!listens && stmt_index_find(&links, &probe) == -1)
			snprintf(msg, sizeof(msg), "%s:%d: warning: route to "
			    "link %s, which no link statement makes and, "
			    "without a listener, no peer can bring: a "
			    "misspelling?", cf->file, line, st->name);
		else
			continue;
		warnf(msg, NULL);
	}
	stmt_index_free(&links);
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
	struct upper	 u;
	struct config	 cf;
	struct stmt	 tmp;
	const char	*conffile = VNETD_CONF, *sock = NULL, *pidfile = NULL;
	char		 err[512], c = 'r';
	int		 ch, foreground = 0, check = 0, verbose = 0, ready = -1;
	int		 errors;
	size_t		 i;

	static const struct option longopts[] = {
		{ "help",	no_argument,	NULL,	'h' },
		{ "version",	no_argument,	NULL,	'V' },
		{ NULL,		0,		NULL,	0 },
	};
	char		 status[STMT_PATH_MAX + 2 * STMT_NAME_MAX + 128];

	while ((ch = getopt_long(argc, argv, "Ff:np:s:vhV", longopts,
	    NULL)) != -1) {
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
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("vnetd %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 1;
	}

	/* Errors are printed FILE:LINE: message, one a line. */
	errors = config_load(conffile, &cf, print_error, NULL);
	/*
	 * -n goes on past a bad line with the lines that parsed, so that one
	 * run says every problem: the file's, then the system's.
	 */
	if (check && errors >= 0) {
		config_warnings(&cf, print_error, NULL);
		check_routes(&cf, print_error);
		errors += check_system(&cf);
		if (errors == 0 && verbose)
			fprintf(stderr, "%s: configuration OK\n", conffile);
		config_clear(&cf);
		return errors != 0;
	}
	if (errors != 0) {
		config_clear(&cf);
		return 1;
	}

	log_init("vnetd", foreground, verbose);
	config_warnings(&cf, log_warning, NULL);
	check_routes(&cf, log_warning);
	if (vnetd_init(&d) == -1 || upper_add(&u, &d) == -1)
		fatal("initialising");
	/* Settings, listeners, interfaces, links, routes: each finds what it names. */
	qsort(cf.lines.v, cf.lines.n, sizeof(cf.lines.v[0]), cmp_order);
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < cf.lines.n; i++)
		if (vnetd_apply(&d, stmt_vec_get(&cf.lines, i, &tmp), 0, err,
		    sizeof(err)) == -1)
			fatalx("%s:%d: %s", cf.file, cf.lines.v[i].line, err);
	/* Reload reads it again after the daemon has changed directory. */
	if (realpath(conffile, d.config_file) == NULL)
		snprintf(d.config_file, sizeof(d.config_file), "%s", conffile);
	/* Now, while the key is readable: links added later may want TLS. */
	if (d.tls_cert[0] != '\0') {
		if (vnetd_tls(&d, err, sizeof(err)) == NULL)
			fatalx("%s:%d: %s", cf.file, tls_line(&cf, err), err);
		log_info("TLS: certificate %s, CA %s%s%s", d.tls_cert,
		    d.tls_ca, d.tls_crl[0] != '\0' ? ", CRL " : "",
		    d.tls_crl);
		if (d.tls_warning[0] != '\0')
			log_warnx("%s:%d: warning: %s", cf.file,
			    tls_line(&cf, d.tls_warning), d.tls_warning);
	}
	config_clear(&cf);

	d.control_fixed = sock != NULL;
	if (sock != NULL)
		snprintf(d.control_path, sizeof(d.control_path), "%s", sock);
	if (d.control_path[0] == '\0')
		snprintf(d.control_path, sizeof(d.control_path), "%s",
		    VNETD_SOCKET);
	control_dir(d.control_path, strcmp(d.control_path, VNETD_SOCKET) == 0);
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
	/* The parent waits for this byte; gone, it has nothing to learn. */
	if (ready != -1) {
		while (write(ready, &c, 1) == -1 && errno == EINTR)
			;
		close(ready);
	}
	log_info("node %s in network %s running, control socket %s",
	    d.node, d.network, d.control_path);
	snprintf(status, sizeof(status), "READY=1\nSTATUS=node %s in network "
	    "%s, control socket %s", d.node, d.network, d.control_path);
	notify_systemd(status);

	d.exit_code = 1;
	event_base_dispatch(d.base);

	notify_systemd("STOPPING=1");
	log_info("exiting");
	vnetd_free(&d);
	if (pidfile != NULL && unlink(pidfile) == -1)
		log_warn("pidfile %s", pidfile);
	return d.exit_code;
}
