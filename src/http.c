/* The read-only status server: JSON API and Prometheus metrics. */
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "acl.h"
#include "daemon.h"
#include "history.h"
#include "http.h"
#include "iface.h"
#include "link.h"
#include "log.h"
#include "out.h"
#include "showwin.h"
#include "sw.h"

/*
 * Every connection, held (a reference on its bufferevent) until its
 * deadline: evhttp times out idle connections only, and one that sends a
 * byte a second is never idle.  At the deadline evhttp's connection is
 * freed (or, before a request named it, its socket shut), and the
 * reference keeps the socket from being closed, and its number reused,
 * before then.
 *
 * A connection is admitted before evhttp reads a byte of it: the admit
 * event, made active as the connection is accepted, runs before the loop
 * next polls, and shuts a connection from an address not on the allow
 * list, from one that already holds HTTP_CONNS_PER_ADDR, or past
 * HTTP_CONNS_MAX admitted ones, without an answer.  Only the admitted
 * count towards either limit, so a refused client cannot take the allowed
 * ones' places, and nothing is sent to an address the list does not name.
 */
struct http_stream;

struct http_conn {
	TAILQ_ENTRY(http_conn)	 entry;
	struct http		*h;
	struct bufferevent	*bev;
	struct evhttp_connection *evcon;	/* once a request named it */
	struct http_stream	*stream;	/* the answer being made */
	struct event		*deadline;
	struct event		*admit;
	int			 admitted;
	struct sockaddr_storage	 addr;
};

/*
 * An API answer: its page of rows (at most HTTP_PAGE_MAX bytes of them)
 * rendered HTTP_CHUNK at a time, the next chunk made when evhttp says the
 * last one has gone to the kernel.
 */
struct http_stream {
	struct http_conn	*c;
	struct evhttp_request	*req;
	struct evbuffer		*page;		/* rows not yet rendered */
	struct evbuffer		*chunk;
	struct out		*o;
};

struct http {
	struct vnetd			*d;
	TAILQ_HEAD(, http_conn)		 conns;
	size_t				 nconns;	/* accepted */
	size_t				 nadmitted;
	uint64_t			 shed;		/* over HTTP_CONNS_MAX */
	struct evhttp			*http;
	struct evhttp_bound_socket	*bound;
	struct stmt			 conf;
	uint64_t			 refused;	/* not on the list */
	uint64_t			 slots;		/* over HTTP_CONNS_PER_ADDR */
	uint64_t			 busy;		/* over HTTP_QUEUED_MAX */
	uint64_t			 started_ms;
};

static size_t	http_held(const struct http *);

/* The show verbs the API has, by path. */
static const char *const http_verbs[] = {
	"links", "routes", "interfaces", "macs", "stats", "flows", "vcc",
	"nodes", "topology", "traffic",
};

static int
http_name_ok(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0 || len > STMT_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return s[0] != '.' && s[0] != '_' && s[0] != '-';
}

static int
http_seg_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(s, word, len) == 0;
}

/* A decimal of at most 9 digits, within max. */
static int
http_query_num(const char *v, size_t n, size_t max, size_t *out)
{
	size_t	 i, x = 0;

	if (n == 0 || n > 9)
		return -1;
	for (i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (size_t)(v[i] - '0');
	}
	if (x > max)
		return -1;
	*out = x;
	return 0;
}

/*
 * KEY=VALUE pairs joined by '&': limit (dflt without) and offset,
 * threshold where thr is given (threshold=0..1, its digits copied for the
 * command language to judge), and top where it is given (1..STMT_TOP_MAX,
 * STMT_TOP_DEFAULT without).  Each at most once; nothing is
 * percent-decoded.
 */
