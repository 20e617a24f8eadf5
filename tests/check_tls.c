/*
 * A connection's TLS I/O (tls.h) between two SSLs on a socket pair with
 * small buffers: the handshake in non-blocking steps; writes that the
 * socket cannot all take, retried from a buffer that moved in between and
 * grew, as conn_tls.c's tx buffer does; reads of one record (at most 16 KiB)
 * each that give back every byte in order; a peer that closes; a peer
 * that sends bytes that are no TLS record.
 */
#include <sys/socket.h>

#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "certgen.h"
#include "tls.h"
#include "tlsexp.h"

#define NODE		"n1"
#define TOTAL		(1024 * 1024)
#define RECORD_MAX	16384

static char	 dir[32];
static char	 certf[64], keyf[64];
static SSL_CTX	*ctx;

/* A self-signed certificate naming NODE: its own CA, for both ends. */
static void
make_files(void)
{
	EVP_PKEY	*k;
	X509		*x;
	FILE		*f;

	snprintf(dir, sizeof(dir), "/tmp/check_tls.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(certf, sizeof(certf), "%s/n1.crt", dir);
	snprintf(keyf, sizeof(keyf), "%s/n1.key", dir);

	/* Its own CA; valid for a year, past the 30 days that are warned of. */
	ck_assert_ptr_nonnull(k = certgen_key(EVP_PKEY_EC));
	ck_assert_ptr_nonnull(x = certgen_cert(NODE, k, NULL, NULL, 1, 365));

	ck_assert_ptr_nonnull(f = fopen(certf, "w"));
	ck_assert_int_eq(PEM_write_X509(f, x), 1);
	fclose(f);
	ck_assert_ptr_nonnull(f = fopen(keyf, "w"));
	ck_assert_int_eq(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL,
	    NULL), 1);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(k);
}

static void
setup(void)
{
	struct tls_files	 tf;
	char			 err[256], warn[256];

	make_files();
	tf.cert = certf;
	tf.key = keyf;
	tf.ca = certf;
	tf.crl = NULL;
	ctx = tls_ctx_new(&tf, NODE, err, sizeof(err), warn, sizeof(warn));
	ck_assert_msg(ctx != NULL, "tls_ctx_new: %s", err);
	ck_assert_msg(warn[0] == '\0', "tls_ctx_new warns: %s", warn);
}

static void
teardown(void)
{
	SSL_CTX_free(ctx);
	unlink(certf);
	unlink(keyf);
	rmdir(dir);
}

/* Two non-blocking ends with small buffers, and an SSL on each. */
static void
pair(int sv[2], SSL **client, SSL **server)
{
	int	 i, sz = 4096;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(fcntl(sv[i], F_SETFL, O_NONBLOCK), 0);
		setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	ck_assert_ptr_nonnull(*client = tls_conn_new(ctx, sv[0], 1));
	ck_assert_ptr_nonnull(*server = tls_conn_new(ctx, sv[1], 0));
}

/* The two ends and their SSLs go. */
static void
unpair(int sv[2], SSL *client, SSL *server)
{
	SSL_free(client);
	SSL_free(server);
	close(sv[0]);
	close(sv[1]);
}

/* Both handshakes in steps, each only ever waiting, until both are done. */
static void
handshake(SSL *a, SSL *b)
{
	unsigned long	 err;
	enum tls_io	 ra = TLS_IO_WANT_READ, rb = TLS_IO_WANT_READ;
	int		 i;

	for (i = 0; i < 100 && (ra != TLS_IO_OK || rb != TLS_IO_OK); i++) {
		if (ra != TLS_IO_OK)
			ra = tls_handshake(a, &err);
		ck_assert_msg(ra == TLS_IO_OK || ra == TLS_IO_WANT_READ ||
		    ra == TLS_IO_WANT_WRITE, "client handshake: %d (%lu)", ra,
		    err);
		if (rb != TLS_IO_OK)
			rb = tls_handshake(b, &err);
		ck_assert_msg(rb == TLS_IO_OK || rb == TLS_IO_WANT_READ ||
		    rb == TLS_IO_WANT_WRITE, "server handshake: %d (%lu)", rb,
		    err);
	}
	ck_assert_msg(ra == TLS_IO_OK && rb == TLS_IO_OK,
	    "no handshake after %d steps", i);
}

