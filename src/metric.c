/* The Prometheus text format of /metrics (metric.h). */
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "metric.h"

void
metric_family(const struct metric_out *mo, const char *name,
    enum metric_type type, const char *help)
{
	evbuffer_add_printf(mo->b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type == METRIC_COUNTER ? "counter" : "gauge");
}

/* A label value: names are [A-Za-z0-9._-], escaped anyway. */
static void
metric_value(struct evbuffer *b, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			evbuffer_add_printf(b, "\\%c", *v);
		else if (*v == '\n')
			evbuffer_add(b, "\\n", 2);
		else
			evbuffer_add(b, v, 1);
	}
}

static void
metric_labels(const struct metric_out *mo, const char *name, const char *k1,
    const char *v1, const char *k2, const char *v2)
{
	evbuffer_add_printf(mo->b, "%s{node=\"", name);
	metric_value(mo->b, mo->node);
	if (k1 != NULL) {
		evbuffer_add_printf(mo->b, "\",%s=\"", k1);
		metric_value(mo->b, v1);
	}
	if (k2 != NULL) {
		evbuffer_add_printf(mo->b, "\",%s=\"", k2);
		metric_value(mo->b, v2);
	}
	evbuffer_add(mo->b, "\"} ", 3);
}

void
metric_sample(const struct metric_out *mo, const char *name, const char *k1,
    const char *v1, const char *k2, const char *v2, uint64_t v)
{
	metric_labels(mo, name, k1, v1, k2, v2);
	evbuffer_add_printf(mo->b, "%llu\n", (unsigned long long)v);
}

void
metric_sample_signed(const struct metric_out *mo, const char *name,
    const char *k1, const char *v1, const char *k2, const char *v2,
    long long v)
{
	metric_labels(mo, name, k1, v1, k2, v2);
	evbuffer_add_printf(mo->b, "%lld\n", v);
}

void
metric_sample_real(const struct metric_out *mo, const char *name,
    const char *k1, const char *v1, const char *k2, const char *v2, double v)
{
	metric_labels(mo, name, k1, v1, k2, v2);
	evbuffer_add_printf(mo->b, "%.9g\n", v);
}

uint64_t
metric_stat_value(const struct metric_stat *s, const void *stats)
{
	uint64_t	 v;

	memcpy(&v, (const char *)stats + s->off, sizeof(v));
	return v;
}

void
metric_stat_rows(struct evbuffer *out, const struct metric_stat *t, size_t n,
    const void *stats)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		evbuffer_add_printf(out, "%s\t%llu\n", t[i].row,
		    (unsigned long long)metric_stat_value(&t[i], stats));
}

static void
metric_stat_each(const struct metric_out *mo, const struct metric_stat *t,
    size_t n, const void *stats, enum metric_type type)
{
	char	 name[METRIC_NAME_MAX];
	size_t	 i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "vnet_%s%s", t[i].row,
		    type == METRIC_COUNTER ? "_total" : "");
		metric_family(mo, name, type, t[i].help);
		metric_sample(mo, name, NULL, NULL, NULL, NULL,
		    metric_stat_value(&t[i], stats));
	}
}

void
metric_stat_families(const struct metric_out *mo, const struct metric_stat *t,
    size_t n, const void *stats)
{
	metric_stat_each(mo, t, n, stats, METRIC_COUNTER);
}

void
metric_stat_gauges(const struct metric_out *mo, const struct metric_stat *t,
    size_t n, const void *stats)
{
	metric_stat_each(mo, t, n, stats, METRIC_GAUGE);
}

void
metric_stat_samples(const struct metric_out *mo, const char *family,
    const char *key, const struct metric_stat *t, size_t n, const void *stats)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		metric_sample(mo, family, key, t[i].row, NULL, NULL,
		    metric_stat_value(&t[i], stats));
}
