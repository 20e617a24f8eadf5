/* save: the running state over the operator's file (save.h). */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "save.h"
#include "stmt.h"

/* Where a line's comment starts ('#' outside double quotes), or n. */
static size_t
comment_at(const char *line, size_t n)
{
	size_t	 i;
	int	 quoted = 0;

	for (i = 0; i < n; i++) {
		if (quoted && line[i] == '\\' && i + 1 < n)
			i++;
		else if (line[i] == '"')
			quoted = !quoted;
		else if (!quoted && line[i] == '#')
			return i;
	}
	return n;
}

struct merge {
	const struct stmt_vec	*run;
	struct stmt_index	 same, name, addr;
	size_t			 setting[STMT_KIND_LAST + 1];	/* item + 1 */
	uint8_t			*matched;
	struct stmt		 tmp;	/* for stmt_vec_get(): zeroed once */
	FILE			*out;
};

static int
merge_init(struct merge *m, const struct stmt_vec *run)
{
	static const enum stmt_kind named[] = { STMT_INTERFACE, STMT_LINK,
	    STMT_VCC, STMT_SET_LINK };
	const struct stmt *st;
	size_t		 i;

	memset(m, 0, sizeof(*m));
	m->run = run;
	stmt_index_init(&m->same, run, STMT_KEY_SAME);
	stmt_index_init(&m->name, run, STMT_KEY_NAME);
	stmt_index_init(&m->addr, run, STMT_KEY_ADDR);
	if ((m->matched = calloc(run->n + 1, 1)) == NULL ||
	    stmt_index_add_all(&m->same, 0) == -1 ||
	    stmt_index_add_all(&m->addr, STMT_LISTEN) == -1)
		return -1;
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (stmt_index_add_all(&m->name, named[i]) == -1)
			return -1;
	for (i = 0; i < run->n; i++) {
		if (run->v[i].kind == STMT_ROUTE)
			continue;
		st = stmt_vec_get(run, i, &m->tmp);
		if (stmt_is_setting(st->kind) && m->setting[st->kind] == 0)
			m->setting[st->kind] = i + 1;
	}
	return 0;
}

static void
merge_free(struct merge *m)
{
	stmt_index_free(&m->same);
	stmt_index_free(&m->name);
	stmt_index_free(&m->addr);
	free(m->matched);
}

/* The running statement that st is an earlier form of, or -1. */
static long
merge_counterpart(struct merge *m, const struct stmt *st)
{
	if (stmt_is_setting(st->kind))
		return (long)m->setting[st->kind] - 1;
	switch (st->kind) {
	case STMT_INTERFACE:
	case STMT_LINK:
	case STMT_VCC:
	case STMT_SET_LINK:
		return stmt_index_find(&m->name, st);
	case STMT_LISTEN:
		return stmt_index_find(&m->addr, st);
	default:
		return -1;	/* a route is the same or another one */
	}
}

static void
merge_print(struct merge *m, const struct stmt *st, const char *comment,
    size_t clen)
{
	char	 buf[STMT_LINE_MAX];

	stmt_print(st, buf, sizeof(buf));
	if (clen > 0)
		fprintf(m->out, "%s  %.*s\n", buf, (int)clen, comment);
	else
		fprintf(m->out, "%s\n", buf);
}

/* One line of the file (n bytes, no newline); -1 if it does not parse. */
static int
merge_line(struct merge *m, const char *line, size_t n, int own,
    struct save_stats *ss)
{
	char		 buf[STMT_LINE_MAX + 2];
	struct stmt	 st;
	struct stmt_error err;
	size_t		 c;
	long		 i;

	if (n > STMT_LINE_MAX)
		return -1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	/* A CRLF line is parsed as the parser takes it, written as it was. */
	if (n > 0 && buf[n - 1] == '\r')
		memcpy(buf + n, "\n", 2);
	switch (stmt_parse(buf, &st, &err)) {
	case 0:
		fprintf(m->out, "%.*s\n", (int)n, buf);
		return 0;
	case 1:
		break;
	default:
		return -1;
	}
	/* What only the file sets: it cannot have changed since the start. */
	if (own && !stmt_runtime(st.kind)) {
		if (stmt_is_setting(st.kind) && m->setting[st.kind] != 0)
			m->matched[m->setting[st.kind] - 1] = 1;
		fprintf(m->out, "%.*s\n", (int)n, buf);
		ss->kept++;
		return 0;
	}
	if ((i = stmt_index_find(&m->same, &st)) != -1 && !m->matched[i]) {
		m->matched[i] = 1;
		fprintf(m->out, "%.*s\n", (int)n, buf);
		ss->kept++;
		return 0;
	}
	if ((i = merge_counterpart(m, &st)) != -1 && !m->matched[i]) {
		m->matched[i] = 1;
		c = comment_at(buf, n);
		merge_print(m, stmt_vec_get(m->run, (size_t)i, &m->tmp),
		    buf + c, n - c);
		ss->replaced++;
		return 0;
	}
	ss->dropped++;
	return 0;
}

char *
save_merge(const char *base, size_t len, int own, const struct stmt_vec *run,
    int (*is_default)(const struct stmt *, void *), void *arg,
    size_t *outlen, struct save_stats *ss)
{
	struct merge	 m;
	const struct stmt *st;
	const char	*p, *end = base + len, *nl;
	char		*text = NULL;
	size_t		 i, size = 0;
	int		 bad = 0;

	memset(ss, 0, sizeof(*ss));
	if (merge_init(&m, run) == -1 ||
	    (m.out = open_memstream(&text, &size)) == NULL) {
		merge_free(&m);
		errno = ENOMEM;
		return NULL;
	}
	for (p = base; base != NULL && p < end && !bad; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		bad = merge_line(&m, p, (size_t)(nl - p), own, ss) == -1;
	}
	for (i = 0; i < run->n && !bad; i++) {
		if (m.matched[i])
			continue;
		st = stmt_vec_get(run, i, &m.tmp);
		if ((own && !stmt_runtime(st->kind)) || is_default(st, arg))
			continue;
		merge_print(&m, st, NULL, 0);
		ss->added++;
	}
	merge_free(&m);
	if (fclose(m.out) == EOF || bad) {
		free(text);
		errno = bad ? EINVAL : ENOMEM;
		return NULL;
	}
	*outlen = size;
	return text;
}

char *
save_read(const char *file, size_t *len)
{
	struct stat	 sb;
	char		*buf;
	size_t		 n = 0;
	ssize_t		 r;
	int		 fd, saved;

	if ((fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return NULL;
	if (fstat(fd, &sb) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size > SAVE_BASE_MAX) {
		close(fd);
		errno = S_ISREG(sb.st_mode) ? EFBIG : EINVAL;
		return NULL;
	}
	if ((buf = malloc((size_t)sb.st_size + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	/* What it holds now: a file that grows meanwhile is cut where it was. */
	while (n < (size_t)sb.st_size) {
		if ((r = read(fd, buf + n, (size_t)sb.st_size - n)) == -1) {
			if (errno == EINTR)
				continue;
			saved = errno;
			free(buf);
			close(fd);
			errno = saved;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}
