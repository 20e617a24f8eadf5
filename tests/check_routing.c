/*
 * Many control planes (routing.h) in one process, over simulated links,
 * with one simulated clock: no event loop, no sockets.  Each node is a
 * struct routing with a forwarding table of its own; a link is two ends
 * that carry each message after a delay (and may lose or repeat it).  The
 * checks follow each guest MAC's automatic route hop by hop from every
 * node, through the forwarding tables, to the interface of its owner.
 *
 * Shortcuts (shortcut.h) run on the same clock: each node publishes the
 * candidates a test gives it, and the env's apply() (link, del-link),
 * punch() and dial() only write down what they are asked, with the time,
 * so that the checks read which candidate was dialled when, from which
 * port, and which hole was punched.  No dial answers unless a test brings
 * the link up.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>

#include <event2/buffer.h>

#include "adapt.h"
#include "fwd.h"
#include "node.h"
#include "routing.h"
#include "stmt.h"

#define NAME_FMT	"n%04u"
#define MOVES_BEFORE_FREEZE	5	/* macown.h's MACOWN_MOVES */
/* shortcut.c's bound of connections to one address, whatever node names it */
#define SHORTCUT_TARGET_DIALS	3
#define SHORTCUT_TARGET_MS	60000
/*
 * check records the place of every assertion that passes (a write each):
 * the simulation's hot paths check only what fails.
 */
#define MUST(c)		do { if (!(c)) ck_abort_msg("%s", #c); } while (0)

struct sim;

struct end {
	struct link_	*l;
	int		 side;
};

struct link_ {
	struct sim	*s;
	unsigned int	 a, b;
	struct end	 end[2];
	unsigned int	 delay;		/* ms, each way */
	int		 up;
	int		 shortcut;	/* a dialled it as a shortcut to b */
};

/* What a node's env was asked to do (shortcuts). */
enum call_kind { CALL_LINK, CALL_DEL, CALL_PUNCH };

struct call {
	uint64_t	 at;		/* ms */
	enum call_kind	 kind;
	char		 node[NODE_NAME_MAX + 1];	/* the link's, punched */
	char		 addr[NODE_ADDR_MAX + 1];	/* LINK, PUNCH */
	uint16_t	 port;		/* LINK: from_port; PUNCH: lport */
};

struct node {
	struct sim	*s;
	unsigned int	 idx;
	char		 name[16];
	struct routing	*r;
	struct fwd	*fwd;
	struct fwd_port	*guest;		/* its interface's port */
	uint64_t	 gen;		/* of the poll asked for */
	int64_t		 wall_skew;	/* ms, for a restart with a clock behind */
	char		 seg[16];	/* its interface's segment; "": none */
	int		 active;	/* forwards it (segment_set()) */
	unsigned int	 announced;	/* MACs announced on it */
	/* What cands() says; none: its address, as a host candidate. */
	struct node_cand cands[NODE_CANDS_MAX];
	size_t		 ncands;
	int		 old_format;	/* its topology records without them */
	struct call	*calls;		/* apply() and punch(), in order */
	size_t		 ncalls, callcap;
	unsigned int	 syn_tries;	/* what dial() said last */
	/*
	 * Thin (the scale case past a star's size): what is sent to it is
	 * counted, not delivered.  Counted for every node: messages and
	 * bytes (with their 8-byte headers) sent and sent to it; with
	 * s->timed, the CPU of its events (ns).
	 */
	int		 thin;
	uint64_t	 msgs_out, bytes_out, msgs_in, bytes_in;
	uint64_t	 cpu_ns;
};

enum ev_kind { EV_POLL, EV_MSG };

struct ev {
	struct ev	*next;
	uint64_t	 at;
	enum ev_kind	 kind;
	unsigned int	 node;
	uint64_t	 gen;		/* EV_POLL: valid if the node's still */
	struct end	*to;		/* EV_MSG: the receiving end */
	uint8_t		*p;
	size_t		 n;
};

/*
 * Events in a calendar of 1 ms slots over SLOTS ms, each slot a list in
 * the order of arrival: every delay here is shorter (a node asks to be
 * polled at most a tick ahead), so that is the time order.
 */
#define SLOTS	4096

struct sim {
	uint64_t	 now;		/* ms */
	uint64_t	 wall0;
	struct node	*nodes;
	unsigned int	 nn;
	struct link_	**links;
	size_t		 nl, lcap;
	struct ev	*head[SLOTS], *tail[SLOTS];
	size_t		 pending;
	struct ev	*spare;		/* freed events, for reuse */
	uint32_t	 rng;
	unsigned int	 loss_pct, dup_pct;
	uint64_t	 msgs, bytes, lost;
	unsigned int	 refresh;	/* s, for every node; 0: the default */
	size_t		 records_max;	/* each node's database; 0: default */
	int		 timed;		/* each event's CPU, to its node */
};

static uint32_t
rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 17;
	s->rng ^= s->rng << 5;
	return s->rng;
}

static void
ev_push(struct sim *s, const struct ev *e)
{
	struct ev	*n;
	size_t		 slot = e->at % SLOTS;

	if (e->at < s->now || e->at - s->now >= SLOTS)
		ck_abort_msg("event %llu ms ahead", (unsigned long long)(e->at -
		    s->now));
	if ((n = s->spare) != NULL)
		s->spare = n->next;
	else
		MUST(n = malloc(sizeof(*n)));
	*n = *e;
	n->next = NULL;
	if (s->tail[slot] != NULL)
		s->tail[slot]->next = n;
	else
		s->head[slot] = n;
	s->tail[slot] = n;
	s->pending++;
}

/* The next event due at or before until, or NULL; s->now moves to it. */
static struct ev *
ev_next(struct sim *s, uint64_t until)
{
	struct ev	*e;
	size_t		 slot;

	for (; s->pending > 0 && s->now <= until; s->now++) {
		slot = s->now % SLOTS;
		if ((e = s->head[slot]) != NULL) {
			if ((s->head[slot] = e->next) == NULL)
				s->tail[slot] = NULL;
			s->pending--;
			return e;
		}
	}
	return NULL;
}

static void
ev_free(struct sim *s, struct ev *e)
{
	free(e->p);
	e->p = NULL;
	e->next = s->spare;
	s->spare = e;
}

/* The env of each node. */

static uint64_t
env_now(void *arg)
{
	struct node	*n = arg;

	return n->s->now;
}

static uint64_t
env_wall(void *arg)
{
	struct node	*n = arg;

	return (uint64_t)((int64_t)(n->s->wall0 + n->s->now) + n->wall_skew);
}

static void
env_arm(void *arg, uint64_t delay)
{
	struct node	*n = arg;
	struct ev	 e;

	memset(&e, 0, sizeof(e));
	e.kind = EV_POLL;
	e.node = n->idx;
	e.gen = ++n->gen;
	e.at = n->s->now + delay;
	ev_push(n->s, &e);
}

static struct end *
other(struct end *e)
{
	return &e->l->end[!e->side];
}

/* The node at an end. */
static struct node *
end_node(struct sim *s, const struct end *e)
{
	return &s->nodes[e->side ? e->l->b : e->l->a];
}

static void
deliver_later(struct sim *s, struct end *to, const uint8_t *p, size_t n,
    uint64_t at)
{
	struct ev	 e;

	memset(&e, 0, sizeof(e));
	e.kind = EV_MSG;
	e.to = to;
	e.at = at;
	e.n = n;
	e.p = malloc(n);
	MUST(e.p);
	memcpy(e.p, p, n);
	ev_push(s, &e);
}

/*
 * A node of the version before candidates: its topology record has only
 * its addresses (the dialable candidates, as build_topo() writes them).
 */
static size_t
old_format(const uint8_t *p, size_t n, uint8_t *out, size_t cap)
{
	struct node_rec	*rec;
	const char	*why;
	size_t		 len = 0;

	MUST(rec = malloc(sizeof(*rec)));
	if (node_decode(p, n, rec, &why) == NODE_OK &&
	    rec->kind == NODE_KIND_TOPO) {
		rec->ncands = 0;
		MUST((len = node_encode(out, cap, rec)) > 0);
	}
	free(rec);
	return len;
}

static int
env_send(void *arg, void *link, const uint8_t *p, size_t n)
{
	struct node	*nd = arg;
	struct sim	*s = nd->s;
	struct end	*e = link;
	struct node	*to;
	uint8_t		 old[NODE_RECORD_MAX];
	size_t		 len;

	if (!e->l->up)
		return -1;
	if (nd->old_format && (len = old_format(p, n, old, sizeof(old))) > 0) {
		p = old;
		n = len;
	}
	s->msgs++;
	s->bytes += n + 8;
	to = end_node(s, other(e));
	nd->msgs_out++;
	nd->bytes_out += n + 8;
	to->msgs_in++;
	to->bytes_in += n + 8;
	if (to->thin)
		return 0;
	if (s->loss_pct != 0 && rnd(s) % 100 < s->loss_pct) {
		s->lost++;
		return 0;
	}
	deliver_later(s, other(e), p, n, s->now + e->l->delay);
	if (s->dup_pct != 0 && rnd(s) % 100 < s->dup_pct)
		deliver_later(s, other(e), p, n, s->now + e->l->delay +
		    rnd(s) % 3);
	return 0;
}

static uint32_t
env_rtt(void *arg, void *link)
{
	struct end	*e = link;

	(void)arg;
	return 2000 * e->l->delay;
}

static int
env_alive(void *arg, void *link)
{
	struct end	*e = link;

	(void)arg;
	return e->l->up;
}

static size_t
env_ifaces(void *arg, const char **only)
{
	(void)arg;
	if (only != NULL)
		*only = "guest";
	return 1;
}

static size_t
env_addrs(void *arg, char (*out)[NODE_ADDR_MAX + 1], size_t max)
{
	struct node	*n = arg;

	if (max == 0)
		return 0;
	snprintf(out[0], NODE_ADDR_MAX + 1, "10.0.%u.%u:7000", n->idx / 250,
	    n->idx % 250 + 1);
	return 1;
}

static size_t
env_cands(void *arg, struct node_cand *out, size_t max)
{
	struct node	*n = arg;
	char		 a[1][NODE_ADDR_MAX + 1];
	size_t		 i;

	if (n->ncands == 0) {
		if (max == 0 || env_addrs(arg, a, 1) == 0)
			return 0;
		out[0].kind = NODE_CAND_HOST;
		memcpy(out[0].addr, a[0], sizeof(out[0].addr));
		return 1;
	}
	for (i = 0; i < n->ncands && i < max; i++)
		out[i] = n->cands[i];
	return i;
}

static struct call *
call_add(struct node *n, enum call_kind kind, const char *node,
    const char *addr, uint16_t port)
{
	struct call	*c;

	if (n->ncalls == n->callcap) {
		n->callcap = n->callcap ? 2 * n->callcap : 32;
		n->calls = realloc(n->calls, n->callcap * sizeof(*n->calls));
		MUST(n->calls != NULL);
	}
	c = &n->calls[n->ncalls++];
	memset(c, 0, sizeof(*c));
	c->at = n->s->now;
	c->kind = kind;
	snprintf(c->node, sizeof(c->node), "%s", node);
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	c->port = port;
	return c;
}

