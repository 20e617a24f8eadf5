/*
 * The datagram layer's pure parts: the header codec, the replay window,
 * sealing and opening (forged, truncated, replayed datagrams), rekeying
 * with the old and new keys overlapping, the pieces of a frame too large
 * for the path (dfrag) and the path MTU search (pmtu), all on a fake
 * clock.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfrag.h"
#include "dgram.h"
#include "pmtu.h"

/* Keys both ends derive alike: a byte per epoch and direction. */
struct keys {
	int	 side;		/* 0: the dialler, 1: the other */
	int	 fail_from;	/* epochs from here cannot be had; 0: none */
	int	 calls;
};

static int
secret(void *arg, uint32_t epoch, int tx, uint8_t out[DGRAM_SECRET_LEN])
{
	struct keys	*k = arg;
	int		 dir = tx ? k->side : !k->side;
	size_t		 i;

	k->calls++;
	if (k->fail_from != 0 && epoch >= (uint32_t)k->fail_from)
		return -1;
	for (i = 0; i < DGRAM_SECRET_LEN; i++)
		out[i] = (uint8_t)(epoch * 31 + (uint32_t)dir * 7 + i);
	return 0;
}

struct pair {
	struct keys	 ka, kb;
	struct dgram	 a, b;
};

static void
pair_init(struct pair *p, enum dgram_aead aead)
{
	struct dgram_keysrc	 sa = { secret, &p->ka }, sb = { secret, &p->kb };

	memset(p, 0, sizeof(*p));
	p->kb.side = 1;
	ck_assert_int_eq(dgram_init(&p->a, aead, 0x1111, 0x2222, &sa, 0), 0);
	ck_assert_int_eq(dgram_init(&p->b, aead, 0x2222, 0x1111, &sb, 0), 0);
}

static void
pair_free(struct pair *p)
{
	dgram_free(&p->a);
	dgram_free(&p->b);
}

/* Seals "payload N" from a into buf: its length. */
static size_t
seal(struct dgram *a, uint64_t now, uint8_t *buf, int n)
{
	int	 len = snprintf((char *)buf + DGRAM_HDR_LEN, 64, "payload %d", n);

	return dgram_seal(a, now, DGRAM_DATA, buf, (size_t)len);
}

START_TEST(hdr_codec)
{
	struct dgram_hdr h = { DGRAM_PROBE, 7, 0xdeadbeef, 0x0102030405060708ULL }, g;
	uint8_t		 b[DGRAM_HDR_LEN];

	dgram_hdr_encode(b, &h);
	ck_assert_uint_eq(b[0], DGRAM_PROBE);
	ck_assert_uint_eq(b[4], 0xde);
	ck_assert_uint_eq(b[15], 0x08);
	ck_assert_int_eq(dgram_hdr_decode(b, sizeof(b), &g), 0);
	ck_assert_uint_eq(g.type, h.type);
	ck_assert_uint_eq(g.key, 7);
	ck_assert_uint_eq(g.receiver, h.receiver);
	ck_assert(g.counter == h.counter);
	ck_assert_uint_eq(dgram_receiver(b, sizeof(b)), 0xdeadbeef);
	/* Short, reserved bits, no such type, index 0: none of ours. */
	ck_assert_int_eq(dgram_hdr_decode(b, DGRAM_HDR_LEN - 1, &g), -1);
	ck_assert_uint_eq(dgram_receiver(b, DGRAM_HDR_LEN - 1), 0);
	b[2] = 1;
	ck_assert_int_eq(dgram_hdr_decode(b, sizeof(b), &g), -1);
	b[2] = 0;
	b[0] = 0;
	ck_assert_int_eq(dgram_hdr_decode(b, sizeof(b), &g), -1);
	b[0] = DGRAM_LIVE + 1;
	ck_assert_int_eq(dgram_hdr_decode(b, sizeof(b), &g), -1);
	b[0] = DGRAM_DATA;
	memset(b + 4, 0, 4);
	ck_assert_int_eq(dgram_hdr_decode(b, sizeof(b), &g), -1);
}
END_TEST

