/* Unit tests for the forwarding decisions (src/fwd.c). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd.h"

#define NPORTS_SCALE	50
#define NSCALE		10000

static const uint8_t	bcast[ETHER_ADDR_LEN] =
    { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t	mcast[ETHER_ADDR_LEN] =
    { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };

/* A unicast, locally administered MAC numbered n. */
static void
mac(uint8_t m[ETHER_ADDR_LEN], uint32_t n)
{
	m[0] = 0x02;
	m[1] = 0x00;
	m[2] = (uint8_t)(n >> 24);
	m[3] = (uint8_t)(n >> 16);
	m[4] = (uint8_t)(n >> 8);
	m[5] = (uint8_t)n;
}

static struct stmt_match
m_any(void)
{
	struct stmt_match	m;

	memset(&m, 0, sizeof(m));
	m.kind = MATCH_ANY;
	return m;
}

static struct stmt_match
m_mac(uint32_t n)
{
	struct stmt_match	m;

	m.kind = MATCH_MAC;
	mac(m.mac, n);
	return m;
}

static struct stmt_match
m_not(uint32_t n)
{
	struct stmt_match	m;

	m.kind = MATCH_NOT;
	mac(m.mac, n);
	return m;
}

static struct stmt_match
m_raw(enum stmt_match_kind kind, const uint8_t a[ETHER_ADDR_LEN])
{
	struct stmt_match	m;

	m.kind = kind;
	memcpy(m.mac, a, ETHER_ADDR_LEN);
	return m;
}

static void
route(struct fwd *f, struct stmt_match src, struct stmt_match dst,
    const char *name)
{
	ck_assert_int_eq(fwd_route_add(f, &src, &dst, FWD_LINK, name), 0);
}

/* A link port that is up: referenced as its owner would, and attached. */
static struct fwd_port *
up(struct fwd *f, const char *name)
{
	struct fwd_port	*p;

	p = fwd_port_ref(f, FWD_LINK, name);
	ck_assert_ptr_nonnull(p);
	fwd_port_attach(p, p);
	return p;
}

static struct fwd_port	**out;
static enum fwd_how	  how;

static size_t
decide(struct fwd *f, uint32_t dst, uint32_t src, struct fwd_port *in,
    uint64_t now)
{
	uint8_t	d[ETHER_ADDR_LEN], s[ETHER_ADDR_LEN];

	mac(d, dst);
	mac(s, src);
	return fwd_decide(f, d, s, in, now, &out, &how);
}

static size_t
decide_raw(struct fwd *f, const uint8_t d[ETHER_ADDR_LEN], uint32_t src,
    struct fwd_port *in, uint64_t now)
{
	uint8_t	s[ETHER_ADDR_LEN];

	mac(s, src);
	return fwd_decide(f, d, s, in, now, &out, &how);
}

static int
has(size_t n, const struct fwd_port *p)
{
	size_t	i, c = 0;

	for (i = 0; i < n; i++)
		if (out[i] == p)
			c++;
	return (int)c;
}

/* Asserts the result is exactly one copy to p, chosen by rules. */
static void
expect_rule(size_t n, const struct fwd_port *p)
{
	ck_assert_int_eq(how, FWD_RULE);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(out[0], p);
}

static struct fwd_stats
stats(struct fwd *f)
{
	struct fwd_stats	st;

	fwd_stats(f, &st);
	return st;
}

/* Rules: rank, matching, fan-out. */

START_TEST(test_rank_dst_kinds)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*in, *a, *b, *c;

	in = up(f, "in");
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	route(f, m_any(), m_any(), "a");
	route(f, m_any(), m_not(10), "b");
	route(f, m_any(), m_mac(20), "c");

	expect_rule(decide(f, 20, 1, in, 0), c);	/* exact */
	expect_rule(decide(f, 30, 1, in, 0), b);	/* not-10 */
	expect_rule(decide(f, 10, 1, in, 0), a);	/* only any is left */
	ck_assert_uint_eq(stats(f).rule_hits, 3);
	fwd_free(f);
}
END_TEST

START_TEST(test_rank_dst_before_src)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*in, *a, *b, *c, *d;

	in = up(f, "in");
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	d = up(f, "d");
	route(f, m_mac(1), m_any(), "a");	/* rank 2 */
	route(f, m_any(), m_not(10), "b");	/* rank 3 */
	expect_rule(decide(f, 20, 1, in, 0), b);
	/* when the not- destination excludes it, the source rule is next */
	expect_rule(decide(f, 10, 1, in, 0), a);

	route(f, m_mac(1), m_not(10), "c");	/* rank 5 */
	expect_rule(decide(f, 20, 1, in, 0), c);
	route(f, m_not(1), m_not(10), "a");	/* rank 4: loses to 5 */
	expect_rule(decide(f, 20, 1, in, 0), c);
	expect_rule(decide(f, 20, 2, in, 0), a);	/* src 2: 4 beats 3 */
	route(f, m_any(), m_mac(20), "d");	/* rank 6 beats any src */
	expect_rule(decide(f, 20, 1, in, 0), d);
	route(f, m_not(1), m_mac(20), "a");	/* rank 7 */
	expect_rule(decide(f, 20, 2, in, 0), a);
	expect_rule(decide(f, 20, 1, in, 0), d);	/* not-1 misses src 1 */
	route(f, m_mac(1), m_mac(20), "b");	/* rank 8 */
	expect_rule(decide(f, 20, 1, in, 0), b);
	fwd_free(f);
}
END_TEST