static int
http_query(const char *q, size_t len, struct http_target *t, size_t dflt,
    char *thr, size_t thrlen, size_t *top, char *err, size_t errlen)
{
	const char	*p, *amp, *eq;
	size_t		 n, klen, vlen, i, seen = 0;
	int		 dot;

	t->limit = dflt;
	t->offset = 0;
	if (thr != NULL)
		thr[0] = '\0';
	if (top != NULL)
		*top = STMT_TOP_DEFAULT;
	for (p = q; len > 0; p += n + 1, len -= n + 1) {
		amp = memchr(p, '&', len);
		n = amp != NULL ? (size_t)(amp - p) : len;
		if ((eq = memchr(p, '=', n)) == NULL) {
			snprintf(err, errlen, "bad query");
			return -1;
		}
		klen = (size_t)(eq - p);
		vlen = n - klen - 1;
		if (klen == 5 && memcmp(p, "limit", 5) == 0 && !(seen & 1)) {
			seen |= 1;
			if (http_query_num(eq + 1, vlen, HTTP_LIMIT_MAX,
			    &t->limit) == -1 || t->limit == 0) {
				snprintf(err, errlen, "bad limit (1..%d)",
				    HTTP_LIMIT_MAX);
				return -1;
			}
		} else if (klen == 6 && memcmp(p, "offset", 6) == 0 &&
		    !(seen & 2)) {
			seen |= 2;
			if (http_query_num(eq + 1, vlen, HTTP_OFFSET_MAX,
			    &t->offset) == -1) {
				snprintf(err, errlen, "bad offset");
				return -1;
			}
		} else if (thr != NULL && klen == 9 &&
		    memcmp(p, "threshold", 9) == 0 && !(seen & 4)) {
			seen |= 4;
			if (vlen == 0 || vlen >= thrlen || vlen > 8) {
				snprintf(err, errlen, "bad threshold");
				return -1;
			}
			for (i = 0, dot = 0; i < vlen; i++) {
				if (eq[1 + i] == '.' && !dot && i > 0) {
					dot = 1;
					continue;
				}
				if (eq[1 + i] < '0' || eq[1 + i] > '9') {
					snprintf(err, errlen, "bad threshold");
					return -1;
				}
			}
			memcpy(thr, eq + 1, vlen);
			thr[vlen] = '\0';
		} else if (top != NULL && klen == 3 &&
		    memcmp(p, "top", 3) == 0 && !(seen & 8)) {
			seen |= 8;
			if (http_query_num(eq + 1, vlen, STMT_TOP_MAX,
			    top) == -1 || *top == 0) {
				snprintf(err, errlen, "bad top (1..%d)",
				    STMT_TOP_MAX);
				return -1;
			}
		} else {
			snprintf(err, errlen, "unknown or repeated query");
			return -1;
		}
		if (amp == NULL)
			break;
		if (n + 1 == len) {
			snprintf(err, errlen, "bad query");
			return -1;
		}
	}
	return 0;
}