/* The short form of a frame, with and without an offload header. */
START_TEST(frame_codec)
{
	uint8_t			 m[DGRAM_FRAME_HDR + DGRAM_FRAME_VH + 64];
	uint8_t			 vh[DGRAM_FRAME_VH] = { 1, 1 }, zero[DGRAM_FRAME_VH];
	struct dgram_frame	 f;
	size_t			 hl;

	memset(zero, 0, sizeof(zero));
	hl = dgram_frame_encode_hdr(m, 15, 0x01020304, 0xa0b0c0d0, zero);
	ck_assert_uint_eq(hl, DGRAM_FRAME_HDR);
	memset(m + hl, 0xee, 60);
	ck_assert_int_eq(dgram_frame_decode(m, hl + 60, &f), 0);
	ck_assert_uint_eq(f.hops, 15);
	ck_assert_uint_eq(f.origin, 0x01020304);
	ck_assert_uint_eq(f.seq, 0xa0b0c0d0);
	ck_assert(f.vh == NULL);
	ck_assert(f.eth == m + hl && f.len == 60);
	hl = dgram_frame_encode_hdr(m, 1, 2, 3, vh);
	ck_assert_uint_eq(hl, DGRAM_FRAME_HDR + DGRAM_FRAME_VH);
	ck_assert_int_eq(dgram_frame_decode(m, hl + 14, &f), 0);
	ck_assert(f.vh == m + DGRAM_FRAME_HDR);
	ck_assert_int_eq(memcmp(f.vh, vh, sizeof(vh)), 0);
	/* A runt frame, unknown flags, reserved bytes, a header cut short. */
	ck_assert_int_eq(dgram_frame_decode(m, hl + 13, &f), -1);
	m[0] = 0x81;
	ck_assert_int_eq(dgram_frame_decode(m, hl + 14, &f), -1);
	m[0] = 1;
	m[2] = 1;
	ck_assert_int_eq(dgram_frame_decode(m, hl + 14, &f), -1);
	m[2] = 0;
	ck_assert_int_eq(dgram_frame_decode(m, DGRAM_FRAME_HDR + 4, &f), -1);
}
END_TEST

START_TEST(replay_window)
{
	struct dgram_replay	 r;
	uint64_t		 i;

	dgram_replay_init(&r);
	ck_assert_int_eq(dgram_replay_check(&r, 0), DGRAM_NEW);
	ck_assert(dgram_replay_mark(&r, 0) == 0);
	ck_assert_int_eq(dgram_replay_check(&r, 0), DGRAM_REPLAYED);
	/* A jump: the gap is what was skipped; the skipped come late. */
	ck_assert(dgram_replay_mark(&r, 10) == 9);
	ck_assert_int_eq(dgram_replay_check(&r, 5), DGRAM_LATE);
	dgram_replay_mark(&r, 5);
	ck_assert_int_eq(dgram_replay_check(&r, 5), DGRAM_REPLAYED);
	ck_assert_int_eq(dgram_replay_check(&r, 10), DGRAM_REPLAYED);
	/* The window's far edge: still taken; one further: too old. */
	dgram_replay_mark(&r, 10 + DGRAM_REPLAY_WINDOW);
	ck_assert_int_eq(dgram_replay_check(&r, 10), DGRAM_REPLAYED);
	ck_assert_int_eq(dgram_replay_check(&r, 11), DGRAM_LATE);
	ck_assert_int_eq(dgram_replay_check(&r, 9), DGRAM_REPLAYED);
	/* At least 2,048 behind the highest are told apart. */
	ck_assert_int_ge(DGRAM_REPLAY_WINDOW, 2048);
	/* Blocks reused after the window moved hold no old bits. */
	dgram_replay_init(&r);
	for (i = 0; i < 100000; i += 3)
		ck_assert_int_eq(dgram_replay_mark(&r, i) == 2 || i == 0, 1);
	for (i = 100000 - DGRAM_REPLAY_WINDOW + 10; i < 100000; i++)
		ck_assert_int_eq(dgram_replay_check(&r, i),
		    i % 3 == 0 ? DGRAM_REPLAYED : DGRAM_LATE);
	/* A jump of more than the window clears it all. */
	dgram_replay_mark(&r, 1000000);
	ck_assert_int_eq(dgram_replay_check(&r, 999999), DGRAM_LATE);
	ck_assert_int_eq(dgram_replay_check(&r, 1000000 - 64), DGRAM_LATE);
}
END_TEST

