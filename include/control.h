/* The control socket: a Unix stream socket speaking the protocol in ctl.h. */
#ifndef VNET_CONTROL_H
#define VNET_CONTROL_H

#include <stddef.h>

struct vnetd;
struct control;

/*
 * Binds and listens on path (mode 0600, or 0660 and group control-group
 * when the daemon has one).  A stale socket left by a dead
 * daemon is replaced; a live one (a daemon answers on it) is an error.
 */
struct control	*control_open(struct vnetd *, const char *path, char *err,
		    size_t errlen);
void		 control_close(struct control *);

#endif
