/*
 * The single-producer, single-consumer ring of records (ring): order,
 * lengths and bytes; reservations bigger than the record; records wrapping
 * the end behind skip marks, against a model of the layout; the full ring
 * and both wake-up rules; and two threads sleeping on eventfds exactly as
 * ring.h says, a lost wake-up failing the test.
 */
#include <sys/eventfd.h>

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"

#define PAT_SIZE	8192	/* a record takes up to 4095 + its length */

/*
 * ck_assert_msg() without its mark point (a write(2) on every call, which
 * the loops checking millions of things cannot afford).
 */
#define CHECK(expr, ...) do {						\
	if (!(expr))							\
		ck_abort_msg(__VA_ARGS__);				\
} while (0)

static uint8_t	 pat[PAT_SIZE];

/* splitmix64: a record's length, reservation and bytes from its number. */
static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
pat_init(void)
{
	uint64_t	 s = 88172645463325252ULL;
	size_t		 i;

	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(xorshift(&s) >> 24);
}

/* Record seq's len bytes: its number, then a stretch of pat it picks. */
static void
fill(uint8_t *p, uint64_t seq, size_t len)
{
	uint64_t	 h = mix(seq), v = seq ^ h;

	if (len == 0)
		return;
	memcpy(p, pat + h % 4096, len);
	memcpy(p, &v, len < sizeof(v) ? len : sizeof(v));
}

/* The first byte of p that is not record seq's, or len. */
static size_t
differs(const uint8_t *p, uint64_t seq, size_t len)
{
	uint8_t		 want[4096];
	size_t		 i;

	if (len > sizeof(want))
		return 0;
	fill(want, seq, len);
	if (memcmp(p, want, len) == 0)
		return len;
	for (i = 0; p[i] == want[i]; i++)
		;
	return i;
}

static size_t
align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* One record in, len bytes of record seq; what ring_commit() said. */
static int
push(struct ring *r, uint64_t seq, size_t max, size_t len)
{
	uint8_t		*p;

	p = ring_reserve(r, max);
	CHECK(p != NULL, "record %llu: no room for %zu bytes",
	    (unsigned long long)seq, max);
	memset(p, 0xee, max);
	fill(p, seq, len);
	return ring_commit(r, len);
}

/* The oldest record is record seq of len bytes; released, what it said. */
static int
pop(struct ring *r, uint64_t seq, size_t len)
{
	uint8_t		*p;
	size_t		 got = (size_t)-1, at;

	p = ring_peek(r, &got);
	CHECK(p != NULL, "record %llu missing", (unsigned long long)seq);
	CHECK(got == len, "record %llu: %zu bytes, not %zu",
	    (unsigned long long)seq, got, len);
	at = differs(p, seq, len);
	CHECK(at == len, "record %llu differs at byte %zu",
	    (unsigned long long)seq, at);
	return ring_release(r);
}

START_TEST(ring_fifo)
{
	static const size_t	 lens[] = { 0, 1, 3, 7, 8, 9, 15, 16, 17, 0,
	    63, 64, 65, 255, 1000, 1499, 2 };
	const size_t		 n = sizeof(lens) / sizeof(lens[0]);
	struct ring		 r;
	uint8_t			*p, *q;
	size_t			 i, len, used, prev = 0, sum = 0;

	pat_init();
	/* Too small a ring; the size rounded down to whole 8 bytes. */
	ck_assert_int_eq(ring_init(&r, 16), -1);
	ck_assert_int_eq(ring_init(&r, 31), -1);
	ck_assert_int_eq(ring_init(&r, 4100), 0);
	ck_assert_uint_eq(ring_max_record(&r), 2040);

	ck_assert_ptr_null(ring_peek(&r, &len));
	ck_assert_uint_eq(ring_used(&r), 0);
	for (i = 0; i < n; i++) {
		push(&r, 100 + i, lens[i], lens[i]);
		used = ring_used(&r);
		sum += lens[i];
		ck_assert_uint_gt(used, prev);
		ck_assert_uint_ge(used, sum);
		prev = used;
	}
	for (i = 0; i < n; i++) {
		/* Peeking again without a release: the same record. */
		p = ring_peek(&r, &len);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(len, lens[i]);
		q = ring_peek(&r, &len);
		ck_assert_ptr_eq(p, q);
		ck_assert_uint_eq(len, lens[i]);
		ck_assert_uint_eq(ring_used(&r), prev);
		pop(&r, 100 + i, lens[i]);
		used = ring_used(&r);
		ck_assert_uint_lt(used, prev);
		prev = used;
	}
	ck_assert_uint_eq(ring_used(&r), 0);
	ck_assert_ptr_null(ring_peek(&r, &len));
	ring_free(&r);
}
END_TEST

