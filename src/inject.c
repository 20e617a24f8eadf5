#include "inject.h"

/*
 * Bytes of a frame that go into its hash: the Ethernet, IP and TCP or UDP
 * headers tell frames apart.  Short frames count as padded with zeros to
 * the Ethernet minimum, since a frame that comes back may have been padded.
 */
#define INJECT_HASH_LEN		64
#define INJECT_ETHER_MIN	60

/* FNV-1a over the head of the frame, padded as described above. */
static uint64_t
inject_hash(const uint8_t *p, size_t len)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;
	size_t		 i, n;

	n = len < INJECT_HASH_LEN ? len : INJECT_HASH_LEN;
	for (i = 0; i < n || i < INJECT_ETHER_MIN; i++) {
		h ^= i < n ? p[i] : 0;
		h *= 0x100000001b3ULL;
	}
	return h;
}

void
inject_remember(struct inject_memory *m, const uint8_t *p, size_t len,
    uint64_t now_ms)
{
	m->recent[m->next].hash = inject_hash(p, len);
	m->recent[m->next].when_ms = now_ms != 0 ? now_ms : 1;
	m->next = (m->next + 1) % INJECT_RECENT;
}

int
inject_seen(const struct inject_memory *m, const uint8_t *p, size_t len,
    uint64_t now_ms)
{
	uint64_t	 h = inject_hash(p, len);
	size_t		 i;

	for (i = 0; i < INJECT_RECENT; i++)
		if (m->recent[i].hash == h && m->recent[i].when_ms != 0 &&
		    m->recent[i].when_ms + INJECT_RECENT_MS > now_ms)
			return 1;
	return 0;
}
