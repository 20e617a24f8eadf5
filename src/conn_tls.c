/*
 * A connection's TLS transport (conn.h): TLS takes the socket from the
 * bufferevent once TCP is up, and reads and writes records on it itself.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "conn.h"
#include "log.h"
#include "tls.h"
#include "wire.h"

struct conn_tls {
	SSL		*ssl;
	int		 up;		/* handshake done */
	int		 rd_wants_wr;	/* a read waits to write */
	int		 wr_wants_rd;	/* a write waits to read */
	struct event	*ev_write;	/* the socket's, when it must */
	uint8_t		*tx;		/* CONN_TX_SIZE, or NULL */
	char		 refused_cn[TLS_CN_MAX];	/* for the message */
	size_t		 tx_off, tx_end;	/* unwritten: [off, end) */
};

static void	conn_tls_readcb(evutil_socket_t, short, void *);
static void	conn_tls_writecb(evutil_socket_t, short, void *);

static struct conn_tls *
conn_tls_of(const struct conn *c)
{
	return c->io_state;
}

/*
 * Appends a message to the tx buffer.  Returns -1 if it does not fit (or no
 * memory): never the case for what a link's drain adds.
 */
static int
conn_tls_add(struct conn *c, const void *p, size_t n)
{
	struct conn_tls	*t = conn_tls_of(c);

	if (t->tx == NULL) {
		if ((t->tx = malloc(CONN_TX_SIZE)) == NULL)
			return -1;
		t->tx_off = t->tx_end = 0;
	}
	if (t->tx_off == t->tx_end)
		t->tx_off = t->tx_end = 0;
	if (CONN_TX_SIZE - t->tx_end < n) {
		/* A record OpenSSL waits to send may move (tls.c). */
		memmove(t->tx, t->tx + t->tx_off, t->tx_end - t->tx_off);
		t->tx_end -= t->tx_off;
		t->tx_off = 0;
		if (CONN_TX_SIZE - t->tx_end < n)
			return -1;
	}
	memcpy(t->tx + t->tx_end, p, n);
	t->tx_end += n;
	return 0;
}

static size_t
conn_tls_out_len(const struct conn *c)
{
	const struct conn_tls *t = conn_tls_of(c);

	return t == NULL ? 0 : t->tx_end - t->tx_off;
}

static void
conn_tls_reserve(struct conn *c, size_t n)
{
}

/*
 * A TLS connection failed: say why, and count it as a refusal when it was
 * this side that refused the peer's certificate.  first: the first OpenSSL
 * error, 0 for none (sockerr then says what the system call met).
 */
static void
conn_tls_error(struct conn *c, int sockerr, unsigned long first, char *why,
    size_t len)
{
	struct conn_tls	*t = conn_tls_of(c);

	if (first == 0 && SSL_get_verify_result(t->ssl) == X509_V_OK) {
		/* Not TLS's doing: the connection itself failed. */
		snprintf(why, len, "%s", sockerr != 0 ?
		    evutil_socket_error_to_string(sockerr) :
		    "connection failed");
		return;
	}
	if (tls_failure(t->ssl, first, why, len)) {
		c->cs->stats.tls_refused++;
		conn_refused(c, NULL, why);
		log_warnx("%s: refused: %s", c->peer, why);
	} else if (c->state != CONN_UP) {
		c->cs->stats.tls_failed++;
		/* A listener lists it too: a plain dialler is fixed over there. */
		if (!c->outgoing)
			conn_refused(c, NULL, why);
		log_warnx("%s: TLS handshake failed: %s", c->peer, why);
	}
}

/*
 * What a TLS call that did not succeed means for c: waiting is 0, the end
 * is -1 with the reason in c->fail (the caller closes c, or has it closed).
 */
static int
conn_tls_wait(struct conn *c, enum tls_io r, unsigned long err, int writing)
{
	struct conn_tls	*t = conn_tls_of(c);
	int		 sockerr = errno;

	switch (r) {
	case TLS_IO_OK:
		return 0;
	case TLS_IO_WANT_READ:
		if (writing)
			t->wr_wants_rd = 1;	/* ev_read is always on */
		return 0;
	case TLS_IO_WANT_WRITE:
		if (!writing)
			t->rd_wants_wr = 1;
		event_add(t->ev_write, NULL);
		return 0;
	case TLS_IO_CLOSED:
		c->fail = conn_closed_why(c);
		return -1;
	case TLS_IO_ERROR:
		break;
	}
	conn_tls_error(c, sockerr, err, c->fail_buf, sizeof(c->fail_buf));
	c->fail = c->fail_buf;
	return -1;
}

/*
 * Writes the tx buffer as records, as far as the socket takes them; the
 * write event finishes the job.  Returns -1 with c->fail set if c must
 * close (the caller closes it, or has it closed).
 */
