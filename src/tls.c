/*
 * The SSL_CTX and the certificate checks behind TLS links.  Only this file
 * and conn_tls.c (which makes the SSL of each connection) know OpenSSL.
 */
#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tls.h"
#include "tlsexp.h"

/* AEAD suites only; TLS 1.3 has no others, but say so rather than trust it. */
#define TLS_SUITES	"TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:" \
			"TLS_AES_128_GCM_SHA256"
#define TLS_VERIFY_DEPTH	4

static void	cert_cn(X509 *, char *, size_t);

/*
 * A certificate refused is gone from the SSL once the handshake fails: its
 * CN is kept, for the message, where tls_conn_refused_cn() said.
 */
static int
tls_verify_cb(int ok, X509_STORE_CTX *sctx)
{
	SSL	*ssl;
	char	*cn;

	if (ok || (ssl = X509_STORE_CTX_get_ex_data(sctx,
	    SSL_get_ex_data_X509_STORE_CTX_idx())) == NULL ||
	    (cn = SSL_get_app_data(ssl)) == NULL || cn[0] != '\0')
		return ok;
	/* The leaf's CN: the depth 0 certificate names the peer. */
	cert_cn(X509_STORE_CTX_get0_cert(sctx), cn, TLS_CN_MAX);
	return ok;
}

/* The reason of the last OpenSSL error, or what the caller says. */
static const char *
last_error(const char *otherwise)
{
	unsigned long	 e = ERR_peek_last_error();
	const char	*r;

	if (e == 0 || (r = ERR_reason_error_string(e)) == NULL)
		return otherwise;
	return r;
}

/*
 * Why a file did not load, as a sentence: OpenSSL's last reason for a key
 * that is not PEM is "PEM lib" (or "unsupported"), the cause is in the file.
 */
static const char *
file_error(const char *file, const char *otherwise)
{
	unsigned long	 e;
	int		 decode = 0;
	FILE		*fp;
	char		 line[256];
	int		 begin = 0, end = 0, encrypted = 0;

	while ((e = ERR_get_error()) != 0)
		if (ERR_GET_LIB(e) == ERR_LIB_PEM ||
		    ERR_GET_LIB(e) == ERR_LIB_ASN1
#ifdef ERR_LIB_DECODER
		    || ERR_GET_LIB(e) == ERR_LIB_DECODER
#endif
		    || (ERR_GET_LIB(e) == ERR_LIB_SSL &&
		    ERR_GET_REASON(e) == ERR_R_PEM_LIB))
			decode = 1;
	if (!decode || (fp = fopen(file, "r")) == NULL)
		return otherwise;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (strncmp(line, "-----BEGIN ", 11) == 0) {
			begin = 1;
			encrypted |= strstr(line, "ENCRYPTED") != NULL;
		} else if (strncmp(line, "-----END ", 9) == 0)
			end = 1;
		else if (strncmp(line, "Proc-Type: 4,ENCRYPTED", 22) == 0)
			encrypted = 1;
	}
	fclose(fp);
	if (!begin)
		return "not in PEM format: no '-----BEGIN ...-----' line found "
		    "in it";
	if (encrypted)
		return "encrypted with a passphrase: vnetd needs it "
		    "unencrypted (openssl pkey -in FILE -out FILE)";
	if (!end)
		return "a damaged PEM block: no '-----END ...-----' line";
	return "its PEM block is damaged, or holds something other than "
	    "expected (a certificate, or a private key)";
}

/* OpenSSL's messages for a missing file are obscure: say it plainly first. */
static int
readable(const char *what, const char *file, char *err, size_t errlen)
{
	FILE	*fp;

	if ((fp = fopen(file, "r")) == NULL) {
		snprintf(err, errlen, "%s %s: %s", what, file, strerror(errno));
		return 0;
	}
	fclose(fp);
	return 1;
}

