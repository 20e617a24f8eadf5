/*
 * The last ten minutes of every link and interface at one-second
 * resolution, for rates in `show` and the charts of the status page.
 * Bounded: HISTORY_LEN samples per series, at most HISTORY_SERIES_MAX
 * series (links and interfaces beyond are not kept, and counted), so at
 * most about 10 MB in all.  A series goes with its link or interface.
 */
#ifndef VNET_HISTORY_H
#define VNET_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#define HISTORY_LEN		600	/* seconds */
#define HISTORY_SERIES_MAX	256

enum history_kind {
	HISTORY_LINK = 1,
	HISTORY_IFACE,
};

/* Counters as they stand at one tick (totals; the gauge p99 as it is). */
struct history_sample {
	uint64_t	bytes_in, bytes_out;
	uint64_t	frames_in, frames_out;
	uint64_t	ce_marks, drops;
	uint32_t	p99_us;		/* queue sojourn, UINT32_MAX unknown */
};

/* Over the last second and the last ten (or as many as there are). */
struct history_rates {
	double		bps_in[2], bps_out[2];
	double		fps_in[2], fps_out[2];
};

/* The columns history_fields() adds to a row of show links|interfaces. */
#define HISTORY_COLUMNS	"\tbps_in\tbps_out\tfps_in\tfps_out\t" \
	"bps_in_10s\tbps_out_10s\tfps_in_10s\tfps_out_10s"

struct history;
struct vnetd;

struct history	*history_new(void);
void		 history_free(struct history *);

/* One tick: begin, put every object's counters, end (drops the gone). */
void		 history_begin(struct history *, uint64_t now_ms);
void		 history_put(struct history *, enum history_kind,
		    const char *name, const struct history_sample *);
void		 history_end(struct history *);
/* Samples the links and interfaces of d: the 1 s timer calls it. */
void		 history_collect(struct history *, struct vnetd *);

/* 0, or -1 if there is no such series (the rates are then 0). */
int		 history_rates(const struct history *, enum history_kind,
		    const char *name, struct history_rates *);
/* "\t" and the eight rates of HISTORY_COLUMNS, into buf. */
const char	*history_fields(const struct history *, enum history_kind,
		    const char *name, char *buf, size_t len);
/*
 * The series as JSON: {"name":..,"t_ms":[..],"bps_in":[..],...}, one
 * element per second (rates over that second).  -1 if there is none.
 */
int		 history_json(const struct history *, enum history_kind,
		    const char *name,
		    void (*sink)(const char *, size_t, void *), void *arg);
/* Series not kept for want of room. */
uint64_t	 history_refused(const struct history *);

#endif