/* The link statement in force for name (a dial not taken back), or NULL. */
static const struct call *
linked(const struct node *n, const char *name)
{
	size_t	 i;

	for (i = n->ncalls; i-- > 0;)
		if (n->calls[i].kind != CALL_PUNCH &&
		    strcmp(n->calls[i].node, name) == 0)
			return n->calls[i].kind == CALL_LINK ? &n->calls[i] :
			    NULL;
	return NULL;
}

static int
env_configured(void *arg, const char *name)
{
	return linked(arg, name) != NULL;
}

/* Shortcuts' link and del-link: written down, and nothing is dialled. */
static int
env_apply(void *arg, const struct stmt *st, char *err, size_t errlen)
{
	struct node	*n = arg;
	char		 addr[NODE_ADDR_MAX + 1];

	if (st->kind != STMT_LINK) {
		snprintf(err, errlen, "not a link statement");
		return -1;
	}
	if (st->op == STMT_OP_DEL) {
		MUST(linked(n, st->name) != NULL);
		call_add(n, CALL_DEL, st->name, "", 0);
		return 0;
	}
	MUST(linked(n, st->name) == NULL);
	stmt_hostport_format(&st->addr, addr, sizeof(addr));
	call_add(n, CALL_LINK, st->name, addr, st->from_port);
	return 0;
}

static void
env_punch(void *arg, const char *node, const char *addr, uint16_t lport)
{
	call_add(arg, CALL_PUNCH, node, addr, lport);
}

/*
 * A dial that is not up has sent SYNs as Linux does (at 0, 1, 3 and 7 s),
 * none answered.
 */
static void
env_dial(void *arg, const char *name, struct routing_dial *out)
{
	struct node		*n = arg;
	const struct call	*c = linked(n, name);
	uint64_t		 e;
	unsigned int		 i;

	memset(out, 0, sizeof(*out));
	if (c == NULL)
		return;
	for (i = 0; i < n->s->nl; i++)
		if (n->s->links[i]->up && n->s->links[i]->shortcut &&
		    n->s->links[i]->a == n->idx &&
		    strcmp(n->s->nodes[n->s->links[i]->b].name, name) == 0) {
			out->state = ROUTING_DIAL_UP;
			return;
		}
	e = n->s->now - c->at;
	out->state = ROUTING_DIAL_SYN;
	out->tries = 1 + (e >= 1000) + (e >= 3000) + (e >= 7000);
	n->syn_tries = out->tries;
}

static int
env_tls(void *arg)
{
	(void)arg;
	return 0;
}

static size_t
env_segments(void *arg, char (*out)[NODE_NAME_MAX + 1], size_t max)
{
	struct node	*n = arg;

	if (max == 0 || n->seg[0] == '\0')
		return 0;
	snprintf(out[0], NODE_NAME_MAX + 1, "%s", n->seg);
	return 1;
}

static void
env_segment_set(void *arg, const char *seg, int active)
{
	struct node	*n = arg;

	MUST(strcmp(seg, n->seg) == 0);
	n->active = active;
}

static void
env_announce(void *arg, const char *seg, const uint8_t *mac)
{
	struct node	*n = arg;

	(void)mac;
	MUST(strcmp(seg, n->seg) == 0 && n->active);
	n->announced++;
}

static const char *
env_port_segment(void *arg, const char *port)
{
	struct node	*n = arg;

	return n->seg[0] != '\0' && strcmp(port, "guest") == 0 ? n->seg :
	    NULL;
}

static const struct routing_env sim_env = {
	.now_ms = env_now, .wall_ms = env_wall, .arm = env_arm,
	.send = env_send, .rtt_us = env_rtt, .alive = env_alive,
	.ifaces = env_ifaces, .addrs = env_addrs, .cands = env_cands,
	.punch = env_punch, .dial = env_dial,
	.configured = env_configured, .apply = env_apply, .tls = env_tls,
	.segments = env_segments, .segment_set = env_segment_set,
	.announce = env_announce, .port_segment = env_port_segment,
};

/* Nodes and links. */

static void
node_start(struct node *n)
{
	struct routing_env env = sim_env;
	struct stmt	 st;
	char		 err[128];

	env.arg = n;
	env.records_max = n->s->records_max;
	ck_assert_ptr_nonnull(n->r = routing_new(&env, n->fwd));
	memset(&st, 0, sizeof(st));
	st.kind = STMT_ROUTING;
	st.flag = 1;
	st.num = n->s->refresh;
	ck_assert_int_eq(routing_apply(n->r, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(routing_start(n->r, n->name), 0);
}

static struct sim *
sim_new_max(unsigned int nn, unsigned int refresh, size_t records_max)
{
	struct sim	*s;
	struct node	*n;
	unsigned int	 i;

	ck_assert_ptr_nonnull(s = calloc(1, sizeof(*s)));
	s->records_max = records_max;
	s->wall0 = 1700000000000ULL;
	s->now = 1000;
	s->rng = 2463534242u;
	s->refresh = refresh;
	s->nn = nn;
	ck_assert_ptr_nonnull(s->nodes = calloc(nn, sizeof(*s->nodes)));
	for (i = 0; i < nn; i++) {
		n = &s->nodes[i];
		n->s = s;
		n->idx = i;
		snprintf(n->name, sizeof(n->name), NAME_FMT, i);
		ck_assert_ptr_nonnull(n->fwd = fwd_new(64));
		ck_assert_ptr_nonnull(n->guest = fwd_port_ref(n->fwd,
		    FWD_IFACE, "guest"));
		fwd_port_attach(n->guest, n);
		node_start(n);
	}
	return s;
}

static struct sim *
sim_new(unsigned int nn, unsigned int refresh)
{
	return sim_new_max(nn, refresh, 0);
}

/* One counter of routing_show_stats(). */
static uint64_t
stat_of(struct routing *r, const char *name)
{
	struct evbuffer	*b = evbuffer_new();
	char		*line;
	size_t		 len, nl = strlen(name);
	uint64_t	 v = UINT64_MAX;

	ck_assert_ptr_nonnull(b);
	routing_show_stats(r, b);
	while ((line = evbuffer_readln(b, &len, EVBUFFER_EOL_LF)) != NULL) {
		if (len > nl && strncmp(line, name, nl) == 0 &&
		    line[nl] == '\t')
			v = strtoull(line + nl + 1, NULL, 10);
		free(line);
	}
	evbuffer_free(b);
	ck_assert_uint_ne(v, UINT64_MAX);
	return v;
}

static void
sim_free(struct sim *s)
{
	unsigned int	 i;
	size_t		 k;

	for (i = 0; i < s->nn; i++) {
		free(s->nodes[i].calls);
		routing_free(s->nodes[i].r);
		fwd_port_unref(s->nodes[i].fwd, s->nodes[i].guest);
		fwd_free(s->nodes[i].fwd);
	}
	struct ev	*e;

	for (k = 0; k < SLOTS; k++)
		while ((e = s->head[k]) != NULL) {
			s->head[k] = e->next;
			ev_free(s, e);
		}
	while ((e = s->spare) != NULL) {
		s->spare = e->next;
		free(e);
	}
	for (k = 0; k < s->nl; k++)
		free(s->links[k]);
	free(s->links);
	free(s->nodes);
	free(s);
}

static void
end_up(struct sim *s, struct end *e)
{
	struct node		*me = &s->nodes[e->side ? e->l->b : e->l->a];
	struct node		*peer = &s->nodes[e->side ? e->l->a : e->l->b];
	struct fwd_port		*fp;
	struct routing_link	 rl;

	fp = fwd_port_find(me->fwd, FWD_LINK, peer->name);
	ck_assert_ptr_nonnull(fp);
	fwd_port_attach(fp, e);
	memset(&rl, 0, sizeof(rl));
	rl.link = e;
	rl.name = peer->name;
	rl.peer = peer->name;
	/* A shortcut: a dialled it, b took it as the peer's. */
	rl.configured = e->l->shortcut && e->side == 0;
	rl.shortcut = e->l->shortcut && e->side == 1;
	routing_link_up(me->r, &rl);
}

static void
end_down(struct sim *s, struct end *e)
{
	struct node	*me = &s->nodes[e->side ? e->l->b : e->l->a];
	struct node	*peer = &s->nodes[e->side ? e->l->a : e->l->b];

	fwd_port_detach(fwd_port_find(me->fwd, FWD_LINK, peer->name));
	routing_link_down(me->r, e);
}

static void
link_up(struct link_ *l)
{
	l->up = 1;
	end_up(l->s, &l->end[0]);
	end_up(l->s, &l->end[1]);
}

static void
link_down(struct link_ *l)
{
	l->up = 0;
	end_down(l->s, &l->end[0]);
	end_down(l->s, &l->end[1]);
}

/* A link up between a and b; shortcut: a dialled it as one. */
static struct link_ *
sim_link_as(struct sim *s, unsigned int a, unsigned int b, unsigned int delay,
    int shortcut)
{
	struct link_	*l;

	ck_assert_ptr_nonnull(l = calloc(1, sizeof(*l)));
	l->s = s;
	l->shortcut = shortcut;
	l->a = a;
	l->b = b;
	l->delay = delay;
	l->end[0].l = l->end[1].l = l;
	l->end[1].side = 1;
	ck_assert_ptr_nonnull(fwd_port_ref(s->nodes[a].fwd, FWD_LINK,
	    s->nodes[b].name));
	ck_assert_ptr_nonnull(fwd_port_ref(s->nodes[b].fwd, FWD_LINK,
	    s->nodes[a].name));
	if (s->nl == s->lcap) {
		s->lcap = s->lcap ? 2 * s->lcap : 64;
		s->links = realloc(s->links, s->lcap * sizeof(*s->links));
		ck_assert_ptr_nonnull(s->links);
	}
	s->links[s->nl++] = l;
	link_up(l);
	return l;
}

static struct link_ *
sim_link(struct sim *s, unsigned int a, unsigned int b, unsigned int delay)
{
	return sim_link_as(s, a, b, delay, 0);
}

static void
sim_run(struct sim *s, uint64_t ms)
{
	uint64_t	 until = s->now + ms;
	struct node	*n;
	struct ev	*e;
	const char	*why;
	struct timespec	 t0, t1;

	while ((e = ev_next(s, until)) != NULL) {
		n = e->kind == EV_POLL ? &s->nodes[e->node] : end_node(s, e->to);
		if (s->timed)
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		if (e->kind == EV_POLL) {
			if (e->gen == n->gen && n->r != NULL)
				routing_poll(n->r);
		} else {
			if (e->to->l->up && routing_input(n->r, e->to, e->p,
			    e->n, &why) == -1)
				ck_abort_msg("%s: message refused: %s", n->name,
				    why);
		}
		if (s->timed) {
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
			n->cpu_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) *
			    1000000000LL + (t1.tv_nsec - t0.tv_nsec));
		}
		ev_free(s, e);
	}
	s->now = until;
}

