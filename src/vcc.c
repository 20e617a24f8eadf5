/*
 * vCC: per-flow TCP tracking and header translation at the guest's edge.
 *
 * A flow is keyed by interface and 5-tuple, seen from the guest: (guest
 * address, guest port, remote address, remote port), so both directions of a
 * connection find one entry.  Entries start at a SYN, or at a data segment
 * of a connection not in the table (one opened before, or evicted), and end
 * on FIN both ways, RST, or an idle timeout.
 *
 * A connection picked up without its SYN lacks what only the handshake
 * says.  Window scales: each is estimated from below, as the smallest scale
 * under which what the sender has in flight fits the window its peer
 * advertised, so a window lowered with it is never below the target (the
 * flow is throttled less than it should be until the estimate reaches the
 * real scale, never more).  MSS: the 536-byte default.  Timestamps: in use
 * if the segment carries them.  ECN: the guest's own data ECT-marked means
 * it does ECN itself (native); the remote's data ECT-marked, or ECE on its
 * ACKs, means ECN was negotiated, and if the guest's data is not ECT (twice:
 * a retransmission is never ECT) and the interface has ecn virtual, the flow
 * is virtual-ECN again.  A connection whose remote only ever sends pure ACKs
 * cannot be told ECN-capable until it echoes ECE, so it stays without.
 *
 * The table is bounded, and so is each interface's part of it: an
 * interface with a quarter of the table (VCC_IF_SHARE) replaces its own
 * least recently active entry, and a full table takes the least recently
 * active entry of the interface that holds the most.  One guest's SYN flood
 * (or a flood of SYNs toward it) churns that guest's entries only.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <event2/buffer.h>

#include "hash.h"
#include "pkt.h"
#include "showwin.h"
#include "vcc.h"

#define SEQ_LT(a, b)	((int32_t)((a) - (b)) < 0)
#define SEQ_LEQ(a, b)	((int32_t)((a) - (b)) <= 0)
#define SEQ_GT(a, b)	((int32_t)((a) - (b)) > 0)
#define SEQ_GEQ(a, b)	((int32_t)((a) - (b)) >= 0)

#define MSS_DEFAULT		536
/* Shares are recomputed this often at most (and when a flow starts). */
#define RECALC_US		1000
/* A flow without data in flight stays active this long (or 2 srtt). */
#define ACTIVE_MIN_US		10000

enum vcc_state {
	ST_SYN_SENT = 0,	/* the guest sent a SYN */
	ST_SYN_RECEIVED,	/* the guest got a SYN */
	ST_ESTABLISHED,
	ST_CLOSING,		/* one FIN seen */
};

static const char *const state_names[] = {
	"syn-sent", "syn-received", "established", "closing",
};

enum vcc_ecn {
	ECN_OFF = 0,
	ECN_UNKNOWN,		/* picked up: not known yet, treated as off */
	ECN_GUEST_ASKED,	/* the guest's own SYN asked for ECN */
	ECN_VIRTUAL_ASKED,	/* we asked for it on the guest's behalf */
	ECN_REMOTE_ASKED,	/* the remote's SYN asked */
	ECN_NATIVE,		/* the guest does ECN itself: hands off */
	ECN_VIRTUAL,		/* negotiated on the wire, hidden from the guest */
};

static const char *const ecn_names[] = {
	"off", "unknown", "asked", "asked", "asked", "native", "virtual",
};

struct vcc_key {
	uint8_t		 family;
	uint8_t		 gaddr[16], raddr[16];
	uint16_t	 gport, rport;
};

struct vcc_if;
struct vcc_class;

struct vcc_flow {
	LIST_ENTRY(vcc_flow)	 hash;
	TAILQ_ENTRY(vcc_flow)	 lru;		/* oldest activity first */
	TAILQ_ENTRY(vcc_flow)	 ifq;		/* the same, per interface */
	struct vcc_if		*vif;
	struct vcc_class	*cls;
	struct vcc_key		 key;
	uint32_t		 h;

	enum vcc_state		 state;
	int			 guest_opened;
	int			 fin_guest, fin_remote;
	int			 ws_guest_set, ws_remote_set;
	uint8_t			 ws_guest, ws_remote;	/* 0 unless both set */
	uint16_t		 mss_guest, mss_remote;
	int			 ts;			/* both sent timestamps */

	enum vcc_ecn		 ecn;
	int			 cwr_pending;	/* CWR on the next new data */
	int			 ece_pending;	/* ECE on ACKs until CWR */

	/* What the guest sends, and what it receives. */
	uint32_t		 g_una, g_nxt;
	uint32_t		 r_nxt;
	uint64_t		 rwnd;		/* remote's window, bytes */
	int			 rwnd_set;

	/* srtt from timestamps, or from one timed segment per RTT. */
	uint64_t		 srtt_us;
	int			 ts_probe;
	uint32_t		 ts_probe_val, ts_last_val;
	uint64_t		 ts_probe_us;
	int			 seq_probe;
	uint32_t		 seq_probe_end;
	uint64_t		 seq_probe_us;

	/* virtual-ECN's congestion window, as a target receive window. */
	uint64_t		 vtarget;	/* 0: no limit yet */
	uint64_t		 grow_acc;
	uint64_t		 last_cut_us;
	uint32_t		 cut_seq;
	int			 cut_done;

	int			 active;
	uint64_t		 last_us, last_data_us;
	uint64_t		 ect, ce, ece, cuts, lowered;

	/* Picked up without the SYN (see above). */
	int			 midstream;
	int			 seen_guest, seen_remote;	/* each way */
	int			 remote_ecn;	/* its data ECT, or ECE seen */
	int			 guest_plain;	/* guest data not ECT, times */
	int			 rwin_set, gwin_set;
	uint16_t		 rwin_raw, gwin_raw;	/* last raw windows */
	uint32_t		 r_una;		/* last ACK from the guest */
};

TAILQ_HEAD(vcc_flow_list, vcc_flow);
LIST_HEAD(vcc_bucket, vcc_flow);

struct vcc_if {
	TAILQ_ENTRY(vcc_if)	 entry;
	char			 name[STMT_NAME_MAX + 1];
	int			 ecn_virtual;
	uint64_t		 share;
	struct vcc_flow_list	 flows;
	size_t			 nflows, nactive;
	uint64_t		 active_w;
	uint64_t		 recalc_us;
	int			 dirty;
};

struct vcc_class {
	TAILQ_ENTRY(vcc_class)	 entry;
	char			 name[STMT_NAME_MAX + 1];
	struct stmt_vclass	 vc;
};

struct vcc {
	struct vcc_bucket	*buckets;
	size_t			 nbuckets;	/* a power of two */
	size_t			 max_flows, nflows;
	uint32_t		 seed;
	struct vcc_flow_list	 lru;
	TAILQ_HEAD(, vcc_if)	 ifs;
	TAILQ_HEAD(, vcc_class)	 classes;
	size_t			 nclasses;
	struct vcc_stats	 st;
};

