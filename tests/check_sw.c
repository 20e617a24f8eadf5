/*
 * Unit tests of the whole data path (src/sw.c): a switch with fake ports in
 * one process.  Each fake port records what the switch hands its transmit,
 * so the tests assert on what arrives where: rules and learning, broadcast
 * without hairpin, the hop limit and duplicates, offload super-frames whole
 * or cut by port features, vCC in both directions, and the order of a
 * flow's frames kept when it moves to another link (reseq.h).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ether.h"
#include "fwd.h"
#include "gso.h"
#include "pkt.h"
#include "reseq.h"
#include "stmt.h"
#include "sw.h"
#include "vcc.h"
#include "wire.h"

#include "gso_frames.h"
/* Captured frames; this test uses only a few of them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#include "vcc_frames.h"
#pragma GCC diagnostic pop

#define FP_FRAMES	64
#define FP_BYTES	(256 * 1024)

/* What a fake port was given, frame by frame. */
struct fport {
	struct port	 port;
	char		 name[16];
	unsigned int	 features;
	int		 n;
	size_t		 off[FP_FRAMES], len[FP_FRAMES];
	int		 had_vh[FP_FRAMES];
	uint8_t		 hops[FP_FRAMES];
	uint32_t	 origin[FP_FRAMES], seq[FP_FRAMES];
	uint8_t		*data;
	size_t		 used;
};

static uint64_t	 fake_now = 1000000;

static uint64_t
now_us(void)
{
	return fake_now;
}

static void
fp_transmit(struct port *p, const struct sw_frame *f)
{
	struct fport	*fp = p->owner;

	ck_assert_int_lt(fp->n, FP_FRAMES);
	ck_assert_uint_le(fp->used + f->len, FP_BYTES);
	/* The switch never hands a port what its features refuse. */
	ck_assert(f->vh == NULL || (fp->features & SW_F_OFFLOAD));
	fp->off[fp->n] = fp->used;
	fp->len[fp->n] = f->len;
	fp->had_vh[fp->n] = f->vh != NULL;
	fp->hops[fp->n] = f->hops;
	fp->origin[fp->n] = f->origin;
	fp->seq[fp->n] = f->seq;
	memcpy(fp->data + fp->used, f->eth, f->len);
	fp->used += f->len;
	fp->n++;
}

static unsigned int
fp_features(const struct port *p)
{
	const struct fport *fp = p->owner;

	return fp->features;
}

static const char *
fp_name(const struct port *p)
{
	const struct fport *fp = p->owner;

	return fp->name;
}

static const struct port_ops guest_ops = {
	"interface", 1, fp_transmit, fp_features, fp_name
};
static const struct port_ops link_ops = {
	"link", 0, fp_transmit, fp_features, fp_name
};

static struct sw	*sw;
static struct fport	 g1, g2, l1, l2;

static void
fp_make(struct fport *fp, const char *name, const struct port_ops *ops,
    unsigned int features)
{
	char	 err[128];

	memset(fp, 0, sizeof(*fp));
	snprintf(fp->name, sizeof(fp->name), "%s", name);
	fp->features = features;
	ck_assert_ptr_nonnull(fp->data = malloc(FP_BYTES));
	ck_assert_msg(sw_port_add(sw, &fp->port, ops, fp, name, err,
	    sizeof(err)) == 0, "%s", err);
	sw_port_up(&fp->port);
}

static void
fp_clear(struct fport *fp)
{
	fp->n = 0;
	fp->used = 0;
}

static const uint8_t *
fp_frame(struct fport *fp, int i)
{
	return fp->data + fp->off[i];
}

static void
setup(void)
{
	char	 err[128];

	ck_assert_msg((sw = sw_new(now_us, err, sizeof(err))) != NULL, "%s",
	    err);
	fp_make(&g1, "g1", &guest_ops, 0);
	fp_make(&g2, "g2", &guest_ops, SW_F_OFFLOAD);
	fp_make(&l1, "l1", &link_ops, SW_F_OFFLOAD);
	fp_make(&l2, "l2", &link_ops, 0);
}