/*
 * A guest with this MAC speaks at node i (a broadcast from it): 0, or -1
 * if the node dropped the frame.
 */
static int
guest_speaks(struct sim *s, unsigned int i, const uint8_t *mac)
{
	uint8_t	 eth[60];

	memset(eth, 0xff, 6);
	memcpy(eth + 6, mac, 6);
	memset(eth + 12, 0, sizeof(eth) - 12);
	return routing_guest_frame(s->nodes[i].r, s->nodes[i].guest, eth,
	    sizeof(eth));
}

static void
mac_of(unsigned int i, uint8_t *mac)
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(i >> 24);
	mac[3] = (uint8_t)(i >> 16);
	mac[4] = (uint8_t)(i >> 8);
	mac[5] = (uint8_t)i;
}

static int
node_named(struct sim *s, const char *name)
{
	unsigned int	 i;

	if (sscanf(name, "n%u", &i) != 1 || i >= s->nn)
		return -1;
	return (int)i;
}

/*
 * Where a frame for mac from node i ends up, following the automatic
 * routes: the node whose interface takes it, or -1 (no route, a loop, or
 * a port that is down).  *hops: how many links it crossed.
 */
static int
follow(struct sim *s, unsigned int i, const uint8_t *mac, unsigned int *hops)
{
	struct fwd_port	*p;
	int		 cur = (int)i;

	for (*hops = 0; *hops <= s->nn; (*hops)++) {
		if ((p = fwd_auto_get(s->nodes[cur].fwd, mac)) == NULL ||
		    fwd_port_owner(p) == NULL)
			return -1;
		if (fwd_port_kind(p) == FWD_IFACE)
			return cur;
		if ((cur = node_named(s, fwd_port_name(p))) == -1)
			return -1;
	}
	return -1;
}

/* Every node reaches the guest of each owner[] (owner[k]: node of MAC k). */
static int
all_reach(struct sim *s, const unsigned int *owner, unsigned int nmacs,
    unsigned int step, char *why, size_t len)
{
	uint8_t		 mac[6];
	unsigned int	 i, k, hops;
	int		 at;

	for (k = 0; k < nmacs; k++) {
		mac_of(k, mac);
		for (i = 0; i < s->nn; i += step)
			if (!s->nodes[i].thin &&
			    (at = follow(s, i, mac, &hops)) != (int)owner[k]) {
				snprintf(why, len, "from %s, MAC %u (of %s) "
				    "goes to %d", s->nodes[i].name, k,
				    s->nodes[owner[k]].name, at);
				return 0;
			}
	}
	return 1;
}

static void
assert_reach(struct sim *s, const unsigned int *owner, unsigned int nmacs)
{
	char	 why[128];

	if (!all_reach(s, owner, nmacs, 1, why, sizeof(why)))
		ck_abort_msg("%s", why);
}

/* The MACs not of node i: the automatic routes it must have. */
static size_t
foreign(const unsigned int *owner, unsigned int nmacs, unsigned int i)
{
	size_t	 k, n = 0;

	for (k = 0; k < nmacs; k++)
		n += owner[k] != i;
	return n;
}

/*
 * The first node (of each step-th) short of its routes, or s->nn; thin
 * nodes, which are given nothing, are not asked.
 */
static unsigned int
short_of_routes(struct sim *s, const unsigned int *owner, unsigned int nmacs,
    unsigned int step)
{
	unsigned int	 i;

	for (i = 0; i < s->nn; i += step)
		if (!s->nodes[i].thin &&
		    routing_routes(s->nodes[i].r) != foreign(owner, nmacs, i))
			return i;
	return s->nn;
}

/* Runs in steps of 10 ms until all reach (returns the ms it took). */
static uint64_t
converge(struct sim *s, const unsigned int *owner, unsigned int nmacs,
    uint64_t limit, unsigned int step)
{
	uint64_t	 t0 = s->now;
	char		 why[160];
	unsigned int	 i;

	/* Cheap first: every node has a route for each MAC not its own. */
	i = short_of_routes(s, owner, nmacs, step);
	while (i < s->nn || !all_reach(s, owner, nmacs, step, why,
	    sizeof(why))) {
		if (s->now - t0 >= limit) {
			if (i < s->nn)
				ck_abort_msg("not converged after %llu ms: "
				    "%s has %zu routes", (unsigned long long)limit,
				    s->nodes[i].name,
				    routing_routes(s->nodes[i].r));
			ck_abort_msg("not converged after %llu ms: %s",
			    (unsigned long long)limit, why);
		}
		sim_run(s, 10);
		i = short_of_routes(s, owner, nmacs, step);
	}
	return s->now - t0;
}

/* A ring of n nodes (delay 1 ms) with a guest each. */
static struct sim *
ring_refresh(unsigned int n, unsigned int *owner, unsigned int refresh)
{
	struct sim	*s = sim_new(n, refresh);
	uint8_t		 mac[6];
	unsigned int	 i;

	for (i = 0; i < n; i++)
		sim_link(s, i, (i + 1) % n, 1);
	for (i = 0; i < n; i++) {
		owner[i] = i;
		mac_of(i, mac);
		guest_speaks(s, i, mac);
	}
	return s;
}

static struct sim *
ring(unsigned int n, unsigned int *owner)
{
	return ring_refresh(n, owner, 0);
}

START_TEST(converges)
{
	unsigned int	 owner[6];
	struct sim	*s = ring(6, owner);
	uint64_t	 ms;

	ms = converge(s, owner, 6, 5000, 1);
	ck_assert_uint_lt(ms, 2000);
	ck_assert_uint_eq(routing_nodes(s->nodes[0].r), 6);
	ck_assert_uint_eq(routing_routes(s->nodes[0].r), 5);
	/* And it stays so, refreshes included. */
	sim_run(s, 120 * 1000);
	assert_reach(s, owner, 6);
	sim_free(s);
}
END_TEST

/* A guest seen before its node had a link is found once it has. */
START_TEST(guest_before_links)
{
	unsigned int	 owner[3] = { 0, 1, 2 }, i;
	struct sim	*s = sim_new(3, 0);
	uint8_t		 mac[6];

	for (i = 0; i < 3; i++) {
		mac_of(i, mac);
		guest_speaks(s, i, mac);
	}
	sim_run(s, 1000);
	sim_link(s, 0, 1, 1);
	sim_link(s, 1, 2, 1);
	converge(s, owner, 3, 2000, 1);
	sim_free(s);
}
END_TEST

START_TEST(migration)
{
	unsigned int	 owner[6];
	struct sim	*s = ring(6, owner);
	uint8_t		 mac[6];

	converge(s, owner, 6, 5000, 1);
	/* Guest 1 moves to node 4: it speaks there. */
	mac_of(1, mac);
	guest_speaks(s, 4, mac);
	owner[1] = 4;
	converge(s, owner, 6, 2000, 1);
	/* Node 1 dropped it from its record: it stays at node 4. */
	sim_run(s, 60 * 1000);
	guest_speaks(s, 4, mac);
	sim_run(s, 1000);
	assert_reach(s, owner, 6);
	sim_free(s);
}
END_TEST

/*
 * A second guest with guest 1's MAC at node 4, sending every 20 ms while
 * guest 1 sends every 100 ms: node 4 drops its frames and counts them,
 * every node keeps guest 1 at node 1.  Once guest 1 is silent for a
 * second, node 1 lets the MAC go to node 4: a migration.
 */
START_TEST(hostile_twin)
{
	unsigned int	 owner[6];
	struct sim	*s = ring(6, owner);
	uint8_t		 mac[6];
	int		 t, dropped = 0;

	converge(s, owner, 6, 5000, 1);
	mac_of(1, mac);
	for (t = 0; t < 5000; t += 20) {
		if (t % 100 == 0)
			ck_assert_int_eq(guest_speaks(s, 1, mac), 0);
		dropped += guest_speaks(s, 4, mac) == -1;
		sim_run(s, 20);
		if (t % 500 == 0)
			assert_reach(s, owner, 6);
	}
	ck_assert_int_eq(dropped, 250);
	ck_assert_uint_eq(routing_foreign(s->nodes[4].r, "guest"), 250);
	ck_assert_uint_eq(stat_of(s->nodes[4].r, "frames_foreign_src"), 250);
	ck_assert_uint_eq(stat_of(s->nodes[4].r, "mac_claims_waiting"), 1);
	ck_assert_uint_eq(stat_of(s->nodes[1].r, "mac_conflicts"), 1);
	ck_assert_uint_eq(stat_of(s->nodes[1].r, "macs_moved_away"), 0);
	/* Guest 1 falls silent: the twin gets the MAC within 3 s. */
	for (t = 0; t < 3000; t += 20) {
		guest_speaks(s, 4, mac);
		sim_run(s, 20);
	}
	owner[1] = 4;
	assert_reach(s, owner, 6);
	ck_assert_int_eq(guest_speaks(s, 4, mac), 0);
	ck_assert_uint_eq(stat_of(s->nodes[1].r, "macs_moved_away"), 1);
	ck_assert_uint_eq(stat_of(s->nodes[4].r, "mac_claims"), 1);
	sim_free(s);
}
END_TEST

/*
 * Guest 1's MAC sends from node 1 and node 3 in turns of 2.5 s: it moves
 * each turn until the fifth move freezes it (at every node that saw the
 * moves); then it stays where it is, the other's frames dropped.
 */
START_TEST(flapping)
{
	unsigned int	 owner[4], at = 1, turn, i;
	struct sim	*s = ring(4, owner);
	uint8_t		 mac[6];
	uint64_t	 frozen = 0;
	int		 t;

	converge(s, owner, 4, 5000, 1);
	mac_of(1, mac);
	for (turn = 0; turn < 8; turn++) {
		at = at == 1 ? 3 : 1;
		for (t = 0; t < 2500; t += 100) {
			guest_speaks(s, at, mac);
			sim_run(s, 100);
		}
		if (turn < MOVES_BEFORE_FREEZE) {
			owner[1] = at;
			assert_reach(s, owner, 4);
		}
	}
	/* Frozen after the fifth move: where the fifth turn put it. */
	owner[1] = 3;
	assert_reach(s, owner, 4);
	for (i = 0; i < 4; i++)
		frozen += stat_of(s->nodes[i].r, "macs_frozen");
	ck_assert_uint_eq(frozen, 4);
	ck_assert_uint_gt(stat_of(s->nodes[1].r, "mac_claims_frozen"), 0);
	sim_free(s);
}
END_TEST

START_TEST(cut_and_heal)
{
	unsigned int	 owner[6];
	struct sim	*s = ring(6, owner);
	uint8_t		 mac[6];
	unsigned int	 hops;

	converge(s, owner, 6, 5000, 1);
	mac_of(1, mac);
	ck_assert_int_eq(follow(s, 0, mac, &hops), 1);
	ck_assert_uint_eq(hops, 1);
	/* The link 0-1 goes: the long way round, at once. */
	link_down(s->links[0]);
	ck_assert_uint_lt(converge(s, owner, 6, 2000, 1), 1000);
	ck_assert_int_eq(follow(s, 0, mac, &hops), 1);
	ck_assert_uint_eq(hops, 5);
	link_up(s->links[0]);
	converge(s, owner, 6, 2000, 1);
	sim_run(s, 1000);
	ck_assert_int_eq(follow(s, 0, mac, &hops), 1);
	ck_assert_uint_eq(hops, 1);
	sim_free(s);
}
END_TEST