START_TEST(test_not_semantics)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*in, *a;

	in = up(f, "in");
	a = up(f, "a");
	route(f, m_any(), m_not(10), "a");
	expect_rule(decide(f, 11, 1, in, 0), a);
	ck_assert_uint_eq(decide(f, 10, 1, in, 0), 0);
	ck_assert_int_eq(how, FWD_DROP);
	ck_assert_uint_eq(stats(f).no_route, 1);

	route(f, m_not(5), m_mac(10), "a");
	expect_rule(decide(f, 10, 1, in, 0), a);
	ck_assert_uint_eq(decide(f, 10, 5, in, 0), 0);
	ck_assert_int_eq(how, FWD_DROP);
	ck_assert_uint_eq(stats(f).no_route, 2);
	fwd_free(f);
}
END_TEST

START_TEST(test_group_destinations)
{
	struct fwd		*f = fwd_new(0);
	struct fwd_port		*in, *a, *b, *c;
	struct stmt_match	 any = m_any(), exact;

	in = up(f, "in");
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	route(f, m_any(), m_any(), "a");
	route(f, m_any(), m_not(10), "b");
	expect_rule(decide_raw(f, bcast, 1, in, 0), b);
	expect_rule(decide_raw(f, mcast, 1, in, 0), b);

	/* not-broadcast misses broadcast only */
	route(f, m_any(), m_raw(MATCH_NOT, bcast), "c");
	route(f, m_not(99), m_raw(MATCH_NOT, bcast), "c");	/* rank 4 */
	expect_rule(decide_raw(f, mcast, 1, in, 0), c);
	expect_rule(decide_raw(f, bcast, 1, in, 0), b);

	exact = m_raw(MATCH_MAC, bcast);
	ck_assert_int_eq(fwd_route_add(f, &any, &exact, FWD_LINK, "a"), 0);
	expect_rule(decide_raw(f, bcast, 1, in, 0), a);
	expect_rule(decide_raw(f, mcast, 1, in, 0), c);
	exact = m_raw(MATCH_MAC, mcast);
	ck_assert_int_eq(fwd_route_add(f, &any, &exact, FWD_LINK, "b"), 0);
	expect_rule(decide_raw(f, mcast, 1, in, 0), b);
	expect_rule(decide_raw(f, bcast, 1, in, 0), a);
	fwd_free(f);
}
END_TEST

START_TEST(test_ties_fan_out)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*in, *a, *b, *c;
	size_t		 n;

	in = up(f, "in");
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	route(f, m_any(), m_any(), "c");
	route(f, m_not(7), m_mac(20), "a");	/* rank 7 */
	route(f, m_not(8), m_mac(20), "a");	/* rank 7, same port */
	route(f, m_not(7), m_mac(20), "b");	/* rank 7, another port */

	n = decide(f, 20, 1, in, 0);
	ck_assert_int_eq(how, FWD_RULE);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(has(n, a), 1);
	ck_assert_int_eq(has(n, b), 1);
	ck_assert_int_eq(has(n, c), 0);

	/* src 7: only (not-8) -> a matches at rank 7 */
	expect_rule(decide(f, 20, 7, in, 0), a);

	/* equal rules without exact MACs fan out the same way */
	route(f, m_any(), m_any(), "a");
	route(f, m_any(), m_any(), "b");
	n = decide(f, 30, 1, in, 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(has(n, a), 1);
	ck_assert_int_eq(has(n, b), 1);
	ck_assert_int_eq(has(n, c), 1);
	ck_assert_int_eq(has(n, in), 0);
	fwd_free(f);
}
END_TEST

START_TEST(test_no_hairpin)
{
	struct fwd		*f = fwd_new(0);
	struct fwd_port		*in, *a;
	struct fwd_stats	 st;
	struct stmt_match	 any = m_any();

	in = up(f, "in");
	a = up(f, "a");
	up(f, "b");
	route(f, m_any(), m_mac(20), "in");
	ck_assert_uint_eq(decide(f, 20, 1, in, 0), 0);
	ck_assert_int_eq(how, FWD_DROP);
	st = stats(f);
	ck_assert_uint_eq(st.no_route, 1);
	ck_assert_uint_eq(st.rule_hits, 0);

	/* the same rule serves frames from elsewhere */
	expect_rule(decide(f, 20, 1, a, 0), in);

	/* a lower-ranked rule elsewhere takes over from the arrival port */
	route(f, m_any(), m_any(), "a");
	expect_rule(decide(f, 20, 1, in, 0), a);
	ck_assert_uint_eq(decide(f, 20, 1, a, 0), 1);
	ck_assert_ptr_eq(out[0], in);

	/* with learning, a rule to the arrival port still means: no copy */
	ck_assert_int_eq(fwd_route_del(f, &any, &any, FWD_LINK, "a"), 0);
	fwd_set_learn(f, 1);
	ck_assert_uint_eq(decide(f, 20, 1, in, 0), 0);
	ck_assert_int_eq(how, FWD_DROP);
	st = stats(f);
	ck_assert_uint_eq(st.floods, 0);
	ck_assert_uint_eq(st.no_route, 1);
	fwd_free(f);
}
END_TEST

START_TEST(test_detached_port)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*in, *a, *b;

	in = up(f, "in");
	a = up(f, "a");
	b = up(f, "b");
	route(f, m_any(), m_mac(20), "a");
	route(f, m_any(), m_any(), "b");
	expect_rule(decide(f, 20, 1, in, 0), a);

	fwd_port_detach(a);
	ck_assert_ptr_null(fwd_port_owner(a));
	expect_rule(decide(f, 20, 1, in, 0), b);

	fwd_port_attach(a, &f);
	ck_assert_ptr_eq(fwd_port_owner(a), &f);
	expect_rule(decide(f, 20, 1, in, 0), a);

	/* nothing attached at all: drop */
	fwd_port_detach(a);
	fwd_port_detach(b);
	ck_assert_uint_eq(decide(f, 20, 1, in, 0), 0);
	ck_assert_int_eq(how, FWD_DROP);
	ck_assert_uint_eq(stats(f).no_route, 1);
	fwd_free(f);
}
END_TEST

