/*
 * The adaptive overlay (`adapt shortcuts yes`): which pairs of nodes get a
 * direct link (a shortcut) past the relay their guests' traffic crosses,
 * and when it goes again.  Pure: the pair rates and a clock (ms) in, the
 * actions out; the caller (routing.c) dials, drains and closes links and
 * reports back what became of them.
 *
 * One entry per peer node, an explicit state machine; every change goes
 * through one function that hands the decision, in one line, to the log
 * callback given to adapt_new() (without `adapt shortcuts yes`, a change
 * into or out of MANUAL or PEER only follows what the links are and is
 * not logged: every link-up would log one):
 *
 *   RELAY --rate >= threshold--> ABOVE --for hold s, we sort first--> DIALING
 *     ^  <-- rate < threshold ----+                                  |     |
 *     |                                               link up ------+     |
 *     |                                                v                  |
 *     |   DRAINING <--idle s below threshold/2-- UP / BELOW               |
 *     |      |          (or adapt off, or a hand-written link)            |
 *     +------+ drained (ADAPT_DRAIN_MS): close                            |
 *     +------ BACKOFF <--- not up within ADAPT_DIAL_MS, or the link died --+
 *
 * DRAINING keeps the link open but out of the routes (the caller leaves it
 * out of its node record, so both ends route through the relay again), so
 * the frames already on it arrive before it closes.  BACKOFF waits
 * ADAPT_BACKOFF_MIN, doubling after each failure up to ADAPT_BACKOFF_MAX,
 * and starts over after a shortcut that was up for ADAPT_BACKOFF_RESET.
 *
 * The node whose name sorts first dials; the other one keeps its entry in
 * ABOVE ("the peer dials") and calls the incoming link PEER.  max counts
 * both kinds: a node with max shortcuts dials no more and refuses (closes)
 * a new incoming one, whose dialler then backs off.  A link
 * between the pair that neither made (a hand-written one) puts the entry
 * in MANUAL: no shortcut is made, one of ours goes.
 */
#ifndef VNET_ADAPT_H
#define VNET_ADAPT_H

#include <stddef.h>
#include <stdint.h>

#define ADAPT_PEERS_MAX		1024
#define ADAPT_NAME_MAX		31
#define ADAPT_LOG_MAX		384
/* "HOST:PORT (kind)": the candidate of a pair's last dial. */
#define ADAPT_CAND_MAX		80
/* Why a pair's direct path failed, in words, as show adapt says it. */
#define ADAPT_WHY_MAX		160
/* Defaults; see vnetd.conf(5) for why. */
#define ADAPT_THRESHOLD_DEFAULT	(10ULL * 1000 * 1000 / 8)	/* bytes/s */
#define ADAPT_HOLD_DEFAULT	10	/* s */
#define ADAPT_IDLE_DEFAULT	60	/* s */
#define ADAPT_MAX_DEFAULT	8	/* shortcuts per node, dialled or taken */
#define ADAPT_DIAL_MS		5000
#define ADAPT_DRAIN_MS		2000
#define ADAPT_BACKOFF_MIN	10000	/* ms */
#define ADAPT_BACKOFF_MAX	600000	/* ms */
#define ADAPT_BACKOFF_RESET	60000	/* ms up: a later failure starts over */

enum adapt_state {
	ADAPT_RELAY = 0,
	ADAPT_ABOVE,
	ADAPT_DIALING,
	ADAPT_UP,
	ADAPT_BELOW,
	ADAPT_DRAINING,
	ADAPT_BACKOFF,
	ADAPT_MANUAL,
	ADAPT_PEER,		/* the peer's shortcut to us */
};

enum adapt_action {
	ADAPT_NONE = 0,
	ADAPT_DIAL,		/* make the link */
	ADAPT_DRAIN,		/* take it out of the routes, keep it open */
	ADAPT_CLOSE,		/* remove it */
	ADAPT_REFUSE,		/* close the peer's shortcut: max reached */
};

