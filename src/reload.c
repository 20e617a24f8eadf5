/*
 * Reload.  The running state and the new file are both lists of
 * statements; the changes are the statements of one that the other lacks.
 * What did not change is not touched at all: a link that is in both keeps
 * its connection, its queue and its counters, and no frame on it is lost.
 *
 * Both lists are indexed (hash tables of their statements, by content and
 * by name), so that a comparison takes time in proportion to their length.
 */
#include <sys/eventfd.h>
#include <sys/resource.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "config.h"
#include "daemon.h"
#include "fwd.h"
#include "log.h"
#include "paths.h"
#include "liveness.h"
#include "reload.h"
#include "sched.h"
#include "stmt.h"

/* One side of the comparison, indexed. */
struct side {
	const struct stmt_vec	*v;
	struct stmt_index	 same;		/* listen, interface, route, vcc */
	struct stmt_index	 names;		/* interface, link, set-link */
};

static int
side_init(struct side *s, const struct stmt_vec *v)
{
	static const enum stmt_kind same[] = {
		STMT_LISTEN, STMT_INTERFACE, STMT_ROUTE, STMT_VCC,
	};
	static const enum stmt_kind names[] = {
		STMT_INTERFACE, STMT_LINK, STMT_SET_LINK,
	};
	size_t	 i;

	s->v = v;
	stmt_index_init(&s->same, v, STMT_KEY_SAME);
	stmt_index_init(&s->names, v, STMT_KEY_NAME);
	/* Only what is looked up: many routes to one link share a name. */
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (stmt_index_add_all(&s->same, same[i]) == -1)
			return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (stmt_index_add_all(&s->names, names[i]) == -1)
			return -1;
	return 0;
}

static void
side_free(struct side *s)
{
	stmt_index_free(&s->same);
	stmt_index_free(&s->names);
}

static int
plan_add(struct reload_plan *pl, const struct stmt *st, enum stmt_op op)
{
	struct stmt		 c;

	if (st->kind == STMT_ROUTE) {
		/* A route is all name: kept as it is, its op changed. */
		if (stmt_vec_add(&pl->steps, st, 0) == -1)
			return -1;
		pl->steps.v[pl->steps.n - 1].u.route.op = (uint8_t)op;
		return 0;
	}
	/* A del- statement says only what names the thing. */
	memset(&c, 0, sizeof(c));
	c.kind = st->kind;
	c.op = op;
	if (op == STMT_OP_SET || st->kind == STMT_LISTEN ||
	    st->kind == STMT_VCC)
		c = *st;
	else
		memcpy(c.name, st->name, sizeof(c.name));
	c.op = op;
	return stmt_vec_add(&pl->steps, &c, 0);
}

void
reload_plan_clear(struct reload_plan *pl)
{
	stmt_vec_clear(&pl->steps);
	memset(pl, 0, sizeof(*pl));
}

/* Settings are few and kept whole: a scan of the kinds is enough. */
static const struct stmt *
find_kind(const struct stmt_vec *v, enum stmt_kind kind)
{
	size_t	 i;

	for (i = 0; i < v->n; i++)
		if (v->v[i].kind == kind && kind != STMT_ROUTE)
			return v->v[i].u.st;
	return NULL;
}

static const struct stmt *
find_named(const struct side *s, enum stmt_kind kind, const char *name)
{
	struct stmt	 key;
	long		 i;

	memset(&key, 0, sizeof(key));
	key.kind = kind;
	snprintf(key.name, sizeof(key.name), "%s", name);
	if ((i = stmt_index_find(&s->names, &key)) == -1)
		return NULL;
	return s->v->v[i].u.st;
}

static int
contains(const struct side *s, const struct stmt *st)
{
	return stmt_index_find(&s->same, st) != -1;
}

/* Adds, with op, every statement of kind in a that b does not have. */
static int
plan_missing(struct reload_plan *pl, const struct side *a,
    const struct side *b, enum stmt_kind kind, enum stmt_op op)
{
	const struct stmt	*st;
	struct stmt		 tmp;
	size_t			 i;

	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < a->v->n; i++) {
		if (a->v->v[i].kind != kind)
			continue;
		st = stmt_vec_get(a->v, i, &tmp);
		if (!contains(b, st) && plan_add(pl, st, op) == -1)
			return -1;
	}
	return 0;
}

#define LOPT_ALL (STMT_LOPT_RATE | STMT_LOPT_AQM | STMT_LOPT_CONGESTION | \
    STMT_LOPT_TRANSPORT)

/* The same link but for its options: address, tls, peer, queue. */
static int
link_same(const struct stmt *a, const struct stmt *b)
{
	struct stmt	 x = *a, y = *b;

	x.lopts = y.lopts = 0;
	return stmt_equal(&x, &y);
}

static const struct stmt *
find_link(const struct side *s, const struct stmt *st, int same)
{
	const struct stmt	*l;

	/* Link names are unique in a list: one to look at. */
	if ((l = find_named(s, STMT_LINK, st->name)) != NULL &&
	    l->op == STMT_OP_SET && (!same || link_same(l, st)))
		return l;
	return NULL;
}

/* The link options a statement gives (NULL: none), defaults for the rest. */
static void
link_options_of(const struct stmt *st, struct sched_opts *o)
{
	sched_opts_default(o);
	if (st != NULL)
		sched_opts_from_stmt(o, st);
}

