/*
 * The read-only status server (`http ADDR:PORT [allow CIDR,...]`): a JSON
 * API under /api/v1/ with what `show` gives (rendered by out.c, the same
 * JSON as `vnetctl -j show`), and /metrics in the Prometheus text format.
 *
 * It can change nothing: GET and HEAD only, and every API path maps to a
 * show statement, which is checked to be one before it runs.  Bounds: the
 * allow list of plain listeners (loopback alone without one), request
 * headers at most HTTP_HEADERS_MAX bytes, no body, a connection lives at
 * most HTTP_TIMEOUT seconds (however slowly it sends), at most
 * HTTP_CONNS_MAX connections (more are shut as soon as accepted), at most
 * HTTP_CONNS_PER_ADDR of them from one address, a connection from an
 * address not on the list shut before anything of it is read and with no
 * answer, a request answered 503 while the replies queued for clients
 * that do not read pass HTTP_QUEUED_MAX bytes in all, and accepting
 * paused while the process is out of descriptors.
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
#define HTTP_QUEUED_MAX		(16u << 20)	/* bytes of replies unsent */
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
	int		 link;		/* HTTP_HISTORY: 1 link, 0 interface */
	char		 name[STMT_NAME_MAX + 1];	/* HTTP_HISTORY */
};

/*
 * Parses a request URI (path and query string) into what to answer.  Pure:
 * 0, or -1 with a reason in err (answered 404).
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
