/*
 * The link scheduler's pure parts, driven with an injected clock and real
 * packet bytes: the frame queue (lq), CoDel (aqm), the token bucket
 * (shaper), and the three together (sched).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aqm.h"
#include "buf.h"
#include "fq.h"
#include "lq.h"
#include "pkt.h"
#include "sched.h"
#include "shaper.h"

#define MS	1000ULL
#define SEC	1000000ULL

/*
 * An Ethernet frame with an IPv4 or IPv6 TCP segment of payload bytes, ECN
 * field ecn, checksums right.  Returns its length.
 */
static size_t
frame(uint8_t *f, size_t cap, int ipver, uint8_t ecn, size_t payload)
{
	struct pkt	 p;
	size_t		 l3 = 14, l4 = l3 + (ipver == 4 ? 20 : 40);
	size_t		 len = l4 + 20 + payload, i;

	ck_assert_uint_le(len, cap);
	memset(f, 0, len);
	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
	put_u16(f + 12, ipver == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6);
	if (ipver == 4) {
		f[l3] = 0x45;
		f[l3 + 1] = ecn;
		put_u16(f + l3 + 2, (uint16_t)(len - l3));
		f[l3 + 8] = 64;
		f[l3 + 9] = PKT_PROTO_TCP;
		memcpy(f + l3 + 12, "\x0a\x4d\0\x01\x0a\x4d\0\x02", 8);
	} else {
		f[l3] = 0x60;
		f[l3 + 1] = (uint8_t)(ecn << 4);
		put_u16(f + l3 + 4, (uint16_t)(len - l4));
		f[l3 + 6] = PKT_PROTO_TCP;
		f[l3 + 7] = 64;
		f[l3 + 8] = 0xfd;
		f[l3 + 23] = 1;
		f[l3 + 24] = 0xfd;
		f[l3 + 39] = 2;
	}
	put_u16(f + l4, 40000);
	put_u16(f + l4 + 2, 5201);
	put_u32(f + l4 + 4, 1000);
	put_u32(f + l4 + 8, 2000);
	f[l4 + 12] = 5 << 4;
	f[l4 + 13] = TCP_ACK;
	put_u16(f + l4 + 14, 502);
	for (i = 0; i < payload; i++)
		f[l4 + 20 + i] = (uint8_t)(i * 7 + 3);
	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	if (ipver == 4)
		put_u16(f + l3 + 10, pkt_ipv4_csum(f, &p));
	put_u16(f + l4 + 16, pkt_tcp_csum(f, &p));
	return len;
}

/* The frame's checksums are right and its ECN field is ecn. */
static void
check_frame(const uint8_t *f, size_t len, uint8_t ecn)
{
	struct pkt	 p;
	uint16_t	 stored;

	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	ck_assert_uint_eq(p.ecn, ecn);
	if (p.ipver == 4) {
		stored = (uint16_t)(f[p.l3off + 10] << 8 | f[p.l3off + 11]);
		ck_assert_uint_eq(stored, pkt_ipv4_csum(f, &p));
	}
	stored = (uint16_t)(f[p.l4off + 16] << 8 | f[p.l4off + 17]);
	ck_assert_uint_eq(stored, pkt_tcp_csum(f, &p));
}

/* lq */

START_TEST(lq_fifo)
{
	struct lq	 q;
	struct lq_item	 it;
	uint8_t		 a[4] = { 1, 2, 3, 4 }, b[3000];
	size_t		 pushed = 0, popped = 0, lens[4096], i;
	unsigned int	 seed = 7;
	int		 round;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)i;
	ck_assert_int_eq(lq_init(&q, 20000, sizeof(a) + sizeof(b)), 0);
	ck_assert_int_eq(lq_peek(&q, &it), -1);
	/* Random pushes and pops against a model: FIFO, data intact. */
	for (round = 0; round < 20000; round++) {
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 16) % 3 != 0) {
			size_t len = 1 + (seed >> 8) % sizeof(b);

			if (lq_push(&q, pushed, a, sizeof(a), b, len) == 0) {
				lens[pushed++ % 4096] = len;
				ck_assert_uint_le(q.bytes, 20000);
			} else
				ck_assert(q.bytes + sizeof(a) + len > 20000 ||
				    q.count > 0);
		} else if (lq_peek(&q, &it) == 0) {
			ck_assert_uint_eq(it.ts, popped);
			ck_assert_uint_eq(it.len, sizeof(a) + lens[popped % 4096]);
			ck_assert(memcmp(it.data, a, sizeof(a)) == 0);
			ck_assert(memcmp(it.data + sizeof(a), b,
			    it.len - sizeof(a)) == 0);
			lq_pop(&q);
			popped++;
		}
		ck_assert_uint_eq(q.count, pushed - popped);
	}
	ck_assert_uint_gt(popped, 1000);
	lq_flush(&q);
	ck_assert_uint_eq(q.count, 0);
	ck_assert_uint_eq(q.bytes, 0);
	lq_free(&q);
}
END_TEST

