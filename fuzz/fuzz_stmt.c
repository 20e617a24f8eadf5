/*
 * libFuzzer target: the command language.  Any line either fails with a
 * message and a column inside the line, or gives a statement whose printed
 * form parses back to an equal statement and prints the same again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stmt.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char			 line[STMT_LINE_MAX + 8];
	char			 text[STMT_LINE_MAX + 1], again[STMT_LINE_MAX + 1];
	struct stmt		 a, b;
	struct stmt_error	 err;
	size_t			 n = size < sizeof(line) - 1 ? size : sizeof(line) - 1;
	int			 r, len;

	memcpy(line, data, n);
	line[n] = '\0';
	r = stmt_parse(line, &a, &err);
	if (r == -1) {
		if (err.msg[0] == '\0' || err.column < 1 ||
		    (size_t)err.column > STMT_LINE_MAX + 1 ||
		    memchr(err.msg, '\0', sizeof(err.msg)) == NULL)
			abort();
		return 0;
	}
	if (r == 0)
		return 0;
	if (r != 1)
		abort();
	len = stmt_print(&a, text, sizeof(text));
	/* Show has no printed form of its own kind only when invalid. */
	if (len < 0 || (size_t)len >= sizeof(text))
		abort();
	if (stmt_parse(text, &b, &err) != 1 || !stmt_equal(&a, &b))
		abort();
	stmt_print(&b, again, sizeof(again));
	if (strcmp(text, again) != 0)
		abort();
	return 0;
}
