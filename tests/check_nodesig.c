/*
 * Signed node records (nodesig.h): a record signed with a P-256 or an
 * Ed25519 key checks under the CA; every byte it covers, changed, makes it
 * fail; a certificate that names another node, or comes from another CA,
 * is refused, and so is one the CA's CRL revokes; a record without a
 * signature or without a certificate is refused; a traffic report's hops
 * may change on the way.  The cache: the same record again costs no check,
 * a new sequence under the same certificate no chain walk, and a record
 * changed at the same sequence is still refused.  The codec's side: the
 * certificate section at most once, not empty, and bounded.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "buf.h"
#include "certgen.h"
#include "node.h"
#include "nodesig.h"

struct ident {
	EVP_PKEY	*key;
	X509		*cert;
};

static struct ident	 ca1, ca2, n1, n1ed, n1other, n2;
static X509_STORE	*store;
static struct node_rec	 rec, dec;
static uint8_t		 buf[NODE_RECORD_MAX];

/* A certificate for cn, by issuer (NULL: itself, a CA). */
static void
make(struct ident *id, const char *cn, int type, const struct ident *issuer,
    long serial)
{
	ck_assert_ptr_nonnull(id->key = certgen_key(type));
	ck_assert_ptr_nonnull(id->cert = certgen_cert(cn, id->key,
	    issuer != NULL ? issuer->cert : NULL,
	    issuer != NULL ? issuer->key : NULL, serial, 1));
}

static void
setup(void)
{
	make(&ca1, "ca1", EVP_PKEY_EC, NULL, 1);
	make(&ca2, "ca2", EVP_PKEY_EC, NULL, 2);
	make(&n1, "n1", EVP_PKEY_EC, &ca1, 3);
	make(&n1ed, "n1", EVP_PKEY_ED25519, &ca1, 4);
	make(&n1other, "n1", EVP_PKEY_EC, &ca2, 5);
	make(&n2, "n2", EVP_PKEY_EC, &ca1, 6);
	ck_assert_ptr_nonnull(store = X509_STORE_new());
	ck_assert_int_eq(X509_STORE_add_cert(store, ca1.cert), 1);
}

static void
drop(struct ident *id)
{
	X509_free(id->cert);
	EVP_PKEY_free(id->key);
}

static void
teardown(void)
{
	drop(&ca1);
	drop(&ca2);
	drop(&n1);
	drop(&n1ed);
	drop(&n1other);
	drop(&n2);
	X509_STORE_free(store);
}

static void
topo(const char *name, uint64_t seq)
{
	memset(&rec, 0, sizeof(rec));
	rec.kind = NODE_KIND_TOPO;
	snprintf(rec.name, sizeof(rec.name), "%s", name);
	rec.seq = seq;
	rec.lifetime = 90;
	rec.nlinks = 2;
	snprintf(rec.links[0].name, sizeof(rec.links[0].name), "proxy");
	rec.links[0].rtt_us = 250;
	snprintf(rec.links[1].name, sizeof(rec.links[1].name), "n3");
	rec.links[1].rtt_us = 7000;
	rec.naddrs = 1;
	snprintf(rec.addrs[0], sizeof(rec.addrs[0]), "10.66.0.2:7870");
}

/* rec, encoded and signed by id; its length. */
static size_t
signed_by(const struct ident *id)
{
	size_t	 n;

	ck_assert_uint_gt(n = node_encode(buf, sizeof(buf), &rec), 0);
	n = nodesig_sign(buf, n, sizeof(buf), id->cert, id->key);
	ck_assert_uint_gt(n, 0);
	return n;
}

static enum nodesig_result
check(const uint8_t *p, size_t n)
{
	const char	*why;

	ck_assert_int_eq(node_decode(p, n, &dec, &why), NODE_OK);
	return nodesig_verify_once(store, p, n, &dec);
}

START_TEST(sign_verify)
{
	const char	*why;
	size_t		 n;

	topo("n1", 100);
	n = signed_by(&n1);
	ck_assert_int_eq(check(buf, n), NODESIG_OK);
	ck_assert_uint_gt(dec.signed_len, 0);
	ck_assert_uint_gt(dec.cert_len, 0);
	ck_assert_uint_eq(dec.sig_off + dec.sig_len, n);
	ck_assert_uint_eq(dec.nlinks, 2);
	ck_assert_uint_eq(dec.unknown, 0);
	ck_assert_str_eq(dec.links[1].name, "n3");
	n = signed_by(&n1ed);
	ck_assert_int_eq(check(buf, n), NODESIG_OK);
	/* Unsigned: what node_encode() makes. */
	n = node_encode(buf, sizeof(buf), &rec);
	ck_assert_int_eq(check(buf, n), NODESIG_UNSIGNED);
	/* A signature with no certificate before it. */
	buf[n] = NODE_SEC_SIG;
	put_u16(buf + n + 1, 4);
	memset(buf + n + 3, 0x55, 4);
	ck_assert_int_eq(node_decode(buf, n + 7, &dec, &why), NODE_OK);
	ck_assert_int_eq(check(buf, n + 7), NODESIG_NO_CERT);
}
END_TEST

