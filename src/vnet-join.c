/*
 * vnet-join: joining in one step.
 *
 *   vnet-join [-a STATEMENT]... [-x] [-p VNETD] LINE [DIR [VNETD-ARG...]]
 *	on the new host: makes the node's key in DIR, sends a certificate
 *	request over TLS 1.3 authenticated by the invitation's one-time
 *	secret (an external PSK), and writes the signed certificate, the CA's
 *	certificate and CRL and a starter vnetd.conf; -x then runs vnetd.
 *   vnet-join serve [-l ADDR:PORT] [-c VNET-CA] [-v] CADIR
 *	on the proxy: answers the invitations vnet-ca invite wrote in
 *	CADIR/invites, one connection at a time, each within JOIN_TIMEOUT.
 *
 * The server has no certificate: a client without the secret of a known
 * invitation gets a TLS alert and nothing else.  vnet-join(8) says more.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "join.h"
#include "log.h"
#include "paths.h"
#include "stmt.h"

#define JOIN_TIMEOUT	10		/* seconds for a whole exchange */
#define JOIN_CIPHERS	"TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256"
#define JOIN_STMTS	16

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: vnet-join [-a STATEMENT]... [-x] [-p VNETD] LINE "
	    "[DIR [VNETD-ARG...]]\n"
	    "       vnet-join serve [-v] [-l ADDR:PORT] [-c VNET-CA] CADIR\n"
	    "  LINE  the line vnet-ca invite printed on the proxy\n"
	    "  DIR   where the key, certificates and vnetd.conf go "
	    "(default the directory of %s)\n"
	    "  -a    a statement for vnetd.conf besides the starter ones\n"
	    "  -x    run vnetd -f DIR/vnetd.conf (with VNETD-ARGs) once joined\n"
	    "  -p    the vnetd to run (default vnetd in PATH)\n"
	    "  -l    serve: where to listen (default *:%s)\n"
	    "  -c    serve: the vnet-ca that signs (default vnet-ca in PATH)\n"
	    "  -V    the version\n",
	    VNETD_CONF, JOIN_PORT);
	exit(fp == stderr ? 1 : 0);
}

/* A PSK session for the invitation's key: TLS 1.3, an AES-128-GCM/SHA-256
 * suite (both ends allow only SHA-256 suites, so it always fits). */
