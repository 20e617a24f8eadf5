/*
 * The command language.  A configuration file is a list of statements, one a
 * line; vnetctl sends the same statements (and a few verbs) over the control
 * socket.  One parser serves both: it knows no files and no sockets, it takes
 * one line and returns one statement or an error with the column it is at.
 *
 * Forms accepted (tokens are separated by blanks; '#' starts a comment
 * outside double quotes; a token may be double-quoted, with \" and \\):
 *
 *   node NAME
 *   network NAME
 *   listen ADDR:PORT [tls] [allow CIDR[,CIDR...]]
 *   control PATH
 *   keepalive SECONDS                       1..3600
 *   learn yes|no
 *   interface NAME tap [DEV [persist yes|no|auto] [bridge BR]]
 *                                           (also add-interface)
 *   interface NAME pcap DEV [promisc yes|no] [filter EXPR] [buffer BYTES]
 *       [up yes|no] [segment NAME]   (NAME: a LAN segment other nodes may
 *                                     attach too; one forwards it, see
 *                                     routing.h)
 *   interface NAME qemu PATH                (PATH: at most 107 characters)
 *   del-interface NAME
 *   link NAME HOST:PORT [tls] [peer NODE] [queue BYTES] [LINKOPT...]
 *                                           (also add-link)
 *   del-link NAME
 *   route SRC DST link|interface NAME       (also add-route)
 *   del-route SRC DST link|interface NAME
 *   show links [all]|routes|interfaces|macs|stats|config|flows|vcc|refused
 *   add-listen ADDR:PORT, del-listen ADDR:PORT
 *   reload [-n]                             (control socket only; -n: the
 *                                           changes, applied to nothing)
 *   save [PATH]                             (control socket only)
 *   show link NAME
 *   set-link NAME [queue BYTES] [LINKOPT...]
 *                                           (one at least; options by link
 *                                           name: now, and whenever a link
 *                                           NAME comes up)
 *
 * LINKOPT, each at most once:
 *   rate RATE|none                          RATE: a number (a decimal point
 *                                           allowed) and bit, kbit, mbit,
 *                                           gbit or tbit (powers of 1000)
 *   aqm off|codel|fq_codel [target TIME] [interval TIME]
 *                                           TIME: a number and us, ms or s
 *   congestion CC|default                   CC: 1..15 characters of
 *                                           [a-z0-9_-], as the kernel names
 *                                           TCP congestion controls
 *   transport tcp|udp|auto                  where its frames go: the TCP
 *                                           connection, UDP datagrams, or
 *                                           datagrams with TCP as the
 *                                           fallback (udp.h)
 *   liveness TIME|off|default [multiplier N]
 *                                           the link's probes (liveness.h):
 *                                           TIME 10ms..60s in whole ms, N
 *                                           2..255; default: the global
 *
 * The other statements: settings, vcc, routing and status.
 *
 *   tls-cert FILE | tls-key FILE | tls-ca FILE | tls-crl FILE
 *   control-group GROUP
 *   user NAME
 *   vcc IFACE ecn virtual                   (also add-vcc)
 *   vcc share IFACE window BYTES
 *   vcc class NAME [match tcp-port P[,P..]] [match src CIDR]
 *       [match dst CIDR] [interface IFACE] [weight W] [rate RATE|none]
 *   del-vcc IFACE ecn | del-vcc share IFACE | del-vcc class NAME
 *   offload yes|no
 *   threads yes|no
 *   routing auto [refresh SECONDS] | routing static
 *                                           SECONDS 1..3600; num (0: default)
 *   advertise HOST:PORT                     where peers may reach this node
 *   http ADDR:PORT [allow CIDR[,CIDR...]]   the read-only status server
 *   liveness TIME|off [multiplier N]        every link's probes, but for
 *                                           those with their own
 *   adapt shortcuts yes|no [threshold RATE] [hold SECONDS] [idle SECONDS]
 *       [max N]
 *   adapt off|on
 *   relay yes|no                            whether frames between two
 *                                           other nodes may pass here
 *   show nodes|topology|traffic|adapt
 *   show traffic nodes
 *   show traffic topology [THRESHOLD]       THRESHOLD 0..1 (default 0.1),
 *                                           kept in num as permille
 *
 * Options after ADDR:PORT and HOST:PORT come in any order, each at most
 * once; the printer writes them in the order above.  CIDR is an IPv4 or
 * IPv6 address with an optional /PREFIX (none: the one address), without
 * host bits; at most STMT_ALLOW_MAX of them.  BYTES is a decimal count with
 * an optional k, m or g suffix (KiB, MiB, GiB), STMT_QUEUE_MIN..MAX.  FILE
 * and PATH are absolute.  GROUP and NAME (a user) are 1..32 characters of
 * [A-Za-z0-9._-] not starting with '-'.
 * SRC and DST are "any", a MAC address, or "not-" followed by a MAC address.
 * NAME is 1..31 characters of [A-Za-z0-9._-] starting with a letter or digit.
 * DEV is 1..15 characters of [A-Za-z0-9._-].
 * ADDR:PORT and HOST:PORT: an IPv4 literal, a bracketed IPv6 literal or a host
 * name, then ':' and a decimal port 1..65535.  For listen, ADDR may also be
 * '*' (all addresses).  EXPR is a libpcap filter expression, quoted when it
 * has blanks; promisc defaults to yes.  PATH (control, save) is absolute.
 * For vcc: IFACE is an interface NAME other than "class" and "share"; BYTES
 * is 1..2^30; W is 1..1000; RATE is a decimal number and a unit, bit, kbit,
 * mbit or gbit (powers of 1000); CIDR is an IPv4 or IPv6 address with an
 * optional /PREFIX.  A vcc class statement sets the attributes it names and
 * keeps the others of an existing class of that name.
 */
