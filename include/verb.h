/*
 * vnetctl's verbs: the one table that `vnetctl help`, the usage shown on a
 * syntax error and the bash completion are made from, so that none of the
 * three can name a verb or a keyword the others do not.
 *
 * A verb is a statement that works at run time (stmt_runtime()), by its
 * add- form where it has one, or a request of vnetctl's own (help).  The
 * statements only a configuration file gives are no verbs: help names
 * them as such.  What `show` takes comes from the parser's own list
 * (stmt_show_at()).
 *
 * Completion: verb_complete() gets the words typed after the verb and
 * gives the candidates for the next one: keywords, or a class of names
 * that only the running daemon knows, written "@link", "@interface",
 * "@mac", "@route" (the routes' fields that match the words so far) or
 * "@file"; the bash completion (completion/vnetctl) asks the daemon for
 * those and knows no verb or keyword itself.  check_verb holds every
 * keyword a verb completes to its usage text, and every run-time
 * statement to a verb.
 */
#ifndef VNET_VERB_H
#define VNET_VERB_H

#include <stddef.h>

/* One completion rule: at position pos (1: the word after the verb; a
 * negative pos: that position or any later one), after the word `after`
 * (NULL: whatever came before), the blank-separated candidates `words`. */
struct verb_rule {
	int		 pos;
	const char	*after;
	const char	*words;
};

struct verb {
	const char		*name;
	const char		*args;		/* usage; NULL: from the parser */
	const char		*what;		/* one line */
	const struct verb_rule	*rules;		/* ends with pos 0 */
};

/* Verb i of the table, in the order help lists them; NULL past the last. */
const struct verb *verb_at(size_t i);
/* The verb by name, or by a statement's plain keyword ("route"). */
const struct verb *verb_find(const char *name);
/* Its usage: the verb's args, or for show those the parser takes. */
const char	*verb_usage(const struct verb *, char *buf, size_t len);
/*
 * Calls emit() with each candidate for the word after argv[0..argc-1]
 * (argv[0] the verb; argc 0: the verbs themselves).
 */
void		 verb_complete(int argc, char **argv,
		    void (*emit)(const char *word, void *), void *arg);

#endif