static void
teardown(void)
{
	struct fport	*all[] = { &g1, &g2, &l1, &l2 };
	size_t		 i;

	for (i = 0; i < 4; i++) {
		sw_port_del(sw, &all[i]->port);
		free(all[i]->data);
	}
	sw_free(sw);
	sw = NULL;
}

/* A small Ethernet frame dst <- src (last bytes), with a payload byte. */
static size_t
eth_frame(uint8_t *b, uint8_t dst, uint8_t src, uint8_t tag)
{
	memset(b, 0, 64);
	if (dst == 0xff)
		memset(b, 0xff, ETHER_ADDR_LEN);
	else
		memcpy(b, "\x02\0\0\0\0", 5), b[5] = dst;
	memcpy(b + 6, "\x02\0\0\0\0", 5);
	b[11] = src;
	b[12] = 0x88;
	b[13] = 0xb5;		/* local experimental ethertype */
	b[14] = tag;
	return 64;
}

static void
in_guest(struct fport *fp, const uint8_t *b, size_t len)
{
	struct sw_frame	 f = { NULL, b, len, 0, 0, 0 };

	sw_input(sw, &fp->port, &f);
}

static void
in_link(struct fport *fp, const uint8_t *b, size_t len, uint8_t hops,
    uint32_t origin, uint32_t seq)
{
	struct sw_frame	 f = { NULL, b, len, hops, origin, seq };

	sw_input(sw, &fp->port, &f);
}

static void
rule(const char *line)
{
	struct stmt		 st;
	struct stmt_error	 e;

	ck_assert_msg(stmt_parse(line, &st, &e) == 1, "'%s': %s", line,
	    e.msg);
	ck_assert_int_eq(fwd_route_add(sw_fwd(sw), &st.src, &st.dst,
	    st.target == TARGET_LINK ? FWD_LINK : FWD_IFACE, st.name), 0);
}

/* A rule sends a guest's frame to its one port; a link's frame too. */
START_TEST(test_rules)
{
	uint8_t	 b[64];
	size_t	 len = eth_frame(b, 9, 1, 7);

	rule("route any 02:00:00:00:00:09 link l1");
	in_guest(&g1, b, len);
	ck_assert_int_eq(l1.n, 1);
	ck_assert_int_eq(g2.n + l2.n + g1.n, 0);
	ck_assert_mem_eq(fp_frame(&l1, 0), b, len);
	/* From a guest: this daemon's identity, the full hop limit. */
	ck_assert_uint_eq(l1.origin[0], sw_origin(sw));
	ck_assert_uint_eq(l1.hops[0], WIRE_HOPS_DEFAULT);
	ck_assert_uint_eq(sw_stats(sw)->frames_in, 1);
	ck_assert_uint_eq(sw_stats(sw)->frames_out, 1);

	/* No rule covers another destination, and learning is off. */
	len = eth_frame(b, 8, 1, 7);
	in_guest(&g1, b, len);
	ck_assert_int_eq(l1.n + l2.n + g2.n, 1);
}
END_TEST

/* Learning: a source seen on a port makes unicast to it go there only. */
START_TEST(test_learning)
{
	uint8_t	 b[64];
	size_t	 len;

	fwd_set_learn(sw_fwd(sw), 1);
	/* Unknown destination: flooded to every port but the arrival one. */
	len = eth_frame(b, 5, 1, 1);
	in_guest(&g1, b, len);
	ck_assert_int_eq(g1.n, 0);
	ck_assert_int_eq(g2.n, 1);
	ck_assert_int_eq(l1.n, 1);
	ck_assert_int_eq(l2.n, 1);
	fp_clear(&g2);
	fp_clear(&l1);
	fp_clear(&l2);

	/* 02::05 answers from l2, as a remote guest: now it is learned. */
	len = eth_frame(b, 1, 5, 2);
	in_link(&l2, b, len, 10, 0x1234, 1);
	ck_assert_int_eq(g1.n, 1);
	ck_assert_int_eq(l2.n, 0);
	fp_clear(&g1);
	fp_clear(&g2);
	fp_clear(&l1);

	len = eth_frame(b, 5, 1, 3);
	in_guest(&g1, b, len);
	ck_assert_int_eq(l2.n, 1);
	ck_assert_int_eq(g1.n + g2.n + l1.n, 0);
}
END_TEST

