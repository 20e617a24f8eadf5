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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ether.h"
#include "hash.h"
#include "stmt.h"

/*
 * The longest statement (vcc class with every attribute) takes 18 tokens;
 * any token past those is a repeated or unknown attribute, reported as such.
 * A link with every option (tls, peer, queue, rate, aqm with target and
 * interval) takes sixteen.
 */
#define TOKENS_MAX	24
#define HOSTNAME_MAX	253
#define LABEL_MAX	63
/* A bad token is quoted in a message, cut so the message stays readable. */
#define SHOW_MAX	40
#define SHOW_LEN	(SHOW_MAX + sizeof("..."))
/* One allow list entry "ADDR/PLEN", as stmt_cidr_format() writes it. */
#define STMT_CIDR_STRLEN	(46 + 4)

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

/* A word show takes, and what may follow it (for help). */
struct show_word {
	const char	*word;
	enum stmt_show	 value;
	const char	*args;
};

static int	args_name(struct parser *, struct stmt *);
static int	args_listen(struct parser *, struct stmt *);
static int	args_path(struct parser *, struct stmt *);
static int	args_keepalive(struct parser *, struct stmt *);
static int	args_flag(struct parser *, struct stmt *);
static int	args_interface(struct parser *, struct stmt *);
static int	args_link(struct parser *, struct stmt *);
static int	args_route(struct parser *, struct stmt *);
static int	args_show(struct parser *, struct stmt *);
static int	args_none(struct parser *, struct stmt *);
static int	args_save(struct parser *, struct stmt *);
static int	args_reload(struct parser *, struct stmt *);
static int	args_set_link(struct parser *, struct stmt *);
static int	args_account(struct parser *, struct stmt *);
static int	args_vcc(struct parser *, struct stmt *);
static int	args_routing(struct parser *, struct stmt *);
static int	word_arg(struct parser *, int, const char *);
static int	args_advertise(struct parser *, struct stmt *);
static int	args_adapt(struct parser *, struct stmt *);
static int	args_http(struct parser *, struct stmt *);
static int	args_liveness(struct parser *, struct stmt *);
static char	*stmt_cidr_format(const struct stmt_cidr *, char *, size_t);
static int	 stmt_valid_congestion(const char *);
static int	 stmt_valid_account(const char *);

#define ROUTE_USAGE	"SRC DST link|interface NAME"
#define IFACE_USAGE	"NAME tap [DEV [persist yes|no|auto] [bridge BR]], " \
			"NAME pcap DEV [promisc yes|no] " \
			"[filter EXPR] [buffer BYTES] [up yes|no] [segment NAME] " \
			"or NAME qemu PATH"
#define LINK_USAGE	"NAME HOST:PORT"
#define SET_LINK_USAGE	"NAME [rate RATE|none] [aqm off|codel|fq_codel " \
			"[target TIME] [interval TIME]] [congestion CC|default] " \
			"[transport tcp|udp|auto] [queue BYTES]"
#define VCC_USAGE	"IFACE ecn virtual, share IFACE window BYTES or class NAME ..."
#define DELVCC_USAGE	"IFACE ecn, share IFACE or class NAME"

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
	    args_listen,	"ADDR:PORT" },
	{ "control",	STMT_CONTROL,	STMT_OP_SET,
	    args_path,	"PATH" },
	{ "keepalive",	STMT_KEEPALIVE,	STMT_OP_SET,
	    args_keepalive,	"SECONDS (1..3600)" },
	{ "learn",	STMT_LEARN,	STMT_OP_SET,
	    args_flag,	"yes or no" },
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
	    args_show,	NULL },	/* from show_words */
	{ "del-listen",	STMT_LISTEN,	STMT_OP_DEL,
	    args_listen,	"ADDR:PORT" },
	{ "add-listen",	STMT_LISTEN,	STMT_OP_SET,
	    args_listen,	"ADDR:PORT" },
	{ "reload",	STMT_RELOAD,	STMT_OP_SET,
	    args_reload,	"nothing or -n" },
	{ "save",	STMT_SAVE,	STMT_OP_SET,
	    args_save,	"[PATH]" },
	{ "set-link",	STMT_SET_LINK,	STMT_OP_SET,
	    args_set_link,	SET_LINK_USAGE },
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
	{ "vcc",	STMT_VCC,	STMT_OP_SET,
	    args_vcc,	VCC_USAGE },
	{ "add-vcc",	STMT_VCC,	STMT_OP_SET,
	    args_vcc,	VCC_USAGE },
	{ "del-vcc",	STMT_VCC,	STMT_OP_DEL,
	    args_vcc,	DELVCC_USAGE },
	{ "offload",	STMT_OFFLOAD,	STMT_OP_SET,
	    args_flag,	"yes or no" },
	{ "threads",	STMT_THREADS,	STMT_OP_SET,
	    args_flag,	"yes or no" },
	{ "routing",	STMT_ROUTING,	STMT_OP_SET,
	    args_routing, "auto [refresh SECONDS] or static" },
	{ "advertise",	STMT_ADVERTISE,	STMT_OP_SET,
	    args_advertise, "HOST:PORT" },
	{ "adapt",	STMT_ADAPT,	STMT_OP_SET,
	    args_adapt,	"shortcuts yes|no [threshold RATE] [hold SECONDS] "
	    "[idle SECONDS] [max N], or off, or on" },
	{ "http",	STMT_HTTP,	STMT_OP_SET,
	    args_http,	"ADDR:PORT [allow CIDR,...]" },
	{ "liveness",	STMT_LIVENESS,	STMT_OP_SET,
	    args_liveness,	"TIME|off [multiplier N]" },
	{ "relay",	STMT_RELAY,	STMT_OP_SET,
	    args_flag,	"yes or no" },
};

/* What show shows, in the order help and the errors list it. */
static const struct show_word show_words[] = {
	{ "links",	STMT_SHOW_LINKS,	"[all]" },
	{ "link",	STMT_SHOW_LINK,		"NAME" },
	{ "refused",	STMT_SHOW_REFUSED,	"" },
	{ "routes",	STMT_SHOW_ROUTES,	"" },
	{ "interfaces",	STMT_SHOW_INTERFACES,	"" },
	{ "macs",	STMT_SHOW_MACS,		"" },
	{ "stats",	STMT_SHOW_STATS,	"" },
	{ "config",	STMT_SHOW_CONFIG,	"" },
	{ "flows",	STMT_SHOW_FLOWS,	"" },
	{ "vcc",	STMT_SHOW_VCC,		"" },
	{ "nodes",	STMT_SHOW_NODES,	"" },
	{ "topology",	STMT_SHOW_TOPOLOGY,	"" },
	{ "traffic",	STMT_SHOW_TRAFFIC,	"[nodes|topology [THRESHOLD]|matrix [TOP]]" },
	{ "adapt",	STMT_SHOW_ADAPT,	"" },
	{ "tls",	STMT_SHOW_TLS,		"" },
};

static const struct word target_words[] = {
	{ "link",	TARGET_LINK },
	{ "interface",	TARGET_INTERFACE },
};

static const struct word iftype_words[] = {
	{ "tap",	STMT_IF_TAP },
	{ "pcap",	STMT_IF_PCAP },
	{ "qemu",	STMT_IF_QEMU },
};

static const struct word yesno_words[] = {
	{ "yes",	1 },
	{ "no",		0 },
};

static const struct word persist_words[] = {
	{ "yes",	STMT_PERSIST_YES },
	{ "no",		STMT_PERSIST_NO },
	{ "auto",	STMT_PERSIST_AUTO },
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

int
stmt_is_setting(enum stmt_kind kind)
{
	switch (kind) {
	case STMT_NODE:
	case STMT_NETWORK:
	case STMT_CONTROL:
	case STMT_KEEPALIVE:
	case STMT_LEARN:
	case STMT_OFFLOAD:
	case STMT_THREADS:
	case STMT_ROUTING:
	case STMT_ADVERTISE:
	case STMT_ADAPT:
	case STMT_HTTP:
	case STMT_TLS_CERT:
	case STMT_TLS_KEY:
	case STMT_TLS_CA:
	case STMT_TLS_CRL:
	case STMT_CONTROL_GROUP:
	case STMT_USER:
	case STMT_LIVENESS:
	case STMT_RELAY:
		return 1;
	default:
		return 0;
	}
}

int
stmt_runtime(enum stmt_kind kind)
{
	switch (kind) {
	case STMT_NODE:
	case STMT_NETWORK:
	case STMT_CONTROL:
	case STMT_TLS_CERT:
	case STMT_TLS_KEY:
	case STMT_TLS_CA:
	case STMT_TLS_CRL:
	case STMT_CONTROL_GROUP:
	case STMT_USER:
	case STMT_OFFLOAD:
	case STMT_THREADS:
	case STMT_ROUTING:
	case STMT_ADVERTISE:
	case STMT_HTTP:
		return 0;
	default:
		return 1;
	}
}

int
stmt_reloadable(enum stmt_kind kind)
{
	switch (kind) {
	case STMT_TLS_CERT:
	case STMT_TLS_KEY:
	case STMT_TLS_CA:
	case STMT_TLS_CRL:
		return 1;
	default:
		return 0;
	}
}

const char *
stmt_keyword_at(size_t i, enum stmt_kind *kind, enum stmt_op *op)
{
	if (i >= nitems(keywords))
		return NULL;
	if (kind != NULL)
		*kind = keywords[i].kind;
	if (op != NULL)
		*op = keywords[i].op;
	return keywords[i].word;
}

const char *
stmt_show_at(size_t i, const char **args)
{
	if (i >= nitems(show_words))
		return NULL;
	if (args != NULL)
		*args = show_words[i].args;
	return show_words[i].word;
}

static int
show_value(const char *s, int *value)
{
	size_t	 i;

	for (i = 0; i < nitems(show_words); i++)
		if (strcmp(show_words[i].word, s) == 0) {
			*value = (int)show_words[i].value;
			return 0;
		}
	return -1;
}

static const char *
show_name(enum stmt_show value)
{
	size_t	 i;

	for (i = 0; i < nitems(show_words); i++)
		if (show_words[i].value == value)
			return show_words[i].word;
	return NULL;
}

/* "links, link, ... or adapt": what show takes, for its errors. */
static const char *
show_list(char *buf, size_t len)
{
	size_t	 i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < nitems(show_words) && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s",
		    i == 0 ? "" : i + 1 < nitems(show_words) ? ", " : " or ",
		    show_words[i].word);
	return buf;
}

