/*
 * Link liveness: whether a link's peer is heard now, in a fraction of a
 * second, not after the keepalive's three silent intervals.  BFD's way
 * (RFC 5880): each side sends a small PROBE every interval (wire.h) that
 * says how it sees the link, and a side that hears nothing for multiplier
 * intervals calls the link dead.  Pure: a clock (ms) and what was heard
 * in, the state and when to probe out; link.c sends the probes, takes a
 * dead link out of the switch and the routing, and puts it back when it
 * is UP again.
 *
 *              heard nothing for the detection time, or the peer says DOWN
 *   UP / HOLD ---------------------------------------------------------> DOWN
 *      ^   ^                                                           |  |
 *      |   +------ the peer hears us: its probe says INIT -------------+  |
 *      |   |                          (old peer: heard at all)            |
 *      |   +-- the peer says INIT, HOLD or UP -- INIT <-- it says DOWN ---+
 *      |                                          | (we hear it, it not us)
 *      +------ HOLD for the hold time             +-- nothing heard -> DOWN
 *
 * As in BFD, DOWN ignores a peer that still says UP or HOLD: that peer is
 * about to hear our DOWN and go down too, and then both come up through
 * INIT.  Probes that cross, or a stall's backlog arriving at once, cannot
 * keep the two ends changing each other's state.
 *
 * A link starts UP: its handshake has just shown both ways to work.  The
 * three-way part (INIT) is for a link cut in one direction: the side that
 * hears nothing says DOWN in its probes, and the side that still hears it
 * goes DOWN too rather than sending into the void.
 *
 * Evidence from the data: frames sent, and nothing heard for
 * LIVENESS_DATA_MS (probing links: multiplier - 1 intervals, at least
 * two, and half an interval more with data_slack) from a peer that had been talking (its last two messages less than
 * LIVENESS_TALK_MS apart) is a death too.  It is the only one on a link
 * whose peer takes no probes (hello without WIRE_CAP_LIVENESS): such a
 * link is otherwise left to the keepalive; any message heard after that
 * counts as the peer hearing us.
 *
 * Dampening: a dead link is back UP only after HOLD for the hold time, which
 * starts at LIVENESS_HOLD_MIN and doubles (to LIVENESS_HOLD_MAX) each time
 * the link dies within LIVENESS_FLAP_MS of coming UP; a link UP for that
 * long starts again at the minimum.  A link that flaps every few seconds
 * is thus kept out of the routes for longer each time.
 *
 * Pace: each end says its interval in its probes, and both send at the
 * slower of the two and time out on it (BFD's required minimum), so one
 * end that wants few probes gets few both ways.  When the pace quickens
 * (an end asks for less, or hears that its peer does), the end probes at
 * the new pace at once but times out on the old detection time for one
 * old detection time more, as BFD does until its poll sequence is done:
 * the peer's probes on their way, or due, still keep the old pace.
 *
 * Idle: a link that has carried no frame either way for LIVENESS_IDLE_MS
 * asks for the slow pace (link.c), as a host's only link does: an idle
 * link fails no guest.  When frames come again it asks for the fast pace
 * and polls (liveness_poll): its next probe goes at once and asks the
 * peer for an answer at once (WIRE_PROBE_POLL); heard, the new detection
 * time holds at once; unheard for it, the link is dead.  So frames that
 * begin on a link that died while idle find it out within one fast
 * detection time, not the slow one.
 *
 * Every change goes through one function that hands it, with the reason,
 * to the callback.
 */
#ifndef VNET_LIVENESS_H
#define VNET_LIVENESS_H

#include <stddef.h>
#include <stdint.h>

/* Defaults; see vnetd.conf(5) for why. */
#define LIVENESS_INTERVAL_DEFAULT	200	/* ms */
/* A node's only link up has no other path to fail over to. */
#define LIVENESS_ALONE_INTERVAL		2000	/* ms, at least */
#define LIVENESS_MULT_DEFAULT		3
#define LIVENESS_INTERVAL_MIN		10	/* ms */
#define LIVENESS_INTERVAL_MAX		60000	/* ms */
#define LIVENESS_MULT_MIN		2
#define LIVENESS_MULT_MAX		255
#define LIVENESS_HOLD_MIN		2000	/* ms */
#define LIVENESS_HOLD_MAX		32000	/* ms */
#define LIVENESS_FLAP_MS		60000	/* ms */
#define LIVENESS_DATA_MS		2000	/* ms, links without probes */
#define LIVENESS_TALK_MS		500	/* ms */
#define LIVENESS_IDLE_MS		10000	/* ms without frames: idle */
#define LIVENESS_WHY_MAX		96