static SSL_SESSION *
psk_session(SSL *ssl, const uint8_t *psk)
{
	static const unsigned char	 aes128gcm[] = { 0x13, 0x01 };
	const SSL_CIPHER		*c;
	SSL_SESSION			*s;

	if ((c = SSL_CIPHER_find(ssl, aes128gcm)) == NULL ||
	    (s = SSL_SESSION_new()) == NULL)
		return NULL;
	if (!SSL_SESSION_set1_master_key(s, psk, JOIN_PSK_LEN) ||
	    !SSL_SESSION_set_cipher(s, c) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

static SSL_CTX *
ctx_new(int server)
{
	SSL_CTX	*ctx;

	if ((ctx = SSL_CTX_new(server ? TLS_server_method() :
	    TLS_client_method())) == NULL)
		return NULL;
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_ciphersuites(ctx, JOIN_CIPHERS);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	/* A client must not take a certificate instead of the secret. */
	if (!server)
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return ctx;
}

static void
set_timeouts(int fd)
{
	struct timeval	tv = { .tv_sec = JOIN_TIMEOUT };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* msg_send: the length and the message. */
static int
msg_send(SSL *ssl, const uint8_t *msg, size_t len)
{
	uint8_t	hdr[4] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16),
		    (uint8_t)(len >> 8), (uint8_t)len };

	if (SSL_write(ssl, hdr, 4) != 4 ||
	    (len > 0 && SSL_write(ssl, msg, (int)len) != (int)len))
		return -1;
	return 0;
}

static int
read_full(SSL *ssl, uint8_t *p, size_t len)
{
	int	n;

	while (len > 0) {
		if ((n = SSL_read(ssl, p, len > INT_MAX ? INT_MAX : (int)len)) <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* msg_recv: a message of at most max bytes, in a malloc'd buffer. */
static uint8_t *
msg_recv(SSL *ssl, size_t max, size_t *lenp, const char **why)
{
	uint8_t	 hdr[4], *buf;
	size_t	 len;

	if (read_full(ssl, hdr, 4) == -1) {
		*why = "connection closed before a message";
		return NULL;
	}
	len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 |
	    (size_t)hdr[2] << 8 | hdr[3];
	if (len > max) {
		*why = "message too long";
		return NULL;
	}
	if ((buf = malloc(len + 1)) == NULL) {
		*why = "out of memory";
		return NULL;
	}
	if (read_full(ssl, buf, len) == -1) {
		free(buf);
		*why = "connection closed in a message";
		return NULL;
	}
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

/* read_file: a whole small file, NUL-terminated; NULL with errno. */
static char *
read_file(const char *path, size_t max, size_t *lenp)
{
	FILE	*fp;
	char	*buf;
	size_t	 n;

	if ((fp = fopen(path, "r")) == NULL)
		return NULL;
	if ((buf = malloc(max + 1)) == NULL) {
		fclose(fp);
		return NULL;
	}
	n = fread(buf, 1, max + 1, fp);
	fclose(fp);
	if (n > max) {
		free(buf);
		errno = EFBIG;
		return NULL;
	}
	buf[n] = '\0';
	if (lenp != NULL)
		*lenp = n;
	return buf;
}

static int
write_file(const char *path, const void *p, size_t len, mode_t mode)
{
	char	tmp[PATH_MAX];
	int	fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, mode)) == -1)
		return -1;
	if (fchmod(fd, mode) == -1 || write(fd, p, len) != (ssize_t)len ||
	    fsync(fd) == -1) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	return rename(tmp, path);
}

/* ---- the server ---- */

enum invite_state { INV_NONE, INV_PENDING, INV_USED };

struct serve {
	const char	*dir;
	const char	*vnet_ca;
	/* The connection being answered. */
	char		 id[JOIN_ID_HEX + 1];
	enum invite_state state;
	struct join_invite inv;
	unsigned long	 joined, refused, unknown;
};

static int
invite_path(const struct serve *sv, const char *suffix, char *out, size_t cap)
{
	return snprintf(out, cap, "%s/invites/%s%s", sv->dir, sv->id, suffix) <
	    (int)cap ? 0 : -1;
}

static int
invite_load(struct serve *sv, const char *suffix)
{
	char	 path[PATH_MAX], err[128], *text;
	size_t	 len;

	if (invite_path(sv, suffix, path, sizeof(path)) == -1 ||
	    (text = read_file(path, 4096, &len)) == NULL)
		return -1;
	if (join_invite_parse(text, len, &sv->inv, err, sizeof(err)) == -1) {
		log_warnx("%s: %s", path, err);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/* The PSK of identity ID, if CADIR/invites holds it (still pending, or used:
 * whoever holds a used one's secret hears that it was used).  An unknown
 * identity gets no PSK, and the handshake fails: the server has no
 * certificate to fall back on. */
static int
serve_find_psk(SSL *ssl, const unsigned char *identity, size_t len,
    SSL_SESSION **sess)
{
	struct serve	*sv = SSL_get_app_data(ssl);

	*sess = NULL;
	sv->state = INV_NONE;
	if (!join_id_valid((const char *)identity, len))
		return 1;
	memcpy(sv->id, identity, len);
	sv->id[len] = '\0';
	if (invite_load(sv, "") == 0)
		sv->state = INV_PENDING;
	else if (invite_load(sv, ".used") == 0)
		sv->state = INV_USED;
	else
		return 1;
	*sess = psk_session(ssl, sv->inv.psk);
	return 1;
}

static size_t
reply_error(uint8_t *out, size_t cap, const char *reason)
{
	size_t	off;

	off = join_msg_put(out, cap, 0, "status", "error", 5);
	return join_msg_put(out, cap, off, "reason", reason, strlen(reason));
}

/* serve_sign: vnet-ca sign CADIR NODE CSRFILE. */
static int
serve_sign(struct serve *sv, const char *csrfile)
{
	pid_t	pid;
	int	status;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		execlp(sv->vnet_ca, sv->vnet_ca, "sign", sv->dir, sv->inv.node,
		    csrfile, (char *)NULL);
		fprintf(stderr, "vnet-join: %s: %s\n", sv->vnet_ca, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int
csr_ok(const uint8_t *pem, size_t len)
{
	BIO		*bio;
	X509_REQ	*req;
	EVP_PKEY	*key;
	int		 ok = 0;

	if ((bio = BIO_new_mem_buf(pem, (int)len)) == NULL)
		return 0;
	if ((req = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL)) != NULL &&
	    (key = X509_REQ_get0_pubkey(req)) != NULL)
		ok = X509_REQ_verify(req, key) == 1;
	X509_REQ_free(req);
	BIO_free(bio);
	return ok;
}

/* serve_answer: the request of an authenticated client, and the answer. */
static size_t
serve_answer(struct serve *sv, const uint8_t *req, size_t reqlen, uint8_t *out,
    size_t cap)
{
	struct join_msg			 m;
	const struct join_field		*csr;
	char				 err[128], why[256], path[PATH_MAX],
					 csrfile[PATH_MAX], tbuf[32], *cert = NULL,
					 *ca = NULL, *crl = NULL;
	size_t				 off = 0, certlen, calen, crllen = 0;
	struct tm			 tm;

	if (sv->state == INV_USED) {
		snprintf(why, sizeof(why), "invitation %s (node %s) was used "
		    "already: it works once; make a new one on the proxy "
		    "(vnet-ca invite)", sv->id, sv->inv.node);
		goto refuse;
	}
	if (sv->inv.expires <= time(NULL)) {
		gmtime_r(&sv->inv.expires, &tm);
		strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S UTC", &tm);
		snprintf(why, sizeof(why), "invitation %s (node %s) expired at "
		    "%s; make a new one on the proxy (vnet-ca invite)", sv->id,
		    sv->inv.node, tbuf);
		goto refuse;
	}
	if (join_msg_parse(req, reqlen, &m, err, sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "bad request: %s", err);
		goto refuse;
	}
	if (join_msg_str(&m, "v", err, sizeof(err)) == -1 || strcmp(err, "1") != 0) {
		snprintf(why, sizeof(why), "bad request: version 1 expected");
		goto refuse;
	}
	if ((csr = join_msg_get(&m, "csr")) == NULL || !csr_ok(csr->val, csr->len)) {
		snprintf(why, sizeof(why), "bad request: no valid certificate "
		    "request (csr)");
		goto refuse;
	}
	/* Works once: the rename is the claim, whoever comes second loses. */
	if (invite_path(sv, "", path, sizeof(path)) == -1 ||
	    invite_path(sv, ".used", csrfile, sizeof(csrfile)) == -1 ||
	    rename(path, csrfile) == -1) {
		snprintf(why, sizeof(why), "invitation %s was used already",
		    sv->id);
		goto refuse;
	}
	if (invite_path(sv, ".csr", csrfile, sizeof(csrfile)) == -1 ||
	    write_file(csrfile, csr->val, csr->len, 0600) == -1 ||
	    serve_sign(sv, csrfile) == -1) {
		unlink(csrfile);
		log_warnx("invitation %s: the CA did not sign for node %s",
		    sv->id, sv->inv.node);
		snprintf(why, sizeof(why), "the CA could not sign the request "
		    "(the join server's log says why); the invitation is used: "
		    "make a new one");
		goto refuse;
	}
	unlink(csrfile);
	snprintf(path, sizeof(path), "%s/%s.crt", sv->dir, sv->inv.node);
	cert = read_file(path, 65536, &certlen);
	snprintf(path, sizeof(path), "%s/ca.crt", sv->dir);
	ca = read_file(path, 65536, &calen);
	snprintf(path, sizeof(path), "%s/crl.pem", sv->dir);
	crl = read_file(path, JOIN_MSG_MAX / 2, &crllen);
	if (cert == NULL || ca == NULL) {
		log_warn("invitation %s: %s", sv->id, path);
		snprintf(why, sizeof(why), "the CA's files cannot be read");
		goto refuse;
	}
	off = join_msg_put(out, cap, off, "status", "ok", 2);
	off = join_msg_put(out, cap, off, "node", sv->inv.node, strlen(sv->inv.node));
	off = join_msg_put(out, cap, off, "proxy", sv->inv.proxy, strlen(sv->inv.proxy));
	off = join_msg_put(out, cap, off, "link", sv->inv.link, strlen(sv->inv.link));
	if (sv->inv.network[0] != '\0')
		off = join_msg_put(out, cap, off, "network", sv->inv.network,
		    strlen(sv->inv.network));
	off = join_msg_put(out, cap, off, "cert", cert, certlen);
	off = join_msg_put(out, cap, off, "ca", ca, calen);
	if (crl != NULL)
		off = join_msg_put(out, cap, off, "crl", crl, crllen);
	free(cert);
	free(ca);
	free(crl);
	if (off == 0) {
		snprintf(why, sizeof(why), "the answer does not fit");
		goto refuse;
	}
	sv->joined++;
	log_info("invitation %s: node %s joined (certificate %s/%s.crt)",
	    sv->id, sv->inv.node, sv->dir, sv->inv.node);
	return off;
refuse:
	free(cert);
	free(ca);
	free(crl);
	sv->refused++;
	log_warnx("invitation %s: refused: %s", sv->id, why);
	return reply_error(out, cap, why);
}

static void
serve_conn(struct serve *sv, SSL_CTX *ctx, int fd, const char *peer)
{
	SSL		*ssl;
	uint8_t		*req, *out;
	size_t		 reqlen, outlen;
	const char	*why;
	unsigned long	 e;

	set_timeouts(fd);
	if ((ssl = SSL_new(ctx)) == NULL)
		return;
	sv->state = INV_NONE;
	sv->id[0] = '\0';
	SSL_set_app_data(ssl, sv);
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) != 1) {
		e = ERR_peek_last_error();
		sv->unknown++;
		if (sv->state == INV_NONE)
			log_warnx("%s: refused: no invitation with that id%s%s",
			    peer, sv->id[0] ? " " : "", sv->id);
		else
			log_warnx("%s: invitation %s: refused: the secret does not "
			    "match (%s)", peer, sv->id, ERR_reason_error_string(e) ?
			    ERR_reason_error_string(e) : "handshake failed");
		ERR_clear_error();
		SSL_free(ssl);
		return;
	}
	if ((req = msg_recv(ssl, JOIN_REQ_MAX, &reqlen, &why)) == NULL) {
		log_warnx("%s: invitation %s: %s", peer, sv->id, why);
		SSL_free(ssl);
		return;
	}
	if ((out = malloc(JOIN_MSG_MAX)) != NULL) {
		outlen = serve_answer(sv, req, reqlen, out, JOIN_MSG_MAX);
		if (msg_send(ssl, out, outlen) == -1)
			log_warnx("%s: invitation %s: the answer could not be sent",
			    peer, sv->id);
		else
			SSL_shutdown(ssl);
		free(out);
	}
	free(req);
	ERR_clear_error();
	SSL_free(ssl);
}

static int
listen_on(const char *spec)
{
	struct addrinfo	 hints, *res, *ai;
	char		 host[256], port[8];
	const char	*colon = strrchr(spec, ':');
	size_t		 hl;
	int		 fd = -1, one = 1, rc;

	if (colon == NULL || (hl = (size_t)(colon - spec)) >= sizeof(host) ||
	    strlen(colon + 1) >= sizeof(port))
		fatalx("-l %s: expected ADDR:PORT", spec);
	memcpy(host, spec, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	strcpy(port, colon + 1);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if ((rc = getaddrinfo(strcmp(host, "*") == 0 ? NULL : host, port,
	    &hints, &res)) != 0)
		fatalx("-l %s: %s", spec, gai_strerror(rc));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype, 0)) == -1)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 16) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1)
		fatal("-l %s", spec);
	return fd;
}

