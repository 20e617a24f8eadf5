/*
 * Reload.  The running state and the new file are both lists of
 * statements; the changes are the statements of one that the other lacks.
 * What did not change is not touched at all: a link that is in both keeps
 * its connection, its queue and its counters, and no frame on it is lost.
 *
 * Lists are compared pairwise, which is quadratic; configurations have
 * some hundreds of statements, and a reload is rare.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "paths.h"
#include "reload.h"
#include "sched.h"
#include "stmt.h"

struct stmt_list {
	struct stmt	*st;
	size_t		 n, cap;
	int		 oom;
};

static int
list_add(struct stmt_list *l, const struct stmt *st)
{
	struct stmt	*n;
	size_t		 cap;

	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 32;
		if ((n = reallocarray(l->st, cap, sizeof(*n))) == NULL) {
			l->oom = 1;
			return -1;
		}
		l->st = n;
		l->cap = cap;
	}
	l->st[l->n++] = *st;
	return 0;
}

static void
list_add_cb(const struct stmt *st, void *arg)
{
	list_add(arg, st);
}

static int
plan_add(struct reload_plan *pl, const struct stmt *st, enum stmt_op op)
{
	struct stmt_list	 l = { pl->st, pl->n, pl->cap, 0 };
	struct stmt		 c;

	/* A del- statement says only what names the thing. */
	memset(&c, 0, sizeof(c));
	c.kind = st->kind;
	c.op = op;
	if (op == STMT_OP_SET || st->kind == STMT_ROUTE ||
	    st->kind == STMT_LISTEN || st->kind == STMT_VCC)
		c = *st;
	else
		memcpy(c.name, st->name, sizeof(c.name));
	c.op = op;
	if (list_add(&l, &c) == -1)
		return -1;
	pl->st = l.st;
	pl->n = l.n;
	pl->cap = l.cap;
	return 0;
}

void
reload_plan_clear(struct reload_plan *pl)
{
	free(pl->st);
	memset(pl, 0, sizeof(*pl));
}

static const struct stmt *
find_kind(const struct stmt *l, size_t n, enum stmt_kind kind)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (l[i].kind == kind)
			return &l[i];
	return NULL;
}

static const struct stmt *
find_named(const struct stmt *l, size_t n, enum stmt_kind kind,
    const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (l[i].kind == kind && strcmp(l[i].name, name) == 0)
			return &l[i];
	return NULL;
}

static int
contains(const struct stmt *l, size_t n, const struct stmt *st)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (stmt_equal(&l[i], st))
			return 1;
	return 0;
}

/* Adds, with op, every statement of kind in a that b does not have. */
static int
plan_missing(struct reload_plan *pl, const struct stmt *a, size_t na,
    const struct stmt *b, size_t nb, enum stmt_kind kind, enum stmt_op op)
{
	size_t	 i;

	for (i = 0; i < na; i++)
		if (a[i].kind == kind && !contains(b, nb, &a[i]) &&
		    plan_add(pl, &a[i], op) == -1)
			return -1;
	return 0;
}

#define LOPT_ALL (STMT_LOPT_RATE | STMT_LOPT_AQM | STMT_LOPT_CONGESTION)

/* The same link but for its options: address, tls, peer, queue. */
static int
link_same(const struct stmt *a, const struct stmt *b)
{
	struct stmt	 x = *a, y = *b;

	x.lopts = y.lopts = 0;
	return stmt_equal(&x, &y);
}

