/*
 * The command language: one line in, one statement (or an error and its
 * column) out.  The grammar is the keyword table below, as in bgpctl's
 * parser: each keyword names the statement kind, its operation and the
 * function that reads its arguments, and the printer walks the same table
 * back so that what it prints always parses again.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ether.h"
#include "stmt.h"

/*
 * The longest statement (a link with every option) takes eight tokens; one
 * more shows what is extra.
 */
#define TOKENS_MAX	10
#define HOSTNAME_MAX	253
#define LABEL_MAX	63
/* A bad token is quoted in a message, cut so the message stays readable. */
#define SHOW_MAX	40
#define SHOW_LEN	(SHOW_MAX + sizeof("..."))

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

struct token {
	const char	*s;
	int		 col;
};

struct parser;

struct keyword {
	const char	*word;
	enum stmt_kind	 kind;
	enum stmt_op	 op;
	int		(*args)(struct parser *, struct stmt *);
	const char	*usage;		/* what follows the keyword */
};

struct parser {
	const struct keyword	*kw;	/* NULL until the keyword is read */
	struct token		 tok[TOKENS_MAX];
	int			 ntok;	/* tokens kept, at most TOKENS_MAX */
	int			 eol;	/* column just past the statement */
	struct stmt_error	*err;
	/* Unquoted token text; never longer than the line it comes from. */
	char			 text[STMT_LINE_MAX + 1];
};

struct word {
	const char	*word;
	int		 value;
};

static int	args_name(struct parser *, struct stmt *);
static int	args_listen(struct parser *, struct stmt *);
static int	args_keepalive(struct parser *, struct stmt *);
static int	args_learn(struct parser *, struct stmt *);
static int	args_interface(struct parser *, struct stmt *);
static int	args_link(struct parser *, struct stmt *);
static int	args_route(struct parser *, struct stmt *);
static int	args_show(struct parser *, struct stmt *);
static int	args_path(struct parser *, struct stmt *);
static int	args_account(struct parser *, struct stmt *);

#define SHOW_USAGE	"links, routes, interfaces, macs, stats or config"
#define ROUTE_USAGE	"SRC DST link|interface NAME"
#define IFACE_USAGE	"NAME tap [DEV]"
/* What must follow; the options are in the manual. */
#define LINK_USAGE	"NAME HOST:PORT"
#define LISTEN_USAGE	"ADDR:PORT"

/*
 * The printer takes the first entry of a kind and op, so the plain form
 * comes before its add- alias.
 */
static const struct keyword keywords[] = {
	{ "node",	STMT_NODE,	STMT_OP_SET,
	    args_name,	"NAME" },
	{ "network",	STMT_NETWORK,	STMT_OP_SET,
	    args_name,	"NAME" },
	{ "listen",	STMT_LISTEN,	STMT_OP_SET,
	    args_listen,	LISTEN_USAGE },
	{ "control",	STMT_CONTROL,	STMT_OP_SET,
	    args_path,	"PATH" },
	{ "keepalive",	STMT_KEEPALIVE,	STMT_OP_SET,
	    args_keepalive,	"SECONDS (1..3600)" },
	{ "learn",	STMT_LEARN,	STMT_OP_SET,
	    args_learn,	"yes or no" },
	{ "interface",	STMT_INTERFACE,	STMT_OP_SET,
	    args_interface,	IFACE_USAGE },
	{ "add-interface",	STMT_INTERFACE,	STMT_OP_SET,
	    args_interface,	IFACE_USAGE },
	{ "del-interface",	STMT_INTERFACE,	STMT_OP_DEL,
	    args_name,	"NAME" },
	{ "link",	STMT_LINK,	STMT_OP_SET,
	    args_link,	LINK_USAGE },
	{ "add-link",	STMT_LINK,	STMT_OP_SET,
	    args_link,	LINK_USAGE },
	{ "del-link",	STMT_LINK,	STMT_OP_DEL,
	    args_name,	"NAME" },
	{ "route",	STMT_ROUTE,	STMT_OP_SET,
	    args_route,	ROUTE_USAGE },
	{ "add-route",	STMT_ROUTE,	STMT_OP_SET,
	    args_route,	ROUTE_USAGE },
	{ "del-route",	STMT_ROUTE,	STMT_OP_DEL,
	    args_route,	ROUTE_USAGE },
	{ "show",	STMT_SHOW,	STMT_OP_SET,
	    args_show,	SHOW_USAGE },
	{ "tls-cert",	STMT_TLS_CERT,	STMT_OP_SET,
	    args_path,	"FILE" },
	{ "tls-key",	STMT_TLS_KEY,	STMT_OP_SET,
	    args_path,	"FILE" },
	{ "tls-ca",	STMT_TLS_CA,	STMT_OP_SET,
	    args_path,	"FILE" },
	{ "tls-crl",	STMT_TLS_CRL,	STMT_OP_SET,
	    args_path,	"FILE" },
	{ "control-group", STMT_CONTROL_GROUP, STMT_OP_SET,
	    args_account, "GROUP" },
	{ "user",	STMT_USER,	STMT_OP_SET,
	    args_account, "NAME" },
};