/*
 * A link back in a quiet network is in the routes of both its ends as soon
 * as the record that says so arrives: the path computation's bucket is
 * full, so the second computation in a row (the link up, then the peer's
 * record) is not held back.  A hold there is what lost pings at a proxy's
 * return in it-failover: a host had moved its routes onto the proxy, which
 * still sent the frames back.
 */
START_TEST(back_at_once)
{
	unsigned int	 owner[6];
	struct sim	*s = ring(6, owner);
	uint8_t		 m0[6], m1[6];
	unsigned int	 h0, h1, ms;

	converge(s, owner, 6, 5000, 1);
	mac_of(0, m0);
	mac_of(1, m1);
	link_down(s->links[0]);
	converge(s, owner, 6, 2000, 1);
	sim_run(s, 2000);
	ck_assert_int_eq(follow(s, 0, m1, &h1), 1);
	ck_assert_uint_eq(h1, 5);
	link_up(s->links[0]);
	for (ms = 0; ms < 1000; ms++) {
		if (follow(s, 0, m1, &h1) == 1 && h1 == 1 &&
		    follow(s, 1, m0, &h0) == 0 && h0 == 1)
			break;
		sim_run(s, 1);
	}
	/* 1 ms links: a record's crossing and a computation at each end. */
	ck_assert_msg(ms < 20, "the link back is in both ends' routes after "
	    "%u ms", ms);
	sim_free(s);
}
END_TEST

START_TEST(partition_and_heal)
{
	unsigned int	 owner[6], hops;
	struct sim	*s = ring_refresh(6, owner, 30);
	uint8_t		 mac[6];

	converge(s, owner, 6, 5000, 1);
	/* Two halves: 0 1 2 and 3 4 5. */
	link_down(s->links[2]);
	link_down(s->links[5]);
	sim_run(s, 2000);
	mac_of(4, mac);
	ck_assert_int_eq(follow(s, 0, mac, &hops), -1);
	mac_of(2, mac);
	ck_assert_int_eq(follow(s, 0, mac, &hops), 2);
	/* The halves stay apart past the records' lifetime, then heal. */
	sim_run(s, 100 * 1000);
	ck_assert_uint_eq(routing_nodes(s->nodes[0].r), 3);
	link_up(s->links[2]);
	link_up(s->links[5]);
	ck_assert_uint_lt(converge(s, owner, 6, 2000, 1), 1000);
	sim_free(s);
}
END_TEST

/* How many nodes forward their segment now. */
static unsigned int
forwarders(const struct sim *s)
{
	unsigned int	 i, n = 0;

	for (i = 0; i < s->nn; i++)
		n += s->nodes[i].active != 0;
	return n;
}

/*
 * Runs ms, 1 ms at a time, checking that no two nodes forward the
 * segment at once; returns how long until node want forwards it (or
 * UINT64_MAX if it does not by the end).
 */
static uint64_t
one_forwarder(struct sim *s, uint64_t ms, unsigned int want)
{
	uint64_t	 t, at = UINT64_MAX;

	for (t = 0; t < ms; t++) {
		sim_run(s, 1);
		MUST(forwarders(s) <= 1);
		if (at == UINT64_MAX && s->nodes[want].active)
			at = t + 1;
	}
	return at;
}

/*
 * Nodes 0 and 1 attach segment home, node 2 is linked to both and node 3
 * to node 2.  One forwards it at a time, whatever comes and goes: the
 * lowest name at the start, once settled; the other as soon as the
 * forwarder is cut off; and the forwarder keeps it when the first comes
 * back, or when it starts again.
 */
START_TEST(segment_forwarder)
{
	struct sim	*s = sim_new(4, 0);
	uint8_t		 mac[6];
	uint64_t	 ms;

	snprintf(s->nodes[0].seg, sizeof(s->nodes[0].seg), "home");
	snprintf(s->nodes[1].seg, sizeof(s->nodes[1].seg), "home");
	routing_poll(s->nodes[0].r);
	routing_poll(s->nodes[1].r);
	sim_link(s, 0, 2, 1);
	sim_link(s, 1, 2, 1);
	sim_link(s, 2, 3, 1);
	mac_of(3, mac);
	guest_speaks(s, 3, mac);
	ms = one_forwarder(s, 4000, 0);
	ck_assert_uint_ge(ms, ROUTING_SEG_SETTLE_MS);
	ck_assert_uint_lt(ms, ROUTING_SEG_SETTLE_MS + 1000);
	ck_assert(!s->nodes[1].active);
	/* Node 0 cut off: node 1 takes over, and tells the LAN of node 3's
	 * guest. */
	link_down(s->links[0]);
	ms = one_forwarder(s, 2000, 1);
	ck_assert_uint_lt(ms, 400);
	ck_assert_uint_ge(s->nodes[1].announced, 1);
	ck_assert(!s->nodes[0].active);
	/* Node 0 comes back: node 1 keeps the segment. */
	link_up(s->links[0]);
	ck_assert_uint_eq(one_forwarder(s, 5000, 0), UINT64_MAX);
	ck_assert(s->nodes[1].active);
	/* Node 1 cut off, then back at once: one each time. */
	link_down(s->links[1]);
	ck_assert_uint_lt(one_forwarder(s, 2000, 0), 400);
	link_up(s->links[1]);
	ck_assert_uint_eq(one_forwarder(s, 5000, 1), UINT64_MAX);
	ck_assert(s->nodes[0].active);
	ck_assert_uint_eq(stat_of(s->nodes[0].r, "frames_foreign_src"), 0);
	sim_free(s);
}
END_TEST

/*
 * A database full of a departed node's records takes a node that joins:
 * the unreachable's records make room (nodedb.h).  Six records is what
 * nodes 0, 1 and 2 fill node 0's with (a topology record and a MAC page
 * each).
 */
START_TEST(full_takes_the_living)
{
	struct sim	*s = sim_new_max(4, 30, 6);
	uint8_t		 mac[6];
	unsigned int	 i, hops;

	for (i = 0; i < 4; i++) {
		mac_of(i, mac);
		guest_speaks(s, i, mac);
	}
	sim_link(s, 0, 1, 1);
	sim_link(s, 0, 2, 1);
	sim_run(s, 3000);
	mac_of(2, mac);
	ck_assert_int_eq(follow(s, 0, mac, &hops), 2);
	ck_assert_uint_eq(routing_nodes(s->nodes[0].r), 3);
	/* Node 2 goes; its records stay for their lifetime.  Node 3 joins. */
	link_down(s->links[1]);
	sim_run(s, 1000);
	sim_link(s, 0, 3, 1);
	for (i = 0; i < 20; i++) {
		mac_of(3, mac);
		guest_speaks(s, 3, mac);
		sim_run(s, 500);
	}
	mac_of(3, mac);
	ck_assert_int_eq(follow(s, 0, mac, &hops), 3);
	mac_of(1, mac);
	ck_assert_int_eq(follow(s, 0, mac, &hops), 1);
	ck_assert_uint_ge(stat_of(s->nodes[0].r, "records_evicted"), 1);
	ck_assert_uint_eq(stat_of(s->nodes[0].r, "records_lifetime_cut"), 0);
	sim_free(s);
}
END_TEST

START_TEST(restart_lower_seq)
{
	unsigned int	 owner[6];
	struct sim	*s = ring(6, owner);
	struct node	*n = &s->nodes[3];
	uint8_t		 mac[6];

	converge(s, owner, 6, 5000, 1);
	/* Node 3 restarts with its clock an hour behind. */
	link_down(s->links[2]);
	link_down(s->links[3]);
	routing_free(n->r);
	n->gen++;
	n->wall_skew = -3600 * 1000;
	node_start(n);
	link_up(s->links[2]);
	link_up(s->links[3]);
	mac_of(3, mac);
	guest_speaks(s, 3, mac);
	converge(s, owner, 6, 3000, 1);
	/* Its new record went out above the old one, everywhere. */
	sim_run(s, 1000);
	assert_reach(s, owner, 6);
	sim_free(s);
}
END_TEST

START_TEST(lost_and_duplicated)
{
	unsigned int	 owner[8], i;
	struct sim	*s = sim_new(8, 5);
	uint8_t		 mac[6];

	/* A ring with two chords, a refresh of 5 s. */
	for (i = 0; i < 8; i++)
		sim_link(s, i, (i + 1) % 8, 1 + i % 3);
	sim_link(s, 0, 4, 2);
	sim_link(s, 2, 6, 2);
	s->loss_pct = 20;
	s->dup_pct = 20;
	for (i = 0; i < 8; i++) {
		owner[i] = i;
		mac_of(i, mac);
		guest_speaks(s, i, mac);
	}
	sim_run(s, 30 * 1000);
	ck_assert_uint_gt(s->lost, 0);
	/* Copies of records change nothing; what was lost is refreshed. */
	s->loss_pct = 0;
	converge(s, owner, 8, 12 * 1000, 1);
	s->dup_pct = 50;
	sim_run(s, 30 * 1000);
	assert_reach(s, owner, 8);
	sim_free(s);
}
END_TEST

/*
 * A network of hubs, fully meshed, each with leaves; every fourth leaf is
 * linked to the next as well.  Each node has a guest.
 */
static struct sim *
hubs(unsigned int n, unsigned int per_hub, unsigned int *owner)
{
	unsigned int	 h = (n + per_hub) / (per_hub + 1), i, j;
	struct sim	*s = sim_new(n, 0);
	uint8_t		 mac[6];

	for (i = 0; i < h; i++)
		for (j = i + 1; j < h; j++)
			sim_link(s, i, j, 2);
	for (i = h; i < n; i++) {
		sim_link(s, i, (i - h) % h, 1);
		if ((i - h) % 4 == 1 && i + 1 < n)
			sim_link(s, i, i + 1, 1);
	}
	for (i = 0; i < n; i++) {
		owner[i] = i;
		mac_of(i, mac);
		guest_speaks(s, i, mac);
	}
	return s;
}

/*
 * bench/scale's network: a proxy (node 0) and n - 1 hosts linked to it,
 * every fourth host also to the next; each host has a guest.
 */
static struct sim *
star(unsigned int n, unsigned int *owner)
{
	struct sim	*s = sim_new(n, 0);
	uint8_t		 mac[6];
	unsigned int	 i;

	for (i = 1; i < n; i++) {
		sim_link(s, i, 0, 1);
		if (i % 4 == 1 && i + 1 < n)
			sim_link(s, i, i + 1, 1);
	}
	for (i = 0; i < n; i++) {
		owner[i] = i;
		mac_of(i, mac);
		guest_speaks(s, i, mac);
	}
	return s;
}

