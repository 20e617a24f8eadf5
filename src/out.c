/* Rendering of show replies: text, tab-separated and JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

#define OUT_COLS_MAX	64

struct out;

/*
 * A column of a table, from its name in "%columns": "links[]" holds a
 * list, "candidates[addr/kind]" a list of objects with those fields (see
 * out.h); the key is the name without the brackets.
 */
struct out_col {
	const char	*name;
	size_t		 len;
	int		 list;
	const char	*fields;	/* "addr/kind", or empty: strings */
	size_t		 flen;
};

struct out_ops {
	int	(*columns)(struct out *, const char *);
	int	(*row)(struct out *, const char *);
	int	(*end)(struct out *);
};

struct out {
	const struct out_ops	*ops;
	void			(*sink)(const char *, size_t, void *);
	void			*arg;
	int			 header;	/* TSV: print column names */
	/* text: rows kept until the end, so that columns can be aligned */
	char			**rows;
	size_t			  n, cap;
	/* JSON: the columns of the current table */
	char			*cols;
	struct out_col		 col[OUT_COLS_MAX];
	size_t			 ncol;
	int			 first;
	int			 pairs;	/* a name/value table: one object */
};

static void
put(struct out *o, const char *s, size_t len)
{
	o->sink(s, len, o->arg);
}

static void
puts_(struct out *o, const char *s)
{
	o->sink(s, strlen(s), o->arg);
}

static size_t
field_len(const char *p)
{
	return strcspn(p, "\t");
}

static void
col_parse(const char *p, size_t len, struct out_col *c)
{
	const char	*b;

	memset(c, 0, sizeof(*c));
	c->name = p;
	c->len = len;
	if (len < 3 || p[len - 1] != ']' ||
	    (b = memchr(p, '[', len)) == NULL || b == p)
		return;
	c->list = 1;
	c->len = (size_t)(b - p);
	c->fields = b + 1;
	c->flen = len - c->len - 2;
}

/*
 * The column names as a person or a script reads them: a list column by
 * its name alone, its cells being printed as they come ("a,b").
 */
static char *
columns_plain(const char *cols)
{
	struct out_col	 c;
	char		*s, *d;
	size_t		 len;

	if ((s = d = malloc(strlen(cols) + 1)) == NULL)
		return NULL;
	for (;;) {
		len = field_len(cols);
		col_parse(cols, len, &c);
		memcpy(d, c.name, c.len);
		d += c.len;
		if (cols[len] == '\0')
			break;
		*d++ = '\t';
		cols += len + 1;
	}
	*d = '\0';
	return s;
}

/* text */

static int
text_keep(struct out *o, const char *row)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		char **n = realloc(o->rows, cap * sizeof(*n));

		if (n == NULL)
			return -1;
		o->rows = n;
		o->cap = cap;
	}
	if ((o->rows[o->n] = strdup(row)) == NULL)
		return -1;
	o->n++;
	return 0;
}

static int
text_columns(struct out *o, const char *cols)
{
	char	*plain;
	int	 r;

	if ((plain = columns_plain(cols)) == NULL)
		return -1;
	r = text_keep(o, plain);
	free(plain);
	return r;
}

static int
text_end(struct out *o)
{
	size_t	 width[32] = { 0 }, i, col, len;
	const char *p;
	char	 pad[2] = "  ";

	for (i = 0; i < o->n; i++)
		for (p = o->rows[i], col = 0; col < 32; col++) {
			len = field_len(p);
			if (len > width[col])
				width[col] = len;
			if (p[len] == '\0')
				break;
			p += len + 1;
		}
	for (i = 0; i < o->n; i++) {
		for (p = o->rows[i], col = 0; ; col++) {
			len = field_len(p);
			if (p[len] == '\0' || col >= 31) {
				puts_(o, p);
				put(o, "\n", 1);
				break;
			}
			put(o, p, len);
			for (; len < width[col]; len++)
				put(o, " ", 1);
			put(o, pad, 2);
			p += field_len(p) + 1;
		}
	}
	return 0;
}