static int
load_crl(SSL_CTX *ctx, const char *file, char *err, size_t errlen)
{
	X509_STORE	*store = SSL_CTX_get_cert_store(ctx);
	X509_LOOKUP	*lookup;

	if ((lookup = X509_STORE_add_lookup(store, X509_LOOKUP_file())) ==
	    NULL || X509_load_crl_file(lookup, file, X509_FILETYPE_PEM) <= 0) {
		snprintf(err, errlen, "tls-crl %s: %s", file,
		    file_error(file, last_error("cannot load a CRL")));
		return -1;
	}
	/* The leaf's revocation; a node CA has no intermediates to check. */
	X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
	return 0;
}

/*
 * Our own certificate as a peer will see it.  What is wrong with it is
 * said now, as a warning: peers will refuse it, and the daemon should say
 * why at start rather than only in their logs; but it runs, so that a
 * certificate renewed in place (or a test of refusals) needs no restart
 * order.
 */
static int
check_own(SSL_CTX *ctx, const struct tls_files *f, const char *node,
    char *err, size_t errlen, char *warn, size_t warnlen)
{
	X509		*cert = SSL_CTX_get0_certificate(ctx);
	X509_STORE_CTX	*sctx;
	STACK_OF(X509)	*chain = NULL;
	int		 ok, verr;
	long long	 not_after, left;
	struct tm	 tm;
	char		 when[32];

	if (cert == NULL) {
		snprintf(err, errlen, "tls-cert %s: no certificate", f->cert);
		return -1;
	}
	if ((sctx = X509_STORE_CTX_new()) == NULL) {
		snprintf(err, errlen, "tls: out of memory");
		return -1;
	}
	SSL_CTX_get0_chain_certs(ctx, &chain);
	ok = X509_STORE_CTX_init(sctx, SSL_CTX_get_cert_store(ctx), cert,
	    chain) == 1 && X509_verify_cert(sctx) == 1;
	verr = X509_STORE_CTX_get_error(sctx);
	X509_STORE_CTX_free(sctx);
	if (!ok)
		snprintf(warn, warnlen, "tls-cert %s: not valid under tls-ca "
		    "%s: %s: peers will refuse it", f->cert, f->ca,
		    X509_verify_cert_error_string(verr));
	else if (!tls_cert_names(cert, node))
		snprintf(warn, warnlen, "tls-cert %s: does not name this node "
		    "'%s' (in its CN or a DNS subjectAltName): peers will "
		    "refuse it", f->cert, node);
	else if (tls_cert_not_after(cert, &not_after) == 0 &&
	    (left = not_after - (long long)time(NULL)) < TLSEXP_WARN_S) {
		gmtime_r(&(time_t){ (time_t)not_after }, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		snprintf(warn, warnlen, "tls-cert %s: expires in %lld day%s "
		    "(%lld s, on %s): renew it (vnet-ca renew CADIR %s where "
		    "the CA is, the new %s.crt copied here, then vnetctl "
		    "reload)", f->cert, left / 86400,
		    left / 86400 == 1 ? "" : "s", left, when, node, node);
	}
	return 0;
}

SSL_CTX *
tls_ctx_new(const struct tls_files *f, const char *node, char *err,
    size_t errlen, char *warn, size_t warnlen)
{
	SSL_CTX			*ctx;
	STACK_OF(X509_NAME)	*cas;

	if (warnlen > 0)
		warn[0] = '\0';
	if (!readable("tls-cert", f->cert, err, errlen) ||
	    !readable("tls-key", f->key, err, errlen) ||
	    !readable("tls-ca", f->ca, err, errlen) ||
	    (f->crl != NULL && f->crl[0] != '\0' &&
	    !readable("tls-crl", f->crl, err, errlen)))
		return NULL;
	ERR_clear_error();
	if ((ctx = SSL_CTX_new(TLS_method())) == NULL) {
		snprintf(err, errlen, "tls: %s", last_error("out of memory"));
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_ciphersuites(ctx, TLS_SUITES) != 1) {
		snprintf(err, errlen, "tls: this OpenSSL has no TLS 1.3: %s",
		    last_error("?"));
		goto fail;
	}
	/*
	 * Every connection proves itself with its certificate: no session
	 * resumption (a resumed session would skip the CRL), no tickets.
	 */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
	/* A peer that just closes TCP has closed (1.1.1 says so by itself). */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
	/*
	 * Records are read ahead, as many as TLS_READ_BUFFER holds, with one
	 * read(2).  A write reports the records that went out (those a write
	 * that had to wait got out are reported by the next call that
	 * finishes), and its retry may pass the same bytes from elsewhere.
	 */
	SSL_CTX_set_read_ahead(ctx, 1);
	SSL_CTX_set_default_read_buffer_len(ctx, TLS_READ_BUFFER);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (SSL_CTX_use_certificate_chain_file(ctx, f->cert) != 1) {
		snprintf(err, errlen, "tls-cert %s: %s", f->cert,
		    file_error(f->cert, last_error("cannot load")));
		goto fail;
	}
	/* The key is checked against the certificate as it loads. */
	if (SSL_CTX_use_PrivateKey_file(ctx, f->key, SSL_FILETYPE_PEM) != 1) {
		if (ERR_GET_REASON(ERR_peek_last_error()) ==
		    X509_R_KEY_VALUES_MISMATCH)
			snprintf(err, errlen, "tls-key %s: not the key of "
			    "tls-cert %s", f->key, f->cert);
		else
			snprintf(err, errlen, "tls-key %s: %s", f->key,
			    file_error(f->key, last_error("cannot load")));
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "tls-key %s: not the key of tls-cert %s",
		    f->key, f->cert);
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, f->ca, NULL) != 1 ||
	    (cas = SSL_load_client_CA_file(f->ca)) == NULL) {
		snprintf(err, errlen, "tls-ca %s: %s", f->ca,
		    file_error(f->ca, last_error("no CA certificate in it")));
		goto fail;
	}
	SSL_CTX_set_client_CA_list(ctx, cas);
	if (f->crl != NULL && f->crl[0] != '\0' &&
	    load_crl(ctx, f->crl, err, errlen) == -1)
		goto fail;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, tls_verify_cb);
	SSL_CTX_set_verify_depth(ctx, TLS_VERIFY_DEPTH);
	if (check_own(ctx, f, node, err, errlen, warn, warnlen) == -1)
		goto fail;
	ERR_clear_error();
	return ctx;
 fail:
	ERR_clear_error();
	SSL_CTX_free(ctx);
	return NULL;
}