/* Broadcast fans out to every other port, never back where it came in. */
START_TEST(test_broadcast_no_hairpin)
{
	uint8_t	 b[64];
	size_t	 len = eth_frame(b, 0xff, 1, 4);

	rule("route any any link l1");
	rule("route any any link l2");
	rule("route any any interface g1");
	rule("route any any interface g2");
	in_guest(&g1, b, len);
	ck_assert_int_eq(g1.n, 0);
	ck_assert_int_eq(g2.n, 1);
	ck_assert_int_eq(l1.n, 1);
	ck_assert_int_eq(l2.n, 1);
	fp_clear(&g2);
	fp_clear(&l1);
	fp_clear(&l2);

	in_link(&l1, b, len, 10, 0x77, 1);
	ck_assert_int_eq(l1.n, 0);
	ck_assert_int_eq(g1.n, 1);
	ck_assert_int_eq(g2.n, 1);
	ck_assert_int_eq(l2.n, 1);
	/* Link to link: one hop less, the frame's identity kept. */
	ck_assert_uint_eq(l2.hops[0], 9);
	ck_assert_uint_eq(l2.origin[0], 0x77);
	ck_assert_uint_eq(l2.seq[0], 1);
}
END_TEST

/* The hop limit and the duplicate check stop frames that go round. */
START_TEST(test_loops)
{
	uint8_t	 b[64];
	size_t	 len = eth_frame(b, 0xff, 3, 5);

	rule("route any any link l2");
	rule("route any any interface g1");
	/* The last hop: delivered to the guest, not sent on to a link. */
	in_link(&l1, b, len, 1, 0x99, 1);
	ck_assert_int_eq(g1.n, 1);
	ck_assert_int_eq(l2.n, 0);
	ck_assert_uint_eq(sw_stats(sw)->hop_limit, 1);

	/* The same frame again with the same identity: a copy, dropped. */
	in_link(&l1, b, len, 5, 0x99, 1);
	ck_assert_int_eq(g1.n, 1);
	ck_assert_int_eq(l2.n, 0);

	/* A frame back at its origin: dropped and counted. */
	in_link(&l1, b, len, 5, sw_origin(sw), 42);
	ck_assert_int_eq(g1.n, 1);
	ck_assert_uint_eq(sw_stats(sw)->duplicates, 1);

	/* A new one goes on, one hop less. */
	in_link(&l1, b, len, 5, 0x99, 2);
	ck_assert_int_eq(g1.n, 2);
	ck_assert_int_eq(l2.n, 1);
	ck_assert_uint_eq(l2.hops[0], 4);
}
END_TEST

/*
 * An offload super-frame reaches the ports with SW_F_OFFLOAD whole (g2,
 * l1) and the others (g1, l2) cut into segments whose checksums are
 * right, each segment toward a link with an identity of its own.
 */