START_TEST(ring_reserve_more)
{
	struct ring	 r;
	uint8_t		*p;
	size_t		 len, max;

	pat_init();
	ck_assert_int_eq(ring_init(&r, 4096), 0);
	max = ring_max_record(&r);
	/* Room for 1000, 10 written: the consumer sees 10. */
	p = ring_reserve(&r, 1000);
	ck_assert_ptr_nonnull(p);
	memset(p, 0xee, 1000);
	fill(p, 1, 10);
	ck_assert_int_eq(ring_commit(&r, 10), 1);
	ck_assert_uint_lt(ring_used(&r), 1000);
	/* Then one written whole, then one of none in room for 500. */
	ck_assert_int_eq(push(&r, 2, 333, 333), 0);
	ck_assert_int_eq(push(&r, 3, 500, 0), 0);
	pop(&r, 1, 10);
	pop(&r, 2, 333);
	pop(&r, 3, 0);
	ck_assert_ptr_null(ring_peek(&r, &len));
	ck_assert_uint_eq(ring_used(&r), 0);

	/* Past the largest record: never, even in an empty ring. */
	ck_assert_ptr_null(ring_reserve(&r, max + 1));
	ck_assert_ptr_null(ring_reserve(&r, 1 << 20));
	ck_assert_ptr_null(ring_reserve(&r, (size_t)-1));
	ck_assert_ptr_null(ring_peek(&r, &len));
	/* The largest fits an empty ring wherever it starts, wrapped or not. */
	for (len = 0; len < 200; len++) {
		ck_assert_int_eq(push(&r, 10 + len, max, len * 41 % max), 1);
		pop(&r, 10 + len, len * 41 % max);
		ck_assert_int_eq(push(&r, 1000 + len, max, max), 1);
		pop(&r, 1000 + len, max);
		ck_assert_uint_eq(ring_used(&r), 0);
	}
	ring_free(&r);
}
END_TEST

/*
 * Random pushes and pops against a model of the layout ring.h describes:
 * a record takes a header and its bytes rounded up to 8, and one that does
 * not fit before the end goes to the beginning behind a skip.  A
 * reservation fails exactly when the ring has no room for it; a commit
 * says "wake" exactly when the consumer had taken everything before; a
 * release never unasked, and always once room came for what the producer
 * asked; every byte intact.
 */
struct mrec {
	uint64_t	 seq;
	uint64_t	 at;		/* where the record starts */
	uint64_t	 end;		/* the position after it */
	size_t		 len;
};