/* The changes a segment gets, applied together at the end. */
struct mods {
	int		 flags_set, ecn_set, win_set;
	uint8_t		 flags, ecn;
	uint16_t	 win;
};

/* A TCP segment on its way through vcc_frame(). */
struct seg {
	struct pkt		 p;
	struct pkt_tcpopt	 o;		/* read only where needed */
	enum vcc_dir		 dir;
	struct vcc_key		 k;
	uint32_t		 h;
	int			 syn, synack;
	int			 pickup;	/* may pick up its connection */
};

struct vcc *
vcc_new(size_t max_flows, uint64_t seed)
{
	struct vcc	*v;
	size_t		 i, n = 16;

	if (max_flows == 0)
		max_flows = VCC_FLOWS_DEFAULT;
	while (n < max_flows && n < ((size_t)1 << 24))
		n <<= 1;
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return NULL;
	if ((v->buckets = calloc(n, sizeof(*v->buckets))) == NULL) {
		free(v);
		return NULL;
	}
	for (i = 0; i < n; i++)
		LIST_INIT(&v->buckets[i]);
	v->nbuckets = n;
	v->max_flows = max_flows;
	v->seed = (uint32_t)(seed ^ (seed >> 32));
	TAILQ_INIT(&v->lru);
	TAILQ_INIT(&v->ifs);
	TAILQ_INIT(&v->classes);
	return v;
}

static void
flow_unlink(struct vcc *v, struct vcc_flow *f)
{
	LIST_REMOVE(f, hash);
	TAILQ_REMOVE(&v->lru, f, lru);
	TAILQ_REMOVE(&f->vif->flows, f, ifq);
	f->vif->nflows--;
	f->vif->dirty = 1;
	v->nflows--;
}

void
vcc_free(struct vcc *v)
{
	struct vcc_flow		*f;
	struct vcc_if		*vif;
	struct vcc_class	*c;

	if (v == NULL)
		return;
	while ((f = TAILQ_FIRST(&v->lru)) != NULL) {
		flow_unlink(v, f);
		free(f);
	}
	while ((vif = TAILQ_FIRST(&v->ifs)) != NULL) {
		TAILQ_REMOVE(&v->ifs, vif, entry);
		free(vif);
	}
	while ((c = TAILQ_FIRST(&v->classes)) != NULL) {
		TAILQ_REMOVE(&v->classes, c, entry);
		free(c);
	}
	free(v->buckets);
	free(v);
}

/* Interfaces */

static struct vcc_if *
vif_find(struct vcc *v, const char *name)
{
	struct vcc_if	*vif;

	TAILQ_FOREACH(vif, &v->ifs, entry)
		if (strcmp(vif->name, name) == 0)
			return vif;
	return NULL;
}

static struct vcc_if *
vif_get(struct vcc *v, const char *name)
{
	struct vcc_if	*vif;

	if ((vif = vif_find(v, name)) != NULL)
		return vif;
	if ((vif = calloc(1, sizeof(*vif))) == NULL)
		return NULL;
	snprintf(vif->name, sizeof(vif->name), "%s", name);
	TAILQ_INIT(&vif->flows);
	TAILQ_INSERT_TAIL(&v->ifs, vif, entry);
	return vif;
}

/* An interface record lives while it has a policy or a flow. */
static void
vif_release(struct vcc *v, struct vcc_if *vif)
{
	if (vif->ecn_virtual || vif->share != 0 || vif->nflows > 0)
		return;
	TAILQ_REMOVE(&v->ifs, vif, entry);
	free(vif);
}

/* Classes */

static unsigned int
class_weight(const struct vcc_class *c)
{
	if (c == NULL || !(c->vc.set & STMT_VCLASS_WEIGHT))
		return 1;
	return c->vc.weight;
}

static int
class_matches(const struct vcc_class *c, const struct vcc_flow *f)
{
	const struct stmt_vclass *vc = &c->vc;
	const uint8_t	*src, *dst;
	size_t		 i;
	int		 hit, family;

	if ((vc->set & STMT_VCLASS_IFACE) &&
	    strcmp(vc->iface, f->vif->name) != 0)
		return 0;
	if (vc->set & STMT_VCLASS_PORTS) {
		for (hit = 0, i = 0; i < vc->nports && !hit; i++)
			hit = vc->ports[i] == f->key.gport ||
			    vc->ports[i] == f->key.rport;
		if (!hit)
			return 0;
	}
	/* src and dst as the connection was opened. */
	src = f->guest_opened ? f->key.gaddr : f->key.raddr;
	dst = f->guest_opened ? f->key.raddr : f->key.gaddr;
	family = f->key.family == 4 ? AF_INET : AF_INET6;
	if ((vc->set & STMT_VCLASS_SRC) &&
	    !stmt_cidr_match(&vc->src, family, src))
		return 0;
	if ((vc->set & STMT_VCLASS_DST) &&
	    !stmt_cidr_match(&vc->dst, family, dst))
		return 0;
	return 1;
}

static void
flow_classify(struct vcc *v, struct vcc_flow *f)
{
	struct vcc_class	*c;

	f->cls = NULL;
	TAILQ_FOREACH(c, &v->classes, entry)
		if (class_matches(c, f)) {
			f->cls = c;
			break;
		}
}

static void
reclassify(struct vcc *v)
{
	struct vcc_flow	*f;
	struct vcc_if	*vif;

	TAILQ_FOREACH(f, &v->lru, lru)
		flow_classify(v, f);
	/* Weights may have changed: every share is stale. */
	TAILQ_FOREACH(vif, &v->ifs, entry)
		vif->dirty = 1;
}

/* Policies */

static int
apply_class(struct vcc *v, const struct stmt *st, char *err, size_t errlen)
{
	struct vcc_class	*c;
	const struct stmt_vclass *in = &st->vclass;

	TAILQ_FOREACH(c, &v->classes, entry)
		if (strcmp(c->name, st->name) == 0)
			break;
	if (st->op == STMT_OP_DEL) {
		if (c == NULL) {
			snprintf(err, errlen, "no vcc class %s", st->name);
			return -1;
		}
		TAILQ_REMOVE(&v->classes, c, entry);
		v->nclasses--;
		free(c);
		reclassify(v);
		return 0;
	}
	if (c == NULL) {
		if (v->nclasses >= VCC_CLASSES_MAX) {
			snprintf(err, errlen, "vcc class %s: too many classes "
			    "(%d)", st->name, VCC_CLASSES_MAX);
			return -1;
		}
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			snprintf(err, errlen, "vcc class %s: out of memory",
			    st->name);
			return -1;
		}
		snprintf(c->name, sizeof(c->name), "%s", st->name);
		TAILQ_INSERT_TAIL(&v->classes, c, entry);
		v->nclasses++;
	}
	/* What the statement names replaces; the rest stays. */
	if (in->set & STMT_VCLASS_PORTS) {
		memcpy(c->vc.ports, in->ports, sizeof(c->vc.ports));
		c->vc.nports = in->nports;
	}
	if (in->set & STMT_VCLASS_SRC)
		c->vc.src = in->src;
	if (in->set & STMT_VCLASS_DST)
		c->vc.dst = in->dst;
	if (in->set & STMT_VCLASS_IFACE)
		memcpy(c->vc.iface, in->iface, sizeof(c->vc.iface));
	if (in->set & STMT_VCLASS_WEIGHT)
		c->vc.weight = in->weight;
	if (in->set & STMT_VCLASS_RATE)
		c->vc.rate = in->rate;
	c->vc.set |= in->set;
	reclassify(v);
	return 0;
}