START_TEST(test_offload)
{
	static uint8_t	 f[70000];
	uint8_t		 vh[GSO_VNET_HDR_LEN];
	struct gso_hdr	 h;
	struct sw_frame	 sf;
	struct fport	*cut[] = { &g1, &l2 };
	size_t		 len, payload = 1448 * 3 + 100, i;
	int		 k, nseg = 4;
	struct pkt	 p;
	const uint8_t	*seg;

	len = superframe(f, 4, payload, TCP_ACK | TCP_PSH, &h, 1448);
	gso_hdr_encode(vh, &h);
	rule("route any any link l1");
	rule("route any any link l2");
	rule("route any any interface g1");
	rule("route any any interface g2");
	/* From a link (l1 itself is the arrival port: three ports out). */
	sf.vh = vh;
	sf.eth = f;
	sf.len = len;
	sf.hops = 8;
	sf.origin = 0x55;
	sf.seq = 1;
	sw_input(sw, &l1.port, &sf);
	ck_assert_int_eq(g2.n, 1);
	ck_assert(g2.had_vh[0]);
	ck_assert_uint_eq(g2.len[0], len);
	ck_assert_mem_eq(fp_frame(&g2, 0), f, len);
	for (k = 0; k < 2; k++) {
		struct fport *fp = cut[k];

		ck_assert_int_eq(fp->n, nseg);
		for (i = 0; i < (size_t)nseg; i++) {
			seg = fp_frame(fp, (int)i);
			ck_assert(!fp->had_vh[i]);
			ck_assert_int_eq(pkt_parse(&p, seg, fp->len[i]),
			    PKT_OK);
			ck_assert_uint_le(p.payload, 1448);
			ck_assert_uint_eq(pkt_tcp_csum(seg, &p),
			    seg[p.l4off + 16] << 8 | seg[p.l4off + 17]);
			ck_assert_uint_eq(pkt_ipv4_csum(seg, &p),
			    seg[p.l3off + 10] << 8 | seg[p.l3off + 11]);
		}
	}
	/* Segments toward a link: new identities, all different. */
	for (i = 0; i < (size_t)nseg; i++) {
		ck_assert_uint_eq(l2.origin[i], sw_origin(sw));
		ck_assert_uint_eq(l2.hops[i], 7);
		if (i > 0)
			ck_assert_uint_ne(l2.seq[i], l2.seq[i - 1]);
	}
	ck_assert_uint_eq(sw_stats(sw)->gso_cut, 2);
	ck_assert_uint_eq(sw_stats(sw)->gso_segments, 2 * (uint64_t)nseg);

	/* A header that would multiply (segment size 1) goes nowhere. */
	fp_clear(&g1);
	fp_clear(&g2);
	fp_clear(&l2);
	h.gso_size = 1;
	gso_hdr_encode(vh, &h);
	sf.seq = 2;
	sw_input(sw, &l1.port, &sf);
	ck_assert_int_eq(g1.n + g2.n + l2.n, 0);
	ck_assert_uint_eq(sw_stats(sw)->offload_bad, 1);
}
END_TEST

static void
vcc_policy(const char *line)
{
	struct stmt		 st;
	struct stmt_error	 e;
	char			 err[256];

	ck_assert_msg(stmt_parse(line, &st, &e) == 1, "'%s': %s", line,
	    e.msg);
	ck_assert_msg(vcc_apply(sw_vcc(sw), &st, err, sizeof(err)) == 0,
	    "'%s': %s", line, err);
}

/* The TCP flags of an IPv4 frame without options. */
static uint8_t
tcp_flags(const uint8_t *b)
{
	return b[ETHER_HDR_LEN + 20 + 13];
}

/*
 * vCC in both directions, at the switch: g1 is a guest without ECN under
 * `ecn virtual`.  Its SYN leaves asking for ECN; the SYN-ACK's ECE is
 * hidden from g1, while g2 (no policy) gets the frame as it came.
 */