/*
 * Past a star's size (NODE_LINKS_MAX + 1 nodes: a bigger hub's topology
 * record lists only NODE_LINKS_MAX of its links), the network the scale
 * case simulates is proxies in a full mesh (2 ms links), each with its
 * share of the other nodes as leaves (1 ms links), leaf k of proxy k %
 * proxies: for 10,000 nodes 10 proxies of 999 leaves each, 1,008 links a
 * proxy.  No leaf has a second link.  Each node has a guest.
 *
 * Symmetry reduction: every node holding every record is what makes a
 * full simulation grow with N squared (about 2 KB per node per node), so
 * the proxies and the first sample leaves of each are full control planes
 * and the other leaves thin: full routing instances, which originate
 * their records and send them as a daemon does (to their proxy, the
 * database exchange included), and are counted for every message and byte
 * sent to them, but to which nothing is delivered.  That changes nothing
 * any other node sees, because a leaf given its proxy's records sends
 * nothing back (routing_flood.c): a new one is flooded on every other
 * link, and a leaf has none; the same sequence is dropped; an older copy
 * than the leaf's (answered with the leaf's) cannot come, since the leaf
 * holds only what that one link brought, in order; a record in the leaf's
 * own name (answered with a newer one) cannot come either, since a proxy
 * floods a record on every link but the one it came on and the exchange
 * at the link's start preceded it; and its database exchange happened
 * when the link came up, before anything reached it, so it sends only its
 * own records, as a full leaf does.  Every leaf of a proxy sees the same
 * messages in the same order (all are at 1 ms), so the full sample stands
 * for all: convergence is every full node's routes (every MAC, followed
 * hop by hop to its owner), and a full leaf's CPU is a leaf's.  Left out:
 * what a leaf would send on its own account that depends on what it is
 * given (segment forwarders, reports to a node that asked for the
 * traffic matrix, shortcuts: none is configured here), cross links
 * between leaves (they would make leaves re-flood), loss, TLS (the
 * signature checks: bench/nodesig), the CPU of the thin leaves' own
 * path computations and floods of what they were not given, and, as in
 * every case here, the links' bandwidth: a message takes its delay
 * whatever its size, so the convergence time leaves out the time a proxy
 * takes to send each of its leaves the whole database (at 10,000 nodes
 * about 2 MB a leaf, 2 GB a proxy).  A node's CPU is its events'; a
 * message to a thin leaf is not copied, so a proxy's leaves out what the
 * simulator's copy of each costs (about 85 ns: at 1,100 nodes, 2 proxies,
 * 42 ms per proxy with 10 full leaves each, 196 ms with all full, the
 * messages and bytes the same to the byte).
 */
static struct sim *
proxies(unsigned int n, unsigned int sample, unsigned int *np,
    unsigned int *owner)
{
	unsigned int	 p = (n + 999) / 1000, i, j;
	struct sim	*s = sim_new(n, 0);
	uint8_t		 mac[6];

	MUST(n > p && (n - p + p - 1) / p + p - 1 <= NODE_LINKS_MAX);
	s->timed = 1;
	for (i = p; i < n; i++)
		s->nodes[i].thin = (i - p) / p >= sample;
	for (i = 0; i < p; i++)
		for (j = i + 1; j < p; j++)
			sim_link(s, i, j, 2);
	for (i = p; i < n; i++)
		sim_link(s, i, (i - p) % p, 1);
	for (i = 0; i < n; i++) {
		owner[i] = i;
		mac_of(i, mac);
		guest_speaks(s, i, mac);
	}
	*np = p;
	return s;
}

/* Relaying: `relay no` on a node. */

static void
set_relay(struct sim *s, unsigned int i, int on)
{
	struct stmt	 st;
	char		 err[128];

	memset(&st, 0, sizeof(st));
	st.kind = STMT_RELAY;
	st.flag = on;
	ck_assert_int_eq(routing_apply(s->nodes[i].r, &st, err, sizeof(err)),
	    0);
}

/* The first hop from node i toward mac, or -1. */
static int
first_hop(struct sim *s, unsigned int i, const uint8_t *mac)
{
	struct fwd_port	*p;

	if ((p = fwd_auto_get(s->nodes[i].fwd, mac)) == NULL ||
	    fwd_port_kind(p) != FWD_LINK)
		return -1;
	return node_named(s, fwd_port_name(p));
}

/*
 * Follows mac's routes from node i as follow() does, failing the check if
 * a node of norelay[] is a hop between the two ends; returns where it ends.
 */
static int
follow_no_transit(struct sim *s, unsigned int i, const uint8_t *mac,
    const int *norelay)
{
	struct fwd_port	*p;
	int		 cur = (int)i;
	unsigned int	 hops;

	for (hops = 0; hops <= s->nn; hops++) {
		if ((p = fwd_auto_get(s->nodes[cur].fwd, mac)) == NULL ||
		    fwd_port_owner(p) == NULL)
			return -1;
		if (fwd_port_kind(p) == FWD_IFACE)
			return cur;
		if (hops > 0 && norelay[cur])
			ck_abort_msg("from %s, %s (relay no) is a transit hop",
			    s->nodes[i].name, s->nodes[cur].name);
		if ((cur = node_named(s, fwd_port_name(p))) == -1)
			return -1;
	}
	return -1;
}

/* Column col (1: the first) of node name's row of show nodes at node i. */
static void
show_nodes_field(struct sim *s, unsigned int i, const char *name, int col,
    char *out, size_t len)
{
	struct evbuffer	*b = evbuffer_new();
	struct stmt	 st;
	char		*line, *f, *save;
	size_t		 n;
	int		 k;

	ck_assert_ptr_nonnull(b);
	memset(&st, 0, sizeof(st));
	st.kind = STMT_SHOW;
	st.show = STMT_SHOW_NODES;
	routing_show(s->nodes[i].r, &st, b);
	out[0] = '\0';
	while ((line = evbuffer_readln(b, &n, EVBUFFER_EOL_LF)) != NULL) {
		for (k = 1, f = strtok_r(line, "\t", &save); f != NULL &&
		    k < col; k++)
			f = strtok_r(NULL, "\t", &save);
		if (f != NULL && strncmp(line, name, strlen(name) + 1) == 0)
			snprintf(out, len, "%s", f);
		free(line);
	}
	evbuffer_free(b);
}

/*
 * A diamond n0-n1, n0-n2, n1-n3, n2-n3: n0 and n3 go by n1 (the name that
 * sorts first) until n1 says relay no, then by n2; n1 still reaches and is
 * reached by everyone, is a leaf of the broadcast tree, and refuses a
 * frame that comes by a link toward another.  Relay yes brings n1 back.
 */
START_TEST(relay_no_transit)
{
	unsigned int	 owner[4] = { 0, 1, 2, 3 }, i, k;
	int		 norelay[4] = { 0, 1, 0, 0 };
	struct sim	*s = sim_new(4, 0);
	struct fwd_port	**out, *in;
	struct fwd_stats fs;
	enum fwd_how	 how;
	uint8_t		 mac[4][6];
	char		 f[16];

	sim_link(s, 0, 1, 1);
	sim_link(s, 0, 2, 1);
	sim_link(s, 1, 3, 1);
	sim_link(s, 2, 3, 1);
	for (i = 0; i < 4; i++) {
		mac_of(i, mac[i]);
		guest_speaks(s, i, mac[i]);
	}
	converge(s, owner, 4, 3000, 1);
	ck_assert_int_eq(first_hop(s, 0, mac[3]), 1);
	ck_assert_int_eq(first_hop(s, 3, mac[0]), 1);
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[3].fwd,
	    FWD_LINK, "n0001")), 1);

	set_relay(s, 1, 0);
	sim_run(s, 1000);
	converge(s, owner, 4, 1000, 1);
	for (i = 0; i < 4; i++)
		for (k = 0; k < 4; k++)
			ck_assert_int_eq(follow_no_transit(s, i, mac[k],
			    norelay), (int)k);
	ck_assert_int_eq(first_hop(s, 0, mac[3]), 2);
	ck_assert_int_eq(first_hop(s, 3, mac[0]), 2);
	show_nodes_field(s, 0, "n0001", 11, f, sizeof(f));
	ck_assert_str_eq(f, "no");
	show_nodes_field(s, 1, "n0001", 11, f, sizeof(f));
	ck_assert_str_eq(f, "no");
	show_nodes_field(s, 0, "n0002", 11, f, sizeof(f));
	ck_assert_str_eq(f, "yes");
	/* The tree: n0-n1, n0-n2, n2-n3; n1 hangs under n0 only. */
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[3].fwd,
	    FWD_LINK, "n0001")), 0);
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[1].fwd,
	    FWD_LINK, "n0003")), 0);
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[1].fwd,
	    FWD_LINK, "n0000")), 1);
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[3].fwd,
	    FWD_LINK, "n0002")), 1);
	/* A stale path at n0: n1 drops n0's frame for n3 and counts it. */
	in = fwd_port_find(s->nodes[1].fwd, FWD_LINK, "n0000");
	ck_assert_uint_eq(fwd_decide(s->nodes[1].fwd, mac[3], mac[0], in,
	    s->now, &out, &how), 0);
	ck_assert_int_eq(how, FWD_DROP);
	fwd_stats(s->nodes[1].fwd, &fs);
	ck_assert_uint_eq(fs.relay_refused, 1);
	/* Its own guest's frames still come and go. */
	ck_assert_uint_eq(fwd_decide(s->nodes[1].fwd, mac[1], mac[0], in,
	    s->now, &out, &how), 1);
	ck_assert_ptr_eq(out[0], s->nodes[1].guest);
	ck_assert_uint_eq(fwd_decide(s->nodes[1].fwd, mac[3], mac[1],
	    s->nodes[1].guest, s->now, &out, &how), 1);
	ck_assert_str_eq(fwd_port_name(out[0]), "n0003");
	fwd_stats(s->nodes[1].fwd, &fs);
	ck_assert_uint_eq(fs.relay_refused, 1);

	set_relay(s, 1, 1);
	sim_run(s, 1000);
	converge(s, owner, 4, 1000, 1);
	ck_assert_int_eq(first_hop(s, 0, mac[3]), 1);
	ck_assert_int_eq(first_hop(s, 3, mac[0]), 1);
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[3].fwd,
	    FWD_LINK, "n0001")), 1);
	ck_assert_uint_eq(fwd_decide(s->nodes[1].fwd, mac[3], mac[0], in,
	    s->now, &out, &how), 1);
	sim_free(s);
}
END_TEST

