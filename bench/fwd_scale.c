/*
 * bench/fwd_scale: the cost of one forwarding decision with 10 exact-MAC
 * rules against 10,000 rules and 10,000 learned MACs, measured in the same
 * run.  Build with `make bench/fwd_scale`, run by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fwd.h"

#define LOOKUPS	2000000

static void
mac_of(unsigned int i, uint8_t m[ETHER_ADDR_LEN])
{
	m[0] = 0x02;
	m[1] = 0;
	m[2] = (uint8_t)(i >> 24);
	m[3] = (uint8_t)(i >> 16);
	m[4] = (uint8_t)(i >> 8);
	m[5] = (uint8_t)i;
}

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ns per fwd_decide with `rules` exact-MAC rules and `learned` learned MACs. */
static double
run(unsigned int rules, unsigned int learned)
{
	struct fwd		*f = fwd_new(learned + 16);
	struct fwd_port		*in, *links[8], **out;
	struct stmt_match	 any = { MATCH_ANY, { 0 } }, dst;
	enum fwd_how		 how;
	uint8_t			 src[ETHER_ADDR_LEN], d[ETHER_ADDR_LEN];
	char			 name[16];
	unsigned int		 i, sink = 0;
	double			 t0, t;

	if (f == NULL)
		abort();
	in = fwd_port_ref(f, FWD_IFACE, "guest");
	fwd_port_attach(in, in);
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "l%u", i);
		links[i] = fwd_port_ref(f, FWD_LINK, name);
		fwd_port_attach(links[i], links[i]);
	}
	dst.kind = MATCH_MAC;
	for (i = 0; i < rules; i++) {
		mac_of(i, dst.mac);
		snprintf(name, sizeof(name), "l%u", i % 8);
		if (fwd_route_add(f, &any, &dst, FWD_LINK, name) == -1)
			abort();
	}
	fwd_set_learn(f, learned > 0);
	for (i = 0; i < learned; i++) {
		mac_of(0x100000 + i, src);
		mac_of(0, d);
		fwd_decide(f, d, src, links[i % 8], 0, &out, &how);
	}
	mac_of(0x200000, src);
	t0 = now_s();
	for (i = 0; i < LOOKUPS; i++) {
		/* Alternate rule hits and learned hits over the whole tables. */
		if (i & 1 || learned == 0)
			mac_of((i * 2654435761u) % rules, d);
		else
			mac_of(0x100000 + (i * 2654435761u) % learned, d);
		sink += (unsigned int)fwd_decide(f, d, src, in, 1000, &out, &how);
	}
	t = now_s() - t0;
	if (sink == 0)
		abort();
	fwd_free(f);
	return t / LOOKUPS * 1e9;
}

int
main(void)
{
	double	 small = run(10, 10), mid = run(1000, 1000);
	double	 large = run(10000, 10000);

	/*
	 * From 10 to 1,000 entries the tables leave the L1 cache; from
	 * 1,000 to 10,000 the cost should stay flat: no scan grows.
	 */
	printf("fwd_decide, %d lookups each\n", LOOKUPS);
	printf("%-34s %8.1f ns\n", "10 rules, 10 learned MACs", small);
	printf("%-34s %8.1f ns\n", "1,000 rules, 1,000 learned MACs", mid);
	printf("%-34s %8.1f ns\n", "10,000 rules, 10,000 learned MACs", large);
	printf("%-34s %8.2f\n", "ratio 10,000 / 1,000", large / mid);
	printf("%-34s %8.2f\n", "ratio 10,000 / 10", large / small);
	return 0;
}