static int
conn_tls_flush(struct conn *c)
{
	struct conn_tls	*t = conn_tls_of(c);
	unsigned long	 err;
	enum tls_io	 r;
	size_t		 n;

	t->wr_wants_rd = 0;
	while (t->tx_off < t->tx_end) {
		r = tls_write(t->ssl, t->tx + t->tx_off, t->tx_end - t->tx_off,
		    &n, &err);
		if (r != TLS_IO_OK)
			return conn_tls_wait(c, r, err, 1);
		t->tx_off += n;
	}
	t->tx_off = t->tx_end = 0;
	return 0;
}

/* Only once the handshake is done: before, there is nothing of ours. */
static int
conn_tls_flush_up(struct conn *c)
{
	struct conn_tls	*t = conn_tls_of(c);

	if (t == NULL || !t->up)
		return 0;
	return conn_tls_flush(c);
}

/* One step of the TLS handshake (which may close c). */
static void
conn_tls_handshake(struct conn *c)
{
	struct conn_tls	*t = conn_tls_of(c);
	unsigned long	 err;
	enum tls_io	 r;

	if ((r = tls_handshake(t->ssl, &err)) != TLS_IO_OK) {
		if (conn_tls_wait(c, r, err, 0) == -1)
			conn_close(c, c->fail, 0);
		return;
	}
	t->up = 1;
	t->rd_wants_wr = 0;
	event_del(t->ev_write);
	/* Records read ahead with the handshake's last are read on the next turn. */
	event_active(c->ev_read, EV_READ, 0);
	if (c->state == CONN_TLS)
		log_debug("%s: TLS handshake done", c->peer);
	conn_connected(c);
}

/*
 * TCP is up (or accepted): TLS takes the socket from the bufferevent, and
 * the handshake starts from the loop.
 */
static int
conn_tls_start(struct conn *c)
{
	struct conn_tls		*t;
	struct ssl_ctx_st	*ctx;
	evutil_socket_t		 fd;

	if ((fd = bufferevent_getfd(c->bev)) < 0 ||
	    (ctx = c->cs->cbs->tls(c->cs->arg)) == NULL)
		return -1;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -1;
	c->io_state = t;
	if ((t->ssl = tls_conn_new(ctx, fd, c->outgoing)) == NULL)
		return -1;
	tls_conn_refused_cn(t->ssl, t->refused_cn);
	if ((t->ev_write = event_new(c->cs->base, fd, EV_WRITE,
	    conn_tls_writecb, c)) == NULL ||
	    conn_read_start(c, NULL) == -1)
		return -1;
	event_active(t->ev_write, EV_WRITE, 0);
	return 0;
}

/*
 * What a TLS connection's socket events do first: close it if it must, or
 * run the handshake.  Returns 1 if that was all (c may be gone).
 */
static int
conn_tls_event_done(struct conn *c)
{
	if (c->fail != NULL) {
		conn_close(c, c->fail, 0);
		return 1;
	}
	if (!conn_tls_of(c)->up) {
		conn_tls_handshake(c);
		return 1;
	}
	return 0;
}

/*
 * Writes what waits in the tx buffer and refills it from the link's queue
 * once there is room.  Returns -1 if c was closed.
 */
static int
conn_tls_write_more(struct conn *c)
{
	if (conn_tls_flush(c) == -1) {
		conn_close(c, c->fail, 0);
		return -1;
	}
	if (conn_tls_out_len(c) <= CONN_OUT_LOW)
		conn_writable(c);
	return 0;
}

/* A TLS connection's socket is readable (or silent too long). */
static void
conn_tls_readcb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;
	struct conn_tls	*t = conn_tls_of(c);
	unsigned long	 err;
	enum tls_io	 r;
	size_t		 room, n;
	int		 i;

	if (what & EV_TIMEOUT) {
		c->dead = c->state == CONN_UP;
		conn_close(c, c->state == CONN_UP ? "peer silent" :
		    "handshake timeout", 0);
		return;
	}
	if (conn_tls_event_done(c) ||
	    (t->wr_wants_rd && conn_tls_write_more(c) == -1))
		return;
	for (i = 0; i < CONN_TLS_READS; i++) {
		if ((room = conn_rx_room(c)) == 0) {
			conn_close(c, "out of memory", 0);
			return;
		}
		r = tls_read(t->ssl, c->rx + c->rx_end, room, &n, &err);
		if (r != TLS_IO_OK) {
			if (conn_tls_wait(c, r, err, 0) == -1)
				conn_close(c, c->fail, 0);
			return;
		}
		c->rx_end += n;
		if (conn_input(c) == -1)
			return;
	}
	/* Records read ahead and not decrypted: after the other events. */
	if (SSL_has_pending(t->ssl))
		event_active(c->ev_read, EV_READ, 0);
}

/* A TLS connection's socket is writable, or its handshake is to start. */
static void
conn_tls_writecb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;
	struct conn_tls	*t = conn_tls_of(c);

	if (c->state == CONN_CLOSING) {
		if (conn_tls_flush(c) == -1 || t->tx_off == t->tx_end)
			conn_free(c);
		return;
	}
	if (conn_tls_event_done(c))
		return;
	if (t->rd_wants_wr) {
		t->rd_wants_wr = 0;
		event_active(c->ev_read, EV_READ, 0);
	}
	(void)conn_tls_write_more(c);
}

