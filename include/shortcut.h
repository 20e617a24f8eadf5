/*
 * Shortcuts (`adapt shortcuts yes`): the glue between the pure policy
 * (adapt.h) and the links.  adapt.c decides from the pair rates; this part
 * measures them from the traffic matrix and the records, and makes, drains
 * and removes the links through the statements the control socket takes
 * (link, del-link: routing_env's apply), never by calling the links.
 *
 * A pair's rate is what this node's guests send to the peer's (over the
 * last second) plus what the peer's last record says its guests send to
 * ours.  A shortcut is a configured link named after the peer; a draining
 * one stays open but out of our record and our routes, so both ends route
 * through the relay while the frames already on it arrive.
 */
#ifndef VNET_SHORTCUT_H
#define VNET_SHORTCUT_H

#include <stddef.h>

#include "stmt.h"

struct evbuffer;
struct routing;
struct routing_nbr;
struct shortcut;

struct shortcut	*shortcut_new(void);
void		 shortcut_free(struct shortcut *);
/* With routing_start(): the policy, with routing auto only; 0 or -1. */
int		 shortcut_start(struct routing *);
/* `adapt shortcuts ...`, and `adapt on|off` at run time. */
int		 shortcut_apply(struct routing *, const struct stmt *,
		    char *err, size_t errlen);
/* 1 with `adapt shortcuts yes` (and routing auto). */
int		 shortcut_on(const struct routing *);
/* Once a second: every peer's rate through adapt.c, and what it says. */
void		 shortcut_round(struct routing *);
/* 1 while the link must stay out of our record and routes. */
int		 shortcut_draining(struct routing *, const struct routing_nbr *);
/* 1 if the link (name, configured) is a shortcut this node made. */
int		 shortcut_made(const struct routing *, const char *name,
		    int configured);
/*
 * `show links`: "auto" for a shortcut (ours or the peer's) with the rate
 * that made it in trigger and why in *reason, else "-".
 */
const char	*shortcut_origin(const struct routing *, const char *name,
		    int configured, char *trigger, size_t len,
		    const char **reason);
void		 shortcut_show(struct routing *, struct evbuffer *);
void		 shortcut_show_stats(struct routing *, struct evbuffer *);
struct metric_out;
void		 shortcut_metrics(struct routing *, const struct metric_out *);
void		 shortcut_config(struct routing *,
		    void (*cb)(const struct stmt *, void *), void *arg);

#endif
