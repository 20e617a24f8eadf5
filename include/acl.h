/*
 * Allow lists of plain listeners: which peer addresses may connect.  Pure:
 * an address in, a verdict out.
 */
#ifndef VNET_ACL_H
#define VNET_ACL_H

#include <sys/socket.h>
#include <stddef.h>

#include "stmt.h"

/*
 * The verdict of a listener: a TLS listener takes everyone its list names
 * (everyone without a list); a plain one its list, or loopback alone.
 */
int	 acl_allows(int tls, const struct stmt_cidr *, size_t n,
	    const struct sockaddr *sa);

#endif