/* An ASN.1 string equal to s, byte for byte, with no NUL hidden inside. */
static int
asn1_is(const ASN1_STRING *a, const char *s)
{
	size_t	 len = strlen(s);

	return a != NULL && ASN1_STRING_length(a) >= 0 &&
	    (size_t)ASN1_STRING_length(a) == len &&
	    memcmp(ASN1_STRING_get0_data(a), s, len) == 0;
}

/*
 * 1 if the certificate's subject CN or one of its DNS SANs is node.  Exact
 * comparison, not X509_check_host(): node names are not host names (case
 * matters, '_' is allowed) and a wildcard must never match one.
 */
int
tls_cert_names(X509 *cert, const char *node)
{
	GENERAL_NAMES		*sans;
	const GENERAL_NAME	*gn;
	X509_NAME		*subj;
	X509_NAME_ENTRY		*e;
	int			 i, n, found = 0;

	sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	n = sans != NULL ? sk_GENERAL_NAME_num(sans) : 0;
	for (i = 0; i < n && !found; i++) {
		gn = sk_GENERAL_NAME_value(sans, i);
		if (gn->type == GEN_DNS && asn1_is(gn->d.dNSName, node))
			found = 1;
	}
	GENERAL_NAMES_free(sans);
	if (found)
		return 1;
	if ((subj = X509_get_subject_name(cert)) == NULL)
		return 0;
	for (i = -1; (i = X509_NAME_get_index_by_NID(subj, NID_commonName,
	    i)) != -1;) {
		e = X509_NAME_get_entry(subj, i);
		if (asn1_is(X509_NAME_ENTRY_get_data(e), node))
			return 1;
	}
	return 0;
}

