/*
 * The control plane's state and its life: configuration, the clock and
 * the one timer, links coming and going, messages and guests' frames in,
 * statistics.  See routing.h for the whole and its files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "adapt.h"
#include "fwd.h"
#include "log.h"
#include "node.h"
#include "nodedb.h"
#include "routing.h"
#include "routing_impl.h"
#include "shortcut.h"
#include "spf.h"
#include "traffic.h"
#include "wire.h"

uint64_t
routing_now(const struct routing *r)
{
	return r->env.now_ms(r->env.arg);
}

/* Refusals are logged at most once a second for each kind. */
int
routing_may_log(struct routing *r, unsigned int kind)
{
	uint64_t	 now = routing_now(r);

	if (now - r->logged_ms[kind] < ROUTING_LOG_EVERY_MS)
		return 0;
	r->logged_ms[kind] = now;
	return 1;
}

unsigned int
routing_refresh_s(const struct routing *r)
{
	return r->refresh != 0 ? r->refresh : ROUTING_REFRESH_DEFAULT;
}

static void
due(uint64_t at, uint64_t *next)
{
	if (at != 0 && (*next == 0 || at < *next))
		*next = at;
}

/* Asks the env to be polled when the next timer is due. */
void
routing_schedule(struct routing *r)
{
	uint64_t	 next = 0, now;

	if (!r->started)
		return;
	due(r->orig_at, &next);
	due(r->compute_at, &next);
	due(r->late_at, &next);
	due(r->tick_at, &next);
	due(r->seg_at, &next);
	due(r->round_at, &next);
	if (next == 0 || next == r->armed_at)
		return;
	now = routing_now(r);
	r->armed_at = next;
	r->env.arm(r->env.arg, next > now ? next - now : 0);
}

void
routing_poll(struct routing *r)
{
	uint64_t	 now = routing_now(r);

	r->armed_at = 0;
	if (!r->on || !r->started)
		return;
	if (r->late_at != 0 && r->late_at <= now) {
		r->late_at = 0;
		routing_flood_late(r);
	}
	if (r->tick_at != 0 && r->tick_at <= now) {
		r->tick_at = now + ROUTING_TICK_MS;
		routing_mac_age(r, now);
		traffic_tick(r->tm, now);
		r->round_at = 0;
		r->round_last = now;
		shortcut_round(r);
		routing_flood_tick(r);
		routing_traffic_tick(r);
		routing_seg_run(r);
	}
	if (r->seg_at != 0 && r->seg_at <= now)
		routing_seg_run(r);
	if (r->round_at != 0 && r->round_at <= now) {
		r->round_at = 0;
		r->round_last = now;
		shortcut_round(r);
	}
	if (r->orig_at != 0 && r->orig_at <= now) {
		r->orig_at = 0;
		routing_flood_originate(r);
	}
	if (r->compute_at != 0 && r->compute_at <= routing_now(r)) {
		r->compute_at = 0;
		routing_path_compute(r);
	}
	routing_schedule(r);
}

/* Links. */

struct routing_nbr *
routing_nbr_find(struct routing *r, void *link)
{
	size_t	 i;

	for (i = 0; i < r->nnbrs; i++)
		if (r->nbrs[i].link == link)
			return &r->nbrs[i];
	return NULL;
}

struct routing_nbr *
routing_nbr_to(struct routing *r, const char *name)
{
	size_t	 i;

	for (i = 0; i < r->nnbrs; i++)
		if (strcmp(r->nbrs[i].peer, name) == 0 &&
		    !shortcut_draining(r, &r->nbrs[i]))
			return &r->nbrs[i];
	return NULL;
}

