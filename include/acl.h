/*
 * Allow lists of plain listeners: which peer addresses may connect.  Pure:
 * an address in, a verdict out.
 */
#ifndef VNET_ACL_H
#define VNET_ACL_H

#include <sys/socket.h>
#include <stddef.h>

#include "stmt.h"

/* 1 if sa (AF_INET or AF_INET6) is in one of the n blocks. */
int	 acl_match(const struct stmt_cidr *, size_t n, const struct sockaddr *sa);

/* 1 if sa is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104). */
int	 acl_loopback(const struct sockaddr *sa);

/*
 * The verdict of a listener: a TLS listener takes everyone its list names
 * (everyone without a list); a plain one its list, or loopback alone.
 */
int	 acl_allows(int tls, const struct stmt_cidr *, size_t n,
	    const struct sockaddr *sa);

#endif
