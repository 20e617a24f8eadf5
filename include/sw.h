/*
 * The switch core: where every frame goes through the daemon.
 *
 * A port is anything frames enter and leave by: an interface (TAP, pcap,
 * packet socket, QEMU socket: a guest's side) or a link to another daemon.
 * Each kind implements struct port_ops and embeds a struct port; the switch
 * knows ports only through it.  A frame enters by sw_input(), which runs
 * the whole pipeline in order:
 *
 *   1. the offload header is checked (a bad one would multiply);
 *   2. from a guest: vCC (vcc.h) may rewrite it; the control plane hears of
 *      the source; it gets this daemon's identity (origin, sequence);
 *      from a link: a frame back at its origin, or seen before, stops here;
 *   3. forwarding (fwd.h) picks the output ports;
 *   4. from a link to one guest: a flow that changed links waits until
 *      its frames by the old link are through (reseq.h);
 *   5. for each: toward a link, the hop limit; toward a guest, vCC;
 *      then, if the port lacks SW_F_OFFLOAD, a super-frame is cut into
 *      segments (or its checksum finished) here, the one place that does
 *      it; then the port's transmit().
 *
 * The switch owns what that needs: the forwarding tables, the vCC state,
 * the frames held for order,
 * the origin and sequence, the scratch buffers and the counters.  It calls
 * nothing above it: the control plane listens through sw_hooks.
 */
#ifndef VNET_SW_H
#define VNET_SW_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

struct fwd;
struct fwd_port;
struct port;
struct sw;
struct vcc;

/* Port features (port_ops.features). */
#define SW_F_OFFLOAD	0x1	/* takes offload frames whole (gso.h) */

struct port_ops {
	const char	*kind;		/* "interface", "link" */
	int		 guest;		/* 1: a guest's side (vCC applies) */
	/*
	 * Sends one frame.  f->vh is non-NULL only if features() has
	 * SW_F_OFFLOAD.  The port counts what it cannot send.
	 */
	void		 (*transmit)(struct port *, const struct sw_frame *f);
	unsigned int	 (*features)(const struct port *);
	const char	*(*name)(const struct port *);
};

struct port {
	const struct port_ops	*ops;
	void			*owner;		/* the interface or link */
	struct fwd_port		*fp;		/* its handle in fwd */
};

struct sw_stats {
	uint64_t	frames_in;	/* frames that entered forwarding */
	uint64_t	frames_out;	/* copies handed to ports */
	uint64_t	hop_limit;	/* copies not sent: hop limit reached */
	uint64_t	duplicates;	/* frames dropped: seen before (cycles) */
	uint64_t	gso_cut;	/* offload frames cut for a port */
	uint64_t	gso_segments;	/* the frames they were cut into */
	uint64_t	gso_bad;	/* offload frames that could not be cut */
	uint64_t	offload_bad;	/* frames dropped: bad offload header */
	uint64_t	reseq_lost;	/* frames held whose guest port went */
};

/* What the switch tells the layer above; any may be NULL. */
struct sw_hooks {
	/*
	 * A frame from a guest, before forwarding (its source is local):
	 * 0, or -1 to drop it (the hook counts why).
	 */
	int	(*guest_frame)(void *arg, struct port *, const uint8_t *eth,
		    size_t len);
	/*
	 * Optional: 1 if a frame with source MAC src may come by link port
	 * from (a path its source's node uses toward this one); asked before
	 * the frame takes part in resequencing (reseq_set_check()).
	 */
	int	(*on_path)(void *arg, struct port *from, const uint8_t *src);
	void	*arg;
};

/* The clock is the caller's, so that a test can drive time. */
struct sw	*sw_new(uint64_t (*now_us)(void), char *err, size_t errlen);
void		 sw_free(struct sw *);
void		 sw_set_hooks(struct sw *, const struct sw_hooks *);

struct fwd	*sw_fwd(struct sw *);
struct vcc	*sw_vcc(struct sw *);
uint32_t	 sw_origin(const struct sw *);
const struct sw_stats *sw_stats(const struct sw *);

/*
 * Makes p a port of the switch under its name (a name the forwarding rules
 * may already use): 0, or -1 with err.  It carries frames between
 * sw_port_up() and sw_port_down() (a device or connection is there).
 */
int		 sw_port_add(struct sw *, struct port *p,
		    const struct port_ops *, void *owner, const char *name,
		    char *err, size_t errlen);
void		 sw_port_up(struct port *);
void		 sw_port_down(struct port *);
void		 sw_port_del(struct sw *, struct port *);

/*
 * Frames from links to a guest are kept in order when a flow changes links
 * (reseq.h): some wait a few milliseconds.  The switch asks for sw_poll()
 * through arm(arg, delay) when one is due.
 */
void		 sw_set_timer(struct sw *,
		    void (*arm)(void *arg, uint64_t delay_us), void *arg);
void		 sw_poll(struct sw *);
struct reseq_stats;
const struct reseq_stats *sw_reseq_stats(const struct sw *);

/* Ages learned MACs and idle flows; about once a second. */
void		 sw_tick(struct sw *);

/* The data path: one frame entered by port in. */
void		 sw_input(struct sw *, struct port *in, const struct sw_frame *);

/*
 * A read buffer for one frame (with room for a virtio-net header before
 * it), reused by every port's read: a frame read into it may be rewritten
 * in place by sw_input().
 */
uint8_t		*sw_rxbuf(struct sw *, size_t *len);

/* vh as sw_frame wants it: NULL for a header that asks for nothing. */
const uint8_t	*sw_vh(const uint8_t *vh);

#endif