START_TEST(test_vcc_both_ways)
{
	uint8_t	 syn[sizeof(v4_syn)], synack[sizeof(v4_synack)];
	uint8_t	 want[sizeof(v4_synack)];

	vcc_policy("vcc g1 ecn virtual");
	rule("route any 02:00:00:00:00:02 link l1");
	rule("route any 02:00:00:00:00:01 interface g1");
	rule("route any 02:00:00:00:00:01 interface g2");

	memcpy(syn, v4_syn, sizeof(syn));
	in_guest(&g1, syn, sizeof(syn));
	ck_assert_int_eq(l1.n, 1);
	ck_assert_uint_eq(tcp_flags(fp_frame(&l1, 0)),
	    TCP_SYN | TCP_ECE | TCP_CWR);
	/* The guest's own buffer is not written: the rewrite is a copy. */
	ck_assert_mem_eq(syn, v4_syn, sizeof(syn));

	/* The remote agrees to ECN: ECE on its SYN-ACK. */
	memcpy(synack, v4_synack, sizeof(synack));
	synack[ETHER_HDR_LEN + 20 + 13] |= TCP_ECE;
	/* Its TCP checksum, kept right: the flags word grew by ECE. */
	{
		struct pkt	 p;
		uint16_t	 c;

		ck_assert_int_eq(pkt_parse(&p, synack, sizeof(synack)),
		    PKT_OK);
		c = pkt_tcp_csum(synack, &p);
		synack[p.l4off + 16] = (uint8_t)(c >> 8);
		synack[p.l4off + 17] = (uint8_t)c;
	}
	memcpy(want, synack, sizeof(want));
	in_link(&l1, synack, sizeof(synack), 10, 0x31, 1);
	ck_assert_int_eq(g1.n, 1);
	ck_assert_int_eq(g2.n, 1);
	/* g1 sees the SYN-ACK it would have got without ECN... */
	ck_assert_mem_eq(fp_frame(&g1, 0), v4_synack, sizeof(v4_synack));
	/* ...and g2 the frame as it came. */
	ck_assert_mem_eq(fp_frame(&g2, 0), want, sizeof(want));
}
END_TEST

/* A port that is down (not attached) gets nothing. */
START_TEST(test_port_down)
{
	uint8_t	 b[64];
	size_t	 len = eth_frame(b, 0xff, 1, 6);

	rule("route any any link l1");
	rule("route any any link l2");
	sw_port_down(&l1.port);
	in_guest(&g1, b, len);
	ck_assert_int_eq(l1.n, 0);
	ck_assert_int_eq(l2.n, 1);
	sw_port_up(&l1.port);
	in_guest(&g1, b, len);
	ck_assert_int_eq(l1.n, 1);
}
END_TEST


/* The timer the switch asks for: the last delay, and how often. */
static uint64_t	 armed_delay;
static int	 armed;

static void
fake_arm(void *arg, uint64_t delay_us)
{
	(void)arg;
	armed_delay = delay_us;
	armed++;
}

static uint8_t
tag_at(struct fport *fp, int i)
{
	return fp_frame(fp, i)[14];
}

/* A flow moves from link l1 to l2 and back: g1 gets it in order. */
/* How long l1 must be quiet in test_reseq: 4 gaps of 1 ms, or the least. */
#define QUIET	(RESEQ_QUIET_MIN_US > 4000 ? RESEQ_QUIET_MIN_US : 4000)

