/*
 * I/O threads for a TAP interface (`threads yes`): a reader thread that
 * reads the device and a writer thread that writes it, so that the
 * device's system calls (a write runs the guest's whole receive path) run
 * beside the main thread's forwarding, vCC and link work, on another core.
 *
 * Everything else stays in the main thread: the threads touch only the
 * device's descriptor and two rings (ring.h), without locks:
 *
 *   reader thread --rx ring--> main thread: the owner's input() per frame
 *   main thread   --tx ring--> writer thread: write(2) per frame
 *
 * Each record is a frame behind its 12-byte virtio-net header, as the
 * device reads and writes them, so both threads read or write a record in
 * one system call, straight from or into the ring.  A thread sleeps in
 * poll() when it has nothing to do and is woken through an eventfd only
 * when the other side saw it caught up (ring.h), not once per frame.
 *
 * When the rx ring is full, the reader waits (the device's own queue then
 * fills, as it would behind a busy main thread); when the tx ring is full,
 * the frame is dropped and counted, as a full device queue drops it.  A
 * failed read stops the reader and is reported to the main thread, which
 * takes the interface down as for any failed read.
 */
#ifndef VNET_IOTHREAD_H
#define VNET_IOTHREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct event;
struct event_base;

#define IOTHREAD_RING		(4 * 1024 * 1024)	/* bytes, per direction */
#define IOTHREAD_BATCH		64	/* frames handled per main wake-up */

/* What the main thread does with what the threads read, for the owner. */
struct iothread_cb {
	/* A frame behind its virtio-net header, n bytes in all. */
	void	(*input)(void *arg, const uint8_t *buf, size_t n);
	/* The reader stopped on errno e: the owner must stop the threads. */
	void	(*failed)(void *arg, int e);
	void	*arg;
};

struct iothread {
	struct iothread_cb	 cb;
	int			 fd;		/* the device */
	size_t			 frame_max;	/* header and frame */
	struct ring		 rx, tx;
	int			 main_efd;	/* wakes the main thread */
	int			 rd_efd;	/* wakes the reader */
	int			 wr_efd;	/* wakes the writer */
	struct event		*ev;		/* main_efd in the main loop */
	pthread_t		 reader, writer;
	int			 nthreads;	/* started */
	_Atomic int		 stop;
	_Atomic int		 rx_errno;	/* the reader stopped on it */
	_Atomic uint64_t	 tx_errors;	/* writes the device refused */
};

/*
 * Starts the threads on an open device, whose records are at most
 * frame_max bytes (header and frame); the main thread's side runs in base.
 * Returns NULL (err set) if that fails; the caller then reads and writes
 * the device itself.
 */
struct iothread	*iothread_start(struct event_base *, int fd, size_t frame_max,
		    const struct iothread_cb *, char *err, size_t errlen);
/* Stops and joins the threads; frames still in the rings are lost. */
void		 iothread_stop(struct iothread *);
/* Hands a frame to the writer: 0, or -1 when the ring is full (a drop). */
int		 iothread_send(struct iothread *, const uint8_t *vh,
		    const uint8_t *eth, size_t len);
/* Writes the device refused so far. */
uint64_t	 iothread_tx_errors(struct iothread *);

#endif