/*
 * Gives st every link option: those from (NULL: none) gives, the defaults
 * for the rest.  Applied, it leaves nothing of options given before.
 */
static void
link_options_full(struct stmt *st, const struct stmt *from)
{
	struct sched_opts	 o;

	link_options_of(from, &o);
	sched_opts_to_stmt(&o, st);
	st->lopts = LOPT_ALL;
}

static int
plan_set_link(struct reload_plan *pl, const char *name,
    const struct stmt *from)
{
	struct stmt	 st;

	memset(&st, 0, sizeof(st));
	st.kind = STMT_SET_LINK;
	snprintf(st.name, sizeof(st.name), "%s", name);
	link_options_full(&st, from);
	return plan_add(pl, &st, STMT_OP_SET);
}

/*
 * A file's link options in the running state's form (vnetd_config()):
 * per link name, what its link and set-link statements give, merged in
 * file order as at start-up; on the link statement of a configured link,
 * else on one set-link statement; defaults left out.
 */
static int
links_normal(const struct stmt_vec *l, struct stmt_vec *out)
{
	struct stmt_vec		 names = { NULL, 0, 0 };
	struct stmt_index	 ix;
	struct sched_opts	 o;
	struct stmt		 st, tmp, key, *e;
	const struct stmt	*li;
	size_t			 i, j;
	long			 k;

	stmt_index_init(&ix, &names, STMT_KEY_NAME);
	for (i = 0; i < l->n; i++) {
		if (l->v[i].kind != STMT_LINK && l->v[i].kind != STMT_SET_LINK)
			continue;
		li = l->v[i].u.st;
		if (li->op != STMT_OP_SET)
			continue;
		memset(&st, 0, sizeof(st));
		st.kind = STMT_SET_LINK;
		snprintf(st.name, sizeof(st.name), "%s", li->name);
		if ((k = stmt_index_find(&ix, &st)) == -1) {
			if (stmt_vec_add(&names, &st, 0) == -1 ||
			    stmt_index_add(&ix, names.n - 1) == -1)
				goto oom;
			k = (long)names.n - 1;
		}
		/* The merged options so far, as a statement that gives all. */
		e = names.v[k].u.st;
		link_options_of(e, &o);
		sched_opts_from_stmt(&o, li);
		sched_opts_to_stmt(&o, e);
		e->lopts = LOPT_ALL;
	}
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < l->n; i++) {
		if (l->v[i].kind == STMT_SET_LINK &&
		    l->v[i].u.st->op == STMT_OP_SET)
			continue;
		if (l->v[i].kind != STMT_LINK ||
		    l->v[i].u.st->op != STMT_OP_SET) {
			if (stmt_vec_add(out, stmt_vec_get(l, i, &tmp),
			    l->v[i].line) == -1)
				goto oom;
			continue;
		}
		st = *l->v[i].u.st;
		memset(&key, 0, sizeof(key));
		key.kind = STMT_SET_LINK;
		snprintf(key.name, sizeof(key.name), "%s", st.name);
		k = stmt_index_find(&ix, &key);		/* made above */
		e = names.v[k].u.st;
		e->op = STMT_OP_DEL;	/* marks: has a link */
		link_options_of(e, &o);
		sched_opts_to_stmt(&o, &st);
		if (stmt_vec_add(out, &st, l->v[i].line) == -1)
			goto oom;
	}
	for (j = 0; j < names.n; j++) {
		e = names.v[j].u.st;
		if (e->op == STMT_OP_DEL)
			continue;
		st = *e;
		st.op = STMT_OP_SET;
		link_options_of(e, &o);
		sched_opts_to_stmt(&o, &st);
		if (st.lopts != 0 && stmt_vec_add(out, &st, 0) == -1)
			goto oom;
	}
	stmt_index_free(&ix);
	stmt_vec_clear(&names);
	return 0;
 oom:
	stmt_index_free(&ix);
	stmt_vec_clear(&names);
	return -1;
}

/*
 * Links: one whose address, tls, peer or queue changed is removed (with
 * the old ones, del) and made again (with the new ones, !del), with every
 * option if set-link had given its name some; one whose options alone
 * changed gets them with set-link, its connection untouched.  Options by
 * name for links the peers open (set-link) are given whole, the defaults
 * for those the file dropped.
 */
static int
plan_links(struct reload_plan *pl, const struct side *old,
    const struct side *new, int del)
{
	const struct stmt	*o, *n, *st;
	struct stmt		 c;
	size_t			 i;

	if (del) {
		for (i = 0; i < old->v->n; i++) {
			if (old->v->v[i].kind != STMT_LINK)
				continue;
			st = old->v->v[i].u.st;
			if (find_link(new, st, 1) == NULL &&
			    plan_add(pl, st, STMT_OP_DEL) == -1)
				return -1;
		}
		return 0;
	}
	for (i = 0; i < new->v->n; i++) {
		if (new->v->v[i].kind != STMT_LINK)
			continue;
		st = new->v->v[i].u.st;
		if ((o = find_link(old, st, 1)) == NULL) {
			/* Options set-link gave the name would stay. */
			c = *st;
			if (find_named(old, STMT_SET_LINK, c.name) != NULL)
				link_options_full(&c, st);
			if (plan_add(pl, &c, STMT_OP_SET) == -1)
				return -1;
		} else if (!stmt_equal(o, st) &&
		    plan_set_link(pl, st->name, st) == -1)
			return -1;
	}
	/*
	 * Options by name, for names without a link in the new file: those
	 * that changed or went, then those that are new.
	 */
	for (i = 0; i < old->v->n; i++) {
		if (old->v->v[i].kind != STMT_SET_LINK)
			continue;
		st = old->v->v[i].u.st;
		if (find_link(new, st, 0) != NULL)
			continue;
		n = find_named(new, STMT_SET_LINK, st->name);
		if ((n == NULL || !stmt_equal(st, n)) &&
		    plan_set_link(pl, st->name, n) == -1)
			return -1;
	}
	for (i = 0; i < new->v->n; i++) {	/* (links_normal left no link's) */
		if (new->v->v[i].kind != STMT_SET_LINK)
			continue;
		st = new->v->v[i].u.st;
		if (find_named(old, STMT_SET_LINK, st->name) == NULL &&
		    plan_set_link(pl, st->name, st) == -1)
			return -1;
	}
	return 0;
}