static const struct word show_words[] = {
	{ "links",	STMT_SHOW_LINKS },
	{ "routes",	STMT_SHOW_ROUTES },
	{ "interfaces",	STMT_SHOW_INTERFACES },
	{ "macs",	STMT_SHOW_MACS },
	{ "stats",	STMT_SHOW_STATS },
	{ "config",	STMT_SHOW_CONFIG },
};

static const struct word target_words[] = {
	{ "link",	TARGET_LINK },
	{ "interface",	TARGET_INTERFACE },
};

static const struct word iftype_words[] = {
	{ "tap",	STMT_IF_TAP },
};

static const struct word learn_words[] = {
	{ "yes",	1 },
	{ "no",		0 },
};

static int
word_value(const struct word *w, size_t n, const char *s, int *value)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (strcmp(w[i].word, s) == 0) {
			*value = w[i].value;
			return 0;
		}
	}
	return -1;
}

static const char *
word_name(const struct word *w, size_t n, int value)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (w[i].value == value)
			return w[i].word;
	return NULL;
}

static const struct keyword *
keyword_lookup(const char *s)
{
	size_t	 i;

	for (i = 0; i < nitems(keywords); i++)
		if (strcmp(keywords[i].word, s) == 0)
			return &keywords[i];
	return NULL;
}

static const char *
keyword_word(enum stmt_kind kind, enum stmt_op op)
{
	size_t	 i;

	for (i = 0; i < nitems(keywords); i++)
		if (keywords[i].kind == kind && keywords[i].op == op)
			return keywords[i].word;
	return NULL;
}

