/*
 * The switch core: the frame path, top to bottom (see sw.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ether.h"
#include "fwd.h"
#include "gso.h"
#include "log.h"
#include "reseq.h"
#include "sw.h"
#include "vcc.h"
#include "wire.h"

/* A bad offload header is logged at most this often: else the log floods. */
#define SW_LOG_QUIET_MS	1000

struct sw {
	struct fwd	*fwd;
	struct vcc	*vcc;
	uint64_t	(*now_us)(void);
	struct sw_hooks	 hooks;

	/* This daemon's frames: origin is random per start. */
	uint32_t	 origin;
	uint32_t	 seq;

	/*
	 * Scratch: rxbuf holds a frame a port read (sw_rxbuf()) or a
	 * guest's frame vCC rewrote; txbuf a frame vCC rewrote for a guest
	 * (other ports may get the original); segbuf one segment being cut.
	 */
	uint8_t		*rxbuf;
	uint8_t		*txbuf;
	uint8_t		*segbuf;
	size_t		 rxbuf_len;

	/* Frames held while a flow changes links, and their timer. */
	struct reseq	*reseq;
	void		(*arm)(void *arg, uint64_t delay_us);
	void		*arm_arg;
	uint64_t	 armed_us;	/* when it fires; 0: not armed */

	struct sw_stats	 st;
	uint64_t	 offload_bad_logged;	/* ms */
};

/* A segment's way to its port, through gso_segment()'s callback. */
struct sw_cut {
	struct sw		*sw;
	struct port		*port;
	const struct sw_frame	*f;
};

static void	sw_output(struct sw *, struct port *, const struct sw_frame *,
		    int, uint64_t);

/* A frame held by reseq goes on to the guest's port, if it is still up. */
static void
sw_reseq_deliver(void *arg, void *to, const struct sw_frame *f)
{
	struct sw	*sw = arg;
	struct port	*p = to;

	if (p->fp == NULL || fwd_port_owner(p->fp) == NULL) {
		sw->st.reseq_lost++;
		return;
	}
	sw_output(sw, p, f, 1, sw->now_us());
}

static int
sw_reseq_check(void *arg, void *from, const struct sw_frame *f)
{
	struct sw	*sw = arg;

	return sw->hooks.on_path == NULL || sw->hooks.on_path(sw->hooks.arg,
	    from, f->eth + ETHER_ADDR_LEN);
}

struct sw *
sw_new(uint64_t (*now_us)(void), char *err, size_t errlen)
{
	struct sw	*sw;

	if ((sw = calloc(1, sizeof(*sw))) == NULL)
		goto fail;
	sw->now_us = now_us;
	sw->origin = arc4random();
	sw->rxbuf_len = WIRE_PAYLOAD_MAX;
	if ((sw->rxbuf = malloc(sw->rxbuf_len)) == NULL ||
	    (sw->txbuf = malloc(sw->rxbuf_len)) == NULL ||
	    (sw->segbuf = malloc(WIRE_FRAME_MAX)) == NULL ||
	    (sw->vcc = vcc_new(VCC_FLOWS_DEFAULT,
	    (uint64_t)arc4random() << 32 | arc4random())) == NULL ||
	    (sw->fwd = fwd_new(0)) == NULL ||
	    (sw->reseq = reseq_new(sw_reseq_deliver, sw)) == NULL)
		goto fail;
	reseq_set_check(sw->reseq, sw_reseq_check, sw);
	return sw;
fail:
	snprintf(err, errlen, "switch: out of memory");
	sw_free(sw);
	return NULL;
}

void
sw_free(struct sw *sw)
{
	if (sw == NULL)
		return;
	if (sw->fwd != NULL)
		fwd_free(sw->fwd);
	vcc_free(sw->vcc);
	reseq_free(sw->reseq);
	free(sw->rxbuf);
	free(sw->txbuf);
	free(sw->segbuf);
	free(sw);
}

void
sw_set_hooks(struct sw *sw, const struct sw_hooks *h)
{
	if (h != NULL)
		sw->hooks = *h;
	else
		memset(&sw->hooks, 0, sizeof(sw->hooks));
}

void
sw_set_timer(struct sw *sw, void (*arm)(void *arg, uint64_t delay_us),
    void *arg)
{
	sw->arm = arm;
	sw->arm_arg = arg;
	sw->armed_us = 0;
}

/* Asks for sw_poll() by due, the next hold's end (0: none), if not sooner. */
static void
sw_arm(struct sw *sw, uint64_t due, uint64_t now_us)
{
	if (due == 0 || sw->arm == NULL ||
	    (sw->armed_us != 0 && sw->armed_us <= due))
		return;
	sw->armed_us = due;
	sw->arm(sw->arm_arg, due > now_us ? due - now_us : 0);
}

