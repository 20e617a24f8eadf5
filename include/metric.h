/*
 * /metrics in the Prometheus text format (0.0.4), rendered by each module
 * for what it owns: a family's HELP and TYPE lines, then its samples, all
 * together.  Every sample is labelled with the node; names follow
 * Prometheus: the unit in the name, counters end in _total.
 *
 * Counters named once: a module's counters are a table (struct
 * metric_stat, one line each) that both its `show stats` rows and its
 * metric families render from.  A table renders either as one family per
 * counter, "vnet_" ROW "_total", or as one family with the row's name as
 * the value of a label (vnet_refused_total{reason="tls_refused"}).
 */
#ifndef VNET_METRIC_H
#define VNET_METRIC_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

/* Where the samples go, and the node label each carries. */
struct metric_out {
	struct evbuffer	*b;
	const char	*node;
};

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
};

#define METRIC_NAME_MAX	96

/* A family's HELP and TYPE lines. */
void	metric_family(const struct metric_out *, const char *name,
	    enum metric_type, const char *help);
/*
 * A sample of family name: node, then up to two labels (k NULL: none;
 * values escaped).  The value as an unsigned, a signed or a real number.
 */
void	metric_sample(const struct metric_out *, const char *name,
	    const char *k1, const char *v1, const char *k2, const char *v2,
	    uint64_t);
void	metric_sample_signed(const struct metric_out *, const char *name,
	    const char *k1, const char *v1, const char *k2, const char *v2,
	    long long);
void	metric_sample_real(const struct metric_out *, const char *name,
	    const char *k1, const char *v1, const char *k2, const char *v2,
	    double);

/* One counter (a uint64_t at off in a stats struct) of a table. */
struct metric_stat {
	const char	*row;	/* its name in show stats */
	const char	*help;	/* for its family, when it has one of its own */
	size_t		 off;
};
#define METRIC_STAT(row, type, field, help) \
	{ (row), (help), offsetof(type, field) }

/* The counter of stats at s. */
uint64_t metric_stat_value(const struct metric_stat *s, const void *stats);
/* The table's rows of show stats: "ROW\tVALUE\n". */
void	metric_stat_rows(struct evbuffer *, const struct metric_stat *,
	    size_t n, const void *stats);
/* Each counter as its own family, "vnet_" ROW "_total". */
void	metric_stat_families(const struct metric_out *,
	    const struct metric_stat *, size_t n, const void *stats);
/* The same for gauges (values of now, not counts): "vnet_" ROW. */
void	metric_stat_gauges(const struct metric_out *,
	    const struct metric_stat *, size_t n, const void *stats);
/* Each counter as a sample of family, with label key=ROW (no head). */
void	metric_stat_samples(const struct metric_out *, const char *family,
	    const char *key, const struct metric_stat *, size_t n,
	    const void *stats);

#endif
