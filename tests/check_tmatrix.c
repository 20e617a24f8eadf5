/* The traffic matrix cut for drawing (tmatrix.c), with synthetic pairs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tmatrix.h"

static uint32_t
lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void
mac_of(uint8_t *mac, uint32_t i)
{
	mac[0] = 0x52;
	mac[1] = 0x54;
	mac[2] = (uint8_t)(i >> 24);
	mac[3] = (uint8_t)(i >> 16);
	mac[4] = (uint8_t)(i >> 8);
	mac[5] = (uint8_t)i;
}

/*
 * n pairs among nmacs guests behind nnodes nodes (guest i behind node
 * i % nnodes), rates at random; every tenth destination of no known node.
 */
static struct tmatrix_pair *
pairs(size_t n, uint32_t nmacs, uint32_t nnodes, struct tmatrix_cell *sum)
{
	struct tmatrix_pair	*p = calloc(n, sizeof(*p));
	uint32_t		 seed = 7, a, b;
	size_t			 i;

	ck_assert_ptr_nonnull(p);
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < n; i++) {
		a = lcg(&seed) % nmacs;
		b = lcg(&seed) % nmacs;
		mac_of(p[i].src, a);
		mac_of(p[i].dst, b);
		snprintf(p[i].src_node, sizeof(p[i].src_node), "n%u",
		    a % nnodes);
		if (b % 10 != 0)
			snprintf(p[i].dst_node, sizeof(p[i].dst_node), "n%u",
			    b % nnodes);
		p[i].r.rate10 = lcg(&seed) % 100000;
		p[i].r.rate1 = lcg(&seed) % 100000;
		p[i].r.bytes = p[i].r.rate10 * 10ULL + lcg(&seed) % 1000;
		p[i].r.frames = p[i].r.bytes / 1000 + 1;
		sum->bytes += p[i].r.bytes;
		sum->frames += p[i].r.frames;
		sum->rate1 += p[i].r.rate1;
		sum->rate10 += p[i].r.rate10;
	}
	return p;
}

static void
check_sums(const struct tmatrix *m, const struct tmatrix_cell *want)
{
	struct tmatrix_cell	 got;
	const struct tmatrix_cell *c;
	size_t			 i, j;

	memset(&got, 0, sizeof(got));
	for (i = 0; i < m->nrows; i++)
		for (j = 0; j < m->ncols; j++)
			if ((c = tmatrix_at(m, i, j)) != NULL) {
				got.bytes += c->bytes;
				got.frames += c->frames;
				got.rate1 += c->rate1;
				got.rate10 += c->rate10;
			}
	ck_assert_uint_eq(got.bytes, want->bytes);
	ck_assert_uint_eq(got.frames, want->frames);
	ck_assert_uint_eq(got.rate1, want->rate1);
	ck_assert_uint_eq(got.rate10, want->rate10);
}

static size_t
count(const struct tmatrix_label *l, size_t n, enum tmatrix_kind kind)
{
	size_t	 i, k = 0;

	for (i = 0; i < n; i++)
		k += l[i].kind == kind;
	return k;
}

/* A small network is drawn as it is: each MAC its own row and column. */
START_TEST(tmatrix_small_whole)
{
	struct tmatrix_cell	 sum;
	struct tmatrix_pair	*p = pairs(40, 6, 3, &sum);
	struct tmatrix		*m = tmatrix_build(p, 40, 32);
	size_t			 i;

	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->nrows, 6);
	ck_assert_uint_eq(m->ncols, 6);
	ck_assert_uint_eq(count(m->rows, m->nrows, TMATRIX_MAC), 6);
	ck_assert_uint_eq(count(m->cols, m->ncols, TMATRIX_MAC), 6);
	/* Heaviest first. */
	for (i = 1; i < m->nrows; i++)
		ck_assert(m->rows[i - 1].rate10 >= m->rows[i].rate10);
	check_sums(m, &sum);
	tmatrix_free(m);
	free(p);
}
END_TEST

/*
 * 5,000 pairs of 3,000 guests behind 200 nodes: 16 MACs, 16 nodes and
 * the rest each way, every byte in one cell, in bounded time.
 */
