/*
 * Local interfaces: where guests' frames enter and leave the daemon.  Each
 * is a port of the switch (sw.h).  The generic part (naming, the port,
 * counters, event) is here; the
 * device itself sits behind iface_ops: TAP (tap.c), or a capture on an
 * existing device, through a packet socket (afpacket.c) or, where there is
 * none, libpcap (pcapif.c).
 *
 * An interface is up (its port carries frames) or down.  A backend with a
 * present() op is watched once a second: when its device goes away, or a
 * read fails, the interface goes down and its device is closed; while down,
 * opening it again is tried once a second, and it comes back up with the
 * device.  Without present(), a failed read leaves the interface down.
 *
 * With `threads yes` a TAP device is read and written by two threads of its
 * own (iothread.h); the frames still enter and leave through iface_input()
 * and the port's transmit, in the main thread.
 */
#ifndef VNET_IFACE_H
#define VNET_IFACE_H

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include "stmt.h"
#include "sw.h"

struct event;
struct event_base;
struct iface;
struct iothread;

TAILQ_HEAD(iface_list, iface);

/* What every interface is given by the daemon that makes it. */
struct iface_env {
	struct event_base	*base;
	struct sw		*sw;
	int			 offload;	/* TAP segmentation offload */
	int			 threads;	/* TAP I/O threads (iothread.h) */
};

struct iface_ops {
	const char	*type;
	/* Opens the device; returns a pollable non-blocking fd or -1 (err). */
	int		 (*open)(struct iface *, char *err, size_t errlen);
	/* Reads one frame: length, 0 when nothing is pending, -1 on error
	 * (not needed with dispatch). */
	ssize_t		 (*read)(struct iface *, uint8_t *buf, size_t len);
	/* Writes one frame: 0, or -1 (errno set) when it was dropped. */
	int		 (*write)(struct iface *, const uint8_t *buf, size_t len);
	/*
	 * Optional, for a device that takes offload frames (gso.h): writes
	 * one with its virtio-net header vh (NULL: none).  Without it, such
	 * frames are cut into plain ones for write().
	 */
	int		 (*write_vh)(struct iface *, const uint8_t *vh,
			    const uint8_t *eth, size_t len);
	/* read() gives each frame after a virtio-net header. */
	int		 vnet_hdr;
	void		 (*close)(struct iface *);
	/*
	 * Optional: reads up to max frames, handing each to iface_input();
	 * returns how many, 0 when nothing is pending, -1 when the device
	 * failed (a message in err).  When set, it is used instead of read.
	 */
	int		 (*dispatch)(struct iface *, int max, char *err,
			    size_t errlen);
	/*
	 * Optional: 1 while the opened device is still there (and the same
	 * device), 0 when it is gone.  Enables the watch and reopening.
	 * open() then fails with errno ENODEV for a device that is missing.
	 */
	int		 (*present)(struct iface *);
	/*
	 * Optional: frames the capture lost for want of room since the last
	 * call (the kernel's count).  Asked once a second and by show.
	 */
	uint64_t	 (*capture_drops)(struct iface *);
	/*
	 * Optional: the backend to use instead when open() fails with
	 * EAFNOSUPPORT (the kind of socket this one needs is missing).
	 */
	const struct iface_ops *fallback;
	/*
	 * Optional: made once when the interface is added, undone when it
	 * goes (state that outlives each open device, in iface->backend).
	 */
	int		 (*attach)(struct iface *, char *err, size_t errlen);
	void		 (*detach)(struct iface *);
	/* Optional: called once a second while the device is open. */
	void		 (*tick)(struct iface *);
};

struct iface_counters {
	uint64_t	frames_in, bytes_in;
	uint64_t	frames_out, bytes_out;
	uint64_t	drops;		/* writes refused, frames too long */
	uint64_t	read_errors;
	uint64_t	looped;		/* captured frames we had injected */
	uint64_t	capture_drops;	/* lost in the capture's buffer */
	/* A segment's interface while another node forwards it. */
	uint64_t	standby_in;	/* captured and dropped */
	uint64_t	standby_out;	/* not injected */
	uint64_t	segment_looped;	/* captured from a remote node's MAC */
	uint64_t	announced;	/* RARPs sent for remote MACs */
};

/*
 * What the rest of the daemon may know of an interface (struct iface is
 * iface_impl.h's).  The interfaces in the order they were made:
 *	IFACES_FOREACH(ifc, &d->ifaces) ...
 * (ifc must not be freed inside).
 */
