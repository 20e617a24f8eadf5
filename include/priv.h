/*
 * Dropping root: after vnetd has opened its devices and sockets it becomes
 * `user NAME`, keeping only CAP_NET_ADMIN (so that TAP interfaces added
 * later can still be made and brought up).
 */
#ifndef VNET_PRIV_H
#define VNET_PRIV_H

#include <sys/types.h>
#include <stddef.h>

/* Becomes uid/gid (no supplementary groups) with CAP_NET_ADMIN alone. */
int	 priv_drop(uid_t uid, gid_t gid, char *err, size_t errlen);

#endif