START_TEST(lq_limit)
{
	struct lq	 q;
	uint8_t		 b[1000];
	int		 n = 0;

	memset(b, 0, sizeof(b));
	ck_assert_int_eq(lq_init(&q, 10000, sizeof(b)), 0);
	while (lq_push(&q, 0, NULL, 0, b, sizeof(b)) == 0)
		n++;
	ck_assert_int_eq(n, 10);
	lq_pop(&q);
	ck_assert_int_eq(lq_push(&q, 0, NULL, 0, b, sizeof(b)), 0);
	ck_assert_int_eq(lq_push(&q, 0, NULL, 0, b, 1), -1);
	lq_free(&q);
}
END_TEST

/* aqm */

struct run {
	struct aqm	 a;
	uint8_t		 f[2048];
	size_t		 len;
};

static void
run_init(struct run *r, int ipver, uint8_t ecn)
{
	struct aqm_params	 p;

	aqm_params_default(&p);
	aqm_init(&r->a, &p);
	r->len = frame(r->f, sizeof(r->f), ipver, ecn, 1400);
}

/* One frame off a queue with the given sojourn; the frame made afresh. */
static enum aqm_verdict
run_one(struct run *r, uint64_t now, uint64_t sojourn, int ipver, uint8_t ecn)
{
	r->len = frame(r->f, sizeof(r->f), ipver, ecn, 1400);
	return aqm_dequeue(&r->a, now, now - sojourn, 100000, r->f, r->len);
}

START_TEST(aqm_starts_after_interval)
{
	struct run	 r;
	uint64_t	 t, t0 = 5 * SEC;
	enum aqm_verdict v;

	run_init(&r, 4, PKT_ECN_ECT0);
	/* Below target: never. */
	for (t = t0; t < t0 + SEC; t += MS)
		ck_assert_int_eq(run_one(&r, t, 4 * MS, 4, PKT_ECN_ECT0),
		    AQM_PASS);
	/* Above for 90 ms, one frame below, above for 90 ms: never. */
	t0 = t;
	for (; t < t0 + 90 * MS; t += MS)
		ck_assert_int_eq(run_one(&r, t, 20 * MS, 4, PKT_ECN_ECT0),
		    AQM_PASS);
	ck_assert_int_eq(run_one(&r, t, 2 * MS, 4, PKT_ECN_ECT0), AQM_PASS);
	t += MS;
	t0 = t;
	for (; t < t0 + 90 * MS; t += MS)
		ck_assert_int_eq(run_one(&r, t, 20 * MS, 4, PKT_ECN_ECT0),
		    AQM_PASS);
	/* A whole interval above: the first frame after it is marked. */
	for (; t < t0 + 100 * MS; t += MS)
		ck_assert_int_eq(run_one(&r, t, 20 * MS, 4, PKT_ECN_ECT0),
		    AQM_PASS);
	v = run_one(&r, t, 20 * MS, 4, PKT_ECN_ECT0);
	ck_assert_int_eq(v, AQM_MARK);
	check_frame(r.f, r.len, PKT_ECN_CE);
	ck_assert_uint_eq(r.a.marks, 1);
	ck_assert_uint_eq(r.a.drops, 0);
	ck_assert_int_eq(r.a.dropping, 1);
	ck_assert_uint_eq(r.a.count, 1);
}
END_TEST

/*
 * Above target for good, a frame every 100 us: the signals come at
 * interval / sqrt(count) spacing, count going up by one each time.
 */
START_TEST(aqm_control_law_spacing)
{
	struct run	 r;
	uint64_t	 t, t0 = SEC, last = 0, want;
	uint32_t	 n = 0;
	double		 expect;

	run_init(&r, 4, PKT_ECN_ECT1);
	for (t = t0; t < t0 + 3 * SEC; t += 100) {
		if (run_one(&r, t, 50 * MS, 4, PKT_ECN_ECT1) != AQM_MARK)
			continue;
		n++;
		ck_assert_uint_eq(r.a.count, n);
		if (n == 1) {
			ck_assert_uint_eq(t, t0 + 100 * MS);
		} else {
			/* The gap before signal n is interval / sqrt(n - 1). */
			want = aqm_control_law(0, 100000, n - 1);
			expect = 100000.0 / __builtin_sqrt((double)(n - 1));
			ck_assert_msg(want > expect - 2 && want < expect + 2,
			    "law for count %u: %llu us, not %.0f", n - 1,
			    (unsigned long long)want, expect);
			ck_assert_msg(t - last >= want - 100 &&
			    t - last <= want + 100, "gap %u: %llu us, not "
			    "%llu", n, (unsigned long long)(t - last),
			    (unsigned long long)want);
		}
		last = t;
	}
	/* 100 ms, then 100/sqrt(1), 100/sqrt(2), ...: 2.9 s hold ~210. */
	ck_assert_uint_gt(n, 200);
	ck_assert_uint_lt(n, 240);
	ck_assert_uint_eq(r.a.marks, n);
	ck_assert_uint_eq(r.a.drops, 0);
	/* Below target again: out of the signalling state. */
	ck_assert_int_eq(run_one(&r, t, MS, 4, PKT_ECN_ECT1), AQM_PASS);
	ck_assert_int_eq(r.a.dropping, 0);
}
END_TEST