static void
seal_open(enum dgram_aead aead)
{
	struct pair	 p;
	struct dgram_rx	 rx;
	uint8_t		 buf[256], copy[256];
	size_t		 n;

	pair_init(&p, aead);
	n = seal(&p.a, 1, buf, 1);
	ck_assert_uint_eq(n, DGRAM_OVERHEAD + strlen("payload 1"));
	if (aead != DGRAM_PLAIN)
		ck_assert(memmem(buf, n, "payload", 7) == NULL);
	memcpy(copy, buf, n);
	ck_assert_int_eq(dgram_open(&p.b, 1, buf, n, &rx), 0);
	ck_assert_uint_eq(rx.type, DGRAM_DATA);
	ck_assert_uint_eq(rx.len, strlen("payload 1"));
	ck_assert_int_eq(memcmp(rx.payload, "payload 1", rx.len), 0);
	/* The same datagram again: replayed, counted, dropped. */
	memcpy(buf, copy, n);
	ck_assert_int_eq(dgram_open(&p.b, 1, buf, n, &rx), -1);
	ck_assert(p.b.st.replayed == 1);
	/* Any bit changed, header or payload or tag: not authentic. */
	for (size_t i = 0; i < n; i++) {
		if (i >= 4 && i < 8)
			continue;	/* another index: another session's */
		if (aead == DGRAM_PLAIN && i >= DGRAM_HDR_LEN &&
		    i < n - DGRAM_TAG_LEN)
			continue;	/* plain: the payload is not covered */
		memcpy(buf, copy, n);
		buf[i] ^= 0x40;
		ck_assert_int_eq(dgram_open(&p.b, 1, buf, n, &rx), -1);
	}
	ck_assert(p.b.st.auth_failed + p.b.st.malformed >= 16);
	ck_assert(p.b.st.received == 1);
	/* Truncated: each length short of whole. */
	for (size_t len = 0; len < n; len++) {
		memcpy(buf, copy, n);
		ck_assert_int_eq(dgram_open(&p.b, 1, buf, len, &rx), -1);
	}
	/* Another session's datagram. */
	memcpy(buf, copy, n);
	ck_assert_int_eq(dgram_open(&p.a, 1, buf, n, &rx), -1);
	/* Still good for the next. */
	n = seal(&p.a, 2, buf, 2);
	ck_assert_int_eq(dgram_open(&p.b, 2, buf, n, &rx), 0);
	pair_free(&p);
}

START_TEST(seal_open_aes256) { seal_open(DGRAM_AES256GCM); } END_TEST
START_TEST(seal_open_aes128) { seal_open(DGRAM_AES128GCM); } END_TEST
START_TEST(seal_open_chacha) { seal_open(DGRAM_CHACHA20); } END_TEST
START_TEST(seal_open_plain) { seal_open(DGRAM_PLAIN); } END_TEST

START_TEST(lost_and_reordered)
{
	struct pair	 p;
	struct dgram_rx	 rx;
	uint8_t		 buf[10][128];
	size_t		 n[10];
	int		 i;

	pair_init(&p, DGRAM_AES256GCM);
	for (i = 0; i < 10; i++)
		n[i] = seal(&p.a, 1, buf[i], i);
	/* 0, 1, 4, 3, 9: 2, 5..8 never come, 3 comes late. */
	ck_assert_int_eq(dgram_open(&p.b, 1, buf[0], n[0], &rx), 0);
	ck_assert_int_eq(dgram_open(&p.b, 1, buf[1], n[1], &rx), 0);
	ck_assert_int_eq(dgram_open(&p.b, 1, buf[4], n[4], &rx), 0);
	ck_assert(p.b.st.lost == 2);
	ck_assert_int_eq(dgram_open(&p.b, 1, buf[3], n[3], &rx), 0);
	ck_assert(p.b.st.lost == 1);
	ck_assert(p.b.st.reordered == 1);
	ck_assert_int_eq(dgram_open(&p.b, 1, buf[9], n[9], &rx), 0);
	ck_assert(p.b.st.lost == 5);
	ck_assert(p.b.st.received == 5);
	pair_free(&p);
}
END_TEST