/* Interfaces of names in both lists but made differently (1), or new (0). */
static int
plan_interfaces(struct reload_plan *pl, const struct side *old,
    const struct side *new, int changed)
{
	const struct stmt	*st;
	size_t			 i;
	int			 known;

	for (i = 0; i < new->v->n; i++) {
		if (new->v->v[i].kind != STMT_INTERFACE)
			continue;
		st = new->v->v[i].u.st;
		if (contains(old, st))
			continue;
		known = find_named(old, STMT_INTERFACE, st->name) != NULL;
		if (known == changed && plan_add(pl, st, STMT_OP_SET) == -1)
			return -1;
	}
	return 0;
}

int
reload_diff_vec(const struct stmt_vec *oldv, const struct stmt_vec *newv,
    struct reload_plan *pl, char *err, size_t errlen)
{
	const struct stmt	*o, *n;
	struct stmt_vec		 norm = { NULL, 0, 0 };
	struct side		 old, new;
	char			 a[STMT_LINE_MAX], b[STMT_LINE_MAX];
	enum stmt_kind		 k;
	int			 ret = -1;

	memset(pl, 0, sizeof(*pl));
	memset(&old, 0, sizeof(old));
	memset(&new, 0, sizeof(new));
	if (links_normal(newv, &norm) == -1 || side_init(&old, oldv) == -1 ||
	    side_init(&new, &norm) == -1)
		goto oom;
	/* Settings made or read once at start cannot change. */
	for (k = STMT_NODE; k <= STMT_KIND_LAST; k++) {
		if (!stmt_is_setting(k) || !vnetd_startup_only(k) ||
		    vnetd_reloadable(k))
			continue;
		if ((n = find_kind(&norm, k)) == NULL)
			continue;
		if ((o = find_kind(oldv, k)) != NULL && stmt_equal(o, n))
			continue;
		if (o != NULL)
			stmt_print(o, a, sizeof(a));
		else
			snprintf(a, sizeof(a), "none");
		stmt_print(n, b, sizeof(b));
		snprintf(err, errlen, "'%s' (running: '%s') cannot change "
		    "at run time: restart vnetd for it", b, a);
		goto done;
	}

	/* The steps that can fail come first, so that they can be undone. */
	if (plan_missing(pl, &new, &old, STMT_LISTEN, STMT_OP_SET) == -1 ||
	    plan_interfaces(pl, &old, &new, 0) == -1)
		goto oom;
	pl->nprep = pl->steps.n;

	/*
	 * vcc policies that changed are removed and given again: a class
	 * given in parts in the file is rebuilt from its parts.
	 */
	if (plan_missing(pl, &old, &new, STMT_VCC, STMT_OP_DEL) == -1 ||
	    plan_missing(pl, &old, &new, STMT_ROUTE, STMT_OP_DEL) == -1 ||
	    plan_links(pl, &old, &new, 1) == -1 ||
	    plan_missing(pl, &old, &new, STMT_INTERFACE, STMT_OP_DEL) == -1 ||
	    plan_missing(pl, &old, &new, STMT_LISTEN, STMT_OP_DEL) == -1)
		goto oom;
	/* The other settings are given again. */
	for (k = STMT_NODE; k <= STMT_KIND_LAST; k++) {
		if (!stmt_is_setting(k) || (vnetd_startup_only(k) &&
		    !vnetd_reloadable(k)))
			continue;
		if ((n = find_kind(&norm, k)) == NULL)
			continue;
		if ((o = find_kind(oldv, k)) != NULL && stmt_equal(o, n))
			continue;
		if (plan_add(pl, n, STMT_OP_SET) == -1)
			goto oom;
	}
	if (plan_interfaces(pl, &old, &new, 1) == -1 ||
	    plan_links(pl, &old, &new, 0) == -1 ||
	    plan_missing(pl, &new, &old, STMT_ROUTE, STMT_OP_SET) == -1 ||
	    plan_missing(pl, &new, &old, STMT_VCC, STMT_OP_SET) == -1)
		goto oom;
	ret = 0;
	goto done;
 oom:
	snprintf(err, errlen, "out of memory");
 done:
	side_free(&old);
	side_free(&new);
	stmt_vec_clear(&norm);
	if (ret == -1)
		reload_plan_clear(pl);
	return ret;
}