START_TEST(test_route_before_port)
{
	struct fwd		*f = fwd_new(0);
	struct fwd_port		*in, *p, *q;
	struct stmt_match	 any = m_any();

	in = up(f, "in");
	ck_assert_ptr_null(fwd_port_find(f, FWD_LINK, "later"));
	route(f, m_any(), m_any(), "later");
	ck_assert_uint_eq(fwd_route_count(f), 1);
	p = fwd_port_find(f, FWD_LINK, "later");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(fwd_port_name(p), "later");
	ck_assert_int_eq(fwd_port_kind(p), FWD_LINK);
	ck_assert_ptr_null(fwd_port_owner(p));
	ck_assert_uint_eq(decide(f, 20, 1, in, 0), 0);
	ck_assert_int_eq(how, FWD_DROP);

	/* the link comes up: its owner finds the same port */
	q = up(f, "later");
	ck_assert_ptr_eq(q, p);
	expect_rule(decide(f, 20, 1, in, 0), p);

	/* an interface of the same name is another port */
	ck_assert_ptr_null(fwd_port_find(f, FWD_IFACE, "later"));
	ck_assert_int_eq(fwd_route_add(f, &any, &any, FWD_IFACE, "later"), 0);
	q = fwd_port_find(f, FWD_IFACE, "later");
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_ne(q, p);
	ck_assert_int_eq(fwd_port_kind(q), FWD_IFACE);
	expect_rule(decide(f, 20, 1, in, 0), p);

	/* the route goes, the owner keeps the port; then it goes too */
	ck_assert_int_eq(fwd_route_del(f, &any, &any, FWD_LINK, "later"), 0);
	ck_assert_ptr_eq(fwd_port_find(f, FWD_LINK, "later"), p);
	fwd_port_unref(f, p);
	ck_assert_ptr_null(fwd_port_find(f, FWD_LINK, "later"));
	ck_assert_int_eq(fwd_route_del(f, &any, &any, FWD_IFACE, "later"), 0);
	ck_assert_ptr_null(fwd_port_find(f, FWD_IFACE, "later"));
	ck_assert_uint_eq(fwd_route_count(f), 0);
	fwd_free(f);
}
END_TEST

START_TEST(test_port_refs)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*p, *q, *r;

	p = fwd_port_ref(f, FWD_IFACE, "tap0");
	q = fwd_port_ref(f, FWD_IFACE, "tap0");
	r = fwd_port_ref(f, FWD_LINK, "tap0");
	ck_assert_ptr_eq(p, q);
	ck_assert_ptr_ne(p, r);
	fwd_port_unref(f, p);
	ck_assert_ptr_eq(fwd_port_find(f, FWD_IFACE, "tap0"), q);
	fwd_port_unref(f, q);
	ck_assert_ptr_null(fwd_port_find(f, FWD_IFACE, "tap0"));
	ck_assert_ptr_eq(fwd_port_find(f, FWD_LINK, "tap0"), r);
	fwd_port_unref(f, r);
	ck_assert_ptr_null(fwd_port_find(f, FWD_LINK, "tap0"));
	fwd_free(f);
}
END_TEST