int
http_parse_target(const char *uri, size_t len, struct http_target *t,
    char *err, size_t errlen)
{
	const char	*q = NULL, *seg[5];
	size_t		 qlen = 0, pathlen, seglen[5], nseg = 0, i, start, top;
	char		 thr[16];
	const char	*path = uri;
	struct stmt	 st;
	struct stmt_error perr;

	memset(t, 0, sizeof(*t));
	if (len == 0 || len > HTTP_PATH_MAX || uri[0] != '/') {
		snprintf(err, errlen, "bad path");
		return -1;
	}
	if ((q = memchr(uri, '?', len)) != NULL) {
		pathlen = (size_t)(q - uri);
		q++;
		qlen = len - pathlen - 1;
	} else
		pathlen = len;
	if (memchr(uri, '\0', len) != NULL) {
		snprintf(err, errlen, "bad path");
		return -1;
	}
	/* Segments between slashes; an empty one (a trailing '/') ends it. */
	for (i = 1, start = 1; i <= pathlen; i++) {
		if (i < pathlen && path[i] != '/')
			continue;
		if (i > start) {
			if (nseg == 5) {
				snprintf(err, errlen, "no such path");
				return -1;
			}
			seg[nseg] = path + start;
			seglen[nseg++] = i - start;
		}
		start = i + 1;
	}
	if (nseg == 0) {
		if (qlen != 0)
			goto noquery;
		t->kind = HTTP_PAGE;
		return 0;
	}
	if (nseg == 2 && http_seg_is(seg[0], seglen[0], "api") &&
	    http_seg_is(seg[1], seglen[1], "v1")) {
		if (qlen != 0)
			goto noquery;
		t->kind = HTTP_INDEX;
		return 0;
	}
	if (nseg == 1 && http_seg_is(seg[0], seglen[0], "metrics")) {
		if (qlen != 0)
			goto noquery;
		t->kind = HTTP_METRICS;
		return 0;
	}
	if (nseg < 3 || !http_seg_is(seg[0], seglen[0], "api") ||
	    !http_seg_is(seg[1], seglen[1], "v1"))
		goto notfound;
	t->kind = HTTP_API;
	if (nseg == 4 && http_seg_is(seg[2], seglen[2], "traffic") &&
	    http_seg_is(seg[3], seglen[3], "topology")) {
		if (http_query(q, qlen, t, HTTP_LIMIT_DEFAULT, thr,
		    sizeof(thr), NULL, err, errlen) == -1)
			return -1;
		snprintf(t->line, sizeof(t->line), "show traffic topology%s%s",
		    thr[0] != '\0' ? " " : "", thr);
		/* The command language says which thresholds are valid. */
		if (stmt_parse(t->line, &st, &perr) != 1) {
			snprintf(err, errlen, "bad threshold: %s", perr.msg);
			return -1;
		}
		return 0;
	}
	/* The whole matrix unless asked: (STMT_TOP_MAX + 1)^2 rows at most. */
	if (nseg == 4 && http_seg_is(seg[2], seglen[2], "traffic") &&
	    http_seg_is(seg[3], seglen[3], "matrix")) {
		if (http_query(q, qlen, t, HTTP_LIMIT_MATRIX, NULL, 0, &top,
		    err, errlen) == -1)
			return -1;
		snprintf(t->line, sizeof(t->line), "show traffic matrix %zu",
		    top);
		return 0;
	}
	if (nseg == 5 && qlen != 0)
		goto noquery;
	if (nseg == 5 && http_seg_is(seg[2], seglen[2], "history") &&
	    (http_seg_is(seg[3], seglen[3], "links") ||
	    http_seg_is(seg[3], seglen[3], "interfaces")) &&
	    http_name_ok(seg[4], seglen[4])) {
		t->kind = HTTP_HISTORY;
		t->link = seg[3][0] == 'l';
		memcpy(t->name, seg[4], seglen[4]);
		t->name[seglen[4]] = '\0';
		return 0;
	}
	if (nseg == 5)
		goto notfound;
	if (nseg == 4 && http_seg_is(seg[2], seglen[2], "traffic") &&
	    http_seg_is(seg[3], seglen[3], "nodes")) {
		snprintf(t->line, sizeof(t->line), "show traffic nodes");
		return http_query(q, qlen, t, HTTP_LIMIT_DEFAULT, NULL, 0,
		    NULL, err, errlen);
	}
	if (nseg == 4 && http_seg_is(seg[2], seglen[2], "links")) {
		if (!http_name_ok(seg[3], seglen[3]))
			goto notfound;
		snprintf(t->line, sizeof(t->line), "show link %.*s",
		    (int)seglen[3], seg[3]);
		return http_query(q, qlen, t, HTTP_LIMIT_DEFAULT, NULL, 0,
		    NULL, err, errlen);
	}
	if (nseg != 3)
		goto notfound;
	if (http_seg_is(seg[2], seglen[2], "info")) {
		if (qlen != 0)
			goto noquery;
		t->kind = HTTP_INFO;
		return 0;
	}
	/* Every counter: a program wants them all. */
	if (http_seg_is(seg[2], seglen[2], "links")) {
		snprintf(t->line, sizeof(t->line), "show links all");
		return http_query(q, qlen, t, HTTP_LIMIT_DEFAULT, NULL, 0,
		    NULL, err, errlen);
	}
	for (i = 0; i < sizeof(http_verbs) / sizeof(http_verbs[0]); i++)
		if (http_seg_is(seg[2], seglen[2], http_verbs[i])) {
			snprintf(t->line, sizeof(t->line), "show %s",
			    http_verbs[i]);
			return http_query(q, qlen, t, HTTP_LIMIT_DEFAULT,
			    NULL, 0, NULL, err, errlen);
		}
 notfound:
	snprintf(err, errlen, "no such path");
	return -1;
 noquery:
	snprintf(err, errlen, "this path takes no query");
	return -1;
}