int
reload_diff(const struct stmt *old, size_t nold, const struct stmt *new,
    size_t nnew, struct reload_plan *pl, char *err, size_t errlen)
{
	struct stmt_vec	 o = { NULL, 0, 0 }, n = { NULL, 0, 0 };
	size_t		 i;
	int		 r = -1;

	memset(pl, 0, sizeof(*pl));
	for (i = 0; i < nold; i++)
		if (stmt_vec_add(&o, &old[i], 0) == -1)
			goto oom;
	for (i = 0; i < nnew; i++)
		if (stmt_vec_add(&n, &new[i], 0) == -1)
			goto oom;
	r = reload_diff_vec(&o, &n, pl, err, errlen);
	goto done;
 oom:
	snprintf(err, errlen, "out of memory");
 done:
	stmt_vec_clear(&o);
	stmt_vec_clear(&n);
	return r;
}

/*
 * A reload under way.  Reading, parsing and comparing a big file takes
 * long (a million routes: seconds), and the frames must keep moving.  The
 * work is split between a thread of its own, which touches nothing of the
 * daemon, and the loop, which does only what must be done on it, in steps
 * of about a millisecond with frames forwarded between them:
 *
 *   PREPARING  thread: touches the memory the copy will fill (a page's
 *              first touch is slow, and would stall the loop)
 *   COPYING    loop: copies the running state (compact statements; the
 *              routes in steps); thread: reads and checks the file
 *   COMPARING  thread: makes the plan from the copy and the file
 *   APPLYING   loop: applies the plan in steps
 *
 * The thread tells the loop through an eventfd (r->stage says what it has
 * done), and waits for the copy on a condition variable.  The copy starts
 * again if routes change between its steps (vnetctl add-route meanwhile),
 * and is made in one go after COPY_RESTARTS tries.  A control client that
 * leaves meanwhile is forgotten (reload_forget()); a SIGHUP meanwhile is
 * remembered and makes one more reload afterwards.
 */
#define STEP_US		1000	/* the longest a step should take */
#define STEP_CHECK	16	/* changes between looks at the clock */
#define LOG_CHANGES_MAX	100	/* changes logged one by one; then counted */
#define COPY_CHUNK	256	/* routes copied between looks at the clock */
#define COPY_RESTARTS	8
#define RELOAD_NICE	10	/* the thread's nice value */

enum reload_state {
	RELOAD_PREPARING = 1,
	RELOAD_COPYING,
	RELOAD_COMPARING,
	RELOAD_APPLYING,
};

/* What the thread has done (r->stage). */
#define STAGE_TOUCHED	1
#define STAGE_DONE	2

struct reload {
	struct vnetd		*d;
	enum reload_state	 state;
	void			(*emit)(int, const char *, void *);
	void			(*done)(int, const char *, void *);
	void			 *arg;
	int			  again;	/* a SIGHUP came meanwhile */

	/* The thread's input, copied: it touches nothing of the daemon. */
	char			  file[PATH_MAX];
	char			  node[STMT_NAME_MAX + 1];
	char			  control_path[STMT_PATH_MAX + 1];
	int			  control_fixed;
	struct stmt_vec		  old;		/* the running state */

	/* Copying the routes: where the walk is, and what it has seen. */
	size_t			  nhead;	/* items of old before the routes */
	void			 *at;
	uint64_t		  changes;	/* fwd_route_changes() */
	int			  restarts;
	struct stmt		  route;	/* zeroed: routes write their part */

	/* Between the thread and the loop, under mu. */
	pthread_t		  thread;
	int			  running;	/* thread made, not joined */
	pthread_mutex_t		  mu;
	pthread_cond_t		  cv;
	int			  stage;	/* STAGE_*: thread to loop */
	int			  copied;	/* loop to thread */
	int			  cancel;	/* loop to thread */
	int			  efd;		/* written at each stage */

	/* The thread's output. */
	char			 *msgs;		/* the file's errors, '\n' after each */
	size_t			  msgs_len, msgs_cap;
	int			  nerr;		/* config_load()'s result */
	int			  refused;	/* out of memory, or the diff said no */
	char			  err[STMT_LINE_MAX + 400];
	struct reload_plan	  pl;
	struct stmt_vec		  ifaces;	/* old's interfaces, kept */

	/* Applying. */
	struct event		 *ev_thread;
	struct event		 *ev_step;
	size_t			  next;
	int			  failed;
	int			  errors;
	size_t			  tls_changes;	/* files changed, same names */
	uint64_t		  t0, t_copy, t_read, step_max, copy_max;
	size_t			  steps, copy_steps;
};

static void
report_error(struct reload *r, const char *msg)
{
	log_warnx("reload: %s", msg);
	r->errors++;
	if (r->emit != NULL)
		r->emit(1, msg, r->arg);
}

/* In the thread: kept for the loop to report. */
static void
file_error(const char *msg, void *arg)
{
	struct reload	*r = arg;
	size_t		 n = strlen(msg), cap;
	char		*m;

	if (r->msgs_len + n + 2 > r->msgs_cap) {
		cap = (r->msgs_cap + n + 2) * 2;
		if ((m = realloc(r->msgs, cap)) == NULL)
			return;		/* the count of errors still says it */
		r->msgs = m;
		r->msgs_cap = cap;
	}
	memcpy(r->msgs + r->msgs_len, msg, n);
	r->msgs_len += n;
	r->msgs[r->msgs_len++] = '\n';
	r->msgs[r->msgs_len] = '\0';
}

