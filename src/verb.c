/*
 * vnetctl's verbs (verb.h): the table that help, the usage on a syntax
 * error and the bash completion are made from.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "stmt.h"
#include "verb.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

#define LETTERS		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define AQMS		"off codel fq_codel"
#define LINKOPTS	"rate aqm congestion transport"
#define TRANSPORTS	"tcp udp auto"

static const struct verb_rule add_link_rules[] = {
	{ -3, "aqm", AQMS }, { -3, "rate", "none" },
	{ -3, "congestion", "default" }, { -3, "transport", TRANSPORTS },
	{ -3, NULL, "tls peer queue " LINKOPTS }, { 0, NULL, NULL },
};
static const struct verb_rule link_name_rules[] = {
	{ 1, NULL, "@link" }, { 0, NULL, NULL },
};
static const struct verb_rule set_link_rules[] = {
	{ 1, NULL, "@link" }, { -2, "aqm", AQMS }, { -2, "rate", "none" },
	{ -2, "congestion", "default" }, { -2, "transport", TRANSPORTS },
	{ -2, NULL, LINKOPTS " queue" },
	{ 0, NULL, NULL },
};
static const struct verb_rule add_route_rules[] = {
	{ 1, NULL, "any @mac" }, { 2, NULL, "any @mac" },
	{ 3, NULL, "link interface" }, { 4, "link", "@link" },
	{ 4, "interface", "@interface" }, { 0, NULL, NULL },
};
static const struct verb_rule del_route_rules[] = {
	{ 1, NULL, "@route" }, { 2, NULL, "@route" }, { 3, NULL, "@route" },
	{ 4, NULL, "@route" }, { 0, NULL, NULL },
};
static const struct verb_rule add_interface_rules[] = {
	{ 2, NULL, "tap pcap qemu" }, { -4, "persist", "yes no auto" },
	{ -4, "promisc", "yes no" }, { -4, "up", "yes no" },
	{ -4, NULL, "persist bridge promisc filter buffer up segment" },
	{ 0, NULL, NULL },
};
static const struct verb_rule iface_name_rules[] = {
	{ 1, NULL, "@interface" }, { 0, NULL, NULL },
};
static const struct verb_rule add_listen_rules[] = {
	{ -2, NULL, "tls allow" }, { 0, NULL, NULL },
};
static const struct verb_rule yesno_rules[] = {
	{ 1, NULL, "yes no" }, { 0, NULL, NULL },
};
static const struct verb_rule vcc_rules[] = {
	{ 1, NULL, "share class @interface" }, { 2, "share", "@interface" },
	{ 2, "class", "" }, { 2, NULL, "ecn" }, { 3, "ecn", "virtual" },
	{ -4, "match", "tcp-port src dst" }, { -4, "interface", "@interface" },
	{ -4, "rate", "none" },
	{ -4, NULL, "match interface weight rate window" }, { 0, NULL, NULL },
};
static const struct verb_rule del_vcc_rules[] = {
	{ 1, NULL, "share class @interface" }, { 2, "share", "@interface" },
	{ 2, "class", "" }, { 2, NULL, "ecn" }, { 0, NULL, NULL },
};
static const struct verb_rule adapt_rules[] = {
	{ 1, NULL, "off on shortcuts" }, { 2, "shortcuts", "yes no" },
	{ -3, NULL, "threshold hold idle max" }, { 0, NULL, NULL },
};
static const struct verb_rule reload_rules[] = {
	{ 1, NULL, "-n" }, { 0, NULL, NULL },
};
static const struct verb_rule save_rules[] = {
	{ 1, NULL, "@file" }, { 0, NULL, NULL },
};
/* @show: the parser's words; @show-args: what follows the one before. */
static const struct verb_rule show_rules[] = {
	{ 1, NULL, "@show" }, { 2, NULL, "@show-args" }, { 0, NULL, NULL },
};
static const struct verb_rule help_rules[] = {
	{ 1, NULL, "@verb" }, { 0, NULL, NULL },
};