/* Answers */

static void
http_evbuffer_sink(const char *s, size_t len, void *arg)
{
	evbuffer_add(arg, s, len);
}

/* Renders a show reply (lines, see ctl.h) as JSON into body. */
static int
http_render(struct evbuffer *reply, struct evbuffer *body)
{
	struct out	*o;
	char		*line;
	size_t		 n;
	int		 r = 0;

	if ((o = out_new(OUT_JSON, http_evbuffer_sink, body)) == NULL)
		return -1;
	while ((line = evbuffer_readln(reply, &n, EVBUFFER_EOL_LF)) != NULL) {
		if (line[0] != '%' || strncmp(line, "%columns ", 9) == 0)
			r = out_line(o, line);
		free(line);
		if (r == -1)
			break;
	}
	if (r == 0)
		r = out_end(o);
	out_free(o);
	return r;
}

/*
 * Runs a show statement, as the control socket would, into reply, but
 * making only the page asked for: its rows are formatted, the others only
 * counted (showwin.h), so that a request's time in the loop that forwards
 * frames is that of its page, whatever the size of the table.
 */
static int
http_show(struct vnetd *d, const struct http_target *t,
    struct evbuffer *reply, char *err, size_t errlen)
{
	struct stmt		 st;
	struct stmt_error	 perr;
	struct showwin		 w;

	if (stmt_parse(t->line, &st, &perr) != 1) {
		snprintf(err, errlen, "%s", perr.msg);
		return -1;
	}
	/* The server can only look. */
	if (st.kind != STMT_SHOW) {
		snprintf(err, errlen, "not a show");
		return -1;
	}
	if (st.show == STMT_SHOW_LINK)
		return vnetd_show_link(d, st.name, reply, err, errlen);
	showwin_init(&w, t->offset, t->limit);
	st.win = &w;
	vnetd_show(d, &st, reply);
	showwin_end(&w, reply);
	return 0;
}

/* One row, as a show table would give it, so that it renders the same. */
static void
http_info(struct http *h, struct evbuffer *body)
{
	struct evbuffer	*reply = evbuffer_new();

	if (reply == NULL)
		return;
	evbuffer_add_printf(reply, "%%columns node\tnetwork\tversion\t"
	    "uptime_s\thttp_refused\thttp_shed\thttp_slots\thttp_busy\t"
	    "http_conns\thttp_held_bytes\n"
	    "%s\t%s\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%zu\t%zu\n",
	    h->d->node, h->d->network, PACKAGE_VERSION,
	    (unsigned long long)((vnetd_now_ms() - h->started_ms) / 1000),
	    (unsigned long long)h->refused, (unsigned long long)h->shed,
	    (unsigned long long)h->slots, (unsigned long long)h->busy,
	    h->nadmitted, http_held(h));
	http_render(reply, body);
	evbuffer_free(reply);
}

static void
http_index(struct evbuffer *b)
{
	size_t	 i;

	evbuffer_add_printf(b, "vnetd status server\n\n/\n/metrics\n"
	    "/api/v1/info\n");
	for (i = 0; i < sizeof(http_verbs) / sizeof(http_verbs[0]); i++)
		evbuffer_add_printf(b, "/api/v1/%s\n", http_verbs[i]);
	evbuffer_add_printf(b, "/api/v1/links/NAME\n/api/v1/traffic/nodes\n"
	    "/api/v1/traffic/topology[?threshold=0..1]\n"
	    "/api/v1/traffic/matrix[?top=1..%d]\n"
	    "(an API path takes ?limit=1..%d&offset=N, %d rows without; "
	    "X-Total-Count says how many there are)\n", STMT_TOP_MAX,
	    HTTP_LIMIT_MAX, HTTP_LIMIT_DEFAULT);
	evbuffer_add_printf(b,
	    "/api/v1/history/links/NAME\n/api/v1/history/interfaces/NAME\n");
}