#ifndef VNET_STMT_H
#define VNET_STMT_H

#include <stddef.h>
#include <stdint.h>

#include "ether.h"

#define STMT_NAME_MAX	31	/* node, network, link, interface names */
#define STMT_DEV_MAX	15	/* IFNAMSIZ - 1 */
#define STMT_CONGESTION_MAX 15	/* TCP_CA_NAME_MAX - 1 */
#define STMT_HOST_MAX	255
#define STMT_PATH_MAX	1023
#define STMT_SUN_PATH_MAX 107	/* a Unix socket's path (interface qemu) */
#define STMT_LINE_MAX	4096	/* longest line the parser accepts */
#define STMT_ERR_MAX	256
#define STMT_FILTER_MAX	1023	/* a pcap filter expression */
#define STMT_ALLOW_MAX	16	/* CIDRs on one listener */
#define STMT_ACCOUNT_MAX 32	/* user and group names */
#define STMT_QUEUE_MIN	(128 * 1024)		/* a link's queue, bytes */
#define STMT_QUEUE_MAX	(1024 * 1024 * 1024)

enum stmt_kind {
	STMT_NODE = 1,
	STMT_NETWORK,
	STMT_LISTEN,
	STMT_CONTROL,
	STMT_KEEPALIVE,
	STMT_LEARN,
	STMT_INTERFACE,
	STMT_LINK,
	STMT_ROUTE,
	STMT_SHOW,
	STMT_RELOAD,
	STMT_SAVE,
	STMT_SET_LINK,
	STMT_TLS_CERT,
	STMT_TLS_KEY,
	STMT_TLS_CA,
	STMT_TLS_CRL,
	STMT_CONTROL_GROUP,
	STMT_USER,
	STMT_VCC,
	STMT_OFFLOAD,
	STMT_THREADS,
	STMT_ROUTING,
	STMT_ADVERTISE,
	STMT_ADAPT,
	STMT_HTTP,
	STMT_LIVENESS,
	STMT_RELAY,
};
#define STMT_KIND_LAST	STMT_RELAY

enum stmt_op {
	STMT_OP_SET = 0,	/* plain statement, or its add- form */
	STMT_OP_DEL,		/* del- form */
};