/* A line n0 - n1 (relay no) - n2: n0 and n2 cannot reach each other. */
START_TEST(relay_no_line)
{
	struct sim	*s = sim_new(3, 0);
	uint8_t		 mac[3][6];
	unsigned int	 i;
	char		 f[16];

	set_relay(s, 1, 0);
	sim_link(s, 0, 1, 1);
	sim_link(s, 1, 2, 1);
	for (i = 0; i < 3; i++) {
		mac_of(i, mac[i]);
		guest_speaks(s, i, mac[i]);
	}
	sim_run(s, 3000);
	ck_assert_uint_eq(routing_nodes(s->nodes[0].r), 3);
	ck_assert_uint_eq(routing_routes(s->nodes[0].r), 1);
	ck_assert_uint_eq(routing_routes(s->nodes[1].r), 2);
	ck_assert_uint_eq(routing_routes(s->nodes[2].r), 1);
	ck_assert_int_eq(follow(s, 0, mac[2], &i), -1);
	ck_assert_int_eq(follow(s, 2, mac[0], &i), -1);
	ck_assert_int_eq(follow(s, 0, mac[1], &i), 1);
	ck_assert_int_eq(follow(s, 2, mac[1], &i), 1);
	ck_assert_int_eq(follow(s, 1, mac[0], &i), 0);
	ck_assert_int_eq(follow(s, 1, mac[2], &i), 2);
	show_nodes_field(s, 0, "n0002", 5, f, sizeof(f));
	ck_assert_str_eq(f, "no");
	show_nodes_field(s, 0, "n0001", 5, f, sizeof(f));
	ck_assert_str_eq(f, "yes");
	show_nodes_field(s, 1, "n0002", 5, f, sizeof(f));
	ck_assert_str_eq(f, "yes");
	/* Each end broadcasts to n1 and n1 to both; no frame goes across. */
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[0].fwd,
	    FWD_LINK, "n0001")), 1);
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[1].fwd,
	    FWD_LINK, "n0000")), 1);
	ck_assert_int_eq(fwd_port_flood(fwd_port_find(s->nodes[1].fwd,
	    FWD_LINK, "n0002")), 1);
	sim_free(s);
}
END_TEST

/*
 * A ring of 8 with n2 and n5 saying relay no: no path passes through
 * either, and two nodes reach each other exactly when an arc between them
 * has neither inside it.
 */
START_TEST(relay_no_ring)
{
	unsigned int	 i, k, j;
	int		 norelay[8] = { 0, 0, 1, 0, 0, 1, 0, 0 }, cw, ccw;
	struct sim	*s = sim_new(8, 0);
	uint8_t		 mac[6];

	set_relay(s, 2, 0);
	set_relay(s, 5, 0);
	for (i = 0; i < 8; i++)
		sim_link(s, i, (i + 1) % 8, 1);
	for (i = 0; i < 8; i++) {
		mac_of(i, mac);
		guest_speaks(s, i, mac);
	}
	sim_run(s, 3000);
	for (i = 0; i < 8; i++)
		for (k = 0; k < 8; k++) {
			cw = ccw = 1;
			for (j = (i + 1) % 8; j != k; j = (j + 1) % 8)
				cw &= !norelay[j];
			for (j = (i + 7) % 8; j != k; j = (j + 7) % 8)
				ccw &= !norelay[j];
			mac_of(k, mac);
			ck_assert_int_eq(follow_no_transit(s, i, mac, norelay),
			    i == k || cw || ccw ? (int)k : -1);
		}
	sim_free(s);
}
END_TEST

/* Peak RSS of the process, MiB. */
static long
peak_mib(void)
{
	struct rusage	 ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss / 1024 : -1;
}

/* The average over nodes [a, b) that are (not) thin of each counter. */
struct per {
	double	 msgs_out, bytes_out, msgs_in, bytes_in, cpu_ms, computed;
};

static void
per_node(struct sim *s, unsigned int a, unsigned int b, int full_only,
    struct per *out)
{
	unsigned int	 i, k = 0;

	memset(out, 0, sizeof(*out));
	for (i = a; i < b; i++) {
		if (full_only && s->nodes[i].thin)
			continue;
		out->msgs_out += (double)s->nodes[i].msgs_out;
		out->bytes_out += (double)s->nodes[i].bytes_out;
		out->msgs_in += (double)s->nodes[i].msgs_in;
		out->bytes_in += (double)s->nodes[i].bytes_in;
		out->cpu_ms += (double)s->nodes[i].cpu_ns / 1e6;
		out->computed += (double)stat_of(s->nodes[i].r,
		    "routes_computed");
		k++;
	}
	if (k == 0)
		return;
	out->msgs_out /= k;
	out->bytes_out /= k;
	out->msgs_in /= k;
	out->bytes_in /= k;
	out->cpu_ms /= k;
	out->computed /= k;
}

/*
 * What one record costs at each node of the converged network: a leaf's
 * new guest changes its MAC record, which every node takes, floods and
 * computes its paths for (the whole graph and every MAC route, one
 * computation per node).  CPU per node per record, and per computation;
 * with proxies (p > 0), per proxy and per full leaf, from their events.
 */
static void
per_record(struct sim *s, unsigned int n, unsigned int p)
{
	uint64_t	 c0 = 0, c1 = 0;
	uint8_t		 mac[6];
	unsigned int	 i, rounds = 3, k;
	clock_t		 t0;
	double		 cpu;
	struct per	 x0, x1, l0, l1;

	for (i = 0; i < n; i++)
		c0 += stat_of(s->nodes[i].r, "routes_computed");
	if (p > 0) {
		per_node(s, 0, p, 1, &x0);
		per_node(s, p, n, 1, &l0);
	}
	t0 = clock();
	for (k = 0; k < rounds; k++) {
		mac_of(0x00f00000u + k, mac);
		ck_assert_int_eq(guest_speaks(s, p > 0 ? n - 1 : 1, mac), 0);
		sim_run(s, 1000);
	}
	cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
	for (i = 0; i < n; i++)
		c1 += stat_of(s->nodes[i].r, "routes_computed");
	if (p > 0) {
		per_node(s, 0, p, 1, &x1);
		per_node(s, p, n, 1, &l1);
		fprintf(stderr, "check_routing: one record at %u nodes: "
		    "%.3f ms of CPU per proxy, %.3f per leaf (%.2f and %.2f "
		    "path computations per record)\n", n,
		    (x1.cpu_ms - x0.cpu_ms) / rounds,
		    (l1.cpu_ms - l0.cpu_ms) / rounds,
		    (x1.computed - x0.computed) / rounds,
		    (l1.computed - l0.computed) / rounds);
		return;
	}
	fprintf(stderr, "check_routing: one record at %u nodes: %.3f ms of "
	    "CPU per node (%.2f path computations per node per record, "
	    "%.3f ms each with the flood)\n", n, cpu * 1e3 / n / rounds,
	    (double)(c1 - c0) / n / rounds,
	    c1 > c0 ? cpu * 1e3 / (double)(c1 - c0) : 0.0);
}

/*
 * The proxies' network (proxies()): convergence, then per proxy and per
 * leaf what was sent and sent to it (bytes with the headers) and the CPU
 * of its events; the whole network's CPU per node counts every leaf as a
 * full one.
 */
static void
scale_proxies(unsigned int n, clock_t c0)
{
	unsigned int	 p, *owner, sample = 10, full = 0, i;
	struct sim	*s;
	struct per	 x, l, all;
	uint64_t	 ms;

	if (getenv("SIM_SAMPLE") != NULL)
		sample = (unsigned int)atoi(getenv("SIM_SAMPLE"));
	ck_assert_ptr_nonnull(owner = calloc(n, sizeof(*owner)));
	s = proxies(n, sample, &p, owner);
	for (i = 0; i < n; i++)
		full += !s->nodes[i].thin;
	ms = converge(s, owner, n, 10 * 1000, 1);
	assert_reach(s, owner, n);
	per_node(s, 0, p, 1, &x);
	per_node(s, p, n, 1, &l);
	per_node(s, p, n, 0, &all);	/* sent and sent to: every leaf */
	fprintf(stderr, "check_routing: %u nodes (%u proxies in a full mesh, "
	    "%u leaves, %u nodes full) converged in %llu ms (simulated); "
	    "per proxy: %.0f msgs %.0f bytes sent, %.0f msgs %.0f bytes "
	    "received, %.1f ms CPU; per leaf: %.0f msgs %.0f bytes sent, "
	    "%.0f msgs %.0f bytes received, %.1f ms CPU; per node: %.1f ms CPU; "
	    "%.2f s of CPU in all, peak RSS %ld MiB\n",
	    n, p, n - p, full, (unsigned long long)ms, x.msgs_out, x.bytes_out,
	    x.msgs_in, x.bytes_in, x.cpu_ms, all.msgs_out, all.bytes_out,
	    all.msgs_in, all.bytes_in, l.cpu_ms,
	    (x.cpu_ms * p + l.cpu_ms * (n - p)) / n,
	    (double)(clock() - c0) / CLOCKS_PER_SEC, peak_mib());
	per_record(s, n, p);
	ck_assert_uint_lt(ms, 10 * 1000);
	sim_free(s);
	free(owner);
}

START_TEST(scale)
{
	unsigned int	 n = getenv("SIM_NODES") ? (unsigned int)atoi(getenv("SIM_NODES")) : 1000, *owner;
	struct sim	*s;
	uint64_t	 ms;
	clock_t		 c0 = clock();

	/* Past a star's size: proxies, most leaves thin (proxies()). */
	if (n > NODE_LINKS_MAX + 1) {
		scale_proxies(n, c0);
		return;
	}
	ck_assert_ptr_nonnull(owner = calloc(n, sizeof(*owner)));
	s = getenv("SIM_HUBS") != NULL ? hubs(n, 50, owner) : star(n, owner);
	ms = converge(s, owner, n, 10 * 1000, 7);
	assert_reach(s, owner, n);
	fprintf(stderr, "check_routing: %u nodes converged in %llu ms "
	    "(simulated), %llu messages, %llu bytes per node, %.2f s of CPU, "
	    "peak RSS %ld MiB\n",
	    n, (unsigned long long)ms, (unsigned long long)s->msgs,
	    (unsigned long long)(s->bytes / n),
	    (double)(clock() - c0) / CLOCKS_PER_SEC, peak_mib());
	ck_assert_uint_lt(ms, 2000);
	/* bench/scale's measure, not the suite's: 3 s of CPU at 1000. */
	if (getenv("SIM_NODES") != NULL)
		per_record(s, n, 0);
	sim_free(s);
	free(owner);
}
END_TEST

/*
 * Shortcuts through NATs: a proxy (n0000) and hosts linked to it only,
 * whose guests talk in pairs over the relay; shortcut.c's candidates, its
 * punches, back-off and bound of dials, as the env's calls show them.
 */

#define SC_FRAME	1500	/* bytes, a frame each way every SC_EVERY_MS */
#define SC_EVERY_MS	50	/* 240 kbit/s, over the threshold */
#define SC_ADAPT	"adapt shortcuts yes threshold 100kbit hold 2"

/* Show adapt's columns. */
enum { COL_PEER, COL_STATE, COL_NEXT_BACKOFF = 8, COL_CAND = 10,
    COL_FAILURE = 11 };