/* The subject's CN, for messages; "?" when there is none. */
static void
cert_cn(X509 *cert, char *buf, size_t len)
{
	X509_NAME	*subj = cert != NULL ? X509_get_subject_name(cert) : NULL;
	size_t		 i;

	if (subj == NULL || X509_NAME_get_text_by_NID(subj, NID_commonName,
	    buf, (int)len) <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	/* It goes into a log line. */
	for (i = 0; buf[i] != '\0'; i++)
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
			buf[i] = '?';
}

int
tls_check_peer(SSL *ssl, const char *node, char *why, size_t len)
{
	X509	*cert = SSL_get0_peer_certificate(ssl);
	char	 cn[64];

	if (cert == NULL) {
		snprintf(why, len, "no peer certificate");
		return -1;
	}
	if (!tls_cert_names(cert, node)) {
		cert_cn(cert, cn, sizeof(cn));
		snprintf(why, len, "certificate (CN %s) does not name node %s",
		    cn, node);
		return -1;
	}
	return 0;
}

/*
 * What the commonest failures mean, said on the side that sees them: the
 * peer's alert about our certificate, or a peer that does not speak TLS.
 */
static const char *
tls_words(unsigned long err, int server)
{
	if (ERR_GET_LIB(err) != ERR_LIB_SSL)
		return NULL;
	switch (ERR_GET_REASON(err)) {
	case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
		return "the peer refused our certificate: it is not of the "
		    "peer's tls-ca (the two sides have different CAs?)";
	case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
		return "the peer refused our certificate: its tls-crl revokes "
		    "it (vnet-ca renew or issue a new one)";
	case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
		return "the peer refused our certificate: expired "
		    "(vnet-ca renew, then vnetctl reload)";
	case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
	case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
	case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
		return "the peer refused our certificate (its log says why)";
	case SSL_R_WRONG_VERSION_NUMBER:
	case SSL_R_PACKET_LENGTH_TOO_LONG:
	case SSL_R_HTTP_REQUEST:
		return server ? "not TLS: the peer dialled this TLS listener "
		    "without tls (its link needs tls, or this listen none)" :
		    "not TLS: the peer's listener does not speak TLS (drop "
		    "tls from this link, or add tls to the peer's listen)";
	default:
		return NULL;
	}
}

int
tls_failure(SSL *ssl, unsigned long err, char *why, size_t len)
{
	long		 vr = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	const char	*r, *w;
	char		 cn[TLS_CN_MAX], *kept;

	if (vr != X509_V_OK) {
		/* A refused certificate is mostly gone by now; say its CN if not. */
		cert_cn(ssl != NULL ? SSL_get0_peer_certificate(ssl) : NULL,
		    cn, sizeof(cn));
		if (strcmp(cn, "?") == 0 && ssl != NULL &&
		    (kept = SSL_get_app_data(ssl)) != NULL && kept[0] != '\0')
			snprintf(cn, sizeof(cn), "%s", kept);
		snprintf(why, len, "certificate refused%s%s%s: %s",
		    strcmp(cn, "?") != 0 ? " (CN " : "",
		    strcmp(cn, "?") != 0 ? cn : "",
		    strcmp(cn, "?") != 0 ? ")" : "",
		    X509_verify_cert_error_string(vr));
		return 1;
	}
	if (err == 0) {
		snprintf(why, len, "TLS failed");
		return 0;
	}
	if ((r = ERR_reason_error_string(err)) == NULL)
		r = "unknown error";
	if (ERR_GET_LIB(err) == ERR_LIB_SSL &&
	    (ERR_GET_REASON(err) == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE ||
	    ERR_GET_REASON(err) == SSL_R_CERTIFICATE_VERIFY_FAILED)) {
		snprintf(why, len, "certificate refused: %s", r);
		return 1;
	}
	if ((w = tls_words(err, ssl != NULL && SSL_is_server(ssl))) != NULL) {
		snprintf(why, len, "%s (TLS: %s)", w, r);
		return 0;
	}
	snprintf(why, len, "TLS: %s", r);
	return 0;
}

void
tls_describe(SSL *ssl, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", SSL_get_version(ssl),
	    SSL_get_cipher_name(ssl));
}