static int
is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
is_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* Control characters only get into a token by mistake (or by an attack). */
static int
is_control(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/*
 * Copies a token for quoting in a message: cut to SHOW_MAX characters, and
 * anything unprintable (a tab from a quoted token, a byte of UTF-8) made '?'
 * so that the message is safe to log and send back.
 */
static const char *
show(char buf[SHOW_LEN], const char *s)
{
	size_t		 i;
	unsigned char	 c;

	for (i = 0; s[i] != '\0' && i < SHOW_MAX; i++) {
		c = s[i];
		buf[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	if (s[i] != '\0') {
		memcpy(buf + i, "...", sizeof("..."));
		return buf;
	}
	buf[i] = '\0';
	return buf;
}

static int
fail(struct parser *p, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Every message starts with the keyword, once the keyword is known. */
static int
fail(struct parser *p, int col, const char *fmt, ...)
{
	char	*msg = p->err->msg;
	size_t	 off = 0;
	va_list	 ap;

	/* Keywords are short: the prefix always fits. */
	if (p->kw != NULL)
		off = (size_t)snprintf(msg, sizeof(p->err->msg), "%s: ",
		    p->kw->word);
	va_start(ap, fmt);
	vsnprintf(msg + off, sizeof(p->err->msg) - off, fmt, ap);
	va_end(ap);
	p->err->column = col;
	return -1;
}

/*
 * Reads the quoted part of a token that starts at line[*i] (the opening
 * quote) and leaves *i past the closing quote.
 */
static int
lex_quoted(struct parser *p, const char *line, size_t len, size_t *i,
    char **out, int col)
{
	size_t		 j = *i + 1;
	unsigned char	 c;

	for (;;) {
		if (j >= len)
			return fail(p, col, "unterminated quote");
		c = line[j];
		if (c == '"')
			break;
		if (c == '\\') {
			if (++j >= len)
				return fail(p, col, "unterminated quote");
			c = line[j];
			if (c != '"' && c != '\\') {
				if (c <= ' ' || c >= 0x7f)
					return fail(p, col,
					    "invalid escape in quoted string");
				return fail(p, col, "invalid escape '\\%c' "
				    "in quoted string", c);
			}
		} else if (is_control(c))
			return fail(p, col, "invalid character 0x%02x", c);
		*(*out)++ = (char)c;
		j++;
	}
	*i = j + 1;
	return 0;
}

/*
 * Splits the line into tokens, undoing quotes and escapes.  A quoted part
 * may sit inside a token ("/tmp/"a b"/x" is one token), as in the shell.
 * The keyword is looked up as soon as it is complete, so that the errors
 * after it can name it and an unknown keyword is the first thing reported.
 */
static int
lex(struct parser *p, const char *line, size_t len)
{
	char	 b[SHOW_LEN];
	char	*out = p->text;
	size_t	 i = 0;
	int	 col;

	while (i < len) {
		if (is_blank(line[i])) {
			i++;
			continue;
		}
		if (line[i] == '#')
			break;
		col = (int)i + 1;
		if (p->ntok < TOKENS_MAX) {
			p->tok[p->ntok].s = out;
			p->tok[p->ntok].col = col;
		}
		while (i < len && !is_blank(line[i]) && line[i] != '#') {
			if (line[i] == '"') {
				if (lex_quoted(p, line, len, &i, &out,
				    col) == -1)
					return -1;
			} else if (is_control((unsigned char)line[i]))
				return fail(p, col, "invalid character 0x%02x",
				    (unsigned char)line[i]);
			else
				*out++ = line[i++];
		}
		*out++ = '\0';
		if (p->ntok < TOKENS_MAX)
			p->ntok++;
		if (p->ntok == 1 &&
		    (p->kw = keyword_lookup(p->tok[0].s)) == NULL)
			return fail(p, col, "unknown statement '%s'",
			    show(b, p->tok[0].s));
	}
	p->eol = (int)i + 1;
	return 0;
}

/* Argument i (the keyword is 0), or the usage when the line ends before. */
static const struct token *
arg(struct parser *p, int i)
{
	if (i >= p->ntok) {
		fail(p, p->eol, "expected %s", p->kw->usage);
		return NULL;
	}
	return &p->tok[i];
}

/* Checks that nothing follows the n tokens the statement took. */
static int
end(struct parser *p, int n)
{
	char	 b[SHOW_LEN];

	if (p->ntok > n)
		return fail(p, p->tok[n].col, "unexpected '%s'",
		    show(b, p->tok[n].s));
	return 0;
}

/* Decimal digits only: no sign, no blanks, no base prefix. */
static int
parse_uint(const char *s, unsigned int max, unsigned int *v)
{
	unsigned int	 n = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (!is_digit(*s))
			return -1;
		n = n * 10 + (unsigned int)(*s - '0');
		if (n > max)
			return -1;
	}
	*v = n;
	return 0;
}

static int
name_arg(struct parser *p, int i, char name[STMT_NAME_MAX + 1])
{
	const struct token	*t;
	char			 b[SHOW_LEN];

	if ((t = arg(p, i)) == NULL)
		return -1;
	if (!stmt_valid_name(t->s))
		return fail(p, t->col, "invalid name '%s'", show(b, t->s));
	memcpy(name, t->s, strlen(t->s) + 1);
	return 0;
}

/* Labels of letters, digits and '-' (not at either end), dots between. */
static int
valid_hostname(const char *s)
{
	size_t	 i, label = 0, len = strlen(s);

	if (len == 0 || len > HOSTNAME_MAX)
		return 0;
	for (i = 0; i <= len; i++) {
		if (s[i] == '.' || s[i] == '\0') {
			if (label == 0 || label > LABEL_MAX || s[i - 1] == '-')
				return 0;
			label = 0;
		} else if (is_alnum(s[i]))
			label++;
		else if (s[i] == '-' && label > 0)
			label++;
		else
			return 0;
	}
	return 1;
}

/*
 * A top-level label of digits only is no host name (RFC 1123), so such a
 * host is taken for an IPv4 literal and "10.0.0.256" is reported as a bad
 * address instead of being looked up.
 */
static int
looks_ipv4(const char *s)
{
	const char	*last;

	last = strrchr(s, '.');
	last = last == NULL ? s : last + 1;
	if (*last == '\0')
		return 0;
	for (; *last != '\0'; last++)
		if (!is_digit(*last))
			return 0;
	return 1;
}

static int
hostport_arg(struct parser *p, int i, int wildcard, struct stmt_hostport *hp)
{
	const struct token	*t;
	const char		*s, *rb, *colon, *port;
	char			 host[STMT_HOST_MAX + 1];
	char			 b[SHOW_LEN];
	struct in_addr		 in4;
	struct in6_addr		 in6;
	unsigned int		 v;
	size_t			 hlen;

	if ((t = arg(p, i)) == NULL)
		return -1;
	s = t->s;
	if (s[0] == '[') {
		if ((rb = strchr(s, ']')) == NULL)
			return fail(p, t->col, "missing ']' in '%s'",
			    show(b, s));
		if (rb[1] != ':')
			return fail(p, t->col, "expected ':' after ']' in '%s'",
			    show(b, s));
		hlen = (size_t)(rb - s - 1);
		if (hlen > STMT_HOST_MAX)
			hlen = STMT_HOST_MAX;
		memcpy(host, s + 1, hlen);
		host[hlen] = '\0';
		/* A scope only means something on this host. */
		if (strchr(host, '%') != NULL)
			return fail(p, t->col, "scope ids are not supported "
			    "in '%s'", show(b, host));
		if (inet_pton(AF_INET6, host, &in6) != 1)
			return fail(p, t->col, "invalid IPv6 address '%s'",
			    show(b, host));
		/* One spelling per address, so that equal means equal. */
		if (inet_ntop(AF_INET6, &in6, hp->host,
		    sizeof(hp->host)) == NULL)
			return fail(p, t->col, "invalid IPv6 address '%s'",
			    show(b, host));
		port = rb + 2;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			return fail(p, t->col, "missing port in '%s'",
			    show(b, s));
		if (memchr(s, ':', (size_t)(colon - s)) != NULL)
			return fail(p, t->col, "invalid address '%s' "
			    "(use [ADDR]:PORT for IPv6)", show(b, s));
		hlen = (size_t)(colon - s);
		if (hlen == 0)
			return fail(p, t->col, "missing host in '%s'",
			    show(b, s));
		/* Cut, a host too long for any form is still too long. */
		if (hlen > STMT_HOST_MAX)
			hlen = STMT_HOST_MAX;
		memcpy(host, s, hlen);
		host[hlen] = '\0';
		if (strcmp(host, "*") == 0) {
			if (!wildcard)
				return fail(p, t->col, "invalid host '*' "
				    "(only listen accepts '*')");
		} else if (looks_ipv4(host)) {
			if (inet_pton(AF_INET, host, &in4) != 1)
				return fail(p, t->col,
				    "invalid IPv4 address '%s'", show(b, host));
		} else if (!valid_hostname(host))
			return fail(p, t->col, "invalid host name '%s'",
			    show(b, host));
		memcpy(hp->host, host, strlen(host) + 1);
		port = colon + 1;
	}
	if (*port == '\0')
		return fail(p, t->col, "missing port in '%s'", show(b, s));
	if (parse_uint(port, 65535, &v) == -1 || v == 0)
		return fail(p, t->col, "invalid port '%s' (1..65535)",
		    show(b, port));
	hp->port = (uint16_t)v;
	return 0;
}

static int
match_arg(struct parser *p, int i, struct stmt_match *m)
{
	const struct token	*t;
	const char		*s;
	char			 b[SHOW_LEN];

	if ((t = arg(p, i)) == NULL)
		return -1;
	s = t->s;
	if (strcmp(s, "any") == 0) {
		m->kind = MATCH_ANY;
		return 0;
	}
	m->kind = MATCH_MAC;
	if (strncmp(s, "not-", 4) == 0) {
		m->kind = MATCH_NOT;
		s += 4;
	}
	if (ether_parse(s, m->mac) == -1)
		return fail(p, t->col, "invalid MAC address '%s'",
		    show(b, t->s));
	return 0;
}

/* node, network, del-link, del-interface: NAME */
static int
args_name(struct parser *p, struct stmt *st)
{
	if (name_arg(p, 1, st->name) == -1)
		return -1;
	return end(p, 2);
}

/* "tls" given once: the option loops of listen and link. */
static int
tls_opt(struct parser *p, const struct token *t, struct stmt *st)
{
	if (st->tls)
		return fail(p, t->col, "tls given twice");
	st->tls = 1;
	return 0;
}

/*
 * One element of an allow list: ADDR or ADDR/PREFIX.  Host bits must be
 * clear, so that what is written is what is matched.
 */
static int
cidr_parse(struct parser *p, int col, const char *s, struct stmt_cidr *c)
{
	char		 addr[INET6_ADDRSTRLEN + 1], net[STMT_CIDR_STRLEN];
	char		 b[SHOW_LEN];
	const char	*slash;
	unsigned int	 plen, max, i;
	size_t		 alen;

	memset(c, 0, sizeof(*c));
	slash = strchr(s, '/');
	alen = slash != NULL ? (size_t)(slash - s) : strlen(s);
	if (alen == 0)
		return fail(p, col, "missing address in '%s'", show(b, s));
	if (alen >= sizeof(addr))
		return fail(p, col, "invalid address '%s'", show(b, s));
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (strchr(addr, ':') != NULL) {
		if (inet_pton(AF_INET6, addr, c->addr) != 1)
			return fail(p, col, "invalid IPv6 address '%s'",
			    show(b, addr));
		c->family = AF_INET6;
		max = 128;
	} else {
		if (inet_pton(AF_INET, addr, c->addr) != 1)
			return fail(p, col, "invalid IPv4 address '%s'",
			    show(b, addr));
		c->family = AF_INET;
		max = 32;
	}
	plen = max;
	if (slash != NULL && parse_uint(slash + 1, max, &plen) == -1)
		return fail(p, col, "invalid prefix length '%s' (0..%u)",
		    show(b, slash + 1), max);
	c->plen = (uint8_t)plen;
	for (i = plen; i < max; i++) {
		if (c->addr[i / 8] & (0x80 >> (i % 8))) {
			for (; i < max; i++)
				c->addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
			return fail(p, col, "'%s' has host bits set (the "
			    "network is %s)", show(b, s),
			    stmt_cidr_format(c, net, sizeof(net)));
		}
	}
	return 0;
}

/* allow CIDR[,CIDR...]: one token, split at commas. */
static int
allow_opt(struct parser *p, int i, struct stmt *st)
{
	const struct token	*t = &p->tok[i - 1];
	const char		*s, *comma;
	char			 elem[STMT_CIDR_STRLEN + 8];
	size_t			 len;

	if (st->nallow > 0)
		return fail(p, t->col, "allow given twice");
	if (i >= p->ntok)
		return fail(p, p->eol, "expected CIDR[,CIDR...] after allow");
	t = &p->tok[i];
	for (s = t->s;; s = comma + 1) {
		comma = strchr(s, ',');
		len = comma != NULL ? (size_t)(comma - s) : strlen(s);
		if (len == 0)
			return fail(p, t->col, "empty entry in allow list");
		if (st->nallow == STMT_ALLOW_MAX)
			return fail(p, t->col, "too many entries in allow "
			    "list (max %d)", STMT_ALLOW_MAX);
		/* Cut: anything this long is invalid anyway. */
		if (len >= sizeof(elem))
			len = sizeof(elem) - 1;
		memcpy(elem, s, len);
		elem[len] = '\0';
		if (cidr_parse(p, t->col, elem, &st->allow[st->nallow]) == -1)
			return -1;
		st->nallow++;
		if (comma == NULL)
			break;
	}
	return 0;
}

static int
args_listen(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	int			 i;

	if (hostport_arg(p, 1, 1, &st->addr) == -1)
		return -1;
	for (i = 2; i < p->ntok; i++) {
		t = &p->tok[i];
		if (strcmp(t->s, "tls") == 0) {
			if (tls_opt(p, t, st) == -1)
				return -1;
		} else if (strcmp(t->s, "allow") == 0) {
			if (allow_opt(p, ++i, st) == -1)
				return -1;
		} else
			return fail(p, t->col, "unexpected '%s'",
			    show(b, t->s));
	}
	return 0;
}

/* BYTES: decimal, with an optional binary suffix k, m or g. */
static int
parse_bytes(const char *s, uint32_t *v)
{
	char		 digits[16];
	size_t		 len = strlen(s);
	unsigned int	 n, mult = 1;

	if (len == 0 || len >= sizeof(digits))
		return -1;
	switch (s[len - 1]) {
	case 'k':
	case 'K':
		mult = 1024;
		break;
	case 'm':
	case 'M':
		mult = 1024 * 1024;
		break;
	case 'g':
	case 'G':
		mult = 1024 * 1024 * 1024;
		break;
	}
	memcpy(digits, s, len + 1);
	if (mult != 1)
		digits[len - 1] = '\0';
	if (parse_uint(digits, STMT_QUEUE_MAX / mult, &n) == -1)
		return -1;
	n *= mult;
	if (n < STMT_QUEUE_MIN)
		return -1;
	*v = n;
	return 0;
}

static int
args_link(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	int			 i;

	if (name_arg(p, 1, st->name) == -1)
		return -1;
	if (hostport_arg(p, 2, 0, &st->addr) == -1)
		return -1;
	for (i = 3; i < p->ntok; i++) {
		t = &p->tok[i];
		if (strcmp(t->s, "tls") == 0) {
			if (tls_opt(p, t, st) == -1)
				return -1;
		} else if (strcmp(t->s, "peer") == 0) {
			if (st->peer[0] != '\0')
				return fail(p, t->col, "peer given twice");
			if (i + 1 >= p->ntok)
				return fail(p, p->eol,
				    "expected NODE after peer");
			if (name_arg(p, ++i, st->peer) == -1)
				return -1;
		} else if (strcmp(t->s, "queue") == 0) {
			if (st->queue != 0)
				return fail(p, t->col, "queue given twice");
			if (i + 1 >= p->ntok)
				return fail(p, p->eol,
				    "expected BYTES after queue");
			t = &p->tok[++i];
			if (parse_bytes(t->s, &st->queue) == -1)
				return fail(p, t->col, "invalid queue size "
				    "'%s' (128k..1g)", show(b, t->s));
		} else
			return fail(p, t->col, "unexpected '%s'",
			    show(b, t->s));
	}
	/* One spelling per link: a peer of the link's own name is none. */
	if (strcmp(st->peer, st->name) == 0)
		st->peer[0] = '\0';
	return 0;
}

/* control, tls-cert, tls-key, tls-ca, tls-crl: an absolute path. */
static int
args_path(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	size_t			 len;

	if ((t = arg(p, 1)) == NULL)
		return -1;
	len = strlen(t->s);
	if (len == 0)
		return fail(p, t->col, "empty path");
	/* The daemon changes directory; a relative path would move. */
	if (t->s[0] != '/')
		return fail(p, t->col, "path '%s' is not absolute",
		    show(b, t->s));
	if (len > STMT_PATH_MAX)
		return fail(p, t->col, "path too long (max %d characters)",
		    STMT_PATH_MAX);
	memcpy(st->path, t->s, len + 1);
	return end(p, 2);
}

static int
args_keepalive(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];

	if ((t = arg(p, 1)) == NULL)
		return -1;
	if (parse_uint(t->s, 3600, &st->num) == -1 || st->num == 0)
		return fail(p, t->col, "invalid seconds '%s' (1..3600)",
		    show(b, t->s));
	return end(p, 2);
}

static int
args_learn(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];

	if ((t = arg(p, 1)) == NULL)
		return -1;
	if (word_value(learn_words, nitems(learn_words), t->s,
	    &st->flag) == -1)
		return fail(p, t->col,
		    "invalid value '%s' (expected yes or no)", show(b, t->s));
	return end(p, 2);
}

static int
args_interface(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	int			 type;

	if (name_arg(p, 1, st->name) == -1)
		return -1;
	if ((t = arg(p, 2)) == NULL)
		return -1;
	if (word_value(iftype_words, nitems(iftype_words), t->s, &type) == -1)
		return fail(p, t->col, "unknown type '%s' (expected tap)",
		    show(b, t->s));
	st->iftype = type;
	if (p->ntok <= 3)
		return 0;
	t = &p->tok[3];
	if (!stmt_valid_dev(t->s))
		return fail(p, t->col, "invalid device name '%s'",
		    show(b, t->s));
	memcpy(st->dev, t->s, strlen(t->s) + 1);
	return end(p, 4);
}

static int
args_account(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];

	if ((t = arg(p, 1)) == NULL)
		return -1;
	if (!stmt_valid_account(t->s))
		return fail(p, t->col, "invalid %s name '%s'",
		    p->kw->kind == STMT_USER ? "user" : "group",
		    show(b, t->s));
	memcpy(st->account, t->s, strlen(t->s) + 1);
	return end(p, 2);
}

