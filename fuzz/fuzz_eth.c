/*
 * libFuzzer target: Ethernet frames through forwarding, the way frames from
 * links and interfaces reach it: the MAC header, learning, flooding, rules,
 * duplicate suppression and ageing, on a small table that fills up.
 *
 * Input: records of [port:u8][origin:u32][seq:u32][len:u16][frame:len],
 * read with the bounds-checked reader like everything received.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ether.h"
#include "fwd.h"
#include "stmt.h"

#define PORTS	4
#define MACS	32	/* small, so that the full table is reached */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const port_names[PORTS] = { "l0", "l1", "i0", "i1" };

static void
add_rule(struct fwd *fwd, enum stmt_match_kind sk, enum stmt_match_kind dk,
    uint8_t last, enum fwd_kind kind, const char *name)
{
	struct stmt_match	 src, dst;

	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	src.kind = sk;
	dst.kind = dk;
	src.mac[0] = dst.mac[0] = 0x02;
	src.mac[5] = dst.mac[5] = last;
	(void)fwd_route_add(fwd, &src, &dst, kind, name);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fwd		*fwd;
	struct fwd_port		*ports[PORTS], **out;
	struct rbuf		 b;
	enum fwd_how		 how;
	const uint8_t		*eth;
	uint8_t			 p, mac[ETHER_ADDR_LEN];
	uint32_t		 origin, seq;
	uint16_t		 len;
	uint64_t		 now = 1000;
	char			 s[ETHER_ADDR_STRLEN];
	size_t			 i, n;

	if ((fwd = fwd_new(MACS)) == NULL)
		return 0;
	for (i = 0; i < PORTS; i++) {
		ports[i] = fwd_port_ref(fwd, i < 2 ? FWD_LINK : FWD_IFACE,
		    port_names[i]);
		if (ports[i] == NULL)
			abort();
		fwd_port_attach(ports[i], ports[i]);
	}
	add_rule(fwd, MATCH_ANY, MATCH_MAC, 1, FWD_LINK, "l0");
	add_rule(fwd, MATCH_NOT, MATCH_ANY, 2, FWD_IFACE, "i0");
	add_rule(fwd, MATCH_MAC, MATCH_NOT, 3, FWD_LINK, "l1");
	fwd_set_learn(fwd, size > 0 && (data[0] & 1));

	rbuf_init(&b, data, size);
	while (rbuf_get_u8(&b, &p) == 0 && rbuf_get_u32(&b, &origin) == 0 &&
	    rbuf_get_u32(&b, &seq) == 0 && rbuf_get_u16(&b, &len) == 0 &&
	    rbuf_get_ptr(&b, len, &eth) == 0) {
		if (len < ETHER_HDR_LEN)
			continue;
		/* The addresses print and parse back as themselves. */
		if (ether_parse(ether_format(eth, s), mac) == -1 ||
		    memcmp(mac, eth, ETHER_ADDR_LEN) != 0)
			abort();
		if (p & 0x80) {
			if (fwd_seen(fwd, origin, seq, eth, len))
				continue;
		}
		n = fwd_decide(fwd, eth, eth + ETHER_ADDR_LEN,
		    ports[p % PORTS], now, &out, &how);
		if (n > PORTS)
			abort();
		for (i = 0; i < n; i++)
			if (out[i] == ports[p % PORTS] ||
			    fwd_port_owner(out[i]) == NULL)
				abort();	/* never back where it came from */
		if (p & 0x40) {
			now += (uint64_t)seq % 400000;
			fwd_age(fwd, now);
		}
		if (fwd_mac_count(fwd) > MACS)
			abort();
	}
	for (i = 0; i < PORTS; i++)
		fwd_port_unref(fwd, ports[i]);
	fwd_free(fwd);
	return 0;
}