int
vcc_apply(struct vcc *v, const struct stmt *st, char *err, size_t errlen)
{
	struct vcc_if	*vif;

	if (st->kind != STMT_VCC) {
		snprintf(err, errlen, "not a vcc statement");
		return -1;
	}
	if (st->vcc == STMT_VCC_CLASS)
		return apply_class(v, st, err, errlen);
	if (st->op == STMT_OP_DEL) {
		vif = vif_find(v, st->name);
		if (st->vcc == STMT_VCC_ECN) {
			if (vif == NULL || !vif->ecn_virtual) {
				snprintf(err, errlen, "no vcc ecn policy on %s",
				    st->name);
				return -1;
			}
			/* Flows that negotiated ECN keep their translation. */
			vif->ecn_virtual = 0;
		} else {
			if (vif == NULL || vif->share == 0) {
				snprintf(err, errlen, "no vcc share on %s",
				    st->name);
				return -1;
			}
			vif->share = 0;
		}
		vif->dirty = 1;
		vif_release(v, vif);
		return 0;
	}
	if ((vif = vif_get(v, st->name)) == NULL) {
		snprintf(err, errlen, "vcc %s: out of memory", st->name);
		return -1;
	}
	if (st->vcc == STMT_VCC_ECN)
		vif->ecn_virtual = 1;
	else
		vif->share = st->window;
	vif->dirty = 1;
	return 0;
}

void
vcc_config_foreach(struct vcc *v, void (*cb)(const struct stmt *, void *),
    void *arg)
{
	struct vcc_if		*vif;
	struct vcc_class	*c;
	struct stmt		 st;

	TAILQ_FOREACH(vif, &v->ifs, entry) {
		memset(&st, 0, sizeof(st));
		st.kind = STMT_VCC;
		snprintf(st.name, sizeof(st.name), "%s", vif->name);
		if (vif->ecn_virtual) {
			st.vcc = STMT_VCC_ECN;
			cb(&st, arg);
		}
		if (vif->share != 0) {
			st.vcc = STMT_VCC_SHARE;
			st.window = vif->share;
			cb(&st, arg);
		}
	}
	TAILQ_FOREACH(c, &v->classes, entry) {
		memset(&st, 0, sizeof(st));
		st.kind = STMT_VCC;
		st.vcc = STMT_VCC_CLASS;
		snprintf(st.name, sizeof(st.name), "%s", c->name);
		st.vclass = c->vc;
		cb(&st, arg);
	}
}

/* The flow table */

static uint32_t
key_hash(const struct vcc *v, const struct vcc_if *vif,
    const struct vcc_key *k)
{
	uintptr_t	 ip = (uintptr_t)vif;
	uint8_t		 ipb[sizeof(ip)];
	uint32_t	 h;
	size_t		 i;

	/* Seeded, over the key and the interface (its bytes, low first). */
	for (i = 0; i < sizeof(ip); i++, ip >>= 8)
		ipb[i] = (uint8_t)ip;
	h = hash_fnv1a(HASH_FNV_BASIS ^ v->seed, k, sizeof(*k));
	h = hash_fnv1a(h, ipb, sizeof(ipb));
	return h ^ (h >> 15);
}

static struct vcc_flow *
flow_lookup(struct vcc *v, struct vcc_if *vif, const struct vcc_key *k,
    uint32_t h)
{
	struct vcc_flow	*f;

	LIST_FOREACH(f, &v->buckets[h & (v->nbuckets - 1)], hash)
		if (f->h == h && f->vif == vif &&
		    memcmp(&f->key, k, sizeof(*k)) == 0)
			return f;
	return NULL;
}

static void
flow_end(struct vcc *v, struct vcc_flow *f)
{
	struct vcc_if	*vif = f->vif;

	flow_unlink(v, f);
	free(f);
	vif_release(v, vif);
}

static size_t
vif_max_flows(const struct vcc *v)
{
	return v->max_flows / VCC_IF_SHARE > 0 ? v->max_flows / VCC_IF_SHARE :
	    1;
}

/*
 * The interface with the most entries (the first of those tied): a scan,
 * only for an interface below its share while the table is full.
 */
static struct vcc_if *
vif_fattest(struct vcc *v)
{
	struct vcc_if	*vif, *best = NULL;

	TAILQ_FOREACH(vif, &v->ifs, entry)
		if (best == NULL || vif->nflows > best->nflows)
			best = vif;
	return best;
}

/* Room for one more entry of vif (see the top of the file). */
static void
flow_make_room(struct vcc *v, struct vcc_if *vif)
{
	struct vcc_if	*from;
	struct vcc_flow	*f;

	if (vif->nflows >= vif_max_flows(v)) {
		from = vif;
		v->st.over_share++;
	} else if (v->nflows >= v->max_flows) {
		from = vif_fattest(v);
		v->st.evictions++;
	} else
		return;
	if ((f = TAILQ_FIRST(&from->flows)) == NULL)
		return;
	flow_unlink(v, f);
	/* The interface keeps its record: vif is in use by the caller. */
	if (from != vif)
		vif_release(v, from);
	free(f);
}

static struct vcc_flow *
flow_new(struct vcc *v, struct vcc_if *vif, const struct vcc_key *k,
    uint32_t h, uint64_t now)
{
	struct vcc_flow	*f;

	flow_make_room(v, vif);
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->key = *k;
	f->h = h;
	f->vif = vif;
	f->last_us = now;
	LIST_INSERT_HEAD(&v->buckets[h & (v->nbuckets - 1)], f, hash);
	TAILQ_INSERT_TAIL(&v->lru, f, lru);
	TAILQ_INSERT_TAIL(&vif->flows, f, ifq);
	vif->nflows++;
	vif->dirty = 1;
	v->nflows++;
	v->st.flows_created++;
	return f;
}