/* route, add-route, del-route: SRC DST link|interface NAME */
static int
args_route(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	int			 target;

	if (match_arg(p, 1, &st->src) == -1 || match_arg(p, 2, &st->dst) == -1)
		return -1;
	if ((t = arg(p, 3)) == NULL)
		return -1;
	if (word_value(target_words, nitems(target_words), t->s,
	    &target) == -1)
		return fail(p, t->col,
		    "unknown target '%s' (expected link or interface)",
		    show(b, t->s));
	st->target = target;
	if (name_arg(p, 4, st->name) == -1)
		return -1;
	return end(p, 5);
}

static int
args_show(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	int			 what;

	if ((t = arg(p, 1)) == NULL)
		return -1;
	if (word_value(show_words, nitems(show_words), t->s, &what) == -1)
		return fail(p, t->col, "unknown item '%s' (expected "
		    SHOW_USAGE ")", show(b, t->s));
	st->show = what;
	return end(p, 2);
}

int
stmt_parse(const char *line, struct stmt *st, struct stmt_error *err)
{
	struct parser		 p;
	struct stmt		 scratch;
	struct stmt_error	 ignored;
	size_t			 len;

	/* A syntax check needs neither. */
	if (st == NULL)
		st = &scratch;
	if (err == NULL)
		err = &ignored;
	memset(st, 0, sizeof(*st));
	memset(err, 0, sizeof(*err));
	p.kw = NULL;
	p.ntok = 0;
	p.eol = 1;
	p.err = err;

	/* Enough to tell a line that is too long, even with its "\r\n". */
	len = strnlen(line, STMT_LINE_MAX + 3);
	if (len > 0 && line[len - 1] == '\n') {
		len--;
		if (len > 0 && line[len - 1] == '\r')
			len--;
	}
	if (len > STMT_LINE_MAX)
		return fail(&p, STMT_LINE_MAX + 1,
		    "line too long (more than %d characters)", STMT_LINE_MAX);
	if (lex(&p, line, len) == -1 || (p.ntok > 0 &&
	    p.kw->args(&p, st) == -1)) {
		/* Never hand back half a statement. */
		memset(st, 0, sizeof(*st));
		return -1;
	}
	if (p.ntok == 0)
		return 0;
	st->kind = p.kw->kind;
	st->op = p.kw->op;
	return 1;
}

