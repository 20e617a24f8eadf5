#include <sys/socket.h>
#include <sys/stat.h>

#include <net/if.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "iface.h"
#include "stmt.h"

static void report(void (*)(const char *, void *), void *, const char *, int,
    const char *, ...) __attribute__((format(printf, 5, 6)));

static void
report(void (*errf)(const char *, void *), void *arg, const char *file,
    int line, const char *fmt, ...)
{
	char	 msg[STMT_ERR_MAX + 64], full[STMT_ERR_MAX + 64 + 1100];
	va_list	 ap;

	if (errf == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(full, sizeof(full), "%s:%d: %s", file, line, msg);
	else
		snprintf(full, sizeof(full), "%s: %s", file, msg);
	errf(full, arg);
}

static int
config_append(struct config *cf, int line, const struct stmt *st)
{
	return stmt_vec_add(&cf->lines, st, line);
}

int
config_kind_order(enum stmt_kind kind)
{
	if (stmt_is_setting(kind))
		return 0;
	switch (kind) {
	case STMT_LISTEN:
		return 1;
	case STMT_INTERFACE:
		return 2;
	case STMT_LINK:
	case STMT_SET_LINK:
		return 3;
	case STMT_ROUTE:
		return 4;
	case STMT_VCC:
		return 5;
	default:		/* commands */
		return 6;
	}
}

int
config_stmt_order(const struct stmt *st)
{
	return config_kind_order(st->kind);
}

/*
 * What the checks have seen of the file so far: each line is looked up in
 * these before it joins them, so that a file is checked in linear time.
 */
struct config_checks {
	struct stmt_index	 names;		/* interfaces, links, vcc */
	struct stmt_index	 addrs;		/* listeners */
	struct stmt_index	 same;		/* routes */
	int			 seen[STMT_KIND_LAST + 1];	/* settings */
	struct stmt		 tmp;	/* for stmt_vec_get(): zeroed once */
};

static void
config_checks_free(struct config *cf)
{
	if (cf->checks == NULL)
		return;
	stmt_index_free(&cf->checks->names);
	stmt_index_free(&cf->checks->addrs);
	stmt_index_free(&cf->checks->same);
	free(cf->checks);
	cf->checks = NULL;
}

static int
config_checks_new(struct config *cf)
{
	if ((cf->checks = calloc(1, sizeof(*cf->checks))) == NULL)
		return -1;
	stmt_index_init(&cf->checks->names, &cf->lines, STMT_KEY_NAME);
	stmt_index_init(&cf->checks->addrs, &cf->lines, STMT_KEY_ADDR);
	stmt_index_init(&cf->checks->same, &cf->lines, STMT_KEY_SAME);
	return 0;
}

/* The index a kind's duplicates are found in; NULL: none. */
static struct stmt_index *
config_checks_of(struct config *cf, const struct stmt *st)
{
	switch (st->kind) {
	case STMT_INTERFACE:
	case STMT_LINK:
		return &cf->checks->names;
	case STMT_VCC:
		/* A class may be given in parts; a policy only once. */
		return st->vcc == STMT_VCC_CLASS ? NULL : &cf->checks->names;
	case STMT_LISTEN:
		return &cf->checks->addrs;
	case STMT_ROUTE:
		return &cf->checks->same;
	default:
		return NULL;
	}
}

/* What makes sense only for the whole file: each checked against earlier lines. */
static int
config_check_line(struct config *cf, size_t i,
    void (*errf)(const char *, void *), void *arg)
{
	struct stmt_index		*ix;
	const struct stmt		*st;
	int				 line = cf->lines.v[i].line;
	long				 j;
	char				 buf[STMT_HOST_MAX + 10];
	char				 perr[256];

	st = stmt_vec_get(&cf->lines, i, &cf->checks->tmp);
	if (st->op == STMT_OP_DEL || st->kind == STMT_SHOW ||
	    st->kind == STMT_RELOAD || st->kind == STMT_SAVE) {
		report(errf, arg, cf->file, line,
		    "'%s' is a command, not a configuration statement",
		    st->op == STMT_OP_DEL ? "del-" :
		    stmt_keyword(st->kind, st->op));
		return 1;
	}
	/* A configuration gives it once, where the link is defined. */
	if (st->kind == STMT_SET_LINK && st->queue != 0) {
		report(errf, arg, cf->file, line, "set-link %s: queue is "
		    "given on the link statement in a configuration",
		    st->name);
		return 1;
	}
	if (st->kind == STMT_INTERFACE && st->filter[0] != '\0' &&
	    pcapif_filter_check(st->filter, perr, sizeof(perr)) == -1) {
		report(errf, arg, cf->file, line, "interface %s: %s",
		    st->name, perr);
		return 1;
	}
	/* Settings: one each. */
	if (stmt_is_setting(st->kind)) {
		if (cf->checks->seen[st->kind]++ == 0)
			return 0;
		report(errf, arg, cf->file, line, "%s: given twice",
		    stmt_keyword(st->kind, STMT_OP_SET));
		return 1;
	}
	if ((ix = config_checks_of(cf, st)) == NULL)
		return 0;
	if ((j = stmt_index_find(ix, st)) == -1) {
		if (stmt_index_add(ix, i) == 0)
			return 0;
		report(errf, arg, cf->file, line, "out of memory");
		return 1;
	}
	switch (st->kind) {
	case STMT_INTERFACE:
		report(errf, arg, cf->file, line,
		    "interface %s: defined twice", st->name);
		break;
	case STMT_LINK:
		report(errf, arg, cf->file, line,
		    "link %s: defined twice", st->name);
		break;
	case STMT_LISTEN:
		report(errf, arg, cf->file, line, "listen %s: given twice",
		    stmt_hostport_format(&st->addr, buf, sizeof(buf)));
		break;
	case STMT_ROUTE:
		report(errf, arg, cf->file, line, "route: same as line %d",
		    cf->lines.v[j].line);
		break;
	default:
		report(errf, arg, cf->file, line, "vcc %s%s%s: given twice",
		    st->vcc == STMT_VCC_SHARE ? "share " : "", st->name,
		    st->vcc == STMT_VCC_ECN ? " ecn" : "");
		break;
	}
	return 1;
}

/* Routes may come before the interface they name, so this waits for the end. */
static int
config_check_iface(struct config *cf, size_t i,
    void (*errf)(const char *, void *), void *arg)
{
	const struct stmt_route	*r = &cf->lines.v[i].u.route;
	struct stmt		 key;

	if (cf->lines.v[i].kind != STMT_ROUTE || r->target != TARGET_INTERFACE)
		return 0;
	memset(&key, 0, sizeof(key));
	key.kind = STMT_INTERFACE;
	memcpy(key.name, r->name, sizeof(key.name));
	if (stmt_index_find(&cf->checks->names, &key) != -1)
		return 0;
	report(errf, arg, cf->file, cf->lines.v[i].line,
	    "route: no interface %s is defined", r->name);
	return 1;
}

static const struct stmt *
config_find(const struct config *cf, enum stmt_kind kind)
{
	size_t	 i;

	/* Settings are kept whole: no route is ever returned. */
	for (i = 0; i < cf->lines.n; i++)
		if (cf->lines.v[i].kind == kind && kind != STMT_ROUTE)
			return cf->lines.v[i].u.st;
	return NULL;
}

/*
 * TLS takes a certificate, its key and a CA together; a listener or link
 * that asks for TLS without them, or half of the set, is an error where it
 * stands.
 */
static int
config_check_tls(struct config *cf, void (*errf)(const char *, void *),
    void *arg)
{
	const struct stmt		*st;
	int				 cert, key, ca, any, told = 0, line;
	int				 errors = 0;
	size_t				 i;
	char				 buf[STMT_HOST_MAX + 10];

	cert = config_find(cf, STMT_TLS_CERT) != NULL;
	key = config_find(cf, STMT_TLS_KEY) != NULL;
	ca = config_find(cf, STMT_TLS_CA) != NULL;
	any = cert || key || ca || config_find(cf, STMT_TLS_CRL) != NULL;
	for (i = 0; i < cf->lines.n; i++) {
		if (cf->lines.v[i].kind == STMT_ROUTE)
			continue;
		st = cf->lines.v[i].u.st;
		line = cf->lines.v[i].line;
		switch (st->kind) {
		case STMT_TLS_CERT:
		case STMT_TLS_KEY:
		case STMT_TLS_CA:
		case STMT_TLS_CRL:
			/* Said once, at the first of the set, is enough. */
			if ((cert && key && ca) || told++)
				break;
			report(errf, arg, cf->file, line, "TLS needs all "
			    "of tls-cert, tls-key and tls-ca (missing:%s%s%s)",
			    cert ? "" : " tls-cert", key ? "" : " tls-key",
			    ca ? "" : " tls-ca");
			errors++;
			break;
		case STMT_LISTEN:
		case STMT_LINK:
			if (!st->tls || any)
				break;
			report(errf, arg, cf->file, line, "%s %s: tls "
			    "needs tls-cert, tls-key and tls-ca",
			    st->kind == STMT_LINK ? "link" : "listen",
			    st->kind == STMT_LINK ? st->name :
			    stmt_hostport_format(&st->addr, buf,
			    sizeof(buf)));
			errors++;
			break;
		default:
			break;
		}
	}
	return errors;
}

/* Loopback by address or by the one name that means it everywhere. */
static int
config_loopback(const char *host)
{
	return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
	    strcmp(host, "localhost") == 0;
}

/* Up interface addresses but loopback and IPv6 link-local, of a family. */
static int
config_iface_addrs(int v4, int v6)
{
	struct ifaddrs	*ifa, *i;
	int		 n = 0;

	if (getifaddrs(&ifa) == -1)
		return -1;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if ((i->ifa_addr->sa_family == AF_INET && v4) ||
		    (i->ifa_addr->sa_family == AF_INET6 && v6 &&
		    !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)
		    (void *)i->ifa_addr)->sin6_addr)))
			n++;
	}
	freeifaddrs(ifa);
	return n;
}