struct iface	*ifaces_first(const struct iface_list *);
struct iface	*iface_next(const struct iface *);
#define IFACES_FOREACH(ifc, list)					\
	for ((ifc) = ifaces_first(list); (ifc) != NULL;			\
	    (ifc) = iface_next(ifc))
/* Frees every interface in the list, which is left empty. */
void		 ifaces_free(struct iface_list *);
const char	*iface_name(const struct iface *);
/* The statement it was made from; its `segment NAME` ("": none). */
const struct stmt *iface_conf(const struct iface *);
const char	*iface_segment(const struct iface *);
/* 1 while it stands by (iface_set_standby()). */
int		 iface_standby(const struct iface *);
const struct iface_counters *iface_counters(const struct iface *);
struct iface	*iface_find(const struct iface_list *, const char *name);
int		 iface_add(struct iface_list *, struct iface_env *,
		    const struct stmt *, char *err, size_t errlen);
int		 iface_del(struct iface_list *, const char *name, char *err,
		    size_t errlen);
void		 iface_free(struct iface *);
const char	*iface_devname(const struct iface *);
/* A frame read from the device: counts it and forwards it. */
void		 iface_input(struct iface *, const uint8_t *vh, const uint8_t *eth,
		    size_t len);
/* The same for a frame read behind its virtio-net header (n bytes in all). */
void		 iface_input_vnet(struct iface *, const uint8_t *buf, size_t n);
/* Reading the device failed with errno e: the interface goes down. */
void		 iface_read_failed(struct iface *, int e);
/* A segment's interface forwards (0) or stands by (1, iface->standby). */
void		 iface_set_standby(struct iface *, int standby);
/*
 * Writes one broadcast RARP frame from mac on the device (as QEMU
 * announces a guest after a migration): the LAN's switches learn mac
 * behind this interface.
 */
void		 iface_announce(struct iface *, const uint8_t *mac);

/* Frames the device refused (iothread writes included). */
uint64_t	 iface_drops(const struct iface *);

/* The backend knows its device is there now: open it if down. */
void		 iface_dev_appeared(struct iface *);
/* Capture drops so far (the backend's count brought up to date). */
uint64_t	 iface_capture_drops(struct iface *);
/* Sets IFF_UP on device dev (in vnetd's namespace); 0 or -1 (err). */
int		 iface_dev_up(const char *dev, char *err, size_t errlen);

extern const struct iface_ops tap_ops;
extern const struct iface_ops pcapif_ops;
extern const struct iface_ops afpacket_ops;
extern const struct iface_ops qemuif_ops;

/* Checks a pcap filter expression; 0, or -1 with a message in err. */
int		 pcapif_filter_check(const char *expr, char *err, size_t errlen);
/* Compiles it and attaches it to socket fd (SO_ATTACH_FILTER). */
int		 pcapif_filter_attach(int fd, const char *expr, char *err,
		    size_t errlen);

/*
 * QEMU's stream framing (qemuif.c): each frame a 4-byte big-endian length
 * (1..QEMUIF_FRAME_MAX, QEMU's own limit) and the frame.
 */
#define QEMUIF_HDR_LEN		4
#define QEMUIF_FRAME_MAX	(4096 + 65536)

/*
 * Passes each whole frame in buf to cb and sets *used to the bytes they
 * took (a partial frame at the end waits for more).  cb returns 0 to go
 * on, anything else to stop at once (buf may be gone).  Returns the number
 * of frames, or -1 for a length out of range (the stream is broken).  Pure.
 */
int		 qemuif_parse(const uint8_t *buf, size_t len, size_t *used,
		    int (*cb)(const uint8_t *, size_t, void *), void *arg);

/*
 * show interfaces, the way each interface renders itself: the column line
 * (more: columns other modules add), then one row per interface (more:
 * their fields, "\t"-led, in the same order).
 */
struct evbuffer;
#define IFACE_SHOW_COLUMNS	"name\ttype\tdev\tstate\tframes_in\t" \
	"bytes_in\tframes_out\tbytes_out\tdrops\tcapture_drops"
void		 iface_show_columns(const char *more, struct evbuffer *);
void		 iface_show(struct iface *, const char *more, struct evbuffer *);
/* The interfaces' families of /metrics (metric.h). */
struct metric_out;
void		 iface_metrics(const struct iface_list *,
		    const struct metric_out *);

#endif