void
routing_link_up(struct routing *r, const struct routing_link *rl)
{
	struct routing_nbr	*n, *nn;
	size_t			 cap;

	if (r == NULL || !r->on)
		return;
	if ((n = routing_nbr_find(r, rl->link)) == NULL) {
		if (r->nnbrs == r->nbrcap) {
			cap = r->nbrcap != 0 ? 2 * r->nbrcap : 8;
			if ((nn = reallocarray(r->nbrs, cap,
			    sizeof(*nn))) == NULL) {
				log_warnx("routing: out of memory for link %s",
				    rl->name);
				return;
			}
			r->nbrs = nn;
			r->nbrcap = cap;
		}
		n = &r->nbrs[r->nnbrs++];
	}
	memset(n, 0, sizeof(*n));
	n->link = rl->link;
	snprintf(n->name, sizeof(n->name), "%s", rl->name);
	snprintf(n->peer, sizeof(n->peer), "%s", rl->peer != NULL ?
	    rl->peer : "");
	n->configured = rl->configured;
	n->shortcut = rl->shortcut;
	routing_path_flood(r, n);
	if (n->peer[0] == '\0')
		return;
	/* The database exchange: all we hold, then ours anew. */
	routing_flood_exchange(r, n);
	routing_flood_soon(r, 0);
}

static void
nbr_remove(struct routing *r, struct routing_nbr *n)
{
	*n = r->nbrs[--r->nnbrs];
}

void
routing_link_down(struct routing *r, void *link)
{
	struct routing_nbr	*n;
	size_t			 i;

	if (r == NULL || !r->on)
		return;
	if (link != NULL) {
		if ((n = routing_nbr_find(r, link)) != NULL)
			nbr_remove(r, n);
	} else
		for (i = 0; i < r->nnbrs;)
			if (!r->env.alive(r->env.arg, r->nbrs[i].link))
				nbr_remove(r, &r->nbrs[i]);
			else
				i++;
	routing_flood_soon(r, 0);
	routing_path_soon(r);
}

int
routing_input(struct routing *r, void *link, const uint8_t *p, size_t n,
    const char **why)
{
	struct routing_nbr	*nb;

	if (r == NULL || !r->on || !r->started ||
	    (nb = routing_nbr_find(r, link)) == NULL || nb->peer[0] == '\0') {
		*why = "no control plane here";
		return -1;
	}
	return routing_flood_input(r, nb, p, n, why);
}

/* A guest's frame, before forwarding: its source and the matrix. */
int
routing_guest_frame(struct routing *r, struct fwd_port *in,
    const uint8_t *eth, size_t len)
{
	const uint8_t		*dst = eth, *src = eth + ETHER_ADDR_LEN;
	const char		*dst_node = "*";
	struct routing_rmac	*rm;
	uint64_t		 now;

	if (r == NULL || !r->on || !r->started || len < ETHER_HDR_LEN)
		return 0;
	now = routing_now(r);
	if (!ether_is_multicast(src) && routing_mac_seen(r, in, src, now) == -1)
		return -1;
	if (!ether_is_multicast(dst)) {
		if (routing_mac_local(r, dst) != NULL)
			dst_node = r->node;
		else if ((rm = routing_mac_remote(r, dst)) != NULL)
			dst_node = rm->owner;
	}
	traffic_count(r->tm, src, dst, dst_node, len, now);
	return 0;
}

uint64_t
routing_foreign(const struct routing *r, const char *port)
{
	return r != NULL && r->on && r->started ?
	    routing_mac_foreign(r, port) : 0;
}

/* Life cycle and configuration. */