START_TEST(test_add_del_errors)
{
	struct fwd		*f = fwd_new(0);
	struct fwd_port		*in, *a;
	struct stmt_match	 any = m_any(), d = m_mac(20), n = m_not(20);
	struct stmt_match	 d2 = d;

	in = up(f, "in");
	a = up(f, "a");
	ck_assert_int_eq(fwd_route_add(f, &any, &d, FWD_LINK, "a"), 0);
	errno = 0;
	ck_assert_int_eq(fwd_route_add(f, &any, &d, FWD_LINK, "a"), -1);
	ck_assert_int_eq(errno, EEXIST);
	/* an ANY side is equal whatever its unused MAC bytes hold */
	any.mac[3] = 0x55;
	errno = 0;
	ck_assert_int_eq(fwd_route_add(f, &any, &d2, FWD_LINK, "a"), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_uint_eq(fwd_route_count(f), 1);

	/* differing in kind, MAC or port is another rule */
	ck_assert_int_eq(fwd_route_add(f, &any, &n, FWD_LINK, "a"), 0);
	ck_assert_int_eq(fwd_route_add(f, &any, &d, FWD_IFACE, "a"), 0);
	ck_assert_int_eq(fwd_route_add(f, &d, &any, FWD_LINK, "a"), 0);
	ck_assert_uint_eq(fwd_route_count(f), 4);

	errno = 0;
	ck_assert_int_eq(fwd_route_del(f, &any, &d, FWD_LINK, "b"), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(fwd_port_find(f, FWD_LINK, "b"));
	errno = 0;
	ck_assert_int_eq(fwd_route_del(f, &n, &d, FWD_LINK, "a"), -1);
	ck_assert_int_eq(errno, ENOENT);

	ck_assert_int_eq(fwd_route_del(f, &any, &d, FWD_LINK, "a"), 0);
	errno = 0;
	ck_assert_int_eq(fwd_route_del(f, &any, &d, FWD_LINK, "a"), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_uint_eq(fwd_route_count(f), 3);
	expect_rule(decide(f, 21, 1, in, 0), a);	/* any -> not-20 */
	fwd_free(f);
}
END_TEST

struct seen_rules {
	char	text[16][64];
	int	n;
};

static void
collect_rule(const struct stmt_match *src, const struct stmt_match *dst,
    const struct fwd_port *port, void *arg)
{
	struct seen_rules	*sr = arg;
	char			 s[24], d[24];

	ck_assert_int_lt(sr->n, 16);
	snprintf(s, sizeof(s), "%d/%d", (int)src->kind,
	    src->kind == MATCH_ANY ? 0 : src->mac[5]);
	snprintf(d, sizeof(d), "%d/%d", (int)dst->kind,
	    dst->kind == MATCH_ANY ? 0 : dst->mac[5]);
	snprintf(sr->text[sr->n++], sizeof(sr->text[0]), "%s %s %s", s, d,
	    fwd_port_name(port));
}

START_TEST(test_foreach_order)
{
	struct fwd		*f = fwd_new(0);
	struct seen_rules	 sr;
	struct stmt_match	 s = m_mac(2), d = m_any();

	route(f, m_any(), m_any(), "x");
	route(f, m_mac(1), m_mac(9), "y");
	route(f, m_mac(2), m_any(), "z");
	route(f, m_not(3), m_not(4), "x");
	route(f, m_any(), m_mac(5), "w");

	memset(&sr, 0, sizeof(sr));
	fwd_route_foreach(f, collect_rule, &sr);
	ck_assert_int_eq(sr.n, 5);
	ck_assert_str_eq(sr.text[0], "0/0 0/0 x");
	ck_assert_str_eq(sr.text[1], "2/1 2/9 y");
	ck_assert_str_eq(sr.text[2], "2/2 0/0 z");
	ck_assert_str_eq(sr.text[3], "1/3 1/4 x");
	ck_assert_str_eq(sr.text[4], "0/0 2/5 w");

	ck_assert_int_eq(fwd_route_del(f, &s, &d, FWD_LINK, "z"), 0);
	route(f, m_mac(2), m_any(), "z");
	memset(&sr, 0, sizeof(sr));
	fwd_route_foreach(f, collect_rule, &sr);
	ck_assert_int_eq(sr.n, 5);
	ck_assert_str_eq(sr.text[0], "0/0 0/0 x");
	ck_assert_str_eq(sr.text[1], "2/1 2/9 y");
	ck_assert_str_eq(sr.text[2], "1/3 1/4 x");
	ck_assert_str_eq(sr.text[3], "0/0 2/5 w");
	ck_assert_str_eq(sr.text[4], "2/2 0/0 z");
	fwd_free(f);
}
END_TEST

/* Learning. */

START_TEST(test_learn_default_off)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*a;

	a = up(f, "a");
	up(f, "b");
	ck_assert_int_eq(fwd_get_learn(f), 0);
	ck_assert_uint_eq(decide(f, 20, 1, a, 0), 0);
	ck_assert_int_eq(how, FWD_DROP);
	ck_assert_uint_eq(fwd_mac_count(f), 0);
	ck_assert_uint_eq(stats(f).no_route, 1);
	fwd_set_learn(f, 1);
	ck_assert_int_eq(fwd_get_learn(f), 1);
	fwd_set_learn(f, 0);
	ck_assert_int_eq(fwd_get_learn(f), 0);
	fwd_free(f);
}
END_TEST

START_TEST(test_learn_flood_forward)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*a, *b, *c, *d;
	struct fwd_stats st;
	size_t		 n;

	fwd_set_learn(f, 1);
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	d = fwd_port_ref(f, FWD_LINK, "down");	/* not attached */

	/* unknown destination: every attached port but the arrival one */
	n = decide(f, 2, 1, a, 0);
	ck_assert_int_eq(how, FWD_FLOOD);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(has(n, b), 1);
	ck_assert_int_eq(has(n, c), 1);
	ck_assert_int_eq(has(n, a), 0);
	ck_assert_int_eq(has(n, d), 0);
	ck_assert_uint_eq(fwd_mac_count(f), 1);

	/* the reply goes to where 1 was learned; 2 is learned on b */
	n = decide(f, 1, 2, b, 10);
	ck_assert_int_eq(how, FWD_LEARNED);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(out[0], a);
	n = decide(f, 2, 1, a, 20);
	ck_assert_int_eq(how, FWD_LEARNED);
	ck_assert_ptr_eq(out[0], b);

	/* broadcast floods even when known */
	n = decide_raw(f, bcast, 1, a, 30);
	ck_assert_int_eq(how, FWD_FLOOD);
	ck_assert_uint_eq(n, 2);

	/* a learned destination on the arrival port needs no copy */
	ck_assert_uint_eq(decide(f, 1, 3, a, 40), 0);
	ck_assert_int_eq(how, FWD_DROP);

	st = stats(f);
	ck_assert_uint_eq(st.macs_learned, 3);
	ck_assert_uint_eq(st.learned_hits, 2);
	ck_assert_uint_eq(st.floods, 2);
	ck_assert_uint_eq(st.no_route, 0);
	ck_assert_uint_eq(st.macs_moved, 0);
	fwd_port_unref(f, d);
	fwd_free(f);
}
END_TEST

START_TEST(test_learn_rules_first)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*a, *b, *c;

	fwd_set_learn(f, 1);
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	decide(f, 99, 1, a, 0);
	ck_assert_uint_eq(fwd_mac_count(f), 1);
	route(f, m_any(), m_mac(1), "c");
	expect_rule(decide(f, 1, 2, b, 1), c);
	/* rules do not stop the source from being learned */
	ck_assert_uint_eq(fwd_mac_count(f), 2);
	ck_assert_uint_eq(stats(f).rule_hits, 1);
	fwd_free(f);
}
END_TEST

