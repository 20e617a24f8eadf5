/*
 * bench/nodesig: what signed node records (nodesig.h) cost, each as a
 * ratio to decoding the same record (node_decode()) in the same run: a
 * topology record of 8 links and an address, with a P-256 key (what
 * vnet-ca makes) and with Ed25519.  Signing is encoding and signing one
 * record; checking without the cache walks the chain each time; with the
 * cache, a new sequence under a certificate found good before costs the
 * signature only, and the same record again costs a hash; and the same
 * for 1,000 nodes, each with its certificate, the cache holding them
 * all.  Build with
 * `make bench/nodesig`, run by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "certgen.h"
#include "node.h"
#include "nodesig.h"

#define POOL	256

static struct node_rec	 rec, dec;

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
need(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "nodesig: %s failed\n", what);
		exit(1);
	}
}

static void
topo(uint64_t seq)
{
	unsigned int	 i;

	memset(&rec, 0, sizeof(rec));
	rec.kind = NODE_KIND_TOPO;
	snprintf(rec.name, sizeof(rec.name), "host1");
	rec.seq = seq;
	rec.lifetime = 5400;
	rec.nlinks = 8;
	for (i = 0; i < rec.nlinks; i++) {
		snprintf(rec.links[i].name, sizeof(rec.links[i].name),
		    "host%u", i + 2);
		rec.links[i].rtt_us = 1000 + i;
	}
	rec.naddrs = 1;
	snprintf(rec.addrs[0], sizeof(rec.addrs[0]), "10.66.0.2:7870");
}

struct signed_rec {
	uint8_t		 b[NODE_RECORD_MAX];
	size_t		 n;
	struct node_rec	 r;
};

static void
run(const char *what, int type, X509_STORE *store, X509 *ca, EVP_PKEY *cak,
    int iters)
{
	static struct signed_rec pool[POOL];
	struct nodesig	*s;
	EVP_PKEY	*key = certgen_key(type);
	X509		*cert = certgen_cert("host1", key, ca, cak, 2, 1);
	const char	*why;
	double		 t, dec_ns, sign_ns, once_ns, cert_ns, same_ns;
	size_t		 n;
	int		 i;

	for (i = 0; i < POOL; i++) {
		topo(1000 + (uint64_t)i);
		n = node_encode(pool[i].b, sizeof(pool[i].b), &rec);
		need((pool[i].n = nodesig_sign(pool[i].b, n,
		    sizeof(pool[i].b), cert, key)) > 0, "sign");
		need(node_decode(pool[i].b, pool[i].n, &pool[i].r, &why) ==
		    NODE_OK, "decode");
	}
	t = now_s();
	for (i = 0; i < iters * 10; i++)
		need(node_decode(pool[i % POOL].b, pool[i % POOL].n, &dec,
		    &why) == NODE_OK, "decode");
	dec_ns = (now_s() - t) * 1e9 / (iters * 10);
	t = now_s();
	for (i = 0; i < iters; i++) {
		topo(5000 + (uint64_t)i);
		n = node_encode(pool[0].b, sizeof(pool[0].b), &rec);
		need(nodesig_sign(pool[0].b, n, sizeof(pool[0].b), cert,
		    key) > 0, "sign");
	}
	sign_ns = (now_s() - t) * 1e9 / iters;
	need(node_decode(pool[0].b, pool[0].n = nodesig_sign(pool[0].b,
	    node_encode(pool[0].b, sizeof(pool[0].b), &rec),
	    sizeof(pool[0].b), cert, key), &pool[0].r, &why) == NODE_OK,
	    "re-sign");
	pool[0].r.seq = rec.seq;
	t = now_s();
	for (i = 0; i < iters; i++)
		need(nodesig_verify_once(store, pool[i % POOL].b,
		    pool[i % POOL].n, &pool[i % POOL].r) == NODESIG_OK,
		    "verify");
	once_ns = (now_s() - t) * 1e9 / iters;
	/* Each record once, the certificate cached: a new sequence each. */
	need((s = nodesig_new()) != NULL, "nodesig_new");
	need(nodesig_verify(s, store, pool[0].b, pool[0].n, &pool[0].r, 0) ==
	    NODESIG_OK, "verify");
	t = now_s();
	for (i = 1; i < POOL; i++)
		need(nodesig_verify(s, store, pool[i].b, pool[i].n,
		    &pool[i].r, 0) == NODESIG_OK, "verify cached");
	cert_ns = (now_s() - t) * 1e9 / (POOL - 1);
	t = now_s();
	for (i = 0; i < iters * 10; i++)
		need(nodesig_verify(s, store, pool[POOL - 1].b,
		    pool[POOL - 1].n, &pool[POOL - 1].r, 0) == NODESIG_OK,
		    "verify again");
	same_ns = (now_s() - t) * 1e9 / (iters * 10);
	nodesig_free(s);
	printf("%s, a %zu-byte record (%d links)\n", what, pool[1].n,
	    rec.nlinks);
	printf("  %-44s %10.0f ns %8s\n", "node_decode (the reference)",
	    dec_ns, "1.0");
	printf("  %-44s %10.0f ns %8.1f\n", "encode and sign", sign_ns,
	    sign_ns / dec_ns);
	printf("  %-44s %10.0f ns %8.1f\n", "check, no cache (chain, signature)",
	    once_ns, once_ns / dec_ns);
	printf("  %-44s %10.0f ns %8.1f\n", "check, certificate cached (new seq)",
	    cert_ns, cert_ns / dec_ns);
	printf("  %-44s %10.0f ns %8.1f\n", "check, the same record again",
	    same_ns, same_ns / dec_ns);
	X509_free(cert);
	EVP_PKEY_free(key);
}

