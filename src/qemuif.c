/*
 * The qemu backend: a virtual machine joins through QEMU's own stream
 * network backend over a Unix socket, with no TAP device and no privilege
 * beyond the socket's permissions:
 *
 *   -netdev stream,id=n0,server=off,addr.type=unix,addr.path=PATH
 *
 * vnetd listens on PATH and QEMU connects (server=off), so that a VM can
 * be started, stopped and started again while the daemon keeps its place:
 * each new QEMU connects anew and the interface comes up with it.  One
 * connection at a time: another one, while a VM is connected, is refused.
 *
 * On the stream, each frame is a 4-byte big-endian length and the frame;
 * no offload header, so QEMU offers the guest no offloads and its frames
 * come complete, and super-frames from elsewhere are cut before they go.
 * A length of 0 or more than QEMU itself sends (QEMUIF_FRAME_MAX) breaks
 * the stream: the connection is closed, and only it.
 *
 * Frames for the VM wait in a buffer of QEMUIF_OUT_MAX bytes while the
 * socket is full; a frame that does not fit is dropped and counted, as a
 * full device queue drops it.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "buf.h"
#include "clock.h"
#include "iface.h"
#include "iface_impl.h"
#include "log.h"
#include "wire.h"

#define QEMUIF_OUT_MAX		(1024 * 1024)
#define QEMUIF_IN_MAX		(QEMUIF_HDR_LEN + QEMUIF_FRAME_MAX)
#define QEMUIF_SOCK_MODE	0660
#define QEMUIF_LOG_MS		10000	/* refusals logged at most this often */
#define QEMUIF_PAUSE_MS		1000	/* accept paused: out of descriptors */

/* Lives as long as the interface: the socket QEMU connects to. */
struct qemuif_listener {
	int		 fd;
	struct event	*ev;
	struct event	*resume;	/* ends a pause of ev */
	struct iface	*ifc;
	int		 accept_errno;	/* of the last failed accept */
	uint64_t	 paused_ms;	/* last pause logged */
	uint64_t	 refused_ms;	/* last refusal logged */
	uint64_t	 refused;	/* since then, not logged */
};

/* One connection of a QEMU. */
struct qemuif {
	int		 fd;
	struct event	*wev;		/* armed while out[] holds bytes */
	size_t		 in_len;
	size_t		 out_len;
	uint8_t		 in[QEMUIF_IN_MAX];
	uint8_t		 out[QEMUIF_OUT_MAX];
};

int
qemuif_parse(const uint8_t *buf, size_t len, size_t *used,
    int (*cb)(const uint8_t *, size_t, void *), void *arg)
{
	struct rbuf	 b;
	const uint8_t	*frame;
	uint32_t	 flen;
	int		 n = 0;

	rbuf_init(&b, buf, len);
	*used = 0;
	for (;;) {
		if (rbuf_get_u32(&b, &flen) == -1)
			break;
		if (flen == 0 || flen > QEMUIF_FRAME_MAX)
			return -1;
		if (rbuf_get_ptr(&b, flen, &frame) == -1)
			break;
		*used = len - rbuf_left(&b);
		n++;
		if (cb(frame, flen, arg) != 0)
			break;
	}
	return n;
}

static const char *
qemuif_path(const struct iface *ifc)
{
	return ifc->conf.path;
}

/* What qemuif_frame needs: the connection whose buffer it reads. */
struct qemuif_rx {
	struct iface	*ifc;
	struct qemuif	*q;
};

static int
qemuif_frame(const uint8_t *frame, size_t len, void *arg)
{
	struct qemuif_rx *rx = arg;

	/* Longer than a link carries: QEMU allows a little more. */
	if (len > WIRE_FRAME_MAX) {
		rx->ifc->c.drops++;
		return 0;
	}
	iface_input(rx->ifc, NULL, frame, len);
	/* A frame forwarded can take the interface down, freeing the buffer. */
	return rx->ifc->softc != rx->q;
}

static int
qemuif_dispatch(struct iface *ifc, int max, char *err, size_t errlen)
{
	struct qemuif	*q = ifc->softc;
	struct qemuif_rx rx = { ifc, q };
	ssize_t		 n;
	size_t		 used;
	int		 frames;

	(void)max;
	do {
		n = read(q->fd, q->in + q->in_len, sizeof(q->in) - q->in_len);
	} while (n == -1 && errno == EINTR);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n <= 0) {
		snprintf(err, errlen, "QEMU %s", n == 0 ? "disconnected" :
		    strerror(errno));
		return -1;
	}
	q->in_len += (size_t)n;
	if ((frames = qemuif_parse(q->in, q->in_len, &used, qemuif_frame,
	    &rx)) == -1) {
		snprintf(err, errlen, "QEMU sent a frame length out of range");
		return -1;
	}
	/* The connection may be gone: a frame forwarded can take it down. */
	if (ifc->softc != q)
		return frames;
	memmove(q->in, q->in + used, q->in_len - used);
	q->in_len -= used;
	return frames;
}