/*
 * Under routing auto a wildcard listener publishes this machine's
 * interface addresses (node.h NODE_SEC_CANDS): with none of them and no
 * advertise, peers learn no address to dial but what they see of it.
 */
static void
config_warn_publish(const struct config *cf,
    void (*warnf)(const char *, void *), void *arg)
{
	const struct stmt	*st;
	size_t			 i;
	int			 routing = 0, advertise = 0, v4, v6;
	char			 buf[STMT_HOST_MAX + 10];

	for (i = 0; i < cf->lines.n; i++) {
		if (cf->lines.v[i].kind == STMT_ROUTING)
			routing = cf->lines.v[i].u.st->flag;
		else if (cf->lines.v[i].kind == STMT_ADVERTISE)
			advertise = 1;
	}
	if (!routing || advertise)
		return;
	for (i = 0; i < cf->lines.n; i++) {
		if (cf->lines.v[i].kind != STMT_LISTEN)
			continue;
		st = cf->lines.v[i].u.st;
		v4 = strcmp(st->addr.host, "*") == 0 ||
		    strcmp(st->addr.host, "0.0.0.0") == 0 ||
		    strcmp(st->addr.host, "::") == 0;
		v6 = strcmp(st->addr.host, "*") == 0 ||
		    strcmp(st->addr.host, "::") == 0;
		if ((!v4 && !v6) || config_iface_addrs(v4, v6) != 0)
			continue;
		report(warnf, arg, cf->file, cf->lines.v[i].line, "warning: "
		    "listen %s under routing auto: this machine has no "
		    "interface address but loopback to publish for it, and "
		    "there is no advertise: peers can dial this node only "
		    "where they see its connections come from",
		    stmt_hostport_format(&st->addr, buf, sizeof(buf)));
	}
}