void
tls_conn_refused_cn(SSL *ssl, char *buf)
{
	buf[0] = '\0';
	SSL_set_app_data(ssl, buf);
}

SSL *
tls_conn_new(SSL_CTX *ctx, int fd, int outgoing)
{
	SSL	*ssl;

	if ((ssl = SSL_new(ctx)) == NULL)
		return NULL;
	if (SSL_set_fd(ssl, fd) != 1) {
		SSL_free(ssl);
		return NULL;
	}
	if (outgoing)
		SSL_set_connect_state(ssl);
	else
		SSL_set_accept_state(ssl);
	return ssl;
}

/*
 * Before a call: SSL_get_error() reads the thread's error queue, where
 * something else may have left an error, and errno.
 */
static void
tls_io_begin(void)
{
	ERR_clear_error();
	errno = 0;
}

/*
 * What became of a call that returned r.  The thread's error queue is left
 * empty: the first error is kept in *err (0 for none: errno, if not 0,
 * says what the system call met).
 */
static enum tls_io
tls_result(SSL *ssl, int r, unsigned long *err)
{
	unsigned long	 e;
	int		 saved = errno, what;

	*err = 0;
	what = SSL_get_error(ssl, r);
	switch (what) {
	case SSL_ERROR_WANT_READ:
		return TLS_IO_WANT_READ;
	case SSL_ERROR_WANT_WRITE:
		return TLS_IO_WANT_WRITE;
	case SSL_ERROR_ZERO_RETURN:
		return TLS_IO_CLOSED;
	}
	while ((e = ERR_get_error()) != 0)
		if (*err == 0)
			*err = e;
	if (what == SSL_ERROR_SYSCALL && *err == 0 && saved == 0)
		return TLS_IO_CLOSED;		/* EOF, no close_notify */
	errno = what == SSL_ERROR_SYSCALL ? saved : 0;
	return TLS_IO_ERROR;
}

enum tls_io
tls_handshake(SSL *ssl, unsigned long *err)
{
	int	 r;

	tls_io_begin();
	if ((r = SSL_do_handshake(ssl)) == 1) {
		*err = 0;
		return TLS_IO_OK;
	}
	return tls_result(ssl, r, err);
}

enum tls_io
tls_read(SSL *ssl, void *buf, size_t len, size_t *n, unsigned long *err)
{
	int	 r;

	tls_io_begin();
	if ((r = SSL_read_ex(ssl, buf, len, n)) == 1) {
		*err = 0;
		return TLS_IO_OK;
	}
	*n = 0;
	return tls_result(ssl, r, err);
}

enum tls_io
tls_write(SSL *ssl, const void *buf, size_t len, size_t *n,
    unsigned long *err)
{
	int	 r;

	tls_io_begin();
	if ((r = SSL_write_ex(ssl, buf, len, n)) == 1) {
		*err = 0;
		return TLS_IO_OK;
	}
	*n = 0;
	return tls_result(ssl, r, err);
}