enum stmt_iftype {
	STMT_IF_TAP = 1,
	STMT_IF_PCAP,
	STMT_IF_QEMU,
};

enum stmt_show {
	STMT_SHOW_LINKS = 1,
	STMT_SHOW_ROUTES,
	STMT_SHOW_INTERFACES,
	STMT_SHOW_MACS,
	STMT_SHOW_STATS,
	STMT_SHOW_CONFIG,
	STMT_SHOW_LINK,		/* name: the link */
	STMT_SHOW_FLOWS,
	STMT_SHOW_VCC,
	STMT_SHOW_REFUSED,	/* the peers refused lately, and why */
	STMT_SHOW_LINKS_ALL,	/* show links all: every counter */
	STMT_SHOW_NODES,
	STMT_SHOW_TOPOLOGY,
	STMT_SHOW_TRAFFIC,
	STMT_SHOW_TRAFFIC_NODES,
	STMT_SHOW_TRAFFIC_TOPOLOGY,	/* num: threshold, permille */
	STMT_SHOW_TRAFFIC_MATRIX,	/* num: rows and columns (1..64) */
	STMT_SHOW_ADAPT,
	STMT_SHOW_TLS,		/* certificates in use, and their expiry */
};
#define STMT_THRESHOLD_DEFAULT	100	/* permille */
#define STMT_TOP_DEFAULT	32	/* show traffic matrix */
#define STMT_TOP_MAX		64
#define STMT_REFRESH_MAX	3600	/* s, routing auto refresh */

/* Link options a statement gives (bits of stmt.lopts). */
#define STMT_LOPT_RATE	0x1
#define STMT_LOPT_AQM	0x2
#define STMT_LOPT_CONGESTION	0x4
#define STMT_LOPT_TRANSPORT	0x8
#define STMT_LOPT_LIVENESS	0x10

/*
 * liveness TIME|off [multiplier N] (and the link option, which may also say
 * default): live_interval in ms, STMT_LIVENESS_MIN..MAX, or
 * STMT_LIVENESS_OFF; 0 (link option): the global one.  live_mult 0: the
 * default.
 */
#define STMT_LIVENESS_OFF	UINT32_MAX
#define STMT_LIVENESS_MIN	10		/* ms */
#define STMT_LIVENESS_MAX	60000		/* ms */
#define STMT_LIVENESS_MULT_MIN	2
#define STMT_LIVENESS_MULT_MAX	255

enum stmt_transport {
	STMT_TRANSPORT_TCP = 0,		/* the default */
	STMT_TRANSPORT_UDP,
	STMT_TRANSPORT_AUTO,
};

#define STMT_RATE_MIN	8000ULL			/* bit/s */
#define STMT_RATE_MAX	1000000000000ULL	/* bit/s */
#define STMT_TIME_MIN	100			/* us */
#define STMT_TIME_MAX	60000000		/* us */

enum stmt_aqm {
	STMT_AQM_OFF = 1,
	STMT_AQM_CODEL,
	STMT_AQM_FQ_CODEL,
};

/* What a vcc statement is about. */
enum stmt_vcc {
	STMT_VCC_ECN = 1,	/* vcc IFACE ecn virtual */
	STMT_VCC_SHARE,		/* vcc share IFACE window BYTES */
	STMT_VCC_CLASS,		/* vcc class NAME ... */
};

#define STMT_PORTS_MAX		16
#define STMT_WEIGHT_MAX		1000
#define STMT_WINDOW_MAX		(1U << 30)


/* One side of a forwarding rule. */
enum stmt_match_kind {
	MATCH_ANY = 0,
	MATCH_NOT,
	MATCH_MAC,
};

struct stmt_match {
	enum stmt_match_kind	kind;
	uint8_t			mac[ETHER_ADDR_LEN];
};

enum stmt_target {
	TARGET_LINK = 1,
	TARGET_INTERFACE,
};

struct stmt_hostport {
	char		host[STMT_HOST_MAX + 1];	/* no brackets; "*" = any */
	uint16_t	port;
};