static void
wrap_run(size_t size, long rounds, uint64_t seed)
{
	struct ring	 r;
	struct mrec	 q[1024], *m;
	uint64_t	 s = seed, x, head = 0, tail = 0, at, rec, seq = 0;
	uint64_t	 pushed = 0, popped = 0;
	size_t		 maxrec, len, max, need, want_need = 0, got;
	long		 round, wraps = 0, fulls = 0, sleeps = 0, wakes = 0;
	int		 want = 0, w;
	uint8_t		*p;

	ck_assert_int_eq(ring_init(&r, size), 0);
	maxrec = ring_max_record(&r);
	for (round = 0; round < rounds; round++) {
		x = xorshift(&s);
		if (x % 100 < 55) {
			switch ((x >> 8) % 4) {
			case 0:
				len = (x >> 16) % 17;
				break;
			case 1:
				len = (x >> 16) % 256;
				break;
			case 2:
				len = (x >> 16) % (maxrec / 3 + 1);
				break;
			default:
				len = (x >> 16) % (maxrec + 1);
				break;
			}
			if (len > maxrec)
				len = maxrec;
			max = (x >> 40) & 1 ? len :
			    len + (x >> 44) % (maxrec - len + 1);
			/* The model's place for it. */
			need = 8 + align8(max);
			at = head;
			rec = head % size + need <= size ? head :
			    head + (size - head % size);
			p = ring_reserve(&r, max);
			if (rec + need - tail > size) {
				CHECK(p == NULL, "record %llu (%zu bytes) "
				    "taken, %llu of %zu used",
				    (unsigned long long)seq, max,
				    (unsigned long long)(head - tail), size);
				fulls++;
				/* Sometimes the producer would sleep. */
				if ((x >> 50) & 1) {
					w = ring_want_room(&r, max);
					CHECK(w == 0, "record %llu: room for "
					    "%zu bytes after all",
					    (unsigned long long)seq, max);
					want = 1;
					want_need = need;
					sleeps++;
				}
				continue;
			}
			CHECK(p != NULL, "record %llu (%zu bytes) "
			    "refused, with room", (unsigned long long)seq,
			    max);
			CHECK(p == r.buf + rec % size + 8,
			    "record %llu reserved at %td, not %llu",
			    (unsigned long long)seq, p - r.buf,
			    (unsigned long long)(rec % size + 8));
			if (rec != at)
				wraps++;
			memset(p, 0xee, max);
			fill(p, seq, len);
			w = ring_commit(&r, len);
			CHECK(w == (tail == at), "record %llu: commit "
			    "says %d, the consumer %s", (unsigned long long)seq,
			    w, tail == at ? "had caught up" : "had not");
			m = &q[pushed++ % 1024];
			m->seq = seq++;
			m->at = rec;
			m->end = head = rec + 8 + align8(len);
			m->len = len;
		} else if (pushed == popped) {
			CHECK(ring_peek(&r, &got) == NULL, "empty, a record "
			    "peeked");
			/* Room for anything: want_room says so, asks nothing. */
			CHECK(want == 0, "empty, the producer never woken");
			if ((x >> 8) % 8 == 0)
				CHECK(ring_want_room(&r, maxrec) == 1,
				    "empty, no room for %zu", maxrec);
		} else {
			m = &q[popped++ % 1024];
			p = ring_peek(&r, &got);
			CHECK(p == r.buf + m->at % size + 8, "record %llu "
			    "peeked at %p, not at %llu", (unsigned long long)
			    m->seq, (void *)p, (unsigned long long)
			    (m->at % size + 8));
			if ((x >> 8) % 4 == 0)
				CHECK(ring_peek(&r, &got) == p, "record %llu "
				    "peeked again elsewhere",
				    (unsigned long long)m->seq);
			w = pop(&r, m->seq, m->len);
			tail = m->end;
			/*
			 * No wake-up unasked, nor one missed once there is
			 * room for what the producer asked.
			 */
			if (w) {
				CHECK(want == 1, "record %llu released: a "
				    "wake-up nobody asked for",
				    (unsigned long long)m->seq);
				want = 0;
				wakes++;
			} else if (want) {
				rec = head % size + want_need <= size ? head :
				    head + (size - head % size);
				CHECK(rec + want_need - tail > size,
				    "record %llu released: room for %zu "
				    "bytes, the producer not woken",
				    (unsigned long long)m->seq, want_need);
			}
		}
		CHECK(ring_used(&r) == head - tail, "%zu used, not %llu",
		    ring_used(&r), (unsigned long long)(head - tail));
		CHECK(head - tail <= size, "%llu used",
		    (unsigned long long)(head - tail));
	}
	while (popped < pushed) {
		m = &q[popped++ % 1024];
		if (pop(&r, m->seq, m->len)) {
			CHECK(want == 1, "record %llu released: a wake-up "
			    "nobody asked for", (unsigned long long)m->seq);
			want = 0;
		}
	}
	/* Empty: room for anything, a producer waiting has been woken. */
	ck_assert_int_eq(want, 0);
	ck_assert_ptr_null(ring_peek(&r, &got));
	ck_assert_uint_eq(ring_used(&r), 0);
	/* It did wrap, fill up and sleep, often. */
	ck_assert_msg(wraps > rounds / 200 && fulls > rounds / 200 &&
	    sleeps > rounds / 400 && wakes > rounds / 800, "size %zu: %ld "
	    "wraps, %ld full, %ld sleeps, %ld wake-ups", size, wraps, fulls,
	    sleeps, wakes);
	ring_free(&r);
}