const char *
stmt_keyword(enum stmt_kind kind, enum stmt_op op)
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

/*
 * ADDR:PORT [allow CIDR,...], with [tls] where tls_ok: a listener, or the
 * status server, which takes the same address and allow list.
 */
static int
addr_allow_args(struct parser *p, struct stmt *st, int tls_ok)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	int			 i;

	if (hostport_arg(p, 1, 1, &st->addr) == -1)
		return -1;
	for (i = 2; i < p->ntok; i++) {
		t = &p->tok[i];
		if (tls_ok && strcmp(t->s, "tls") == 0) {
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

static int
args_listen(struct parser *p, struct stmt *st)
{
	return addr_allow_args(p, st, 1);
}

/* An absolute path: the daemon changes directory, a relative one would move. */
static int
path_arg(struct parser *p, int i, char path[STMT_PATH_MAX + 1])
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	size_t			 len;

	if ((t = arg(p, i)) == NULL)
		return -1;
	len = strlen(t->s);
	if (len == 0)
		return fail(p, t->col, "empty path");
	if (t->s[0] != '/')
		return fail(p, t->col, "path '%s' is not absolute",
		    show(b, t->s));
	if (len > STMT_PATH_MAX)
		return fail(p, t->col, "path too long (max %d characters)",
		    STMT_PATH_MAX);
	memcpy(path, t->s, len + 1);
	return 0;
}

/* control, tls-cert, tls-key, tls-ca, tls-crl: an absolute path. */
static int
args_path(struct parser *p, struct stmt *st)
{
	if (path_arg(p, 1, st->path) == -1)
		return -1;
	return end(p, 2);
}

/* save [PATH]: without PATH, the file the daemon was started with. */
static int
args_save(struct parser *p, struct stmt *st)
{
	if (p->ntok < 2)
		return 0;
	if (path_arg(p, 1, st->path) == -1)
		return -1;
	return end(p, 2);
}

/* reload -n: the changes a reload would make, made nowhere. */
static int
args_reload(struct parser *p, struct stmt *st)
{
	if (p->ntok > 1 && strcmp(p->tok[1].s, "-n") == 0) {
		st->flag = 1;
		return end(p, 2);
	}
	return args_none(p, st);
}

static int
args_none(struct parser *p, struct stmt *st)
{
	return end(p, 1);
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

/* Token t, yes or no, as 1 or 0 in *v; anything else is an error. */
static int
yesno_arg(struct parser *p, const struct token *t, int *v)
{
	char	 b[SHOW_LEN];

	if (word_value(yesno_words, nitems(yesno_words), t->s, v) == -1)
		return fail(p, t->col,
		    "invalid value '%s' (expected yes or no)", show(b, t->s));
	return 0;
}

/* The statements that are one switch (learn, offload, threads): flag. */
static int
args_flag(struct parser *p, struct stmt *st)
{
	const struct token	*t;

	if ((t = arg(p, 1)) == NULL)
		return -1;
	if (yesno_arg(p, t, &st->flag) == -1)
		return -1;
	return end(p, 2);
}

static int	parse_bytes(const char *, uint32_t *);

/*
 * The options of an interface after its device, in any order, each at most
 * once; which ones a type takes is in iface_opts[].
 */
#define IOPT_PROMISC	0x01
#define IOPT_FILTER	0x02
#define IOPT_BUFFER	0x04
#define IOPT_UP		0x08
#define IOPT_PERSIST	0x10
#define IOPT_BRIDGE	0x20
#define IOPT_SEGMENT	0x40

static const struct {
	const char	*word;
	unsigned int	 opt;
	int		 type;
	const char	*value;		/* what the error says is expected */
} iface_opts[] = {
	{ "promisc",	IOPT_PROMISC,	STMT_IF_PCAP,	"yes or no" },
	{ "filter",	IOPT_FILTER,	STMT_IF_PCAP,	"a filter expression" },
	{ "buffer",	IOPT_BUFFER,	STMT_IF_PCAP,	"BYTES" },
	{ "up",		IOPT_UP,	STMT_IF_PCAP,	"yes or no" },
	{ "segment",	IOPT_SEGMENT,	STMT_IF_PCAP,	"a segment name" },
	{ "persist",	IOPT_PERSIST,	STMT_IF_TAP,	"yes, no or auto" },
	{ "bridge",	IOPT_BRIDGE,	STMT_IF_TAP,	"a bridge device" },
};

/* The option words a type takes, for an error message. */
static const char *
iface_opt_words(int type, char *buf, size_t len)
{
	size_t	 i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < nitems(iface_opts); i++)
		if (iface_opts[i].type == type && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
			    n == 0 ? "" : ", ", iface_opts[i].word);
	return buf;
}

static int
iface_opt_value(struct parser *p, struct stmt *st, unsigned int opt,
    const struct token *v)
{
	char		 b[SHOW_LEN];
	size_t		 len;

	switch (opt) {
	case IOPT_PERSIST:
		if (word_value(persist_words, nitems(persist_words), v->s,
		    &st->persist) == -1)
			return fail(p, v->col, "invalid value '%s' (expected "
			    "yes, no or auto)", show(b, v->s));
		return 0;
	case IOPT_PROMISC:
	case IOPT_UP:
		return yesno_arg(p, v, opt == IOPT_UP ? &st->up : &st->promisc);
	case IOPT_BUFFER:
		if (parse_bytes(v->s, &st->buffer) == -1)
			return fail(p, v->col, "invalid buffer size '%s' "
			    "(%uk..%ug)", show(b, v->s), STMT_QUEUE_MIN / 1024,
			    STMT_QUEUE_MAX / (1024 * 1024 * 1024));
		return 0;
	case IOPT_FILTER:
		len = strlen(v->s);
		if (len == 0)
			return fail(p, v->col, "empty filter");
		if (len > STMT_FILTER_MAX)
			return fail(p, v->col, "filter too long (max %d "
			    "characters)", STMT_FILTER_MAX);
		memcpy(st->filter, v->s, len + 1);
		return 0;
	case IOPT_SEGMENT:
		if (!stmt_valid_name(v->s))
			return fail(p, v->col, "invalid segment name '%s'",
			    show(b, v->s));
		memcpy(st->segment, v->s, strlen(v->s) + 1);
		return 0;
	case IOPT_BRIDGE:
		if (!stmt_valid_dev(v->s))
			return fail(p, v->col, "invalid bridge name '%s'",
			    show(b, v->s));
		memcpy(st->bridge, v->s, strlen(v->s) + 1);
		return 0;
	}
	return -1;
}

static int
iface_options(struct parser *p, struct stmt *st, int i)
{
	const struct token	*t;
	char			 b[SHOW_LEN], words[64];
	unsigned int		 seen = 0;
	size_t			 k;

	if (st->iftype == STMT_IF_PCAP)
		st->promisc = st->up = 1;
	for (; i < p->ntok; i += 2) {
		t = &p->tok[i];
		for (k = 0; k < nitems(iface_opts); k++)
			if ((int)st->iftype == iface_opts[k].type &&
			    strcmp(t->s, iface_opts[k].word) == 0)
				break;
		if (k == nitems(iface_opts))
			return fail(p, t->col, "unexpected '%s' (expected %s)",
			    show(b, t->s), iface_opt_words(st->iftype, words,
			    sizeof(words)));
		if (seen & iface_opts[k].opt)
			return fail(p, t->col, "%s given twice", t->s);
		seen |= iface_opts[k].opt;
		if (i + 1 >= p->ntok)
			return fail(p, p->eol, "%s: expected %s", t->s,
			    iface_opts[k].value);
		if (iface_opt_value(p, st, iface_opts[k].opt,
		    &p->tok[i + 1]) == -1)
			return -1;
	}
	return 0;
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
		return fail(p, t->col, "unknown type '%s' (expected tap, "
		    "pcap or qemu)", show(b, t->s));
	st->iftype = type;
	/* QEMU connects to a Unix socket: sun_path's room, less the NUL. */
	if (type == STMT_IF_QEMU) {
		if (path_arg(p, 3, st->path) == -1)
			return -1;
		if (strlen(st->path) > STMT_SUN_PATH_MAX)
			return fail(p, p->tok[3].col, "path too long for a "
			    "socket (max %d characters)", STMT_SUN_PATH_MAX);
		return end(p, 4);
	}
	if (type == STMT_IF_PCAP)
		st->promisc = st->up = 1;
	/*
	 * A TAP device outlives a restart while it stays in our namespace,
	 * unless told otherwise (vnetd.conf(5)).
	 */
	if (type == STMT_IF_TAP)
		st->persist = STMT_PERSIST_AUTO;
	/* A pcap interface attaches to a device that exists: it must be named. */
	if (type == STMT_IF_PCAP && (t = arg(p, 3)) == NULL)
		return -1;
	if (p->ntok <= 3)
		return 0;
	t = &p->tok[3];
	if (!stmt_valid_dev(t->s))
		return fail(p, t->col, "invalid device name '%s'",
		    show(b, t->s));
	memcpy(st->dev, t->s, strlen(t->s) + 1);
	return iface_options(p, st, 4);
}

/*
 * A decimal number, a fraction allowed, then one of the units; the value
 * must come out whole in the base unit and lie within min..max.
 */
struct unit {
	const char	*suffix;
	uint64_t	 mult;
};

static const struct unit rate_units[] = {
	{ "tbit",	1000000000000ULL },
	{ "gbit",	1000000000ULL },
	{ "mbit",	1000000ULL },
	{ "kbit",	1000ULL },
	{ "bit",	1ULL },
};

static const struct unit time_units[] = {
	{ "s",		1000000ULL },
	{ "ms",		1000ULL },
	{ "us",		1ULL },
};

static int
parse_scaled(const char *s, const struct unit *u, size_t nu, uint64_t min,
    uint64_t max, uint64_t *v)
{
	uint64_t	 ip = 0, frac = 0, div = 1, mult = 0;
	size_t		 i;
	int		 digits = 0;

	for (; is_digit(*s); s++, digits++) {
		if (ip > (UINT64_MAX - 9) / 10)
			return -1;
		ip = ip * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		for (s++; is_digit(*s); s++, digits++) {
			if (div >= 1000000000000ULL)
				return -1;
			frac = frac * 10 + (uint64_t)(*s - '0');
			div *= 10;
		}
	}
	if (digits == 0)
		return -1;
	for (i = 0; i < nu; i++)
		if (strcasecmp(s, u[i].suffix) == 0)
			mult = u[i].mult;
	if (mult == 0 || ip > max / mult)
		return -1;
	while (div > 1 && frac % 10 == 0) {
		frac /= 10;
		div /= 10;
	}
	/* Units are powers of ten: finer than the base unit is not whole. */
	if (div > mult)
		return -1;
	*v = ip * mult + frac * (mult / div);
	if (*v < min || *v > max)
		return -1;
	return 0;
}

static char *
format_scaled(uint64_t v, const struct unit *u, size_t nu, char *buf,
    size_t len)
{
	size_t	 i;

	for (i = 0; i < nu; i++)
		if (v % u[i].mult == 0 && (v != 0 || u[i].mult == 1))
			break;
	if (i == nu)
		i = nu - 1;
	snprintf(buf, len, "%llu%s", (unsigned long long)(v / u[i].mult),
	    u[i].suffix);
	return buf;
}

char *
stmt_rate_format(uint64_t bps, char *buf, size_t len)
{
	return format_scaled(bps, rate_units, nitems(rate_units), buf, len);
}

/* Formats a time (us): "5ms", "250us"; buf >= 32. */
static char *
stmt_time_format(uint32_t us, char *buf, size_t len)
{
	/* Seconds read less well than milliseconds at these scales. */
	return format_scaled(us, time_units + 1, nitems(time_units) - 1, buf,
	    len);
}

static int
time_arg(struct parser *p, int i, const char *what, uint32_t *v)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	uint64_t		 x;

	if ((t = arg(p, i)) == NULL)
		return -1;
	if (parse_scaled(t->s, time_units, nitems(time_units), STMT_TIME_MIN,
	    STMT_TIME_MAX, &x) == -1)
		return fail(p, t->col, "invalid %s '%s' (a time such as 5ms, "
		    "100us to 60s)", what, show(b, t->s));
	*v = (uint32_t)x;
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

/*
 * The value of link option `opt`, the keyword at token i, which marks it
 * given; NULL (an error) if it was given before or the line ends.
 */
static const struct token *
lopt_arg(struct parser *p, int i, struct stmt *st, unsigned int opt)
{
	if (st->lopts & opt) {
		fail(p, p->tok[i].col, "%s given twice", p->tok[i].s);
		return NULL;
	}
	st->lopts |= opt;
	return arg(p, i + 1);
}

/*
 * The probes from token i (after the keyword): TIME|off, or default where
 * dflt, then [multiplier N].  Returns the index past them, or -1.
 */
static int
liveness_arg(struct parser *p, int i, struct stmt *st, int dflt)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	uint64_t		 us;
	unsigned int		 n;

	if ((t = arg(p, i)) == NULL)
		return -1;
	if (strcmp(t->s, "off") == 0)
		st->live_interval = STMT_LIVENESS_OFF;
	else if (dflt && strcmp(t->s, "default") == 0)
		st->live_interval = 0;
	else if (parse_scaled(t->s, time_units, nitems(time_units),
	    STMT_LIVENESS_MIN * 1000, STMT_LIVENESS_MAX * 1000, &us) == -1 ||
	    us % 1000 != 0)
		return fail(p, t->col, "invalid liveness interval '%s' (a "
		    "time such as 200ms, 10ms to 60s in whole ms, or off%s)",
		    show(b, t->s), dflt ? " or default" : "");
	else
		st->live_interval = (uint32_t)(us / 1000);
	i++;
	st->live_mult = 0;
	if (i < p->ntok && strcmp(p->tok[i].s, "multiplier") == 0) {
		if ((t = arg(p, i + 1)) == NULL)
			return -1;
		if (parse_uint(t->s, STMT_LIVENESS_MULT_MAX, &n) == -1 ||
		    n < STMT_LIVENESS_MULT_MIN)
			return fail(p, t->col, "invalid multiplier '%s' "
			    "(2..255)", show(b, t->s));
		st->live_mult = n;
		i += 2;
	}
	return i;
}

