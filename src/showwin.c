/* A page of a show's rows: see showwin.h. */
#include <event2/buffer.h>

#include "showwin.h"

void
showwin_init(struct showwin *w, size_t offset, size_t limit)
{
	w->offset = offset;
	w->limit = limit;
	w->seen = 0;
	w->skipped = 0;
}

static void
showwin_say(struct showwin *w, struct evbuffer *out)
{
	if (w->skipped > 0)
		evbuffer_add_printf(out, "%%skipped %zu\n", w->skipped);
	w->skipped = 0;
}

int
showwin_row(struct showwin *w, struct evbuffer *out)
{
	size_t	 i;

	if (w == NULL || w->limit == 0)
		return 1;
	i = w->seen++;
	if (i < w->offset || i - w->offset >= w->limit) {
		w->skipped++;
		return 0;
	}
	showwin_say(w, out);
	return 1;
}

void
showwin_end(struct showwin *w, struct evbuffer *out)
{
	if (w != NULL)
		showwin_say(w, out);
}