START_TEST(ring_wrap)
{
	pat_init();
	wrap_run(4096, 400000, 1);
	wrap_run(4104, 100000, 2);
	wrap_run(1000, 100000, 3);
	wrap_run(40, 50000, 4);
	wrap_run(32, 50000, 5);
}
END_TEST

/*
 * 100-byte records (8 + 104 bytes each) in 4096 bytes: 36, then the 64
 * bytes at the end too few, until two at the start are free.
 */
START_TEST(ring_full_wake)
{
	struct ring	 r;
	uint64_t	 seq = 0, next = 0;
	size_t		 len, n;
	uint8_t		*p;

	pat_init();
	ck_assert_int_eq(ring_init(&r, 4096), 0);

	/* Commit wakes the consumer only when it had taken everything. */
	ck_assert_int_eq(push(&r, seq++, 100, 100), 1);
	ck_assert_int_eq(push(&r, seq++, 100, 100), 0);
	ck_assert_ptr_nonnull(ring_peek(&r, &len));	/* peeked, not taken */
	ck_assert_int_eq(push(&r, seq++, 100, 100), 0);
	ck_assert_int_eq(ring_release(&r), 0);		/* nobody waits */
	next++;
	ck_assert_int_eq(push(&r, seq++, 100, 100), 0);
	while (next < seq)
		ck_assert_int_eq(pop(&r, next++, 100), 0);
	ck_assert_ptr_null(ring_peek(&r, &len));
	ck_assert_int_eq(push(&r, seq++, 100, 100), 1);
	ck_assert_int_eq(pop(&r, next++, 100), 0);
	ring_free(&r);

	ck_assert_int_eq(ring_init(&r, 4096), 0);
	for (n = 0; (p = ring_reserve(&r, 100)) != NULL; n++) {
		fill(p, seq++, 100);
		ck_assert_int_eq(ring_commit(&r, 100), n == 0);
	}
	ck_assert_uint_eq(n, 36);
	ck_assert_uint_eq(ring_used(&r), 36 * 112);
	/* Full: no room appears by asking, again and again. */
	ck_assert_int_eq(ring_want_room(&r, 100), 0);
	ck_assert_ptr_null(ring_reserve(&r, 100));
	ck_assert_int_eq(ring_want_room(&r, 100), 0);
	/* The first release wakes the producer, the next does not. */
	ck_assert_int_eq(pop(&r, next++, 100), 1);
	ck_assert_int_eq(pop(&r, next++, 100), 0);
	/* Room at the start now: the record wraps, behind the skip. */
	p = ring_reserve(&r, 100);
	ck_assert_ptr_eq(p, r.buf + 8);
	fill(p, seq++, 100);
	ck_assert_int_eq(ring_commit(&r, 100), 0);
	ck_assert_int_eq(push(&r, seq++, 100, 100), 0);
	ck_assert_uint_eq(ring_used(&r), 4096);
	ck_assert_ptr_null(ring_reserve(&r, 100));
	ck_assert_ptr_null(ring_reserve(&r, 0));
	/* Asked twice, woken once. */
	ck_assert_int_eq(ring_want_room(&r, 0), 0);
	ck_assert_int_eq(ring_want_room(&r, 100), 0);
	ck_assert_int_eq(pop(&r, next++, 100), 1);
	ck_assert_int_eq(pop(&r, next++, 100), 0);
	/* Room came before the producer asked: it says so, asks nothing. */
	ck_assert_ptr_nonnull(ring_reserve(&r, 100));	/* not committed */
	ck_assert_int_eq(ring_want_room(&r, 100), 1);
	ck_assert_int_eq(pop(&r, next++, 100), 0);
	/* 112 bytes free: room for a record of 100, not of 200 or 300. */
	ck_assert_int_eq(push(&r, seq++, 100, 100), 0);
	ck_assert_int_eq(push(&r, seq++, 100, 100), 0);
	ck_assert_ptr_null(ring_reserve(&r, 200));
	ck_assert_ptr_nonnull(ring_reserve(&r, 100));
	ck_assert_int_eq(ring_want_room(&r, 100), 1);
	ck_assert_int_eq(ring_want_room(&r, 300), 0);
	/*
	 * 224 free, too few: a wake-up may come early (then the producer
	 * asks again), but not later than the release that makes room.
	 */
	if (pop(&r, next++, 100))
		ck_assert_int_eq(ring_want_room(&r, 300), 0);
	ck_assert_int_eq(pop(&r, next++, 100), 1);
	ck_assert_int_eq(ring_want_room(&r, 300), 1);
	/* Drained: nobody waits, the ring empty, the next commit wakes. */
	while (next < seq)
		ck_assert_int_eq(pop(&r, next++, 100), 0);
	ck_assert_ptr_null(ring_peek(&r, &len));
	ck_assert_uint_eq(ring_used(&r), 0);
	ck_assert_int_eq(push(&r, seq++, 100, 100), 1);
	ck_assert_int_eq(pop(&r, next++, 100), 0);
	ring_free(&r);
}
END_TEST

