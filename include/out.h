/*
 * Output of `show`: one renderer for vnetctl and the HTTP API.  The daemon
 * answers a show with tables ("%columns A<TAB>B..." then rows of
 * tab-separated fields, see ctl.h); an out turns such a reply into aligned
 * text for a person, raw rows for a script, or JSON, through a small vtable
 * (the bgpctl way) so that every format sees the same rows.
 *
 * JSON: an array with one object per row, keyed by the column names; a
 * field that is a decimal number is a JSON number, "-" is null, anything
 * else a string.  Rows outside any table (`show config`) are strings.
 *
 * A column's name says when its cells are lists, which the text and TSV
 * tables print as they come ("host1,host2") under the name alone:
 *   links[]                items separated by ',': a JSON array of values
 *                          (each as a field above), "-" the empty array
 *   candidates[addr/kind]  the same, each item an object whose fields
 *                          are separated by '/' ("10.0.0.1:7870/host":
 *                          {"addr":"10.0.0.1:7870","kind":"host"}), the
 *                          last taking the rest, those missing null
 */
#ifndef VNET_OUT_H
#define VNET_OUT_H

#include <stddef.h>

enum out_format {
	OUT_TEXT,		/* aligned columns under a header */
	OUT_TSV,		/* tab-separated rows */
	OUT_TSV_HEADER,		/* the same with the column names first */
	OUT_JSON,
};

struct out;

/* The rendered text goes to sink as it is made (it may be kept until end). */
struct out	*out_new(enum out_format,
		    void (*sink)(const char *, size_t, void *), void *arg);
/* One line of a reply, without its newline: "%columns ..." or a row. */
int		 out_line(struct out *, const char *line);
/* Ends the reply: flushes what was kept and closes a JSON array. */
int		 out_end(struct out *);
void		 out_free(struct out *);

/* Appends s as a JSON string (quotes and escapes) to sink. */
void		 out_json_string(const char *s, size_t len,
		    void (*sink)(const char *, size_t, void *), void *arg);
/* 1 if s is a decimal number that JSON takes as it is. */
int		 out_is_number(const char *s, size_t len);

#endif
