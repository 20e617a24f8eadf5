/*
 * TLS for links: one SSL_CTX per daemon, made from tls-cert, tls-key,
 * tls-ca and tls-crl, used for both directions.  TLS 1.3 only, with
 * AES-GCM or ChaCha20-Poly1305; both sides present a certificate, and each
 * checks the other's chain against tls-ca (and the CRL, when there is one).
 * Which node a certificate is for is the link's business: tls_check_peer()
 * says whether the peer's names a node, exactly, in its subject CN or a DNS
 * SAN.
 */
#ifndef VNET_TLS_H
#define VNET_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

struct tls_files {
	const char	*cert;
	const char	*key;
	const char	*ca;
	const char	*crl;		/* NULL or "": none */
};

/*
 * Loads the files and checks that they make sense together: each loads and
 * the key is the certificate's (else NULL with a message in err).  That the
 * certificate is valid under the CA (and not revoked) now and names node is
 * checked too, and a failure said in warn ("" when all is well): peers will
 * refuse such a certificate, but that is theirs to do.
 */
SSL_CTX	*tls_ctx_new(const struct tls_files *, const char *node, char *err,
	    size_t errlen, char *warn, size_t warnlen);

/*
 * After the handshake: whether the peer's certificate names node.  0, or -1
 * with the reason in why.
 */
int	 tls_check_peer(SSL *, const char *node, char *why, size_t len);

/*
 * Why a TLS connection failed, from the verification result and the first
 * OpenSSL error (0: none).  Returns 1 if this side refused the peer's
 * certificate (its chain, dates, revocation, or no certificate at all), 0
 * for any other failure (the peer refused us, or spoke no TLS).
 */
int	 tls_failure(SSL *, unsigned long err, char *why, size_t len);

/* Whether the certificate names node, exactly, in its CN or a DNS SAN. */
int	 tls_cert_names(X509 *, const char *node);

/*
 * What a context holds now: its certificate and key (for signing node
 * records) and its CA store with the CRL (for checking others').  Read
 * anew at each use, since a reload replaces them; none is the caller's to
 * free.  0, or -1 if one is missing.
 */
int	 tls_ctx_identity(SSL_CTX *, X509 **cert, EVP_PKEY **key,
	    X509_STORE **store);

/* "TLSv1.3 TLS_AES_256_GCM_SHA384": what a connection uses, for the log. */
void	 tls_describe(SSL *, char *buf, size_t len);

/*
 * A connection's records, read and written by the link on its own
 * non-blocking socket (no BIO but the socket's): one read(2) takes up to
 * TLS_READ_BUFFER bytes of records, a write sends whole records of at most
 * 16 KiB and says how much of the buffer they held.
 */
#define TLS_READ_BUFFER		(256 * 1024)

enum tls_io {
	TLS_IO_OK,		/* done; *n bytes moved */
	TLS_IO_WANT_READ,	/* call again when the socket is readable */
	TLS_IO_WANT_WRITE,	/* ... writable (a write: same bytes again) */
	TLS_IO_CLOSED,		/* the peer closed, cleanly or not */
	TLS_IO_ERROR,		/* *err: the first OpenSSL error, 0: errno */
};

/* The SSL of a connection on socket fd, client if outgoing, else server. */
SSL		*tls_conn_new(SSL_CTX *, int fd, int outgoing);
/*
 * Where the CN of a peer certificate this side refuses is kept for
 * tls_failure() (TLS_CN_MAX bytes, as long as the SSL lives).
 */
#define TLS_CN_MAX	64
void		 tls_conn_refused_cn(SSL *, char *buf);
enum tls_io	 tls_handshake(SSL *, unsigned long *err);
enum tls_io	 tls_read(SSL *, void *, size_t, size_t *n, unsigned long *err);
enum tls_io	 tls_write(SSL *, const void *, size_t, size_t *n,
		    unsigned long *err);

/*
 * The own certificate, as the context holds it (not a copy): a reload may
 * replace the context and free it with it, so ask again each time, or
 * take a reference (X509_up_ref()).  tls_ctx_identity() gives the key too.
 */
X509		*tls_ctx_cert(SSL_CTX *);

/*
 * What the files held when a context was made from them: a SHA-256 of each
 * (cert, key, ca, crl), so that a reload tells a changed file from one only
 * touched.  A file that cannot be read (or none: no CRL) hashes as zeros.
 */
enum tls_file { TLS_FILE_CERT, TLS_FILE_KEY, TLS_FILE_CA, TLS_FILE_CRL,
	TLS_FILES };

struct tls_digest {
	unsigned char	 sum[TLS_FILES][32];
};

void	 tls_files_digest(const struct tls_files *, struct tls_digest *);
/* "tls-cert" ...: the statement that names the file. */
const char *tls_file_keyword(enum tls_file);

/*
 * An established connection's peer, checked again under another context
 * (new tls-ca, new CRL): 0 if its chain still verifies, else -1 with why
 * ("its certificate is revoked by the new CRL").
 */
int	 tls_recheck_peer(SSL_CTX *, SSL *, char *why, size_t len);

/*
 * A certificate's notAfter as a Unix time: 0, or -1 if it has none that
 * reads.  The peer's (NULL: none) and our own.
 */
int	 tls_cert_not_after(X509 *, long long *t);
X509	*tls_peer_cert(SSL *);

/*
 * Under TLSEXP_WARN_S left (30 days), the own certificate is warned about
 * at load; tlsexp.h warns again, as it runs, at the later thresholds.
 */

#endif
