/* Signing and checking node records (nodesig.h). */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "buf.h"
#include "hash.h"
#include "node.h"
#include "nodesig.h"
#include "tls.h"

#define NODESIG_BUCKETS		4096
#define NODESIG_SLOTS		(1 + NODE_MAC_PAGES)	/* topology, pages */
#define CTX_LEN			(sizeof(NODESIG_CONTEXT) - 1)

struct nodesig_slot {
	uint64_t	 seq;		/* 0: none */
	uint8_t		 digest[SHA256_DIGEST_LENGTH];
};

/* What is known good of one origin. */
struct nodesig_origin {
	struct nodesig_origin	*next;
	char			 name[NODE_NAME_MAX + 1];
	uint8_t			 cert[SHA256_DIGEST_LENGTH];
	EVP_PKEY		*pub;
	uint64_t		 checked_ms;
	struct nodesig_slot	 slots[NODESIG_SLOTS];
};

struct nodesig {
	struct nodesig_origin	*b[NODESIG_BUCKETS];
	size_t			 n;
	X509_STORE		*store;		/* what the cache was made under, held */
	/*
	 * The certificate that last chained, whatever it named: records in
	 * many names under one certificate (an insider's) cost no chain walk.
	 */
	X509			*last;
	uint8_t			 last_hash[SHA256_DIGEST_LENGTH];
	uint64_t		 last_ms;
	uint8_t			*msg;		/* context || signed bytes */
	struct nodesig_stats	 st;
};

static const char *const result_names[NODESIG_NRESULTS] = {
	"ok", "unsigned", "no_cert", "bad_cert", "chain", "name", "bad_sig",
};

const char *
nodesig_result_name(enum nodesig_result r)
{
	return (unsigned int)r < NODESIG_NRESULTS ? result_names[r] : "?";
}

struct nodesig *
nodesig_new(void)
{
	struct nodesig	*s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((s->msg = malloc(CTX_LEN + NODE_RECORD_MAX)) == NULL) {
		free(s);
		return NULL;
	}
	return s;
}

static void
flush(struct nodesig *s)
{
	struct nodesig_origin	*o, *next;
	size_t			 i;

	for (i = 0; i < NODESIG_BUCKETS; i++) {
		for (o = s->b[i]; o != NULL; o = next) {
			next = o->next;
			EVP_PKEY_free(o->pub);
			free(o);
		}
		s->b[i] = NULL;
	}
	if (s->n > 0 || s->last != NULL)
		s->st.flushed++;
	s->n = 0;
	X509_free(s->last);
	s->last = NULL;
}

void
nodesig_free(struct nodesig *s)
{
	if (s == NULL)
		return;
	flush(s);
	X509_STORE_free(s->store);
	free(s->msg);
	free(s);
}

void
nodesig_stats(const struct nodesig *s, struct nodesig_stats *st)
{
	*st = s->st;
}

/* The digest a key signs with: its own for Ed25519 and Ed448. */
static const EVP_MD *
sig_md(EVP_PKEY *key)
{
	int	 id = EVP_PKEY_id(key);

	return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448 ? NULL :
	    EVP_sha256();
}

/* NODESIG_CONTEXT || p[0..n), hops 0 in a traffic report; its length. */
static size_t
message(uint8_t *msg, const uint8_t *p, size_t n)
{
	memcpy(msg, NODESIG_CONTEXT, CTX_LEN);
	memcpy(msg + CTX_LEN, p, n);
	if (n >= 4 && p[1] == NODE_KIND_TRAFFIC)
		put_u16(msg + CTX_LEN + 2, 0);
	return CTX_LEN + n;
}