/* liveness TIME|off [multiplier N] */
static int
args_liveness(struct parser *p, struct stmt *st)
{
	int	 i;

	if ((i = liveness_arg(p, 1, st, 0)) == -1)
		return -1;
	return end(p, i);
}

/*
 * Link options from token i on: rate RATE|none, aqm off|codel [target T]
 * [interval I], congestion CC|default, queue BYTES, and for a link itself
 * (full) tls and peer NODE.  Returns the index past them, or -1.
 */
static int
link_opts_arg(struct parser *p, int i, struct stmt *st, int full)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	uint64_t		 v;

	while (i < p->ntok) {
		t = &p->tok[i];
		if (strcmp(t->s, "rate") == 0) {
			if ((t = lopt_arg(p, i, st, STMT_LOPT_RATE)) == NULL)
				return -1;
			if (strcmp(t->s, "none") == 0)
				st->rate = 0;
			else if (parse_scaled(t->s, rate_units,
			    nitems(rate_units), STMT_RATE_MIN, STMT_RATE_MAX,
			    &v) == -1)
				return fail(p, t->col, "invalid rate '%s' (such "
				    "as 500kbit, 10mbit, 2.5gbit; 8kbit to "
				    "1tbit; or none)", show(b, t->s));
			else
				st->rate = v;
			i += 2;
		} else if (strcmp(t->s, "aqm") == 0) {
			if ((t = lopt_arg(p, i, st, STMT_LOPT_AQM)) == NULL)
				return -1;
			i += 2;
			if (strcmp(t->s, "off") == 0) {
				st->aqm = STMT_AQM_OFF;
				continue;
			}
			if (strcmp(t->s, "codel") == 0)
				st->aqm = STMT_AQM_CODEL;
			else if (strcmp(t->s, "fq_codel") == 0)
				st->aqm = STMT_AQM_FQ_CODEL;
			else
				return fail(p, t->col, "unknown aqm '%s' "
				    "(expected off, codel or fq_codel)",
				    show(b, t->s));
			while (i < p->ntok) {
				t = &p->tok[i];
				if (strcmp(t->s, "target") == 0 &&
				    st->aqm_target == 0) {
					if (time_arg(p, i + 1, "target",
					    &st->aqm_target) == -1)
						return -1;
				} else if (strcmp(t->s, "interval") == 0 &&
				    st->aqm_interval == 0) {
					if (time_arg(p, i + 1, "interval",
					    &st->aqm_interval) == -1)
						return -1;
				} else
					break;
				i += 2;
			}
		} else if (strcmp(t->s, "congestion") == 0) {
			if ((t = lopt_arg(p, i, st,
			    STMT_LOPT_CONGESTION)) == NULL)
				return -1;
			if (strcmp(t->s, "default") == 0)
				st->congestion[0] = '\0';
			else if (!stmt_valid_congestion(t->s))
				return fail(p, t->col, "invalid congestion "
				    "control '%s' (a kernel's name for one, "
				    "such as cubic or bbr, or default)",
				    show(b, t->s));
			else
				snprintf(st->congestion,
				    sizeof(st->congestion), "%s", t->s);
			i += 2;
		} else if (strcmp(t->s, "transport") == 0) {
			if ((t = lopt_arg(p, i, st,
			    STMT_LOPT_TRANSPORT)) == NULL)
				return -1;
			if (strcmp(t->s, "tcp") == 0)
				st->transport = STMT_TRANSPORT_TCP;
			else if (strcmp(t->s, "udp") == 0)
				st->transport = STMT_TRANSPORT_UDP;
			else if (strcmp(t->s, "auto") == 0)
				st->transport = STMT_TRANSPORT_AUTO;
			else
				return fail(p, t->col, "unknown transport '%s' "
				    "(expected tcp, udp or auto)",
				    show(b, t->s));
			i += 2;
		} else if (strcmp(t->s, "liveness") == 0) {
			if (lopt_arg(p, i, st, STMT_LOPT_LIVENESS) == NULL ||
			    (i = liveness_arg(p, i + 1, st, 1)) == -1)
				return -1;
		} else if (full && strcmp(t->s, "tls") == 0) {
			if (tls_opt(p, t, st) == -1)
				return -1;
			i++;
		} else if (full && strcmp(t->s, "peer") == 0) {
			if (st->peer[0] != '\0')
				return fail(p, t->col, "peer given twice");
			if (i + 1 >= p->ntok)
				return fail(p, p->eol,
				    "expected NODE after peer");
			if (name_arg(p, i + 1, st->peer) == -1)
				return -1;
			i += 2;
		} else if (strcmp(t->s, "queue") == 0) {
			if (st->queue != 0)
				return fail(p, t->col, "queue given twice");
			if (i + 1 >= p->ntok)
				return fail(p, p->eol,
				    "expected BYTES after queue");
			t = &p->tok[i + 1];
			if (parse_bytes(t->s, &st->queue) == -1)
				return fail(p, t->col, "invalid queue size "
				    "'%s' (128k..1g)", show(b, t->s));
			i += 2;
		} else
			return fail(p, t->col, "unexpected '%s'",
			    show(b, t->s));
	}
	/* One spelling per link: a peer of the link's own name is none. */
	if (strcmp(st->peer, st->name) == 0)
		st->peer[0] = '\0';
	return i;
}