/* Writes what waits; 0, or -1 when the connection failed. */
static int
qemuif_flush(struct qemuif *q)
{
	ssize_t	 n;

	while (q->out_len > 0) {
		n = write(q->fd, q->out, q->out_len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0)
			return -1;
		memmove(q->out, q->out + n, q->out_len - (size_t)n);
		q->out_len -= (size_t)n;
	}
	if (q->out_len > 0)
		return event_add(q->wev, NULL);
	return event_del(q->wev);
}

static void
qemuif_writecb(evutil_socket_t fd, short ev, void *arg)
{
	struct iface	*ifc = arg;

	(void)fd;
	(void)ev;
	if (ifc->softc != NULL && qemuif_flush(ifc->softc) == -1)
		iface_read_failed(ifc, errno != 0 ? errno : EPIPE);
}

static int
qemuif_write(struct iface *ifc, const uint8_t *buf, size_t len)
{
	struct qemuif	*q = ifc->softc;
	uint8_t		*p;

	if (len > QEMUIF_FRAME_MAX ||
	    QEMUIF_HDR_LEN + len > sizeof(q->out) - q->out_len) {
		errno = ENOBUFS;
		return -1;
	}
	p = q->out + q->out_len;
	p[0] = (uint8_t)(len >> 24);
	p[1] = (uint8_t)(len >> 16);
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	memcpy(p + QEMUIF_HDR_LEN, buf, len);
	q->out_len += QEMUIF_HDR_LEN + len;
	/* A failed connection shows at the next read; the frame is gone. */
	(void)qemuif_flush(q);
	return 0;
}