void
vcc_expire(struct vcc *v, uint64_t now)
{
	struct vcc_flow	*f, *next;
	uint64_t	 idle;

	/* Oldest first; nothing younger than the shorter timeout can go. */
	for (f = TAILQ_FIRST(&v->lru); f != NULL; f = next) {
		next = TAILQ_NEXT(f, lru);
		idle = now - f->last_us;
		if (idle < VCC_LINGER_US)
			break;
		/* A pick-up never answered (a stray segment) is half-open. */
		if (f->state == ST_ESTABLISHED && idle < VCC_IDLE_US &&
		    (!f->midstream || (f->seen_guest && f->seen_remote)))
			continue;
		v->st.expired++;
		flow_end(v, f);
	}
}

/* Shares */

static uint64_t
smss(const struct vcc_flow *f)
{
	return f->mss_remote != 0 ? f->mss_remote : MSS_DEFAULT;
}

static int
flow_is_active(const struct vcc_flow *f, uint64_t now)
{
	uint64_t	 hold = 2 * f->srtt_us;

	if (hold < ACTIVE_MIN_US)
		hold = ACTIVE_MIN_US;
	if (f->g_nxt != f->g_una)
		return 1;
	return f->last_data_us != 0 && now - f->last_data_us < hold;
}

static void
vif_recalc(struct vcc_if *vif, uint64_t now)
{
	struct vcc_flow	*f;

	if (!vif->dirty && now - vif->recalc_us < RECALC_US)
		return;
	vif->active_w = 0;
	vif->nactive = 0;
	TAILQ_FOREACH(f, &vif->flows, ifq) {
		f->active = flow_is_active(f, now);
		if (f->active) {
			vif->active_w += class_weight(f->cls);
			vif->nactive++;
		}
	}
	vif->recalc_us = now;
	vif->dirty = 0;
}

/* The window the policies allow the flow (both directions); 0: no limit. */
static uint64_t
policy_target(const struct vcc_flow *f)
{
	const struct vcc_if	*vif = f->vif;
	uint64_t		 t = 0, w, floor = 2 * smss(f), r;

	if (vif->share != 0) {
		w = class_weight(f->cls);
		/* An idle flow is offered what it would get if it started. */
		t = vif->share * w / (vif->active_w + (f->active ? 0 : w));
		if (t < floor)
			t = floor;
	}
	if (f->cls != NULL && (f->cls->vc.set & STMT_VCLASS_RATE) &&
	    f->cls->vc.rate != 0 && f->srtt_us != 0) {
		r = f->cls->vc.rate / 8 * f->srtt_us / 1000000;
		if (r < floor)
			r = floor;
		if (t == 0 || r < t)
			t = r;
	}
	return t;
}