static void
http_error(struct evhttp_request *req, int code, const char *reason,
    const char *msg)
{
	struct evbuffer	*b = evbuffer_new();

	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain");
	if (b != NULL)
		evbuffer_add_printf(b, "%s\n", msg);
	evhttp_send_reply(req, code, reason, b);
	if (b != NULL)
		evbuffer_free(b);
}

/*
 * The rows from offset, at most limit of them and HTTP_PAGE_MAX bytes,
 * moved from reply to page with the table heads; total counts them all,
 * those a show left out ("%skipped N") too.
 */
static size_t
http_select(struct evbuffer *reply, struct evbuffer *page, size_t offset,
    size_t limit, size_t *total)
{
	char	*line;
	size_t	 n, given = 0;
	int	 full = 0;

	*total = 0;
	while ((line = evbuffer_readln(reply, &n, EVBUFFER_EOL_LF)) != NULL) {
		if (line[0] == '%') {
			if (strncmp(line, "%columns ", 9) == 0) {
				evbuffer_add(page, line, n);
				evbuffer_add(page, "\n", 1);
			} else if (strncmp(line, "%skipped ", 9) == 0)
				*total += strtoul(line + 9, NULL, 10);
		} else {
			if (*total >= offset && given < limit && !full &&
			    evbuffer_get_length(page) + n + 1 > HTTP_PAGE_MAX)
				full = 1;
			if (*total >= offset && given < limit && !full) {
				evbuffer_add(page, line, n);
				evbuffer_add(page, "\n", 1);
				given++;
			}
			(*total)++;
		}
		free(line);
	}
	return given;
}

static void
http_stream_free(struct http_stream *s)
{
	if (s == NULL)
		return;
	if (s->c != NULL && s->c->stream == s)
		s->c->stream = NULL;
	out_free(s->o);
	evbuffer_free(s->page);
	evbuffer_free(s->chunk);
	free(s);
}

/* The next chunk, once evhttp has handed the last to the kernel. */
static void
http_stream_next(struct evhttp_connection *evcon, void *arg)
{
	struct http_stream	*s = arg;
	struct evhttp_request	*req = s->req;
	char			*line;
	size_t			 n;
	int			 r = 0;

	(void)evcon;
	while (evbuffer_get_length(s->chunk) < HTTP_CHUNK &&
	    (line = evbuffer_readln(s->page, &n, EVBUFFER_EOL_LF)) != NULL) {
		r = out_line(s->o, line);
		free(line);
		if (r == -1)
			break;
	}
	if (r == 0 && evbuffer_get_length(s->page) > 0 &&
	    evbuffer_get_length(s->chunk) > 0) {
		evhttp_send_reply_chunk_with_cb(req, s->chunk,
		    http_stream_next, s);
		return;
	}
	/* The last: the request may be gone once the reply is ended. */
	out_end(s->o);
	evhttp_send_reply_chunk(req, s->chunk);
	http_stream_free(s);
	evhttp_send_reply_end(req);
}

static struct http_conn *
http_conn_of(struct http *h, struct evhttp_connection *evcon)
{
	struct bufferevent	*bev;
	struct http_conn	*c;

	if (evcon == NULL)
		return NULL;
	bev = evhttp_connection_get_bufferevent(evcon);
	TAILQ_FOREACH(c, &h->conns, entry)
		if (c->bev == bev)
			return c;
	return NULL;
}

static void	http_conn_free(struct http_conn *);

/*
 * evhttp is done with the connection: so is its place (which else its
 * address would hold until the deadline) and what was made for it.
 */
static void
http_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	struct http_conn	*c = arg;

	(void)evcon;
	c->evcon = NULL;
	http_conn_free(c);
}

/*
 * An API answer: the page selected, its counts in the headers, then the
 * rows streamed.  HEAD, and a connection not found, get it whole.
 */