static int
serve_main(int argc, char **argv)
{
	struct serve	 sv = { .vnet_ca = "vnet-ca" };
	const char	*lspec = "*:" JOIN_PORT;
	char		 path[PATH_MAX], peer[NI_MAXHOST + NI_MAXSERV + 2],
			 h[NI_MAXHOST], s[NI_MAXSERV];
	struct sockaddr_storage ss;
	socklen_t	 sl;
	SSL_CTX		*ctx;
	int		 ch, lfd, fd, verbose = 0;
	struct stat	 st;

	optind = 1;
	while ((ch = getopt(argc, argv, "+l:c:v")) != -1) {
		switch (ch) {
		case 'l': lspec = optarg; break;
		case 'c': sv.vnet_ca = optarg; break;
		case 'v': verbose = 1; break;
		default: usage(stderr);
		}
	}
	if (argc - optind != 1)
		usage(stderr);
	log_init("vnet-join", 1, verbose);
	sv.dir = argv[optind];
	if (snprintf(path, sizeof(path), "%s/ca.key", sv.dir) >= (int)sizeof(path) ||
	    access(path, R_OK) == -1)
		fatalx("%s: not a CA directory this user can sign with (vnet-ca init "
		    "makes one)", sv.dir);
	snprintf(path, sizeof(path), "%s/invites", sv.dir);
	if (stat(path, &st) == -1 && mkdir(path, 0700) == -1)
		fatal("%s", path);
	signal(SIGPIPE, SIG_IGN);
	if ((ctx = ctx_new(1)) == NULL)
		fatalx("TLS: cannot make a context");
	SSL_CTX_set_psk_find_session_callback(ctx, serve_find_psk);
	lfd = listen_on(lspec);
	log_info("answering the invitations of %s on %s", sv.dir, lspec);
	for (;;) {
		sl = sizeof(ss);
		if ((fd = accept(lfd, (struct sockaddr *)&ss, &sl)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			log_warn("accept");
			sleep(1);	/* EMFILE and the like: back off */
			continue;
		}
		if (getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), s,
		    sizeof(s), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
			snprintf(peer, sizeof(peer), "?");
		else
			snprintf(peer, sizeof(peer), "%s:%s", h, s);
		serve_conn(&sv, ctx, fd, peer);
		close(fd);
	}
}

/* ---- the client ---- */

struct client {
	struct join_line line;
	uint8_t		 psk[JOIN_PSK_LEN];
};

static int
client_use_psk(SSL *ssl, const EVP_MD *md, const unsigned char **id,
    size_t *idlen, SSL_SESSION **sess)
{
	struct client	*cl = SSL_get_app_data(ssl);

	(void)md;	/* only SHA-256 suites are offered */
	*sess = psk_session(ssl, cl->psk);
	*id = (const unsigned char *)cl->line.id;
	*idlen = JOIN_ID_HEX;
	return *sess != NULL;
}

static int
dial(const struct join_line *l)
{
	struct addrinfo	 hints, *res, *ai;
	int		 fd = -1, rc, saved = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(l->host, l->port, &hints, &res)) != 0) {
		fprintf(stderr, "vnet-join: %s: %s\n", l->host, gai_strerror(rc));
		exit(1);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype, 0)) == -1)
			continue;
		set_timeouts(fd);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1) {
		fprintf(stderr, "vnet-join: cannot reach the join server at %s:%s: "
		    "%s (is vnet-join serve running on the proxy?)\n", l->host,
		    l->port, strerror(saved));
		exit(1);
	}
	return fd;
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "vnet-join: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The node's key and a request for it; the CA writes the subject. */
static char *
make_csr(EVP_PKEY **keyp)
{
	EVP_PKEY	*key;
	X509_REQ	*req;
	X509_NAME	*name;
	BIO		*bio;
	BUF_MEM		*bm;
	char		*pem;

	if ((key = EVP_EC_gen("P-256")) == NULL || (req = X509_REQ_new()) == NULL)
		die("cannot make a key");
	name = X509_REQ_get_subject_name(req);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)"vnet-join", -1, -1, 0);
	if (!X509_REQ_set_pubkey(req, key) || !X509_REQ_sign(req, key, EVP_sha256()) ||
	    (bio = BIO_new(BIO_s_mem())) == NULL || !PEM_write_bio_X509_REQ(bio, req))
		die("cannot make a certificate request");
	BIO_get_mem_ptr(bio, &bm);
	if ((pem = strndup(bm->data, bm->length)) == NULL)
		die("out of memory");
	BIO_free(bio);
	X509_REQ_free(req);
	*keyp = key;
	return pem;
}