static uint64_t
min_target(uint64_t a, uint64_t b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

/*
 * The window field that advertises at most target bytes in scale ws, or
 * 0 when the field is at or below it already: never raised.  Rounded up, so
 * a target under one scale unit does not close the window.
 */
static int
lower_win(uint16_t raw, unsigned int ws, uint64_t target, uint16_t *out)
{
	uint64_t	 w;

	if (target == 0 || target >= (uint64_t)raw << ws)
		return 0;
	w = (target + ((1ULL << ws) - 1)) >> ws;
	if (w >= raw)
		return 0;
	*out = (uint16_t)w;
	return 1;
}

/* RTT */

static void
rtt_sample(struct vcc_flow *f, uint64_t sample)
{
	if (sample == 0)
		sample = 1;
	if (f->srtt_us == 0)
		f->srtt_us = sample;
	else
		f->srtt_us = (7 * f->srtt_us + sample) / 8;
}

/* Segments */

static void
mods_flags(struct mods *m, const struct pkt *p, uint8_t set, uint8_t clear)
{
	uint8_t	 cur = m->flags_set ? m->flags : p->flags;

	m->flags = (uint8_t)((cur | set) & ~clear);
	m->flags_set = m->flags != p->flags;
}

static void
on_syn(struct vcc *v, struct vcc_flow *f, const struct pkt *p,
    const struct pkt_tcpopt *o, enum vcc_dir dir, struct mods *m)
{
	int	 ecn_syn = (p->flags & (TCP_ECE | TCP_CWR)) ==
	    (TCP_ECE | TCP_CWR);

	if (dir == VCC_FROM_GUEST) {
		f->guest_opened = 1;
		f->state = ST_SYN_SENT;
		f->ws_guest_set = o->wscale_set;
		f->ws_guest = o->wscale;
		f->mss_guest = o->mss;
		f->ts = o->ts_set;
		f->g_una = p->seq;
		f->g_nxt = p->seq + 1;
		if (ecn_syn)
			f->ecn = ECN_GUEST_ASKED;
		else if (f->vif->ecn_virtual) {
			f->ecn = ECN_VIRTUAL_ASKED;
			mods_flags(m, p, TCP_ECE | TCP_CWR, 0);
			v->st.syn_ecn++;
		} else
			f->ecn = ECN_OFF;
	} else {
		f->guest_opened = 0;
		f->state = ST_SYN_RECEIVED;
		f->ws_remote_set = o->wscale_set;
		f->ws_remote = o->wscale;
		f->mss_remote = o->mss;
		f->ts = o->ts_set;
		f->r_nxt = p->seq + 1;
		f->ecn = ecn_syn ? ECN_REMOTE_ASKED : ECN_OFF;
	}
}

static void
on_synack(struct vcc *v, struct vcc_flow *f, const struct pkt *p,
    const struct pkt_tcpopt *o, enum vcc_dir dir, struct mods *m)
{
	int	 ece = (p->flags & (TCP_ECE | TCP_CWR)) == TCP_ECE;

	if (dir == VCC_TO_GUEST && f->guest_opened) {
		if (f->state == ST_SYN_SENT) {
			f->ws_remote_set = o->wscale_set;
			f->ws_remote = o->wscale;
			f->mss_remote = o->mss;
			f->ts = f->ts && o->ts_set;
			f->r_nxt = p->seq + 1;
			if (p->ack == f->g_nxt)
				f->g_una = p->ack;
			f->state = ST_ESTABLISHED;
			if (f->ecn == ECN_GUEST_ASKED)
				f->ecn = ece ? ECN_NATIVE : ECN_OFF;
			else if (f->ecn == ECN_VIRTUAL_ASKED)
				f->ecn = ece ? ECN_VIRTUAL : ECN_OFF;
		}
		/* The guest did not ask: it must not see the answer. */
		if (f->ecn == ECN_VIRTUAL && (p->flags & TCP_ECE)) {
			mods_flags(m, p, 0, TCP_ECE);
			v->st.ece_cleared++;
		}
	} else if (dir == VCC_FROM_GUEST && !f->guest_opened) {
		if (f->state == ST_SYN_RECEIVED) {
			f->ws_guest_set = o->wscale_set;
			f->ws_guest = o->wscale;
			f->mss_guest = o->mss;
			f->ts = f->ts && o->ts_set;
			f->g_una = p->seq;
			f->g_nxt = p->seq + 1;
			f->state = ST_ESTABLISHED;
			if (f->ecn == ECN_REMOTE_ASKED) {
				if (ece)
					f->ecn = ECN_NATIVE;
				else if (f->vif->ecn_virtual)
					f->ecn = ECN_VIRTUAL;
				else
					f->ecn = ECN_OFF;
			}
		}
		if (f->ecn == ECN_VIRTUAL && !(p->flags & TCP_ECE)) {
			mods_flags(m, p, TCP_ECE, TCP_CWR);
			v->st.syn_ecn++;
		}
	} else
		return;
	/* RFC 7323: scaling holds only when both sides offered it. */
	if (f->state == ST_ESTABLISHED && !(f->ws_guest_set &&
	    f->ws_remote_set))
		f->ws_guest = f->ws_remote = 0;
}

/*
 * The smallest scale (0..14) under which a raw window advertised from
 * una covers a sender's data up to end: a lower bound of the real one.
 */
static void
ws_raise(uint8_t *ws, uint16_t raw, uint32_t una, uint32_t end)
{
	uint32_t	 need = end - una;

	if (SEQ_LEQ(end, una))
		return;
	while (*ws < 14 && ((uint64_t)raw << *ws) < need)
		(*ws)++;
}

/* A picked-up flow's guest segment: scale bound, ECN evidence. */
static void
pickup_from_guest(struct vcc_flow *f, const struct pkt *p, uint32_t end,
    int newdata)
{
	if (newdata && f->rwin_set)
		ws_raise(&f->ws_remote, f->rwin_raw, f->g_una, end);
	if (p->flags & TCP_ACK) {
		f->gwin_raw = p->win;
		f->gwin_set = 1;
		f->r_una = p->ack;
	}
	if (f->ecn != ECN_UNKNOWN || !newdata)
		return;
	if (p->ecn != PKT_ECN_NOT_ECT)
		f->ecn = ECN_NATIVE;
	else if (++f->guest_plain >= 2 && f->remote_ecn &&
	    f->vif->ecn_virtual)
		f->ecn = ECN_VIRTUAL;
}

/* A picked-up flow's remote segment: scale bound, ECN evidence. */
static void
pickup_to_guest(struct vcc_flow *f, const struct pkt *p, uint32_t end)
{
	if (p->payload > 0 && f->gwin_set && SEQ_GT(end, f->r_nxt))
		ws_raise(&f->ws_guest, f->gwin_raw, f->r_una, end);
	if (p->flags & TCP_ACK) {
		f->rwin_raw = p->win;
		f->rwin_set = 1;
	}
	if (f->ecn != ECN_UNKNOWN)
		return;
	if ((p->payload > 0 && p->ecn != PKT_ECN_NOT_ECT) ||
	    (p->flags & (TCP_ACK | TCP_ECE)) == (TCP_ACK | TCP_ECE))
		f->remote_ecn = 1;
	if (f->remote_ecn && f->guest_plain >= 2 && f->vif->ecn_virtual)
		f->ecn = ECN_VIRTUAL;
}

/* A connection not in the table, seen first at segment p going dir. */
static void
flow_pickup(struct vcc *v, struct vcc_flow *f, const struct pkt *p,
    const struct pkt_tcpopt *o, enum vcc_dir dir)
{
	f->midstream = 1;
	f->state = ST_ESTABLISHED;
	/* Who opened it (for classes): the server has the lower port. */
	f->guest_opened = f->key.rport < f->key.gport;
	f->ts = o->ts_set;
	f->ecn = ECN_UNKNOWN;
	if (dir == VCC_FROM_GUEST) {
		f->g_una = f->g_nxt = p->seq;
		f->r_nxt = p->ack;
	} else {
		f->r_nxt = p->seq;
		f->g_una = f->g_nxt = p->ack;
	}
	v->st.picked_up++;
}

/* What the guest sends: data accounting, virtual-ECN marks, RTT probes. */
static void
from_guest(struct vcc *v, struct vcc_flow *f, const struct pkt *p,
    const struct pkt_tcpopt *o, struct mods *m, uint64_t now)
{
	uint32_t	 end = p->seq + (uint32_t)p->payload +
	    ((p->flags & TCP_FIN) ? 1 : 0);
	int		 newdata = p->payload > 0 && SEQ_GT(end, f->g_nxt) &&
	    SEQ_GEQ(p->seq, f->g_nxt);
	int		 virt;

	if (f->midstream)
		pickup_from_guest(f, p, end, newdata);
	virt = f->ecn == ECN_VIRTUAL;
	if (p->payload > 0 || (p->flags & TCP_FIN)) {
		if (SEQ_LT(p->seq, f->g_nxt) && f->seq_probe &&
		    SEQ_LT(p->seq, f->seq_probe_end))
			f->seq_probe = 0;	/* Karn: a retransmission */
		if (SEQ_GT(end, f->g_nxt)) {
			if (f->g_nxt == f->g_una)
				f->vif->dirty |= !f->active;
			f->g_nxt = end;
		}
	}
	if (p->payload > 0) {
		f->last_data_us = now;
		if (!f->active)
			f->vif->dirty = 1;
		if (newdata && !f->ts && !f->seq_probe) {
			f->seq_probe = 1;
			f->seq_probe_end = end;
			f->seq_probe_us = now;
		}
	}
	if (f->ts && o->ts_set && o->tsval != f->ts_last_val) {
		f->ts_last_val = o->tsval;
		if (!f->ts_probe) {
			f->ts_probe = 1;
			f->ts_probe_val = o->tsval;
			f->ts_probe_us = now;
		}
	}
	if (newdata && p->ecn != PKT_ECN_NOT_ECT)
		f->ect++;
	if (!virt)
		return;
	if (newdata) {
		if (p->ecn == PKT_ECN_NOT_ECT) {
			m->ecn_set = 1;
			m->ecn = PKT_ECN_ECT0;
			f->ect++;
			v->st.ect_set++;
		}
		if (f->cwr_pending) {
			mods_flags(m, p, TCP_CWR, 0);
			f->cwr_pending = 0;
			v->st.cwr_set++;
		}
	}
	if ((p->flags & TCP_ACK) && f->ece_pending && !(p->flags & TCP_ECE)) {
		mods_flags(m, p, TCP_ECE, 0);
		v->st.ece_set++;
	}
}

/* A virtual-ECN congestion signal: halve, at most once per srtt. */
static void
vecn_cut(struct vcc *v, struct vcc_flow *f, uint32_t ack, uint32_t inflight,
    uint64_t now)
{
	uint64_t	 base, floor = 2 * smss(f);

	if (f->cut_done && (SEQ_LEQ(ack, f->cut_seq) ||
	    now - f->last_cut_us < f->srtt_us))
		return;
	base = inflight;
	if (f->vtarget != 0 && f->vtarget < base)
		base = f->vtarget;
	f->vtarget = base / 2 < floor ? floor : base / 2;
	f->grow_acc = 0;
	f->cut_done = 1;
	f->cut_seq = f->g_nxt;
	f->last_cut_us = now;
	f->cwr_pending = 1;
	f->cuts++;
	v->st.cuts++;
}

/* About one MSS per RTT, as Reno's congestion avoidance, up to rwnd. */
static void
vecn_grow(struct vcc_flow *f, uint32_t acked)
{
	uint64_t	 inc;

	if (f->vtarget == 0)
		return;
	f->grow_acc += smss(f) * acked;
	inc = f->grow_acc / f->vtarget;
	f->grow_acc -= inc * f->vtarget;
	f->vtarget += inc;
	if (f->rwnd_set && f->vtarget > f->rwnd)
		f->vtarget = f->rwnd > 2 * smss(f) ? f->rwnd : 2 * smss(f);
}

/* What the guest receives: ACKs for its data, the remote's data. */
static void
to_guest(struct vcc *v, struct vcc_flow *f, const struct pkt *p,
    const struct pkt_tcpopt *o, struct mods *m, uint64_t now)
{
	uint32_t	 end = p->seq + (uint32_t)p->payload;
	uint32_t	 inflight = f->g_nxt - f->g_una, acked = 0;
	int		 virt;

	if (f->midstream)
		pickup_to_guest(f, p, end);
	virt = f->ecn == ECN_VIRTUAL;

	if (p->flags & TCP_ACK) {
		if (SEQ_GT(p->ack, f->g_una) && SEQ_LEQ(p->ack, f->g_nxt)) {
			acked = p->ack - f->g_una;
			f->g_una = p->ack;
			if (f->g_una == f->g_nxt)
				f->vif->dirty = 1;
		}
		if (f->seq_probe && SEQ_GEQ(p->ack, f->seq_probe_end)) {
			rtt_sample(f, now - f->seq_probe_us);
			f->seq_probe = 0;
		}
		f->rwnd = (uint64_t)p->win << f->ws_remote;
		f->rwnd_set = 1;
	}
	if (f->ts && o->ts_set && f->ts_probe && o->tsecr != 0 &&
	    SEQ_GEQ(o->tsecr, f->ts_probe_val)) {
		rtt_sample(f, now - f->ts_probe_us);
		f->ts_probe = 0;
	}
	if (p->payload > 0) {
		f->last_data_us = now;
		if (!f->active)
			f->vif->dirty = 1;
		if (SEQ_GT(end, f->r_nxt))
			f->r_nxt = end;
		if (p->ecn != PKT_ECN_NOT_ECT)
			f->ect++;
		if (p->ecn == PKT_ECN_CE) {
			f->ce++;
			v->st.ce_seen++;
		}
	}
	if (!virt)
		return;
	if (p->payload > 0) {
		/* RFC 3168 6.1.3: ECE until CWR, and again on a new CE. */
		if (p->flags & TCP_CWR) {
			f->ece_pending = 0;
			mods_flags(m, p, 0, TCP_CWR);
		}
		if (p->ecn == PKT_ECN_CE)
			f->ece_pending = 1;
		if (p->ecn != PKT_ECN_NOT_ECT) {
			m->ecn_set = 1;
			m->ecn = PKT_ECN_NOT_ECT;
			v->st.ecn_cleared++;
		}
	}
	if ((p->flags & (TCP_ACK | TCP_ECE)) == (TCP_ACK | TCP_ECE)) {
		mods_flags(m, p, 0, TCP_ECE);
		f->ece++;
		v->st.ece_cleared++;
		vecn_cut(v, f, p->ack, inflight, now);
	} else if (acked > 0 && (!f->cut_done || SEQ_GT(p->ack, f->cut_seq)))
		vecn_grow(f, acked);
}

static void
apply_mods(uint8_t *out, struct pkt *p, const struct mods *m, int partial)
{
	if (m->ecn_set)
		pkt_set_ecn(out, p, m->ecn);
	if (m->flags_set)
		pkt_tcp_set_flags(out, p, m->flags, partial);
	if (m->win_set)
		pkt_tcp_set_win(out, p, m->win, partial);
}

/* A frame, parsed: 0 for a whole TCP segment, -1 for what passes untouched. */
static int
seg_parse(struct vcc *v, struct seg *s, const uint8_t *in, size_t len,
    enum vcc_dir dir)
{
	switch (pkt_parse(&s->p, in, len)) {
	case PKT_OK:
		break;
	case PKT_NOT_IP:
		return -1;
	case PKT_TRUNCATED:
		v->st.truncated++;
		return -1;
	case PKT_MALFORMED:
		v->st.malformed++;
		return -1;
	}
	if (!s->p.tcp)
		return -1;
	v->st.tcp++;
	s->dir = dir;
	s->syn = (s->p.flags & (TCP_SYN | TCP_ACK)) == TCP_SYN;
	s->synack = (s->p.flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK);
	/* A connection's data segment may pick it up (not a FIN or RST). */
	s->pickup = !s->syn && !s->synack && s->p.payload > 0 &&
	    (s->p.flags & (TCP_ACK | TCP_SYN | TCP_FIN | TCP_RST)) == TCP_ACK;
	memset(&s->o, 0, sizeof(s->o));
	return 0;
}

/*
 * The interface's record: made for a segment that may start a flow, only
 * found for the rest (an interface without flows or policies has none).
 */
static struct vcc_if *
seg_vif(struct vcc *v, const struct seg *s, const char *ifname)
{
	struct vcc_if	*vif;

	if ((vif = s->syn || s->pickup ? vif_get(v, ifname) :
	    vif_find(v, ifname)) == NULL)
		v->st.untracked++;
	return vif;
}

/* The flow's key, seen from the guest whichever way the segment goes. */
static void
seg_key(struct seg *s)
{
	const struct pkt *p = &s->p;
	struct vcc_key	*k = &s->k;
	size_t		 alen = p->ipver == 4 ? 4 : 16;

	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)p->ipver;
	if (s->dir == VCC_FROM_GUEST) {
		memcpy(k->gaddr, p->saddr, alen);
		memcpy(k->raddr, p->daddr, alen);
		k->gport = p->sport;
		k->rport = p->dport;
	} else {
		memcpy(k->gaddr, p->daddr, alen);
		memcpy(k->raddr, p->saddr, alen);
		k->gport = p->dport;
		k->rport = p->sport;
	}
}