START_TEST(test_learn_move)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*a, *b, *c;

	fwd_set_learn(f, 1);
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	decide(f, 99, 1, a, 0);
	decide(f, 1, 5, c, 1);
	ck_assert_ptr_eq(out[0], a);
	decide(f, 99, 1, b, 2);
	ck_assert_uint_eq(stats(f).macs_moved, 1);
	ck_assert_uint_eq(fwd_mac_count(f), 2);
	ck_assert_uint_eq(decide(f, 1, 5, c, 3), 1);
	ck_assert_int_eq(how, FWD_LEARNED);
	ck_assert_ptr_eq(out[0], b);
	/* seen again on the same port: not a move */
	decide(f, 99, 1, b, 4);
	ck_assert_uint_eq(stats(f).macs_moved, 1);
	fwd_free(f);
}
END_TEST

struct mac_seen {
	uint8_t			 mac[8][ETHER_ADDR_LEN];
	const struct fwd_port	*port[8];
	uint64_t		 age[8];
	int			 n;
};

static void
collect_mac(const uint8_t m[ETHER_ADDR_LEN], const struct fwd_port *port,
    uint64_t age, void *arg)
{
	struct mac_seen	*ms = arg;

	ck_assert_int_lt(ms->n, 8);
	memcpy(ms->mac[ms->n], m, ETHER_ADDR_LEN);
	ms->port[ms->n] = port;
	ms->age[ms->n++] = age;
}

START_TEST(test_learn_ageing)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*a, *b;
	struct mac_seen	 ms;
	uint8_t		 m1[ETHER_ADDR_LEN], m2[ETHER_ADDR_LEN];
	uint64_t	 t0 = 1000000;

	fwd_set_learn(f, 1);
	a = up(f, "a");
	b = up(f, "b");
	mac(m1, 1);
	mac(m2, 2);
	decide(f, 99, 1, a, t0);
	decide(f, 99, 2, b, t0 + 100000);

	memset(&ms, 0, sizeof(ms));
	fwd_mac_foreach(f, t0 + 150000, collect_mac, &ms);
	ck_assert_int_eq(ms.n, 2);
	ck_assert_mem_eq(ms.mac[0], m1, ETHER_ADDR_LEN);
	ck_assert_ptr_eq(ms.port[0], a);
	ck_assert_uint_eq(ms.age[0], 150000);
	ck_assert_mem_eq(ms.mac[1], m2, ETHER_ADDR_LEN);
	ck_assert_ptr_eq(ms.port[1], b);
	ck_assert_uint_eq(ms.age[1], 50000);

	/* 299.999 s: still there and still used */
	fwd_age(f, t0 + FWD_AGE_MS - 1);
	ck_assert_uint_eq(fwd_mac_count(f), 2);
	ck_assert_uint_eq(decide(f, 1, 2, b, t0 + FWD_AGE_MS - 1), 1);
	ck_assert_int_eq(how, FWD_LEARNED);
	ck_assert_ptr_eq(out[0], a);

	/* 300 s: not used even before fwd_age() removes it */
	ck_assert_uint_eq(decide(f, 1, 2, b, t0 + FWD_AGE_MS), 1);
	ck_assert_int_eq(how, FWD_FLOOD);
	fwd_age(f, t0 + FWD_AGE_MS);
	ck_assert_uint_eq(fwd_mac_count(f), 1);
	ck_assert_uint_eq(stats(f).macs_aged, 1);

	/* m2 was refreshed by every frame it sent */
	fwd_age(f, t0 + 2 * FWD_AGE_MS - 1);
	ck_assert_uint_eq(fwd_mac_count(f), 1);
	fwd_age(f, t0 + 2 * FWD_AGE_MS);
	ck_assert_uint_eq(fwd_mac_count(f), 0);
	ck_assert_uint_eq(stats(f).macs_aged, 2);
	fwd_free(f);
}
END_TEST

/*
 * A port sending from ever new source MACs (a guest flooding them) churns
 * its own share of the table, a quarter, and nobody else's: another port's
 * newcomer is learned and unicast to it is not flooded.
 */
START_TEST(test_learn_port_share)
{
	struct fwd	*f = fwd_new(16);
	struct fwd_port	*a, *b, *c;
	uint32_t	 i;

	fwd_set_learn(f, 1);
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	for (i = 1; i <= 1000; i++)
		decide(f, 99, i, a, i);
	ck_assert_uint_eq(fwd_mac_count(f), 16 / FWD_PORT_SHARE);
	ck_assert_uint_eq(stats(f).macs_replaced, 1000 - 16 / FWD_PORT_SHARE);
	ck_assert_uint_eq(stats(f).mac_table_full, 0);
	/* the flood's most recent MACs are the ones kept */
	ck_assert_uint_eq(decide(f, 1000, 2000, c, 1001), 1);
	ck_assert_int_eq(how, FWD_LEARNED);
	ck_assert_uint_eq(decide(f, 1, 2000, c, 1001), 2);
	ck_assert_int_eq(how, FWD_FLOOD);

	decide(f, 99, 3000, b, 1002);
	ck_assert_uint_eq(decide(f, 3000, 2000, c, 1003), 1);
	ck_assert_int_eq(how, FWD_LEARNED);
	ck_assert_ptr_eq(out[0], b);

	/* a MAC that moves to a port at its share pushes that port's oldest */
	for (i = 1; i <= 3; i++)
		decide(f, 99, 3000 + i, b, 1003 + i);	/* b: 3000..3003 */
	decide(f, 99, 1000, b, 1010);			/* moves from a */
	ck_assert_uint_eq(stats(f).macs_moved, 1);
	ck_assert_uint_eq(decide(f, 3000, 2000, c, 1011), 2);
	ck_assert_int_eq(how, FWD_FLOOD);		/* 3000 went */
	ck_assert_uint_eq(decide(f, 1000, 2000, c, 1011), 1);
	ck_assert_ptr_eq(out[0], b);
	fwd_free(f);
}
END_TEST