/* What the caller knows about the pair's links. */
enum adapt_link {
	ADAPT_LINK_NONE = 0,	/* none between the two */
	ADAPT_LINK_OURS_UP,	/* the one we dialled is up */
	ADAPT_LINK_OURS_DOWN,	/* the one we dialled exists, not up */
	ADAPT_LINK_PEERS,	/* an incoming one from a peer that sorts first */
	ADAPT_LINK_MANUAL,	/* another (hand-written) one is up */
};

struct adapt_conf {
	int		 shortcuts;	/* adapt shortcuts yes */
	uint64_t	 threshold;	/* bytes/s */
	unsigned int	 hold, idle;	/* s */
	unsigned int	 max;
};

struct adapt_peer {
	char		 name[ADAPT_NAME_MAX + 1];
	enum adapt_state state;
	uint64_t	 since_ms;	/* entered the state */
	uint64_t	 rate;		/* bytes/s, last seen */
	uint64_t	 trigger;	/* bytes/s that made the shortcut */
	uint64_t	 retry_ms;	/* BACKOFF: when it ends */
	uint64_t	 backoff_ms;	/* the next back-off */
	uint64_t	 up_ms;		/* when the shortcut came up */
	unsigned int	 attempts, failures;
	unsigned int	 addr;		/* next address to try */
	const char	*reason;	/* of the last change */
	int		 seen;		/* in this round */
	char		 cand[ADAPT_CAND_MAX];	/* dialled last; "": none */
	char		 note[ADAPT_WHY_MAX];	/* how the dial stands now */
	char		 failure[ADAPT_WHY_MAX]; /* the last one; "": none */
};

struct adapt_stats {
	uint64_t	dials, ups, failures, deaths, drains, closes;
	uint64_t	max_refused, full;
};

struct adapt;

struct adapt	*adapt_new(const char *self,
		    void (*log)(const char *line, void *), void *arg);
void		 adapt_free(struct adapt *);
void		 adapt_set_conf(struct adapt *, const struct adapt_conf *);
const struct adapt_conf *adapt_conf(const struct adapt *);
/* `adapt off|on`: off drains every shortcut and makes none. */
void		 adapt_pause(struct adapt *, int off);

/*
 * One peer's view this round: the pair's guest traffic in bytes/s (both
 * directions) and its links.  Returns what the caller must do now.
 */
enum adapt_action adapt_observe(struct adapt *, const char *peer,
		    uint64_t rate, enum adapt_link link, uint64_t now_ms);
/* After a round: entries of peers not observed are forgotten (0 if busy). */
void		 adapt_round_end(struct adapt *);

/*
 * What the caller learnt of the pair's direct path, kept in its entry: the
 * candidate it dials ("HOST:PORT (kind)"), named when the shortcut comes
 * up; how the dial (or the shortcut) stands, in words, which becomes the
 * failure (show adapt) when it fails or dies.  Cut to fit; no entry: none.
 */
void		 adapt_dialled(struct adapt *, const char *peer,
		    const char *cand);
void		 adapt_note(struct adapt *, const char *peer, const char *why);

const struct adapt_peer *adapt_find(const struct adapt *, const char *peer);
size_t		 adapt_count(const struct adapt *);
const struct adapt_peer *adapt_at(const struct adapt *, size_t i);
/* 1 while the shortcut to peer must stay out of the routes. */
int		 adapt_draining(const struct adapt *, const char *peer);
/* Shortcuts this node has dialled (DIALING, UP, BELOW, DRAINING). */
unsigned int	 adapt_active(const struct adapt *);
const char	*adapt_state_name(enum adapt_state);
void		 adapt_stats(const struct adapt *, struct adapt_stats *);
/* bytes/s as "12.3mbit"; buf >= 32. */
char		*adapt_rate_format(uint64_t bytes_per_s, char *buf, size_t len);

#endif