/* Quotes a path only when it would not come back as one plain token. */
static const char *
quote_path(const char *s, char *buf, size_t len)
{
	size_t	 i, o = 0;

	if (s[0] != '\0' && strpbrk(s, " \t#\"") == NULL)
		return s;
	if (len < 3) {
		if (len > 0)
			buf[0] = '\0';
		return buf;
	}
	buf[o++] = '"';
	for (i = 0; s[i] != '\0' && o + 3 < len; i++) {
		if (s[i] == '"' || s[i] == '\\')
			buf[o++] = '\\';
		buf[o++] = s[i];
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* " allow A,B,..." for a listener that has a list; "" otherwise. */
static const char *
format_allow(const struct stmt *st, char *buf, size_t len)
{
	char		 c[STMT_CIDR_STRLEN];
	size_t		 off = 0;
	unsigned int	 i;

	buf[0] = '\0';
	for (i = 0; i < st->nallow && i < STMT_ALLOW_MAX; i++) {
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    i == 0 ? " allow " : ",",
		    stmt_cidr_format(&st->allow[i], c, sizeof(c)));
		if (off >= len)
			break;
	}
	return buf;
}

/* Binary suffixes where they are exact: what was written, mostly. */
static const char *
format_queue(uint32_t q, char *buf, size_t len)
{
	if (q == 0)
		buf[0] = '\0';
	else if (q % (1024 * 1024 * 1024) == 0)
		snprintf(buf, len, " queue %ug", q / (1024 * 1024 * 1024));
	else if (q % (1024 * 1024) == 0)
		snprintf(buf, len, " queue %um", q / (1024 * 1024));
	else if (q % 1024 == 0)
		snprintf(buf, len, " queue %uk", q / 1024);
	else
		snprintf(buf, len, " queue %u", q);
	return buf;
}

int
stmt_print(const struct stmt *st, char *buf, size_t len)
{
	char		 addr[STMT_HOST_MAX + 9];
	char		 src[24], dst[24];
	char		 path[2 * STMT_PATH_MAX + 3];
	char		 allow[STMT_ALLOW_MAX * (STMT_CIDR_STRLEN + 1) + 8];
	char		 queue[32];
	const char	*kw, *w;

	if ((kw = keyword_word(st->kind, st->op)) == NULL)
		goto bad;
	switch (st->kind) {
	case STMT_NODE:
	case STMT_NETWORK:
		return snprintf(buf, len, "%s %s", kw, st->name);
	case STMT_LISTEN:
		return snprintf(buf, len, "%s %s%s%s", kw,
		    stmt_hostport_format(&st->addr, addr, sizeof(addr)),
		    st->tls ? " tls" : "",
		    format_allow(st, allow, sizeof(allow)));
	case STMT_CONTROL:
	case STMT_TLS_CERT:
	case STMT_TLS_KEY:
	case STMT_TLS_CA:
	case STMT_TLS_CRL:
		return snprintf(buf, len, "%s %s", kw,
		    quote_path(st->path, path, sizeof(path)));
	case STMT_CONTROL_GROUP:
	case STMT_USER:
		return snprintf(buf, len, "%s %s", kw, st->account);
	case STMT_KEEPALIVE:
		return snprintf(buf, len, "%s %u", kw, st->num);
	case STMT_LEARN:
		return snprintf(buf, len, "%s %s", kw, st->flag ? "yes" : "no");
	case STMT_INTERFACE:
		if (st->op == STMT_OP_DEL)
			return snprintf(buf, len, "%s %s", kw, st->name);
		if ((w = word_name(iftype_words, nitems(iftype_words),
		    st->iftype)) == NULL)
			goto bad;
		return snprintf(buf, len, "%s %s %s%s%s", kw, st->name, w,
		    st->dev[0] != '\0' ? " " : "", st->dev);
	case STMT_LINK:
		if (st->op == STMT_OP_DEL)
			return snprintf(buf, len, "%s %s", kw, st->name);
		return snprintf(buf, len, "%s %s %s%s%s%s%s", kw, st->name,
		    stmt_hostport_format(&st->addr, addr, sizeof(addr)),
		    st->tls ? " tls" : "", st->peer[0] != '\0' ? " peer " : "",
		    st->peer, format_queue(st->queue, queue, sizeof(queue)));
	case STMT_ROUTE:
		if ((w = word_name(target_words, nitems(target_words),
		    st->target)) == NULL)
			goto bad;
		return snprintf(buf, len, "%s %s %s %s %s", kw,
		    stmt_match_format(&st->src, src),
		    stmt_match_format(&st->dst, dst), w, st->name);
	case STMT_SHOW:
		if ((w = word_name(show_words, nitems(show_words),
		    st->show)) == NULL)
			goto bad;
		return snprintf(buf, len, "%s %s", kw, w);
	}
 bad:
	if (len > 0)
		buf[0] = '\0';
	return -1;
}

char *
stmt_match_format(const struct stmt_match *m, char *buf)
{
	char	 mac[ETHER_ADDR_STRLEN];

	switch (m->kind) {
	case MATCH_ANY:
		snprintf(buf, 24, "any");
		break;
	case MATCH_NOT:
		snprintf(buf, 24, "not-%s", ether_format(m->mac, mac));
		break;
	case MATCH_MAC:
		snprintf(buf, 24, "%s", ether_format(m->mac, mac));
		break;
	default:
		snprintf(buf, 24, "?");
		break;
	}
	return buf;
}

char *
stmt_cidr_format(const struct stmt_cidr *c, char *buf, size_t len)
{
	char	 a[INET6_ADDRSTRLEN];

	if (inet_ntop(c->family, c->addr, a, sizeof(a)) == NULL)
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s/%u", a, (unsigned int)c->plen);
	return buf;
}

char *
stmt_hostport_format(const struct stmt_hostport *hp, char *buf, size_t len)
{
	if (strchr(hp->host, ':') != NULL)
		snprintf(buf, len, "[%s]:%u", hp->host, (unsigned int)hp->port);
	else
		snprintf(buf, len, "%s:%u", hp->host, (unsigned int)hp->port);
	return buf;
}

static int
match_equal(const struct stmt_match *a, const struct stmt_match *b)
{
	if (a->kind != b->kind)
		return 0;
	return a->kind == MATCH_ANY ||
	    memcmp(a->mac, b->mac, ETHER_ADDR_LEN) == 0;
}

/* Host names are case-blind; IPv6 literals are stored in one spelling. */
static int
hostport_equal(const struct stmt_hostport *a, const struct stmt_hostport *b)
{
	return a->port == b->port && strcasecmp(a->host, b->host) == 0;
}

static int
allow_equal(const struct stmt *a, const struct stmt *b)
{
	unsigned int	 i;
	size_t		 alen;

	if (a->nallow != b->nallow || a->nallow > STMT_ALLOW_MAX)
		return 0;
	for (i = 0; i < a->nallow; i++) {
		alen = a->allow[i].family == AF_INET ? 4 : 16;
		if (a->allow[i].family != b->allow[i].family ||
		    a->allow[i].plen != b->allow[i].plen ||
		    memcmp(a->allow[i].addr, b->allow[i].addr, alen) != 0)
			return 0;
	}
	return 1;
}

/* An interface without DEV uses its name as the device name. */
static const char *
interface_dev(const struct stmt *st)
{
	return st->dev[0] != '\0' ? st->dev : st->name;
}

int
stmt_equal(const struct stmt *a, const struct stmt *b)
{
	if (a->kind != b->kind || a->op != b->op)
		return 0;
	switch (a->kind) {
	case STMT_NODE:
	case STMT_NETWORK:
		return strcmp(a->name, b->name) == 0;
	case STMT_LISTEN:
		return hostport_equal(&a->addr, &b->addr) &&
		    !a->tls == !b->tls && allow_equal(a, b);
	case STMT_CONTROL:
	case STMT_TLS_CERT:
	case STMT_TLS_KEY:
	case STMT_TLS_CA:
	case STMT_TLS_CRL:
		return strcmp(a->path, b->path) == 0;
	case STMT_CONTROL_GROUP:
	case STMT_USER:
		return strcmp(a->account, b->account) == 0;
	case STMT_KEEPALIVE:
		return a->num == b->num;
	case STMT_LEARN:
		return !a->flag == !b->flag;
	case STMT_INTERFACE:
		if (strcmp(a->name, b->name) != 0)
			return 0;
		return a->op == STMT_OP_DEL || (a->iftype == b->iftype &&
		    strcmp(interface_dev(a), interface_dev(b)) == 0);
	case STMT_LINK:
		if (strcmp(a->name, b->name) != 0)
			return 0;
		return a->op == STMT_OP_DEL ||
		    (hostport_equal(&a->addr, &b->addr) &&
		    !a->tls == !b->tls && strcmp(a->peer, b->peer) == 0 &&
		    a->queue == b->queue);
	case STMT_ROUTE:
		return match_equal(&a->src, &b->src) &&
		    match_equal(&a->dst, &b->dst) &&
		    a->target == b->target && strcmp(a->name, b->name) == 0;
	case STMT_SHOW:
		return a->show == b->show;
	}
	return 0;
}

int
stmt_valid_name(const char *s)
{
	size_t	 i;

	if (!is_alnum(s[0]))
		return 0;
	for (i = 1; s[i] != '\0'; i++) {
		if (i >= STMT_NAME_MAX)
			return 0;
		if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			return 0;
	}
	return 1;
}

/* Linux also refuses "." and "..", which would name directories in sysfs. */
int
stmt_valid_dev(const char *s)
{
	size_t	 i;

	if (s[0] == '\0' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= STMT_DEV_MAX)
			return 0;
		if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			return 0;
	}
	return 1;
}

/* Portable user and group names (POSIX), as useradd takes them. */
int
stmt_valid_account(const char *s)
{
	size_t	 i;

	if (s[0] == '\0' || s[0] == '-')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= STMT_ACCOUNT_MAX)
			return 0;
		if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			return 0;
	}
	return 1;
}