/* Two threads */

#define PC_N		300000
#define PC_MAX		3000
#define PC_RING		65536
#define PC_WAIT		5000	/* ms: longer is a lost wake-up */
#define PC_PAUSE	25000	/* records between a side's pauses */

struct pc {
	struct ring	 r;
	int		 cfd;		/* wakes the consumer */
	int		 pfd;		/* wakes the producer */
	_Atomic int	 stop;
	char		 perr[200];
	char		 cerr[200];
	unsigned long	 psleeps;
	unsigned long	 csleeps;
};

static size_t
pc_len(uint64_t seq)
{
	return 1 + mix(seq) % PC_MAX;
}

/* A thread's failure: told, the other side stopped and woken. */
static void __attribute__((format(printf, 3, 4)))
pc_fail(struct pc *pc, char *err, const char *fmt, ...)
{
	va_list		 ap;
	uint64_t	 one = 1;

	va_start(ap, fmt);
	vsnprintf(err, sizeof(pc->perr), fmt, ap);
	va_end(ap);
	atomic_store(&pc->stop, 1);
	if (write(pc->cfd, &one, sizeof(one)) != sizeof(one) ||
	    write(pc->pfd, &one, sizeof(one)) != sizeof(one))
		snprintf(err, sizeof(pc->perr), "eventfd write: %s",
		    strerror(errno));
}

static int
pc_wake(int fd)
{
	uint64_t	 one = 1;

	return write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -1;
}

/* Sleeps until fd is written: 0, or -1 after PC_WAIT ms or an error. */
static int
pc_sleep(int fd)
{
	struct pollfd	 pfd;
	uint64_t	 v;
	int		 n;

	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	while ((n = poll(&pfd, 1, PC_WAIT)) == -1 && errno == EINTR)
		;
	if (n <= 0)
		return -1;
	if (read(fd, &v, sizeof(v)) == -1 && errno != EAGAIN)
		return -1;
	return 0;
}