/* Marked when ECN-capable (v4 and v6, ECT(0) and ECT(1)), else dropped. */
START_TEST(aqm_mark_or_drop)
{
	static const struct {
		int	 ipver;
		uint8_t	 ecn;
		int	 verdict;
	} cases[] = {
		{ 4, PKT_ECN_ECT0,	AQM_MARK },
		{ 4, PKT_ECN_ECT1,	AQM_MARK },
		{ 4, PKT_ECN_CE,	AQM_MARK },
		{ 4, PKT_ECN_NOT_ECT,	AQM_DROP },
		{ 6, PKT_ECN_ECT0,	AQM_MARK },
		{ 6, PKT_ECN_ECT1,	AQM_MARK },
		{ 6, PKT_ECN_NOT_ECT,	AQM_DROP },
	};
	struct run	 r;
	uint64_t	 t;
	size_t		 i;
	enum aqm_verdict v;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_init(&r, 4, PKT_ECN_ECT0);
		for (t = SEC; t < SEC + 100 * MS; t += MS)
			ck_assert_int_eq(run_one(&r, t, 10 * MS, 4,
			    PKT_ECN_ECT0), AQM_PASS);
		v = run_one(&r, t, 10 * MS, cases[i].ipver, cases[i].ecn);
		ck_assert_msg((int)v == cases[i].verdict, "IPv%d ecn %u: %d",
		    cases[i].ipver, cases[i].ecn, v);
		if (v == AQM_MARK) {
			check_frame(r.f, r.len, PKT_ECN_CE);
			ck_assert_uint_eq(r.a.marks, 1);
			ck_assert_uint_eq(r.a.drops, 0);
		} else {
			check_frame(r.f, r.len, cases[i].ecn);
			ck_assert_uint_eq(r.a.drops, 1);
			ck_assert_uint_eq(r.a.marks, 0);
		}
	}
}
END_TEST

/* Not an IP packet (ARP, say): dropped, never rewritten. */
START_TEST(aqm_not_ip)
{
	struct aqm		 a;
	struct aqm_params	 p;
	uint8_t			 f[60], copy[60];
	uint64_t		 t;
	enum aqm_verdict	 v = AQM_PASS;

	memset(f, 0xab, sizeof(f));
	put_u16(f + 12, 0x0806);
	memcpy(copy, f, sizeof(f));
	aqm_params_default(&p);
	aqm_init(&a, &p);
	for (t = SEC; t <= SEC + 101 * MS && v == AQM_PASS; t += MS)
		v = aqm_dequeue(&a, t, t - 10 * MS, 100000, f, sizeof(f));
	ck_assert_int_eq(v, AQM_DROP);
	ck_assert(memcmp(f, copy, sizeof(f)) == 0);
}
END_TEST

/* Nothing behind the frame, or the AQM off: no signal, however long. */
START_TEST(aqm_quiet)
{
	struct aqm		 a, off;
	struct aqm_params	 p;
	uint8_t			 f[2048];
	size_t			 len = frame(f, sizeof(f), 4, PKT_ECN_NOT_ECT, 1400);
	uint64_t		 t;

	aqm_params_default(&p);
	aqm_init(&a, &p);
	p.kind = AQM_OFF;
	aqm_init(&off, &p);
	for (t = SEC; t < 3 * SEC; t += MS) {
		ck_assert_int_eq(aqm_dequeue(&a, t, t - 50 * MS, AQM_MTU, f,
		    len), AQM_PASS);
		ck_assert_int_eq(aqm_dequeue(&off, t, t - 50 * MS, 1000000, f,
		    len), AQM_PASS);
	}
}
END_TEST