/* Every byte the signature covers, and the signature's own, matter. */
START_TEST(tampered)
{
	struct node_rec	 d;
	uint8_t		 t[NODE_RECORD_MAX];
	const char	*why;
	size_t		 n, i, decoded = 0;
	enum nodesig_result res;

	topo("n1", 100);
	n = signed_by(&n1);
	for (i = 0; i < n; i++) {
		memcpy(t, buf, n);
		t[i] ^= 0x01;
		if (node_decode(t, n, &d, &why) != NODE_OK)
			continue;	/* the link's business, as before */
		decoded++;
		res = nodesig_verify_once(store, t, n, &d);
		ck_assert_msg(res != NODESIG_OK, "byte %zu changed, still good",
		    i);
	}
	ck_assert_uint_gt(decoded, n / 2);
}
END_TEST

START_TEST(wrong_name)
{
	size_t	 n;

	topo("n1", 100);
	n = signed_by(&n2);	/* an insider signs in another's name */
	ck_assert_int_eq(check(buf, n), NODESIG_NAME);
	topo("nobody", 100);
	n = signed_by(&n2);	/* ... or a name made up */
	ck_assert_int_eq(check(buf, n), NODESIG_NAME);
}
END_TEST

START_TEST(other_ca)
{
	size_t	 n;

	topo("n1", 100);
	n = signed_by(&n1other);
	ck_assert_int_eq(check(buf, n), NODESIG_CHAIN);
}
END_TEST

/* The CA's CRL revokes n1: its records go, n2's stay. */
START_TEST(revoked)
{
	X509_REVOKED	*rv;
	X509_CRL	*crl;
	ASN1_TIME	*t;
	size_t		 n;

	ck_assert_ptr_nonnull(crl = X509_CRL_new());
	X509_CRL_set_version(crl, 1);
	X509_CRL_set_issuer_name(crl, X509_get_subject_name(ca1.cert));
	t = ASN1_TIME_new();
	X509_gmtime_adj(t, -60);
	X509_CRL_set1_lastUpdate(crl, t);
	X509_gmtime_adj(t, 3600);
	X509_CRL_set1_nextUpdate(crl, t);
	ck_assert_ptr_nonnull(rv = X509_REVOKED_new());
	X509_REVOKED_set_serialNumber(rv, X509_get_serialNumber(n1.cert));
	X509_gmtime_adj(t, -30);
	X509_REVOKED_set_revocationDate(rv, t);
	X509_CRL_add0_revoked(crl, rv);
	ASN1_TIME_free(t);
	ck_assert_int_gt(X509_CRL_sign(crl, ca1.key, EVP_sha256()), 0);
	ck_assert_int_eq(X509_STORE_add_crl(store, crl), 1);
	X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
	topo("n1", 100);
	n = signed_by(&n1);
	ck_assert_int_eq(check(buf, n), NODESIG_CHAIN);
	topo("n2", 100);
	n = signed_by(&n2);
	ck_assert_int_eq(check(buf, n), NODESIG_OK);
	X509_CRL_free(crl);
}
END_TEST

/* A report's hops change at every hop, outside the signature. */
START_TEST(traffic_hops)
{
	size_t	 n;

	memset(&rec, 0, sizeof(rec));
	rec.kind = NODE_KIND_TRAFFIC;
	snprintf(rec.name, sizeof(rec.name), "n1");
	snprintf(rec.to, sizeof(rec.to), "n2");
	rec.seq = 5;
	rec.lifetime = 16;
	n = signed_by(&n1);
	ck_assert_int_eq(check(buf, n), NODESIG_OK);
	node_set_hops(buf, n, 15);
	ck_assert_int_eq(check(buf, n), NODESIG_OK);
	buf[11] ^= 1;	/* the sequence is covered */
	ck_assert_int_eq(check(buf, n), NODESIG_BAD_SIG);
}
END_TEST

