/*
 * bench/fwd_scale: the cost of one forwarding decision with 10 exact-MAC
 * rules against 10,000 rules and 10,000 learned MACs, measured in the same
 * run; then a unicast frame's decision with `routing static` (N exact-MAC
 * rules) against `routing auto` (N automatic routes, installed in fwd's
 * table as the control plane does now), and against the way the control
 * plane answered before, a function fwd_decide() called for every frame no
 * rule matched, which looked the MAC up in two chained tables of 1024
 * buckets of its own (routing.c's, reproduced here).  Build with
 * `make bench/fwd_scale`, run by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fwd.h"
#include "hash.h"

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

/* The control plane's tables before: MAC -> port, 1024 chained buckets. */
#define OLD_BUCKETS	1024
struct old_mac {
	struct old_mac	*next;
	uint8_t		 mac[ETHER_ADDR_LEN];
	struct fwd_port	*port;
};
struct old_tab {
	uint32_t	 seed;
	struct old_mac	*local[OLD_BUCKETS], *routes[OLD_BUCKETS];
};

static struct old_mac *
old_find(struct old_mac **tab, uint32_t seed, const uint8_t *mac)
{
	struct old_mac	*m;

	for (m = tab[hash_fnv1a(seed, mac, ETHER_ADDR_LEN) % OLD_BUCKETS];
	    m != NULL; m = m->next)
		if (memcmp(m->mac, mac, ETHER_ADDR_LEN) == 0)
			return m;
	return NULL;
}

/* routing_decide() for a unicast frame, as it was. */
static size_t
old_decide(struct old_tab *t, const uint8_t *dst, struct fwd_port *in,
    struct fwd_port **out)
{
	struct old_mac	*m;

	if ((m = old_find(t->local, t->seed, dst)) == NULL &&
	    (m = old_find(t->routes, t->seed, dst)) == NULL)
		return 0;
	if (m->port == in || fwd_port_owner(m->port) == NULL)
		return SIZE_MAX;
	out[0] = m->port;
	return 1;
}

enum mode { STATIC, AUTO, AUTO_BEFORE };

/* ns per unicast decision for n MACs, each on one of 8 links. */
static double
run_mode(enum mode mode, unsigned int n)
{
	struct fwd		*f = fwd_new(16);
	struct fwd_port		*in, *links[8], **out, *o[8];
	struct stmt_match	 any = { MATCH_ANY, { 0 } }, dst;
	struct old_tab		*t = calloc(1, sizeof(*t));
	struct old_mac		*m;
	enum fwd_how		 how;
	uint8_t			 src[ETHER_ADDR_LEN], d[ETHER_ADDR_LEN];
	char			 name[16];
	unsigned int		 i, b, sink = 0;
	size_t			 k;
	double			 t0, el;

	if (f == NULL || t == NULL)
		abort();
	t->seed = 12345;
	in = fwd_port_ref(f, FWD_IFACE, "guest");
	fwd_port_attach(in, in);
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "l%u", i);
		links[i] = fwd_port_ref(f, FWD_LINK, name);
		fwd_port_attach(links[i], links[i]);
	}
	dst.kind = MATCH_MAC;
	for (i = 0; i < n; i++) {
		mac_of(i, dst.mac);
		snprintf(name, sizeof(name), "l%u", i % 8);
		switch (mode) {
		case STATIC:
			if (fwd_route_add(f, &any, &dst, FWD_LINK, name) == -1)
				abort();
			break;
		case AUTO:
			if (fwd_auto_set(f, dst.mac, FWD_LINK, name) == -1)
				abort();
			break;
		case AUTO_BEFORE:
			if ((m = calloc(1, sizeof(*m))) == NULL)
				abort();
			memcpy(m->mac, dst.mac, ETHER_ADDR_LEN);
			m->port = links[i % 8];
			b = hash_fnv1a(t->seed, m->mac, ETHER_ADDR_LEN) %
			    OLD_BUCKETS;
			m->next = t->routes[b];
			t->routes[b] = m;
			break;
		}
	}
	fwd_auto_on(f, mode == AUTO);
	mac_of(0x200000, src);
	t0 = now_s();
	for (i = 0; i < LOOKUPS; i++) {
		mac_of((i * 2654435761u) % n, d);
		k = fwd_decide(f, d, src, in, 1000, &out, &how);
		if (mode == AUTO_BEFORE && k == 0)
			k = old_decide(t, d, in, o);
		sink += (unsigned int)k;
	}
	el = now_s() - t0;
	if (sink == 0)
		abort();
	for (b = 0; b < OLD_BUCKETS; b++)
		while ((m = t->routes[b]) != NULL) {
			t->routes[b] = m->next;
			free(m);
		}
	free(t);
	fwd_free(f);
	return el / LOOKUPS * 1e9;
}

int
main(void)
{
	static const unsigned int sizes[] = { 10, 1000, 10000 };
	double	 st, au, bf;
	size_t	 i;

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
	printf("\none unicast decision by MAC, N MACs on 8 links, ns\n");
	printf("%8s %8s %8s %12s %12s %14s\n", "N", "static", "auto",
	    "auto before", "auto/static", "auto/before");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		st = run_mode(STATIC, sizes[i]);
		au = run_mode(AUTO, sizes[i]);
		bf = run_mode(AUTO_BEFORE, sizes[i]);
		printf("%8u %8.1f %8.1f %12.1f %12.2f %14.2f\n", sizes[i], st,
		    au, bf, au / st, au / bf);
	}
	return 0;
}