/* The segment's flow in the table, or NULL; only an unknown one picks up. */
static struct vcc_flow *
seg_lookup(struct vcc *v, struct vcc_if *vif, struct seg *s)
{
	struct vcc_flow	*f;

	seg_key(s);
	s->h = key_hash(v, vif, &s->k);
	f = flow_lookup(v, vif, &s->k, s->h);
	s->pickup = s->pickup && f == NULL;
	return f;
}

/*
 * The TCP options, read where they matter: the handshake, a pick-up, a flow
 * with timestamps.  -1 if they are malformed, after letting go of what the
 * segment would have started.
 */
static int
seg_options(struct vcc *v, struct vcc_if *vif, struct vcc_flow *f,
    struct seg *s, const uint8_t *in)
{
	if (!(s->syn || s->synack || s->pickup || (f != NULL && f->ts)))
		return 0;
	if (pkt_tcp_options(&s->p, in, &s->o) != -1)
		return 0;
	v->st.bad_options++;
	/* Unknown scales: such a flow cannot be throttled rightly. */
	if (f != NULL && (s->syn || s->synack))
		flow_end(v, f);
	else if (f == NULL)
		vif_release(v, vif);
	return -1;
}

/* The SYN that opened f, sent again (the same ISN the same way). */
static int
syn_repeated(const struct vcc_flow *f, const struct seg *s)
{
	int	 from_guest = s->dir == VCC_FROM_GUEST;

	return f->guest_opened == from_guest &&
	    f->state <= ST_SYN_RECEIVED &&
	    (from_guest ? f->g_una : f->r_nxt - 1) == s->p.seq;
}