/* An address block of an allow list. */
struct stmt_cidr {
	int		family;		/* AF_INET or AF_INET6 */
	uint8_t		addr[16];	/* network byte order; IPv4 in 4 */
	uint8_t		plen;		/* prefix length */
};

/* The attributes a vcc class statement names (set says which). */
#define STMT_VCLASS_PORTS	0x01
#define STMT_VCLASS_SRC		0x02
#define STMT_VCLASS_DST		0x04
#define STMT_VCLASS_IFACE	0x08
#define STMT_VCLASS_WEIGHT	0x10
#define STMT_VCLASS_RATE	0x20

struct stmt_vclass {
	unsigned int	 set;
	uint16_t	 ports[STMT_PORTS_MAX];
	size_t		 nports;
	struct stmt_cidr src, dst;
	char		 iface[STMT_NAME_MAX + 1];
	unsigned int	 weight;
	uint64_t	 rate;		/* bit/s; 0 = no cap ("rate none") */
};

/* adapt shortcuts ... (verb 0), adapt off (1), adapt on (2); 0: default */
struct stmt_adapt {
	unsigned int	 verb;
	unsigned int	 hold, idle, max;
};
#define STMT_ADAPT_OFF		1
#define STMT_ADAPT_ON		2
#define STMT_ADAPT_SECONDS_MAX	86400
#define STMT_ADAPT_MAX_MAX	1024

/*
 * Whether a TAP device outlives the daemon: auto (the default) keeps it
 * while it stays in the daemon's network namespace, where the next start
 * finds it again, and lets it go with the daemon once it has been moved
 * elsewhere (tap.c).
 */
enum stmt_persist {
	STMT_PERSIST_NO = 0,
	STMT_PERSIST_YES,
	STMT_PERSIST_AUTO,
};

struct showwin;

struct stmt {
	enum stmt_kind		kind;
	enum stmt_op		op;
	/* node, network, interface, link: the name; route: target's name */
	char			name[STMT_NAME_MAX + 1];
	char			dev[STMT_DEV_MAX + 1];	/* interface; "" = name */
	enum stmt_iftype	iftype;
	struct stmt_hostport	addr;			/* listen, link */
	char			path[STMT_PATH_MAX + 1];/* control, save,
							   interface qemu */
	struct stmt_match	src, dst;		/* route */
	enum stmt_target	target;			/* route */
	/* learn, offload, threads, adapt shortcuts, routing auto; reload -n */
	int			flag;
	unsigned int		num;	/* keepalive, routing refresh, threshold */
	enum stmt_show		show;			/* show */
	int			promisc;		/* interface pcap */
	uint32_t		buffer;			/* interface pcap; 0: default */
	int			up;			/* interface pcap */
	int			persist;		/* interface tap: STMT_PERSIST_* */
	char			bridge[STMT_DEV_MAX + 1];/* interface tap */
	char			filter[STMT_FILTER_MAX + 1];	/* interface pcap */
	char			segment[STMT_NAME_MAX + 1];	/* interface pcap;
								   "": none */
	/* link, set-link: the options given (STMT_LOPT_*), and their values */
	unsigned int		lopts;
	/*
	 * link made by adapt only, never parsed or printed: dial from this
	 * local port (the listener's), so that a NAT keeps it: a punched
	 * hole (shortcut.h); 0: any port.
	 */
	uint16_t		from_port;
	/*
	 * show, from the status server only, never parsed or printed: the
	 * page of rows it will give (showwin.h; NULL: all).  A show makes
	 * only those and says so in "%skipped N" lines for the rows before
	 * and after (ctl.h).
	 */
	struct showwin		*win;
	uint64_t		rate;			/* bit/s; 0: none */
	enum stmt_aqm		aqm;
	uint32_t		aqm_target;		/* us */
	uint32_t		aqm_interval;		/* us */
	/* TCP congestion control of the link's connections; "": the system's */
	char			congestion[STMT_CONGESTION_MAX + 1];
	enum stmt_transport	transport;
	uint32_t		live_interval;		/* ms, see above */
	uint32_t		live_mult;
	int			tls;			/* listen, link */
	struct stmt_cidr	allow[STMT_ALLOW_MAX];	/* listen, http */
	unsigned int		nallow;
	char			peer[STMT_NAME_MAX + 1];/* link; "" = name */
	uint32_t		queue;			/* link; 0 = default */
	/* control-group, user; tls-* use path */
	char			account[STMT_ACCOUNT_MAX + 1];
	/* vcc: name is the interface (ecn, share) or the class */
	enum stmt_vcc		vcc;
	uint64_t		window;			/* vcc share */
	struct stmt_vclass	vclass;			/* vcc class */
	/* adapt: flag is shortcuts yes, rate the threshold (0: default) */
	struct stmt_adapt	adapt;
};