static const struct stmt *
find_link(const struct stmt *l, size_t n, const struct stmt *st, int same)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (l[i].kind == STMT_LINK && l[i].op == STMT_OP_SET &&
		    strcmp(l[i].name, st->name) == 0 &&
		    (!same || link_same(&l[i], st)))
			return &l[i];
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
links_normal(const struct stmt *l, size_t n, struct stmt_list *out)
{
	struct stmt_list	 names = { NULL, 0, 0, 0 };
	struct sched_opts	 o;
	struct stmt		 st, *e;
	size_t			 i, j;

	for (i = 0; i < n; i++) {
		if ((l[i].kind != STMT_LINK && l[i].kind != STMT_SET_LINK) ||
		    l[i].op != STMT_OP_SET)
			continue;
		for (j = 0; j < names.n; j++)
			if (strcmp(names.st[j].name, l[i].name) == 0)
				break;
		if (j == names.n) {
			memset(&st, 0, sizeof(st));
			st.kind = STMT_SET_LINK;
			snprintf(st.name, sizeof(st.name), "%s", l[i].name);
			if (list_add(&names, &st) == -1)
				goto oom;
		}
		/* The merged options so far, as a statement that gives all. */
		e = &names.st[j];
		link_options_of(e, &o);
		sched_opts_from_stmt(&o, &l[i]);
		sched_opts_to_stmt(&o, e);
		e->lopts = LOPT_ALL;
	}
	for (i = 0; i < n; i++) {
		if (l[i].kind == STMT_SET_LINK && l[i].op == STMT_OP_SET)
			continue;
		st = l[i];
		if (st.kind == STMT_LINK && st.op == STMT_OP_SET) {
			for (j = 0; strcmp(names.st[j].name, st.name) != 0; j++)
				;
			names.st[j].op = STMT_OP_DEL;	/* marks: has a link */
			link_options_of(&names.st[j], &o);
			sched_opts_to_stmt(&o, &st);
		}
		if (list_add(out, &st) == -1)
			goto oom;
	}
	for (j = 0; j < names.n; j++) {
		if (names.st[j].op == STMT_OP_DEL)
			continue;
		st = names.st[j];
		st.op = STMT_OP_SET;
		link_options_of(&names.st[j], &o);
		sched_opts_to_stmt(&o, &st);
		if (st.lopts != 0 && list_add(out, &st) == -1)
			goto oom;
	}
	free(names.st);
	return 0;
 oom:
	free(names.st);
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
plan_links(struct reload_plan *pl, const struct stmt *old, size_t nold,
    const struct stmt *new, size_t nnew, int del)
{
	const struct stmt	*o, *n;
	struct stmt		 st;
	size_t			 i;

	if (del) {
		for (i = 0; i < nold; i++)
			if (old[i].kind == STMT_LINK &&
			    find_link(new, nnew, &old[i], 1) == NULL &&
			    plan_add(pl, &old[i], STMT_OP_DEL) == -1)
				return -1;
		return 0;
	}
	for (i = 0; i < nnew; i++) {
		if (new[i].kind != STMT_LINK)
			continue;
		if ((o = find_link(old, nold, &new[i], 1)) == NULL) {
			/* Options set-link gave the name would stay. */
			st = new[i];
			if (find_named(old, nold, STMT_SET_LINK,
			    st.name) != NULL)
				link_options_full(&st, &new[i]);
			if (plan_add(pl, &st, STMT_OP_SET) == -1)
				return -1;
		} else if (!stmt_equal(o, &new[i]) &&
		    plan_set_link(pl, new[i].name, &new[i]) == -1)
			return -1;
	}
	/*
	 * Options by name, for names without a link in the new file: those
	 * that changed or went, then those that are new.
	 */
	for (i = 0; i < nold; i++) {
		if (old[i].kind != STMT_SET_LINK ||
		    find_link(new, nnew, &old[i], 0) != NULL)
			continue;
		n = find_named(new, nnew, STMT_SET_LINK, old[i].name);
		if ((n == NULL || !stmt_equal(&old[i], n)) &&
		    plan_set_link(pl, old[i].name, n) == -1)
			return -1;
	}
	for (i = 0; i < nnew; i++)	/* (links_normal left no link's) */
		if (new[i].kind == STMT_SET_LINK &&
		    find_named(old, nold, STMT_SET_LINK, new[i].name) == NULL &&
		    plan_set_link(pl, new[i].name, &new[i]) == -1)
			return -1;
	return 0;
}

/* Interfaces of names in both lists but made differently (1), or new (0). */
static int
plan_interfaces(struct reload_plan *pl, const struct stmt *old, size_t nold,
    const struct stmt *new, size_t nnew, int changed)
{
	size_t	 i;
	int	 known;

	for (i = 0; i < nnew; i++) {
		if (new[i].kind != STMT_INTERFACE || contains(old, nold, &new[i]))
			continue;
		known = find_named(old, nold, STMT_INTERFACE,
		    new[i].name) != NULL;
		if (known == changed && plan_add(pl, &new[i], STMT_OP_SET) == -1)
			return -1;
	}
	return 0;
}

int
reload_diff(const struct stmt *old, size_t nold, const struct stmt *new,
    size_t nnew, struct reload_plan *pl, char *err, size_t errlen)
{
	const struct stmt	*o, *n;
	struct stmt_list	 norm = { NULL, 0, 0, 0 };
	char			 a[STMT_LINE_MAX], b[STMT_LINE_MAX];
	enum stmt_kind		 k;

	memset(pl, 0, sizeof(*pl));
	if (links_normal(new, nnew, &norm) == -1)
		goto oom;
	new = norm.st;
	nnew = norm.n;
	/* Settings made or read once at start cannot change. */
	for (k = STMT_NODE; k <= STMT_KIND_LAST; k++) {
		if (!stmt_is_setting(k) || !vnetd_startup_only(k))
			continue;
		if ((n = find_kind(new, nnew, k)) == NULL)
			continue;
		if ((o = find_kind(old, nold, k)) != NULL && stmt_equal(o, n))
			continue;
		if (o != NULL)
			stmt_print(o, a, sizeof(a));
		else
			snprintf(a, sizeof(a), "none");
		stmt_print(n, b, sizeof(b));
		snprintf(err, errlen, "'%s' (running: '%s') cannot change "
		    "at run time: restart vnetd for it", b, a);
		free(norm.st);
		return -1;
	}

	/* The steps that can fail come first, so that they can be undone. */
	if (plan_missing(pl, new, nnew, old, nold, STMT_LISTEN,
	    STMT_OP_SET) == -1 ||
	    plan_interfaces(pl, old, nold, new, nnew, 0) == -1)
		goto oom;
	pl->nprep = pl->n;

	/*
	 * vcc policies that changed are removed and given again: a class
	 * given in parts in the file is rebuilt from its parts.
	 */
	if (plan_missing(pl, old, nold, new, nnew, STMT_VCC,
	    STMT_OP_DEL) == -1 ||
	    plan_missing(pl, old, nold, new, nnew, STMT_ROUTE,
	    STMT_OP_DEL) == -1 ||
	    plan_links(pl, old, nold, new, nnew, 1) == -1 ||
	    plan_missing(pl, old, nold, new, nnew, STMT_INTERFACE,
	    STMT_OP_DEL) == -1 ||
	    plan_missing(pl, old, nold, new, nnew, STMT_LISTEN,
	    STMT_OP_DEL) == -1)
		goto oom;
	/* The other settings are given again. */
	for (k = STMT_NODE; k <= STMT_KIND_LAST; k++) {
		if (!stmt_is_setting(k) || vnetd_startup_only(k))
			continue;
		if ((n = find_kind(new, nnew, k)) == NULL)
			continue;
		if ((o = find_kind(old, nold, k)) != NULL && stmt_equal(o, n))
			continue;
		if (plan_add(pl, n, STMT_OP_SET) == -1)
			goto oom;
	}
	if (plan_interfaces(pl, old, nold, new, nnew, 1) == -1 ||
	    plan_links(pl, old, nold, new, nnew, 0) == -1 ||
	    plan_missing(pl, new, nnew, old, nold, STMT_ROUTE,
	    STMT_OP_SET) == -1 ||
	    plan_missing(pl, new, nnew, old, nold, STMT_VCC,
	    STMT_OP_SET) == -1)
		goto oom;
	free(norm.st);
	return 0;
 oom:
	free(norm.st);
	reload_plan_clear(pl);
	snprintf(err, errlen, "out of memory");
	return -1;
}

struct reload_report {
	void		(*emit)(int, const char *, void *);
	void		 *arg;
	int		  errors;
};

static void
report_error(struct reload_report *r, const char *msg)
{
	log_warnx("reload: %s", msg);
	r->errors++;
	if (r->emit != NULL)
		r->emit(1, msg, r->arg);
}

static void
file_error(const char *msg, void *arg)
{
	report_error(arg, msg);
}

/*
 * The new file as the state it asks for: what it leaves out is the
 * default, as at start-up, and a control socket given with -s stays.
 */
static int
reload_effective(struct vnetd *d, const struct config *cf,
    struct stmt_list *l)
{
	struct stmt	 st;
	size_t		 i;

	for (i = 0; i < cf->n; i++) {
		if (cf->lines[i].st.kind == STMT_CONTROL && d->control_fixed)
			continue;
		list_add(l, &cf->lines[i].st);
	}
#define DEFAULT(k) (memset(&st, 0, sizeof(st)), st.kind = (k), \
	find_kind(l->st, l->n, (k)) == NULL)
	if (DEFAULT(STMT_NODE)) {
		vnetd_default_node(st.name, sizeof(st.name));
		list_add(l, &st);
	}
	if (DEFAULT(STMT_NETWORK)) {
		snprintf(st.name, sizeof(st.name), "%s", VNETD_NETWORK_DEFAULT);
		list_add(l, &st);
	}
	if (DEFAULT(STMT_CONTROL)) {
		snprintf(st.path, sizeof(st.path), "%s", d->control_fixed ?
		    d->control_path : VNETD_SOCKET);
		list_add(l, &st);
	}
	if (DEFAULT(STMT_KEEPALIVE)) {
		st.num = VNETD_KEEPALIVE_DEFAULT;
		list_add(l, &st);
	}
	if (DEFAULT(STMT_LEARN))
		list_add(l, &st);
	if (DEFAULT(STMT_OFFLOAD)) {
		st.flag = 1;
		list_add(l, &st);
	}
	if (DEFAULT(STMT_THREADS))
		list_add(l, &st);
#undef DEFAULT
	return l->oom ? -1 : 0;
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

int
reload_run(struct vnetd *d, void (*emit)(int, const char *, void *),
    void *arg, char *err, size_t errlen)
{
	struct reload_report	 r = { emit, arg, 0 };
	struct config		 cf;
	struct stmt_list	 old, new;
	struct reload_plan	 pl;
	const struct stmt	*st, *prev;
	char			 line[STMT_LINE_MAX], e[256];
	char			 msg[STMT_LINE_MAX + 300];
	size_t			 i, j;
	int			 nerr, ret = -1, failed = 0;

	memset(&old, 0, sizeof(old));
	memset(&new, 0, sizeof(new));
	memset(&pl, 0, sizeof(pl));
	nerr = config_load(d->config_file, &cf, file_error, &r);
	if (nerr != 0) {
		if (nerr == -1)
			snprintf(err, errlen, "reload: cannot read %s; nothing "
			    "changed", d->config_file);
		else
			snprintf(err, errlen, "reload: %d error%s in %s; "
			    "nothing changed", nerr, nerr == 1 ? "" : "s",
			    d->config_file);
		goto done;
	}
	vnetd_config(d, list_add_cb, &old);
	if (old.oom || reload_effective(d, &cf, &new) == -1) {
		snprintf(err, errlen, "reload: out of memory; nothing changed");
		goto done;
	}
	if (reload_diff(old.st, old.n, new.st, new.n, &pl, e,
	    sizeof(e)) == -1) {
		report_error(&r, e);
		snprintf(err, errlen, "reload: %s; nothing changed", e);
		goto done;
	}
	for (i = 0; i < pl.n; i++) {
		st = &pl.st[i];
		stmt_print(st, line, sizeof(line));
		if (vnetd_apply(d, st, 0, e, sizeof(e)) == 0) {
			log_info("reload: %s", line);
			if (emit != NULL)
				emit(0, line, arg);
			continue;
		}
		snprintf(msg, sizeof(msg), "%s: %s", line, e);
		report_error(&r, msg);
		if (i < pl.nprep) {
			for (j = i; j-- > 0;)
				reload_undo(d, &pl.st[j]);
			snprintf(err, errlen, "reload: %s; nothing changed",
			    msg);
			goto done;
		}
		failed++;
		/* A changed interface that cannot be made: keep the old one. */
		if (st->kind == STMT_INTERFACE && st->op == STMT_OP_SET &&
		    (prev = find_named(old.st, old.n, STMT_INTERFACE,
		    st->name)) != NULL) {
			if (vnetd_apply(d, prev, 0, e, sizeof(e)) == 0)
				log_warnx("reload: interface %s: kept as it "
				    "was", st->name);
			else
				log_warnx("reload: interface %s: cannot make "
				    "it again as it was: %s", st->name, e);
		}
	}
	if (failed) {
		snprintf(err, errlen, "reload: %d of %zu changes failed",
		    failed, pl.n);
		goto done;
	}
	log_info("reload: %s: %zu change%s", d->config_file, pl.n,
	    pl.n == 1 ? "" : "s");
	ret = 0;
 done:
	reload_plan_clear(&pl);
	free(old.st);
	free(new.st);
	config_clear(&cf);
	return ret;
}

struct reload_preview {
	void		(*emit)(int, const char *, void *);
	void		 *arg;
	int		  errors;
};

static void
preview_error(const char *msg, void *arg)
{
	struct reload_preview *pv = arg;

	pv->errors++;
	if (pv->emit != NULL)
		pv->emit(1, msg, pv->arg);
}

int
reload_preview(struct vnetd *d, void (*emit)(int, const char *, void *),
    void *arg, size_t *nchanges, char *err, size_t errlen)
{
	struct reload_preview	 pv = { emit, arg, 0 };
	struct config		 cf;
	struct stmt_list	 old, new;
	struct reload_plan	 pl;
	char			 line[STMT_LINE_MAX], e[256];
	size_t			 i;
	int			 nerr, ret = -1;

	memset(&old, 0, sizeof(old));
	memset(&new, 0, sizeof(new));
	memset(&pl, 0, sizeof(pl));
	*nchanges = 0;
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
	vnetd_config(d, list_add_cb, &old);
	if (old.oom || reload_effective(d, &cf, &new) == -1) {
		snprintf(err, errlen, "reload -n: out of memory");
		goto done;
	}
	if (reload_diff(old.st, old.n, new.st, new.n, &pl, e,
	    sizeof(e)) == -1) {
		snprintf(err, errlen, "reload -n: %s: reload would change "
		    "nothing", e);
		goto done;
	}
	for (i = 0; i < pl.n; i++) {
		stmt_print(&pl.st[i], line, sizeof(line));
		if (emit != NULL)
			emit(0, line, arg);
	}
	*nchanges = pl.n;
	ret = 0;
 done:
	reload_plan_clear(&pl);
	free(old.st);
	free(new.st);
	config_clear(&cf);
	return ret;
}
