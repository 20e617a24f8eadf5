/* The control socket: a Unix stream socket speaking the protocol in ctl.h. */
#ifndef VNET_CONTROL_H
#define VNET_CONTROL_H

#include <stddef.h>

struct vnetd;
struct control;
struct evbuffer;

/*
 * What one control client may make the daemon hold (see vnetd(8), SECURITY):
 * no request is read while more than CONTROL_OUT_HIGH bytes of replies wait
 * for the client, until they fall below CONTROL_OUT_LOW; a client with more
 * than CONTROL_OUT_MAX waiting (one reply that large) is dropped; a client
 * idle for CONTROL_IDLE_TIMEOUT seconds, or not taking its replies for as
 * long, is closed; at most CONTROL_CONN_MAX clients at a time, the last
 * slot for root.
 */
#define CONTROL_OUT_HIGH	(1024 * 1024)
#define CONTROL_OUT_LOW		(256 * 1024)
#define CONTROL_OUT_MAX		(128 * 1024 * 1024)
#define CONTROL_IDLE_TIMEOUT	30	/* s */
#define CONTROL_CONN_MAX	32

/*
 * Binds and listens on path (mode 0600, or 0660 and group control-group
 * when the daemon has one).  A stale socket left by a dead
 * daemon is replaced; a live one (a daemon answers on it) is an error.
 */
struct control	*control_open(struct vnetd *, const char *path, char *err,
		    size_t errlen);
void		 control_close(struct control *);
/* Rows of `show stats`: clients now, and those refused, dropped, timed out. */
void		 control_show_stats(const struct control *,
		    struct evbuffer *);

#endif