static const struct out_ops out_text = { text_columns, text_keep, text_end };

/* tab-separated */

static int
tsv_columns(struct out *o, const char *cols)
{
	char	*plain;

	if (!o->header)
		return 0;
	if ((plain = columns_plain(cols)) == NULL)
		return -1;
	puts_(o, plain);
	put(o, "\n", 1);
	free(plain);
	return 0;
}

static int
tsv_row(struct out *o, const char *row)
{
	puts_(o, row);
	put(o, "\n", 1);
	return 0;
}

static int
tsv_end(struct out *o)
{
	(void)o;
	return 0;
}

static const struct out_ops out_tsv = { tsv_columns, tsv_row, tsv_end };

/* JSON */

void
out_json_string(const char *s, size_t len,
    void (*sink)(const char *, size_t, void *), void *arg)
{
	static const char hex[] = "0123456789abcdef";
	char	 esc[8];
	size_t	 i, start = 0;

	sink("\"", 1, arg);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		/*
		 * Bytes past ASCII are escaped as code points of their own:
		 * names are ASCII, and a stray byte then still gives valid
		 * JSON rather than broken UTF-8.
		 */
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			continue;
		if (i > start)
			sink(s + start, i - start, arg);
		start = i + 1;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			sink(esc, 2, arg);
		} else if (c == '\n')
			sink("\\n", 2, arg);
		else if (c == '\t')
			sink("\\t", 2, arg);
		else if (c == '\r')
			sink("\\r", 2, arg);
		else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			sink(esc, 6, arg);
		}
	}
	if (i > start)
		sink(s + start, i - start, arg);
	sink("\"", 1, arg);
}