/* Params: a 2 ms target, 20 ms interval take effect. */
START_TEST(aqm_params)
{
	struct aqm		 a;
	struct aqm_params	 p = { AQM_CODEL, 2 * MS, 20 * MS };
	uint8_t			 f[2048];
	size_t			 len = frame(f, sizeof(f), 6, PKT_ECN_ECT0, 100);
	uint64_t		 t, first = 0;

	aqm_init(&a, &p);
	for (t = SEC; t < SEC + 100 * MS && first == 0; t += MS)
		if (aqm_dequeue(&a, t, t - 3 * MS, 10000, f, len) == AQM_MARK)
			first = t;
	ck_assert_uint_eq(first, SEC + 20 * MS);
	check_frame(f, len, PKT_ECN_CE);
}
END_TEST

/* shaper */

/*
 * A backlogged link for simulated seconds, the clock late by up to late us
 * on every wake-up: the bytes sent match the rate within 1%, and no span
 * carries more than burst + rate * span + a frame.
 */
static void
shaper_run(uint64_t rate, size_t flen, uint64_t late)
{
	struct shaper	 s;
	uint64_t	 t = 10 * SEC, start = t, end, w;
	uint64_t	 sent = 0, burst = shaper_burst_bytes(rate);
	unsigned int	 seed = 1;
	static uint64_t	 when[200000];
	size_t		 n = 0, i, j = 0;
	double		 got;

	/* Five seconds, or 200 frames' time at slow rates. */
	end = flen * 8 * SEC / rate * 200;
	end = t + (end > 5 * SEC ? end : 5 * SEC);
	shaper_init(&s, rate, t);
	/* Idle long enough: a full bucket, sent at once. */
	while (shaper_wait(&s, t) == 0) {
		shaper_charge(&s, flen);
		sent += flen;
	}
	ck_assert_uint_le(sent, burst + flen);
	ck_assert_uint_ge(sent, burst);
	sent = 0;
	while (t < end) {
		if ((w = shaper_wait(&s, t)) != 0) {
			seed = seed * 1103515245u + 12345u;
			t += w + (late ? (seed >> 8) % late : 0);
			continue;
		}
		shaper_charge(&s, flen);
		sent += flen;
		if (n < sizeof(when) / sizeof(when[0]))
			when[n++] = t;
	}
	got = (double)sent * 8 / ((double)(t - start) / SEC);
	ck_assert_msg(got > rate * 0.99 && got < rate * 1.01 + burst * 8 / 5.0,
	    "rate %llu, late %llu: %.0f bit/s", (unsigned long long)rate,
	    (unsigned long long)late, got);
	/* Every span from one departure to a later one. */
	for (i = 0; i < n; i++) {
		while (j < n && when[j] - when[i] <= 100 * MS)
			j++;
		ck_assert_uint_le((j - i) * flen, burst +
		    rate / 8 * (when[j - 1] - when[i]) / SEC + flen);
	}
}

START_TEST(shaper_accuracy)
{
	shaper_run(10000000, 1514, 0);
	shaper_run(10000000, 1514, 4000);
	shaper_run(100000000, 1514, 1000);
	shaper_run(100000000, 66, 0);
	shaper_run(1000000000, 1514, 500);
	shaper_run(8000, 1514, 0);
	shaper_run(1000000000, 65000, 0);
}
END_TEST

START_TEST(shaper_burst)
{
	/* At least two full frames; 5 ms of the rate when that is more. */
	ck_assert_uint_eq(shaper_burst_bytes(1000000), 2 * 1514);
	ck_assert_uint_eq(shaper_burst_bytes(100000000), 62500);
	ck_assert_uint_eq(shaper_burst_bytes(1000000000000ULL), 625000000);
}
END_TEST

START_TEST(shaper_unlimited)
{
	struct shaper	 s;
	int		 i;

	shaper_init(&s, 0, 0);
	for (i = 0; i < 100000; i++) {
		ck_assert_uint_eq(shaper_wait(&s, 0), 0);
		shaper_charge(&s, 65000);
	}
}
END_TEST

/* fq */

/* A TCP frame of flow sport, payload bytes; sojourn is the caller's. */
static size_t
flow_frame(uint8_t *f, size_t cap, uint16_t sport, uint8_t ecn, size_t payload)
{
	struct pkt	 p;
	size_t		 len = frame(f, cap, 4, ecn, payload);

	ck_assert_int_eq(pkt_parse(&p, f, len), PKT_OK);
	put_u16(f + p.l4off, sport);
	put_u16(f + p.l4off + 16, 0);
	put_u16(f + p.l4off + 16, pkt_tcp_csum(f, &p));
	return len;
}

static uint16_t
buf_sport(const struct fq_buf *b, size_t prefix)
{
	struct pkt	 p;

	ck_assert_int_eq(pkt_parse(&p, b->data + prefix, b->len - prefix),
	    PKT_OK);
	return p.sport;
}

