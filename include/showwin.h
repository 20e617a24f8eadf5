/*
 * A page of a show's rows, for the status server: the rows from offset,
 * limit of them, are written; the others are only counted, and said in
 * "%skipped N" lines (ctl.h) where they were left out, so that a request
 * formats its page and no more, whatever the size of the table.  One
 * window may span the rows of several producers (show macs: forwarding's
 * learned MACs, then the control plane's), counted as one table.
 */
#ifndef VNET_SHOWWIN_H
#define VNET_SHOWWIN_H

#include <stddef.h>

struct evbuffer;

struct showwin {
	size_t	offset, limit;	/* limit 0: every row */
	size_t	seen;		/* rows met */
	size_t	skipped;	/* met, left out, not yet said */
};

void	showwin_init(struct showwin *, size_t offset, size_t limit);
/*
 * A row is met: 1 to write it now (what was skipped before it is said
 * first), 0 to leave it out.  A NULL window (the control socket) takes
 * every row.
 */
int	showwin_row(struct showwin *, struct evbuffer *);
/* After the last row: says what was skipped since the last written. */
void	showwin_end(struct showwin *, struct evbuffer *);

#endif
