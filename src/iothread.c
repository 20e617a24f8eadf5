/*
 * I/O threads for a TAP interface: see iothread.h.
 */
#include <sys/eventfd.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "gso.h"
#include "iothread.h"
#include "ring.h"

static void
iothread_wake(int efd)
{
	uint64_t	 one = 1;

	/* Only a counter at its maximum refuses: it wakes anyway. */
	if (write(efd, &one, sizeof(one)) == -1)
		return;
}

static void
iothread_drain(int efd)
{
	uint64_t	 v;

	/* Nothing to read (EAGAIN): nobody signalled. */
	if (read(efd, &v, sizeof(v)) == -1)
		return;
}

/* Sleeps until fd (if not -1) is readable or efd is signalled. */
static void
iothread_sleep(int fd, int efd)
{
	struct pollfd	 pfd[2];
	nfds_t		 n = 0;

	pfd[n].fd = efd;
	pfd[n++].events = POLLIN;
	if (fd != -1) {
		pfd[n].fd = fd;
		pfd[n++].events = POLLIN;
	}
	if (poll(pfd, n, -1) > 0 && (pfd[0].revents & POLLIN))
		iothread_drain(efd);
}

/* The reader: the device into the rx ring, one read per frame. */
static void *
iothread_reader(void *arg)
{
	struct iothread	*io = arg;
	uint8_t		*p;
	ssize_t		 n;

	while (!atomic_load(&io->stop)) {
		if ((p = ring_reserve(&io->rx, io->frame_max)) == NULL) {
			/* Full: wait for the main thread to make room. */
			if (!ring_want_room(&io->rx, io->frame_max))
				iothread_sleep(-1, io->rd_efd);
			continue;
		}
		n = read(io->fd, p, io->frame_max);
		if (n > 0) {
			if (ring_commit(&io->rx, (size_t)n))
				iothread_wake(io->main_efd);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			iothread_sleep(io->fd, io->rd_efd);
			continue;
		}
		/* The device failed: the main thread takes it down. */
		atomic_store(&io->rx_errno, n == 0 ? EIO : errno);
		iothread_wake(io->main_efd);
		break;
	}
	return NULL;
}

/* The writer: the tx ring into the device, one write per frame. */
static void *
iothread_writer(void *arg)
{
	struct iothread	*io = arg;
	uint8_t		*p;
	size_t		 len;
	ssize_t		 n;

	while (!atomic_load(&io->stop)) {
		if ((p = ring_peek(&io->tx, &len)) == NULL) {
			iothread_sleep(-1, io->wr_efd);
			continue;
		}
		do {
			n = write(io->fd, p, len);
		} while (n == -1 && errno == EINTR);
		/* EAGAIN (its queue full), EIO (down): lost, as on a wire. */
		if (n != (ssize_t)len)
			atomic_fetch_add(&io->tx_errors, 1);
		/* The main thread never waits for room here: it drops. */
		(void)ring_release(&io->tx);
	}
	return NULL;
}

/* Main thread: frames the reader has read. */
static void
iothread_rxcb(evutil_socket_t fd, short ev, void *arg)
{
	struct iothread	*io = arg;
	uint8_t		*p;
	size_t		 len;
	int		 i, e;

	iothread_drain(io->main_efd);
	for (i = 0; i < IOTHREAD_BATCH; i++) {
		if ((p = ring_peek(&io->rx, &len)) == NULL)
			break;
		io->cb.input(io->cb.arg, p, len);
		if (ring_release(&io->rx))
			iothread_wake(io->rd_efd);
	}
	if (i == IOTHREAD_BATCH) {
		/* More waiting: after the other events have had a turn. */
		event_active(io->ev, EV_READ, 1);
		return;
	}
	if ((e = atomic_load(&io->rx_errno)) != 0)
		io->cb.failed(io->cb.arg, e);	/* stops us: return */
}

int
iothread_send(struct iothread *io, const uint8_t *vh, const uint8_t *eth,
    size_t len)
{
	uint8_t		*p;

	if ((p = ring_reserve(&io->tx, GSO_VNET_HDR_LEN + len)) == NULL)
		return -1;
	if (vh != NULL)
		memcpy(p, vh, GSO_VNET_HDR_LEN);
	else
		memset(p, 0, GSO_VNET_HDR_LEN);
	memcpy(p + GSO_VNET_HDR_LEN, eth, len);
	if (ring_commit(&io->tx, GSO_VNET_HDR_LEN + len))
		iothread_wake(io->wr_efd);
	return 0;
}

uint64_t
iothread_tx_errors(struct iothread *io)
{
	return atomic_load(&io->tx_errors);
}

static void
iothread_release(struct iothread *io)
{
	if (io->ev != NULL)
		event_free(io->ev);
	if (io->main_efd != -1)
		close(io->main_efd);
	if (io->rd_efd != -1)
		close(io->rd_efd);
	if (io->wr_efd != -1)
		close(io->wr_efd);
	ring_free(&io->rx);
	ring_free(&io->tx);
	free(io);
}

void
iothread_stop(struct iothread *io)
{
	atomic_store(&io->stop, 1);
	iothread_wake(io->rd_efd);
	iothread_wake(io->wr_efd);
	if (io->nthreads > 0)
		pthread_join(io->reader, NULL);
	if (io->nthreads > 1)
		pthread_join(io->writer, NULL);
	iothread_release(io);
}

struct iothread *
iothread_start(struct event_base *base, int fd, size_t frame_max,
    const struct iothread_cb *cb, char *err, size_t errlen)
{
	struct iothread	*io;
	sigset_t	 all, old;
	int		 r;

	if ((io = calloc(1, sizeof(*io))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	io->cb = *cb;
	io->fd = fd;
	io->frame_max = frame_max;
	io->main_efd = io->rd_efd = io->wr_efd = -1;
	atomic_init(&io->stop, 0);
	atomic_init(&io->rx_errno, 0);
	atomic_init(&io->tx_errors, 0);
	if (ring_init(&io->rx, IOTHREAD_RING) == -1 ||
	    ring_init(&io->tx, IOTHREAD_RING) == -1) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if ((io->main_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1 ||
	    (io->rd_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1 ||
	    (io->wr_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if ((io->ev = event_new(base, io->main_efd,
	    EV_READ | EV_PERSIST, iothread_rxcb, io)) == NULL ||
	    event_add(io->ev, NULL) == -1) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* Signals are the main thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if ((r = pthread_create(&io->reader, NULL, iothread_reader, io)) == 0) {
		io->nthreads++;
		if ((r = pthread_create(&io->writer, NULL, iothread_writer,
		    io)) == 0)
			io->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		snprintf(err, errlen, "pthread_create: %s", strerror(r));
		iothread_stop(io);
		return NULL;
	}
	(void)pthread_setname_np(io->reader, "vnetd-read");
	(void)pthread_setname_np(io->writer, "vnetd-write");
	return io;
fail:
	iothread_release(io);
	return NULL;
}