static int
http_api(struct http *h, struct evhttp_request *req,
    const struct http_target *t, struct evbuffer *reply)
{
	struct evkeyvalq	*hdr = evhttp_request_get_output_headers(req);
	struct http_conn	*c;
	struct http_stream	*s;
	size_t			 total, given;
	char			 num[32];

	c = http_conn_of(h, evhttp_request_get_connection(req));
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	if ((s->page = evbuffer_new()) == NULL ||
	    (s->chunk = evbuffer_new()) == NULL ||
	    (s->o = out_new(OUT_JSON, http_evbuffer_sink, s->chunk)) == NULL) {
		http_stream_free(s);
		return -1;
	}
	given = http_select(reply, s->page, t->offset, t->limit, &total);
	evhttp_add_header(hdr, "Content-Type", "application/json");
	snprintf(num, sizeof(num), "%zu", total);
	evhttp_add_header(hdr, "X-Total-Count", num);
	snprintf(num, sizeof(num), "%zu", t->offset);
	evhttp_add_header(hdr, "X-Offset", num);
	snprintf(num, sizeof(num), "%zu", given);
	evhttp_add_header(hdr, "X-Count", num);
	if (c == NULL || c->evcon == NULL || c->stream != NULL ||
	    evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
		if (http_render(s->page, s->chunk) == -1) {
			http_stream_free(s);
			return -1;
		}
		evhttp_send_reply(req, HTTP_OK, "OK", s->chunk);
		http_stream_free(s);
		return 0;
	}
	s->c = c;
	s->req = req;
	c->stream = s;
	evhttp_send_reply_start(req, HTTP_OK, "OK");
	http_stream_next(c->evcon, s);
	return 0;
}

static void
http_request(struct evhttp_request *req, void *arg)
{
	struct http		*h = arg;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct http_conn	*c;
	const struct sockaddr	*sa;
	struct evkeyvalq	*hdr = evhttp_request_get_output_headers(req);
	struct evbuffer		*body = NULL, *reply = NULL;
	struct http_target	 t;
	const char		*uri = evhttp_request_get_uri(req);
	char			 err[256];

	if ((c = http_conn_of(h, evcon)) != NULL && c->evcon == NULL) {
		c->evcon = evcon;
		evhttp_connection_set_closecb(evcon, http_conn_closed, c);
	}
	sa = evcon != NULL ? evhttp_connection_get_addr(evcon) : NULL;
	if (sa == NULL || !acl_allows(0, h->conf.allow, h->conf.nallow, sa)) {
		h->refused++;
		evhttp_add_header(hdr, "Connection", "close");
		http_error(req, 403, "Forbidden", "not allowed");
		return;
	}
	if (http_parse_target(uri, strlen(uri), &t, err, sizeof(err)) == -1) {
		http_error(req, 404, "Not Found", err);
		return;
	}
	/*
	 * Replies held for clients that do not read are bounded in all; the
	 * few hundred bytes of /api/v1/info still say why.
	 */
	if (t.kind != HTTP_INFO && http_held(h) > HTTP_QUEUED_MAX) {
		h->busy++;
		evhttp_add_header(hdr, "Connection", "close");
		http_error(req, 503, "Service Unavailable", "busy");
		return;
	}
	if ((body = evbuffer_new()) == NULL ||
	    (reply = evbuffer_new()) == NULL)
		goto fail;
	evhttp_add_header(hdr, "Cache-Control", "no-store");
	switch (t.kind) {
	case HTTP_INDEX:
		evhttp_add_header(hdr, "Content-Type", "text/plain");
		http_index(body);
		break;
	case HTTP_PAGE:
		evhttp_add_header(hdr, "Content-Type",
		    "text/html; charset=utf-8");
		/* Everything is in the page: it may load nothing else. */
		evhttp_add_header(hdr, "Content-Security-Policy",
		    "default-src 'self'; script-src 'unsafe-inline'; "
		    "style-src 'unsafe-inline'");
		evbuffer_add_reference(body, http_page, http_page_len, NULL,
		    NULL);
		break;
	case HTTP_INFO:
		evhttp_add_header(hdr, "Content-Type", "application/json");
		http_info(h, body);
		break;
	case HTTP_METRICS:
		evhttp_add_header(hdr, "Content-Type",
		    "text/plain; version=0.0.4");
		vnetd_metrics(h->d, body);
		break;
	case HTTP_HISTORY:
		if (history_json(h->d->history, t.link ? HISTORY_LINK :
		    HISTORY_IFACE, t.name, http_evbuffer_sink, body) == -1) {
			http_error(req, 404, "Not Found", "no such series");
			goto done;
		}
		evhttp_add_header(hdr, "Content-Type", "application/json");
		break;
	case HTTP_API:
		if (http_show(h->d, &t, reply, err, sizeof(err)) == -1) {
			http_error(req, 404, "Not Found", err);
			goto done;
		}
		if (http_api(h, req, &t, reply) == -1)
			goto fail;
		goto done;
	}
	evhttp_send_reply(req, HTTP_OK, "OK", body);
	goto done;
 fail:
	http_error(req, 500, "Internal Server Error", "out of memory");
 done:
	if (body != NULL)
		evbuffer_free(body);
	if (reply != NULL)
		evbuffer_free(reply);
}

