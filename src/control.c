#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "control.h"
#include "ctl.h"
#include "daemon.h"
#include "log.h"
#include "reload.h"
#include "stmt.h"

struct control {
	struct vnetd		*d;
	struct evconnlistener	*lev;
	struct event		*resume;	/* lev's accept pause */
	char			 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	TAILQ_HEAD(, control_conn) conns;
	size_t			 nconns;
	uint64_t		 refused;	/* connections over the cap */
	uint64_t		 dropped;	/* over CONTROL_OUT_MAX */
	uint64_t		 timeouts;	/* idle, or not reading */
};

/*
 * A client is READING requests, or WAITING for its output to drain below
 * CONTROL_OUT_LOW before the next request is read, or RELOADING (its next
 * requests wait for the reload it asked for to end), or CLOSING: told its
 * %error, it is dropped once that is written.
 */
enum control_state {
	CONTROL_READING,
	CONTROL_WAITING,
	CONTROL_RELOADING,
	CONTROL_CLOSING,
};

struct control_conn {
	TAILQ_ENTRY(control_conn) entry;
	struct control		*ctl;
	struct bufferevent	*bev;
	enum control_state	 state;
	uid_t			 uid;		/* SO_PEERCRED */
};

static void	control_process(struct control_conn *);

static void
control_conn_free(struct control_conn *cc)
{
	reload_forget(cc->ctl->d, cc);
	TAILQ_REMOVE(&cc->ctl->conns, cc, entry);
	cc->ctl->nconns--;
	bufferevent_free(cc->bev);
	free(cc);
}

/*
 * The idle timer runs while the daemon waits for the client: for a request
 * (reading) or for the client to take its output (writing); it restarts
 * after every request, so the time spent answering one is not counted.
 */
static void
control_conn_timer(struct control_conn *cc)
{
	struct timeval	 tv = { CONTROL_IDLE_TIMEOUT, 0 };

	bufferevent_set_timeouts(cc->bev, &tv, &tv);
}

static void
control_conn_state(struct control_conn *cc, enum control_state state)
{
	cc->state = state;
	if (state == CONTROL_READING)
		bufferevent_enable(cc->bev, EV_READ);
	else
		bufferevent_disable(cc->bev, EV_READ);
}

static void
reply_error(struct evbuffer *out, const char *msg)
{
	evbuffer_add_printf(out, "%%error %s\n", msg);
}

/* Reload's report: changes as data rows, errors as %message lines. */
static void
reload_emit(int is_error, const char *line, void *arg)
{
	struct control_conn	*cc = arg;
	struct evbuffer		*out = bufferevent_get_output(cc->bev);
	size_t			 n = strcspn(line, "\r\n");

	evbuffer_add_printf(out, "%s%.*s\n", is_error ? "%message " : "",
	    (int)n, line);
}

/* The reload ran in steps from the loop; the client's next requests waited. */
static void
reload_done(int r, const char *err, void *arg)
{
	struct control_conn	*cc = arg;
	struct evbuffer		*out = bufferevent_get_output(cc->bev);

	if (r == -1) {
		log_warnx("control: %s", err);
		reply_error(out, err);
	} else
		evbuffer_add_printf(out, "%%end\n");
	control_conn_state(cc, CONTROL_READING);
	control_process(cc);
}

static void
control_request(struct control_conn *cc, const char *line)
{
	struct vnetd		*d = cc->ctl->d;
	struct evbuffer		*out = bufferevent_get_output(cc->bev);
	struct stmt		 st;
	struct stmt_error	 perr;
	char			 err[512];
	size_t			 n;
	int			 r;

	r = stmt_parse(line, &st, &perr);
	if (r == 0) {
		reply_error(out, "empty request");
		return;
	}
	if (r == -1) {
		reply_error(out, perr.msg);
		return;
	}
	if (st.kind == STMT_SHOW && st.show == STMT_SHOW_LINK) {
		if (vnetd_show_link(d, st.name, out, err, sizeof(err)) == -1)
			reply_error(out, err);
		else
			evbuffer_add_printf(out, "%%end\n");
		return;
	}
	if (st.kind == STMT_SHOW) {
		vnetd_show(d, &st, out);
		evbuffer_add_printf(out, "%%end\n");
		return;
	}
	/* reload -n: answered at once, from the loop; it changes nothing. */
	if (st.kind == STMT_RELOAD && st.flag) {
		log_info("control: %s", line);
		if (reload_preview(d, reload_emit, cc, &n, err,
		    sizeof(err)) == -1)
			reply_error(out, err);
		else
			evbuffer_add_printf(out, "%%end\n");
		return;
	}
	if (st.kind == STMT_RELOAD) {
		log_info("control: %s", line);
		if (reload_start(d, reload_emit, reload_done, cc, err,
		    sizeof(err)) == -1) {
			log_warnx("control: %s", err);
			reply_error(out, err);
			return;
		}
		control_conn_state(cc, CONTROL_RELOADING);
		return;
	}
	if (st.kind == STMT_SAVE) {
		log_info("control: %s", line);
		r = vnetd_save(d, st.path, cc->uid, err, sizeof(err));
		if (r == -1) {
			log_warnx("control: %s", err);
			reply_error(out, err);
		} else
			evbuffer_add_printf(out, "%%end\n");
		return;
	}
	if (vnetd_apply(d, &st, 1, err, sizeof(err)) == -1) {
		log_info("control: '%s' refused: %s", line, err);
		reply_error(out, err);
		return;
	}
	log_info("control: %s", line);
	if (vnetd_route_warning(d, &st, err, sizeof(err)) != NULL)
		evbuffer_add_printf(out, "%%message warning: %s\n", err);
	evbuffer_add_printf(out, "%%end\n");
}

