/* Ethernet addresses: parsing, printing, classification. */
#ifndef VNET_ETHER_H
#define VNET_ETHER_H

#include <stddef.h>
#include <stdint.h>

#define ETHER_ADDR_LEN	6
#define ETHER_HDR_LEN	14
#define ETHER_ADDR_STRLEN 18	/* "00:11:22:33:44:55" and NUL */

/* Parses "00:11:22:33:44:55" (also with '-'); 0 on success, -1 otherwise. */
int	 ether_parse(const char *s, uint8_t mac[ETHER_ADDR_LEN]);
/* Lower-case colon form into buf (at least ETHER_ADDR_STRLEN); returns buf. */
char	*ether_format(const uint8_t mac[ETHER_ADDR_LEN], char *buf);

static inline int
ether_is_multicast(const uint8_t mac[ETHER_ADDR_LEN])
{
	return mac[0] & 1;	/* broadcast included */
}

#endif