/* A connection waiting: the "device" is there.  ENODEV while none is. */
static int
qemuif_open(struct iface *ifc, char *err, size_t errlen)
{
	struct qemuif_listener	*l = ifc->backend;
	struct qemuif		*q;
	int			 fd, e;

	if ((fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) == -1) {
		e = l->accept_errno = errno;
		snprintf(err, errlen, "no QEMU connected to %s%s%s",
		    qemuif_path(ifc), e == EAGAIN || e == EWOULDBLOCK ? "" :
		    ": ", e == EAGAIN || e == EWOULDBLOCK ? "" : strerror(e));
		errno = e == EAGAIN || e == EWOULDBLOCK || e == ECONNABORTED ?
		    ENODEV : e;
		return -1;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL ||
	    (q->wev = event_new(ifc->env->base, fd, EV_WRITE, qemuif_writecb,
	    ifc)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", qemuif_path(ifc));
		free(q);
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	q->fd = fd;
	ifc->softc = q;
	log_info("interface %s: QEMU connected to %s", ifc->name,
	    qemuif_path(ifc));
	return fd;
}

static void
qemuif_close(struct iface *ifc)
{
	struct qemuif	*q = ifc->softc;

	if (q != NULL) {
		event_free(q->wev);
		close(q->fd);
		free(q);
	}
	ifc->softc = NULL;
	ifc->fd = -1;
}

static int
qemuif_present(struct iface *ifc)
{
	return ifc->softc != NULL;
}

static void
qemuif_resume_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct qemuif_listener	*l = arg;

	(void)fd;
	(void)ev;
	if (event_add(l->ev, NULL) == -1)
		log_warnx("interface %s: cannot listen on %s again",
		    l->ifc->name, qemuif_path(l->ifc));
}

/*
 * accept() failed for want of descriptors or memory: the socket stays
 * readable, so listening on stops for a while instead of spinning on it.
 * 1 if it paused.
 */
static int
qemuif_pause(struct qemuif_listener *l, int e)
{
	struct timeval	 tv = { 0, QEMUIF_PAUSE_MS * 1000 };
	uint64_t	 now;

	if (e != EMFILE && e != ENFILE && e != ENOBUFS && e != ENOMEM)
		return 0;
	now = clock_now_ms();
	if (l->paused_ms == 0 || now - l->paused_ms >= QEMUIF_LOG_MS) {
		log_warnx("interface %s: accept on %s: %s; pausing %d ms at "
		    "a time until it works", l->ifc->name,
		    qemuif_path(l->ifc), strerror(e), QEMUIF_PAUSE_MS);
		l->paused_ms = now;
	}
	event_del(l->ev);
	evtimer_add(l->resume, &tv);
	return 1;
}

/* 1 if the VM's end of the connection has hung up or failed. */
static int
qemuif_hung_up(const struct qemuif *q)
{
	struct pollfd	 pfd;

	if (q == NULL)
		return 0;
	pfd.fd = q->fd;
	pfd.events = POLLIN | POLLRDHUP;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) != 1)
		return 0;
	return (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

/*
 * A QEMU knocks: while one is connected, the newcomer is turned away,
 * unless the one connected has hung up.
 */
static void
qemuif_acceptcb(evutil_socket_t fd, short ev, void *arg)
{
	struct qemuif_listener	*l = arg;
	uint64_t		 now;
	int			 s;

	(void)ev;
	if (!l->ifc->up) {
		l->accept_errno = 0;
		iface_dev_appeared(l->ifc);
		if (!l->ifc->up)
			(void)qemuif_pause(l, l->accept_errno);
		return;
	}
	/*
	 * The VM connected may be gone with its hang-up still unread (a QEMU
	 * restarted at once): the newcomer waits while the interface reads
	 * the rest and goes down, then it is taken as the VM.
	 */
	if (qemuif_hung_up(l->ifc->softc))
		return;
	if ((s = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
		(void)qemuif_pause(l, errno);
		return;
	}
	close(s);
	/* Whoever can reach the socket could fill the log: once in a while. */
	now = clock_now_ms();
	if (l->refused_ms != 0 && now - l->refused_ms < QEMUIF_LOG_MS) {
		l->refused++;
		return;
	}
	log_warnx("interface %s: a second connection to %s refused: a VM is "
	    "connected (%llu more refused unlogged)", l->ifc->name,
	    qemuif_path(l->ifc), (unsigned long long)l->refused);
	l->refused_ms = now;
	l->refused = 0;
}

/*
 * A socket left at the path by a daemon that is gone is replaced; one that
 * something answers on is another's.
 */
static int
qemuif_clear_path(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un	 sun;
	struct stat		 sb;
	int			 s, r;

	if (lstat(path, &sb) == -1)
		return errno == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s",
		    path, strerror(errno)), -1);
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket", path);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	r = connect(s, (struct sockaddr *)&sun, sizeof(sun));
	close(s);
	if (r == 0) {
		snprintf(err, errlen, "%s is in use by another program", path);
		return -1;
	}
	if (unlink(path) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int
qemuif_attach(struct iface *ifc, char *err, size_t errlen)
{
	struct qemuif_listener	*l;
	struct sockaddr_un	 sun;
	const char		*path = qemuif_path(ifc);

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: path too long for a socket", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (qemuif_clear_path(path, err, errlen) == -1)
		return -1;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	l->ifc = ifc;
	if ((l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    bind(l->fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    chmod(path, QEMUIF_SOCK_MODE) == -1 || listen(l->fd, 4) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (l->fd != -1)
			close(l->fd);
		free(l);
		return -1;
	}
	if ((l->ev = event_new(ifc->env->base, l->fd, EV_READ | EV_PERSIST,
	    qemuif_acceptcb, l)) == NULL ||
	    (l->resume = evtimer_new(ifc->env->base, qemuif_resume_cb,
	    l)) == NULL || event_add(l->ev, NULL) == -1) {
		snprintf(err, errlen, "%s: out of memory", path);
		if (l->ev != NULL)
			event_free(l->ev);
		if (l->resume != NULL)
			event_free(l->resume);
		close(l->fd);
		unlink(path);
		free(l);
		return -1;
	}
	ifc->backend = l;
	return 0;
}

static void
qemuif_detach(struct iface *ifc)
{
	struct qemuif_listener	*l = ifc->backend;

	if (l == NULL)
		return;
	event_free(l->ev);
	event_free(l->resume);
	close(l->fd);
	(void)unlink(qemuif_path(ifc));
	free(l);
	ifc->backend = NULL;
}

const struct iface_ops qemuif_ops = {
	.type = "qemu",
	.open = qemuif_open,
	.read = NULL,
	.write = qemuif_write,
	.close = qemuif_close,
	.dispatch = qemuif_dispatch,
	.present = qemuif_present,
	.attach = qemuif_attach,
	.detach = qemuif_detach,
};