static void
old_add(const struct stmt *st, void *arg)
{
	struct reload	*r = arg;

	if (stmt_vec_add(&r->old, st, 0) == -1)
		r->refused = 1;
}

/*
 * The new file as the state it asks for: what it leaves out is the
 * default, as at start-up, and a control socket given with -s stays.
 */
static int
reload_effective(struct reload *r, const struct config *cf,
    struct stmt_vec *l)
{
	struct stmt	 st, tmp;
	size_t		 i;
	int		 oom = 0;

	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < cf->lines.n; i++) {
		if (cf->lines.v[i].kind == STMT_CONTROL && r->control_fixed)
			continue;
		if (stmt_vec_add(l, stmt_vec_get(&cf->lines, i, &tmp),
		    cf->lines.v[i].line) == -1)
			return -1;
	}
#define DEFAULT(k) (memset(&st, 0, sizeof(st)), st.kind = (k), \
	find_kind(l, (k)) == NULL)
#define ADD() (oom |= stmt_vec_add(l, &st, 0))
	if (DEFAULT(STMT_NODE)) {
		snprintf(st.name, sizeof(st.name), "%s", r->node);
		ADD();
	}
	if (DEFAULT(STMT_NETWORK)) {
		snprintf(st.name, sizeof(st.name), "%s", VNETD_NETWORK_DEFAULT);
		ADD();
	}
	if (DEFAULT(STMT_CONTROL)) {
		snprintf(st.path, sizeof(st.path), "%s", r->control_fixed ?
		    r->control_path : VNETD_SOCKET);
		ADD();
	}
	if (DEFAULT(STMT_KEEPALIVE)) {
		st.num = VNETD_KEEPALIVE_DEFAULT;
		ADD();
	}
	if (DEFAULT(STMT_LIVENESS)) {
		st.live_interval = LIVENESS_INTERVAL_DEFAULT;
		ADD();
	}
	if (DEFAULT(STMT_LEARN))
		ADD();
	if (DEFAULT(STMT_OFFLOAD)) {
		st.flag = 1;
		ADD();
	}
	if (DEFAULT(STMT_THREADS))
		ADD();
	if (DEFAULT(STMT_ROUTING))
		ADD();
	if (DEFAULT(STMT_RELAY)) {
		st.flag = 1;
		ADD();
	}
#undef ADD
#undef DEFAULT
	return oom ? -1 : 0;
}

/* In the thread: tells the loop what is done. */
static void
reload_tell(struct reload *r, int stage)
{
	uint64_t	 one = 1;

	pthread_mutex_lock(&r->mu);
	r->stage = stage;
	pthread_mutex_unlock(&r->mu);
	while (write(r->efd, &one, sizeof(one)) == -1 && errno == EINTR)
		;
}

/* The thread. */
static void *
reload_work(void *arg)
{
	struct reload	*r = arg;
	struct config	 cf;
	struct stmt_vec	 new = { NULL, 0, 0 };
	size_t		 i;
	int		 cancel;

	/*
	 * Below the loop's priority: on a busy machine the loop, which
	 * forwards, should not wait for a core behind its own reload.
	 */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), RELOAD_NICE);
	/* The room reserved for the copy, touched here rather than there. */
	memset(r->old.v + r->old.n, 0, (r->old.cap - r->old.n) *
	    sizeof(r->old.v[0]));
	reload_tell(r, STAGE_TOUCHED);

	r->nerr = config_load(r->file, &cf, file_error, r);

	pthread_mutex_lock(&r->mu);
	while (!r->copied && !r->cancel)
		pthread_cond_wait(&r->cv, &r->mu);
	cancel = r->cancel;
	pthread_mutex_unlock(&r->mu);

	if (!cancel && r->nerr == 0 && !r->refused) {
		/* The file's lines are copied: freed before the peak. */
		if (reload_effective(r, &cf, &new) == -1)
			r->refused = 1;
		config_clear(&cf);
		if (!r->refused && reload_diff_vec(&r->old, &new, &r->pl,
		    r->err, sizeof(r->err)) == -1)
			r->refused = 1;
	}
	if (r->refused && r->err[0] == '\0')
		snprintf(r->err, sizeof(r->err), "out of memory");
	/* What the loop still needs of the copy; the rest is freed here. */
	for (i = 0; i < r->old.n; i++)
		if (r->old.v[i].kind == STMT_INTERFACE &&
		    stmt_vec_add(&r->ifaces, r->old.v[i].u.st, 0) == -1)
			break;
	stmt_vec_clear(&r->old);
	stmt_vec_clear(&new);
	config_clear(&cf);
	reload_tell(r, STAGE_DONE);
	return NULL;
}

static void
reload_free(struct reload *r)
{
	if (r->running) {
		pthread_mutex_lock(&r->mu);
		r->cancel = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
	}
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	if (r->ev_thread != NULL)
		event_free(r->ev_thread);
	if (r->ev_step != NULL)
		event_free(r->ev_step);
	if (r->efd != -1)
		close(r->efd);
	stmt_vec_clear(&r->old);
	stmt_vec_clear(&r->ifaces);
	reload_plan_clear(&r->pl);
	free(r->msgs);
	free(r);
}

