/*
 * Reload: read the configuration file again and apply only the difference
 * between it and the running state, so that the links, interfaces and
 * routes that did not change keep running untouched.
 *
 * The difference is a pure function (statements in, changes out) that the
 * unit tests drive; reload_start() reads the file, compares it with the
 * running state and applies the changes, with frames forwarded all along.
 */
#ifndef VNET_RELOAD_H
#define VNET_RELOAD_H

#include <stddef.h>

#include "stmt.h"

struct vnetd;

/*
 * The changes, in the order they are applied.  The first nprep can fail
 * for reasons no check foresees (an address in use, a device that cannot be
 * opened) and are easy to undo: they are the new listeners and the
 * interfaces of new names.  When one of them fails, those before it are
 * undone and nothing has changed.  Then come, in this order: vcc policies,
 * routes, links, interfaces and listeners removed (a changed link,
 * interface or vcc policy is removed and made again), settings, changed
 * interfaces, new links, link options (set-link, every option given: a
 * link whose options alone changed is not made again), new routes, new vcc
 * policies.  A file's link options are compared in the running state's
 * form: merged per link name, on the link statement if there is one.
 */
struct reload_plan {
	struct stmt_vec	 steps;		/* op STMT_OP_SET or STMT_OP_DEL */
	size_t		 nprep;
};

/*
 * Compares the running state (old, as vnetd_config() gives it) with a new
 * configuration.  A setting (node, network, control, keepalive, learn) that
 * the new list lacks is taken as unchanged: the caller fills in defaults
 * where the absence means the default.  node, network and control cannot
 * change at run time: -1 with a message in err if they differ, as for no
 * memory.  0 with the plan filled (possibly empty) otherwise.
 */
int	 reload_diff(const struct stmt *old, size_t nold,
	    const struct stmt *new, size_t nnew, struct reload_plan *,
	    char *err, size_t errlen);
/* The same for lists; the time it takes grows as n log n at most. */
int	 reload_diff_vec(const struct stmt_vec *old, const struct stmt_vec *new,
	    struct reload_plan *, char *err, size_t errlen);
void	 reload_plan_clear(struct reload_plan *);

/*
 * Starts reloading the daemon's configuration file; the event loop does the
 * rest, and frames are forwarded all along: the file is read and compared
 * with a copy of the running state by a thread, and the changes are applied
 * from the loop in steps of about a millisecond each.  Every change applied
 * and every error is logged, and passed to emit (when not NULL): is_error 0
 * with the change as a statement, 1 with an error ("FILE:LINE: message"
 * for the file's errors).  At the end done (when not NULL) gets 0, or -1
 * with a summary.  A file with errors is refused whole: nothing changes.
 * One reload at a time: while one is under way another is refused (-1 with
 * a message in err), but one without emit and done (SIGHUP) is done once
 * more after it.  Returns 0 once started, or -1 with a message in err.
 */
int	 reload_start(struct vnetd *,
	    void (*emit)(int is_error, const char *line, void *arg),
	    void (*done)(int result, const char *err, void *arg), void *arg,
	    char *err, size_t errlen);
/* The client arg is gone: no more calls to its emit and done. */
void	 reload_forget(struct vnetd *, void *arg);
/* Stops a reload under way (the daemon exits; its client is not told). */
void	 reload_cancel(struct vnetd *);

/*
 * reload -n: the changes reload_start() would apply now, passed to emit as
 * it would (is_error 0: a change; 1: an error of the file), applied to
 * nothing and logged nowhere.  *nchanges: how many.  Returns 0, or -1
 * with a summary in err when reload would refuse the file.
 */
int	 reload_preview(struct vnetd *,
	    void (*emit)(int is_error, const char *line, void *arg), void *arg,
	    size_t *nchanges, char *err, size_t errlen);

/*
 * After show config, a note (to standard error, not into the
 * configuration) when the running state is not the file's: reload would
 * undo changes made at run time and not saved.
 */
struct evbuffer;
void	 reload_show_note(struct vnetd *, struct evbuffer *);

#endif