static int
args_link(struct parser *p, struct stmt *st)
{
	int	 n;

	if (name_arg(p, 1, st->name) == -1)
		return -1;
	if (hostport_arg(p, 2, 0, &st->addr) == -1)
		return -1;
	if ((n = link_opts_arg(p, 3, st, 1)) == -1)
		return -1;
	return end(p, n);
}

static int
args_set_link(struct parser *p, struct stmt *st)
{
	int	 n;

	if (name_arg(p, 1, st->name) == -1)
		return -1;
	if (p->ntok <= 2)
		return fail(p, p->eol, "expected %s", p->kw->usage);
	if ((n = link_opts_arg(p, 2, st, 0)) == -1)
		return -1;
	return end(p, n);
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

/* A threshold: a decimal 0..1 with up to three places, in permille. */
static int
parse_fraction(const char *s, unsigned int *permille)
{
	unsigned int	 v = 0, places = 0;

	if (*s == '1') {
		s++;
		v = 1000;
		if (*s == '.')
			while (*++s == '0')
				;
		return *s == '\0' ? (*permille = v, 0) : -1;
	}
	if (*s == '0')
		s++;
	else if (*s != '.')
		return -1;
	if (*s == '.') {
		s++;
		if (*s == '\0')
			return -1;
		for (; *s >= '0' && *s <= '9' && places < 3; s++, places++)
			v = v * 10 + (unsigned int)(*s - '0');
		if (*s != '\0')
			return -1;
		for (; places < 3; places++)
			v *= 10;
	} else if (*s != '\0')
		return -1;
	*permille = v;
	return 0;
}

/*
 * show traffic nodes | show traffic topology [THRESHOLD] |
 * show traffic matrix [TOP]
 */
static int
show_traffic_args(struct parser *p, struct stmt *st)
{
	const struct token	*t = &p->tok[2];
	char			 b[SHOW_LEN];

	if (strcmp(t->s, "nodes") == 0) {
		st->show = STMT_SHOW_TRAFFIC_NODES;
		return end(p, 3);
	}
	if (strcmp(t->s, "matrix") == 0) {
		st->show = STMT_SHOW_TRAFFIC_MATRIX;
		st->num = STMT_TOP_DEFAULT;
		if (p->ntok > 3) {
			t = &p->tok[3];
			if (parse_uint(t->s, STMT_TOP_MAX, &st->num) == -1 ||
			    st->num == 0)
				return fail(p, t->col, "invalid size '%s' "
				    "(1..%d rows and columns)", show(b, t->s),
				    STMT_TOP_MAX);
			return end(p, 4);
		}
		return 0;
	}
	if (strcmp(t->s, "topology") != 0)
		return fail(p, t->col, "expected nodes, topology or matrix, "
		    "not '%s'", show(b, t->s));
	st->show = STMT_SHOW_TRAFFIC_TOPOLOGY;
	st->num = STMT_THRESHOLD_DEFAULT;
	if (p->ntok > 3) {
		t = &p->tok[3];
		if (parse_fraction(t->s, &st->num) == -1)
			return fail(p, t->col, "invalid threshold '%s' "
			    "(0..1, e.g. 0.1)", show(b, t->s));
		return end(p, 4);
	}
	return 0;
}

static int
args_routing(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];

	if ((t = arg(p, 1)) == NULL)
		return -1;
	if (strcmp(t->s, "static") == 0)
		return end(p, 2);
	if (strcmp(t->s, "auto") != 0)
		return fail(p, t->col, "invalid value '%s' (expected auto or "
		    "static)", show(b, t->s));
	st->flag = 1;
	if (p->ntok <= 2)
		return 0;
	if (word_arg(p, 2, "refresh") == -1 || (t = arg(p, 3)) == NULL)
		return -1;
	if (parse_uint(t->s, STMT_REFRESH_MAX, &st->num) == -1 ||
	    st->num == 0)
		return fail(p, t->col, "invalid seconds '%s' (1..%d)",
		    show(b, t->s), STMT_REFRESH_MAX);
	return end(p, 4);
}

static int
args_advertise(struct parser *p, struct stmt *st)
{
	if (hostport_arg(p, 1, 0, &st->addr) == -1)
		return -1;
	return end(p, 2);
}

/* adapt shortcuts yes|no [threshold RATE] [hold S] [idle S] [max N] | off | on */
static int
args_adapt(struct parser *p, struct stmt *st)
{
	const struct token	*t, *v;
	char			 b[SHOW_LEN];
	unsigned int		*u, max, seen = 0, bit;
	int			 i;

	if ((t = arg(p, 1)) == NULL)
		return -1;
	if (strcmp(t->s, "off") == 0 || strcmp(t->s, "on") == 0) {
		st->adapt.verb = t->s[1] == 'f' ? STMT_ADAPT_OFF :
		    STMT_ADAPT_ON;
		return end(p, 2);
	}
	if (strcmp(t->s, "shortcuts") != 0)
		return fail(p, t->col, "invalid value '%s' (expected "
		    "shortcuts, off or on)", show(b, t->s));
	if ((t = arg(p, 2)) == NULL)
		return -1;
	if (yesno_arg(p, t, &st->flag) == -1)
		return -1;
	for (i = 3; i < p->ntok; i += 2) {
		t = &p->tok[i];
		if ((v = arg(p, i + 1)) == NULL)
			return -1;
		if (strcmp(t->s, "threshold") == 0) {
			bit = 1;
			if (parse_scaled(v->s, rate_units, nitems(rate_units),
			    STMT_RATE_MIN, STMT_RATE_MAX, &st->rate) == -1)
				return fail(p, v->col, "invalid rate '%s'",
				    show(b, v->s));
		} else {
			if (strcmp(t->s, "hold") == 0) {
				bit = 2, u = &st->adapt.hold;
				max = STMT_ADAPT_SECONDS_MAX;
			} else if (strcmp(t->s, "idle") == 0) {
				bit = 4, u = &st->adapt.idle;
				max = STMT_ADAPT_SECONDS_MAX;
			} else if (strcmp(t->s, "max") == 0) {
				bit = 8, u = &st->adapt.max;
				max = STMT_ADAPT_MAX_MAX;
			} else
				return fail(p, t->col, "unknown option '%s' "
				    "(expected threshold, hold, idle or max)",
				    show(b, t->s));
			if (parse_uint(v->s, max, u) == -1 || *u == 0)
				return fail(p, v->col, "invalid %s '%s' "
				    "(1..%u)", t->s, show(b, v->s), max);
		}
		if (seen & bit)
			return fail(p, t->col, "'%s' given twice", t->s);
		seen |= bit;
	}
	return 0;
}

/* The status server: an address and an allow list, as a plain listener. */
static int
args_http(struct parser *p, struct stmt *st)
{
	return addr_allow_args(p, st, 0);
}

static int
args_show(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN], list[STMT_ERR_MAX];
	int			 what;

	if (p->ntok < 2)
		return fail(p, p->eol, "expected %s",
		    show_list(list, sizeof(list)));
	t = &p->tok[1];
	if (show_value(t->s, &what) == -1)
		return fail(p, t->col, "unknown item '%s' (expected %s)",
		    show(b, t->s), show_list(list, sizeof(list)));
	st->show = what;
	if (what == STMT_SHOW_LINK) {
		if (p->ntok < 3)
			return fail(p, p->eol, "expected link NAME");
		if (name_arg(p, 2, st->name) == -1)
			return -1;
		return end(p, 3);
	}
	/* show links all: every column */
	if (what == STMT_SHOW_LINKS && p->ntok > 2 &&
	    strcmp(p->tok[2].s, "all") == 0) {
		st->show = STMT_SHOW_LINKS_ALL;
		return end(p, 3);
	}
	if (what == STMT_SHOW_TRAFFIC && p->ntok > 2)
		return show_traffic_args(p, st);
	return end(p, 2);
}

/* A token that must be a given word, with the usage when it is missing. */
static int
word_arg(struct parser *p, int i, const char *word)
{
	const struct token	*t;
	char			 b[SHOW_LEN];

	if ((t = arg(p, i)) == NULL)
		return -1;
	if (strcmp(t->s, word) != 0)
		return fail(p, t->col, "expected '%s', not '%s'", word,
		    show(b, t->s));
	return 0;
}

/* An interface name for vcc: "class" and "share" are the other forms. */
static int
vcc_iface_arg(struct parser *p, int i, char name[STMT_NAME_MAX + 1])
{
	if (name_arg(p, i, name) == -1)
		return -1;
	if (strcmp(name, "class") == 0 || strcmp(name, "share") == 0)
		return fail(p, p->tok[i].col, "expected NAME after '%s'", name);
	return 0;
}