static void
pattern(uint8_t *p, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + (i >> 11));
}

START_TEST(test_handshake_names)
{
	SSL	*a, *b;
	char	 why[160];
	int	 sv[2];

	pair(sv, &a, &b);
	handshake(a, b);
	ck_assert_int_eq(tls_check_peer(a, NODE, why, sizeof(why)), 0);
	ck_assert_int_eq(tls_check_peer(b, NODE, why, sizeof(why)), 0);
	ck_assert_int_eq(tls_check_peer(a, "n2", why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "does not name node n2") != NULL, "%s", why);
	unpair(sv, a, b);
}
END_TEST

/*
 * TOTAL bytes one way through sockets that take a few KiB at a time.  The
 * unsent part moves between two buffers whenever a write has to wait, and
 * the retry passes it from where it is now with more bytes behind it.
 * OpenSSL keeps count of the records a waiting write got out and reports
 * them when a call finishes, so one success may cover many records; the
 * reader gets them one record, at most 16 KiB, at a time.
 */
START_TEST(test_stream_moving_buffer)
{
	static uint8_t	 src[TOTAL], dst[TOTAL], bufs[2][TOTAL];
	SSL		*a, *b;
	unsigned long	 err;
	enum tls_io	 r;
	size_t		 sent = 0, got = 0, queued = 0, n;
	size_t		 off = 0, end = 0, waits = 0, moves = 0;
	int		 sv[2], cur = 0, steps;

	pattern(src, sizeof(src));
	pair(sv, &a, &b);
	handshake(a, b);
	for (steps = 0; got < TOTAL && steps < 1000000; steps++) {
		/* Up to 40 KiB more appended behind what waits. */
		n = TOTAL - queued < 40960 ? TOTAL - queued : 40960;
		memcpy(bufs[cur] + end, src + queued, n);
		end += n;
		queued += n;
		while (off < end) {
			r = tls_write(a, bufs[cur] + off, end - off, &n, &err);
			if (r == TLS_IO_WANT_WRITE) {
				waits++;
				/* Move what is unsent to the other buffer's start. */
				memcpy(bufs[!cur], bufs[cur] + off, end - off);
				end -= off;
				off = 0;
				cur = !cur;
				moves++;
				break;
			}
			ck_assert_msg(r == TLS_IO_OK, "write: %d (%lu)", r, err);
			ck_assert_uint_gt(n, 0);
			ck_assert_uint_le(n, end - off);
			off += n;
			sent += n;
		}
		if (off == end)
			off = end = 0;
		/* The other end reads all it can. */
		for (;;) {
			r = tls_read(b, dst + got, TOTAL - got, &n, &err);
			if (r == TLS_IO_WANT_READ)
				break;
			ck_assert_msg(r == TLS_IO_OK, "read: %d (%lu)", r, err);
			ck_assert_uint_le(n, RECORD_MAX);
			got += n;
			if (got == TOTAL)
				break;
		}
	}
	ck_assert_uint_eq(sent, TOTAL);
	ck_assert_uint_eq(got, TOTAL);
	ck_assert_msg(memcmp(src, dst, TOTAL) == 0, "bytes differ");
	/* The sockets were small: writes had to wait, and their data moved. */
	ck_assert_uint_gt(waits, 10);
	ck_assert_uint_gt(moves, 10);
	unpair(sv, a, b);
}
END_TEST

/* The peer goes away without close_notify: that is a close, not an error. */
START_TEST(test_peer_closes)
{
	SSL		*a, *b;
	unsigned long	 err;
	uint8_t		 buf[64];
	size_t		 n;
	int		 sv[2];

	pair(sv, &a, &b);
	handshake(a, b);
	/* An error someone else left on the queue does not end a wait. */
	ERR_put_error(ERR_LIB_SSL, 0, SSL_R_BAD_LENGTH, __FILE__, __LINE__);
	ck_assert_int_eq(tls_read(b, buf, sizeof(buf), &n, &err),
	    TLS_IO_WANT_READ);
	SSL_free(a);
	close(sv[0]);
	ck_assert_int_eq(tls_read(b, buf, sizeof(buf), &n, &err),
	    TLS_IO_CLOSED);
	ck_assert_uint_eq(n, 0);
	SSL_free(b);
	close(sv[1]);
}
END_TEST