/*
 * The direct way: the frame goes into the empty tx buffer (the one copy
 * encryption needs contiguous) and out as records.
 */
static int
conn_tls_direct(struct conn *c, const uint8_t *pre, size_t prelen,
    const uint8_t *eth, size_t len)
{
	struct conn_tls	*t = conn_tls_of(c);

	if (t->tx_off != t->tx_end || t->wr_wants_rd)
		return -1;
	if (conn_tls_add(c, pre, prelen) == -1)
		return -1;
	if (conn_tls_add(c, eth, len) == -1) {
		t->tx_off = t->tx_end = 0;
		return -1;
	}
	if (conn_tls_flush(c) == -1)
		conn_fail_later(c, c->fail);
	return 0;
}

static void
conn_tls_established(struct conn *c)
{
}

/* The write event frees it once out, the deadline if not. */
static int
conn_tls_bye(struct conn *c, const void *p, size_t n)
{
	struct conn_tls	*t = conn_tls_of(c);
	struct timeval	 tv = { 1, 0 };

	if (conn_tls_add(c, p, n) == -1 || conn_tls_flush(c) == -1 ||
	    t->tx_off == t->tx_end)
		return -1;
	evtimer_add(c->ev_deadline, &tv);
	return 0;
}

static void
conn_tls_wake(struct conn *c)
{
	if (c->ev_read != NULL)
		event_active(c->ev_read, EV_READ, 0);
	else
		bufferevent_trigger_event(c->bev, BEV_EVENT_ERROR,
		    BEV_TRIG_DEFER_CALLBACKS);
}

static int
conn_tls_check_peer(struct conn *c, const char *node, char *why, size_t len)
{
	return tls_check_peer(conn_tls_of(c)->ssl, node, why, len);
}

static int
conn_tls_describe(const struct conn *c, char *buf, size_t len)
{
	tls_describe(conn_tls_of(c)->ssl, buf, len);
	return 0;
}

static void
conn_tls_free(struct conn *c)
{
	struct conn_tls	*t = conn_tls_of(c);

	if (t == NULL)
		return;
	if (t->ev_write != NULL)
		event_free(t->ev_write);
	if (t->ssl != NULL)
		SSL_free(t->ssl);	/* the socket is the bufferevent's */
	free(t->tx);
	free(t);
	c->io_state = NULL;
}

static int
conn_tls_exporter(struct conn *c, const char *label, const uint8_t *ctx,
    size_t ctxlen, uint8_t *out, size_t outlen)
{
	struct conn_tls	*t = conn_tls_of(c);

	if (t == NULL || !t->up || SSL_export_keying_material(t->ssl, out,
	    outlen, label, strlen(label), ctx, ctxlen, 1) != 1)
		return -1;
	return 0;
}

/* The datagrams use the AEAD the session negotiated (dgram.h's numbers). */
static int
conn_tls_aead(const struct conn *c)
{
	struct conn_tls		*t = conn_tls_of(c);
	const SSL_CIPHER	*ci;
	const char		*name;

	if (t == NULL || (ci = SSL_get_current_cipher(t->ssl)) == NULL ||
	    (name = SSL_CIPHER_get_name(ci)) == NULL)
		return -1;
	if (strstr(name, "CHACHA20") != NULL)
		return 3;
	if (strstr(name, "AES_128_GCM") != NULL)
		return 1;
	if (strstr(name, "AES_256_GCM") != NULL)
		return 2;
	return -1;
}

const struct conn_io conn_tls_io = {
	.name = "TLS",
	.autoflush = 0,
	.node_out_max = CONN_TX_SIZE,
	.start = conn_tls_start,
	.readcb = conn_tls_readcb,
	.add = conn_tls_add,
	.reserve = conn_tls_reserve,
	.flush = conn_tls_flush_up,
	.out_len = conn_tls_out_len,
	.direct = conn_tls_direct,
	.established = conn_tls_established,
	.bye = conn_tls_bye,
	.wake = conn_tls_wake,
	.check_peer = conn_tls_check_peer,
	.exporter = conn_tls_exporter,
	.aead = conn_tls_aead,
	.describe = conn_tls_describe,
	.free = conn_tls_free,
};

/*
 * An established TLS connection checked under a new context: 0 if it may
 * stay (or is not TLS, or not through its handshake), else -1 with why.
 */
int
conn_tls_recheck(struct conn *c, struct ssl_ctx_st *ctx, char *why,
    size_t len)
{
	struct conn_tls	*t;

	if (c->io != &conn_tls_io || (t = conn_tls_of(c)) == NULL || !t->up)
		return 0;
	return tls_recheck_peer(ctx, t->ssl, why, len);
}

struct x509_st *
conn_tls_peer_cert(const struct conn *c)
{
	struct conn_tls	*t;

	if (c->io != &conn_tls_io || (t = conn_tls_of(c)) == NULL || !t->up)
		return NULL;
	return tls_peer_cert(t->ssl);
}
