/* Keys and certificates made in memory (certgen.h). */
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "certgen.h"

EVP_PKEY *
certgen_key(int type)
{
	EVP_PKEY_CTX	*pc;
	EVP_PKEY	*k = NULL;

	if ((pc = EVP_PKEY_CTX_new_id(type, NULL)) == NULL ||
	    EVP_PKEY_keygen_init(pc) != 1 || (type == EVP_PKEY_EC &&
	    EVP_PKEY_CTX_set_ec_paramgen_curve_nid(pc,
	    NID_X9_62_prime256v1) != 1) || EVP_PKEY_keygen(pc, &k) != 1)
		k = NULL;
	EVP_PKEY_CTX_free(pc);
	return k;
}

X509 *
certgen_cert(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *ikey,
    long serial, long days)
{
	X509_EXTENSION	*e;
	X509_NAME	*n;
	X509		*x;
	int		 ok;

	if ((x = X509_new()) == NULL)
		return NULL;
	n = X509_get_subject_name(x);
	ok = X509_set_version(x, 2) == 1 &&
	    ASN1_INTEGER_set(X509_get_serialNumber(x), serial) == 1 &&
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) != NULL &&
	    X509_gmtime_adj(X509_getm_notAfter(x), days * 24 * 3600) != NULL &&
	    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0) == 1 &&
	    X509_set_issuer_name(x, issuer != NULL ?
	    X509_get_subject_name(issuer) : n) == 1 &&
	    X509_set_pubkey(x, key) == 1;
	if (ok) {
		e = X509V3_EXT_conf_nid(NULL, NULL, NID_basic_constraints,
		    issuer == NULL ? "critical,CA:TRUE" : "critical,CA:FALSE");
		ok = e != NULL && X509_add_ext(x, e, -1) == 1;
		X509_EXTENSION_free(e);
	}
	/* Ed25519 signs with no digest of its own choosing. */
	if (ok)
		ok = X509_sign(x, issuer != NULL ? ikey : key,
		    EVP_PKEY_id(issuer != NULL ? ikey : key) == EVP_PKEY_ED25519 ?
		    NULL : EVP_sha256()) > 0;
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}