struct stmt_error {
	int	column;			/* 1-based column of the offending token */
	char	msg[STMT_ERR_MAX];
};

/*
 * Parses one line (no newline needed; a trailing "\n" or "\r\n" is ignored).
 * Returns 1 and fills *st for a statement, 0 for a blank or comment-only line,
 * -1 with *err filled for anything else.  Messages name what is wrong, e.g.
 * "unknown statement 'lnk'", "link: invalid port '0' (1..65535)",
 * "route: invalid MAC address 'zz:..'", "link: expected NAME HOST:PORT",
 * "learn: expected yes or no", "link: unexpected 'x'" (a token too many).
 */
int	 stmt_parse(const char *line, struct stmt *st, struct stmt_error *err);

/*
 * Prints the canonical text of a statement into buf (no newline), in the
 * form a configuration file uses (plain form for STMT_OP_SET, "del-" form for
 * STMT_OP_DEL).  stmt_parse() of the result gives back an equal statement.
 * Returns the length that snprintf would have, like snprintf.
 */
int	 stmt_print(const struct stmt *st, char *buf, size_t len);

/* Formats one route side: "any", "not-00:11:..", "00:11:..". buf >= 24. */
char	*stmt_match_format(const struct stmt_match *m, char *buf);

/* Formats HOST:PORT, bracketing IPv6 literals.  buf >= STMT_HOST_MAX + 9. */
char	*stmt_hostport_format(const struct stmt_hostport *hp, char *buf, size_t len);

/*
 * The keyword of a kind and op as the printer writes it ("link",
 * "del-link", "tls-cert"); NULL if there is none.
 */
const char *stmt_keyword(enum stmt_kind, enum stmt_op);

/*
 * 1 for a setting: a statement with one value that a configuration gives
 * at most once (node, keepalive, tls-cert, offload, ...).
 */
int	 stmt_is_setting(enum stmt_kind);
/*
 * 1 if a statement of this kind may be sent at run time (vnetctl), 0 if
 * only the configuration file gives it and a change needs a restart.  The
 * daemon refuses the latter at run time (vnetd_startup_only(), which
 * check_verb holds to this); vnetctl's help is made from it.
 */
int	 stmt_runtime(enum stmt_kind);
/*
 * Of the file's only, 1 for those a reload takes all the same (the tls-*
 * files), 0 for those that need a restart.  The daemon's reload follows it
 * (vnetd_reloadable()); vnetctl's help says which is which.
 */
int	 stmt_reloadable(enum stmt_kind);
/* Keyword i of the grammar (add- and del- forms too), or NULL past the last. */
const char *stmt_keyword_at(size_t i, enum stmt_kind *, enum stmt_op *);
/*
 * What show takes: word i ("links") and, in *args, what may follow it
 * ("[all]", "" for nothing), or NULL past the last.
 */
const char *stmt_show_at(size_t i, const char **args);

/* 1 when two statements are equal in every field that their kind uses. */
int	 stmt_equal(const struct stmt *a, const struct stmt *b);
/* Makes st the route statement SRC DST TARGET NAME (the rest untouched). */
void	 stmt_route_fill(struct stmt *st, const struct stmt_match *src,
	    const struct stmt_match *dst, enum stmt_target, const char *name);