START_TEST(test_reseq)
{
	const struct reseq_stats *rs = sw_reseq_stats(sw);
	uint8_t		 b[64];
	uint32_t	 seq = 1;
	uint64_t	 t0 = fake_now, hold0;
	uint8_t		 want[] = { 1, 2, 3, 4, 10, 11, 12 };
	int		 i, n;

	sw_set_timer(sw, fake_arm, NULL);
	rule("route any 02:00:00:00:00:01 interface g1");
	/* A frame a millisecond by l1: it goes at once. */
	for (i = 1; i <= 3; i++) {
		fake_now = t0 + (uint64_t)(i - 1) * 1000;
		in_link(&l1, b, eth_frame(b, 1, 2, (uint8_t)i), 5, 77, seq++);
	}
	ck_assert_int_eq(g1.n, 3);
	/* The first by l2, with l1 busy: held, and a timer asked for. */
	fake_now = t0 + 2500;
	in_link(&l2, b, eth_frame(b, 1, 2, 10), 5, 77, seq++);
	ck_assert_int_eq(g1.n, 3);
	ck_assert_uint_eq(rs->holds, 1);
	ck_assert_int_eq(armed, 1);
	/* Due when l1 has been quiet 4 x its 1 ms gap (or the least). */
	ck_assert_uint_eq(armed_delay, 2000 + QUIET - 2500);
	/* l1's last one goes before them; l2's next waits. */
	fake_now = t0 + 3000;
	in_link(&l1, b, eth_frame(b, 1, 2, 4), 5, 77, seq++);
	fake_now = t0 + 3500;
	in_link(&l2, b, eth_frame(b, 1, 2, 11), 5, 77, seq++);
	ck_assert_int_eq(g1.n, 4);
	ck_assert_uint_eq(rs->held, 2);
	ck_assert_uint_eq(rs->old_after_new, 1);
	/* Not yet: l1 has been quiet 0.5 ms. */
	sw_poll(sw);
	ck_assert_int_eq(g1.n, 4);
	fake_now = t0 + 3000 + QUIET - 1;
	sw_poll(sw);
	ck_assert_int_eq(g1.n, 4);
	fake_now = t0 + 3000 + QUIET;
	sw_poll(sw);
	ck_assert_int_eq(g1.n, 6);
	ck_assert_uint_eq(rs->released_quiet, 1);
	ck_assert_uint_eq(rs->held_bytes, 0);
	/* Now l2 is the flow's link: on at once. */
	in_link(&l2, b, eth_frame(b, 1, 2, 12), 5, 77, seq++);
	ck_assert_int_eq(g1.n, 7);
	for (i = 0; i < 7; i++)
		ck_assert_int_eq(tag_at(&g1, i), want[i]);

	/* Back by l1 while l2 never falls quiet: held 100 ms at most. */
	fp_clear(&g1);
	hold0 = fake_now += 500;
	in_link(&l1, b, eth_frame(b, 1, 2, 20), 5, 77, seq++);
	n = 0;
	while (fake_now < hold0 + RESEQ_HOLD_MAX_US - 2000) {
		fake_now += 2000;
		in_link(&l2, b, eth_frame(b, 1, 2, 30), 5, 77, seq++);
		n++;
	}
	ck_assert_int_eq(g1.n, n);
	fake_now = hold0 + RESEQ_HOLD_MAX_US;
	in_link(&l1, b, eth_frame(b, 1, 2, 21), 5, 77, seq++);
	ck_assert_int_eq(g1.n, n + 2);
	ck_assert_int_eq(tag_at(&g1, n), 20);
	ck_assert_int_eq(tag_at(&g1, n + 1), 21);
	ck_assert_uint_eq(rs->released_max, 1);

	/* A frame held for a guest port that goes: dropped and counted. */
	fake_now += 100;
	in_link(&l2, b, eth_frame(b, 1, 2, 40), 5, 77, seq++);
	ck_assert_uint_eq(rs->holds, 3);
	sw_port_down(&g1.port);
	fake_now += RESEQ_HOLD_MAX_US;
	sw_poll(sw);
	ck_assert_uint_eq(sw_stats(sw)->reseq_lost, 1);
	sw_port_up(&g1.port);
	/* Held frames whose link goes are still delivered. */
	fp_clear(&g1);
	fake_now += 100;
	in_link(&l1, b, eth_frame(b, 1, 2, 50), 5, 77, seq++);
	fake_now += 100;
	in_link(&l2, b, eth_frame(b, 1, 2, 51), 5, 77, seq++);
	ck_assert_int_eq(g1.n, 1);
	sw_port_del(sw, &l2.port);
	ck_assert_int_eq(g1.n, 2);
	ck_assert_int_eq(tag_at(&g1, 1), 51);
	ck_assert_uint_eq(rs->held_bytes, 0);
}
END_TEST

/* Each hold is bounded in bytes, and a bound only ends it: nothing lost. */
static int	 delivered;

static void
count_deliver(void *arg, void *to, const struct sw_frame *f)
{
	(void)arg;
	(void)to;
	(void)f;
	delivered++;
}

