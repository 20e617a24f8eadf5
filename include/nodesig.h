/*
 * Signed node records (node.h): each node signs the records it originates
 * with its TLS key, and every receiver checks a record before it keeps or
 * floods it.  A signed record ends in two sections:
 *
 *   NODE_SEC_CERT  the origin's certificate (DER)
 *   NODE_SEC_SIG   EVP_DigestSign() by the certificate's key over
 *                  NODESIG_CONTEXT || every byte of the record before this
 *                  section (a traffic report's hops field taken as 0):
 *                  ECDSA with SHA-256, RSA PKCS#1 with SHA-256, or Ed25519
 *
 * A record is good when its signature checks under the certificate's key,
 * the certificate chains to the CA store (and passes its CRL) and it names
 * the record's origin (tls_cert_names()).  The checking side keeps, per
 * origin, the certificate it last found good (by the SHA-256 of its DER)
 * for NODESIG_RECHECK_MS, so that each new record of a node costs one
 * signature check, not a chain walk; and the digests of the records it
 * last found good, one per (kind, id), so that a record that comes again
 * costs a hash; and the one certificate that last chained, so that
 * records in many names under one certificate (an insider's forgeries)
 * cost a hash and a name check each.  A store that changes (a reload)
 * empties the cache.
 */
#ifndef VNET_NODESIG_H
#define VNET_NODESIG_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "node.h"

#define NODESIG_CONTEXT		"vnet-node-record-v1"
#define NODESIG_SIG_MAX		512	/* RSA 4096 */
/* Space a signed record needs beyond what it says. */
#define NODESIG_OVERHEAD	(2 * 3 + NODE_CERT_MAX + NODESIG_SIG_MAX)
/* Origins cached, then all go: NODEDB_RECORDS_MAX's nodes at two each. */
#define NODESIG_ORIGINS_MAX	16384
#define NODESIG_RECHECK_MS	(10 * 60 * 1000)

enum nodesig_result {
	NODESIG_OK = 0,
	NODESIG_UNSIGNED,	/* no NODE_SEC_SIG */
	NODESIG_NO_CERT,	/* signed, without NODE_SEC_CERT */
	NODESIG_BAD_CERT,	/* not a certificate (DER) */
	NODESIG_CHAIN,		/* not valid under the CA store, or revoked */
	NODESIG_NAME,		/* does not name the record's origin */
	NODESIG_BAD_SIG,	/* the signature does not check */
	NODESIG_NRESULTS
};

struct nodesig_stats {
	uint64_t	 verified;	/* signatures checked, good */
	uint64_t	 record_hits;	/* a record found good before */
	uint64_t	 cert_hits;	/* its certificate found good before */
	uint64_t	 flushed;	/* the cache emptied (full, new store) */
};

struct nodesig;

struct nodesig	*nodesig_new(void);
void		 nodesig_free(struct nodesig *);

/*
 * Appends NODE_SEC_CERT and NODE_SEC_SIG to the record in p (n bytes, as
 * node_encode() made it, cap bytes of room); the new length, or 0 when it
 * does not fit (in cap or NODE_RECORD_MAX) or signing fails.
 */
size_t		 nodesig_sign(uint8_t *p, size_t n, size_t cap, X509 *cert,
		    EVP_PKEY *key);

/*
 * Checks record p (n bytes, decoded into *rec) under store: NODESIG_OK or
 * why not.  now_ms: monotonic, for the cache.
 */
enum nodesig_result nodesig_verify(struct nodesig *, X509_STORE *store,
		    const uint8_t *p, size_t n, const struct node_rec *rec,
		    uint64_t now_ms);
/* The same without the cache: every check done (tests, benchmarks). */
enum nodesig_result nodesig_verify_once(X509_STORE *store, const uint8_t *p,
		    size_t n, const struct node_rec *rec);

void		 nodesig_stats(const struct nodesig *, struct nodesig_stats *);
/* "unsigned", "no_cert", ...: a counter's name. */
const char	*nodesig_result_name(enum nodesig_result);

#endif