static void
http_conn_free(struct http_conn *c)
{
	/* evhttp still has it: no call back into what is freed here. */
	if (c->evcon != NULL)
		evhttp_connection_set_closecb(c->evcon, NULL, NULL);
	http_stream_free(c->stream);
	TAILQ_REMOVE(&c->h->conns, c, entry);
	c->h->nconns--;
	if (c->admitted)
		c->h->nadmitted--;
	event_free(c->deadline);
	event_free(c->admit);
	bufferevent_decref(c->bev);
	free(c);
}

/*
 * Ends a connection: through evhttp when a request named it (which frees
 * the request and its answer with it), else by shutting its socket, which
 * ends it once evhttp next reads.
 */
static void
http_conn_shut(struct http_conn *c)
{
	evutil_socket_t			 s = bufferevent_getfd(c->bev);
	struct evhttp_connection	*evcon = c->evcon;

	if (evcon != NULL) {
		evhttp_connection_set_closecb(evcon, NULL, NULL);
		c->evcon = NULL;
		http_stream_free(c->stream);
		evhttp_connection_free(evcon);
	} else if (s != -1)
		shutdown(s, SHUT_RDWR);
	http_conn_free(c);
}

static void
http_conn_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	http_conn_shut(arg);
}

/* One address: an IPv4 address, or an IPv6 /64 (what one host is given). */
static int
http_same_addr(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
	const struct sockaddr_in	*a4, *b4;
	const struct sockaddr_in6	*a6, *b6;

	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET) {
		a4 = (const struct sockaddr_in *)a;
		b4 = (const struct sockaddr_in *)b;
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		a6 = (const struct sockaddr_in6 *)a;
		b6 = (const struct sockaddr_in6 *)b;
		return memcmp(&a6->sin6_addr, &b6->sin6_addr, 8) == 0;
	}
	return 0;
}

/*
 * Before evhttp reads anything: on the list, a place of its own among
 * the admitted, and no more than its address's share.
 */
static void
http_conn_admit(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg, *o;
	struct http		*h = c->h;
	socklen_t		 len = sizeof(c->addr);
	evutil_socket_t		 s = bufferevent_getfd(c->bev);
	size_t			 same = 0;
	int			 sndbuf = HTTP_SNDBUF;

	(void)fd;
	(void)what;
	if (s == -1 || getpeername(s, (struct sockaddr *)&c->addr,
	    &len) == -1) {
		http_conn_shut(c);
		return;
	}
	if (!acl_allows(0, h->conf.allow, h->conf.nallow,
	    (struct sockaddr *)&c->addr)) {
		h->refused++;
		http_conn_shut(c);
		return;
	}
	if (h->nadmitted >= HTTP_CONNS_MAX) {
		h->shed++;
		http_conn_shut(c);
		return;
	}
	TAILQ_FOREACH(o, &h->conns, entry)
		if (o->admitted && http_same_addr(&o->addr, &c->addr))
			same++;
	if (same >= HTTP_CONNS_PER_ADDR) {
		h->slots++;
		http_conn_shut(c);
		return;
	}
	/* What the kernel holds for a client that does not read. */
	(void)setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	c->admitted = 1;
	h->nadmitted++;
}

/* What is held for the connections: queued to send, and pages to make. */
static size_t
http_held(const struct http *h)
{
	const struct http_conn	*c;
	size_t			 n = 0;

	TAILQ_FOREACH(c, &h->conns, entry) {
		n += evbuffer_get_length(bufferevent_get_output(c->bev));
		if (c->stream != NULL)
			n += evbuffer_get_length(c->stream->page) +
			    evbuffer_get_length(c->stream->chunk);
	}
	return n;
}

