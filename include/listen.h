/*
 * Listeners: the sockets peers connect to (`listen HOST:PORT`), each with
 * its allow list, checked before anything is read from the peer.  "*"
 * listens on IPv4 and IPv6, each on its own socket.  A connection a
 * listener takes goes to its owner's accept callback (links_accept()).
 *
 * accept() failing (out of descriptors, most likely) pauses a listening
 * socket for a second instead of spinning on it (listen_accept_pause()).
 */
#ifndef VNET_LISTEN_H
#define VNET_LISTEN_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <stdint.h>

#include "stmt.h"

struct evbuffer;
struct event;
struct event_base;
struct evconnlistener;
struct metric_out;

struct listener {
	TAILQ_ENTRY(listener)	 entry;
	struct listeners	*ls_set;
	struct stmt_hostport	 addr;
	struct evconnlistener	*lev[2];
	struct event		*resume[2];	/* lev[i]'s accept pause */
	int			 tls;
	struct stmt_cidr	 allow[STMT_ALLOW_MAX];
	unsigned int		 nallow;
};

TAILQ_HEAD(listener_list, listener);

struct listeners {
	struct listener_list	 list;
	struct event_base	*base;
	/* A connection allowed in: fd is the callee's. */
	void			 (*accept)(void *arg, int fd,
				    const struct sockaddr *, int socklen,
				    int tls);
	/* One refused by an allow list (already logged and counted). */
	void			 (*refused)(void *arg, const char *host,
				    const char *why);
	void			*arg;
	uint64_t		 not_allowed;	/* connections refused so */
};

void	 listen_init(struct listeners *, struct event_base *,
	    void (*accept)(void *, int, const struct sockaddr *, int, int),
	    void (*refused)(void *, const char *, const char *), void *arg);
/* Closes every listener (connections accepted stay). */
void	 listen_free(struct listeners *);
/* `listen HOST:PORT ...`: 0, or -1 with err. */
int	 listen_add(struct listeners *, const struct stmt *, char *err,
	    size_t errlen);
/* `no listen HOST:PORT`: 0, or -1 with err. */
int	 listen_del(struct listeners *, const struct stmt_hostport *,
	    char *err, size_t errlen);
int	 listen_empty(const struct listeners *);
/* Its row of show stats; its sample of vnet_refused_total (conn.h). */
void	 listen_show_stats(const struct listeners *, struct evbuffer *);
void	 listen_metrics_refused(const struct listeners *,
	    const struct metric_out *);
/* Calls cb with each listener's statement, in the order they were made. */
void	 listen_config(const struct listeners *,
	    void (*cb)(const struct stmt *, void *), void *arg);

/*
 * accept() failed (out of descriptors, most likely): stop accepting on lev
 * for a second, instead of spinning on a listener that stays readable.
 * resume is lev's own timer, from listen_accept_timer(): its owner frees it
 * with lev, so a listener removed while paused leaves nothing behind.
 */
struct event *listen_accept_timer(struct evconnlistener *);
void	 listen_accept_pause(struct evconnlistener *, struct event *resume);

#endif
