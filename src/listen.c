#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "acl.h"
#include "listen.h"
#include "log.h"
#include "metric.h"

void
listen_init(struct listeners *set, struct event_base *base,
    void (*accept)(void *, int, const struct sockaddr *, int, int),
    void (*refused)(void *, const char *, const char *), void *arg)
{
	memset(set, 0, sizeof(*set));
	TAILQ_INIT(&set->list);
	set->base = base;
	set->accept = accept;
	set->refused = refused;
	set->arg = arg;
}

static void
listener_free(struct listener *ls)
{
	size_t	 i;

	for (i = 0; i < 2; i++) {
		if (ls->resume[i] != NULL)
			event_free(ls->resume[i]);
		if (ls->lev[i] != NULL)
			evconnlistener_free(ls->lev[i]);
	}
	free(ls);
}

/* The allow list is checked before anything is read from the peer. */
static void
listener_acceptcb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int socklen, void *arg)
{
	struct listener	*ls = arg;
	struct listeners *set = ls->ls_set;
	char		 host[INET6_ADDRSTRLEN], what[STMT_HOST_MAX + 10];

	if (!acl_allows(ls->tls, ls->allow, ls->nallow, sa)) {
		set->not_allowed++;
		if (getnameinfo(sa, (socklen_t)socklen, host, sizeof(host),
		    NULL, 0, NI_NUMERICHOST) != 0)
			snprintf(host, sizeof(host), "?");
		log_warnx("connection from %s refused: not allowed on "
		    "listen %s%s", host, stmt_hostport_format(&ls->addr, what,
		    sizeof(what)), ls->nallow == 0 ? " (no allow list: "
		    "loopback only)" : "");
		set->refused(set->arg, host, ls->nallow == 0 ?
		    "not allowed: a plain listener without allow list takes "
		    "loopback only" : "not allowed: not in the listener's "
		    "allow list");
		evutil_closesocket(fd);
		return;
	}
	set->accept(set->arg, fd, sa, socklen, ls->tls);
}

static void
accept_resume_cb(evutil_socket_t fd, short ev, void *arg)
{
	evconnlistener_enable(arg);
}

struct event *
listen_accept_timer(struct evconnlistener *lev)
{
	return evtimer_new(evconnlistener_get_base(lev), accept_resume_cb, lev);
}

void
listen_accept_pause(struct evconnlistener *lev, struct event *resume)
{
	struct timeval	 tv = { 1, 0 };

	evconnlistener_disable(lev);
	evtimer_add(resume, &tv);
}

static void
listener_errorcb(struct evconnlistener *lev, void *arg)
{
	struct listener	*ls = arg;

	log_warn("accept");
	listen_accept_pause(lev, ls->resume[ls->lev[0] == lev ? 0 : 1]);
}

static struct evconnlistener *
listener_bind(struct listeners *set, struct listener *ls,
    const struct addrinfo *ai,
    char *err, size_t errlen, const char *what)
{
	struct evconnlistener	*lev;
	evutil_socket_t		 fd;
	int			 one = 1;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    ai->ai_protocol);
	if (fd == -1) {
		if (errno == EAFNOSUPPORT)
			return NULL;
		snprintf(err, errlen, "listen %s: socket: %s", what,
		    strerror(errno));
		return NULL;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/*
	 * A shortcut through NAT dials from the listener's port, which the
	 * NAT keeps (conn_connect_from()); the kernel gives an incoming SYN
	 * to the connecting socket its addresses name before any listener.
	 */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	/* "*" binds both families on their own sockets. */
	if (ai->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) == -1) {
		int saved = errno;

		snprintf(err, errlen, "listen %s: %s", what, strerror(errno));
		close(fd);
		errno = saved;
		return NULL;
	}
	lev = evconnlistener_new(set->base, listener_acceptcb, ls,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64, fd);
	if (lev == NULL) {
		snprintf(err, errlen, "listen %s: %s", what, strerror(errno));
		close(fd);
		return NULL;
	}
	evconnlistener_set_error_cb(lev, listener_errorcb);
	return lev;
}