int
out_is_number(const char *s, size_t len)
{
	size_t	 i = 0, digits;

	if (i < len && s[i] == '-')
		i++;
	if (i >= len)
		return 0;
	if (s[i] == '0' && i + 1 < len && s[i + 1] != '.')
		return 0;
	for (digits = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (digits == 0 || digits > 20)
		return 0;
	if (i == len)
		return 1;
	if (s[i++] != '.')
		return 0;
	for (digits = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	return digits > 0 && i == len;
}

static void
json_sink(const char *s, size_t len, void *arg)
{
	put(arg, s, len);
}

/* The length of s up to its first c, or len. */
static size_t
strcspn_n(const char *s, size_t len, char c)
{
	const char	*p = memchr(s, c, len);

	return p != NULL ? (size_t)(p - s) : len;
}

static void
json_value(struct out *o, const char *s, size_t len)
{
	if (len == 1 && s[0] == '-')
		puts_(o, "null");
	else if (out_is_number(s, len))
		put(o, s, len);
	else
		out_json_string(s, len, json_sink, o);
}

/*
 * One item of a list of objects: its fields are separated by '/', the
 * last taking the rest; those it lacks are null.
 */
static void
json_item(struct out *o, const struct out_col *c, const char *s, size_t len)
{
	const char	*f = c->fields, *fend = c->fields + c->flen, *slash;
	size_t		 flen, vlen;
	int		 have = 1;

	put(o, "{", 1);
	for (;;) {
		slash = memchr(f, '/', (size_t)(fend - f));
		flen = slash != NULL ? (size_t)(slash - f) : (size_t)(fend - f);
		out_json_string(f, flen, json_sink, o);
		put(o, ":", 1);
		if (!have)
			puts_(o, "null");
		else if (slash == NULL ||
		    (vlen = strcspn_n(s, len, '/')) == len) {
			json_value(o, s, len);
			have = 0;
		} else {
			json_value(o, s, vlen);
			s += vlen + 1;
			len -= vlen + 1;
		}
		if (slash == NULL)
			break;
		put(o, ",", 1);
		f = slash + 1;
	}
	put(o, "}", 1);
}

/* A list cell: items separated by ',', "-" (or nothing) the empty list. */
static void
json_list(struct out *o, const struct out_col *c, const char *s, size_t len)
{
	size_t	 ilen;

	put(o, "[", 1);
	if (len > 0 && !(len == 1 && s[0] == '-'))
		for (;;) {
			ilen = strcspn_n(s, len, ',');
			if (c->flen > 0)
				json_item(o, c, s, ilen);
			else
				json_value(o, s, ilen);
			if (ilen == len)
				break;
			put(o, ",", 1);
			s += ilen + 1;
			len -= ilen + 1;
		}
	put(o, "]", 1);
}

static int
json_columns(struct out *o, const char *cols)
{
	char	*p;

	free(o->cols);
	if ((o->cols = strdup(cols)) == NULL)
		return -1;
	/*
	 * A table of names and values (show stats, show link NAME) is one
	 * object, each name a key: {"frames_in": 0, ...}.  Decided by the
	 * first table only, so that the output stays one JSON value.
	 */
	if (o->first)
		o->pairs = strcmp(cols, "name\tvalue") == 0;
	for (o->ncol = 0, p = o->cols; o->ncol < OUT_COLS_MAX; ) {
		col_parse(p, field_len(p), &o->col[o->ncol]);
		o->ncol++;
		if (p[field_len(p)] == '\0')
			break;
		p += field_len(p) + 1;
	}
	return 0;
}

static int
json_row(struct out *o, const char *row)
{
	const char	*p = row;
	size_t		 i, len;

	if (o->pairs) {
		len = field_len(p);
		puts_(o, o->first ? "{\n" : ",\n");
		o->first = 0;
		out_json_string(p, len, json_sink, o);
		put(o, ":", 1);
		if (p[len] == '\0')
			puts_(o, "null");
		else
			json_value(o, p + len + 1, field_len(p + len + 1));
		return 0;
	}
	puts_(o, o->first ? "[\n" : ",\n");
	o->first = 0;
	if (o->ncol == 0) {
		out_json_string(row, strlen(row), json_sink, o);
		return 0;
	}
	put(o, "{", 1);
	for (i = 0; i < o->ncol; i++) {
		len = field_len(p);
		if (i > 0)
			put(o, ",", 1);
		out_json_string(o->col[i].name, o->col[i].len, json_sink, o);
		put(o, ":", 1);
		if (o->col[i].list)
			json_list(o, &o->col[i], p, len);
		else
			json_value(o, p, len);
		if (p[len] == '\0') {
			/* A short row: the missing fields are unknown. */
			for (i++; i < o->ncol; i++) {
				put(o, ",", 1);
				out_json_string(o->col[i].name,
				    o->col[i].len, json_sink, o);
				puts_(o, ":null");
			}
			break;
		}
		p += len + 1;
	}
	put(o, "}", 1);
	return 0;
}

static int
json_end(struct out *o)
{
	if (o->pairs)
		puts_(o, o->first ? "{}\n" : "\n}\n");
	else
		puts_(o, o->first ? "[]\n" : "\n]\n");
	return 0;
}

static const struct out_ops out_json = { json_columns, json_row, json_end };

struct out *
out_new(enum out_format fmt, void (*sink)(const char *, size_t, void *),
    void *arg)
{
	struct out	*o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return NULL;
	o->sink = sink;
	o->arg = arg;
	o->first = 1;
	switch (fmt) {
	case OUT_TEXT:
		o->ops = &out_text;
		break;
	case OUT_TSV_HEADER:
		o->header = 1;
		/* FALLTHROUGH */
	case OUT_TSV:
		o->ops = &out_tsv;
		break;
	case OUT_JSON:
		o->ops = &out_json;
		break;
	}
	return o;
}

int
out_line(struct out *o, const char *line)
{
	if (strncmp(line, "%columns ", 9) == 0)
		return o->ops->columns(o, line + 9);
	return o->ops->row(o, line);
}

int
out_end(struct out *o)
{
	return o->ops->end(o);
}

void
out_free(struct out *o)
{
	size_t	 i;

	if (o == NULL)
		return;
	for (i = 0; i < o->n; i++)
		free(o->rows[i]);
	free(o->rows);
	free(o->cols);
	free(o);
}
