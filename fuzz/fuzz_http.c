/*
 * libFuzzer target: the status server's request paths and query strings,
 * and the JSON renderer of show replies.  A path either fails with a
 * reason or names something to answer; an API path always becomes a show
 * statement (the server must never run anything else) with a page of
 * 1..HTTP_LIMIT_MAX rows from an offset within HTTP_OFFSET_MAX, a traffic
 * matrix of 1..STMT_TOP_MAX rows and columns.  Any reply lines
 * render to JSON without fault.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "out.h"
#include "stmt.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
count_sink(const char *s, size_t len, void *arg)
{
	size_t	*n = arg;

	(void)s;
	*n += len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_target	 t;
	struct stmt		 st;
	struct stmt_error	 perr;
	struct out		*o;
	char			 err[128], line[1024];
	size_t			 n = 0, i, start;

	if (http_parse_target((const char *)data, size, &t, err,
	    sizeof(err)) == -1) {
		if (err[0] == '\0')
			abort();
	} else if (t.kind == HTTP_API) {
		if (stmt_parse(t.line, &st, &perr) != 1 ||
		    st.kind != STMT_SHOW)
			abort();
		/* A page is never unbounded, and never empty by asking. */
		if (t.limit == 0 || t.limit > HTTP_LIMIT_MAX ||
		    t.offset > HTTP_OFFSET_MAX)
			abort();
		/* The matrix is never bigger than its bound asks. */
		if (st.show == STMT_SHOW_TRAFFIC_MATRIX &&
		    (st.num < 1 || st.num > STMT_TOP_MAX))
			abort();
	} else if (t.kind == HTTP_HISTORY) {
		if (!stmt_valid_name(t.name))
			abort();
	} else if (t.kind != HTTP_METRICS && t.kind != HTTP_INDEX &&
	    t.kind != HTTP_PAGE && t.kind != HTTP_INFO)
		abort();

	if ((o = out_new(OUT_JSON, count_sink, &n)) == NULL)
		return 0;
	for (i = 0, start = 0; i <= size; i++) {
		if (i < size && data[i] != '\n')
			continue;
		if (i - start < sizeof(line)) {
			memcpy(line, data + start, i - start);
			line[i - start] = '\0';
			out_line(o, line);
		}
		start = i + 1;
	}
	out_end(o);
	out_free(o);
	return 0;
}