/* The values the PROBE message carries for them, too. */
enum liveness_state {
	LIVENESS_DOWN = 0,
	LIVENESS_INIT = 1,
	LIVENESS_HOLD = 2,
	LIVENESS_UP = 3,
};

struct liveness;
/* A change: from, to, why (the liveness's own, with its fields updated). */
typedef void (*liveness_change_cb)(void *arg, const struct liveness *,
    enum liveness_state from, const char *why);

struct liveness {
	enum liveness_state	 state;
	uint32_t		 interval;	/* ms between probes; 0: none */
	uint32_t		 mult;
	int			 probing;	/* the peer takes probes */
	uint64_t		 since;		/* ms, in this state */
	uint64_t		 heard;		/* ms, the peer's last message */
	uint64_t		 heard_prev;	/* ms, the one before */
	uint64_t		 sent_unheard;	/* ms, first frame since heard; 0 */
	uint64_t		 next_probe;	/* ms */
	uint32_t		 peer_interval;	/* ms, as its probes say */
	uint64_t		 slow_until;	/* ms: the old pace's timeout */
	uint64_t		 slow_detect;	/* ms, until then */
	int			 poll;		/* a poll's probe is due */
	uint64_t		 poll_sent;	/* ms, it went; 0: none unheard */
	uint32_t		 hold;		/* ms, the next hold time */
	uint64_t		 up_at;		/* ms, the last change to UP */
	uint64_t		 lost_at;	/* ms, the last loss; 0: none */
	char			 lost_why[LIVENESS_WHY_MAX];
	uint64_t		 losses;	/* times it died */
	uint64_t		 probes_sent, probes_heard;
	/*
	 * Set by the link whose probes go by datagrams: half an interval more
	 * for the evidence from the data, time for a probe by the connection,
	 * sent at once when the peer's go missing and answered at once, to
	 * arrive first if only the datagrams are blocked.
	 */
	int			 data_slack;
	liveness_change_cb	 cb;
	void			*arg;
};

/*
 * A link just up, heard at now.  interval 0: no probes of ours (the peer
 * may still send its).  probing: the peer takes probes.
 */
void		 liveness_init(struct liveness *, uint32_t interval,
		    uint32_t mult, int probing, uint64_t now,
		    liveness_change_cb, void *arg);
/* New interval and multiplier (set-link, reload). */
void		 liveness_set(struct liveness *, uint32_t interval,
		    uint32_t mult, uint64_t now);
/* A message from the peer arrived (any kind). */
void		 liveness_heard(struct liveness *, uint64_t now);
/* A probe arrived, saying the peer's state and interval (it was heard). */
void		 liveness_probe(struct liveness *, uint64_t now,
		    enum liveness_state peer, uint32_t peer_interval);
/*
 * 1 if the peer has been unheard for half the detection time in effect
 * (an interval and a half with the default multiplier of 3): its probes
 * are missing here, though the link is not dead yet.
 */
int		 liveness_missing(const struct liveness *, uint64_t now);
/*
 * The pace has just quickened for frames after an idle time: the next
 * probe goes at once as a poll (liveness_polling() says so until it is
 * sent); the peer heard after it ends the old detection time, silence for
 * the new one kills the link.
 */
void		 liveness_poll(struct liveness *, uint64_t now);
int		 liveness_polling(const struct liveness *);
/* A frame went to the peer. */
void		 liveness_sent(struct liveness *, uint64_t now);
/*
 * The clock moved: timeouts and the hold run.  1 if a probe is due now
 * (the caller sends one and calls liveness_probe_sent()).
 */
int		 liveness_tick(struct liveness *, uint64_t now);
void		 liveness_probe_sent(struct liveness *, uint64_t now);
/* The detection time now, ms (0: none, no probes either way). */
uint64_t	 liveness_detect(const struct liveness *);
/* 1 if the link may carry traffic: UP. */
int		 liveness_alive(const struct liveness *);
const char	*liveness_state_name(enum liveness_state);

#endif