/* A sparse flow's frame goes ahead of a bulk flow's standing queue. */
START_TEST(fq_sparse_first)
{
	struct fq		 q;
	struct aqm_params	 p;
	struct fq_buf		*b;
	uint8_t			 f[2048], pre[4] = { 9, 9, 9, 9 };
	size_t			 len;
	uint64_t		 drops = 0;
	int			 i, marked;

	aqm_params_default(&p);
	ck_assert_int_eq(fq_init(&q, 1 << 20, sizeof(pre), &p, 5), 0);
	len = flow_frame(f, sizeof(f), 1000, PKT_ECN_ECT0, 1400);
	ck_assert_uint_ne(fq_hash(&q, f, len), fq_hash(&q, f, len) + 1);
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(fq_enqueue(&q, SEC, pre, f, len, &drops), 0);
	/* Serve a few of the bulk flow, then a ping-like frame arrives. */
	for (i = 0; i < 3; i++) {
		b = fq_dequeue(&q, SEC, &drops, &marked);
		ck_assert_ptr_nonnull(b);
		ck_assert_uint_eq(buf_sport(b, sizeof(pre)), 1000);
		ck_assert(memcmp(b->data, pre, sizeof(pre)) == 0);
		fq_release(&q, b);
	}
	len = flow_frame(f, sizeof(f), 2000, PKT_ECN_NOT_ECT, 56);
	ck_assert_int_eq(fq_enqueue(&q, SEC, pre, f, len, &drops), 0);
	b = fq_dequeue(&q, SEC, &drops, &marked);
	ck_assert_uint_eq(buf_sport(b, sizeof(pre)), 2000);
	fq_release(&q, b);
	ck_assert_uint_eq(q.count, 97);
	fq_free(&q);
}
END_TEST

/* Two bulk flows share by bytes; CoDel signals each flow on its own. */
START_TEST(fq_fair)
{
	struct fq		 q;
	struct aqm_params	 p;
	struct fq_buf		*b;
	uint8_t			 f[2048], pre[16];
	size_t			 len, n1 = 0, n2 = 0;
	uint64_t		 drops = 0, t;
	int			 i, marked, marks = 0;

	memset(pre, 0, sizeof(pre));
	aqm_params_default(&p);
	ck_assert_int_eq(fq_init(&q, 1 << 22, sizeof(pre), &p, 5), 0);
	/* Flow 1 ECN-capable and big frames, flow 2 not, smaller frames. */
	for (i = 0; i < 1000; i++) {
		len = flow_frame(f, sizeof(f), 1, PKT_ECN_ECT0, 1400);
		ck_assert_int_eq(fq_enqueue(&q, SEC, pre, f, len, &drops), 0);
		len = flow_frame(f, sizeof(f), 2, PKT_ECN_NOT_ECT, 700);
		ck_assert_int_eq(fq_enqueue(&q, SEC, pre, f, len, &drops), 0);
	}
	/* Dequeued a frame per ms, each having waited long. */
	for (t = SEC + 50 * MS; q.count > 0; t += MS) {
		if ((b = fq_dequeue(&q, t, &drops, &marked)) == NULL)
			break;
		marks += marked;
		if (buf_sport(b, sizeof(pre)) == 1)
			n1 += b->len - sizeof(pre);
		else {
			n2 += b->len - sizeof(pre);
			ck_assert(!marked);
		}
		if (n1 + n2 < 600000) {
			double r = (double)n1 / (double)(n2 ? n2 : 1);

			ck_assert_msg(n1 + n2 < 100000 || (r > 0.9 && r < 1.1),
			    "bytes %zu vs %zu", n1, n2);
		}
		fq_release(&q, b);
	}
	ck_assert_int_gt(marks, 0);
	ck_assert_uint_gt(drops, 0);
	fq_free(&q);
}
END_TEST

/*
 * A full queue: the flow with the most bytes loses its oldest frames, half
 * its bytes at most 64 frames at a time, and the arriving frame of another
 * flow gets in.
 */
