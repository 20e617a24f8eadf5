#include <stdint.h>
#include <stdio.h>

#include <event2/buffer.h>

#include "ether.h"
#include "fwd.h"
#include "metric.h"
#include "showwin.h"

/* Where the rows go, and which of them (NULL: all). */
struct fwd_show {
	struct evbuffer	*out;
	struct showwin	*win;
};

static const char *
fwd_show_kind(const struct fwd_port *port)
{
	return fwd_port_kind(port) == FWD_LINK ? "link" : "interface";
}

static void
fwd_show_route_cb(const struct stmt_match *src, const struct stmt_match *dst,
    const struct fwd_port *port, void *arg)
{
	struct fwd_show	*fs = arg;
	char		 s[24], t[24];

	if (!showwin_row(fs->win, fs->out))
		return;
	evbuffer_add_printf(fs->out, "%s\t%s\t%s\t%s\t%s\tstatic\n",
	    stmt_match_format(src, s), stmt_match_format(dst, t),
	    fwd_show_kind(port), fwd_port_name(port),
	    fwd_port_owner(port) != NULL ? "yes" : "no");
}

static void
fwd_show_auto_cb(const uint8_t mac[ETHER_ADDR_LEN], const struct fwd_port *port,
    void *arg)
{
	struct fwd_show	*fs = arg;
	char		 m[ETHER_ADDR_STRLEN];

	if (fwd_port_kind(port) == FWD_LINK && showwin_row(fs->win, fs->out))
		evbuffer_add_printf(fs->out, "any\t%s\tlink\t%s\t%s\tauto\n",
		    ether_format(mac, m), fwd_port_name(port),
		    fwd_port_owner(port) != NULL ? "yes" : "no");
}

void
fwd_show_routes(struct fwd *f, struct showwin *w, struct evbuffer *out)
{
	struct fwd_show	 fs = { out, w };

	evbuffer_add_printf(out, "%%columns src\tdst\ttarget\tname\tactive\t"
	    "kind\n");
	fwd_route_foreach(f, fwd_show_route_cb, &fs);
	fwd_auto_foreach(f, fwd_show_auto_cb, &fs);
}

static void
fwd_show_mac_cb(const uint8_t mac[ETHER_ADDR_LEN], const struct fwd_port *port,
    uint64_t age_ms, void *arg)
{
	struct fwd_show	*fs = arg;
	char		 m[ETHER_ADDR_STRLEN];

	if (!showwin_row(fs->win, fs->out))
		return;
	evbuffer_add_printf(fs->out, "%s\t%s\t%s\t%llu\t-\tlearning\t-\n",
	    ether_format(mac, m), fwd_show_kind(port), fwd_port_name(port),
	    (unsigned long long)(age_ms / 1000));
}

void
fwd_show_macs(struct fwd *f, uint64_t now_ms, struct showwin *w,
    struct evbuffer *out)
{
	struct fwd_show	 fs = { out, w };

	evbuffer_add_printf(out, "%%columns mac\ttarget\tname\tage\tnode\t"
	    "source\tversion\n");
	fwd_mac_foreach(f, now_ms, fwd_show_mac_cb, &fs);
}

#define FS(row, field, help) METRIC_STAT(row, struct fwd_stats, field, help)
static const struct metric_stat fwd_counters[] = {
	FS("rule_hits", rule_hits, "Frames forwarded by a route."),
	FS("learned_hits", learned_hits, "Frames forwarded to the port their "
	    "destination was learned on."),
	FS("floods", floods, "Frames flooded."),
	FS("no_route", no_route, "Frames dropped: no route covers their "
	    "destination."),
	FS("relay_refused", relay_refused, "Unicast frames from a link not "
	    "sent on by another: this node relays nothing (relay no)."),
};
#undef FS

void
fwd_show_stats(const struct fwd *f, struct evbuffer *out)
{
	struct fwd_stats fs;

	fwd_stats(f, &fs);
	metric_stat_rows(out, fwd_counters, sizeof(fwd_counters) /
	    sizeof(fwd_counters[0]), &fs);
}

void
fwd_metrics(const struct fwd *f, const struct metric_out *mo)
{
	struct fwd_stats fs;

	fwd_stats(f, &fs);
	metric_stat_families(mo, fwd_counters, sizeof(fwd_counters) /
	    sizeof(fwd_counters[0]), &fs);
}