/* 1..2^64-1 decimal digits, capped at max. */
static int
parse_u64(const char *s, uint64_t max, uint64_t *v, const char **end)
{
	uint64_t	 n = 0;
	const char	*q;

	for (q = s; is_digit(*q); q++) {
		if (n > (max - (uint64_t)(*q - '0')) / 10)
			return -1;
		n = n * 10 + (uint64_t)(*q - '0');
	}
	if (q == s)
		return -1;
	*v = n;
	*end = q;
	return 0;
}

static int
parse_ports(const char *s, struct stmt_vclass *vc)
{
	const char	*end;
	uint64_t	 v;

	vc->nports = 0;
	for (;;) {
		if (vc->nports == STMT_PORTS_MAX ||
		    parse_u64(s, 65535, &v, &end) == -1 || v == 0)
			return -1;
		vc->ports[vc->nports++] = (uint16_t)v;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/* Marks an attribute given, once. */
static int
vclass_once(struct parser *p, struct stmt *st, const struct token *t,
    unsigned int bit, const char *what)
{
	if (st->vclass.set & bit)
		return fail(p, t->col, "%s given twice", what);
	st->vclass.set |= bit;
	return 0;
}

static int
args_vclass(struct parser *p, struct stmt *st, int i)
{
	struct stmt_vclass	*vc = &st->vclass;
	const struct token	*t, *v;
	char			 b[SHOW_LEN];
	uint64_t		 n;
	const char		*end;

	while (i < p->ntok) {
		t = &p->tok[i];
		if (strcmp(t->s, "match") == 0) {
			if ((t = arg(p, i + 1)) == NULL ||
			    (v = arg(p, i + 2)) == NULL)
				return -1;
			if (strcmp(t->s, "tcp-port") == 0) {
				if (vclass_once(p, st, t, STMT_VCLASS_PORTS,
				    "match tcp-port") == -1)
					return -1;
				if (parse_ports(v->s, vc) == -1)
					return fail(p, v->col, "invalid port "
					    "list '%s' (1..65535, up to %d, "
					    "comma-separated)", show(b, v->s),
					    STMT_PORTS_MAX);
			} else if (strcmp(t->s, "src") == 0 ||
			    strcmp(t->s, "dst") == 0) {
				int src = t->s[0] == 's';

				if (vclass_once(p, st, t, src ?
				    STMT_VCLASS_SRC : STMT_VCLASS_DST, src ?
				    "match src" : "match dst") == -1)
					return -1;
				if (cidr_parse(p, v->col, v->s, src ?
				    &vc->src : &vc->dst) == -1)
					return -1;
			} else
				return fail(p, t->col, "unknown match '%s' "
				    "(expected tcp-port, src or dst)",
				    show(b, t->s));
			i += 3;
		} else if (strcmp(t->s, "interface") == 0) {
			if (vclass_once(p, st, t, STMT_VCLASS_IFACE,
			    "interface") == -1 ||
			    name_arg(p, i + 1, vc->iface) == -1)
				return -1;
			i += 2;
		} else if (strcmp(t->s, "weight") == 0) {
			if (vclass_once(p, st, t, STMT_VCLASS_WEIGHT,
			    "weight") == -1 || (v = arg(p, i + 1)) == NULL)
				return -1;
			if (parse_u64(v->s, STMT_WEIGHT_MAX, &n, &end) == -1 ||
			    *end != '\0' || n == 0)
				return fail(p, v->col, "invalid weight '%s' "
				    "(1..%d)", show(b, v->s), STMT_WEIGHT_MAX);
			vc->weight = (unsigned int)n;
			i += 2;
		} else if (strcmp(t->s, "rate") == 0) {
			if (vclass_once(p, st, t, STMT_VCLASS_RATE,
			    "rate") == -1 || (v = arg(p, i + 1)) == NULL)
				return -1;
			if (strcmp(v->s, "none") == 0)
				vc->rate = 0;
			else if (parse_scaled(v->s, rate_units,
			    nitems(rate_units), STMT_RATE_MIN, STMT_RATE_MAX,
			    &vc->rate) == -1)
				return fail(p, v->col, "invalid rate '%s' (such "
				    "as 500kbit, 10mbit, 2.5gbit; 8kbit to "
				    "1tbit; or none)", show(b, v->s));
			i += 2;
		} else
			return fail(p, t->col, "unexpected '%s' (expected "
			    "match, interface, weight or rate)",
			    show(b, t->s));
	}
	return 0;
}

/*
 * vcc IFACE ecn virtual | vcc share IFACE window BYTES | vcc class NAME ...
 * and their del- forms: del-vcc IFACE ecn | share IFACE | class NAME.
 */
static int
args_vcc(struct parser *p, struct stmt *st)
{
	const struct token	*t;
	char			 b[SHOW_LEN];
	const char		*rest;
	int			 del = p->kw->op == STMT_OP_DEL;

	if ((t = arg(p, 1)) == NULL)
		return -1;
	if (strcmp(t->s, "class") == 0) {
		st->vcc = STMT_VCC_CLASS;
		if (name_arg(p, 2, st->name) == -1)
			return -1;
		if (del)
			return end(p, 3);
		return args_vclass(p, st, 3);
	}
	if (strcmp(t->s, "share") == 0) {
		st->vcc = STMT_VCC_SHARE;
		if (vcc_iface_arg(p, 2, st->name) == -1)
			return -1;
		if (del)
			return end(p, 3);
		if (word_arg(p, 3, "window") == -1 || (t = arg(p, 4)) == NULL)
			return -1;
		if (parse_u64(t->s, STMT_WINDOW_MAX, &st->window, &rest) == -1 ||
		    *rest != '\0' || st->window == 0)
			return fail(p, t->col, "invalid window '%s' (1..%u "
			    "bytes)", show(b, t->s), STMT_WINDOW_MAX);
		return end(p, 5);
	}
	st->vcc = STMT_VCC_ECN;
	if (vcc_iface_arg(p, 1, st->name) == -1 || word_arg(p, 2, "ecn") == -1)
		return -1;
	if (del)
		return end(p, 3);
	if (word_arg(p, 3, "virtual") == -1)
		return -1;
	return end(p, 4);
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

/* Quotes a token only when it would not come back as one plain token. */
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


int
stmt_cidr_match(const struct stmt_cidr *c, int family, const uint8_t *addr)
{
	unsigned int	 full = c->plen / 8u, rest = c->plen % 8u;

	if (c->family != family)
		return 0;
	if (memcmp(c->addr, addr, full) != 0)
		return 0;
	return rest == 0 ||
	    ((c->addr[full] ^ addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static int
print_vcc(const struct stmt *st, const char *kw, char *buf, size_t len)
{
	const struct stmt_vclass *vc = &st->vclass;
	char		 rate[32], cidr[64];
	size_t		 o, i;

	switch (st->vcc) {
	case STMT_VCC_ECN:
		return snprintf(buf, len, "%s %s ecn%s", kw, st->name,
		    st->op == STMT_OP_DEL ? "" : " virtual");
	case STMT_VCC_SHARE:
		if (st->op == STMT_OP_DEL)
			return snprintf(buf, len, "%s share %s", kw, st->name);
		return snprintf(buf, len, "%s share %s window %llu", kw,
		    st->name, (unsigned long long)st->window);
	case STMT_VCC_CLASS:
		break;
	default:
		return -1;
	}
	/* Builds in a local buffer so that a short buf still gets the length. */
	{
		char	 line[STMT_LINE_MAX];

		o = (size_t)snprintf(line, sizeof(line), "%s class %s", kw,
		    st->name);
#define ADD(...) do {							\
		if (o < sizeof(line))					\
			o += (size_t)snprintf(line + o, sizeof(line) - o,	\
			    __VA_ARGS__);					\
	} while (0)
		if (st->op == STMT_OP_SET) {
			if (vc->set & STMT_VCLASS_PORTS) {
				ADD(" match tcp-port ");
				for (i = 0; i < vc->nports; i++)
					ADD("%s%u", i ? "," : "",
					    (unsigned int)vc->ports[i]);
			}
			if (vc->set & STMT_VCLASS_SRC)
				ADD(" match src %s", stmt_cidr_format(&vc->src,
				    cidr, sizeof(cidr)));
			if (vc->set & STMT_VCLASS_DST)
				ADD(" match dst %s", stmt_cidr_format(&vc->dst,
				    cidr, sizeof(cidr)));
			if (vc->set & STMT_VCLASS_IFACE)
				ADD(" interface %s", vc->iface);
			if (vc->set & STMT_VCLASS_WEIGHT)
				ADD(" weight %u", vc->weight);
			if (vc->set & STMT_VCLASS_RATE)
				ADD(" rate %s", vc->rate == 0 ? "none" :
				    stmt_rate_format(vc->rate, rate,
				    sizeof(rate)));
		}
#undef ADD
		return snprintf(buf, len, "%s", line);
	}
}

/* " rate 10mbit aqm codel target 5ms", the options a statement gives. */
static int
print_adapt(const struct stmt *st, const char *kw, char *buf, size_t len)
{
	char	 rate[32], hold[24] = "", idle[24] = "", max[24] = "";

	if (st->adapt.verb != 0)
		return snprintf(buf, len, "%s %s", kw,
		    st->adapt.verb == STMT_ADAPT_OFF ? "off" : "on");
	if (st->adapt.hold)
		snprintf(hold, sizeof(hold), " hold %u", st->adapt.hold);
	if (st->adapt.idle)
		snprintf(idle, sizeof(idle), " idle %u", st->adapt.idle);
	if (st->adapt.max)
		snprintf(max, sizeof(max), " max %u", st->adapt.max);
	return snprintf(buf, len, "%s shortcuts %s%s%s%s%s%s", kw,
	    st->flag ? "yes" : "no", st->rate ? " threshold " : "",
	    st->rate ? stmt_rate_format(st->rate, rate, sizeof(rate)) : "",
	    hold, idle, max);
}

/* "200ms multiplier 3", "off", "default". */
static char *
format_liveness(const struct stmt *st, char *buf, size_t len)
{
	char	 m[24] = "", t[32];

	if (st->live_mult != 0)
		snprintf(m, sizeof(m), " multiplier %u", st->live_mult);
	if (st->live_interval == STMT_LIVENESS_OFF)
		snprintf(buf, len, "off%s", m);
	else if (st->live_interval == 0)
		snprintf(buf, len, "default%s", m);
	else
		snprintf(buf, len, "%s%s", stmt_time_format(
		    st->live_interval * 1000, t, sizeof(t)), m);
	return buf;
}

static char *
format_link_opts(const struct stmt *st, char *buf, size_t len)
{
	char	 r[32], t[32], i[32];

	buf[0] = '\0';
	if (st->lopts & STMT_LOPT_RATE)
		snprintf(buf, len, " rate %s", st->rate == 0 ? "none" :
		    stmt_rate_format(st->rate, r, sizeof(r)));
	if (st->lopts & STMT_LOPT_AQM) {
		size_t o = strlen(buf);

		if (st->aqm == STMT_AQM_OFF)
			snprintf(buf + o, len - o, " aqm off");
		else
			snprintf(buf + o, len - o, " aqm %s%s%s%s%s",
			    st->aqm == STMT_AQM_FQ_CODEL ? "fq_codel" : "codel",
			    st->aqm_target ? " target " : "",
			    st->aqm_target ? stmt_time_format(st->aqm_target,
			    t, sizeof(t)) : "",
			    st->aqm_interval ? " interval " : "",
			    st->aqm_interval ? stmt_time_format(
			    st->aqm_interval, i, sizeof(i)) : "");
	}
	if (st->lopts & STMT_LOPT_CONGESTION) {
		size_t o = strlen(buf);

		snprintf(buf + o, len - o, " congestion %s",
		    st->congestion[0] != '\0' ? st->congestion : "default");
	}
	if (st->lopts & STMT_LOPT_TRANSPORT) {
		size_t o = strlen(buf);

		snprintf(buf + o, len - o, " transport %s",
		    stmt_transport_name(st->transport));
	}
	if (st->lopts & STMT_LOPT_LIVENESS) {
		size_t o = strlen(buf);

		snprintf(buf + o, len - o, " liveness %s",
		    format_liveness(st, t, sizeof(t)));
	}
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

/* " KW BYTES" with a binary suffix where it is exact; "" for 0. */
static const char *
format_size(const char *kw, uint32_t q, char *buf, size_t len)
{
	if (q == 0)
		buf[0] = '\0';
	else if (q % (1024 * 1024 * 1024) == 0)
		snprintf(buf, len, " %s %ug", kw, q / (1024 * 1024 * 1024));
	else if (q % (1024 * 1024) == 0)
		snprintf(buf, len, " %s %um", kw, q / (1024 * 1024));
	else if (q % 1024 == 0)
		snprintf(buf, len, " %s %uk", kw, q / 1024);
	else
		snprintf(buf, len, " %s %u", kw, q);
	return buf;
}

/* Binary suffixes where they are exact: what was written, mostly. */
static const char *
format_queue(uint32_t q, char *buf, size_t len)
{
	return format_size("queue", q, buf, len);
}

int
stmt_print(const struct stmt *st, char *buf, size_t len)
{
	char		 opts[160];
	char		 addr[STMT_HOST_MAX + 9];
	char		 src[24], dst[24];
	char		 path[2 * STMT_PATH_MAX + 3];
	char		 filter[2 * STMT_FILTER_MAX + 3];
	char		 allow[STMT_ALLOW_MAX * (STMT_CIDR_STRLEN + 1) + 8];
	char		 queue[32];
	const char	*kw, *w, *dev;
	int		 n;

	if ((kw = stmt_keyword(st->kind, st->op)) == NULL)
		goto bad;
	switch (st->kind) {
	case STMT_NODE:
	case STMT_NETWORK:
		return snprintf(buf, len, "%s %s", kw, st->name);
	case STMT_LISTEN:
		if (st->op == STMT_OP_DEL)
			return snprintf(buf, len, "%s %s", kw,
			    stmt_hostport_format(&st->addr, addr, sizeof(addr)));
		return snprintf(buf, len, "%s %s%s%s", kw,
		    stmt_hostport_format(&st->addr, addr, sizeof(addr)),
		    st->tls ? " tls" : "",
		    format_allow(st, allow, sizeof(allow)));
	case STMT_TLS_CERT:
	case STMT_TLS_KEY:
	case STMT_TLS_CA:
	case STMT_TLS_CRL:
		return snprintf(buf, len, "%s %s", kw,
		    quote_path(st->path, path, sizeof(path)));
	case STMT_CONTROL_GROUP:
	case STMT_USER:
		return snprintf(buf, len, "%s %s", kw, st->account);
	case STMT_RELOAD:
		return snprintf(buf, len, "%s%s", kw, st->flag ? " -n" : "");
	case STMT_SAVE:
		if (st->path[0] == '\0')
			return snprintf(buf, len, "%s", kw);
		return snprintf(buf, len, "%s %s", kw,
		    quote_path(st->path, path, sizeof(path)));
	case STMT_CONTROL:
		return snprintf(buf, len, "%s %s", kw,
		    quote_path(st->path, path, sizeof(path)));
	case STMT_KEEPALIVE:
		return snprintf(buf, len, "%s %u", kw, st->num);
	case STMT_OFFLOAD:
	case STMT_THREADS:
	case STMT_LEARN:
	case STMT_RELAY:
		return snprintf(buf, len, "%s %s", kw, st->flag ? "yes" : "no");
	case STMT_ROUTING:
		if (!st->flag)
			return snprintf(buf, len, "%s static", kw);
		if (st->num == 0)
			return snprintf(buf, len, "%s auto", kw);
		return snprintf(buf, len, "%s auto refresh %u", kw, st->num);
	case STMT_ADVERTISE:
		return snprintf(buf, len, "%s %s", kw,
		    stmt_hostport_format(&st->addr, addr, sizeof(addr)));
	case STMT_ADAPT:
		return print_adapt(st, kw, buf, len);
	case STMT_LIVENESS:
		return snprintf(buf, len, "%s %s", kw, format_liveness(st,
		    path, sizeof(path)));
	case STMT_HTTP:
		return snprintf(buf, len, "%s %s%s", kw,
		    stmt_hostport_format(&st->addr, addr, sizeof(addr)),
		    format_allow(st, allow, sizeof(allow)));
	case STMT_INTERFACE:
		if (st->op == STMT_OP_DEL)
			return snprintf(buf, len, "%s %s", kw, st->name);
		if ((w = word_name(iftype_words, nitems(iftype_words),
		    st->iftype)) == NULL)
			goto bad;
		if (st->iftype == STMT_IF_PCAP)
			return snprintf(buf, len, "%s %s %s %s%s%s%s%s%s%s%s",
			    kw, st->name, w, st->dev,
			    st->promisc ? "" : " promisc no",
			    st->filter[0] != '\0' ? " filter " : "",
			    st->filter[0] != '\0' ? quote_path(st->filter,
			    filter, sizeof(filter)) : "",
			    format_size("buffer", st->buffer, queue,
			    sizeof(queue)), st->up ? "" : " up no",
			    st->segment[0] != '\0' ? " segment " : "",
			    st->segment);
		if (st->iftype == STMT_IF_QEMU)
			return snprintf(buf, len, "%s %s %s %s", kw, st->name,
			    w, quote_path(st->path, path, sizeof(path)));
		/* Options come after a device: the name stands for it. */
		dev = st->dev[0] != '\0' ? st->dev :
		    st->persist != STMT_PERSIST_AUTO ||
		    st->bridge[0] != '\0' ? st->name : "";
		return snprintf(buf, len, "%s %s %s%s%s%s%s%s", kw, st->name, w,
		    dev[0] != '\0' ? " " : "", dev,
		    st->persist == STMT_PERSIST_YES ? " persist yes" :
		    st->persist == STMT_PERSIST_NO ? " persist no" : "",
		    st->bridge[0] != '\0' ? " bridge " : "", st->bridge);
	case STMT_LINK:
		if (st->op == STMT_OP_DEL)
			return snprintf(buf, len, "%s %s", kw, st->name);
		return snprintf(buf, len, "%s %s %s%s%s%s%s%s", kw, st->name,
		    stmt_hostport_format(&st->addr, addr, sizeof(addr)),
		    st->tls ? " tls" : "", st->peer[0] != '\0' ? " peer " : "",
		    st->peer, format_queue(st->queue, queue, sizeof(queue)),
		    format_link_opts(st, opts, sizeof(opts)));
	case STMT_ROUTE:
		if ((w = word_name(target_words, nitems(target_words),
		    st->target)) == NULL)
			goto bad;
		return snprintf(buf, len, "%s %s %s %s %s", kw,
		    stmt_match_format(&st->src, src),
		    stmt_match_format(&st->dst, dst), w, st->name);
	case STMT_SHOW:
		if (st->show == STMT_SHOW_LINKS_ALL)
			return snprintf(buf, len, "%s links all", kw);
		if (st->show == STMT_SHOW_TRAFFIC_NODES)
			return snprintf(buf, len, "%s traffic nodes", kw);
		if (st->show == STMT_SHOW_TRAFFIC_TOPOLOGY)
			return snprintf(buf, len, "%s traffic topology %u.%03u",
			    kw, st->num / 1000, st->num % 1000);
		if (st->show == STMT_SHOW_TRAFFIC_MATRIX)
			return snprintf(buf, len, "%s traffic matrix %u", kw,
			    st->num);
		if ((w = show_name(st->show)) == NULL)
			goto bad;
		if (st->show == STMT_SHOW_LINK)
			return snprintf(buf, len, "%s %s %s", kw, w, st->name);
		return snprintf(buf, len, "%s %s", kw, w);
	case STMT_SET_LINK:
		if ((st->lopts & (STMT_LOPT_RATE | STMT_LOPT_AQM |
		    STMT_LOPT_CONGESTION | STMT_LOPT_TRANSPORT |
		    STMT_LOPT_LIVENESS)) == 0 &&
		    st->queue == 0)
			goto bad;
		return snprintf(buf, len, "%s %s%s%s", kw, st->name,
		    format_queue(st->queue, queue, sizeof(queue)),
		    format_link_opts(st, opts, sizeof(opts)));
	case STMT_VCC:
		if ((n = print_vcc(st, kw, buf, len)) < 0)
			goto bad;
		return n;
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

/* Formats one allow list entry "ADDR/PLEN".  buf >= STMT_CIDR_STRLEN. */
static char *
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

static int
link_opts_equal(const struct stmt *a, const struct stmt *b)
{
	if (a->lopts != b->lopts)
		return 0;
	if ((a->lopts & STMT_LOPT_RATE) && a->rate != b->rate)
		return 0;
	if ((a->lopts & STMT_LOPT_AQM) && (a->aqm != b->aqm ||
	    (a->aqm != STMT_AQM_OFF && (a->aqm_target != b->aqm_target ||
	    a->aqm_interval != b->aqm_interval))))
		return 0;
	if ((a->lopts & STMT_LOPT_CONGESTION) &&
	    strcmp(a->congestion, b->congestion) != 0)
		return 0;
	if ((a->lopts & STMT_LOPT_TRANSPORT) && a->transport != b->transport)
		return 0;
	if ((a->lopts & STMT_LOPT_LIVENESS) &&
	    (a->live_interval != b->live_interval ||
	    a->live_mult != b->live_mult))
		return 0;
	return 1;
}

static int
cidr_equal(const struct stmt_cidr *a, const struct stmt_cidr *b)
{
	return a->family == b->family && a->plen == b->plen &&
	    memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static int
vcc_equal(const struct stmt *a, const struct stmt *b)
{
	const struct stmt_vclass *x = &a->vclass, *y = &b->vclass;

	if (a->vcc != b->vcc || strcmp(a->name, b->name) != 0)
		return 0;
	if (a->op == STMT_OP_DEL || a->vcc == STMT_VCC_ECN)
		return 1;
	if (a->vcc == STMT_VCC_SHARE)
		return a->window == b->window;
	if (x->set != y->set)
		return 0;
	if ((x->set & STMT_VCLASS_PORTS) && (x->nports != y->nports ||
	    memcmp(x->ports, y->ports, x->nports * sizeof(x->ports[0])) != 0))
		return 0;
	if ((x->set & STMT_VCLASS_SRC) && !cidr_equal(&x->src, &y->src))
		return 0;
	if ((x->set & STMT_VCLASS_DST) && !cidr_equal(&x->dst, &y->dst))
		return 0;
	if ((x->set & STMT_VCLASS_IFACE) && strcmp(x->iface, y->iface) != 0)
		return 0;
	if ((x->set & STMT_VCLASS_WEIGHT) && x->weight != y->weight)
		return 0;
	if ((x->set & STMT_VCLASS_RATE) && x->rate != y->rate)
		return 0;
	return 1;
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
		return hostport_equal(&a->addr, &b->addr) && (a->op ==
		    STMT_OP_DEL || (!a->tls == !b->tls && allow_equal(a, b)));
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
	case STMT_OFFLOAD:
	case STMT_THREADS:
	case STMT_LEARN:
	case STMT_RELAY:
		return !a->flag == !b->flag;
	case STMT_ROUTING:
		return !a->flag == !b->flag && a->num == b->num;
	case STMT_ADVERTISE:
		return hostport_equal(&a->addr, &b->addr);
	case STMT_ADAPT:
		return !a->flag == !b->flag && a->rate == b->rate &&
		    memcmp(&a->adapt, &b->adapt, sizeof(a->adapt)) == 0;
	case STMT_LIVENESS:
		return a->live_interval == b->live_interval &&
		    a->live_mult == b->live_mult;
	case STMT_HTTP:
		return hostport_equal(&a->addr, &b->addr) && allow_equal(a, b);
	case STMT_INTERFACE:
		if (strcmp(a->name, b->name) != 0)
			return 0;
		if (a->op == STMT_OP_DEL)
			return 1;
		if (a->iftype != b->iftype ||
		    strcmp(interface_dev(a), interface_dev(b)) != 0)
			return 0;
		if (a->iftype == STMT_IF_QEMU)
			return strcmp(a->path, b->path) == 0;
		if (a->iftype == STMT_IF_TAP)
			return a->persist == b->persist &&
			    strcmp(a->bridge, b->bridge) == 0;
		return a->iftype != STMT_IF_PCAP || (!a->promisc == !b->promisc &&
		    strcmp(a->filter, b->filter) == 0 &&
		    a->buffer == b->buffer && !a->up == !b->up &&
		    strcmp(a->segment, b->segment) == 0);
	case STMT_LINK:
		if (strcmp(a->name, b->name) != 0)
			return 0;
		return a->op == STMT_OP_DEL ||
		    (hostport_equal(&a->addr, &b->addr) &&
		    !a->tls == !b->tls && strcmp(a->peer, b->peer) == 0 &&
		    a->queue == b->queue && link_opts_equal(a, b));
	case STMT_ROUTE:
		return match_equal(&a->src, &b->src) &&
		    match_equal(&a->dst, &b->dst) &&
		    a->target == b->target && strcmp(a->name, b->name) == 0;
	case STMT_SHOW:
		return a->show == b->show && (a->show != STMT_SHOW_LINK ||
		    strcmp(a->name, b->name) == 0) &&
		    ((a->show != STMT_SHOW_TRAFFIC_TOPOLOGY &&
		    a->show != STMT_SHOW_TRAFFIC_MATRIX) || a->num == b->num);
	case STMT_RELOAD:
		return a->flag == b->flag;
	case STMT_SAVE:
		return strcmp(a->path, b->path) == 0;
	case STMT_SET_LINK:
		return strcmp(a->name, b->name) == 0 && a->queue == b->queue &&
		    link_opts_equal(a, b);
	case STMT_VCC:
		return vcc_equal(a, b);
	}
	return 0;
}

/* 1 if s is 1..max characters of [A-Za-z0-9._-]. */
static int
name_chars(const char *s, size_t max)
{
	size_t	 i;

	if (s[0] == '\0')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= max)
			return 0;
		if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			return 0;
	}
	return 1;
}

int
stmt_valid_name(const char *s)
{
	return is_alnum(s[0]) && name_chars(s, STMT_NAME_MAX);
}

/* As the kernel names them: "cubic", "bbr", "reno", "dctcp", "bbr3". */
static int
stmt_valid_congestion(const char *s)
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= STMT_CONGESTION_MAX || !((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return 0;
	return i > 0;
}

/* Linux also refuses "." and "..", which would name directories in sysfs. */
int
stmt_valid_dev(const char *s)
{
	return strcmp(s, ".") != 0 && strcmp(s, "..") != 0 &&
	    name_chars(s, STMT_DEV_MAX);
}

/* Portable user and group names (POSIX), as useradd takes them. */
static int
stmt_valid_account(const char *s)
{
	return s[0] != '-' && name_chars(s, STMT_ACCOUNT_MAX);
}

/* Lists. */

int
stmt_vec_reserve(struct stmt_vec *v, size_t cap)
{
	struct stmt_item	*n;

	if (cap <= v->cap)
		return 0;
	if ((n = reallocarray(v->v, cap, sizeof(*n))) == NULL)
		return -1;
	v->v = n;
	v->cap = cap;
	return 0;
}

int
stmt_vec_add(struct stmt_vec *v, const struct stmt *st, int line)
{
	struct stmt_item	*it;
	struct stmt_route	*r;

	if (v->n == v->cap &&
	    stmt_vec_reserve(v, v->cap ? v->cap * 2 : 64) == -1)
		return -1;
	it = &v->v[v->n];
	memset(it, 0, sizeof(*it));
	if (st->kind == STMT_ROUTE) {
		r = &it->u.route;
		r->src = st->src;
		r->dst = st->dst;
		memcpy(r->name, st->name, sizeof(r->name));
		r->name[STMT_NAME_MAX] = '\0';
		r->target = (uint8_t)st->target;
		r->op = (uint8_t)st->op;
	} else {
		if ((it->u.st = malloc(sizeof(*st))) == NULL)
			return -1;
		*it->u.st = *st;
	}
	it->line = line;
	it->kind = (uint8_t)st->kind;
	v->n++;
	return 0;
}

const struct stmt *
stmt_vec_get(const struct stmt_vec *v, size_t i, struct stmt *tmp)
{
	const struct stmt_item	*it = &v->v[i];
	const struct stmt_route	*r = &it->u.route;

	if (it->kind != STMT_ROUTE)
		return it->u.st;
	tmp->kind = STMT_ROUTE;
	tmp->op = (enum stmt_op)r->op;
	tmp->src = r->src;
	tmp->dst = r->dst;
	tmp->target = (enum stmt_target)r->target;
	memcpy(tmp->name, r->name, sizeof(tmp->name));
	return tmp;
}

void
stmt_vec_pop(struct stmt_vec *v)
{
	if (v->n == 0)
		return;
	v->n--;
	if (v->v[v->n].kind != STMT_ROUTE)
		free(v->v[v->n].u.st);
}

void
stmt_vec_clear(struct stmt_vec *v)
{
	while (v->n > 0)
		stmt_vec_pop(v);
	free(v->v);
	memset(v, 0, sizeof(*v));
}

void
stmt_route_fill(struct stmt *st, const struct stmt_match *src,
    const struct stmt_match *dst, enum stmt_target target, const char *name)
{
	size_t	 n = strnlen(name, sizeof(st->name) - 1);

	st->kind = STMT_ROUTE;
	st->src = *src;
	st->dst = *dst;
	st->target = target;
	memcpy(st->name, name, n);
	st->name[n] = '\0';
}

/* Hashes and indexes. */

static uint32_t
fnv_str(uint32_t h, const char *s)
{
	return hash_fnv1a(h, s, strlen(s));
}

static uint32_t
fnv_u32(uint32_t h, uint32_t v)
{
	return hash_fnv1a(h, &v, sizeof(v));
}

/* murmur3's finalizer: the table takes the low bits. */
static uint32_t
hash_final(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static uint32_t
match_hash(uint32_t h, const struct stmt_match *m)
{
	h = fnv_u32(h, (uint32_t)m->kind);
	return m->kind == MATCH_ANY ? h : hash_fnv1a(h, m->mac, ETHER_ADDR_LEN);
}

uint32_t
stmt_hash(const struct stmt *st)
{
	uint32_t	 h = HASH_FNV_BASIS;
	size_t		 i;

	h = fnv_u32(h, (uint32_t)st->kind);
	h = fnv_u32(h, (uint32_t)st->op);
	switch (st->kind) {
	case STMT_ROUTE:
		h = match_hash(h, &st->src);
		h = match_hash(h, &st->dst);
		h = fnv_u32(h, (uint32_t)st->target);
		h = fnv_str(h, st->name);
		break;
	case STMT_NODE:
	case STMT_NETWORK:
	case STMT_INTERFACE:
	case STMT_LINK:
	case STMT_SET_LINK:
		h = fnv_str(h, st->name);
		break;
	case STMT_VCC:
		h = fnv_u32(fnv_str(h, st->name), (uint32_t)st->vcc);
		break;
	case STMT_LISTEN:
		/* As hostport_equal() compares: host names case-blind. */
		h = fnv_u32(h, st->addr.port);
		for (i = 0; st->addr.host[i] != '\0'; i++)
			h = (h ^ (uint8_t)(st->addr.host[i] | 0x20)) *
			    16777619u;
		break;
	case STMT_KEEPALIVE:
		h = fnv_u32(h, st->num);
		break;
	case STMT_SHOW:
		h = fnv_u32(h, (uint32_t)st->show);
		break;
	default:
		break;
	}
	return hash_final(h);
}

static uint32_t
key_hash(enum stmt_key key, const struct stmt *st)
{
	uint32_t	 h = fnv_u32(HASH_FNV_BASIS, (uint32_t)st->kind);

	switch (key) {
	case STMT_KEY_SAME:
		return stmt_hash(st);
	case STMT_KEY_NAME:
		if (st->kind == STMT_VCC)
			h = fnv_u32(h, (uint32_t)st->vcc);
		h = fnv_str(h, st->name);
		break;
	case STMT_KEY_ADDR:
		h = fnv_u32(fnv_str(h, st->addr.host), st->addr.port);
		break;
	}
	return hash_final(h);
}

/* key_hash() of a route item, without making a whole statement of it. */
static uint32_t
route_key_hash(enum stmt_key key, const struct stmt_route *r)
{
	uint32_t	 h = fnv_u32(HASH_FNV_BASIS, (uint32_t)STMT_ROUTE);

	switch (key) {
	case STMT_KEY_SAME:
		h = fnv_u32(h, (uint32_t)r->op);
		h = match_hash(h, &r->src);
		h = match_hash(h, &r->dst);
		h = fnv_u32(h, (uint32_t)r->target);
		h = fnv_str(h, r->name);
		break;
	case STMT_KEY_NAME:
		h = fnv_str(h, r->name);
		break;
	case STMT_KEY_ADDR:
		h = fnv_u32(fnv_str(h, ""), 0);
		break;
	}
	return hash_final(h);
}

static int
key_equal(enum stmt_key key, const struct stmt *a, const struct stmt *b)
{
	if (a->kind != b->kind)
		return 0;
	switch (key) {
	case STMT_KEY_SAME:
		return stmt_equal(a, b);
	case STMT_KEY_NAME:
		return (a->kind != STMT_VCC || a->vcc == b->vcc) &&
		    strcmp(a->name, b->name) == 0;
	case STMT_KEY_ADDR:
		return a->addr.port == b->addr.port &&
		    strcmp(a->addr.host, b->addr.host) == 0;
	}
	return 0;
}

/* A route item against a statement, without making a whole statement. */
static int
route_key_equal(enum stmt_key key, const struct stmt_route *r,
    const struct stmt *st)
{
	if (st->kind != STMT_ROUTE)
		return 0;
	switch (key) {
	case STMT_KEY_SAME:
		return r->op == (uint8_t)st->op &&
		    r->target == (uint8_t)st->target &&
		    match_equal(&r->src, &st->src) &&
		    match_equal(&r->dst, &st->dst) &&
		    strcmp(r->name, st->name) == 0;
	case STMT_KEY_NAME:
		return strcmp(r->name, st->name) == 0;
	case STMT_KEY_ADDR:
		return st->addr.host[0] == '\0' && st->addr.port == 0;
	}
	return 0;
}

struct stmt_index_slot {
	size_t		 item;		/* item number + 1; 0: empty */
	uint32_t	 hash;
};

void
stmt_index_init(struct stmt_index *ix, const struct stmt_vec *v,
    enum stmt_key key)
{
	memset(ix, 0, sizeof(*ix));
	ix->vec = v;
	ix->key = key;
}

void
stmt_index_free(struct stmt_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
	ix->nslot = ix->n = 0;
}

/*
 * Linear probing, and no removals: of the items with one key, the first
 * added is the first on the probe sequence, and a rehash in slot order
 * keeps that (equal keys go to one run, in the order they had).
 */
static void
slot_put(struct stmt_index_slot *s, size_t nslot, size_t item, uint32_t hash)
{
	size_t	 j = hash & (nslot - 1);

	while (s[j].item != 0)
		j = (j + 1) & (nslot - 1);
	s[j].item = item;
	s[j].hash = hash;
}

static int
index_grow(struct stmt_index *ix)
{
	struct stmt_index_slot	*s;
	size_t			 n, i, j, start;

	if (ix->nslot > 0 && (ix->n + 1) * 4 <= ix->nslot * 3)
		return 0;
	n = ix->nslot ? ix->nslot * 2 : 64;
	if (n > SIZE_MAX / sizeof(*s) || (s = calloc(n, sizeof(*s))) == NULL)
		return -1;
	/*
	 * Start at an empty slot so that no run is split across the end of
	 * the old table: each run is put back in order.
	 */
	for (start = 0; start < ix->nslot && ix->slot[start].item != 0; start++)
		;
	for (i = 0; i < ix->nslot; i++) {
		j = (start + i) & (ix->nslot - 1);
		if (ix->slot[j].item != 0)
			slot_put(s, n, ix->slot[j].item, ix->slot[j].hash);
	}
	free(ix->slot);
	ix->slot = s;
	ix->nslot = n;
	return 0;
}

int
stmt_index_add(struct stmt_index *ix, size_t i)
{
	const struct stmt_item	*it = &ix->vec->v[i];

	if (index_grow(ix) == -1)
		return -1;
	slot_put(ix->slot, ix->nslot, i + 1, it->kind == STMT_ROUTE ?
	    route_key_hash(ix->key, &it->u.route) :
	    key_hash(ix->key, it->u.st));
	ix->n++;
	return 0;
}

int
stmt_index_add_all(struct stmt_index *ix, enum stmt_kind kind)
{
	size_t	 i;

	for (i = 0; i < ix->vec->n; i++)
		if ((kind == 0 || ix->vec->v[i].kind == kind) &&
		    stmt_index_add(ix, i) == -1)
			return -1;
	return 0;
}

long
stmt_index_find(const struct stmt_index *ix, const struct stmt *st)
{
	const struct stmt_item	*it;
	uint32_t		 h;
	size_t			 j;
	int			 eq;

	if (ix->nslot == 0)
		return -1;
	h = key_hash(ix->key, st);
	for (j = h & (ix->nslot - 1); ix->slot[j].item != 0;
	    j = (j + 1) & (ix->nslot - 1)) {
		if (ix->slot[j].hash != h)
			continue;
		it = &ix->vec->v[ix->slot[j].item - 1];
		if (it->kind == STMT_ROUTE)
			eq = route_key_equal(ix->key, &it->u.route, st);
		else
			eq = key_equal(ix->key, it->u.st, st);
		if (eq)
			return (long)(ix->slot[j].item - 1);
	}
	return -1;
}

const char *
stmt_transport_name(enum stmt_transport t)
{
	switch (t) {
	case STMT_TRANSPORT_UDP:
		return "udp";
	case STMT_TRANSPORT_AUTO:
		return "auto";
	case STMT_TRANSPORT_TCP:
		break;
	}
	return "tcp";
}