/*
 * A network of nodes nodes, P-256 each: every node's first record (its
 * chain walked, its certificate kept), then every node's next one (a new
 * sequence: the signature alone, the cache holding every origin).  What a
 * receiver pays per record at that size, against decoding the same.
 */
static void
network(unsigned int nodes, X509_STORE *store, X509 *ca, EVP_PKEY *cak)
{
	struct signed_rec *r;
	struct nodesig	*s;
	EVP_PKEY	*key;
	X509		*cert;
	char		 name[NODE_NAME_MAX + 1];
	const char	*why;
	double		 t, dec_ns, first_ns, next_ns;
	unsigned int	 k, j;
	size_t		 n;

	need((r = calloc(2 * (size_t)nodes, sizeof(*r))) != NULL, "calloc");
	for (k = 0; k < nodes; k++) {
		snprintf(name, sizeof(name), "n%04u", k);
		need((key = certgen_key(EVP_PKEY_EC)) != NULL &&
		    (cert = certgen_cert(name, key, ca, cak, 100 + k, 1)) !=
		    NULL, "node certificate");
		for (j = 0; j < 2; j++) {
			struct signed_rec *x = &r[2 * k + j];

			topo(1 + j);
			snprintf(rec.name, sizeof(rec.name), "%s", name);
			n = node_encode(x->b, sizeof(x->b), &rec);
			need((x->n = nodesig_sign(x->b, n, sizeof(x->b), cert,
			    key)) > 0, "sign");
			need(node_decode(x->b, x->n, &x->r, &why) == NODE_OK,
			    "decode");
		}
		X509_free(cert);
		EVP_PKEY_free(key);
	}
	t = now_s();
	for (k = 0; k < 2 * nodes; k++)
		need(node_decode(r[k].b, r[k].n, &dec, &why) == NODE_OK,
		    "decode");
	dec_ns = (now_s() - t) * 1e9 / (2 * nodes);
	need((s = nodesig_new()) != NULL, "nodesig_new");
	t = now_s();
	for (k = 0; k < nodes; k++)
		need(nodesig_verify(s, store, r[2 * k].b, r[2 * k].n,
		    &r[2 * k].r, 0) == NODESIG_OK, "verify first");
	first_ns = (now_s() - t) * 1e9 / nodes;
	t = now_s();
	for (k = 0; k < nodes; k++)
		need(nodesig_verify(s, store, r[2 * k + 1].b, r[2 * k + 1].n,
		    &r[2 * k + 1].r, 0) == NODESIG_OK, "verify next");
	next_ns = (now_s() - t) * 1e9 / nodes;
	nodesig_free(s);
	free(r);
	printf("%u nodes, P-256, one certificate each\n", nodes);
	printf("  %-44s %10.0f ns %8s\n", "node_decode (the reference)",
	    dec_ns, "1.0");
	printf("  %-44s %10.0f ns %8.1f\n", "each node's first record (chain)",
	    first_ns, first_ns / dec_ns);
	printf("  %-44s %10.0f ns %8.1f\n", "each node's next record (cached)",
	    next_ns, next_ns / dec_ns);
}

int
main(int argc, char **argv)
{
	EVP_PKEY	*cak = certgen_key(EVP_PKEY_EC);
	X509		*ca = certgen_cert("ca", cak, NULL, NULL, 1, 1);
	X509_STORE	*store;
	int		 iters = argc > 1 ? atoi(argv[1]) : 2000;

	need(iters > 0, "iterations");
	need((store = X509_STORE_new()) != NULL &&
	    X509_STORE_add_cert(store, ca) == 1, "store");
	printf("cost per record, and as a ratio to decoding it\n");
	run("P-256", EVP_PKEY_EC, store, ca, cak, iters);
	run("Ed25519", EVP_PKEY_ED25519, store, ca, cak, iters);
	network(1000, store, ca, cak);
	X509_STORE_free(store);
	X509_free(ca);
	EVP_PKEY_free(cak);
	return 0;
}