START_TEST(cache)
{
	struct nodesig		*s;
	struct nodesig_stats	 st;
	uint8_t			 keep[NODE_RECORD_MAX];
	const char		*why;
	X509_STORE		*other;
	size_t			 n, kn;

	ck_assert_ptr_nonnull(s = nodesig_new());
	topo("n1", 100);
	kn = n = signed_by(&n1);
	memcpy(keep, buf, n);
	ck_assert_int_eq(node_decode(buf, n, &dec, &why), NODE_OK);
	ck_assert_int_eq(nodesig_verify(s, store, buf, n, &dec, 0),
	    NODESIG_OK);
	ck_assert_int_eq(nodesig_verify(s, store, buf, n, &dec, 1),
	    NODESIG_OK);
	nodesig_stats(s, &st);
	ck_assert_uint_eq(st.verified, 1);
	ck_assert_uint_eq(st.record_hits, 1);
	ck_assert_uint_eq(st.cert_hits, 0);
	/* The next sequence, same certificate: the signature only. */
	topo("n1", 101);
	n = signed_by(&n1);
	ck_assert_int_eq(node_decode(buf, n, &dec, &why), NODE_OK);
	ck_assert_int_eq(nodesig_verify(s, store, buf, n, &dec, 2),
	    NODESIG_OK);
	nodesig_stats(s, &st);
	ck_assert_uint_eq(st.verified, 2);
	ck_assert_uint_eq(st.cert_hits, 1);
	/* Changed at that sequence: not the record cached, refused. */
	buf[n - 1] ^= 1;
	ck_assert_int_eq(node_decode(buf, n, &dec, &why), NODE_OK);
	ck_assert_int_eq(nodesig_verify(s, store, buf, n, &dec, 3),
	    NODESIG_BAD_SIG);
	/* A good certificate of another node, in n1's name: refused. */
	n = signed_by(&n2);
	ck_assert_int_eq(node_decode(buf, n, &dec, &why), NODE_OK);
	ck_assert_int_eq(nodesig_verify(s, store, buf, n, &dec, 4),
	    NODESIG_NAME);
	/* Another store (a reload): all checked anew. */
	ck_assert_ptr_nonnull(other = X509_STORE_new());
	ck_assert_int_eq(X509_STORE_add_cert(other, ca2.cert), 1);
	ck_assert_int_eq(node_decode(keep, kn, &dec, &why), NODE_OK);
	ck_assert_int_eq(nodesig_verify(s, other, keep, kn, &dec, 5),
	    NODESIG_CHAIN);
	nodesig_stats(s, &st);
	ck_assert_uint_eq(st.flushed, 1);
	X509_STORE_free(other);
	nodesig_free(s);
}
END_TEST

/* The certificate section, as the codec reads it. */
START_TEST(cert_section)
{
	const char	*why;
	size_t		 n;

	topo("n1", 100);
	n = node_encode(buf, sizeof(buf), &rec);
	buf[n] = NODE_SEC_CERT;
	put_u16(buf + n + 1, 3);
	memset(buf + n + 3, 0x30, 3);
	ck_assert_int_eq(node_decode(buf, n + 6, &dec, &why), NODE_OK);
	ck_assert_uint_eq(dec.cert_len, 3);
	ck_assert_uint_eq(dec.cert_off, n + 3);
	ck_assert_int_eq(nodesig_verify_once(store, buf, n + 6, &dec),
	    NODESIG_UNSIGNED);
	/* Twice. */
	memcpy(buf + n + 6, buf + n, 6);
	ck_assert_int_eq(node_decode(buf, n + 12, &dec, &why), NODE_MALFORMED);
	/* Empty. */
	put_u16(buf + n + 1, 0);
	ck_assert_int_eq(node_decode(buf, n + 3, &dec, &why), NODE_MALFORMED);
	/* Over the bound. */
	put_u16(buf + n + 1, NODE_CERT_MAX + 1);
	memset(buf + n + 3, 0x30, NODE_CERT_MAX + 1);
	ck_assert_int_eq(node_decode(buf, n + 3 + NODE_CERT_MAX + 1, &dec,
	    &why), NODE_REFUSED);
	/* Not a certificate, signed. */
	put_u16(buf + n + 1, 3);
	buf[n + 6] = NODE_SEC_SIG;
	put_u16(buf + n + 7, 1);
	buf[n + 9] = 0;
	ck_assert_int_eq(node_decode(buf, n + 10, &dec, &why), NODE_OK);
	ck_assert_int_eq(nodesig_verify_once(store, buf, n + 10, &dec),
	    NODESIG_BAD_CERT);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("nodesig");
	TCase	*tc = tcase_create("nodesig");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sign_verify);
	tcase_add_test(tc, tampered);
	tcase_add_test(tc, wrong_name);
	tcase_add_test(tc, other_ca);
	tcase_add_test(tc, revoked);
	tcase_add_test(tc, traffic_hops);
	tcase_add_test(tc, cache);
	tcase_add_test(tc, cert_section);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
