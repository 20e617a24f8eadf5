/*
 * The control plane (routing.h) bound to a daemon: its module (daemon.h)
 * with the statements, start, show and configuration hooks, the links'
 * hooks (records, links up and down, who made a link), the switch's hook
 * for guests' frames, and the routing_env that reaches the links, the
 * interfaces, the listeners and the clock, with a libevent timer.
 * vnetd.c adds it; so does a test that makes whole daemons.
 */
#ifndef VNET_ROUTING_DAEMON_H
#define VNET_ROUTING_DAEMON_H

struct vnetd;

/* After vnetd_init(); 0, or -1 (out of memory, or the modules are full). */
int	 routing_daemon_add(struct vnetd *);

#endif