struct routing *
routing_new(const struct routing_env *env, struct fwd *fwd)
{
	struct routing	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->env = *env;
	r->fwd = fwd;
	r->seed = arc4random();
	if ((r->sc = shortcut_new()) == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

void
routing_free(struct routing *r)
{
	struct fwd_port	*fp;
	size_t		 i;

	if (r == NULL)
		return;
	if (r->started) {
		fwd_auto_on(r->fwd, 0);
		fwd_auto_clear(r->fwd);
		for (i = 0; i < r->nnbrs; i++)
			if ((fp = fwd_port_find(r->fwd, FWD_LINK,
			    r->nbrs[i].name)) != NULL)
				fwd_port_set_flood(fp, 1);
	}
	routing_mac_free(r);
	routing_traffic_free(r);
	free(r->shares);
	free(r->nbrs);
	shortcut_free(r->sc);
	nodedb_free(r->db);
	nodesig_free(r->sig);
	spf_free(r->spf);
	traffic_free(r->tm);
	free(r->rec);
	free(r->enc);
	free(r);
}

int
routing_on(const struct routing *r)
{
	return r != NULL && r->on;
}

/* A database entry's origin with no path from here, as last computed. */
static int
origin_gone(const char *name, void *arg)
{
	struct routing	*r = arg;
	int		 idx;

	return r->spf == NULL || (idx = spf_find(r->spf, name)) == SPF_NONE ||
	    !spf_reachable(r->spf, idx);
}

/*
 * What this node grants: the lifetime it gives its own records (three
 * refresh intervals), and room taken from the unreachable.
 */
static void
db_bounds(struct routing *r)
{
	if (r->db != NULL)
		nodedb_set_bounds(r->db, (uint16_t)(3 * routing_refresh_s(r)),
		    origin_gone, r);
}

int
routing_apply(struct routing *r, const struct stmt *st, char *err,
    size_t errlen)
{
	if (st->kind == STMT_ADVERTISE) {
		r->has_advertise = st->op == STMT_OP_SET;
		r->advertise = st->addr;
		routing_flood_soon(r, 0);
		return 0;
	}
	if (st->kind == STMT_ADAPT)
		return shortcut_apply(r, st, err, errlen);
	if (st->kind == STMT_RELAY) {
		fwd_set_relay(r->fwd, st->flag);
		if (r->norelay == !st->flag)
			return 0;
		r->norelay = !st->flag;
		if (r->started)
			log_info("routing: relay %s: %s", st->flag ? "yes" :
			    "no", st->flag ? "frames between other nodes may "
			    "pass here" : "no frame between other nodes passes "
			    "here");
		/* Our record says it; our own paths change with it too. */
		routing_flood_soon(r, 0);
		routing_path_soon(r);
		return 0;
	}
	if (st->kind != STMT_ROUTING) {
		snprintf(err, errlen, "not a routing statement");
		return -1;
	}
	r->on = st->flag;
	r->refresh = st->num;
	db_bounds(r);
	return 0;
}

int
routing_on_path(struct routing *r, void *link, const uint8_t *src)
{
	struct routing_nbr	*nb;
	struct routing_rmac	*m;

	if (!r->on || !r->started || (nb = routing_nbr_find(r, link)) == NULL)
		return 1;
	/* A source no record names may be behind a peer that sends none. */
	if ((m = routing_mac_remote(r, src)) == NULL)
		return nb->peer[0] == '\0';
	return (nb->peer[0] != '\0' && strcmp(m->owner, nb->peer) == 0) ||
	    strcmp(m->via, nb->name) == 0;
}

int
routing_start(struct routing *r, const char *node)
{
	uint64_t	 now = routing_now(r);

	snprintf(r->node, sizeof(r->node), "%s", node);
	if (!r->on) {
		shortcut_start(r);
		return 0;
	}
	if ((r->db = nodedb_new(r->node, r->env.records_max,
	    routing_cache_free)) == NULL ||
	    (r->spf = spf_new()) == NULL ||
	    (r->tm = traffic_new(now, arc4random())) == NULL ||
	    (r->rec = malloc(sizeof(*r->rec))) == NULL ||
	    (r->sig = nodesig_new()) == NULL ||
	    (r->enc = malloc(NODE_RECORD_MAX)) == NULL ||
	    (r->rbuf = malloc(NODE_RECORD_MAX)) == NULL ||
	    shortcut_start(r) == -1)
		return -1;
	db_bounds(r);
	/* Above anything this node said before it restarted. */
	r->seq = r->env.wall_ms(r->env.arg);
	r->started = 1;
	r->started_ms = now;
	r->tick_at = now + ROUTING_TICK_MS;
	r->refreshed_ms = now;
	fwd_auto_on(r->fwd, 1);
	r->dirty = ROUTING_DIRTY_TOPO;
	routing_flood_originate(r);
	routing_schedule(r);
	return 0;
}

void
routing_config(struct routing *r, void (*cb)(const struct stmt *, void *),
    void *arg)
{
	struct stmt	 st;

	memset(&st, 0, sizeof(st));
	st.kind = STMT_ROUTING;
	st.flag = r->on;
	st.num = r->refresh;
	cb(&st, arg);
	if (r->has_advertise) {
		memset(&st, 0, sizeof(st));
		st.kind = STMT_ADVERTISE;
		st.addr = r->advertise;
		cb(&st, arg);
	}
	memset(&st, 0, sizeof(st));
	st.kind = STMT_RELAY;
	st.flag = !r->norelay;
	cb(&st, arg);
	shortcut_config(r, cb, arg);
}

size_t
routing_nodes(const struct routing *r)
{
	return r->db != NULL ? nodedb_nodes(r->db) : 0;
}

size_t
routing_records(const struct routing *r)
{
	return r->db != NULL ? nodedb_count(r->db) : 0;
}

void
routing_counts(const struct routing *r, uint64_t *msgs, uint64_t *bytes)
{
	*msgs = r->st.records_out;
	*bytes = r->st.bytes_out;
}

size_t
routing_routes(const struct routing *r)
{
	return r->nroutes;
}

uint64_t
routing_changed_ms(const struct routing *r)
{
	return r->changed_ms;
}

void
routing_show_stats(struct routing *r, struct evbuffer *out)
{
	struct nodedb_stats ds;
	struct nodesig_stats ss;
	char		 name[48];
	unsigned int	 i;

	if (!r->on || !r->started)
		return;
	nodedb_stats(r->db, &ds);
#define ROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
#undef ROW
	routing_show_nodes_stats(r, out);
#define ROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
	ROW("records", nodedb_count(r->db));
	ROW("node_seq", r->seq);
	ROW("records_in", r->st.records_in);
	ROW("records_out", r->st.records_out);
	ROW("records_bytes_out", r->st.bytes_out);
	ROW("records_skipped", r->st.records_skipped);
	ROW("records_originated", r->st.originated);
	ROW("records_malformed", r->st.malformed);
	ROW("records_refused", r->st.refused);
	ROW("records_seq_ahead", r->st.seq_ahead);
	nodesig_stats(r->sig, &ss);
	ROW("records_verified", ss.verified);
	ROW("records_verify_cached", ss.record_hits);
	ROW("records_cert_cached", ss.cert_hits);
	for (i = NODESIG_OK + 1; i < NODESIG_NRESULTS; i++) {
		snprintf(name, sizeof(name), "records_sig_%s",
		    nodesig_result_name((enum nodesig_result)i));
		ROW(name, r->st.sig_refused[i]);
	}
	ROW("records_unsigned_out", r->st.unsigned_out);
	ROW("records_db_full", ds.full);
	ROW("records_delayed", ds.delayed);
	ROW("records_late", ds.late);
	ROW("records_about_us", ds.self_newer);
	ROW("records_aged", ds.aged);
	ROW("records_evicted", ds.evicted);
	ROW("records_lifetime_cut", ds.lifetime_cut);
	ROW("routes_computed", r->st.recomputed);
	ROW("routes_changed_ms", r->changed_ms);
	ROW("auto_routes", r->nroutes);
	ROW("macs_local", r->nlocal);
	ROW("macs_refused", r->st.macs_refused);
	ROW("mac_claims", r->st.claims);
	ROW("macs_moved_away", r->st.moved_away);
	ROW("macs_withdrawn_down", r->st.withdrawn_down);
	ROW("macs_withdrawn_standby", r->st.withdrawn_standby);
	ROW("mac_claims_segment_kept", r->st.segment_kept);
	ROW("macs_restored", r->restored);
	ROW("mac_conflicts", r->st.conflicts);
	ROW("mac_claims_waiting", r->st.claims_waiting);
	ROW("mac_claims_frozen", r->st.claims_frozen);
	ROW("mac_version_jumps", r->st.version_jumps);
	ROW("macs_frozen", r->st.frozen);
	ROW("macs_moving", r->nmob);
	ROW("frames_foreign_src", r->st.foreign_src);
	ROW("traffic_overflow", traffic_overflow(r->tm));
	ROW("traffic_reports_in", r->st.reports_in);
	ROW("traffic_reports_out", r->st.reports_out);
	ROW("traffic_reports_forwarded", r->st.reports_forwarded);
	ROW("traffic_reports_dropped", r->st.reports_dropped);
	ROW("traffic_reports_held", r->nreports);
#undef ROW
	shortcut_show_stats(r, out);
}
