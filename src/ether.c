#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "ether.h"

int
ether_parse(const char *s, uint8_t mac[ETHER_ADDR_LEN])
{
	int	 i, hi, lo;
	char	 sep = 0;

	if (strlen(s) != ETHER_ADDR_STRLEN - 1)
		return -1;
	for (i = 0; i < ETHER_ADDR_LEN; i++) {
		hi = buf_hexval((unsigned char)s[3 * i]);
		lo = buf_hexval((unsigned char)s[3 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		if (i < ETHER_ADDR_LEN - 1) {
			char c = s[3 * i + 2];
			if (c != ':' && c != '-')
				return -1;
			if (sep == 0)
				sep = c;
			else if (c != sep)
				return -1;
		}
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

char *
ether_format(const uint8_t mac[ETHER_ADDR_LEN], char *buf)
{
	snprintf(buf, ETHER_ADDR_STRLEN, "%02x:%02x:%02x:%02x:%02x:%02x",
	    mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	return buf;
}
