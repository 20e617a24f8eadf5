/*
 * Keys and certificates made in memory for the tests and benchmarks that
 * need a CA without vnet-ca (check_tls, check_nodesig, bench/nodesig).
 */
#ifndef VNET_CERTGEN_H
#define VNET_CERTGEN_H

#include <openssl/evp.h>
#include <openssl/x509.h>

/* A new key: EVP_PKEY_EC (P-256) or EVP_PKEY_ED25519; NULL on failure. */
EVP_PKEY	*certgen_key(int type);

/*
 * A certificate for cn with key's public half, valid from an hour ago for
 * days days, signed by issuer with ikey, or, with issuer NULL, by key
 * itself as a CA; NULL on failure.
 */
X509		*certgen_cert(const char *cn, EVP_PKEY *key, X509 *issuer,
		    EVP_PKEY *ikey, long serial, long days);

#endif