START_TEST(fq_full_drops_fattest)
{
	struct fq		 q;
	struct aqm_params	 p;
	struct fq_buf		*b;
	uint8_t			 f[2048], pre[4] = { 0 };
	size_t			 len, i, a = 0, c = 0;
	uint64_t		 drops = 0;
	int			 marked;

	aqm_params_default(&p);
	/* 64 KiB: at most 128 frames */
	ck_assert_int_eq(fq_init(&q, 64 * 1024, sizeof(pre), &p, 5), 0);
	for (i = 0; i < 100; i++) {
		len = flow_frame(f, sizeof(f), 1, PKT_ECN_NOT_ECT, 500);
		f[len - 1] = (uint8_t)i;	/* its place in the flow */
		ck_assert_int_eq(fq_enqueue(&q, SEC, pre, f, len, &drops), 0);
	}
	len = flow_frame(f, sizeof(f), 2, PKT_ECN_NOT_ECT, 56);
	for (i = 0; i < 28; i++)
		ck_assert_int_eq(fq_enqueue(&q, SEC, pre, f, len, &drops), 0);
	ck_assert_uint_eq(q.count, 128);
	ck_assert_uint_eq(drops, 0);
	/* full: flow 1 loses 50 frames (half its bytes), from its head */
	ck_assert_int_eq(fq_enqueue(&q, SEC, pre, f, len, &drops), 0);
	ck_assert_uint_eq(drops, 50);
	ck_assert_uint_eq(q.count, 79);
	while ((b = fq_dequeue(&q, SEC, &drops, &marked)) != NULL) {
		if (buf_sport(b, sizeof(pre)) == 1) {
			ck_assert_uint_eq(b->data[b->len - 1], 50 + a);
			a++;
		} else
			c++;
		fq_release(&q, b);
	}
	ck_assert_uint_eq(a, 50);
	ck_assert_uint_eq(c, 29);
	fq_free(&q);
}
END_TEST

/* sched: the three together */

/*
 * ECN-capable frames arrive at twice the rate of a 10 Mbit/s link for five
 * simulated seconds: CE marks, no AQM drops, a bounded queue; and the same
 * with not-ECT frames: AQM drops instead.
 */
static void
sched_run(uint8_t ecn, struct sched_counters *c, struct sched_quantiles *qt)
{
	struct sched		 s;
	struct sched_opts	 o;
	struct lq_item		 it;
	uint8_t			 f[2048], pre[16];
	size_t			 len = frame(f, sizeof(f), 4, ecn, 1448);
	uint64_t		 t = SEC, next_in = t, next_out = t, wait;
	uint64_t		 sent = 0, gap = len * 8 * SEC / 20000000;
	enum sched_result	 r;

	memset(pre, 0xee, sizeof(pre));
	sched_opts_default(&o);
	o.rate = 10000000;
	ck_assert_int_eq(sched_init(&s, &o, 1 << 20, sizeof(pre), 65536, t,
	    1), 0);
	while (t < 6 * SEC) {
		if (t >= next_in) {
			sched_enqueue(&s, t, pre, f, len);
			next_in += gap;
		}
		if (t >= next_out) {
			while ((r = sched_dequeue(&s, t, &it, &wait)) ==
			    SCHED_SEND) {
				ck_assert(memcmp(it.data, pre, 16) == 0);
				check_frame(it.data + 16, it.len - 16,
				    s.c.ce_marks && ecn ? (it.data[16 + 15] &
				    3) : ecn);
				sent += it.len - 16;
			}
			next_out = r == SCHED_WAIT ? t + wait : t + 100;
		}
		t = next_in < next_out ? next_in : next_out;
	}
	*c = s.c;
	sched_quantiles(&s, t, qt);
	/* 10 Mbit/s for 5 s, give or take the first burst. */
	ck_assert_msg(sent * 8 > 49000000 && sent * 8 < 51000000,
	    "sent %llu bits", (unsigned long long)sent * 8);
	sched_free(&s);
}

/*
 * A broadcast storm (one flow of ARP-sized frames, not IP) at four times a
 * 10 Mbit/s link's rate fills its queue; a ping-like flow (a small frame
 * every 10 ms) still gets every frame through, promptly: a full queue
 * drops from the fattest flow (RFC 8290), not whatever arrives.
 */