START_TEST(test_reseq_bounds)
{
	struct reseq	*q;
	static uint8_t	 big[60000];
	struct sw_frame	 f = { NULL, big, sizeof(big), 5, 0, 0 };
	int		 a, c, to, i, passed = 0, sent = 0;
	uint32_t	 key;

	ck_assert_ptr_nonnull(q = reseq_new(count_deliver, NULL));
	delivered = 0;
	memset(big, 0, 64);
	key = reseq_key(q, big, sizeof(big), &to);
	ck_assert_int_eq(reseq_input(q, key, &a, &to, &f, 1000), 0);
	passed++;
	sent++;
	for (i = 0; i < 40; i++) {
		passed += reseq_input(q, key, &c, &to, &f, 1100) == 0;
		sent++;
	}
	ck_assert_uint_eq(reseq_stats(q)->released_full, 1);
	ck_assert_uint_le(reseq_stats(q)->held_bytes, RESEQ_FLOW_BYTES);
	ck_assert_int_eq(passed + delivered, sent);
	ck_assert_uint_eq(reseq_next(q), 0);
	/* Held when the flow's port goes: dropped, nothing delivered. */
	ck_assert_int_eq(reseq_input(q, key, &a, &to, &f, 1200), 1);
	ck_assert_uint_gt(reseq_stats(q)->held_bytes, 0);
	reseq_forget(q, &to);
	ck_assert_uint_eq(reseq_stats(q)->held_bytes, 0);
	ck_assert_int_eq(passed + delivered, sent);
	ck_assert_uint_eq(reseq_next(q), 0);
	/* Held when the whole goes: freed (the sanitizer build checks). */
	ck_assert_int_eq(reseq_input(q, key, &a, &to, &f, 1300), 0);
	ck_assert_int_eq(reseq_input(q, key, &c, &to, &f, 1400), 1);
	reseq_free(q);
}
END_TEST

/* Frames by a link off the source's path: on at once, nothing changed. */
static int
only_a_and_c(void *arg, void *from, const struct sw_frame *f)
{
	(void)f;
	return from != arg;
}

START_TEST(test_reseq_off_path)
{
	struct reseq	*q;
	static uint8_t	 eth[64];
	struct sw_frame	 f = { NULL, eth, sizeof(eth), 5, 0, 0 };
	int		 a, b, c, to, i;
	uint32_t	 key;

	ck_assert_ptr_nonnull(q = reseq_new(count_deliver, NULL));
	reseq_set_check(q, only_a_and_c, &b);
	delivered = 0;
	key = reseq_key(q, eth, sizeof(eth), &to);
	/* The flow by a, every 100 us. */
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(reseq_input(q, key, &a, &to, &f,
		    1000 + 100 * (uint64_t)i), 0);
	/* b, an insider's link, sends under the flow: on, unheld. */
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(reseq_input(q, key, &b, &to, &f, 2000), 0);
	ck_assert_uint_eq(reseq_stats(q)->off_path, 10);
	ck_assert_uint_eq(reseq_stats(q)->holds, 0);
	/* a is still the flow's link: its frames are not held. */
	ck_assert_int_eq(reseq_input(q, key, &a, &to, &f, 2001), 0);
	ck_assert_uint_eq(reseq_stats(q)->holds, 0);
	/* c, a path the source takes: held while a is still talking. */
	ck_assert_int_eq(reseq_input(q, key, &c, &to, &f, 2002), 1);
	ck_assert_uint_eq(reseq_stats(q)->holds, 1);
	/* b cannot end the hold as a third link would. */
	ck_assert_int_eq(reseq_input(q, key, &b, &to, &f, 2003), 0);
	ck_assert_uint_eq(reseq_stats(q)->released_other, 0);
	ck_assert_uint_eq(reseq_stats(q)->held, 1);
	reseq_free(q);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("sw");
	TCase	*tc = tcase_create("data path");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rules);
	tcase_add_test(tc, test_learning);
	tcase_add_test(tc, test_broadcast_no_hairpin);
	tcase_add_test(tc, test_loops);
	tcase_add_test(tc, test_offload);
	tcase_add_test(tc, test_vcc_both_ways);
	tcase_add_test(tc, test_port_down);
	tcase_add_test(tc, test_reseq);
	tcase_add_test(tc, test_reseq_bounds);
	tcase_add_test(tc, test_reseq_off_path);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
