/*
 * The configuration file: read, parse line by line with stmt_parse(), check
 * as a whole (names defined once, routes to interfaces that exist, ...).
 */
#ifndef VNET_CONFIG_H
#define VNET_CONFIG_H

#include <sys/types.h>

#include <stdio.h>

#include "stmt.h"

/* The statements in file order, each with its line number. */
struct config {
	char			*file;
	struct stmt_vec		 lines;
	struct config_checks	*checks;	/* only while loading */
};

/*
 * Reads and checks file.  The checks index the statements by name, address
 * and content, so that a file of a million routes is checked in about the
 * time it takes to parse it.  Every error is reported through errf as
 * "FILE:LINE: message" (errf may be NULL).  Returns the number of errors, or
 * -1 if the file cannot be read (reported through errf too).
 */
int	 config_load(const char *file, struct config *,
	    void (*errf)(const char *msg, void *arg), void *arg);
void	 config_clear(struct config *);

/*
 * What is valid but probably not meant, through warnf as
 * "FILE:LINE: warning: message": a plain listener on a non-loopback address.
 */
void	 config_warnings(const struct config *,
	    void (*warnf)(const char *msg, void *arg), void *arg);

/*
 * Orders the statements for applying: settings first, then listeners,
 * interfaces, links, routes, each in file order.  Returns the rank.
 */
int	 config_stmt_order(const struct stmt *);
int	 config_kind_order(enum stmt_kind);

/*
 * Replaces file with the len bytes of text, atomically: a new file in the
 * same directory, flushed to disk, renamed over the old one, so that a
 * reader sees the old file or the new one, never a part.  The new file keeps
 * the old one's mode (0644 when there was none).  0, or -1 with a message.
 */
/*
 * Whether a control client of uid may have the running state saved to file
 * (see vnetctl(8), save): root anywhere; anyone else only in the directory
 * of config_file, the configuration the daemon was started with, and under
 * a name that begins with that file's name (vnetd.conf, vnetd.conf.old...),
 * so that the directory's other files and every other place stay out of
 * reach.  0, or -1 with a message.
 */
int	 config_save_allowed(const char *config_file, const char *file,
	    uid_t uid, char *err, size_t errlen);

int	 config_write(const char *file, const void *text, size_t len,
	    char *err, size_t errlen);

#endif
