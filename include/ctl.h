/*
 * The control protocol, client side (vnetctl links this and the statement
 * printer, never the data path).
 *
 * Over the Unix stream socket the client sends one request per line: a
 * statement of the command language (see stmt.h).  The daemon answers with
 * zero or more lines and a final line:
 *
 *   %columns NAME<TAB>NAME...   optional, first: the column names of a table
 *                               (NAME[] or NAME[F/G]: a list, see out.h)
 *   ROW                         data rows, fields separated by TAB
 *   %message TEXT               detail for a person, such as each error of
 *                               a configuration file that reload refused
 *   %skipped N                  N rows left out here (the status server
 *                               asks for a page of the biggest tables)
 *   %end                        success
 *   %error MESSAGE              failure, the request changed nothing
 *
 * Data lines never start with '%'.  A connection may carry many requests.
 */
#ifndef VNET_CTL_H
#define VNET_CTL_H

#include <stdio.h>

#include "out.h"

#define CTL_REQUEST_MAX	4096	/* longest request line the daemon accepts */

/* Connects to the control socket at path; returns fd or -1 (errno set). */
int	 ctl_connect(const char *path);

/*
 * Sends one request and reads its reply.  Rows go to out rendered in fmt
 * (see out.h): aligned under a header line, tab-separated with or without
 * the header, or JSON.  %message lines go to msgout.  Returns 0 on %end, 1 on %error
 * (the message copied into err), -1 on a transport error (errno set, err
 * filled with a description).
 */
int	 ctl_request(int fd, const char *request, FILE *out, FILE *msgout,
	    enum out_format fmt, char *err, size_t errlen);

#endif