/* A SYN's flow: f itself for a repeated SYN, else a new one. */
static struct vcc_flow *
flow_open(struct vcc *v, struct vcc_if *vif, struct vcc_flow *f,
    const struct seg *s, struct mods *m, uint64_t now)
{
	/* A new ISN is a new connection on the same tuple. */
	if (f != NULL && !syn_repeated(f, s)) {
		flow_unlink(v, f);
		free(f);
		f = NULL;
	}
	if (f == NULL && (f = flow_new(v, vif, &s->k, s->h, now)) == NULL) {
		vif_release(v, vif);
		return NULL;
	}
	on_syn(v, f, &s->p, &s->o, s->dir, m);
	flow_classify(v, f);
	return f;
}

/*
 * The flow the segment belongs to: opened by a SYN, picked up by data,
 * completed by a SYN-ACK, or NULL when the segment is not tracked.
 */
static struct vcc_flow *
seg_flow(struct vcc *v, struct vcc_if *vif, struct vcc_flow *f,
    const struct seg *s, struct mods *m, uint64_t now)
{
	if (s->syn)
		return flow_open(v, vif, f, s, m, now);
	if (f == NULL && s->pickup) {
		if ((f = flow_new(v, vif, &s->k, s->h, now)) == NULL) {
			vif_release(v, vif);
			return NULL;
		}
		flow_pickup(v, f, &s->p, &s->o, s->dir);
		flow_classify(v, f);
	} else if (f == NULL) {
		v->st.untracked++;
		vif_release(v, vif);
		return NULL;
	} else if (s->synack)
		on_synack(v, f, &s->p, &s->o, s->dir, m);
	return f;
}

/* The flow as the most recently active, in the table and its interface. */
static void
flow_touch(struct vcc *v, struct vcc_flow *f, enum vcc_dir dir, uint64_t now)
{
	TAILQ_REMOVE(&v->lru, f, lru);
	TAILQ_INSERT_TAIL(&v->lru, f, lru);
	TAILQ_REMOVE(&f->vif->flows, f, ifq);
	TAILQ_INSERT_TAIL(&f->vif->flows, f, ifq);
	f->last_us = now;
	if (dir == VCC_FROM_GUEST)
		f->seen_guest = 1;
	else
		f->seen_remote = 1;
}

/*
 * Throttling: the window that travels toward a sender.  The virtual-ECN
 * window only limits what the guest sends.
 */
static void
flow_throttle(struct vcc *v, struct vcc_flow *f, const struct seg *s,
    struct mods *m)
{
	uint64_t	 target;
	int		 to_guest = s->dir == VCC_TO_GUEST;

	target = policy_target(f);
	if (to_guest && f->ecn == ECN_VIRTUAL)
		target = min_target(target, f->vtarget);
	if ((s->p.flags & TCP_ACK) && lower_win(s->p.win, to_guest ?
	    f->ws_remote : f->ws_guest, target, &m->win)) {
		m->win_set = 1;
		f->lowered++;
		v->st.win_lowered++;
	}
}

/* A segment of an established (or closing) flow, either way. */
static void
flow_segment(struct vcc *v, struct vcc_flow *f, const struct seg *s,
    struct mods *m, uint64_t now)
{
	if (s->dir == VCC_FROM_GUEST)
		from_guest(v, f, &s->p, &s->o, m, now);
	else
		to_guest(v, f, &s->p, &s->o, m, now);
	vif_recalc(f->vif, now);
	flow_throttle(v, f, s, m);
	if (s->p.flags & TCP_FIN) {
		if (s->dir == VCC_FROM_GUEST)
			f->fin_guest = 1;
		else
			f->fin_remote = 1;
		f->state = ST_CLOSING;
	}
}

/* The changes written into out, if there are any. */
static enum vcc_verdict
seg_rewrite(struct vcc *v, struct seg *s, const struct mods *m,
    const uint8_t *in, size_t len, uint8_t *out, int partial)
{
	if (!m->ecn_set && !m->flags_set && !m->win_set)
		return VCC_PASS;
	if (out != in)
		memcpy(out, in, len);
	apply_mods(out, &s->p, m, partial);
	v->st.rewritten++;
	return VCC_REWRITTEN;
}

enum vcc_verdict
vcc_frame(struct vcc *v, const char *ifname, enum vcc_dir dir,
    const uint8_t *in, size_t len, uint8_t *out, int partial, uint64_t now)
{
	struct seg		 s;
	struct vcc_if		*vif;
	struct vcc_flow		*f;
	struct mods		 m;
	enum vcc_verdict	 verdict;

	v->st.frames++;
	if (seg_parse(v, &s, in, len, dir) == -1)
		return VCC_PASS;
	if ((vif = seg_vif(v, &s, ifname)) == NULL)
		return VCC_PASS;
	f = seg_lookup(v, vif, &s);
	if (seg_options(v, vif, f, &s, in) == -1)
		return VCC_PASS;
	memset(&m, 0, sizeof(m));
	if ((f = seg_flow(v, vif, f, &s, &m, now)) == NULL)
		return VCC_PASS;
	flow_touch(v, f, dir, now);
	if (!s.syn && !s.synack && f->state != ST_SYN_SENT &&
	    f->state != ST_SYN_RECEIVED)
		flow_segment(v, f, &s, &m, now);
	verdict = seg_rewrite(v, &s, &m, in, len, out, partial);
	if ((s.p.flags & TCP_RST) || (f->fin_guest && f->fin_remote)) {
		v->st.flows_closed++;
		flow_end(v, f);
	}
	return verdict;
}

