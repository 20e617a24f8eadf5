/*
 * The configuration file: read, parse line by line with stmt_parse(), check
 * as a whole (names defined once, routes to interfaces that exist, ...).
 */
#ifndef VNET_CONFIG_H
#define VNET_CONFIG_H

#include <stdio.h>

#include "stmt.h"

struct config_line {
	int		line;
	struct stmt	st;
};

struct config {
	char			*file;
	struct config_line	*lines;
	size_t			 n, cap;
};

/*
 * Reads and checks file.  Every error is reported through errf as
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

#endif