void
config_warnings(const struct config *cf, void (*warnf)(const char *, void *),
    void *arg)
{
	const struct stmt		*st;
	size_t				 i;
	int				 line;
	char				 buf[STMT_HOST_MAX + 10];

	for (i = 0; i < cf->lines.n; i++) {
		if (cf->lines.v[i].kind != STMT_LISTEN)
			continue;
		st = cf->lines.v[i].u.st;
		line = cf->lines.v[i].line;
		if (st->tls || config_loopback(st->addr.host))
			continue;
		stmt_hostport_format(&st->addr, buf, sizeof(buf));
		if (st->nallow == 0)
			report(warnf, arg, cf->file, line, "warning: "
			    "listen %s is plain TCP on a non-loopback address "
			    "and has no allow list: it accepts loopback only; "
			    "use tls, or allow the peers' addresses", buf);
		else
			report(warnf, arg, cf->file, line, "warning: "
			    "listen %s is plain TCP on a non-loopback address: "
			    "anyone at an allowed address can join the network "
			    "unauthenticated and unencrypted; use tls", buf);
	}
	config_warn_publish(cf, warnf, arg);
}

/*
 * The next line of fp into buf (at most cap - 1 bytes kept, NUL-terminated),
 * its length in *len; the rest of a longer line is read and thrown away,
 * with *cut set, so that memory stays bounded whatever the file holds.
 * 0, or -1 at the end of the file.
 */