/* evhttp asks for the bufferevent of each connection it accepts. */
static struct bufferevent *
http_bevcb(struct event_base *base, void *arg)
{
	struct http		*h = arg;
	struct http_conn	*c;
	struct bufferevent	*bev;
	struct timeval		 tv = { HTTP_TIMEOUT, 0 };

	if ((bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL)
		return NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return bev;
	if ((c->deadline = evtimer_new(base, http_conn_deadline, c)) == NULL) {
		free(c);
		return bev;
	}
	if ((c->admit = evtimer_new(base, http_conn_admit, c)) == NULL) {
		event_free(c->deadline);
		free(c);
		return bev;
	}
	/*
	 * Accepted faster than the loop turns: served by nobody, shut at the
	 * next turn (the admitted are counted at admission).
	 */
	if (h->nconns >= HTTP_CONNS_MAX + HTTP_CONNS_PENDING) {
		h->shed++;
		tv.tv_sec = 0;
	}
	c->h = h;
	c->bev = bev;
	bufferevent_incref(bev);
	TAILQ_INSERT_TAIL(&h->conns, c, entry);
	h->nconns++;
	evtimer_add(c->deadline, &tv);
	/* evhttp gives the socket to bev on return; admit runs before a read. */
	if (tv.tv_sec != 0)
		event_active(c->admit, EV_TIMEOUT, 1);
	return bev;
}

static void
http_accept_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	evconnlistener_enable(arg);
}

static void
http_accept_error(struct evconnlistener *lev, void *arg)
{
	struct timeval	 tv = { 1, 0 };
	int		 e = EVUTIL_SOCKET_ERROR();

	(void)arg;		/* evhttp's own */
	/* Out of descriptors: wait, as plain listeners do, rather than spin. */
	log_warnx("http: accept: %s", evutil_socket_error_to_string(e));
	evconnlistener_disable(lev);
	event_base_once(evconnlistener_get_base(lev), -1, EV_TIMEOUT,
	    http_accept_resume, lev, &tv);
}

struct http *
http_new(struct vnetd *d, const struct stmt *st, char *err, size_t errlen)
{
	struct http		*h;
	struct evconnlistener	*lev;
	char			 host[STMT_HOST_MAX + 1];

	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(err, errlen, "http: %s", strerror(errno));
		return NULL;
	}
	h->d = d;
	h->conf = *st;
	TAILQ_INIT(&h->conns);
	h->started_ms = vnetd_now_ms();
	if ((h->http = evhttp_new(d->base)) == NULL) {
		snprintf(err, errlen, "http: out of memory");
		goto fail;
	}
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(h->http, HTTP_HEADERS_MAX);
	evhttp_set_max_body_size(h->http, HTTP_BODY_MAX);
	evhttp_set_timeout(h->http, HTTP_TIMEOUT);
	evhttp_set_gencb(h->http, http_request, h);
	evhttp_set_bevcb(h->http, http_bevcb, h);
	snprintf(host, sizeof(host), "%s",
	    strcmp(st->addr.host, "*") == 0 ? "0.0.0.0" : st->addr.host);
	h->bound = evhttp_bind_socket_with_handle(h->http, host, st->addr.port);
	if (h->bound == NULL) {
		snprintf(err, errlen, "http %s:%u: cannot listen: %s", host,
		    st->addr.port, strerror(errno));
		goto fail;
	}
	lev = evhttp_bound_socket_get_listener(h->bound);
	evconnlistener_set_error_cb(lev, http_accept_error);
	log_info("http: status server on %s:%u, %s", host, st->addr.port,
	    st->nallow > 0 ? "with an allow list" : "loopback only");
	return h;
 fail:
	http_free(h);
	return NULL;
}

const struct stmt *
http_conf(const struct http *h)
{
	return &h->conf;
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	if (h->http != NULL)
		evhttp_free(h->http);
	while (!TAILQ_EMPTY(&h->conns))
		http_conn_free(TAILQ_FIRST(&h->conns));
	free(h);
}