static void
pc_pause(void)
{
	struct timespec	 ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

static void *
pc_producer(void *arg)
{
	struct pc	*pc = arg;
	uint64_t	 seq;
	size_t		 len, max;
	uint8_t		*p;

	for (seq = 0; seq < PC_N; seq++) {
		if (atomic_load_explicit(&pc->stop, memory_order_relaxed))
			return NULL;
		len = pc_len(seq);
		/* Half reserve the most, as a read(2) would. */
		max = (mix(seq) >> 40) & 1 ? PC_MAX : len;
		if (seq % PC_PAUSE == PC_PAUSE / 2)
			pc_pause();
		while ((p = ring_reserve(&pc->r, max)) == NULL) {
			if (atomic_load(&pc->stop))
				return NULL;
			if (ring_want_room(&pc->r, max))
				continue;
			pc->psleeps++;
			if (pc_sleep(pc->pfd) == -1) {
				pc_fail(pc, pc->perr, "producer: no wake-up "
				    "in %d ms for record %llu (%zu bytes "
				    "used)", PC_WAIT, (unsigned long long)seq,
				    ring_used(&pc->r));
				return NULL;
			}
		}
		if (max > len)
			memset(p + len, 0xee, max - len);
		fill(p, seq, len);
		if (ring_commit(&pc->r, len) && pc_wake(pc->cfd) == -1) {
			pc_fail(pc, pc->perr, "producer: eventfd write: %s",
			    strerror(errno));
			return NULL;
		}
	}
	return NULL;
}

static void *
pc_consumer(void *arg)
{
	struct pc	*pc = arg;
	uint64_t	 seq;
	size_t		 len, at;
	uint8_t		*p;

	for (seq = 0; seq < PC_N; ) {
		if ((p = ring_peek(&pc->r, &len)) == NULL) {
			if (atomic_load(&pc->stop))
				return NULL;
			pc->csleeps++;
			if (pc_sleep(pc->cfd) == -1) {
				pc_fail(pc, pc->cerr, "consumer: no wake-up "
				    "in %d ms for record %llu",
				    PC_WAIT, (unsigned long long)seq);
				return NULL;
			}
			continue;
		}
		if (len != pc_len(seq)) {
			pc_fail(pc, pc->cerr, "record %llu: %zu bytes, not "
			    "%zu", (unsigned long long)seq, len, pc_len(seq));
			return NULL;
		}
		if ((at = differs(p, seq, len)) != len) {
			pc_fail(pc, pc->cerr, "record %llu (%zu bytes) "
			    "differs at byte %zu", (unsigned long long)seq,
			    len, at);
			return NULL;
		}
		/* Holding a record a while: the producer fills the ring. */
		if (seq % PC_PAUSE == 0 && seq > 0)
			pc_pause();
		if (ring_release(&pc->r) && pc_wake(pc->pfd) == -1) {
			pc_fail(pc, pc->cerr, "consumer: eventfd write: %s",
			    strerror(errno));
			return NULL;
		}
		seq++;
	}
	return NULL;
}

START_TEST(ring_threads)
{
	struct pc	 pc;
	pthread_t	 pt, ct;
	size_t		 len;

	pat_init();
	memset(&pc, 0, sizeof(pc));
	ck_assert_int_eq(ring_init(&pc.r, PC_RING), 0);
	atomic_init(&pc.stop, 0);
	pc.cfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pc.pfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(pc.cfd, 0);
	ck_assert_int_ge(pc.pfd, 0);
	ck_assert_int_eq(pthread_create(&ct, NULL, pc_consumer, &pc), 0);
	ck_assert_int_eq(pthread_create(&pt, NULL, pc_producer, &pc), 0);
	ck_assert_int_eq(pthread_join(pt, NULL), 0);
	ck_assert_int_eq(pthread_join(ct, NULL), 0);
	ck_assert_msg(pc.perr[0] == '\0', "%s", pc.perr);
	ck_assert_msg(pc.cerr[0] == '\0', "%s", pc.cerr);
	ck_assert_ptr_null(ring_peek(&pc.r, &len));
	ck_assert_uint_eq(ring_used(&pc.r), 0);
	/* Both did sleep and were woken (the pauses see to that). */
	ck_assert_uint_gt(pc.psleeps, 0);
	ck_assert_uint_gt(pc.csleeps, 0);
	close(pc.cfd);
	close(pc.pfd);
	ring_free(&pc.r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("ring");
	TCase	*tc = tcase_create("ring");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ring_fifo);
	tcase_add_test(tc, ring_reserve_more);
	tcase_add_test(tc, ring_wrap);
	tcase_add_test(tc, ring_full_wake);
	tcase_add_test(tc, ring_threads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