int
tls_ctx_identity(SSL_CTX *ctx, X509 **cert, EVP_PKEY **key,
    X509_STORE **store)
{
	*cert = SSL_CTX_get0_certificate(ctx);
	*key = SSL_CTX_get0_privatekey(ctx);
	*store = SSL_CTX_get_cert_store(ctx);
	return *cert != NULL && *key != NULL && *store != NULL ? 0 : -1;
}

X509 *
tls_ctx_cert(SSL_CTX *ctx)
{
	return SSL_CTX_get0_certificate(ctx);
}

const char *
tls_file_keyword(enum tls_file f)
{
	static const char *const kw[TLS_FILES] = {
		"tls-cert", "tls-key", "tls-ca", "tls-crl",
	};

	return f < TLS_FILES ? kw[f] : "tls";
}

static void
file_digest(const char *file, unsigned char sum[32])
{
	EVP_MD_CTX	*md;
	FILE		*fp;
	unsigned char	 buf[4096];
	unsigned int	 len = 32;
	size_t		 n;

	memset(sum, 0, 32);
	if (file == NULL || file[0] == '\0' || (fp = fopen(file, "r")) == NULL)
		return;
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		fclose(fp);
		return;
	}
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		EVP_DigestUpdate(md, buf, n);
	if (ferror(fp) || EVP_DigestFinal_ex(md, sum, &len) != 1)
		memset(sum, 0, 32);
	EVP_MD_CTX_free(md);
	fclose(fp);
}

void
tls_files_digest(const struct tls_files *f, struct tls_digest *dg)
{
	file_digest(f->cert, dg->sum[TLS_FILE_CERT]);
	file_digest(f->key, dg->sum[TLS_FILE_KEY]);
	file_digest(f->ca, dg->sum[TLS_FILE_CA]);
	file_digest(f->crl, dg->sum[TLS_FILE_CRL]);
}

int
tls_recheck_peer(SSL_CTX *ctx, SSL *ssl, char *why, size_t len)
{
	X509		*cert = SSL_get0_peer_certificate(ssl);
	STACK_OF(X509)	*chain = SSL_get_peer_cert_chain(ssl);
	X509_STORE_CTX	*sctx;
	int		 ok, verr;

	if (cert == NULL) {
		snprintf(why, len, "no peer certificate");
		return -1;
	}
	if ((sctx = X509_STORE_CTX_new()) == NULL) {
		/* Not the peer's fault: it keeps its link. */
		return 0;
	}
	/* As the handshake did: a client's certificate, or a server's. */
	ok = X509_STORE_CTX_init(sctx, SSL_CTX_get_cert_store(ctx), cert,
	    chain) == 1 && X509_STORE_CTX_set_purpose(sctx, SSL_is_server(ssl) ?
	    X509_PURPOSE_SSL_CLIENT : X509_PURPOSE_SSL_SERVER) == 1;
	if (ok) {
		X509_VERIFY_PARAM_set_depth(X509_STORE_CTX_get0_param(sctx),
		    TLS_VERIFY_DEPTH);
		ok = X509_verify_cert(sctx) == 1;
	}
	verr = X509_STORE_CTX_get_error(sctx);
	X509_STORE_CTX_free(sctx);
	ERR_clear_error();
	if (ok)
		return 0;
	if (verr == X509_V_ERR_CERT_REVOKED)
		snprintf(why, len, "its certificate is revoked by the new CRL");
	else
		snprintf(why, len, "its certificate is not valid under the "
		    "new tls-ca/tls-crl: %s",
		    X509_verify_cert_error_string(verr));
	return -1;
}

int
tls_cert_not_after(X509 *cert, long long *t)
{
	const ASN1_TIME	*na;
	struct tm	 tm;

	if (cert == NULL || (na = X509_get0_notAfter(cert)) == NULL ||
	    ASN1_TIME_to_tm(na, &tm) != 1)
		return -1;
	*t = (long long)timegm(&tm);
	return 0;
}

X509 *
tls_peer_cert(SSL *ssl)
{
	return SSL_get0_peer_certificate(ssl);
}