int
listen_add(struct listeners *set, const struct stmt *st, char *err,
    size_t errlen)
{
	const struct stmt_hostport *hp = &st->addr;
	struct listener		*ls;
	struct evconnlistener	*lev;
	struct addrinfo		 hints, *res, *ai;
	char			 port[8], what[STMT_HOST_MAX + 10];
	int			 any = strcmp(hp->host, "*") == 0, gai;
	int			 n = 0, failed = 0;

	stmt_hostport_format(hp, what, sizeof(what));
	TAILQ_FOREACH(ls, &set->list, entry)
		if (strcmp(ls->addr.host, hp->host) == 0 &&
		    ls->addr.port == hp->port) {
			snprintf(err, errlen, "listen %s: given twice", what);
			return -1;
		}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(port, sizeof(port), "%u", hp->port);
	if ((gai = getaddrinfo(any ? NULL : hp->host, port, &hints, &res))) {
		snprintf(err, errlen, "listen %s: %s", what, gai_strerror(gai));
		return -1;
	}
	if ((ls = calloc(1, sizeof(*ls))) == NULL) {
		freeaddrinfo(res);
		snprintf(err, errlen, "listen %s: out of memory", what);
		return -1;
	}
	ls->addr = *hp;
	ls->ls_set = set;
	ls->tls = st->tls;
	ls->nallow = st->nallow;
	memcpy(ls->allow, st->allow, sizeof(ls->allow));
	for (ai = res; ai != NULL && n < 2; ai = ai->ai_next) {
		if ((lev = listener_bind(set, ls, ai, err, errlen,
		    what)) == NULL) {
			/* A host without IPv6 still listens on IPv4. */
			if (any && ai->ai_family == AF_INET6 &&
			    errno == EAFNOSUPPORT)
				continue;
			failed = 1;
			break;
		}
		ls->lev[n] = lev;
		if ((ls->resume[n++] = listen_accept_timer(lev)) == NULL) {
			snprintf(err, errlen, "listen %s: out of memory", what);
			failed = 1;
			break;
		}
		if (!any)
			break;
	}
	freeaddrinfo(res);
	if (failed || n == 0) {
		if (!failed)
			snprintf(err, errlen, "listen %s: no address", what);
		listener_free(ls);
		return -1;
	}
	TAILQ_INSERT_TAIL(&set->list, ls, entry);
	log_info("listening on %s%s%s", what, ls->tls ? " (TLS)" : " (plain)",
	    ls->nallow > 0 ? ", with an allow list" : ls->tls ? "" :
	    ", loopback only");
	return 0;
}

int
listen_del(struct listeners *set, const struct stmt_hostport *hp, char *err,
    size_t errlen)
{
	struct listener	*ls;
	char		 what[STMT_HOST_MAX + 10];

	stmt_hostport_format(hp, what, sizeof(what));
	TAILQ_FOREACH(ls, &set->list, entry)
		if (strcmp(ls->addr.host, hp->host) == 0 &&
		    ls->addr.port == hp->port)
			break;
	if (ls == NULL) {
		snprintf(err, errlen, "not listening on %s", what);
		return -1;
	}
	/* Connections accepted on it stay: they are links of their own. */
	TAILQ_REMOVE(&set->list, ls, entry);
	listener_free(ls);
	log_info("no longer listening on %s", what);
	return 0;
}

void
listen_free(struct listeners *set)
{
	struct listener	*ls;

	while ((ls = TAILQ_FIRST(&set->list)) != NULL) {
		TAILQ_REMOVE(&set->list, ls, entry);
		listener_free(ls);
	}
}

int
listen_empty(const struct listeners *set)
{
	return TAILQ_EMPTY(&set->list);
}

void
listen_config(const struct listeners *set,
    void (*cb)(const struct stmt *, void *), void *arg)
{
	const struct listener	*ls;
	struct stmt		 st;

	TAILQ_FOREACH(ls, &set->list, entry) {
		memset(&st, 0, sizeof(st));
		st.kind = STMT_LISTEN;
		st.addr = ls->addr;
		st.tls = ls->tls;
		st.nallow = ls->nallow;
		memcpy(st.allow, ls->allow, sizeof(st.allow));
		cb(&st, arg);
	}
}

static const struct metric_stat listen_refusals[] = {
	METRIC_STAT("not_allowed", struct listeners, not_allowed, NULL),
};

void
listen_show_stats(const struct listeners *set, struct evbuffer *out)
{
	metric_stat_rows(out, listen_refusals, 1, set);
}

void
listen_metrics_refused(const struct listeners *set,
    const struct metric_out *mo)
{
	metric_stat_samples(mo, "vnet_refused_total", "reason",
	    listen_refusals, 1, set);
}
