/*
 * vCC, the translation layer between a guest and forwarding (after
 * "Virtualized Congestion Control", SIGCOMM 2016, and AC/DC TCP): every
 * frame a guest sends and every frame delivered to it passes through
 * vcc_frame(), which tracks the guest's TCP flows and rewrites their headers
 * without the guest knowing:
 *
 *  - receive-window throttling: the window advertised to a sender is lowered
 *    (never raised) to the flow's target, in the sender's window scale;
 *  - virtual-ECN (vcc IFACE ecn virtual): a guest without ECN is made an ECN
 *    endpoint on the network; its congestion response is a target window,
 *    halved on ECE, grown by about one MSS per RTT;
 *  - bandwidth sharing (vcc share, vcc class): the windows of an interface's
 *    active flows add up to a set total, divided by class weight, and a class
 *    rate caps a flow's window at rate x srtt.
 *
 * Pure: a frame, the state and a clock in, a verdict out.  Nothing here reads
 * a clock, touches a socket or logs; the daemon passes the time.
 */
#ifndef VNET_VCC_H
#define VNET_VCC_H

#include <stddef.h>
#include <stdint.h>

#include "stmt.h"

#define VCC_FLOWS_DEFAULT	4096
/* An interface holds at most max_flows / VCC_IF_SHARE entries. */
#define VCC_IF_SHARE		4
#define VCC_CLASSES_MAX		256
/* Idle time after which an entry ends: established, and the rest. */
#define VCC_IDLE_US		(300ULL * 1000000)
#define VCC_LINGER_US		(10ULL * 1000000)

enum vcc_dir {
	VCC_FROM_GUEST = 0,	/* read from the local interface */
	VCC_TO_GUEST,		/* about to be written to it */
};

enum vcc_verdict {
	VCC_PASS = 0,		/* untouched: send the input */
	VCC_REWRITTEN,		/* send the output buffer (same length) */
};

struct vcc_stats {
	uint64_t	frames;		/* frames seen */
	uint64_t	tcp;		/* of which whole TCP segments */
	uint64_t	truncated;	/* left untouched: a header runs short */
	uint64_t	malformed;	/* left untouched: impossible fields */
	uint64_t	bad_options;	/* SYNs with malformed options: untracked */
	uint64_t	untracked;	/* segments of flows not tracked */
	uint64_t	picked_up;	/* flows first seen without their SYN */
	uint64_t	flows_created;
	uint64_t	flows_closed;	/* FIN both ways, or RST */
	uint64_t	expired;	/* idle timeout */
	uint64_t	evictions;	/* table full: fullest interface's went */
	uint64_t	over_share;	/* interface at its share: its went */
	uint64_t	rewritten;	/* frames changed */
	uint64_t	win_lowered;	/* windows lowered */
	uint64_t	syn_ecn;	/* SYNs and SYN-ACKs given ECN for a guest */
	uint64_t	ect_set;	/* data segments sent out as ECT(0) */
	uint64_t	cwr_set;
	uint64_t	ece_cleared;	/* ECE hidden from guests */
	uint64_t	ece_set;	/* ECE echoed for guests */
	uint64_t	ce_seen;	/* CE on data delivered to guests */
	uint64_t	ecn_cleared;	/* ECN field cleared on data to guests */
	uint64_t	cuts;		/* target windows halved */
};

/* One flow, for show flows.  Addresses point into the table: copy them. */
struct vcc_flow_info {
	const char	*iface;
	int		 family;		/* 4 or 6 */
	const uint8_t	*gaddr, *raddr;		/* guest, remote */
	uint16_t	 gport, rport;
	int		 guest_opened;		/* the guest sent the SYN */
	const char	*state;
	const char	*ecn;			/* off, native, virtual, asked */
	uint8_t		 ws_guest, ws_remote;
	uint16_t	 mss_guest, mss_remote;
	uint64_t	 srtt_us;		/* 0: no sample yet */
	uint32_t	 inflight;		/* the guest's bytes in flight */
	uint64_t	 target;		/* window toward the guest; 0 none */
	uint64_t	 rwnd;			/* remote's advertised window */
	int		 active;
	uint64_t	 idle_us;
	/*
	 * Data segments ECN-capable on the wire (sent, after translation, or
	 * received) and CE-marked on arrival; ECE hidden from the guest;
	 * target window cuts; windows lowered.
	 */
	uint64_t	 ect, ce, ece, cuts, lowered;
	const char	*cls;			/* "-": unclassified */
};

/* One interface with policies or flows, for show vcc. */
struct vcc_if_info {
	const char	*iface;
	int		 ecn_virtual;
	uint64_t	 share;			/* 0: none */
	size_t		 flows, active;
	uint64_t	 weight;		/* of the active flows */
	uint64_t	 window;		/* sum of their targets */
};

struct vcc;

struct vcc	*vcc_new(size_t max_flows, uint64_t seed);
void		 vcc_free(struct vcc *);

/* Applies a vcc statement (set or del-).  0, or -1 with err and no change. */
int		 vcc_apply(struct vcc *, const struct stmt *, char *err,
		    size_t errlen);
/* Calls cb with each policy as a statement, in an order that applies. */
void		 vcc_config_foreach(struct vcc *,
		    void (*cb)(const struct stmt *, void *), void *arg);

/*
 * Passes one frame of interface ifname in direction dir.  On VCC_REWRITTEN
 * the frame to send is in out (len bytes); out may be in itself, for a
 * frame rewritten in place, or a buffer of at least len bytes.  partial: the
 * TCP checksum is left for the device to finish (NEEDS_CSUM), so only the
 * IPv4 header checksum is updated.
 */
enum vcc_verdict vcc_frame(struct vcc *, const char *ifname, enum vcc_dir dir,
		    const uint8_t *in, size_t len, uint8_t *out, int partial,
		    uint64_t now_us);

/* Ends idle entries; the daemon calls it about once a second. */
void		 vcc_expire(struct vcc *, uint64_t now_us);

void		 vcc_flow_foreach(struct vcc *, uint64_t now_us,
		    void (*cb)(const struct vcc_flow_info *, void *), void *arg);
void		 vcc_if_foreach(struct vcc *, uint64_t now_us,
		    void (*cb)(const struct vcc_if_info *, void *), void *arg);
void		 vcc_get_stats(const struct vcc *, struct vcc_stats *);
size_t		 vcc_flow_count(const struct vcc *);

/* show flows and show vcc: the column line and a row per flow, interface. */
struct evbuffer;
struct showwin;
/* Rows of the page w (showwin.h; NULL: all). */
void		 vcc_show_flows(struct vcc *, uint64_t now_us, struct showwin *,
		    struct evbuffer *);
void		 vcc_show_interfaces(struct vcc *, uint64_t now_us,
		    struct evbuffer *);

#endif
