/*
 * The read-only status server (`http ADDR:PORT [allow CIDR,...]`): a JSON
 * API under /api/v1/ with what `show` gives (rendered by out.c, the same
 * JSON as `vnetctl -j show`), and /metrics in the Prometheus text format.
 *
 * It can change nothing: GET and HEAD only, and every API path maps to a
 * show statement, which is checked to be one before it runs.  Bounds: the
 * allow list of plain listeners (loopback alone without one), request
 * headers at most HTTP_HEADERS_MAX bytes, no body, a connection lives at
 * most HTTP_TIMEOUT seconds (however slowly it sends).
 *
 * Places: a connection is admitted before evhttp reads a byte of it.  One
 * from an address not on the list is shut unanswered and holds no place;
 * of the admitted, at most HTTP_CONNS_MAX at once (more are shut) and at
 * most HTTP_CONNS_PER_ADDR from one address (an IPv6 /64 counts as one).
 *
 * Replies: an API answer is at most limit rows (HTTP_LIMIT_DEFAULT unless
 * asked) and HTTP_PAGE_MAX bytes of them, the total in X-Total-Count; it
 * is rendered HTTP_CHUNK at a time, the next only once the last has gone
 * to the kernel (whose share is HTTP_SNDBUF), so a client that does not
 * read holds one page and one chunk.  A request is answered 503 while
 * what is held for all clients passes HTTP_QUEUED_MAX bytes, and
 * accepting pauses while the process is out of descriptors.
 */
#ifndef VNET_HTTP_H
#define VNET_HTTP_H

#include <stddef.h>

#include "stmt.h"

#define HTTP_HEADERS_MAX	8192
#define HTTP_BODY_MAX		1024
#define HTTP_TIMEOUT		10	/* seconds: idle, and a connection's life */
#define HTTP_CONNS_MAX		256	/* open at once; more are shut at once */
#define HTTP_CONNS_PER_ADDR	32	/* of those, from one address */
#define HTTP_CONNS_PENDING	1024	/* accepted, not yet admitted */
#define HTTP_QUEUED_MAX		(16u << 20)	/* bytes of replies unsent */
#define HTTP_PAGE_MAX		(1u << 20)	/* bytes of rows in one answer */
#define HTTP_CHUNK		(64u << 10)	/* made only once the last left */
#define HTTP_SNDBUF		(128 << 10)	/* the kernel's share, per socket */
#define HTTP_LIMIT_DEFAULT	1000	/* rows of an API answer */
#define HTTP_LIMIT_MAX		10000
/* /api/v1/traffic/matrix: every cell of the biggest, unless asked */
#define HTTP_LIMIT_MATRIX	((STMT_TOP_MAX + 1) * (STMT_TOP_MAX + 1))
#define HTTP_OFFSET_MAX		999999999
#define HTTP_PATH_MAX		256

/* The status page (src/www/index.html), made a string at build time. */
extern const char	 http_page[];
extern const size_t	 http_page_len;

enum http_kind {
	HTTP_API = 1,		/* show: the statement in line */
	HTTP_METRICS,
	HTTP_INDEX,		/* /api/v1: the list of endpoints */
	HTTP_PAGE,		/* /: the status page */
	HTTP_INFO,		/* /api/v1/info: node, network, version, uptime */
	HTTP_HISTORY,		/* one series: link or not, and name */
};

struct http_target {
	enum http_kind	 kind;
	char		 line[128];	/* HTTP_API: "show ..." */
	size_t		 limit;		/* HTTP_API: rows at most, from offset */
	size_t		 offset;
	int		 link;		/* HTTP_HISTORY: 1 link, 0 interface */
	char		 name[STMT_NAME_MAX + 1];	/* HTTP_HISTORY */
};

/*
 * Parses a request URI (path and query string) into what to answer.  Pure:
 * 0, or -1 with a reason in err (answered 404).  An API path takes
 * limit=1..HTTP_LIMIT_MAX (HTTP_LIMIT_DEFAULT without it) and
 * offset=0..HTTP_OFFSET_MAX, /api/v1/traffic/topology threshold=0..1
 * too and /api/v1/traffic/matrix top=1..STMT_TOP_MAX (and the whole
 * matrix, HTTP_LIMIT_MATRIX rows, without limit), each at most once,
 * joined by '&'; other paths take no query.
 */
int	 http_parse_target(const char *uri, size_t len, struct http_target *,
	    char *err, size_t errlen);

struct vnetd;
struct http;

struct http	*http_new(struct vnetd *, const struct stmt *, char *err,
		    size_t errlen);
void		 http_free(struct http *);
/* The statement it was made from, for `show config`. */
const struct stmt *http_conf(const struct http *);

#endif