/* The reply to a bad request, and the end of the connection. */
static void
control_conn_refuse(struct control_conn *cc, const char *msg)
{
	struct evbuffer	*in = bufferevent_get_input(cc->bev);

	reply_error(bufferevent_get_output(cc->bev), msg);
	evbuffer_drain(in, evbuffer_get_length(in));
	control_conn_state(cc, CONTROL_CLOSING);
}

/*
 * Requests are answered one at a time, and no more are read while the
 * output waiting for the client passes CONTROL_OUT_HIGH: a client that
 * pipelines requests and never reads holds one reply's worth, not
 * everything it asked for.
 */
static void
control_process(struct control_conn *cc)
{
	struct control	*ctl = cc->ctl;
	struct evbuffer	*in = bufferevent_get_input(cc->bev);
	struct evbuffer	*out = bufferevent_get_output(cc->bev);
	char		*line;
	size_t		 len;

	while (cc->state == CONTROL_READING) {
		if (evbuffer_get_length(out) > CONTROL_OUT_HIGH) {
			control_conn_state(cc, CONTROL_WAITING);
			break;
		}
		if ((line = evbuffer_readln(in, &len,
		    EVBUFFER_EOL_CRLF)) == NULL) {
			/* No end of line within the limit: refuse, hang up. */
			if (evbuffer_get_length(in) >= CTL_REQUEST_MAX)
				control_conn_refuse(cc, "request too long");
			break;
		}
		if (len >= CTL_REQUEST_MAX)
			control_conn_refuse(cc, "request too long");
		else if (strlen(line) != len)
			/* Executing the text before it would be a guess. */
			reply_error(out, "request contains a NUL byte");
		else
			control_request(cc, line);
		free(line);
	}
	if (evbuffer_get_length(out) > CONTROL_OUT_MAX) {
		ctl->dropped++;
		log_warnx("control: a client (uid %u) left %zu bytes of "
		    "replies unread: closed", (unsigned)cc->uid,
		    evbuffer_get_length(out));
		control_conn_free(cc);
		return;
	}
	control_conn_timer(cc);
}

static void
control_readcb(struct bufferevent *bev, void *arg)
{
	control_process(arg);
}

/* Output fell below CONTROL_OUT_LOW (or emptied). */
static void
control_writecb(struct bufferevent *bev, void *arg)
{
	struct control_conn	*cc = arg;
	size_t			 left;

	left = evbuffer_get_length(bufferevent_get_output(bev));
	if (cc->state == CONTROL_CLOSING) {
		if (left == 0)
			control_conn_free(cc);
		return;
	}
	if (cc->state == CONTROL_WAITING) {
		control_conn_state(cc, CONTROL_READING);
		control_process(cc);
	}
}

static void
control_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct control_conn	*cc = arg;

	if (what & BEV_EVENT_TIMEOUT) {
		cc->ctl->timeouts++;
		log_debug("control: a client (uid %u) idle for %d s: closed",
		    (unsigned)cc->uid, CONTROL_IDLE_TIMEOUT);
	}
	control_conn_free(cc);
}

/* The peer's uid, or (uid_t)-1 when the kernel does not say. */
static uid_t
control_peer_uid(int fd)
{
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    len != sizeof(cred))
		return (uid_t)-1;
	return cred.uid;
}

/*
 * The last of CONTROL_CONN_MAX slots is kept for root (and the daemon's
 * own user), so that clients of control-group cannot lock out the
 * administrator.  Refused clients are told why.
 */