static void
node_stmt(struct sim *s, unsigned int i, const char *line)
{
	struct stmt_error perr;
	struct stmt	 st;
	char		 err[128];

	ck_assert_msg(stmt_parse(line, &st, &perr) == 1, "%s: %s", line,
	    perr.msg);
	ck_assert_msg(routing_apply(s->nodes[i].r, &st, err, sizeof(err)) == 0,
	    "%s: %s", line, err);
}

static void
cand(struct sim *s, unsigned int i, uint8_t kind, const char *addr)
{
	struct node	*n = &s->nodes[i];

	ck_assert_uint_lt(n->ncands, NODE_CANDS_MAX);
	n->cands[n->ncands].kind = kind;
	snprintf(n->cands[n->ncands++].addr, NODE_ADDR_MAX + 1, "%s", addr);
}

/* The proxy and hosts n0001..: each host's guest, shortcuts on. */
static struct sim *
hosts_star(unsigned int hosts)
{
	struct sim	*s = sim_new(hosts + 1, 0);
	uint8_t		 mac[6];
	unsigned int	 i;

	for (i = 1; i <= hosts; i++)
		sim_link(s, 0, i, 5);
	for (i = 0; i <= hosts; i++) {
		mac_of(i, mac);
		guest_speaks(s, i, mac);
		if (i > 0)
			node_stmt(s, i, SC_ADAPT);
	}
	return s;
}

/* The records (and the candidates given since hosts_star()) go round. */
static void
settle(struct sim *s)
{
	unsigned int	 owner[64], i;

	ck_assert_uint_le(s->nn, 64);
	for (i = 0; i < s->nn; i++)
		owner[i] = i;
	sim_run(s, 3000);
	assert_reach(s, owner, s->nn);
}

static void
guest_to(struct sim *s, unsigned int i, unsigned int j)
{
	uint8_t		 eth[SC_FRAME];

	memset(eth, 0, sizeof(eth));
	mac_of(j, eth);
	mac_of(i, eth + 6);
	MUST(routing_guest_frame(s->nodes[i].r, s->nodes[i].guest, eth,
	    sizeof(eth)) == 0);
}

/* Calls of kind node i made (to peer; NULL: any), the k-th (from 0). */
static size_t
calls(const struct sim *s, unsigned int i, enum call_kind kind,
    const char *peer, const struct call **kth, size_t k)
{
	const struct node *n = &s->nodes[i];
	size_t		 c, m = 0;

	if (kth != NULL)
		*kth = NULL;
	for (c = 0; c < n->ncalls; c++)
		if (n->calls[c].kind == kind && (peer == NULL ||
		    strcmp(n->calls[c].node, peer) == 0)) {
			if (m == k && kth != NULL)
				*kth = &n->calls[c];
			m++;
		}
	return m;
}

/*
 * The guests of each pair talk both ways for ms, or until node i has made
 * want calls of kind to peer (want 0: for ms).  The ms it took.
 */
static uint64_t
talk(struct sim *s, const unsigned int (*pairs)[2], size_t npairs,
    uint64_t ms, unsigned int i, enum call_kind kind, const char *peer,
    size_t want)
{
	uint64_t	 t0 = s->now;
	size_t		 k;

	while (s->now - t0 < ms) {
		if (want != 0 && calls(s, i, kind, peer, NULL, 0) >= want)
			return s->now - t0;
		for (k = 0; k < npairs; k++) {
			guest_to(s, pairs[k][0], pairs[k][1]);
			guest_to(s, pairs[k][1], pairs[k][0]);
		}
		sim_run(s, SC_EVERY_MS);
	}
	if (want != 0)
		ck_abort_msg("%s: %zu calls of kind %d to %s in %llu ms, not "
		    "%zu", s->nodes[i].name, calls(s, i, kind, peer, NULL, 0),
		    kind, peer, (unsigned long long)ms, want);
	return ms;
}

/* Column col of peer's row in node i's show adapt ("" if none). */
static const char *
adapt_col(struct sim *s, unsigned int i, const char *peer, unsigned int col,
    char *buf, size_t len)
{
	struct evbuffer	*b = evbuffer_new();
	struct stmt	 st;
	char		*line, *f, *save;
	unsigned int	 c;

	ck_assert_ptr_nonnull(b);
	memset(&st, 0, sizeof(st));
	st.kind = STMT_SHOW;
	st.show = STMT_SHOW_ADAPT;
	routing_show(s->nodes[i].r, &st, b);
	buf[0] = '\0';
	while ((line = evbuffer_readln(b, NULL, EVBUFFER_EOL_LF)) != NULL) {
		f = strtok_r(line, "\t", &save);
		if (f != NULL && strcmp(f, peer) == 0)
			for (c = 1; (f = strtok_r(NULL, "\t", &save)) != NULL;
			    c++)
				if (c == col)
					snprintf(buf, len, "%s", f);
		free(line);
	}
	evbuffer_free(b);
	return buf;
}

static const unsigned int pair12[][2] = { { 1, 2 } };

/*
 * A peer with advertise, host and seen-in candidates is dialled in that
 * order, one failed dial after the other, then from the first again; its
 * wildcards, what peers see of its outgoing connections and of its
 * datagrams (its own address: no NAT) are never dialled, nor punched.
 */
START_TEST(shortcut_candidates)
{
	static const char *const order[] = { "198.51.100.2:7870 (advertise)",
	    "10.0.2.2:7870 (host)", "203.0.113.2:7870 (seen-in)",
	    "198.51.100.2:7870 (advertise)" };
	struct sim	*s = hosts_star(2);
	const struct call *c, *del;
	char		 buf[ADAPT_WHY_MAX], want[ADAPT_WHY_MAX];
	size_t		 k;

	cand(s, 2, NODE_CAND_HOST, "0.0.0.0:7870");
	cand(s, 2, NODE_CAND_HOST, "10.0.2.2:7870");
	cand(s, 2, NODE_CAND_HOST, "[::]:7870");
	cand(s, 2, NODE_CAND_HOST, "*:7870");
	cand(s, 2, NODE_CAND_SEEN_OUT, "203.0.113.2:51000");
	cand(s, 2, NODE_CAND_SEEN_IN, "203.0.113.2:7870");
	cand(s, 2, NODE_CAND_SEEN_UDP, "10.0.2.2:7870");
	node_stmt(s, 2, "advertise 198.51.100.2:7870");
	settle(s);
	for (k = 0; k < 4; k++) {
		talk(s, pair12, 1, 200000, 1, CALL_LINK, "n0002", k + 1);
		calls(s, 1, CALL_LINK, "n0002", &c, k);
		ck_assert_str_eq(adapt_col(s, 1, "n0002", COL_CAND, buf,
		    sizeof(buf)), order[k]);
		ck_assert_ptr_nonnull(strstr(order[k], c->addr));
		ck_assert_uint_eq(c->port, 0);
		if (k == 0)
			continue;
		/* The one before was taken back after ADAPT_DIAL_MS. */
		calls(s, 1, CALL_DEL, "n0002", &del, k - 1);
		ck_assert_ptr_nonnull(del);
		calls(s, 1, CALL_LINK, "n0002", &c, k - 1);
		ck_assert_uint_ge(del->at - c->at, ADAPT_DIAL_MS);
		ck_assert_uint_le(del->at - c->at, ADAPT_DIAL_MS +
		    ROUTING_TICK_MS);
		/* show adapt says why, in words, with the env's SYNs. */
		snprintf(want, sizeof(want), "no answer from %s after %u tries: "
		    "a symmetric NAT or a firewall on one side", c->addr,
		    s->nodes[1].syn_tries);
		ck_assert_str_eq(adapt_col(s, 1, "n0002", COL_FAILURE, buf,
		    sizeof(buf)), want);
	}
	ck_assert_uint_eq(s->nodes[1].syn_tries, 3);
	/* The peer dials nothing, no one punches. */
	ck_assert_uint_eq(calls(s, 2, CALL_LINK, NULL, NULL, 0), 0);
	ck_assert_uint_eq(calls(s, 1, CALL_PUNCH, NULL, NULL, 0), 0);
	ck_assert_uint_eq(calls(s, 2, CALL_PUNCH, NULL, NULL, 0), 0);
	sim_free(s);
}
END_TEST

/* A node of the version before candidates: its addresses, but wildcards. */
START_TEST(shortcut_old_format)
{
	struct sim	*s = hosts_star(2);
	const struct call *c;
	char		 buf[ADAPT_CAND_MAX];

	s->nodes[2].old_format = 1;
	cand(s, 2, NODE_CAND_HOST, "0.0.0.0:7870");
	cand(s, 2, NODE_CAND_SEEN_UDP, "203.0.113.2:40002");
	cand(s, 2, NODE_CAND_HOST, "10.0.2.2:7870");
	settle(s);
	talk(s, pair12, 1, 30000, 1, CALL_LINK, "n0002", 1);
	calls(s, 1, CALL_LINK, "n0002", &c, 0);
	ck_assert_str_eq(c->addr, "10.0.2.2:7870");
	ck_assert_uint_eq(c->port, 0);
	ck_assert_str_eq(adapt_col(s, 1, "n0002", COL_CAND, buf, sizeof(buf)),
	    "10.0.2.2:7870 (address)");
	/* Again, after the back-off: the one address there is. */
	talk(s, pair12, 1, 60000, 1, CALL_LINK, "n0002", 2);
	calls(s, 1, CALL_LINK, "n0002", &c, 1);
	ck_assert_str_eq(c->addr, "10.0.2.2:7870");
	ck_assert_uint_eq(calls(s, 2, CALL_PUNCH, NULL, NULL, 0), 0);
	sim_free(s);
}
END_TEST

/* Both hosts behind NATs: each its private host address, its binding. */
static void
both_behind_nats(struct sim *s)
{
	cand(s, 1, NODE_CAND_HOST, "10.0.1.2:7870");
	cand(s, 1, NODE_CAND_SEEN_OUT, "203.0.113.1:51001");
	cand(s, 1, NODE_CAND_SEEN_UDP, "203.0.113.1:40001");
	cand(s, 2, NODE_CAND_HOST, "10.0.2.2:7871");
	cand(s, 2, NODE_CAND_SEEN_OUT, "203.0.113.2:51002");
	cand(s, 2, NODE_CAND_SEEN_UDP, "203.0.113.2:40002");
}

/*
 * Both behind NATs: the node that sorts first dials the peer's binding
 * from its own listener's port, and the peer punches toward the dialler's
 * from its own, by the time the dial goes; a dial that fails moves on to
 * the private address, from any port.  Neither does the other's part.
 */