static void
reload_finish(struct reload *r, int ok, const char *err)
{
	struct vnetd	*d = r->d;
	int		 again = r->again;
	char		 e[256];

	if (!ok)
		log_warnx("%s", err);
	/* Over before done() is called: its client may ask for another. */
	d->reload = NULL;
	if (r->done != NULL)
		r->done(ok ? 0 : -1, err, r->arg);
	reload_free(r);
	if (again) {
		log_info("reload: once more, for a SIGHUP that came meanwhile");
		if (reload_start(d, NULL, NULL, NULL, e, sizeof(e)) == -1)
			log_warnx("%s", e);
	}
}

/* What takes a step that succeeded back: only the first steps need it. */
static void
reload_undo(struct vnetd *d, const struct stmt *st)
{
	struct stmt	 inv;
	char		 e[256];

	inv = *st;
	inv.op = STMT_OP_DEL;
	if (vnetd_apply(d, &inv, 0, e, sizeof(e)) == -1)
		log_warnx("reload: undoing: %s", e);
}

/* A changed interface that cannot be made: the old one made again. */
static void
reload_keep_iface(struct reload *r, const char *name)
{
	const struct stmt	*prev;
	char			 e[256];
	size_t			 i;

	for (i = 0; i < r->ifaces.n; i++) {
		prev = r->ifaces.v[i].u.st;
		if (strcmp(prev->name, name) != 0)
			continue;
		if (vnetd_apply(r->d, prev, 0, e, sizeof(e)) == 0)
			log_warnx("reload: interface %s: kept as it was", name);
		else
			log_warnx("reload: interface %s: cannot make it again "
			    "as it was: %s", name, e);
		return;
	}
}

static void
copy_route(const struct stmt_match *src, const struct stmt_match *dst,
    const struct fwd_port *port, void *arg)
{
	struct reload	*r = arg;

	stmt_route_fill(&r->route, src, dst,
	    (enum stmt_target)fwd_port_kind(port), fwd_port_name(port));
	old_add(&r->route, r);
}

/* Copies routes for a step's time; 1 when they are all copied. */
static int
reload_copy(struct reload *r, uint64_t t0)
{
	struct fwd	*f = r->d->fwd;

	if (fwd_route_changes(f) != r->changes) {
		while (r->old.n > r->nhead)
			stmt_vec_pop(&r->old);
		r->at = NULL;
		r->changes = fwd_route_changes(f);
		r->restarts++;
	}
	do {
		fwd_route_walk(f, &r->at, COPY_CHUNK, copy_route, r);
		if (r->at == NULL)
			return 1;
	} while (r->restarts >= COPY_RESTARTS ||
	    vnetd_now_us() - t0 < STEP_US);
	return 0;
}

/* One change; -1 when a first step failed and everything was undone. */
static int
reload_apply_one(struct reload *r, size_t i, struct stmt *tmp)
{
	const struct stmt	*st = stmt_vec_get(&r->pl.steps, i, tmp);
	char			 line[STMT_LINE_MAX], e[256];
	char			 msg[STMT_LINE_MAX + 300];
	size_t			 j;

	if (vnetd_apply(r->d, st, 0, e, sizeof(e)) == 0) {
		if (r->emit == NULL && i >= LOG_CHANGES_MAX)
			return 0;
		stmt_print(st, line, sizeof(line));
		if (i < LOG_CHANGES_MAX)
			log_info("reload: %s", line);
		if (r->emit != NULL)
			r->emit(0, line, r->arg);
		return 0;
	}
	stmt_print(st, line, sizeof(line));
	snprintf(msg, sizeof(msg), "%s: %s", line, e);
	report_error(r, msg);
	if (i < r->pl.nprep) {
		for (j = i; j-- > 0;)
			reload_undo(r->d, stmt_vec_get(&r->pl.steps, j, tmp));
		snprintf(r->err, sizeof(r->err), "reload: %s; nothing changed",
		    msg);
		return -1;
	}
	r->failed++;
	if (st->kind == STMT_INTERFACE && st->op == STMT_OP_SET)
		reload_keep_iface(r, st->name);
	return 0;
}

static void
reload_tls_emit(int is_error, const char *line, void *arg)
{
	struct reload	*r = arg;

	log_info("reload: %s", line);
	if (r->emit != NULL)
		r->emit(is_error, line, r->arg);
}

/* The TLS files, read again once their names are applied: 0, or -1. */
static int
reload_tls(struct reload *r)
{
	char	 e[STMT_LINE_MAX + 100], msg[sizeof(e) + 100];
	int	 n;

	if ((n = vnetd_tls_reload(r->d, reload_tls_emit, r, e,
	    sizeof(e))) >= 0) {
		r->tls_changes = (size_t)n;
		return 0;
	}
	snprintf(msg, sizeof(msg), "TLS files not read again: %s; the "
	    "running certificate, key, CA and CRL stay in use", e);
	report_error(r, msg);
	r->failed++;
	r->tls_changes = 1;	/* the one that failed */
	return -1;
}