/* Formats a rate (bit/s) as the parser reads it: "10mbit"; buf >= 32. */
char	*stmt_rate_format(uint64_t bps, char *buf, size_t len);

/* Validators the parser uses, exported for the daemon and the tests. */
int	 stmt_valid_name(const char *s);
int	 stmt_valid_dev(const char *s);

/* 1 when addr (4 or 16 bytes of family AF_INET or AF_INET6) is in c. */
int	 stmt_cidr_match(const struct stmt_cidr *, int family,
	    const uint8_t *addr);

/*
 * A list of statements that stays small when it is long.  A struct stmt is
 * some 3 KB (room for the longest path, filter, host name and allow list
 * any kind can carry), and a big configuration is mostly routes: a route is
 * kept here in one 72-byte item, any other statement whole, on the heap.
 * Each item also keeps the line it came from (0: none).
 */
struct stmt_route {
	struct stmt_match	 src, dst;
	char			 name[STMT_NAME_MAX + 1];
	uint8_t			 target;	/* enum stmt_target */
	uint8_t			 op;		/* enum stmt_op */
};

struct stmt_item {
	union {
		struct stmt_route	 route;	/* kind STMT_ROUTE */
		struct stmt		*st;	/* any other kind */
	} u;
	int			 line;
	uint8_t			 kind;		/* enum stmt_kind */
};

struct stmt_vec {
	struct stmt_item	*v;
	size_t			 n, cap;
};

/* Appends a copy of st; 0, or -1 (out of memory: the list is unchanged). */
int	 stmt_vec_add(struct stmt_vec *, const struct stmt *, int line);
/*
 * Item i as a statement: a pointer into the list, or, for a route, tmp
 * filled with it.  tmp is the caller's, zeroed before its first use: only
 * a route's fields (kind, op, src, dst, target, name) are written into it,
 * so it stays cheap to reuse across a loop.
 */
const struct stmt *stmt_vec_get(const struct stmt_vec *, size_t i,
	    struct stmt *tmp);
/* Makes room for n items in all, so that adding them does not move it. */
int	 stmt_vec_reserve(struct stmt_vec *, size_t n);
/* Drops the last item. */
void	 stmt_vec_pop(struct stmt_vec *);
void	 stmt_vec_clear(struct stmt_vec *);

/*
 * An index of a list's items by a key, for lookups in constant time on
 * average: a hash table of item numbers, open addressing.  Keys:
 *   STMT_KEY_SAME   statements stmt_equal() calls equal
 *   STMT_KEY_NAME   kind and name (and for vcc, which policy it is)
 *   STMT_KEY_ADDR   kind and HOST:PORT as written (listen)
 * stmt_index_find() gives the first item added with st's key, so that a
 * duplicate can name the line it repeats.
 */
enum stmt_key {
	STMT_KEY_SAME = 1,
	STMT_KEY_NAME,
	STMT_KEY_ADDR,
};

struct stmt_index_slot;

struct stmt_index {
	const struct stmt_vec	*vec;
	enum stmt_key		 key;
	struct stmt_index_slot	*slot;
	size_t			 nslot;		/* 0 or a power of two */
	size_t			 n;
};

void	 stmt_index_init(struct stmt_index *, const struct stmt_vec *,
	    enum stmt_key);
/* Adds item i of the list; 0, or -1 out of memory. */
int	 stmt_index_add(struct stmt_index *, size_t i);
/* Adds every item of the list whose kind is kind (0: every item). */
int	 stmt_index_add_all(struct stmt_index *, enum stmt_kind kind);
/* The first item added with st's key, or -1. */
long	 stmt_index_find(const struct stmt_index *, const struct stmt *st);
void	 stmt_index_free(struct stmt_index *);

/* A hash of what stmt_equal() compares: equal statements hash equal. */
uint32_t stmt_hash(const struct stmt *);

/* "tcp", "udp", "auto". */
const char	*stmt_transport_name(enum stmt_transport);

#endif