void
sw_poll(struct sw *sw)
{
	uint64_t	 now_us = sw->now_us();

	sw->armed_us = 0;
	sw_arm(sw, reseq_poll(sw->reseq, now_us), now_us);
}

const struct reseq_stats *
sw_reseq_stats(const struct sw *sw)
{
	return reseq_stats(sw->reseq);
}

struct fwd *
sw_fwd(struct sw *sw)
{
	return sw->fwd;
}

struct vcc *
sw_vcc(struct sw *sw)
{
	return sw->vcc;
}

uint32_t
sw_origin(const struct sw *sw)
{
	return sw->origin;
}

const struct sw_stats *
sw_stats(const struct sw *sw)
{
	return &sw->st;
}

uint8_t *
sw_rxbuf(struct sw *sw, size_t *len)
{
	*len = sw->rxbuf_len;
	return sw->rxbuf;
}

void
sw_tick(struct sw *sw)
{
	fwd_age(sw->fwd, sw->now_us() / 1000);
	vcc_expire(sw->vcc, sw->now_us());
}

int
sw_port_add(struct sw *sw, struct port *p, const struct port_ops *ops,
    void *owner, const char *name, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->ops = ops;
	p->owner = owner;
	if ((p->fp = fwd_port_ref(sw->fwd,
	    ops->guest ? FWD_IFACE : FWD_LINK, name)) == NULL) {
		snprintf(err, errlen, "%s %s: out of memory", ops->kind, name);
		return -1;
	}
	return 0;
}

void
sw_port_del(struct sw *sw, struct port *p)
{
	if (p->fp == NULL)
		return;
	reseq_forget(sw->reseq, p);
	fwd_port_detach(p->fp);
	fwd_port_unref(sw->fwd, p->fp);
	p->fp = NULL;
}

void
sw_port_up(struct port *p)
{
	fwd_port_attach(p->fp, p);
}

void
sw_port_down(struct port *p)
{
	if (p->fp != NULL)
		fwd_port_detach(p->fp);
}

const uint8_t *
sw_vh(const uint8_t *vh)
{
	struct gso_hdr	 h;

	if (vh == NULL)
		return NULL;
	gso_hdr_decode(vh, &h);
	return gso_is_plain(&h) ? NULL : vh;
}

/* 1 if the frame's TCP checksum is left for a device to finish. */
static int
sw_partial(const uint8_t *vh)
{
	struct gso_hdr	 h;

	if (vh == NULL)
		return 0;
	gso_hdr_decode(vh, &h);
	return (h.flags & GSO_F_NEEDS_CSUM) != 0;
}

/*
 * An offload header from a guest or a peer is checked before anything acts
 * on it: cut for a port that cannot take it, or handed to a TAP whose
 * kernel cuts it, a bad one would multiply (gso_check()).  0 if it is good.
 */
static int
sw_check_offload(struct sw *sw, struct port *in, const struct sw_frame *f)
{
	struct gso_hdr	 h;
	const char	*why;
	uint64_t	 now;

	if (f->vh == NULL)
		return 0;
	gso_hdr_decode(f->vh, &h);
	if (gso_check(&h, f->eth, f->len, &why) == 0)
		return 0;
	sw->st.offload_bad++;
	now = sw->now_us() / 1000;
	if (now - sw->offload_bad_logged >= SW_LOG_QUIET_MS) {
		sw->offload_bad_logged = now;
		log_warnx("%s %s: offload frame dropped: %s", in->ops->kind,
		    in->ops->name(in), why);
	}
	return -1;
}

/*
 * A guest's frame: vCC translates it before forwarding, in place when the
 * frame is in rxbuf already (a port read it there, maybe behind its offload
 * header), else into rxbuf.  An offload frame's TCP checksum is the
 * device's to finish: the translation leaves it alone.  Then the frame
 * gets this daemon's identity.  -1 if the control plane wants it dropped.
 */
static int
sw_from_guest(struct sw *sw, struct port *in, struct sw_frame *f,
    uint64_t now_us)
{
	uintptr_t	 at = (uintptr_t)f->eth, rx = (uintptr_t)sw->rxbuf;
	uint8_t		*out;

	out = at >= rx && at < rx + sw->rxbuf_len ? sw->rxbuf + (at - rx) :
	    sw->rxbuf;
	if (f->len <= sw->rxbuf_len - (size_t)(out - sw->rxbuf) &&
	    vcc_frame(sw->vcc, in->ops->name(in), VCC_FROM_GUEST, f->eth,
	    f->len, out, sw_partial(f->vh), now_us) == VCC_REWRITTEN)
		f->eth = out;
	if (sw->hooks.guest_frame != NULL &&
	    sw->hooks.guest_frame(sw->hooks.arg, in, f->eth, f->len) == -1)
		return -1;
	f->hops = WIRE_HOPS_DEFAULT;
	f->origin = sw->origin;
	f->seq = sw->seq++;
	return 0;
}