/* Bytes that are no TLS record: an error, with OpenSSL's reason. */
START_TEST(test_garbage)
{
	static const char	 junk[] = "this is not a TLS record at all!";
	SSL			*a, *b;
	unsigned long		 err = 0;
	uint8_t			 buf[64];
	size_t			 n;
	int			 sv[2];

	pair(sv, &a, &b);
	handshake(a, b);
	ck_assert_int_eq(write(sv[0], junk, sizeof(junk)), sizeof(junk));
	ck_assert_int_eq(tls_read(b, buf, sizeof(buf), &n, &err),
	    TLS_IO_ERROR);
	ck_assert_msg(err != 0, "no OpenSSL error for garbage");
	ck_assert_uint_eq(ERR_peek_error(), 0);	/* the queue is left empty */
	unpair(sv, a, b);
}
END_TEST

/*
 * A connection's peer checked again: under the context it was made with it
 * still verifies, under one that trusts no CA it does not.
 */
START_TEST(test_recheck)
{
	SSL_CTX	*empty;
	SSL	*a, *b;
	char	 why[160];
	int	 sv[2];

	pair(sv, &a, &b);
	handshake(a, b);
	ck_assert_int_eq(tls_recheck_peer(ctx, a, why, sizeof(why)), 0);
	ck_assert_int_eq(tls_recheck_peer(ctx, b, why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(empty = SSL_CTX_new(TLS_method()));
	ck_assert_int_eq(tls_recheck_peer(empty, b, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "not valid under the new tls-ca") != NULL,
	    "%s", why);
	SSL_CTX_free(empty);
	unpair(sv, a, b);
}
END_TEST

/* The notAfter read back; a file's hash changes with its content only. */
START_TEST(test_expiry_digest)
{
	struct tls_files	 tf = { certf, keyf, certf, NULL };
	struct tls_digest	 d1, d2;
	long long		 t, want = (long long)time(NULL) + 365LL * 86400;
	FILE			*f;
	X509			*cert;
	EVP_PKEY		*key;
	X509_STORE		*store;

	ck_assert_int_eq(tls_cert_not_after(tls_ctx_cert(ctx), &t), 0);
	ck_assert_msg(t > want - 60 && t <= want, "notAfter %lld", t);
	ck_assert_int_eq(tls_ctx_identity(ctx, &cert, &key, &store), 0);
	ck_assert_ptr_eq(cert, tls_ctx_cert(ctx));
	ck_assert_ptr_nonnull(key);
	tls_files_digest(&tf, &d1);
	tls_files_digest(&tf, &d2);
	ck_assert_int_eq(memcmp(&d1, &d2, sizeof(d1)), 0);
	ck_assert_ptr_nonnull(f = fopen(keyf, "a"));
	fputs("\n", f);
	fclose(f);
	tls_files_digest(&tf, &d2);
	ck_assert_int_ne(memcmp(d1.sum[TLS_FILE_KEY], d2.sum[TLS_FILE_KEY],
	    32), 0);
	ck_assert_int_eq(memcmp(d1.sum[TLS_FILE_CERT], d2.sum[TLS_FILE_CERT],
	    32), 0);
	/* No CRL: zeros, as a file that cannot be read. */
	ck_assert_int_eq(memcmp(d2.sum[TLS_FILE_CRL],
	    (unsigned char[32]){ 0 }, 32), 0);
}
END_TEST

/*
 * Expiry warnings with a fake clock: a look every 10 s from 40 days before
 * the notAfter to 2 days past it warns four times, each at the first look
 * past its threshold (30, 7, 1 days, expired); a jump past two thresholds
 * warns once; a renewed certificate starts again; a primed one warns only
 * past the level it was loaded at.
 */
START_TEST(test_expiry_thresholds)
{
	const long long	 day = TLSEXP_DAY_S, t0 = 1700000000LL;
	const long long	 na = t0 + 40 * day;
	const long long	 at[TLSEXP_LEVELS] = { na - 30 * day, na - 7 * day,
	    na - day, na };
	struct tlsexp	 e = { .not_after = 0 };
	struct tlsexp_book *b;
	long long	 now;
	int		 level, n = 0;
	char		 buf[96];

	ck_assert_int_eq(tlsexp_level(30 * day), 0);
	ck_assert_int_eq(tlsexp_level(30 * day - 1), 1);
	ck_assert_int_eq(tlsexp_level(7 * day - 1), 2);
	ck_assert_int_eq(tlsexp_level(day - 1), 3);
	ck_assert_int_eq(tlsexp_level(0), 4);
	ck_assert_int_eq(tlsexp_level(-5 * day), 4);

	for (now = t0; now <= na + 2 * day; now += 10) {
		if ((level = tlsexp_step(&e, na, now)) == 0)
			continue;
		ck_assert_int_eq(level, n + 1);
		ck_assert_msg(now >= at[n] && now <= at[n] + 10,
		    "level %d warned %lld s after its threshold", level,
		    now - at[n]);
		n++;
	}
	ck_assert_int_eq(n, TLSEXP_LEVELS);

	/* From 40 days left to 5: one warning, at "under 7 days". */
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(tlsexp_step(&e, na, t0), 0);
	ck_assert_int_eq(tlsexp_step(&e, na, na - 5 * day), 2);
	ck_assert_int_eq(tlsexp_step(&e, na, na - 5 * day + 10), 0);
	/* Renewed for 300 days: quiet; renewed for 20: warned again. */
	ck_assert_int_eq(tlsexp_step(&e, now + 300 * day, na - 5 * day), 0);
	ck_assert_int_eq(tlsexp_step(&e, na + 15 * day, na - 5 * day), 1);
	/* Loaded with 20 days left (the load warned): next, under 7 days. */
	tlsexp_prime(&e, na, na - 20 * day);
	ck_assert_int_eq(tlsexp_step(&e, na, na - 20 * day + 10), 0);
	ck_assert_int_eq(tlsexp_step(&e, na, na - 7 * day + 5), 2);

	tlsexp_when(buf, sizeof(buf), na, na - 6 * day - 100);
	ck_assert_str_eq(buf, "expires in 6 days, on 2023-12-24 22:13:20 UTC");
	tlsexp_when(buf, sizeof(buf), na, na - 23 * 3600 - 5);
	ck_assert_pstr_eq(strstr(buf, ","), ", on 2023-12-24 22:13:20 UTC");
	ck_assert_int_eq(strncmp(buf, "expires in 23 hours,", 20), 0);
	tlsexp_when(buf, sizeof(buf), na, na - 1);
	ck_assert_int_eq(strncmp(buf, "expires in 1 minute,", 20), 0);
	tlsexp_when(buf, sizeof(buf), na, na + 3);
	ck_assert_str_eq(buf, "expired on 2023-12-24 22:13:20 UTC");

	/* The peers' book: by node; full, the one looked at longest ago goes. */
	ck_assert_ptr_nonnull(b = calloc(1, sizeof(*b)));
	for (n = 0; n < TLSEXP_BOOK_MAX; n++) {
		snprintf(buf, sizeof(buf), "host%d", n);
		tlsexp_step(tlsexp_find(b, buf, t0 + n), na, t0 + n);
	}
	ck_assert_ptr_eq(tlsexp_find(b, "host7", t0), &b->e[7]);
	ck_assert_uint_eq(b->n, TLSEXP_BOOK_MAX);
	tlsexp_step(tlsexp_find(b, "host0", t0 + 1000), na, t0 + 1000);
	ck_assert_ptr_eq(tlsexp_find(b, "newcomer", t0 + 1001), &b->e[1]);
	ck_assert_str_eq(b->e[1].name, "newcomer");
	ck_assert_int_eq(b->e[1].level, 0);
	ck_assert_ptr_eq(tlsexp_find(b, "host0", t0 + 1002), &b->e[0]);
	free(b);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("tls");
	TCase	*tc = tcase_create("io");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_handshake_names);
	tcase_add_test(tc, test_stream_moving_buffer);
	tcase_add_test(tc, test_peer_closes);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_recheck);
	tcase_add_test(tc, test_expiry_digest);
	tcase_add_test(tc, test_expiry_thresholds);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
