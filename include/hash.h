/*
 * FNV-1a, 32 bits: the hash of the flow queues, the vCC flow table and the
 * forwarding ports.  Callers seed the basis where a peer could otherwise
 * aim many keys at one bucket.
 */
#ifndef VNET_HASH_H
#define VNET_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV_BASIS	2166136261u

static inline uint32_t
hash_fnv1a(uint32_t h, const void *data, size_t n)
{
	const uint8_t	*p = data;
	size_t		 i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

#endif