/*
 * A full table (every port at its share) still learns a newcomer: an
 * entry that has aged out goes first, else the least recently seen MAC of
 * the port that holds the most.
 */
START_TEST(test_learn_table_full)
{
	struct fwd	*f = fwd_new(16);
	struct fwd_port	*p[5];
	uint32_t	 i, j;
	char		 name[2] = "a";

	fwd_set_learn(f, 1);
	for (i = 0; i < 5; i++) {
		name[0] = (char)('a' + i);
		p[i] = up(f, name);
	}
	/* a: 1..4 at t 1..4, b: 11..14 at t 5..8, c: 21.., d: 31.. */
	for (i = 0; i < 4; i++)
		for (j = 1; j <= 4; j++)
			decide(f, 99, 10 * i + j, p[i], 4 * i + j);
	ck_assert_uint_eq(fwd_mac_count(f), 16);

	/* the ports tie: the first one's oldest (1) makes room */
	decide(f, 99, 50, p[4], 20);
	ck_assert_uint_eq(fwd_mac_count(f), 16);
	ck_assert_uint_eq(stats(f).macs_evicted, 1);
	ck_assert_uint_eq(stats(f).mac_table_full, 0);
	ck_assert_uint_eq(decide(f, 50, 31, p[3], 21), 1);
	ck_assert_ptr_eq(out[0], p[4]);
	ck_assert_uint_eq(decide(f, 1, 50, p[4], 21), 4);
	ck_assert_int_eq(how, FWD_FLOOD);
	/* now b holds the most: its oldest (11) goes */
	decide(f, 99, 51, p[4], 22);
	ck_assert_uint_eq(decide(f, 11, 50, p[4], 23), 4);
	ck_assert_int_eq(how, FWD_FLOOD);
	ck_assert_uint_eq(decide(f, 12, 50, p[4], 23), 1);
	ck_assert_ptr_eq(out[0], p[1]);

	/* an expired entry fwd_age() has not removed yet goes first */
	decide(f, 99, 52, p[4], 2 + FWD_AGE_MS);	/* 2 expired */
	ck_assert_uint_eq(stats(f).macs_aged, 1);
	ck_assert_uint_eq(stats(f).macs_evicted, 2);
	ck_assert_uint_eq(decide(f, 2, 50, p[4], 2 + FWD_AGE_MS), 4);
	ck_assert_uint_eq(decide(f, 3, 50, p[4], 2 + FWD_AGE_MS), 1);
	ck_assert_ptr_eq(out[0], p[0]);
	fwd_free(f);
}
END_TEST

START_TEST(test_learn_multicast_source)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*a;
	uint8_t		 d[ETHER_ADDR_LEN];

	fwd_set_learn(f, 1);
	a = up(f, "a");
	up(f, "b");
	mac(d, 2);
	fwd_decide(f, d, bcast, a, 0, &out, &how);
	fwd_decide(f, d, mcast, a, 0, &out, &how);
	ck_assert_uint_eq(fwd_mac_count(f), 0);
	ck_assert_uint_eq(stats(f).macs_learned, 0);
	ck_assert_int_eq(how, FWD_FLOOD);
	fwd_free(f);
}
END_TEST

START_TEST(test_learn_detached)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*a, *b, *c;
	size_t		 n;

	fwd_set_learn(f, 1);
	a = up(f, "a");
	b = up(f, "b");
	c = up(f, "c");
	decide(f, 99, 1, a, 0);
	fwd_port_detach(a);
	n = decide(f, 1, 2, b, 1);
	ck_assert_int_eq(how, FWD_FLOOD);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(out[0], c);
	fwd_port_attach(a, a);
	n = decide(f, 1, 2, b, 2);
	ck_assert_int_eq(how, FWD_LEARNED);
	ck_assert_ptr_eq(out[0], a);
	fwd_free(f);
}
END_TEST

START_TEST(test_learn_unref_removes)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*a, *d;
	struct mac_seen	 ms;
	uint8_t		 m9[ETHER_ADDR_LEN];
	uint32_t	 i;

	fwd_set_learn(f, 1);
	a = up(f, "a");
	d = up(f, "d");
	up(f, "e");
	for (i = 1; i <= 3; i++)
		decide(f, 99, i, d, i);
	decide(f, 99, 9, a, 4);
	decide(f, 99, 10, d, 5);
	ck_assert_uint_eq(fwd_mac_count(f), 5);
	fwd_port_unref(f, d);
	ck_assert_ptr_null(fwd_port_find(f, FWD_LINK, "d"));
	ck_assert_uint_eq(fwd_mac_count(f), 1);
	memset(&ms, 0, sizeof(ms));
	fwd_mac_foreach(f, 10, collect_mac, &ms);
	ck_assert_int_eq(ms.n, 1);
	mac(m9, 9);
	ck_assert_mem_eq(ms.mac[0], m9, ETHER_ADDR_LEN);
	ck_assert_ptr_eq(ms.port[0], a);
	ck_assert_uint_eq(ms.age[0], 6);
	/* the freed entries are reused */
	for (i = 20; i < 30; i++)
		decide(f, 99, i, a, 11);
	ck_assert_uint_eq(fwd_mac_count(f), 11);
	fwd_free(f);
}
END_TEST