static const struct verb verbs[] = {
	{ "add-link", "NAME HOST:PORT [tls] [peer NODE] [queue BYTES] "
	    "[rate RATE|none] [aqm off|codel|fq_codel [target TIME] "
	    "[interval TIME]] [congestion CC|default] [transport tcp|udp|auto]",
	    "dial another vnetd and keep the link up", add_link_rules },
	{ "del-link", "NAME", "close link NAME and stop dialling it",
	    link_name_rules },
	{ "set-link", "NAME [rate RATE|none] [aqm off|codel|fq_codel "
	    "[target TIME] [interval TIME]] [congestion CC|default] "
	    "[transport tcp|udp|auto] [liveness TIME|off|default "
	    "[multiplier N]] [queue BYTES]",
	    "change a link's shaping, queue management, congestion control, "
	    "transport or probes", set_link_rules },
	{ "add-route", "SRC DST link|interface NAME",
	    "forward frames from SRC to DST (MAC, any or not-MAC) to NAME",
	    add_route_rules },
	{ "del-route", "SRC DST link|interface NAME", "remove a route",
	    del_route_rules },
	{ "add-interface", "NAME tap [DEV [persist yes|no|auto] [bridge BR]] | "
	    "NAME pcap DEV [promisc yes|no] [filter EXPR] [buffer BYTES] "
	    "[up yes|no] [segment NAME] | NAME qemu PATH",
	    "attach a TAP device, capture a device, or take a VM's socket",
	    add_interface_rules },
	{ "del-interface", "NAME", "detach interface NAME", iface_name_rules },
	{ "add-listen", "ADDR:PORT [tls] [allow CIDR[,CIDR...]]",
	    "accept links on ADDR:PORT", add_listen_rules },
	{ "del-listen", "ADDR:PORT", "stop accepting links on ADDR:PORT",
	    NULL },
	{ "learn", "yes|no", "forward by learnt MAC addresses, as a switch",
	    yesno_rules },
	{ "keepalive", "SECONDS", "the interval of keepalives (1..3600)",
	    NULL },
	{ "liveness", "TIME|off [multiplier N]",
	    "the probes of links without their own (10ms..60s; multiplier "
	    "2..255)", NULL },
	{ "vcc", "IFACE ecn virtual | share IFACE window BYTES | class NAME "
	    "[match tcp-port P[,P...]] [match src CIDR] [match dst CIDR] "
	    "[interface IFACE] [weight W] [rate RATE|none]",
	    "virtual congestion control of guests' TCP", vcc_rules },
	{ "del-vcc", "IFACE ecn | share IFACE | class NAME",
	    "remove a vcc policy", del_vcc_rules },
	{ "adapt", "off|on | shortcuts yes|no [threshold RATE] "
	    "[hold SECONDS] [idle SECONDS] [max N]",
	    "pause or resume the shortcuts, or set how they are made",
	    adapt_rules },
	{ "relay", "yes|no", "whether frames between two other nodes may "
	    "pass through this one", yesno_rules },
	{ "reload", "[-n]", "apply what changed in the configuration file; "
	    "-n: show the changes, apply nothing", reload_rules },
	{ "save", "[FILE]", "write the running state to the configuration "
	    "file or FILE", save_rules },
	{ "show", NULL, "show the running state", show_rules },
	{ "help", "[VERB]", "list the verbs, or show how to use VERB",
	    help_rules },
};

const struct verb *
verb_at(size_t i)
{
	return i < nitems(verbs) ? &verbs[i] : NULL;
}

static const struct verb *
verb_exact(const char *name)
{
	size_t	 i;

	for (i = 0; i < nitems(verbs); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

const struct verb *
verb_find(const char *name)
{
	const struct verb *v;
	char		 add[64];

	if ((v = verb_exact(name)) != NULL)
		return v;
	/* "route" is add-route, "add-vcc" is vcc. */
	snprintf(add, sizeof(add), "add-%s", name);
	if ((v = verb_exact(add)) != NULL)
		return v;
	if (strncmp(name, "add-", 4) == 0)
		return verb_exact(name + 4);
	return NULL;
}

const char *
verb_usage(const struct verb *v, char *buf, size_t len)
{
	const char	*w, *args;
	size_t		 i, o = 0;

	if (v->args != NULL) {
		snprintf(buf, len, "%s", v->args);
		return buf;
	}
	buf[0] = '\0';
	for (i = 0; (w = stmt_show_at(i, &args)) != NULL && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s",
		    i > 0 ? "|" : "", w, args[0] != '\0' ? " " : "", args);
	return buf;
}

/* The keywords of a show word's arguments ("[nodes|topology [THRESHOLD]]"). */
static void
show_args(const char *word, void (*emit)(const char *, void *), void *arg)
{
	const char	*w, *args, *p;
	char		 tok[32];
	size_t		 i, n;

	for (i = 0; (w = stmt_show_at(i, &args)) != NULL; i++)
		if (strcmp(w, word) == 0)
			break;
	if (w == NULL)
		return;
	for (p = args; *p != '\0'; p += n) {
		if ((n = strspn(p, LETTERS)) == 0) {
			n = 1;
			continue;
		}
		snprintf(tok, sizeof(tok), "%.*s", (int)n, p);
		if (islower((unsigned char)tok[0]))
			emit(tok, arg);
		else if (strcmp(tok, "NAME") == 0)
			emit("@link", arg);
	}
}

/* Each word of a rule, with the classes this file knows expanded. */
static void
emit_words(const char *words, const char *prev,
    void (*emit)(const char *, void *), void *arg)
{
	const char	*w, *p;
	char		 tok[32];
	size_t		 i, n;

	for (p = words; *p != '\0'; p += n) {
		if ((n = strcspn(p, " ")) == 0) {
			n = 1;
			continue;
		}
		snprintf(tok, sizeof(tok), "%.*s", (int)n, p);
		if (strcmp(tok, "@verb") == 0) {
			for (i = 0; i < nitems(verbs); i++)
				emit(verbs[i].name, arg);
		} else if (strcmp(tok, "@show") == 0) {
			for (i = 0; (w = stmt_show_at(i, NULL)) != NULL; i++)
				emit(w, arg);
		} else if (strcmp(tok, "@show-args") == 0)
			show_args(prev, emit, arg);
		else
			emit(tok, arg);
	}
}

void
verb_complete(int argc, char **argv, void (*emit)(const char *, void *),
    void *arg)
{
	const struct verb	*v;
	const struct verb_rule	*r;
	int			 pos = argc;

	if (argc == 0) {
		emit_words("@verb", NULL, emit, arg);
		return;
	}
	if ((v = verb_find(argv[0])) == NULL || v->rules == NULL)
		return;
	for (r = v->rules; r->pos != 0; r++) {
		if (r->pos > 0 ? r->pos != pos : pos < -r->pos)
			continue;
		if (r->after != NULL && strcmp(r->after, argv[argc - 1]) != 0)
			continue;
		emit_words(r->words, argv[argc - 1], emit, arg);
		return;
	}
}