static X509 *
pem_cert(const struct join_field *f)
{
	BIO	*bio;
	X509	*x;

	if (f == NULL || (bio = BIO_new_mem_buf(f->val, (int)f->len)) == NULL)
		return NULL;
	x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	BIO_free(bio);
	return x;
}

static void
handshake_failed(const struct client *cl)
{
	unsigned long	e = ERR_peek_last_error();
	int		r = ERR_GET_REASON(e);

	/* OpenSSL answers a binder that does not verify with illegal_parameter,
	 * others with decrypt_error. */
	if (r == SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER ||
	    r == SSL_R_TLSV1_ALERT_DECRYPT_ERROR)
		die("the join server refused the secret: invitation %s exists, "
		    "but not with this secret (was the line copied whole?)",
		    cl->line.id);
	if (r == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE)
		die("the join server knows no invitation %s (never made there, "
		    "or removed): ask for a new line (vnet-ca invite)", cl->line.id);
	die("TLS with the join server at %s:%s failed: %s (is it vnet-join "
	    "serve?)", cl->line.host, cl->line.port,
	    e != 0 ? ERR_reason_error_string(e) : "connection closed");
}

static void
put_file(const char *dir, const char *name, const void *p, size_t len,
    mode_t mode)
{
	char	path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		die("%s/%s: path too long", dir, name);
	if (write_file(path, p, len, mode) == -1)
		die("%s: %s", path, strerror(errno));
}