static int
control_admit(struct control *ctl, int fd, uid_t uid)
{
	static const char	 msg[] =
	    "%error too many control connections\n";
	int			 admin = uid == 0 || uid == geteuid();

	if (ctl->nconns < CONTROL_CONN_MAX - 1 ||
	    (admin && ctl->nconns < CONTROL_CONN_MAX))
		return 1;
	ctl->refused++;
	if (ctl->refused == 1 || ctl->refused % 100 == 0)
		log_warnx("control: connection of uid %u refused: %zu "
		    "connections (%llu refused so far)", (unsigned)uid,
		    ctl->nconns, (unsigned long long)ctl->refused);
	(void)send(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	return 0;
}

static void
control_acceptcb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int socklen, void *arg)
{
	struct control		*ctl = arg;
	struct control_conn	*cc;
	uid_t			 uid = control_peer_uid(fd);

	if (!control_admit(ctl, fd, uid)) {
		close(fd);
		return;
	}
	if ((cc = calloc(1, sizeof(*cc))) == NULL ||
	    (cc->bev = bufferevent_socket_new(ctl->d->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warn("control: accept");
		free(cc);
		close(fd);
		return;
	}
	cc->ctl = ctl;
	cc->uid = uid;
	TAILQ_INSERT_TAIL(&ctl->conns, cc, entry);
	ctl->nconns++;
	bufferevent_setcb(cc->bev, control_readcb, control_writecb,
	    control_eventcb, cc);
	/* Bounds what one client can make the daemon hold. */
	bufferevent_setwatermark(cc->bev, EV_READ, 0, CTL_REQUEST_MAX + 2);
	bufferevent_setwatermark(cc->bev, EV_WRITE, CONTROL_OUT_LOW, 0);
	bufferevent_enable(cc->bev, EV_READ | EV_WRITE);
	control_conn_timer(cc);
}

static void
control_errorcb(struct evconnlistener *lev, void *arg)
{
	struct control	*ctl = arg;

	log_warn("control: accept");
	vnetd_accept_pause(lev, ctl->resume);
}

/* 1 if a daemon answers on path. */
static int
control_alive(const struct sockaddr_un *sun)
{
	int	 fd, r;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	return r;
}

struct control *
control_open(struct vnetd *d, const char *path, char *err, size_t errlen)
{
	struct control		*ctl;
	struct sockaddr_un	 sun;
	struct stat		 sb;
	mode_t			 old;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "control socket %s: path too long", path);
		return NULL;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			snprintf(err, errlen, "control socket %s: exists and "
			    "is not a socket", path);
			return NULL;
		}
		if (control_alive(&sun)) {
			snprintf(err, errlen, "control socket %s: another "
			    "daemon is answering on it", path);
			return NULL;
		}
		log_info("control socket %s: replacing a stale socket", path);
		unlink(path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return NULL;
	}
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		snprintf(err, errlen, "control socket %s: %s", path,
		    strerror(errno));
		close(fd);
		return NULL;
	}
	umask(old);
	/*
	 * Whoever can connect can change the network: the owner only, or
	 * with control-group, that group too.
	 */
	if (d->control_group[0] != '\0' &&
	    (chown(path, (uid_t)-1, d->control_gid) == -1 ||
	    chmod(path, 0660) == -1)) {
		snprintf(err, errlen, "control socket %s: group %s: %s", path,
		    d->control_group, strerror(errno));
		unlink(path);
		close(fd);
		return NULL;
	}
	if ((d->control_group[0] == '\0' && chmod(path, 0600) == -1) ||
	    (ctl = calloc(1, sizeof(*ctl))) == NULL) {
		snprintf(err, errlen, "control socket %s: %s", path,
		    strerror(errno));
		unlink(path);
		close(fd);
		return NULL;
	}
	ctl->d = d;
	TAILQ_INIT(&ctl->conns);
	snprintf(ctl->path, sizeof(ctl->path), "%s", path);
	ctl->lev = evconnlistener_new(d->base, control_acceptcb, ctl,
	    LEV_OPT_CLOSE_ON_FREE, 16, fd);
	if (ctl->lev == NULL) {
		snprintf(err, errlen, "control socket %s: %s", path,
		    strerror(errno));
		unlink(path);
		close(fd);
		free(ctl);
		return NULL;
	}
	if ((ctl->resume = vnetd_accept_timer(ctl->lev)) == NULL) {
		snprintf(err, errlen, "control socket %s: out of memory",
		    path);
		evconnlistener_free(ctl->lev);
		unlink(path);
		free(ctl);
		return NULL;
	}
	evconnlistener_set_error_cb(ctl->lev, control_errorcb);
	return ctl;
}

void
control_close(struct control *ctl)
{
	struct control_conn	*cc;

	while ((cc = TAILQ_FIRST(&ctl->conns)) != NULL)
		control_conn_free(cc);
	event_free(ctl->resume);
	evconnlistener_free(ctl->lev);
	unlink(ctl->path);
	free(ctl);
}

void
control_show_stats(const struct control *ctl, struct evbuffer *out)
{
	evbuffer_add_printf(out, "control_clients\t%zu\n", ctl->nconns);
	evbuffer_add_printf(out, "control_refused\t%llu\n",
	    (unsigned long long)ctl->refused);
	evbuffer_add_printf(out, "control_dropped\t%llu\n",
	    (unsigned long long)ctl->dropped);
	evbuffer_add_printf(out, "control_timeouts\t%llu\n",
	    (unsigned long long)ctl->timeouts);
}