static int
config_getline(FILE *fp, char *buf, size_t cap, size_t *len, int *cut)
{
	int	 ch = EOF;
	size_t	 n = 0;

	*cut = 0;
	while ((ch = getc_unlocked(fp)) != EOF) {
		if (n + 1 < cap)
			buf[n++] = (char)ch;
		else
			*cut = 1;
		if (ch == '\n')
			break;
	}
	buf[n] = '\0';
	*len = n;
	return ch == EOF && n == 0 && !*cut ? -1 : 0;
}

/*
 * Only a regular file is a configuration: a FIFO would block the daemon
 * until someone writes to it, a device such as /dev/zero never ends.
 */
static FILE *
config_open(const char *file, void (*errf)(const char *, void *), void *arg)
{
	struct stat	 sb;
	FILE		*fp;
	int		 fd, flags;

	if ((fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		report(errf, arg, file, 0, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) == -1) {
		report(errf, arg, file, 0, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(sb.st_mode)) {
		report(errf, arg, file, 0, "not a regular file (%s)",
		    S_ISDIR(sb.st_mode) ? "a directory" :
		    S_ISFIFO(sb.st_mode) ? "a FIFO" :
		    S_ISCHR(sb.st_mode) ? "a character device" :
		    S_ISBLK(sb.st_mode) ? "a block device" :
		    S_ISSOCK(sb.st_mode) ? "a socket" : "not a file");
		close(fd);
		return NULL;
	}
	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1 ||
	    (fp = fdopen(fd, "r")) == NULL) {
		report(errf, arg, file, 0, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	return fp;
}

int
config_load(const char *file, struct config *cf,
    void (*errf)(const char *, void *), void *arg)
{
	FILE			*fp;
	/* Room to tell a line too long from one at the limit with "\r\n". */
	char			 line[STMT_LINE_MAX + 4];
	size_t			 i, len;
	struct stmt		 st;
	struct stmt_error	 perr;
	int			 lineno = 0, errors = 0, r, cut;

	memset(cf, 0, sizeof(*cf));
	if ((cf->file = strdup(file)) == NULL || config_checks_new(cf) == -1) {
		config_clear(cf);
		return -1;
	}
	if ((fp = config_open(file, errf, arg)) == NULL) {
		config_checks_free(cf);
		return -1;
	}
	while (config_getline(fp, line, sizeof(line), &len, &cut) == 0) {
		lineno++;
		if (cut) {
			report(errf, arg, file, lineno, "line too long (more "
			    "than %d characters)", STMT_LINE_MAX);
			errors++;
			continue;
		}
		if (memchr(line, '\0', len) != NULL) {
			report(errf, arg, file, lineno, "NUL byte in line");
			errors++;
			continue;
		}
		r = stmt_parse(line, &st, &perr);
		if (r == 0)
			continue;
		if (r == -1) {
			report(errf, arg, file, lineno, "%s", perr.msg);
			errors++;
			continue;
		}
		if (config_append(cf, lineno, &st) == -1) {
			report(errf, arg, file, lineno, "out of memory");
			errors++;
			break;
		}
		if (config_check_line(cf, cf->lines.n - 1, errf, arg)) {
			errors++;
			stmt_vec_pop(&cf->lines);
		}
	}
	if (ferror(fp)) {
		report(errf, arg, file, 0, "read error: %s", strerror(errno));
		errors++;
	}
	fclose(fp);
	for (i = 0; i < cf->lines.n; i++)
		errors += config_check_iface(cf, i, errf, arg);
	errors += config_check_tls(cf, errf, arg);
	config_checks_free(cf);
	return errors;
}

void
config_clear(struct config *cf)
{
	config_checks_free(cf);
	stmt_vec_clear(&cf->lines);
	free(cf->file);
	memset(cf, 0, sizeof(*cf));
}

/* The real directory of file, and its last component. */
static int
config_split(const char *file, char *dir, const char **base)
{
	char	 buf[PATH_MAX];
	char	*slash;

	if (snprintf(buf, sizeof(buf), "%s", file) >= (int)sizeof(buf))
		return -1;
	if ((slash = strrchr(buf, '/')) == NULL) {
		*base = file;
		return realpath(".", dir) == NULL ? -1 : 0;
	}
	*base = file + (slash - buf) + 1;
	if (slash == buf)
		slash[1] = '\0';
	else
		*slash = '\0';
	return realpath(buf, dir) == NULL ? -1 : 0;
}

int
config_save_allowed(const char *config_file, const char *file, uid_t uid,
    char *err, size_t errlen)
{
	char		 cdir[PATH_MAX], fdir[PATH_MAX];
	const char	*cbase, *fbase;

	if (uid == 0)
		return 0;
	if (config_split(config_file, cdir, &cbase) == -1) {
		snprintf(err, errlen, "save %s: the configuration's directory: "
		    "%s", file, strerror(errno));
		return -1;
	}
	if (config_split(file, fdir, &fbase) == -1) {
		snprintf(err, errlen, "save %s: %s", file, strerror(errno));
		return -1;
	}
	if (strcmp(cdir, fdir) != 0 || *cbase == '\0' ||
	    strncmp(fbase, cbase, strlen(cbase)) != 0) {
		snprintf(err, errlen, "save %s: only root may save elsewhere "
		    "than %s/%s*", file, strcmp(cdir, "/") == 0 ? "" : cdir,
		    cbase);
		return -1;
	}
	return 0;
}

int
config_write(const char *file, const void *text, size_t len, char *err,
    size_t errlen)
{
	char		 tmp[PATH_MAX], dir[PATH_MAX], base[PATH_MAX];
	const char	*dname;
	struct stat	 sb;
	const char	*p = text;
	mode_t		 mode = 0644;
	ssize_t		 n;
	int		 fd, dfd;

	snprintf(dir, sizeof(dir), "%s", file);
	snprintf(base, sizeof(base), "%s", file);
	dname = dirname(dir);
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dname,
	    basename(base)) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "save %s: path too long", file);
		return -1;
	}
	/* lstat: the rename would replace a symbolic link, not its target. */
	if (lstat(file, &sb) == 0) {
		if (!S_ISREG(sb.st_mode)) {
			snprintf(err, errlen, "save %s: not a regular file%s",
			    file, S_ISLNK(sb.st_mode) ?
			    " (a symbolic link)" : "");
			return -1;
		}
		mode = sb.st_mode & 07777;
	}
	if ((fd = mkstemp(tmp)) == -1) {
		snprintf(err, errlen, "save %s: %s", file, strerror(errno));
		return -1;
	}
	if (fchmod(fd, mode) == -1)
		goto fail;
	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) == -1 || close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, file) == -1)
		goto fail;
	/* The rename itself reaches the disk with the directory. */
	if ((dfd = open(dname, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
 fail:
	snprintf(err, errlen, "save %s: %s", file, strerror(errno));
	if (fd != -1)
		close(fd);
	unlink(tmp);
	return -1;
}