static int
client_main(int argc, char **argv)
{
	struct client	 cl;
	const char	*stmts[JOIN_STMTS], *vnetd = "vnetd", *why;
	char		 err[160], dirbuf[PATH_MAX], dir[PATH_MAX], conf[PATH_MAX],
			 node[32], proxy[32], link[300], network[32], host[256], status[8],
			 reason[512], *csr, *text, **vargv;
	const struct join_field *fcert, *fca, *fcrl;
	struct join_msg	 m;
	EVP_PKEY	*key;
	X509		*cert, *ca;
	SSL_CTX		*ctx;
	SSL		*ssl;
	uint8_t		 req[JOIN_REQ_MAX], *ans;
	size_t		 reqlen, anslen, len, i;
	int		 ch, fd, start = 0, nstmt = 0, n;
	FILE		*fp;
	BIO		*bio;
	BUF_MEM		*bm;

	while ((ch = getopt(argc, argv, "+a:xp:h")) != -1) {
		switch (ch) {
		case 'a':
			if (nstmt == JOIN_STMTS)
				die("at most %d -a statements", JOIN_STMTS);
			if (strchr(optarg, '\n') != NULL)
				die("-a takes one statement, not several lines");
			stmts[nstmt++] = optarg;
			break;
		case 'x': start = 1; break;
		case 'p': vnetd = optarg; break;
		case 'h': usage(stdout); break;
		default: usage(stderr);
		}
	}
	if (argc - optind < 1)
		usage(stderr);
	if (join_line_parse(argv[optind], &cl.line, err, sizeof(err)) == -1)
		die("%s", err);
	if (argc - optind >= 2)
		snprintf(dirbuf, sizeof(dirbuf), "%s", argv[optind + 1]);
	else {
		snprintf(dirbuf, sizeof(dirbuf), "%s", VNETD_CONF);
		if (strrchr(dirbuf, '/') != NULL)
			*strrchr(dirbuf, '/') = '\0';
	}
	if (mkdir(dirbuf, 0755) == -1 && errno != EEXIST)
		die("%s: %s", dirbuf, strerror(errno));
	if (realpath(dirbuf, dir) == NULL)
		die("%s: %s", dirbuf, strerror(errno));
	if (snprintf(conf, sizeof(conf), "%s/vnetd.conf", dir) >= (int)sizeof(conf))
		die("%s: path too long", dir);
	/* Before the secret is spent: a configuration is never overwritten. */
	if (access(conf, F_OK) == 0)
		die("%s exists: not overwriting it (remove it, or give another "
		    "directory)", conf);
	join_psk(cl.line.secret, cl.psk);

	csr = make_csr(&key);
	reqlen = join_msg_put(req, sizeof(req), 0, "v", "1", 1);
	reqlen = join_msg_put(req, sizeof(req), reqlen, "csr", csr, strlen(csr));
	free(csr);
	if (reqlen == 0)
		die("the certificate request does not fit");

	signal(SIGPIPE, SIG_IGN);
	fd = dial(&cl.line);
	if ((ctx = ctx_new(0)) == NULL || (ssl = SSL_new(ctx)) == NULL)
		die("TLS: cannot make a context");
	SSL_set_psk_use_session_callback(ssl, client_use_psk);
	SSL_set_app_data(ssl, &cl);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) != 1)
		handshake_failed(&cl);
	/* The secret, and nothing else, authenticated the server. */
	if (!SSL_session_reused(ssl))
		die("the join server did not use the invitation's secret");
	if (msg_send(ssl, req, reqlen) == -1)
		die("the request could not be sent");
	if ((ans = msg_recv(ssl, JOIN_MSG_MAX, &anslen, &why)) == NULL)
		die("no answer from the join server: %s", why);
	if (join_msg_parse(ans, anslen, &m, err, sizeof(err)) == -1)
		die("the join server's answer: %s", err);
	if (join_msg_str(&m, "status", status, sizeof(status)) == -1)
		die("the join server's answer has no status");
	if (strcmp(status, "ok") != 0) {
		if (join_msg_str(&m, "reason", reason, sizeof(reason)) == -1)
			snprintf(reason, sizeof(reason), "(no reason given)");
		die("refused by the join server: %s", reason);
	}
	if (join_msg_str(&m, "node", node, sizeof(node)) == -1 ||
	    !stmt_valid_name(node) ||
	    join_msg_str(&m, "proxy", proxy, sizeof(proxy)) == -1 ||
	    !stmt_valid_name(proxy) ||
	    join_msg_str(&m, "link", link, sizeof(link)) == -1 ||
	    strpbrk(link, " \t#") != NULL ||
	    strlen(link) >= sizeof(host))
		die("the join server's answer: invalid node, proxy or link");
	network[0] = '\0';
	if (join_msg_get(&m, "network") != NULL &&
	    (join_msg_str(&m, "network", network, sizeof(network)) == -1 ||
	    !stmt_valid_name(network)))
		die("the join server's answer: invalid network");
	fcert = join_msg_get(&m, "cert");
	fca = join_msg_get(&m, "ca");
	fcrl = join_msg_get(&m, "crl");
	if ((cert = pem_cert(fcert)) == NULL || (ca = pem_cert(fca)) == NULL)
		die("the join server's answer: no certificate or CA certificate");
	if (X509_check_private_key(cert, key) != 1)
		die("the certificate the join server sent is not for this key");
	X509_free(cert);
	X509_free(ca);

	/* The files, then the configuration that names them. */
	if ((bio = BIO_new(BIO_s_mem())) == NULL ||
	    !PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL))
		die("cannot write the key");
	BIO_get_mem_ptr(bio, &bm);
	snprintf(err, sizeof(err), "%s.key", node);
	put_file(dir, err, bm->data, bm->length, 0600);
	BIO_free(bio);
	snprintf(err, sizeof(err), "%s.crt", node);
	put_file(dir, err, fcert->val, fcert->len, 0644);
	put_file(dir, "ca.crt", fca->val, fca->len, 0644);
	if (fcrl != NULL)
		put_file(dir, "crl.pem", fcrl->val, fcrl->len, 0644);
	if ((fp = open_memstream(&text, &len)) == NULL)
		die("out of memory");
	fprintf(fp, "# Written by vnet-join (invitation %s).\n"
	    "node %s\n", cl.line.id, node);
	if (network[0] != '\0')
		fprintf(fp, "network %s\n", network);
	fprintf(fp, "link %s %s tls\nrouting auto\n"
	    "tls-cert %s/%s.crt\ntls-key %s/%s.key\ntls-ca %s/ca.crt\n",
	    proxy, link, dir, node, dir, node, dir);
	if (fcrl != NULL)
		fprintf(fp, "tls-crl %s/crl.pem\n", dir);
	for (n = 0; n < nstmt; n++)
		fprintf(fp, "%s\n", stmts[n]);
	fclose(fp);
	put_file(dir, "vnetd.conf", text, len, 0644);
	free(text);
	free(ans);
	SSL_shutdown(ssl);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
	EVP_PKEY_free(key);
	printf("vnet-join: joined as node %s: %s/vnetd.conf links to %s at %s "
	    "(%s.key, %s.crt, ca.crt%s in %s)\n", node, dir, proxy, link, node,
	    node, fcrl != NULL ? ", crl.pem" : "", dir);
	fflush(stdout);
	if (!start)
		return 0;
	n = argc - optind - 2;
	if (n < 0)
		n = 0;
	if ((vargv = calloc((size_t)n + 4, sizeof(*vargv))) == NULL)
		die("out of memory");
	vargv[0] = (char *)vnetd;
	vargv[1] = "-f";
	vargv[2] = conf;
	for (i = 0; i < (size_t)n; i++)
		vargv[3 + i] = argv[optind + 2 + i];
	execvp(vnetd, vargv);
	die("%s: %s", vnetd, strerror(errno));
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return serve_main(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "-V") == 0 ||
	    strcmp(argv[1], "--version") == 0)) {
		printf("vnet-join %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0))
		usage(stdout);
	return client_main(argc, argv);
}