START_TEST(tmatrix_big_bounded)
{
	struct tmatrix_cell	 sum;
	struct tmatrix_pair	*p = pairs(5000, 3000, 200, &sum);
	struct tmatrix		*m;
	uint64_t		 top = 0;
	size_t			 i;
	struct timespec		 t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	m = tmatrix_build(p, 5000, 32);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_ptr_nonnull(m);
	printf("5000 pairs: %zu rows, %zu columns in %.2f ms\n", m->nrows,
	    m->ncols, (t1.tv_sec - t0.tv_sec) * 1e3 +
	    (t1.tv_nsec - t0.tv_nsec) / 1e6);
	ck_assert_uint_eq(m->nrows, 33);
	ck_assert_uint_eq(m->ncols, 33);
	ck_assert_uint_eq(count(m->rows, m->nrows, TMATRIX_MAC), 16);
	ck_assert_uint_eq(count(m->rows, m->nrows, TMATRIX_NODE), 16);
	ck_assert_uint_eq(count(m->rows, m->nrows, TMATRIX_REST), 1);
	ck_assert_uint_eq(count(m->cols, m->ncols, TMATRIX_REST), 1);
	ck_assert_int_eq(m->rows[m->nrows - 1].kind, TMATRIX_REST);
	/* The heaviest source has its own row, the first. */
	for (i = 0; i < 5000; i++)
		if (p[i].r.rate10 > top)
			top = p[i].r.rate10;
	ck_assert(m->rows[0].rate10 >= top);
	ck_assert_int_eq(m->rows[0].kind, TMATRIX_MAC);
	ck_assert_uint_eq(m->rows[0].node[0], 'n');
	check_sums(m, &sum);
	tmatrix_free(m);
	free(p);
}
END_TEST

/* The bound holds at each size, and for a network too big to copy twice. */
START_TEST(tmatrix_every_top)
{
	struct tmatrix_cell	 sum;
	struct tmatrix_pair	*p = pairs(65536, 20000, 1000, &sum);
	struct tmatrix		*m;
	unsigned int		 top;
	struct timespec		 t0, t1;

	for (top = 0; top <= TMATRIX_TOP_MAX + 1; top += 7) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		m = tmatrix_build(p, 65536, top);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ck_assert_ptr_nonnull(m);
		ck_assert_uint_le(m->nrows, (top < 1 ? 1 : top >
		    TMATRIX_TOP_MAX ? TMATRIX_TOP_MAX : top) + 1);
		ck_assert_uint_le(m->ncols, (top < 1 ? 1 : top >
		    TMATRIX_TOP_MAX ? TMATRIX_TOP_MAX : top) + 1);
		check_sums(m, &sum);
		if (top == 35)
			printf("65536 pairs, top %u: %.2f ms\n", top,
			    (t1.tv_sec - t0.tv_sec) * 1e3 +
			    (t1.tv_nsec - t0.tv_nsec) / 1e6);
		tmatrix_free(m);
	}
	free(p);
}
END_TEST

/* Nothing in: nothing out.  MACs of no known node: the rest. */
START_TEST(tmatrix_edges)
{
	struct tmatrix_pair	 p[40];
	struct tmatrix		*m;
	size_t			 i;

	ck_assert_ptr_nonnull(m = tmatrix_build(NULL, 0, 32));
	ck_assert_uint_eq(m->nrows + m->ncols, 0);
	tmatrix_free(m);
	memset(p, 0, sizeof(p));
	for (i = 0; i < 40; i++) {
		mac_of(p[i].src, (uint32_t)i);
		mac_of(p[i].dst, 1000);
		p[i].r.bytes = p[i].r.rate10 = (uint32_t)i + 1;
	}
	ck_assert_ptr_nonnull(m = tmatrix_build(p, 40, 4));
	/* Two MACs, no node to sum by, the rest in one row. */
	ck_assert_uint_eq(m->nrows, 3);
	ck_assert_uint_eq(m->ncols, 1);
	ck_assert(memcmp(m->rows[0].mac, p[39].src, 6) == 0);
	ck_assert_int_eq(m->rows[2].kind, TMATRIX_REST);
	ck_assert_uint_eq(tmatrix_at(m, 2, 0)->bytes, 38 * 39 / 2);
	ck_assert_ptr_null(tmatrix_at(m, 3, 0));
	tmatrix_free(m);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("tmatrix");
	TCase	*tc = tcase_create("tmatrix");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tmatrix_small_whole);
	tcase_add_test(tc, tmatrix_big_bounded);
	tcase_add_test(tc, tmatrix_every_top);
	tcase_add_test(tc, tmatrix_edges);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