size_t
nodesig_sign(uint8_t *p, size_t n, size_t cap, X509 *cert, EVP_PKEY *key)
{
	EVP_MD_CTX	*mc;
	uint8_t		*der = NULL, *msg;
	size_t		 sl, ml, at;
	int		 dl, ok;

	if (cap > NODE_RECORD_MAX)
		cap = NODE_RECORD_MAX;
	if ((dl = i2d_X509(cert, &der)) <= 0)
		return 0;
	if (dl > NODE_CERT_MAX || n + 3 + (size_t)dl + 3 > cap) {
		OPENSSL_free(der);
		return 0;
	}
	at = n;
	p[at] = NODE_SEC_CERT;
	put_u16(p + at + 1, (uint16_t)dl);
	memcpy(p + at + 3, der, (size_t)dl);
	OPENSSL_free(der);
	at += 3 + (size_t)dl;
	if ((msg = malloc(CTX_LEN + at)) == NULL)
		return 0;
	ml = message(msg, p, at);
	ok = 0;
	if ((mc = EVP_MD_CTX_new()) != NULL &&
	    EVP_DigestSignInit(mc, NULL, sig_md(key), NULL, key) == 1 &&
	    EVP_DigestSign(mc, NULL, &sl, msg, ml) == 1 &&
	    sl <= NODESIG_SIG_MAX && at + 3 + sl <= cap &&
	    EVP_DigestSign(mc, p + at + 3, &sl, msg, ml) == 1)
		ok = 1;
	EVP_MD_CTX_free(mc);
	free(msg);
	if (!ok)
		return 0;
	p[at] = NODE_SEC_SIG;
	put_u16(p + at + 1, (uint16_t)sl);
	return at + 3 + sl;
}

static int
sig_check(uint8_t *msg, EVP_PKEY *pub, const uint8_t *p,
    const struct node_rec *rec)
{
	EVP_MD_CTX	*mc;
	size_t		 ml;
	int		 ok = 0;

	ml = message(msg, p, rec->signed_len);
	if ((mc = EVP_MD_CTX_new()) != NULL &&
	    EVP_DigestVerifyInit(mc, NULL, sig_md(pub), NULL, pub) == 1 &&
	    EVP_DigestVerify(mc, p + rec->sig_off, rec->sig_len, msg,
	    ml) == 1)
		ok = 1;
	EVP_MD_CTX_free(mc);
	return ok;
}

/* The certificate's key if it is good for rec's origin, else why not. */
/*
 * The certificate's key if it is good for rec's origin, else why not;
 * with s, the chain walk is skipped for the certificate that last chained
 * (cd: the SHA-256 of its DER), and remembered for the next.
 */