/*
 * Rekeying: by packet count and by time, the new key's datagrams and the
 * old key's late ones both open while they overlap; nothing is lost; the
 * old key is wiped after the overlap.
 */
START_TEST(rekey_overlap)
{
	struct pair	 p;
	struct dgram_rx	 rx;
	uint8_t		 old[128], late[128], buf[128];
	size_t		 nold, nlate, n;
	uint64_t	 now = 1000;
	int		 i;

	pair_init(&p, DGRAM_CHACHA20);
	p.a.rekey_packets = 100;	/* epoch 0 -> 1 needs no confirmation */
	for (i = 0; i < 99; i++) {
		n = seal(&p.a, now, buf, i);
		ck_assert_int_eq(dgram_open(&p.b, now, buf, n, &rx), 0);
	}
	nold = seal(&p.a, now, old, 99);	/* the last of epoch 0 */
	ck_assert_uint_eq(dgram_tx_epoch(&p.a), 0);
	nlate = seal(&p.a, now, late, 100);	/* epoch 1 */
	ck_assert_uint_eq(dgram_tx_epoch(&p.a), 1);
	ck_assert(p.a.st.rekeys == 1);
	/* The new epoch arrives first: the receiver moves to it... */
	ck_assert_int_eq(dgram_open(&p.b, now, late, nlate, &rx), 0);
	ck_assert(p.b.st.rx_rekeys == 1);
	/* ...and the old one's last, still on its way, opens too. */
	ck_assert_int_eq(dgram_open(&p.b, now + 10, old, nold, &rx), 0);
	ck_assert(p.b.st.received == 101);
	ck_assert(p.b.st.auth_failed == 0);
	/* Past the overlap the old key is gone: a copy no longer opens. */
	nold = 0;
	pair_free(&p);

	/* By time, many times over, under a steady stream: nothing lost. */
	pair_init(&p, DGRAM_AES256GCM);
	p.a.rekey_ms = 50;
	for (i = 0; i < 5000; i++) {
		now += 1;
		n = seal(&p.a, now, buf, i);
		ck_assert_uint_gt(n, 0);
		ck_assert_int_eq(dgram_open(&p.b, now, buf, n, &rx), 0);
		/* Every tenth is a probe's reply saying what opened. */
		if (i % 10 == 0)
			dgram_tx_confirm(&p.a, rx.epoch);
	}
	ck_assert(p.a.st.rekeys >= 90);
	ck_assert(p.b.st.rx_rekeys == p.a.st.rekeys);
	ck_assert(p.b.st.received == 5000);
	ck_assert(p.b.st.lost == 0);
	pair_free(&p);

	/*
	 * Unconfirmed, the sender stays one epoch ahead at most, however
	 * many are lost: what it sends after the loss still opens.
	 */
	pair_init(&p, DGRAM_AES256GCM);
	p.a.rekey_ms = 10;
	for (i = 0; i < 1000; i++) {
		now += 1;
		n = seal(&p.a, now, buf, i);	/* all lost */
	}
	ck_assert_uint_eq(dgram_tx_epoch(&p.a), 1);
	ck_assert_int_eq(dgram_open(&p.b, now, buf, n, &rx), 0);
	ck_assert_uint_eq(rx.epoch, 1);
	dgram_tx_confirm(&p.a, rx.epoch);
	n = seal(&p.a, now + 100, buf, 0);
	ck_assert_uint_eq(dgram_tx_epoch(&p.a), 2);
	ck_assert_int_eq(dgram_open(&p.b, now + 100, buf, n, &rx), 0);
	ck_assert(p.b.st.lost == 999);
	pair_free(&p);

	/* An old key's datagram after the overlap: not authentic. */
	pair_init(&p, DGRAM_AES256GCM);
	p.a.rekey_packets = 1;
	nold = seal(&p.a, 0, old, 0);
	(void)nlate;
	n = seal(&p.a, 0, buf, 1);
	ck_assert_int_eq(dgram_open(&p.b, 0, buf, n, &rx), 0);
	ck_assert_int_eq(dgram_open(&p.b, DGRAM_OVERLAP_MS + 1, old, nold, &rx),
	    -1);
	ck_assert(p.b.st.auth_failed == 1);
	pair_free(&p);
}
END_TEST