/* Duplicate suppression. */

/*
 * A real frame: guest 1 (02:00:00:00:00:01, 10.77.0.1) pings guest 2
 * (02:00:00:00:00:02, 10.77.0.2), ICMP echo id 0x1234 seq 1, 8 bytes of data.
 */
static const uint8_t echo_frame[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	0x45, 0x00, 0x00, 0x24, 0x4d, 0x21, 0x40, 0x00, 0x40, 0x01, 0xd9, 0x52,
	0x0a, 0x4d, 0x00, 0x01, 0x0a, 0x4d, 0x00, 0x02,
	0x08, 0x00, 0x5a, 0x8c, 0x12, 0x34, 0x00, 0x01,
	0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
};

/* The pair with always the same frame: the pair is what is tested. */
static int
seen(struct fwd *f, uint32_t origin, uint32_t seq)
{
	return fwd_seen(f, origin, seq, echo_frame, sizeof(echo_frame));
}

START_TEST(test_seen_duplicates)
{
	struct fwd	*f = fwd_new(0);

	ck_assert_int_eq(seen(f, 1, 1), 0);
	ck_assert_int_eq(seen(f, 1, 1), 1);
	ck_assert_int_eq(seen(f, 2, 1), 0);
	ck_assert_int_eq(seen(f, 1, 2), 0);
	ck_assert_int_eq(seen(f, 2, 1), 1);
	ck_assert_uint_eq(stats(f).duplicates, 2);
	fwd_free(f);
}
END_TEST

START_TEST(test_seen_ring)
{
	struct fwd	*f = fwd_new(0);
	uint32_t	 i;

	for (i = 0; i <= 8192; i++)
		ck_assert_int_eq(seen(f, 7, i), 0);
	/* the last 8192 are remembered, the first is gone */
	for (i = 8192; i >= 1; i--)
		ck_assert_int_eq(seen(f, 7, i), 1);
	ck_assert_uint_eq(stats(f).duplicates, 8192);
	ck_assert_int_eq(seen(f, 7, 0), 0);	/* pushes 1 out */
	ck_assert_int_eq(seen(f, 7, 2), 1);
	ck_assert_int_eq(seen(f, 7, 1), 0);	/* pushes 2 out */
	ck_assert_int_eq(seen(f, 7, 3), 1);
	ck_assert_int_eq(seen(f, 7, 2), 0);

	/* many laps keep the set and the ring in step */
	for (i = 0; i < 5 * 8192; i++)
		seen(f, 9, i);
	for (i = 4 * 8192; i < 5 * 8192; i++)
		ck_assert_int_eq(seen(f, 9, i), 1);
	ck_assert_int_eq(seen(f, 9, 4 * 8192 - 1), 0);
	ck_assert_int_eq(seen(f, 7, 4), 0);
	fwd_free(f);
}
END_TEST


/*
 * A peer that sends another daemon's next pairs first (with frames of its
 * own) does not make that daemon's frames copies; a real copy still is,
 * even with a CE mark set on the way.
 */
START_TEST(test_seen_forged_pairs)
{
	struct fwd	*f = fwd_new(0);
	uint8_t		 forged[60], next[sizeof(echo_frame)];
	uint8_t		 marked[sizeof(echo_frame)];
	uint32_t	 i;

	/* the insider's frames: to nobody, its own type, the next pairs */
	memset(forged, 0, sizeof(forged));
	memcpy(forged, "\x02\x00\x00\x00\x00\x99\x02\x00\x00\x00\x00\x98"
	    "\x88\xb5", 14);
	for (i = 1; i <= 100; i++)
		ck_assert_int_eq(fwd_seen(f, 0xabcd, i, forged, sizeof(forged)),
		    0);
	/* the real daemon's frames under those pairs are not copies */
	memcpy(next, echo_frame, sizeof(next));
	for (i = 1; i <= 100; i++) {
		next[41] = (uint8_t)i;		/* ICMP sequence */
		ck_assert_int_eq(fwd_seen(f, 0xabcd, i, next, sizeof(next)),
		    0);
	}
	ck_assert_uint_eq(stats(f).seen_conflicts, 100);
	ck_assert_uint_eq(stats(f).duplicates, 0);
	/* a copy of a real one that took another path is one */
	next[41] = 7;
	ck_assert_int_eq(fwd_seen(f, 0xabcd, 7, next, sizeof(next)), 1);
	/* also with CE set (ECN field and IPv4 checksum changed) */
	memcpy(marked, echo_frame, sizeof(marked));
	ck_assert_int_eq(fwd_seen(f, 0xabce, 1, marked, sizeof(marked)), 0);
	marked[15] |= 0x03;
	marked[25] = (uint8_t)(marked[25] - 3);
	ck_assert_int_eq(fwd_seen(f, 0xabce, 1, marked, sizeof(marked)), 1);
	/* the forged ones resent are copies of themselves, nothing more */
	ck_assert_int_eq(fwd_seen(f, 0xabcd, 3, forged, sizeof(forged)), 1);
	ck_assert_uint_eq(stats(f).duplicates, 3);
	fwd_free(f);
}
END_TEST

/* Scale: results stay right with many exact rules and learned MACs. */