START_TEST(shortcut_punch)
{
	struct sim	*s = hosts_star(2);
	const struct call *dial, *c;
	char		 buf[ADAPT_CAND_MAX];
	size_t		 k, n;

	both_behind_nats(s);
	settle(s);
	talk(s, pair12, 1, 30000, 1, CALL_LINK, "n0002", 1);
	calls(s, 1, CALL_LINK, "n0002", &dial, 0);
	ck_assert_str_eq(dial->addr, "203.0.113.2:40002");
	ck_assert_uint_eq(dial->port, 7870);
	ck_assert_str_eq(adapt_col(s, 1, "n0002", COL_CAND, buf, sizeof(buf)),
	    "203.0.113.2:40002 (seen-udp)");
	n = calls(s, 2, CALL_PUNCH, NULL, &c, 0);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_le(c->at, dial->at + ROUTING_TICK_MS);
	for (k = 0; k < n; k++) {
		calls(s, 2, CALL_PUNCH, NULL, &c, k);
		ck_assert_str_eq(c->node, "n0001");
		ck_assert_str_eq(c->addr, "203.0.113.1:40001");
		ck_assert_uint_eq(c->port, 7871);
	}
	/* No answer: the next candidate, the private one, from any port. */
	talk(s, pair12, 1, 60000, 1, CALL_LINK, "n0002", 2);
	calls(s, 1, CALL_LINK, "n0002", &c, 1);
	ck_assert_str_eq(c->addr, "10.0.2.2:7871");
	ck_assert_uint_eq(c->port, 0);
	/* The binding again after it (the candidates come round). */
	talk(s, pair12, 1, 120000, 1, CALL_LINK, "n0002", 3);
	calls(s, 1, CALL_LINK, "n0002", &c, 2);
	ck_assert_str_eq(c->addr, "203.0.113.2:40002");
	ck_assert_uint_eq(c->port, 7870);
	ck_assert_uint_eq(calls(s, 1, CALL_PUNCH, NULL, NULL, 0), 0);
	ck_assert_uint_eq(calls(s, 2, CALL_LINK, NULL, NULL, 0), 0);
	sim_free(s);
}
END_TEST

/*
 * The punched pair meets: the dialler's shortcut comes up by the binding,
 * the peer takes it as the peer's shortcut, and punches no more; nor once
 * the pair is quiet.
 */
START_TEST(shortcut_punched_up)
{
	struct sim	*s = hosts_star(2);
	const struct call *dial;
	char		 buf[ADAPT_LOG_MAX];
	size_t		 n;

	both_behind_nats(s);
	settle(s);
	talk(s, pair12, 1, 30000, 1, CALL_LINK, "n0002", 1);
	calls(s, 1, CALL_LINK, "n0002", &dial, 0);
	ck_assert_uint_eq(dial->port, 7870);
	sim_link_as(s, 1, 2, 2, 1);
	talk(s, pair12, 1, 3000, 0, CALL_LINK, NULL, 0);
	ck_assert_str_eq(adapt_col(s, 1, "n0002", COL_STATE, buf, sizeof(buf)),
	    "up");
	ck_assert_str_eq(adapt_col(s, 1, "n0002", COL_CAND, buf, sizeof(buf)),
	    "203.0.113.2:40002 (seen-udp)");
	ck_assert_str_eq(adapt_col(s, 2, "n0001", COL_STATE, buf, sizeof(buf)),
	    "peer");
	n = calls(s, 2, CALL_PUNCH, NULL, NULL, 0);
	talk(s, pair12, 1, 20000, 0, CALL_LINK, NULL, 0);
	ck_assert_uint_eq(calls(s, 2, CALL_PUNCH, NULL, NULL, 0), n);
	ck_assert_uint_eq(calls(s, 1, CALL_LINK, NULL, NULL, 0), 1);
	ck_assert_uint_eq(calls(s, 1, CALL_DEL, NULL, NULL, 0), 0);
	sim_free(s);
}
END_TEST

/*
 * Neither or only one of a pair behind a NAT: nobody punches, and every
 * dial goes from any port to a candidate with a listener there.
 */
START_TEST(shortcut_no_punch)
{
	/* 1-2 neither, 2-3 only the peer, 3-4 only the dialler. */
	static const unsigned int pairs[][2] = { { 1, 2 }, { 2, 3 },
	    { 3, 4 } };
	static const char *const first[][2] = { { "n0002", "10.0.2.2:7870" },
	    { "n0003", "10.0.3.2:7870" }, { "n0004", "10.0.4.2:7870" } };
	struct sim	*s = hosts_star(4);
	const struct call *c;
	unsigned int	 i;

	cand(s, 1, NODE_CAND_HOST, "10.0.1.2:7870");
	/* Its datagrams seen from its own address: no NAT. */
	cand(s, 2, NODE_CAND_HOST, "10.0.2.2:7870");
	cand(s, 2, NODE_CAND_SEEN_UDP, "10.0.2.2:7870");
	cand(s, 3, NODE_CAND_HOST, "10.0.3.2:7870");
	cand(s, 3, NODE_CAND_SEEN_UDP, "203.0.113.3:40003");
	cand(s, 4, NODE_CAND_HOST, "10.0.4.2:7870");
	settle(s);
	talk(s, pairs, 3, 30000, 3, CALL_LINK, "n0004", 1);
	talk(s, pairs, 3, 5000, 0, CALL_LINK, NULL, 0);
	for (i = 0; i < 3; i++) {
		calls(s, pairs[i][0], CALL_LINK, first[i][0], &c, 0);
		ck_assert_ptr_nonnull(c);
		ck_assert_str_eq(c->addr, first[i][1]);
		ck_assert_uint_eq(c->port, 0);
	}
	for (i = 1; i <= 4; i++)
		ck_assert_uint_eq(calls(s, i, CALL_PUNCH, NULL, NULL, 0), 0);
	ck_assert_uint_eq(calls(s, 4, CALL_LINK, NULL, NULL, 0), 0);
	sim_free(s);
}
END_TEST

/*
 * A dial that never answers backs off ADAPT_BACKOFF_MIN, doubling up to
 * ADAPT_BACKOFF_MAX: each next dial comes that long after the dial
 * timed out, give or take the rounds of the hold.
 */
START_TEST(shortcut_backoff)
{
	struct sim	*s = hosts_star(2);
	const struct call *c, *prev, *del;
	uint64_t	 backoff = ADAPT_BACKOFF_MIN, gap;
	char		 buf[32];
	size_t		 k;

	cand(s, 2, NODE_CAND_HOST, "10.0.2.2:7870");
	settle(s);
	talk(s, pair12, 1, 30000, 1, CALL_LINK, "n0002", 1);
	for (k = 1; k < 9; k++) {
		talk(s, pair12, 1, backoff + 30000, 1, CALL_LINK, "n0002",
		    k + 1);
		calls(s, 1, CALL_LINK, "n0002", &prev, k - 1);
		calls(s, 1, CALL_DEL, "n0002", &del, k - 1);
		calls(s, 1, CALL_LINK, "n0002", &c, k);
		ck_assert_str_eq(c->addr, "10.0.2.2:7870");
		ck_assert_uint_ge(del->at - prev->at, ADAPT_DIAL_MS);
		ck_assert_uint_le(del->at - prev->at, ADAPT_DIAL_MS +
		    ROUTING_TICK_MS);
		/* The back-off, then the hold (2 s) and its rounds. */
		gap = c->at - del->at;
		ck_assert_msg(gap >= backoff + 2000 && gap <= backoff + 4000,
		    "dial %zu: %llu ms after the failure, back-off %llu ms", k,
		    (unsigned long long)gap, (unsigned long long)backoff);
		backoff = backoff * 2 > ADAPT_BACKOFF_MAX ? ADAPT_BACKOFF_MAX :
		    backoff * 2;
		/* show adapt: the back-off after this dial fails. */
		ck_assert_uint_eq(strtoull(adapt_col(s, 1, "n0002",
		    COL_NEXT_BACKOFF, buf, sizeof(buf)), NULL, 10),
		    backoff / 1000);
	}
	ck_assert_uint_eq(backoff, ADAPT_BACKOFF_MAX);
	sim_free(s);
}
END_TEST

/*
 * Six nodes name the one address: whatever node names it, at most
 * SHORTCUT_TARGET_DIALS connections go there in any SHORTCUT_TARGET_MS,
 * and show adapt says why the others were not dialled.
 */
START_TEST(shortcut_dials_bounded)
{
	static const unsigned int pairs[][2] = { { 1, 2 }, { 1, 3 },
	    { 1, 4 }, { 1, 5 }, { 1, 6 }, { 1, 7 } };
	struct sim	*s = hosts_star(7);
	const struct call *c, *later;
	char		 buf[ADAPT_WHY_MAX], peer[16];
	unsigned int	 i, bounded = 0;
	size_t		 k, n;

	for (i = 2; i <= 7; i++)
		cand(s, i, NODE_CAND_HOST, "198.51.100.7:7870");
	settle(s);
	talk(s, pairs, 6, 200000, 0, CALL_LINK, NULL, 0);
	n = calls(s, 1, CALL_LINK, NULL, NULL, 0);
	/* Three at once, then three a minute at most. */
	ck_assert_uint_ge(n, 3 * SHORTCUT_TARGET_DIALS);
	for (k = 0; k + SHORTCUT_TARGET_DIALS < n; k++) {
		calls(s, 1, CALL_LINK, NULL, &c, k);
		calls(s, 1, CALL_LINK, NULL, &later, k +
		    SHORTCUT_TARGET_DIALS);
		ck_assert_str_eq(c->addr, "198.51.100.7:7870");
		ck_assert_uint_ge(later->at - c->at, SHORTCUT_TARGET_MS);
	}
	ck_assert_uint_gt(stat_of(s->nodes[1].r, "adapt_dials_bounded"), 0);
	for (i = 2; i <= 7; i++) {
		snprintf(peer, sizeof(peer), NAME_FMT, i);
		bounded += strcmp(adapt_col(s, 1, peer, COL_FAILURE, buf,
		    sizeof(buf)), "not dialled: 3 connections went to "
		    "198.51.100.7:7870 within 60 s") == 0;
	}
	ck_assert_uint_gt(bounded, 0);
	sim_free(s);
}
END_TEST

int
main(void)
{
	Suite	*su = suite_create("routing");
	TCase	*tc = tcase_create("routing");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, converges);
	tcase_add_test(tc, guest_before_links);
	tcase_add_test(tc, migration);
	tcase_add_test(tc, hostile_twin);
	tcase_add_test(tc, flapping);
	tcase_add_test(tc, cut_and_heal);
	tcase_add_test(tc, back_at_once);
	tcase_add_test(tc, partition_and_heal);
	tcase_add_test(tc, full_takes_the_living);
	tcase_add_test(tc, restart_lower_seq);
	tcase_add_test(tc, lost_and_duplicated);
	tcase_add_test(tc, segment_forwarder);
	tcase_add_test(tc, relay_no_transit);
	tcase_add_test(tc, relay_no_line);
	tcase_add_test(tc, relay_no_ring);
	suite_add_tcase(su, tc);
	tc = tcase_create("shortcuts");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, shortcut_candidates);
	tcase_add_test(tc, shortcut_old_format);
	tcase_add_test(tc, shortcut_punch);
	tcase_add_test(tc, shortcut_punched_up);
	tcase_add_test(tc, shortcut_no_punch);
	tcase_add_test(tc, shortcut_backoff);
	tcase_add_test(tc, shortcut_dials_bounded);
	suite_add_tcase(su, tc);
	/* Alone, bench/scale runs it at other sizes (SIM_NODES). */
	tc = tcase_create("scale");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, scale);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