START_TEST(no_key)
{
	struct keys	 k = { 0, 1, 0 };
	struct dgram_keysrc src = { secret, &k };
	struct dgram	 dg;
	uint8_t		 buf[128];

	/* Epoch 1 to receive cannot be had: no session. */
	ck_assert_int_eq(dgram_init(&dg, DGRAM_AES256GCM, 1, 2, &src, 0), -1);
	/* The sender keeps its key when the next cannot be had. */
	k.fail_from = 2;
	ck_assert_int_eq(dgram_init(&dg, DGRAM_AES256GCM, 1, 2, &src, 0), 0);
	dg.rekey_packets = 1;
	ck_assert_uint_gt(seal(&dg, 0, buf, 0), 0);
	ck_assert_uint_gt(seal(&dg, 0, buf, 1), 0);
	ck_assert_uint_eq(dgram_tx_epoch(&dg), 1);
	dgram_tx_confirm(&dg, 1);
	ck_assert_uint_gt(seal(&dg, 0, buf, 2), 0);
	ck_assert_uint_eq(dgram_tx_epoch(&dg), 1);
	dgram_free(&dg);
}
END_TEST

START_TEST(frag_pieces)
{
	struct dfrag	 tx, rx;
	uint8_t		 msg[5000], piece[DFRAG_HDR_LEN + 1200];
	const uint8_t	*out;
	size_t		 len, off, n, i;
	uint32_t	 id;
	int		 r = 0;

	dfrag_init(&tx);
	dfrag_init(&rx);
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7);
	/* In order, then in reverse order. */
	for (int pass = 0; pass < 2; pass++) {
		id = dfrag_id(&tx);
		for (i = 0; i < 5; i++) {
			off = (pass ? 4 - i : i) * 1200;
			n = sizeof(msg) - off < 1200 ? sizeof(msg) - off : 1200;
			dfrag_hdr_encode(piece, id, (uint32_t)off, sizeof(msg));
			memcpy(piece + DFRAG_HDR_LEN, msg + off, n);
			r = dfrag_input(&rx, 10, piece, DFRAG_HDR_LEN + n, &out,
			    &len);
			ck_assert_int_eq(r, i == 4 ? 1 : 0);
		}
		ck_assert_uint_eq(len, sizeof(msg));
		ck_assert_int_eq(memcmp(out, msg, len), 0);
	}
	ck_assert(rx.st.whole == 2);
	/* Pieces out of bounds, empty, or of a message too large. */
	dfrag_hdr_encode(piece, 9, 4990, 5000);
	ck_assert_int_eq(dfrag_input(&rx, 10, piece, DFRAG_HDR_LEN + 20, &out,
	    &len), -1);
	ck_assert_int_eq(dfrag_input(&rx, 10, piece, DFRAG_HDR_LEN, &out,
	    &len), -1);
	dfrag_hdr_encode(piece, 9, 0, DFRAG_MAX + 1);
	ck_assert_int_eq(dfrag_input(&rx, 10, piece, DFRAG_HDR_LEN + 20, &out,
	    &len), -1);
	ck_assert_int_eq(dfrag_input(&rx, 10, piece, 3, &out, &len), -1);
	ck_assert(rx.st.malformed == 4);
	/* A message whose pieces stop coming is given up, counted. */
	dfrag_hdr_encode(piece, 20, 0, 5000);
	ck_assert_int_eq(dfrag_input(&rx, 10, piece, DFRAG_HDR_LEN + 100, &out,
	    &len), 0);
	for (id = 21; id < 21 + DFRAG_SLOTS; id++) {
		dfrag_hdr_encode(piece, id, 0, 5000);
		(void)dfrag_input(&rx, 11, piece, DFRAG_HDR_LEN + 100, &out,
		    &len);
	}
	ck_assert(rx.st.dropped >= 1);
	dfrag_hdr_encode(piece, 99, 0, 5000);
	(void)dfrag_input(&rx, 11 + DFRAG_TIMEOUT_MS + 1, piece,
	    DFRAG_HDR_LEN + 100, &out, &len);
	ck_assert(rx.st.dropped >= DFRAG_SLOTS);
	dfrag_free(&tx);
	dfrag_free(&rx);
}
END_TEST