START_TEST(test_scale_rules)
{
	struct fwd		*f = fwd_new(0);
	struct fwd_port		*p[NPORTS_SCALE], *in, *def;
	struct stmt_match	 any = m_any(), m;
	char			 name[16];
	uint32_t		 i;

	for (i = 0; i < NPORTS_SCALE; i++) {
		snprintf(name, sizeof(name), "p%u", i);
		p[i] = up(f, name);
	}
	in = up(f, "in");
	def = up(f, "default");
	route(f, m_any(), m_any(), "default");
	for (i = 0; i < NSCALE; i++) {
		snprintf(name, sizeof(name), "p%u", i % NPORTS_SCALE);
		route(f, m_any(), m_mac(100000 + i), name);
		snprintf(name, sizeof(name), "p%u",
		    (i + 1) % NPORTS_SCALE);
		route(f, m_mac(200000 + i), m_any(), name);
	}
	ck_assert_uint_eq(fwd_route_count(f), 2 * NSCALE + 1);

	for (i = 0; i < NSCALE; i++) {
		expect_rule(decide(f, 100000 + i, 1, in, 0),
		    p[i % NPORTS_SCALE]);
		expect_rule(decide(f, 1, 200000 + i, in, 0),
		    p[(i + 1) % NPORTS_SCALE]);
		/* the destination rule outranks the source rule */
		expect_rule(decide(f, 100000 + i, 200000 + i, in, 0),
		    p[i % NPORTS_SCALE]);
	}
	expect_rule(decide(f, 100000 + NSCALE, 200000 + NSCALE, in, 0), def);

	/* delete every other destination rule: those fall back */
	for (i = 0; i < NSCALE; i += 2) {
		snprintf(name, sizeof(name), "p%u", i % NPORTS_SCALE);
		m = m_mac(100000 + i);
		ck_assert_int_eq(fwd_route_del(f, &any, &m, FWD_LINK, name),
		    0);
	}
	for (i = 0; i < NSCALE; i++) {
		if (i % 2 == 0) {
			expect_rule(decide(f, 100000 + i, 1, in, 0), def);
			expect_rule(decide(f, 100000 + i, 200000 + i, in, 0),
			    p[(i + 1) % NPORTS_SCALE]);
		} else
			expect_rule(decide(f, 100000 + i, 1, in, 0),
			    p[i % NPORTS_SCALE]);
	}
	ck_assert_uint_eq(fwd_route_count(f), NSCALE + NSCALE / 2 + 1);
	fwd_free(f);
}
END_TEST

START_TEST(test_scale_learned)
{
	struct fwd	*f = fwd_new(0);
	struct fwd_port	*p[NPORTS_SCALE], *in;
	char		 name[16];
	uint8_t		 m[ETHER_ADDR_LEN];
	uint32_t	 i;

	fwd_set_learn(f, 1);
	for (i = 0; i < NPORTS_SCALE; i++) {
		snprintf(name, sizeof(name), "p%u", i);
		p[i] = up(f, name);
	}
	in = up(f, "in");
	for (i = 0; i < NSCALE; i++) {
		mac(m, 300000 + i);
		fwd_decide(f, bcast, m, p[i % NPORTS_SCALE], 0, &out, &how);
	}
	ck_assert_uint_eq(fwd_mac_count(f), NSCALE);
	ck_assert_uint_eq(stats(f).floods, NSCALE);

	for (i = 0; i < NSCALE; i++) {
		mac(m, 300000 + i);
		ck_assert_uint_eq(fwd_decide(f, m, bcast, in, 1, &out, &how),
		    1);
		ck_assert_int_eq(how, FWD_LEARNED);
		ck_assert_ptr_eq(out[0], p[i % NPORTS_SCALE]);
	}
	ck_assert_uint_eq(stats(f).learned_hits, NSCALE);

	/* a port going away takes exactly its own MACs */
	fwd_port_unref(f, p[0]);
	ck_assert_uint_eq(fwd_mac_count(f), NSCALE - NSCALE / NPORTS_SCALE);
	fwd_age(f, FWD_AGE_MS);
	ck_assert_uint_eq(fwd_mac_count(f), 0);
	ck_assert_uint_eq(stats(f).macs_aged, NSCALE - NSCALE / NPORTS_SCALE);
	fwd_free(f);
}
END_TEST

static Suite *
fwd_suite(void)
{
	Suite	*s = suite_create("fwd");
	TCase	*tc;

	tc = tcase_create("rules");
	tcase_add_test(tc, test_rank_dst_kinds);
	tcase_add_test(tc, test_rank_dst_before_src);
	tcase_add_test(tc, test_not_semantics);
	tcase_add_test(tc, test_group_destinations);
	tcase_add_test(tc, test_ties_fan_out);
	tcase_add_test(tc, test_no_hairpin);
	tcase_add_test(tc, test_detached_port);
	tcase_add_test(tc, test_route_before_port);
	tcase_add_test(tc, test_port_refs);
	tcase_add_test(tc, test_add_del_errors);
	tcase_add_test(tc, test_foreach_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("learning");
	tcase_add_test(tc, test_learn_default_off);
	tcase_add_test(tc, test_learn_flood_forward);
	tcase_add_test(tc, test_learn_rules_first);
	tcase_add_test(tc, test_learn_move);
	tcase_add_test(tc, test_learn_ageing);
	tcase_add_test(tc, test_learn_table_full);
	tcase_add_test(tc, test_learn_port_share);
	tcase_add_test(tc, test_learn_multicast_source);
	tcase_add_test(tc, test_learn_detached);
	tcase_add_test(tc, test_learn_unref_removes);
	suite_add_tcase(s, tc);

	tc = tcase_create("seen");
	tcase_add_test(tc, test_seen_duplicates);
	tcase_add_test(tc, test_seen_ring);
	tcase_add_test(tc, test_seen_forged_pairs);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_scale_rules);
	tcase_add_test(tc, test_scale_learned);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(fwd_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