static void
reload_applied(struct reload *r)
{
	size_t	 total;

	(void)reload_tls(r);
	total = r->pl.steps.n + r->tls_changes;
	if (r->pl.steps.n > LOG_CHANGES_MAX)
		log_info("reload: and %zu more changes", r->pl.steps.n -
		    LOG_CHANGES_MAX);
	log_info("reload: %s: %zu change%s; running state copied in %llu ms "
	    "(%zu step%s of at most %llu us), file read and compared aside "
	    "in %llu ms more, changes applied in %zu step%s of at most %llu "
	    "us", r->file, total, total == 1 ? "" : "s",
	    (unsigned long long)(r->t_copy / 1000), r->copy_steps,
	    r->copy_steps == 1 ? "" : "s", (unsigned long long)r->copy_max,
	    (unsigned long long)((r->t_read - r->t_copy) / 1000), r->steps,
	    r->steps == 1 ? "" : "s", (unsigned long long)r->step_max);
	if (r->failed) {
		snprintf(r->err, sizeof(r->err), "reload: %d of %zu changes "
		    "failed", r->failed, total);
		reload_finish(r, 0, r->err);
	} else
		reload_finish(r, 1, "");
}

static void
reload_step(evutil_socket_t fd, short ev, void *arg)
{
	struct reload	*r = arg;
	struct timeval	 now = { 0, 0 };
	struct stmt	 tmp;
	uint64_t	 t0 = vnetd_now_us(), t;
	size_t		 n;

	if (r->state == RELOAD_COPYING) {
		n = reload_copy(r, t0);
		t = vnetd_now_us() - t0;
		if (t > r->copy_max)
			r->copy_max = t;
		r->copy_steps++;
		if (!n) {
			event_add(r->ev_step, &now);
			return;
		}
		r->t_copy = vnetd_now_us() - r->t0;
		r->state = RELOAD_COMPARING;
		pthread_mutex_lock(&r->mu);
		r->copied = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		return;
	}
	memset(&tmp, 0, sizeof(tmp));
	/* The first steps go together: they are undone together. */
	for (; r->next < r->pl.nprep; r->next++)
		if (reload_apply_one(r, r->next, &tmp) == -1) {
			reload_finish(r, 0, r->err);
			return;
		}
	for (n = 0; r->next < r->pl.steps.n; n++) {
		if (n > 0 && n % STEP_CHECK == 0 &&
		    vnetd_now_us() - t0 >= STEP_US)
			break;
		reload_apply_one(r, r->next++, &tmp);
	}
	t = vnetd_now_us() - t0;
	if (t > r->step_max)
		r->step_max = t;
	r->steps++;
	if (r->next < r->pl.steps.n) {
		/* A timer, not event_active(): the loop polls first. */
		event_add(r->ev_step, &now);
		return;
	}
	reload_applied(r);
}

/* The thread is done: its errors reported, the plan applied. */
static void
reload_compared(struct reload *r)
{
	struct timeval	 now = { 0, 0 };
	char		*m, *nl, e[STMT_LINE_MAX + 500];

	pthread_join(r->thread, NULL);
	r->running = 0;
	r->t_read = vnetd_now_us() - r->t0;
	r->state = RELOAD_APPLYING;
	for (m = r->msgs; m != NULL && (nl = strchr(m, '\n')) != NULL;
	    m = nl + 1) {
		*nl = '\0';
		report_error(r, m);
	}
	if (r->nerr != 0) {
		if (r->nerr == -1)
			snprintf(e, sizeof(e), "reload: cannot read %s; nothing "
			    "changed", r->file);
		else
			snprintf(e, sizeof(e), "reload: %d error%s in %s; "
			    "nothing changed", r->nerr, r->nerr == 1 ? "" : "s",
			    r->file);
		reload_finish(r, 0, e);
		return;
	}
	if (r->refused || r->err[0] != '\0') {
		report_error(r, r->err);
		snprintf(e, sizeof(e), "reload: %s; nothing changed", r->err);
		reload_finish(r, 0, e);
		return;
	}
	event_add(r->ev_step, &now);
}

static void
reload_thread_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct reload	*r = arg;
	struct timeval	 now = { 0, 0 };
	uint64_t	 v;
	int		 stage;

	if (read(r->efd, &v, sizeof(v)) == -1 && errno == EAGAIN)
		return;
	pthread_mutex_lock(&r->mu);
	stage = r->stage;
	pthread_mutex_unlock(&r->mu);
	if (r->state == RELOAD_PREPARING && stage >= STAGE_TOUCHED) {
		r->state = RELOAD_COPYING;
		event_add(r->ev_step, &now);
	}
	if (r->state == RELOAD_COMPARING && stage == STAGE_DONE)
		reload_compared(r);
}

int
reload_start(struct vnetd *d, void (*emit)(int, const char *, void *),
    void (*done)(int, const char *, void *), void *arg, char *err,
    size_t errlen)
{
	struct reload	*r;
	int		 e;

	if (d->reload != NULL) {
		if (emit == NULL && done == NULL) {
			d->reload->again = 1;
			return 0;
		}
		snprintf(err, errlen, "reload: one is under way; try again "
		    "when it is done");
		return -1;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "reload: out of memory; nothing changed");
		return -1;
	}
	r->d = d;
	r->efd = -1;
	r->emit = emit;
	r->done = done;
	r->arg = arg;
	r->t0 = vnetd_now_us();
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	snprintf(r->file, sizeof(r->file), "%s", d->config_file);
	vnetd_default_node(r->node, sizeof(r->node));
	snprintf(r->control_path, sizeof(r->control_path), "%s",
	    d->control_path);
	r->control_fixed = d->control_fixed;
	/* The routes come in steps, into room made now. */
	vnetd_config_but_routes(d, old_add, r);
	r->nhead = r->old.n;
	r->changes = fwd_route_changes(d->fwd);
	if (r->refused || stmt_vec_reserve(&r->old, r->nhead +
	    fwd_route_count(d->fwd) + 64) == -1) {
		snprintf(err, errlen, "reload: out of memory; nothing changed");
		goto fail;
	}
	if ((r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1 ||
	    (r->ev_thread = event_new(d->base, r->efd, EV_READ | EV_PERSIST,
	    reload_thread_cb, r)) == NULL ||
	    (r->ev_step = evtimer_new(d->base, reload_step, r)) == NULL ||
	    event_add(r->ev_thread, NULL) == -1) {
		snprintf(err, errlen, "reload: %s; nothing changed",
		    strerror(errno));
		goto fail;
	}
	r->state = RELOAD_PREPARING;
	if ((e = pthread_create(&r->thread, NULL, reload_work, r)) != 0) {
		snprintf(err, errlen, "reload: thread: %s; nothing changed",
		    strerror(e));
		goto fail;
	}
	r->running = 1;
	d->reload = r;
	return 0;
 fail:
	reload_free(r);
	return -1;
}