/* A path that carries up to mtu: how the search gets there, on a clock. */
static uint32_t
search(struct pmtu *p, uint32_t mtu, uint32_t route_max, uint64_t *now,
    int *probes)
{
	uint32_t	 size;
	int		 i;

	pmtu_set_max(p, route_max);
	for (i = 0; i < 200 && pmtu_searching(p); i++) {
		if ((size = pmtu_probe(p, *now)) == 0) {
			*now = pmtu_wake(p);
			continue;
		}
		(*probes)++;
		if (size <= mtu)
			pmtu_ack(p, size, *now + 1);
	}
	return pmtu_get(p);
}

START_TEST(pmtu_search)
{
	struct pmtu	 p;
	uint64_t	 now = 0;
	int		 probes = 0;
	uint32_t	 got;

	/* The route's own MTU passes: one probe. */
	pmtu_init(&p, now);
	ck_assert_uint_eq(pmtu_get(&p), PMTU_FLOOR);
	got = search(&p, 1472, 1472, &now, &probes);
	ck_assert_uint_eq(got, 1472);
	ck_assert_int_eq(probes, 1);
	ck_assert(!pmtu_searching(&p));
	ck_assert_uint_eq(pmtu_probe(&p, now + 1), 0);
	/* A narrower hop in the middle (1280 less 28): found within a step. */
	pmtu_init(&p, 0);
	now = 0;
	probes = 0;
	got = search(&p, 1252, 1472, &now, &probes);
	ck_assert_uint_le(got, 1252);
	ck_assert_uint_gt(got + PMTU_STEP, 1252);
	ck_assert_int_le(probes, 2 * PMTU_TRIES + 10);
	/* Searched again later, upward. */
	ck_assert_uint_eq(pmtu_probe(&p, now + PMTU_REPROBE_MS + 10), 1472);
	/* EMSGSIZE: at once below, the search goes on from there. */
	pmtu_init(&p, 0);
	pmtu_set_max(&p, 9000);
	ck_assert_uint_eq(pmtu_probe(&p, 0), 9000);
	pmtu_emsgsize(&p, 9000, 0);
	ck_assert_uint_lt(pmtu_probe(&p, 0), 9000);
	/* A data datagram refused: lo falls back below it. */
	pmtu_init(&p, 0);
	pmtu_set_max(&p, 1472);
	pmtu_ack(&p, 1472, 0);
	ck_assert_uint_eq(pmtu_get(&p), 1472);
	pmtu_emsgsize(&p, 1400, 5);
	ck_assert_uint_lt(pmtu_get(&p), 1400);
	ck_assert(pmtu_searching(&p));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("dgram");
	TCase	*tc = tcase_create("dgram");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, hdr_codec);
	tcase_add_test(tc, frame_codec);
	tcase_add_test(tc, replay_window);
	tcase_add_test(tc, seal_open_aes256);
	tcase_add_test(tc, seal_open_aes128);
	tcase_add_test(tc, seal_open_chacha);
	tcase_add_test(tc, seal_open_plain);
	tcase_add_test(tc, lost_and_reordered);
	tcase_add_test(tc, rekey_overlap);
	tcase_add_test(tc, no_key);
	tcase_add_test(tc, frag_pieces);
	tcase_add_test(tc, pmtu_search);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