START_TEST(sched_storm_fattest)
{
	struct sched		 s;
	struct sched_opts	 o;
	struct lq_item		 it;
	struct pkt		 p;
	uint8_t			 storm[60], ping[128], pre[16];
	size_t			 plen;
	uint64_t		 t = SEC, next_storm = t, next_ping = t;
	uint64_t		 next_out = t, wait, gap, worst = 0;
	uint64_t		 pings_in = 0, pings_out = 0, storm_out = 0;
	enum sched_result	 r;

	memset(pre, 0xee, sizeof(pre));
	memset(storm, 0x5a, sizeof(storm));
	memcpy(storm, "\xff\xff\xff\xff\xff\xff\x02\0\0\0\0\x05\x88\xb5", 14);
	plen = flow_frame(ping, sizeof(ping), 7, PKT_ECN_NOT_ECT, 56);
	gap = sizeof(storm) * 8 * SEC / 40000000;
	sched_opts_default(&o);
	ck_assert_int_eq(o.aqm.kind, AQM_FQ_CODEL);
	o.rate = 10000000;
	ck_assert_int_eq(sched_init(&s, &o, 256 * 1024, sizeof(pre), 65536, t,
	    1), 0);
	while (t < 5 * SEC) {
		if (t >= next_storm) {
			sched_enqueue(&s, t, pre, storm, sizeof(storm));
			next_storm += gap;
		}
		if (t >= next_ping) {
			(void)sched_enqueue(&s, t, pre, ping, plen);
			pings_in++;
			next_ping += 10 * MS;
		}
		if (t >= next_out) {
			while ((r = sched_dequeue(&s, t, &it, &wait)) ==
			    SCHED_SEND) {
				if (pkt_parse(&p, it.data + 16, it.len - 16) ==
				    PKT_OK && p.tcp && p.sport == 7) {
					pings_out++;
					if (t - it.ts > worst)
						worst = t - it.ts;
				} else
					storm_out++;
			}
			next_out = r == SCHED_WAIT ? t + wait : t + 100;
		}
		t = next_storm < next_ping ? next_storm : next_ping;
		t = t < next_out ? t : next_out;
	}
	/* The ping got by; the storm had the link, and lost most frames. */
	ck_assert_msg(pings_out + 1 >= pings_in, "%llu of %llu pings went",
	    (unsigned long long)pings_out, (unsigned long long)pings_in);
	ck_assert_msg(worst < 5 * MS, "a ping waited %llu us",
	    (unsigned long long)worst);
	ck_assert_uint_gt(s.c.fat_drops, 100000);
	ck_assert_uint_eq(s.c.tail_drops, 0);
	ck_assert_uint_gt((storm_out * sizeof(storm) + pings_out * plen) * 8,
	    35000000);
	sched_free(&s);
}
END_TEST

/*
 * A new limit: the queued frames are returned as lost, and the resized
 * scheduler queues and sends again (its flow lists are its own, not a
 * copy's).
 */
static void
sched_resize_in(struct sched *s, size_t limit, size_t *lost)
{
	ck_assert_int_eq(sched_resize(s, limit, 65536, 7, lost), 0);
}

START_TEST(sched_resize_keeps_working)
{
	struct sched		*s;
	struct sched_opts	 o;
	struct lq_item		 it;
	uint8_t			 f[2048], pre[16];
	size_t			 len = frame(f, sizeof(f), 4, PKT_ECN_NOT_ECT, 1000);
	size_t			 lost, i, got = 0;
	uint64_t		 t = SEC, wait;

	memset(pre, 0xee, sizeof(pre));
	sched_opts_default(&o);
	ck_assert_int_eq(o.aqm.kind, AQM_FQ_CODEL);
	ck_assert_ptr_nonnull(s = malloc(sizeof(*s)));
	ck_assert_int_eq(sched_init(s, &o, 1 << 20, sizeof(pre), 65536, t, 1),
	    0);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(sched_enqueue(s, t, pre, f, len), 0);
	s->c.ce_marks = 42;
	sched_resize_in(s, 256 * 1024, &lost);
	ck_assert_uint_eq(lost, 5);
	ck_assert_uint_eq(sched_frames(s), 0);
	ck_assert_uint_eq(s->c.ce_marks, 42);
	ck_assert_int_eq(sched_dequeue(s, t, &it, &wait), SCHED_EMPTY);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(sched_enqueue(s, t, pre, f, len), 0);
	while (sched_dequeue(s, t, &it, &wait) == SCHED_SEND) {
		ck_assert_uint_eq(it.len, sizeof(pre) + len);
		got++;
	}
	ck_assert_uint_eq(got, 3);
	sched_free(s);
	free(s);
}
END_TEST

START_TEST(sched_ecn)
{
	struct sched_counters	 c;
	struct sched_quantiles	 qt;

	sched_run(PKT_ECN_ECT0, &c, &qt);
	ck_assert_uint_gt(c.ce_marks, 10);
	ck_assert_uint_eq(c.aqm_drops, 0);
	/* The arrivals do not slow down (no TCP here), so the queue grows
	 * to the limit: the marks alone cannot hold it. */
	ck_assert_uint_gt(qt.n, 0);
	ck_assert_uint_ge(qt.p99, qt.p50);

	sched_run(PKT_ECN_NOT_ECT, &c, &qt);
	ck_assert_uint_eq(c.ce_marks, 0);
	ck_assert_uint_gt(c.aqm_drops, 10);
	ck_assert_uint_gt(qt.n, 0);
}
END_TEST

