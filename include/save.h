/*
 * `save`: the running state written over the operator's file, keeping it
 * as written where it can.  Pure: the file's text and the running state's
 * statements in, the new text out.
 *
 * Line by line, in the file's order:
 *   - blank and comment lines stay as they are;
 *   - a statement the running state has, unchanged, stays as written
 *     (spacing, quoting, its comment);
 *   - a statement changed at run time is replaced on its line by the
 *     running one (its comment kept): a setting by the same setting, an
 *     interface, link, set-link or vcc policy by the one of that name, a
 *     listener by the one on that address;
 *   - a statement the running state no longer has is dropped;
 *   - what only the file sets (stmt_runtime() 0: node, tls-cert, ...)
 *     stays as written when the file is the daemon's own configuration,
 *     which cannot have changed it since the start.
 * Then the running state's other statements are appended, those that
 * differ from the defaults only (is_default).  Without a file, that is the
 * whole text.  A file with a line that does not parse is no base: the
 * caller writes the running state alone.
 */
#ifndef VNET_SAVE_H
#define VNET_SAVE_H

#include <stddef.h>

#include "stmt.h"

#define SAVE_BASE_MAX	(256 * 1024 * 1024)	/* bytes of a file merged */

struct save_stats {
	size_t	 kept, replaced, dropped, added;
};

/*
 * The new text (malloc'd, *outlen bytes, NUL-terminated), or NULL with
 * errno: EINVAL, base is no configuration (a line does not parse, or is
 * longer than STMT_LINE_MAX); ENOMEM.  base may be NULL (len 0).  own: base
 * is the configuration the daemon started with.
 */
char	*save_merge(const char *base, size_t len, int own,
	    const struct stmt_vec *run,
	    int (*is_default)(const struct stmt *, void *), void *arg,
	    size_t *outlen, struct save_stats *);

/*
 * Reads file for save_merge(): a regular file (no symbolic link, no FIFO),
 * at most SAVE_BASE_MAX bytes.  The text (malloc'd, NUL-terminated), or
 * NULL with errno (ENOENT: none there).
 */
char	*save_read(const char *file, size_t *len);

#endif
