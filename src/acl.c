#include <sys/socket.h>
#include <netinet/in.h>

#include <string.h>

#include "acl.h"

static const uint8_t v4mapped[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

/*
 * The address as its family and bytes; an IPv4-mapped IPv6 address is the
 * IPv4 address it carries, so that "allow 10.0.0.0/8" means the same on a
 * dual-stack socket.
 */
static int
acl_addr(const struct sockaddr *sa, const uint8_t **addr)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;

	switch (sa->sa_family) {
	case AF_INET:
		sin = (const struct sockaddr_in *)(const void *)sa;
		*addr = (const uint8_t *)&sin->sin_addr;
		return AF_INET;
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)(const void *)sa;
		*addr = sin6->sin6_addr.s6_addr;
		if (memcmp(*addr, v4mapped, sizeof(v4mapped)) == 0) {
			*addr += sizeof(v4mapped);
			return AF_INET;
		}
		return AF_INET6;
	}
	return -1;
}

static int
prefix_match(const uint8_t *a, const uint8_t *net, unsigned int plen)
{
	unsigned int	 full = plen / 8, rest = plen % 8;
	uint8_t		 mask;

	if (memcmp(a, net, full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (net[full] & mask);
}

/* 1 if sa (AF_INET or AF_INET6) is in one of the n blocks. */
static int
acl_match(const struct stmt_cidr *list, size_t n, const struct sockaddr *sa)
{
	const uint8_t	*addr;
	int		 family;
	size_t		 i;

	if ((family = acl_addr(sa, &addr)) == -1)
		return 0;
	for (i = 0; i < n; i++) {
		if (list[i].family != family)
			continue;
		if (list[i].plen > (family == AF_INET ? 32 : 128))
			continue;
		if (prefix_match(addr, list[i].addr, list[i].plen))
			return 1;
	}
	return 0;
}

/* 1 if sa is a loopback address: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104. */
static int
acl_loopback(const struct sockaddr *sa)
{
	static const uint8_t	 v6lo[16] = { [15] = 1 };
	const uint8_t		*addr;

	switch (acl_addr(sa, &addr)) {
	case AF_INET:
		return addr[0] == 127;
	case AF_INET6:
		return memcmp(addr, v6lo, sizeof(v6lo)) == 0;
	}
	return 0;
}

int
acl_allows(int tls, const struct stmt_cidr *list, size_t n,
    const struct sockaddr *sa)
{
	if (n > 0)
		return acl_match(list, n, sa);
	return tls || acl_loopback(sa);
}