/* Views */

void
vcc_flow_foreach(struct vcc *v, uint64_t now,
    void (*cb)(const struct vcc_flow_info *, void *), void *arg)
{
	struct vcc_flow		*f;
	struct vcc_flow_info	 fi;
	struct vcc_if		*vif;

	TAILQ_FOREACH(vif, &v->ifs, entry)
		vif_recalc(vif, now);
	TAILQ_FOREACH(vif, &v->ifs, entry)
		TAILQ_FOREACH(f, &vif->flows, ifq) {
		memset(&fi, 0, sizeof(fi));
		fi.iface = vif->name;
		fi.family = f->key.family;
		fi.gaddr = f->key.gaddr;
		fi.raddr = f->key.raddr;
		fi.gport = f->key.gport;
		fi.rport = f->key.rport;
		fi.guest_opened = f->guest_opened;
		fi.state = f->midstream && f->state == ST_ESTABLISHED ?
		    "picked-up" : state_names[f->state];
		fi.ecn = ecn_names[f->ecn];
		fi.ws_guest = f->ws_guest;
		fi.ws_remote = f->ws_remote;
		fi.mss_guest = f->mss_guest;
		fi.mss_remote = f->mss_remote;
		fi.srtt_us = f->srtt_us;
		fi.inflight = f->g_nxt - f->g_una;
		fi.target = policy_target(f);
		if (f->ecn == ECN_VIRTUAL)
			fi.target = min_target(fi.target, f->vtarget);
		fi.rwnd = f->rwnd;
		fi.active = f->active;
		fi.idle_us = now - f->last_us;
		fi.ect = f->ect;
		fi.ce = f->ce;
		fi.ece = f->ece;
		fi.cuts = f->cuts;
		fi.lowered = f->lowered;
		fi.cls = f->cls != NULL ? f->cls->name : "-";
		cb(&fi, arg);
	}
}

void
vcc_if_foreach(struct vcc *v, uint64_t now,
    void (*cb)(const struct vcc_if_info *, void *), void *arg)
{
	struct vcc_if		*vif;
	struct vcc_flow		*f;
	struct vcc_if_info	 ii;

	TAILQ_FOREACH(vif, &v->ifs, entry) {
		vif_recalc(vif, now);
		memset(&ii, 0, sizeof(ii));
		ii.iface = vif->name;
		ii.ecn_virtual = vif->ecn_virtual;
		ii.share = vif->share;
		ii.flows = vif->nflows;
		ii.active = vif->nactive;
		ii.weight = vif->active_w;
		TAILQ_FOREACH(f, &vif->flows, ifq)
			if (f->active)
				ii.window += policy_target(f);
		cb(&ii, arg);
	}
}

void
vcc_get_stats(const struct vcc *v, struct vcc_stats *st)
{
	*st = v->st;
}

size_t
vcc_flow_count(const struct vcc *v)
{
	return v->nflows;
}

static void
vcc_show_addr(int family, const uint8_t *a, uint16_t port, char *buf,
    size_t len)
{
	char	 s[INET6_ADDRSTRLEN];

	if (inet_ntop(family == 4 ? AF_INET : AF_INET6, a, s, sizeof(s)) ==
	    NULL)
		snprintf(s, sizeof(s), "?");
	snprintf(buf, len, family == 4 ? "%s:%u" : "[%s]:%u", s,
	    (unsigned int)port);
}

/* Where the rows of show flows go, and which of them (NULL: all). */
struct vcc_show {
	struct evbuffer	*out;
	struct showwin	*win;
};

static void
vcc_show_flow_cb(const struct vcc_flow_info *fi, void *arg)
{
	struct vcc_show	*vs = arg;
	struct evbuffer	*out = vs->out;
	char		 g[INET6_ADDRSTRLEN + 8], r[INET6_ADDRSTRLEN + 8];
	char		 target[24];

	if (!showwin_row(vs->win, out))
		return;
	vcc_show_addr(fi->family, fi->gaddr, fi->gport, g, sizeof(g));
	vcc_show_addr(fi->family, fi->raddr, fi->rport, r, sizeof(r));
	if (fi->target == 0)
		snprintf(target, sizeof(target), "-");
	else
		snprintf(target, sizeof(target), "%llu",
		    (unsigned long long)fi->target);
	evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%llu.%03llu\t"
	    "%lu\t%s\t%llu\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%u/%u\t%s\t"
	    "%llu\n", fi->iface, g, fi->guest_opened ? "->" : "<-", r,
	    fi->state, fi->ecn,
	    (unsigned long long)(fi->srtt_us / 1000),
	    (unsigned long long)(fi->srtt_us % 1000),
	    (unsigned long)fi->inflight, target,
	    (unsigned long long)fi->rwnd, fi->active ? "yes" : "no",
	    (unsigned long long)fi->ect, (unsigned long long)fi->ce,
	    (unsigned long long)fi->ece, (unsigned long long)fi->cuts,
	    (unsigned long long)fi->lowered,
	    (unsigned int)fi->ws_guest, (unsigned int)fi->ws_remote, fi->cls,
	    (unsigned long long)(fi->idle_us / 1000000));
}

void
vcc_show_flows(struct vcc *v, uint64_t now_us, struct showwin *w,
    struct evbuffer *out)
{
	struct vcc_show	 vs = { out, w };

	evbuffer_add_printf(out, "%%columns interface\tguest\tdir\tremote\t"
	    "state\tecn\tsrtt_ms\tinflight\ttarget\trwnd\tactive\tect\tce\t"
	    "ece\tcuts\tlowered\twscale\tclass\tidle\n");
	vcc_flow_foreach(v, now_us, vcc_show_flow_cb, &vs);
}

static void
vcc_show_if_cb(const struct vcc_if_info *ii, void *arg)
{
	struct evbuffer	*out = arg;
	char		 share[24];

	if (ii->share == 0)
		snprintf(share, sizeof(share), "-");
	else
		snprintf(share, sizeof(share), "%llu",
		    (unsigned long long)ii->share);
	evbuffer_add_printf(out, "%s\t%s\t%s\t%zu\t%zu\t%llu\t%llu\n",
	    ii->iface, ii->ecn_virtual ? "virtual" : "-", share, ii->flows,
	    ii->active, (unsigned long long)ii->weight,
	    (unsigned long long)ii->window);
}

void
vcc_show_interfaces(struct vcc *v, uint64_t now_us, struct evbuffer *out)
{
	evbuffer_add_printf(out, "%%columns interface\tecn\tshare\tflows\t"
	    "active\tweight\twindow\n");
	vcc_if_foreach(v, now_us, vcc_show_if_cb, out);
}