static enum nodesig_result
cert_check(struct nodesig *s, X509_STORE *store, const uint8_t *p,
    const struct node_rec *rec, const uint8_t *cd, uint64_t now_ms,
    EVP_PKEY **pub)
{
	const uint8_t	*d = p + rec->cert_off;
	X509_STORE_CTX	*sc = NULL;
	X509		*cert;
	enum nodesig_result res = NODESIG_OK;
	int		 chained = 0;

	*pub = NULL;
	if (s != NULL && s->last != NULL &&
	    memcmp(s->last_hash, cd, SHA256_DIGEST_LENGTH) == 0 &&
	    now_ms - s->last_ms < NODESIG_RECHECK_MS) {
		cert = s->last;
		X509_up_ref(cert);
		chained = 1;
		s->st.cert_hits++;
	} else if ((cert = d2i_X509(NULL, &d, (long)rec->cert_len)) == NULL ||
	    d != p + rec->cert_off + rec->cert_len) {
		X509_free(cert);
		return NODESIG_BAD_CERT;
	}
	if (!chained && ((sc = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(sc, store, cert, NULL) != 1 ||
	    X509_verify_cert(sc) != 1))
		res = NODESIG_CHAIN;
	else {
		if (!chained && s != NULL) {
			X509_free(s->last);
			X509_up_ref(cert);
			s->last = cert;
			memcpy(s->last_hash, cd, SHA256_DIGEST_LENGTH);
			s->last_ms = now_ms;
		}
		if (!tls_cert_names(cert, rec->name))
			res = NODESIG_NAME;
		else if ((*pub = X509_get_pubkey(cert)) == NULL)
			res = NODESIG_BAD_CERT;
	}
	X509_STORE_CTX_free(sc);
	X509_free(cert);
	return res;
}

static enum nodesig_result
shape(const struct node_rec *rec)
{
	if (rec->signed_len == 0)
		return NODESIG_UNSIGNED;
	if (rec->cert_len == 0)
		return NODESIG_NO_CERT;
	return NODESIG_OK;
}

enum nodesig_result
nodesig_verify_once(X509_STORE *store, const uint8_t *p, size_t n,
    const struct node_rec *rec)
{
	enum nodesig_result res;
	EVP_PKEY	*pub;
	uint8_t		*msg;

	(void)n;
	if ((res = shape(rec)) != NODESIG_OK ||
	    (res = cert_check(NULL, store, p, rec, NULL, 0, &pub)) !=
	    NODESIG_OK)
		return res;
	if ((msg = malloc(CTX_LEN + rec->signed_len)) == NULL)
		res = NODESIG_BAD_SIG;
	else if (!sig_check(msg, pub, p, rec))
		res = NODESIG_BAD_SIG;
	free(msg);
	EVP_PKEY_free(pub);
	return res;
}

static struct nodesig_origin **
origin_find(struct nodesig *s, const char *name)
{
	struct nodesig_origin	**op;
	uint32_t		 h;

	h = hash_fnv1a(HASH_FNV_BASIS, name, strlen(name));
	for (op = &s->b[h % NODESIG_BUCKETS]; *op != NULL; op = &(*op)->next)
		if (strcmp((*op)->name, name) == 0)
			break;
	return op;
}

enum nodesig_result
nodesig_verify(struct nodesig *s, X509_STORE *store, const uint8_t *p,
    size_t n, const struct node_rec *rec, uint64_t now_ms)
{
	struct nodesig_origin	**op, *o;
	struct nodesig_slot	*slot = NULL;
	enum nodesig_result	 res;
	uint8_t			 cd[SHA256_DIGEST_LENGTH];
	uint8_t			 rd[SHA256_DIGEST_LENGTH];
	EVP_PKEY		*pub;

	if ((res = shape(rec)) != NODESIG_OK)
		return res;
	if (s->store != store) {
		/*
		 * A reload's new CA or CRL: nothing cached holds.  The store is
		 * held so that a later one cannot take its address unnoticed.
		 */
		flush(s);
		X509_STORE_free(s->store);
		s->store = X509_STORE_up_ref(store) == 1 ? store : NULL;
	}
	SHA256(p + rec->cert_off, rec->cert_len, cd);
	op = origin_find(s, rec->name);
	o = *op;
	if (o != NULL && (memcmp(o->cert, cd, sizeof(cd)) != 0 ||
	    now_ms - o->checked_ms >= NODESIG_RECHECK_MS))
		o = NULL;	/* checked anew, replaced if good */
	if (o != NULL && rec->kind != NODE_KIND_TRAFFIC) {
		slot = &o->slots[rec->kind == NODE_KIND_TOPO ? 0 :
		    1 + rec->id % NODE_MAC_PAGES];
		SHA256(p, n, rd);
		if (slot->seq == rec->seq &&
		    memcmp(slot->digest, rd, sizeof(rd)) == 0) {
			s->st.record_hits++;
			return NODESIG_OK;
		}
	}
	if (o != NULL)
		s->st.cert_hits++;
	else {
		if ((res = cert_check(s, store, p, rec, cd, now_ms, &pub)) !=
		    NODESIG_OK)
			return res;
		if (*op == NULL) {
			if (s->n >= NODESIG_ORIGINS_MAX) {
				flush(s);
				op = origin_find(s, rec->name);
			}
			if ((*op = calloc(1, sizeof(**op))) == NULL) {
				EVP_PKEY_free(pub);
				return NODESIG_BAD_SIG;	/* unchecked */
			}
			s->n++;
			memcpy((*op)->name, rec->name, sizeof((*op)->name));
		}
		o = *op;
		EVP_PKEY_free(o->pub);
		o->pub = pub;
		memcpy(o->cert, cd, sizeof(cd));
		o->checked_ms = now_ms;
		memset(o->slots, 0, sizeof(o->slots));
	}
	if (!sig_check(s->msg, o->pub, p, rec))
		return NODESIG_BAD_SIG;
	s->st.verified++;
	if (rec->kind != NODE_KIND_TRAFFIC) {
		slot = &o->slots[rec->kind == NODE_KIND_TOPO ? 0 :
		    1 + rec->id % NODE_MAC_PAGES];
		slot->seq = rec->seq;
		SHA256(p, n, slot->digest);
	}
	return NODESIG_OK;
}