void
reload_forget(struct vnetd *d, void *arg)
{
	if (d->reload != NULL && d->reload->arg == arg) {
		d->reload->emit = NULL;
		d->reload->done = NULL;
		d->reload->arg = NULL;
	}
}

void
reload_cancel(struct vnetd *d)
{
	struct reload	*r = d->reload;

	if (r == NULL)
		return;
	/* Not done(): a client would go on with its requests; it is closed. */
	log_warnx("reload: stopped: vnetd is exiting");
	d->reload = NULL;
	reload_free(r);
}

struct reload_preview {
	void		(*emit)(int, const char *, void *);
	void		 *arg;
};

static void
preview_error(const char *msg, void *arg)
{
	struct reload_preview *pv = arg;

	if (pv->emit != NULL)
		pv->emit(1, msg, pv->arg);
}

/*
 * reload -n works as a reload does, from the loop and at once: it is asked
 * for by a person, and it applies nothing, so nothing waits on it but its
 * client.
 */
int
reload_preview(struct vnetd *d, void (*emit)(int, const char *, void *),
    void *arg, size_t *nchanges, char *err, size_t errlen)
{
	struct reload_preview	 pv = { emit, arg };
	struct reload		*r;
	struct config		 cf;
	struct stmt_vec		 new = { NULL, 0, 0 };
	struct stmt		 tmp;
	char			 line[STMT_LINE_MAX];
	size_t			 i;
	int			 nerr, ret = -1;

	*nchanges = 0;
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "reload -n: out of memory");
		return -1;
	}
	vnetd_default_node(r->node, sizeof(r->node));
	snprintf(r->control_path, sizeof(r->control_path), "%s",
	    d->control_path);
	r->control_fixed = d->control_fixed;
	if ((nerr = config_load(d->config_file, &cf, preview_error,
	    &pv)) != 0) {
		if (nerr == -1)
			snprintf(err, errlen, "reload -n: cannot read %s",
			    d->config_file);
		else
			snprintf(err, errlen, "reload -n: %d error%s in %s: "
			    "reload would change nothing", nerr,
			    nerr == 1 ? "" : "s", d->config_file);
		goto done;
	}
	vnetd_config(d, old_add, r);
	if (r->refused || reload_effective(r, &cf, &new) == -1) {
		snprintf(err, errlen, "reload -n: out of memory");
		goto done;
	}
	if (reload_diff_vec(&r->old, &new, &r->pl, r->err,
	    sizeof(r->err)) == -1) {
		snprintf(err, errlen, "reload -n: %s: reload would change "
		    "nothing", r->err);
		goto done;
	}
	memset(&tmp, 0, sizeof(tmp));
	for (i = 0; i < r->pl.steps.n; i++) {
		stmt_print(stmt_vec_get(&r->pl.steps, i, &tmp), line,
		    sizeof(line));
		if (emit != NULL)
			emit(0, line, arg);
	}
	*nchanges = r->pl.steps.n + vnetd_tls_changes(d, emit, arg);
	ret = 0;
 done:
	reload_plan_clear(&r->pl);
	stmt_vec_clear(&r->old);
	stmt_vec_clear(&new);
	config_clear(&cf);
	free(r);
	return ret;
}

#define RELOAD_NOTE_COMPARE_MAX	10000

void
reload_show_note(struct vnetd *d, struct evbuffer *out)
{
	char	 err[512];
	size_t	 n;

	if (d->config_file[0] == '\0')
		return;
	/* Comparing pauses forwarding (0.2 s for 50,000 routes): not unasked. */
	if (fwd_route_count(d->fwd) > RELOAD_NOTE_COMPARE_MAX) {
		evbuffer_add_printf(out, "%%message note: not compared with "
		    "%s (more than %d routes): vnetctl reload -n compares\n",
		    d->config_file, RELOAD_NOTE_COMPARE_MAX);
		return;
	}
	if (reload_preview(d, NULL, NULL, &n, err, sizeof(err)) == -1)
		evbuffer_add_printf(out, "%%message note: %s\n", err);
	else if (n > 0)
		evbuffer_add_printf(out, "%%message note: the running state "
		    "differs from %s: reload would make %zu change%s (vnetctl "
		    "reload -n lists them; save writes this state there)\n",
		    d->config_file, n, n == 1 ? "" : "s");
}