/* A frame may pass an empty queue of an unpaced link, and is counted. */
START_TEST(sched_bypass)
{
	struct sched		 s;
	struct sched_opts	 o;
	struct sched_quantiles	 qt;
	struct lq_item		 it;
	uint8_t			 f[2048], pre[16];
	size_t			 len = frame(f, sizeof(f), 4, PKT_ECN_ECT0, 1448);
	uint64_t		 wait;
	int			 kind;

	memset(pre, 0, sizeof(pre));
	for (kind = 0; kind < 2; kind++) {
		sched_opts_default(&o);
		if (kind == 1)
			o.aqm.kind = AQM_CODEL;
		ck_assert_int_eq(sched_init(&s, &o, 1 << 20, sizeof(pre),
		    65536, SEC, 1), 0);
		ck_assert(sched_may_bypass(&s));
		sched_bypassed(&s, SEC);
		sched_bypassed(&s, SEC + 10);
		sched_quantiles(&s, SEC + 20, &qt);
		ck_assert_uint_eq(qt.n, 2);
		ck_assert_uint_eq(qt.max, 0);
		/* Something waits: the next frame must queue behind it. */
		ck_assert_int_eq(sched_enqueue(&s, SEC, pre, f, len), 0);
		ck_assert(!sched_may_bypass(&s));
		ck_assert_int_eq(sched_dequeue(&s, SEC + 500, &it, &wait),
		    SCHED_SEND);
		ck_assert(sched_may_bypass(&s));
		sched_quantiles(&s, SEC + 600, &qt);
		ck_assert_uint_eq(qt.n, 3);
		ck_assert_uint_eq(qt.max, 500);
		/* A paced link never lets a frame past its shaper. */
		o.rate = 10000000;
		sched_set_opts(&s, &o, SEC + 700);
		ck_assert(!sched_may_bypass(&s));
		sched_free(&s);
	}
}
END_TEST

START_TEST(sched_opts_stmt)
{
	struct sched_opts	 o, back;
	struct stmt		 st;

	sched_opts_default(&o);
	memset(&st, 0, sizeof(st));
	sched_opts_to_stmt(&o, &st);
	ck_assert_uint_eq(st.lopts, 0);
	o.rate = 10000000;
	o.aqm.target = 2000;
	sched_opts_to_stmt(&o, &st);
	ck_assert_uint_eq(st.lopts, STMT_LOPT_RATE | STMT_LOPT_AQM);
	sched_opts_default(&back);
	sched_opts_from_stmt(&back, &st);
	ck_assert_uint_eq(back.rate, o.rate);
	ck_assert_int_eq(back.aqm.kind, o.aqm.kind);
	ck_assert_uint_eq(back.aqm.target, o.aqm.target);
	ck_assert_uint_eq(back.aqm.interval, o.aqm.interval);
	o.aqm.kind = AQM_OFF;
	sched_opts_to_stmt(&o, &st);
	ck_assert_int_eq(st.aqm, STMT_AQM_OFF);
	/* Only what a statement names changes. */
	memset(&st, 0, sizeof(st));
	st.lopts = STMT_LOPT_RATE;
	st.rate = 0;
	sched_opts_from_stmt(&o, &st);
	ck_assert_uint_eq(o.rate, 0);
	ck_assert_int_eq(o.aqm.kind, AQM_OFF);
	/* A congestion control comes and goes with the statement. */
	snprintf(o.congestion, sizeof(o.congestion), "cubic");
	sched_opts_to_stmt(&o, &st);
	ck_assert(st.lopts & STMT_LOPT_CONGESTION);
	ck_assert_str_eq(st.congestion, "cubic");
	sched_opts_default(&back);
	ck_assert_str_eq(back.congestion, "");
	sched_opts_from_stmt(&back, &st);
	ck_assert_str_eq(back.congestion, "cubic");
	memset(&st, 0, sizeof(st));
	st.lopts = STMT_LOPT_CONGESTION;	/* "congestion default" */
	sched_opts_from_stmt(&back, &st);
	ck_assert_str_eq(back.congestion, "");
	sched_opts_to_stmt(&back, &st);
	ck_assert_uint_eq(st.lopts & STMT_LOPT_CONGESTION, 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("sched");
	TCase	*tc = tcase_create("sched");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, lq_fifo);
	tcase_add_test(tc, lq_limit);
	tcase_add_test(tc, aqm_starts_after_interval);
	tcase_add_test(tc, aqm_control_law_spacing);
	tcase_add_test(tc, aqm_mark_or_drop);
	tcase_add_test(tc, aqm_not_ip);
	tcase_add_test(tc, aqm_quiet);
	tcase_add_test(tc, aqm_params);
	tcase_add_test(tc, shaper_accuracy);
	tcase_add_test(tc, shaper_burst);
	tcase_add_test(tc, shaper_unlimited);
	tcase_add_test(tc, fq_sparse_first);
	tcase_add_test(tc, fq_fair);
	tcase_add_test(tc, fq_full_drops_fattest);
	tcase_add_test(tc, sched_ecn);
	tcase_add_test(tc, sched_storm_fattest);
	tcase_add_test(tc, sched_resize_keeps_working);
	tcase_add_test(tc, sched_bypass);
	tcase_add_test(tc, sched_opts_stmt);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