/* A frame from a link that went round: back at its origin, or a copy. */
static int
sw_seen(struct sw *sw, const struct sw_frame *f)
{
	if (f->origin == sw->origin) {
		sw->st.duplicates++;
		return 1;
	}
	return fwd_seen(sw->fwd, f->origin, f->seq, f->eth, f->len);
}

/* One segment of a frame cut for a port without SW_F_OFFLOAD. */
static void
sw_cut_cb(const uint8_t *eth, size_t len, void *arg)
{
	struct sw_cut	*c = arg;
	struct sw_frame	 seg = *c->f;

	seg.vh = NULL;
	seg.eth = eth;
	seg.len = len;
	/* Each segment is a frame of its own, and gets its own identity. */
	seg.origin = c->sw->origin;
	seg.seq = c->sw->seq++;
	c->port->ops->transmit(c->port, &seg);
}

/*
 * The one place a frame is made fit for a port (Linux's
 * validate_xmit_skb()): an offload frame goes whole to a port that takes
 * them, else cut into segments, each with its checksum done.
 */
static void
sw_xmit(struct sw *sw, struct port *p, const struct sw_frame *f)
{
	struct sw_cut	 c = { sw, p, f };
	struct gso_hdr	 h;
	int		 n;

	if (f->vh == NULL || (p->ops->features(p) & SW_F_OFFLOAD)) {
		p->ops->transmit(p, f);
		return;
	}
	gso_hdr_decode(f->vh, &h);
	if ((n = gso_segment(&h, f->eth, f->len, sw->segbuf, WIRE_FRAME_MAX,
	    sw_cut_cb, &c)) == -1) {
		sw->st.gso_bad++;
		return;
	}
	sw->st.gso_cut++;
	sw->st.gso_segments += (uint64_t)n;
}

/* One copy of the frame, to port p. */
static void
sw_output(struct sw *sw, struct port *p, const struct sw_frame *f,
    int from_link, uint64_t now_us)
{
	struct sw_frame	 o = *f;

	if (!p->ops->guest) {
		/* Toward a link: one hop less, none left stops it. */
		if (from_link && f->hops <= 1) {
			sw->st.hop_limit++;
			return;
		}
		if (from_link)
			o.hops = (uint8_t)(f->hops - 1);
	} else if (o.len <= sw->rxbuf_len && vcc_frame(sw->vcc,
	    p->ops->name(p), VCC_TO_GUEST, o.eth, o.len, sw->txbuf,
	    sw_partial(o.vh), now_us) == VCC_REWRITTEN) {
		/* Other ports may get the same frame: a rewrite is a copy. */
		o.eth = sw->txbuf;
	}
	sw_xmit(sw, p, &o);
	sw->st.frames_out++;
}

void
sw_input(struct sw *sw, struct port *in, const struct sw_frame *frame)
{
	struct sw_frame	  f = *frame;
	struct fwd_port	**out;
	struct port	 *p;
	enum fwd_how	  how;
	uint64_t	  now_us = sw->now_us();
	size_t		  n, i;
	int		  from_link = !in->ops->guest;

	if (f.len < ETHER_HDR_LEN || sw_check_offload(sw, in, &f) == -1)
		return;
	if (!from_link) {
		if (sw_from_guest(sw, in, &f, now_us) == -1)
			return;
	} else if (sw_seen(sw, &f))
		return;
	sw->st.frames_in++;
	n = fwd_decide(sw->fwd, f.eth, f.eth + ETHER_ADDR_LEN, in->fp,
	    now_us / 1000, &out, &how);
	/* From a link to one guest: kept in order if its link changes. */
	if (from_link && n == 1 && !ether_is_multicast(f.eth) &&
	    (p = fwd_port_owner(out[0]))->ops->guest) {
		if (reseq_input(sw->reseq, reseq_key(sw->reseq, f.eth, f.len,
		    p), in, p, &f, now_us) == 1) {
			sw_arm(sw, reseq_next(sw->reseq), now_us);
			return;
		}
	}
	for (i = 0; i < n; i++)
		sw_output(sw, fwd_port_owner(out[i]), &f, from_link, now_us);
}
