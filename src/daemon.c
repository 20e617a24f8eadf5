#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <netdb.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/x509.h>

#include "config.h"
#include "acl.h"
#include "clock.h"
#include "daemon.h"
#include "ether.h"
#include "fwd.h"
#include "gso.h"
#include "iface.h"
#include "link.h"
#include "listen.h"
#include "log.h"
#include "metric.h"
#include "paths.h"
#include "reseq.h"
#include "save.h"
#include "sw.h"
#include "tls.h"
#include "vcc.h"
#include "wire.h"

uint64_t
vnetd_now_ms(void)
{
	return clock_now_ms();
}

struct event *
vnetd_accept_timer(struct evconnlistener *lev)
{
	return listen_accept_timer(lev);
}

void
vnetd_accept_pause(struct evconnlistener *lev, struct event *resume)
{
	listen_accept_pause(lev, resume);
}

uint64_t
vnetd_now_us(void)
{
	return clock_now_us();
}

/* The host name, cut to what a node name may hold. */
void
vnetd_default_node(char *buf, size_t len)
{
	char	 host[256];
	size_t	 i;

	if (gethostname(host, sizeof(host)) == -1)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
	for (i = 0; host[i] != '\0'; i++)
		if (!isalnum((unsigned char)host[i]) && host[i] != '_')
			host[i] = '-';
	host[STMT_NAME_MAX] = '\0';
	snprintf(buf, len, "%s", host);
	if (!stmt_valid_name(buf))
		snprintf(buf, len, "vnetd");
}

static void
daemon_accept(void *arg, int fd, const struct sockaddr *sa, int socklen,
    int tls)
{
	struct vnetd	*d = arg;

	links_accept(&d->links, fd, sa, socklen, tls, 0);
}

static void
daemon_refused(void *arg, const char *host, const char *why)
{
	struct vnetd	*d = arg;

	link_refusal_add(&d->links, host, NULL, why);
}

#define MODULES(d, m) \
	for ((m) = (d)->modules; (m) < (d)->modules + (d)->nmodules; (m)++)

/*
 * What the links are given (link.h).  Without a control plane a node
 * record is refused, a link's coming and going is nobody's business, and
 * show links has no origin and no rates: whoever adds the modules above
 * the daemon sets the hooks that reach them (vnetd.c does).
 */

static void
daemon_link_hello(void *arg, struct wire_hello *h)
{
	struct vnetd		*d = arg;
	struct vnetd_module	*m;

	h->version = WIRE_VERSION;
	h->caps = (d->ifenv.offload ? WIRE_CAP_GSO : 0) | WIRE_CAP_DGRAM |
	    WIRE_CAP_LIVENESS | WIRE_CAP_SEEN |
	    WIRE_CAP_DGRAM_LIVE;
	MODULES(d, m)
		if (m->caps != NULL)
			h->caps |= m->caps(m->arg);
	h->keepalive = (uint16_t)d->keepalive;
	snprintf(h->node, sizeof(h->node), "%s", d->node);
	snprintf(h->network, sizeof(h->network), "%s", d->network);
}

static struct ssl_ctx_st *
daemon_link_tls(void *arg)
{
	struct vnetd	*d = arg;

	return d->tls;
}

static int
daemon_link_node(void *arg, struct link *l, const uint8_t *p, size_t n,
    const char **why)
{
	struct vnetd		*d = arg;
	struct vnetd_module	*m;

	MODULES(d, m)
		if (m->link_input != NULL)
			return m->link_input(m->arg, l, p, n, why);
	*why = "no control plane here";
	return -1;
}

static void	tls_exp_link(struct vnetd *, const struct link *, long long);

static void
daemon_link_up(void *arg, struct link *l)
{
	struct vnetd		*d = arg;
	struct vnetd_module	*m;

	MODULES(d, m)
		if (m->link_up != NULL)
			m->link_up(m->arg, l);
	/* A peer's certificate near its end is said as it connects. */
	tls_exp_link(d, l, (long long)time(NULL));
}

static void
daemon_link_down(void *arg, struct link *l)
{
	struct vnetd		*d = arg;
	struct vnetd_module	*m;

	MODULES(d, m)
		if (m->link_down != NULL)
			m->link_down(m->arg, l);
}

static int module_link_made(struct vnetd *, const struct link *);

static int
daemon_link_shortcut(void *arg, const struct link *l)
{
	return module_link_made(arg, l);
}

static const char *
daemon_link_origin(void *arg, const struct link *l, char *trigger,
    size_t len, const char **reason)
{
	struct vnetd		*d = arg;
	struct vnetd_module	*m;
	const char		*o;

	MODULES(d, m)
		if (m->link_origin != NULL && (o = m->link_origin(m->arg, l,
		    trigger, len, reason)) != NULL && strcmp(o, "-") != 0)
			return o;
	snprintf(trigger, len, "-");
	*reason = "-";
	return "-";
}

static const char *
daemon_link_history(void *arg, const char *name, char *buf, size_t len)
{
	return "";
}

/* The switch holds frames for order: it asks to be polled (sw_set_timer()). */
static void
reseq_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct vnetd	*d = arg;

	(void)fd;
	(void)ev;
	sw_poll(d->sw);
}

static void
reseq_arm(void *arg, uint64_t delay_us)
{
	struct vnetd	*d = arg;
	struct timeval	 tv;

	tv.tv_sec = (time_t)(delay_us / 1000000);
	tv.tv_usec = (suseconds_t)(delay_us % 1000000);
	evtimer_add(d->ev_reseq, &tv);
}

int
vnetd_init(struct vnetd *d)
{
	char	 err[128];

	struct links_hooks hooks = {
		.hello = daemon_link_hello,
		.tls = daemon_link_tls,
		.node = daemon_link_node,
		.up = daemon_link_up,
		.down = daemon_link_down,
		.shortcut = daemon_link_shortcut,
		.origin = daemon_link_origin,
		.history = daemon_link_history,
		.history_columns = "",
		.arg = d,
	};

	memset(d, 0, sizeof(*d));
	TAILQ_INIT(&d->ifaces);
	vnetd_default_node(d->node, sizeof(d->node));
	snprintf(d->network, sizeof(d->network), "%s", VNETD_NETWORK_DEFAULT);
	d->keepalive = VNETD_KEEPALIVE_DEFAULT;
	d->ifenv.offload = 1;
	if ((d->sw = sw_new(clock_now_us, err, sizeof(err))) == NULL)
		return -1;
	d->fwd = sw_fwd(d->sw);
	d->vcc = sw_vcc(d->sw);
	d->ifenv.sw = d->sw;
	links_init(&d->links, d->sw, &hooks);
	if ((d->base = event_base_new()) == NULL)
		return -1;
	d->dns = evdns_base_new(d->base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
	    EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	if (d->dns == NULL)
		d->dns = evdns_base_new(d->base, 0);
	if (d->dns == NULL)
		return -1;
	d->ifenv.base = d->base;
	if ((d->ev_reseq = evtimer_new(d->base, reseq_cb, d)) == NULL)
		return -1;
	sw_set_timer(d->sw, reseq_arm, d);
	links_start(&d->links, d->base, d->dns);
	listen_init(&d->listeners, d->base, daemon_accept, daemon_refused, d);
	return 0;
}

int
vnetd_module_add(struct vnetd *d, const struct vnetd_module *m)
{
	if (d->nmodules == VNETD_MODULES_MAX || m->nkinds > VNETD_MODULE_KINDS)
		return -1;
	d->modules[d->nmodules++] = *m;
	return 0;
}

static void	tls_watch(struct vnetd *);

static void
tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct vnetd		*d = arg;
	struct vnetd_module	*m;

	sw_tick(d->sw);
	link_tick(&d->links, vnetd_now_ms());
	tls_watch(d);
	MODULES(d, m)
		if (m->tick != NULL)
			m->tick(m->arg);
}

static void
signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct vnetd	*d = arg;

	log_info("signal %d: shutting down", (int)sig);
	d->exit_code = 0;
	event_base_loopbreak(d->base);
}

int
vnetd_start(struct vnetd *d)
{
	struct timeval	 tv = { 1, 0 };
	static const int sigs[] = { SIGTERM, SIGINT };
	struct vnetd_module *m;
	size_t		 i;

	signal(SIGPIPE, SIG_IGN);
	if ((d->ev_tick = event_new(d->base, -1, EV_PERSIST, tick_cb, d)) ==
	    NULL || event_add(d->ev_tick, &tv) == -1)
		return -1;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		d->ev_sig[i] = evsignal_new(d->base, sigs[i], signal_cb, d);
		if (d->ev_sig[i] == NULL || event_add(d->ev_sig[i], NULL) == -1)
			return -1;
	}
	MODULES(d, m)
		if (m->start != NULL && m->start(m->arg) == -1)
			return -1;
	return 0;
}

void
vnetd_free(struct vnetd *d)
{
	struct vnetd_module *m;
	size_t		 i;

	MODULES(d, m)
		if (m->stop != NULL)
			m->stop(m->arg);
	listen_free(&d->listeners);
	links_free(&d->links);
	ifaces_free(&d->ifaces);
	MODULES(d, m)
		if (m->free != NULL)
			m->free(m->arg);
	d->nmodules = 0;
	if (d->ev_tick != NULL)
		event_free(d->ev_tick);
	if (d->ev_reseq != NULL)
		event_free(d->ev_reseq);
	for (i = 0; i < sizeof(d->ev_sig) / sizeof(d->ev_sig[0]); i++)
		if (d->ev_sig[i] != NULL)
			event_free(d->ev_sig[i]);
	if (d->dns != NULL)
		evdns_base_free(d->dns, 0);
	if (d->base != NULL)
		event_base_free(d->base);
	sw_free(d->sw);
	d->fwd = NULL;
	d->vcc = NULL;
	if (d->tls != NULL)
		SSL_CTX_free(d->tls);
}

static void
tls_files_of(struct vnetd *d, struct tls_files *f)
{
	f->cert = d->tls_cert;
	f->key = d->tls_key;
	f->ca = d->tls_ca;
	f->crl = d->tls_crl;
}

static void
tls_loaded_set(struct vnetd *d, const struct tls_digest *dg)
{
	snprintf(d->tls_loaded[TLS_FILE_CERT], STMT_PATH_MAX + 1, "%s",
	    d->tls_cert);
	snprintf(d->tls_loaded[TLS_FILE_KEY], STMT_PATH_MAX + 1, "%s",
	    d->tls_key);
	snprintf(d->tls_loaded[TLS_FILE_CA], STMT_PATH_MAX + 1, "%s",
	    d->tls_ca);
	snprintf(d->tls_loaded[TLS_FILE_CRL], STMT_PATH_MAX + 1, "%s",
	    d->tls_crl);
	memcpy(d->tls_sum, dg->sum, sizeof(d->tls_sum));
}

/*
 * The certificate just loaded was warned of by the load (tls_ctx_new, at
 * 30 days): the watch warns of it only past the level it has now.
 */
static void
tls_exp_prime(struct vnetd *d)
{
	long long	 not_after;

	if (tls_cert_not_after(tls_ctx_cert(d->tls), &not_after) == 0)
		tlsexp_prime(&d->tls_exp, not_after, (long long)time(NULL));
}

SSL_CTX *
vnetd_tls(struct vnetd *d, char *err, size_t errlen)
{
	struct tls_files	 f;
	struct tls_digest	 dg;

	if (d->tls != NULL)
		return d->tls;
	if (d->tls_cert[0] == '\0' || d->tls_key[0] == '\0' ||
	    d->tls_ca[0] == '\0') {
		snprintf(err, errlen, "tls needs tls-cert, tls-key and tls-ca");
		return NULL;
	}
	tls_files_of(d, &f);
	/* Before: a file changed meanwhile is made again by the next reload. */
	tls_files_digest(&f, &dg);
	if ((d->tls = tls_ctx_new(&f, d->node, err, errlen, d->tls_warning,
	    sizeof(d->tls_warning))) != NULL) {
		tls_loaded_set(d, &dg);
		tls_exp_prime(d);
	}
	return d->tls;
}

/* The names given now, in enum tls_file's order. */
static char *
tls_path(struct vnetd *d, int i)
{
	char	*p[TLS_FILES] = { d->tls_cert, d->tls_key, d->tls_ca,
	    d->tls_crl };

	return p[i];
}

/* How many files hold other content under the same name; emit says each. */
static size_t
tls_content_changes(struct vnetd *d, const struct tls_digest *dg,
    void (*emit)(int, const char *, void *), void *arg, int *renamed)
{
	char	 line[STMT_PATH_MAX + 64];
	size_t	 n = 0;
	int	 i;

	*renamed = 0;
	for (i = 0; i < TLS_FILES; i++) {
		if (strcmp(tls_path(d, i), d->tls_loaded[i]) != 0) {
			/* The statement itself is the change reported. */
			*renamed = 1;
			continue;
		}
		if (memcmp(dg->sum[i], d->tls_sum[i], sizeof(dg->sum[i])) == 0)
			continue;
		snprintf(line, sizeof(line), "tls: %s %s changed",
		    tls_file_keyword(i), tls_path(d, i));
		if (emit != NULL)
			emit(0, line, arg);
		n++;
	}
	return n;
}

size_t
vnetd_tls_changes(struct vnetd *d, void (*emit)(int, const char *, void *),
    void *arg)
{
	struct tls_files	 f;
	struct tls_digest	 dg;
	int			 renamed;

	if (d->tls == NULL)
		return 0;
	tls_files_of(d, &f);
	tls_files_digest(&f, &dg);
	return tls_content_changes(d, &dg, emit, arg, &renamed);
}

/* One connection under the new context: closed if its peer fails it. */
static void
tls_recheck(struct vnetd *d, struct conn *c, const char *what)
{
	char	 why[sizeof(c->fail_buf)];

	if (c == NULL || c->fail != NULL ||
	    conn_tls_recheck(c, d->tls, why, sizeof(why)) == 0)
		return;
	log_warnx("%s: closed: %s", what, why);
	snprintf(c->fail_buf, sizeof(c->fail_buf), "%s", why);
	conn_fail_later(c, c->fail_buf);
}

static void
tls_recheck_all(struct vnetd *d)
{
	struct link	*l;
	struct conn	*c;
	char		 what[INET6_ADDRSTRLEN + STMT_NAME_MAX + 24];

	LINKS_FOREACH(l, &d->links) {
		snprintf(what, sizeof(what), "link %s", link_name(l));
		tls_recheck(d, link_conn(l), what);
		tls_recheck(d, link_dialing(l), what);
	}
	TAILQ_FOREACH(c, &d->links.conns.pending, entry) {
		snprintf(what, sizeof(what), "connection from %s", c->from);
		tls_recheck(d, c, what);
	}
}

int
vnetd_tls_reload(struct vnetd *d, void (*emit)(int, const char *, void *),
    void *arg, char *err, size_t errlen)
{
	struct tls_files	 f;
	struct tls_digest	 dg;
	SSL_CTX			*ctx;
	char			 warn[sizeof(d->tls_warning)];
	size_t			 n;
	int			 i, renamed;

	/* Not made yet: it will be, from the files as they are then. */
	if (d->tls == NULL)
		return 0;
	tls_files_of(d, &f);
	tls_files_digest(&f, &dg);
	n = tls_content_changes(d, &dg, NULL, NULL, &renamed);
	if (n == 0 && !renamed)
		return 0;
	if ((ctx = tls_ctx_new(&f, d->node, err, errlen, warn,
	    sizeof(warn))) == NULL) {
		for (i = 0; i < TLS_FILES; i++)
			snprintf(tls_path(d, i), STMT_PATH_MAX + 1, "%s",
			    d->tls_loaded[i]);
		return -1;
	}
	(void)tls_content_changes(d, &dg, emit, arg, &renamed);
	/* Connections made with the old one hold it as long as they last. */
	SSL_CTX_free(d->tls);
	d->tls = ctx;
	tls_loaded_set(d, &dg);
	snprintf(d->tls_warning, sizeof(d->tls_warning), "%s", warn);
	tls_exp_prime(d);
	log_info("TLS: files read again: certificate %s, CA %s%s%s",
	    d->tls_cert, d->tls_ca, d->tls_crl[0] != '\0' ? ", CRL " : "",
	    d->tls_crl);
	if (warn[0] != '\0')
		log_warnx("TLS: warning: %s", warn);
	tls_recheck_all(d);
	return (int)n;
}

static void
tls_watch_emit(int is_error, const char *line, void *arg)
{
	log_info("watch: %s", line);
}

/* The certificate of l's peer, at now (tlsexp.h), if l has one. */
static void
tls_exp_link(struct vnetd *d, const struct link *l, long long now)
{
	struct tlsexp	*e;
	const char	*node;
	long long	 not_after;
	int		 level;
	char		 when[96];

	if (link_conn(l) == NULL ||
	    tls_cert_not_after(conn_tls_peer_cert(link_conn(l)),
	    &not_after) == -1)
		return;
	node = link_peer(l);
	e = tlsexp_find(&d->tls_exp_peers, node, now);
	if ((level = tlsexp_step(e, not_after, now)) == 0)
		return;
	tlsexp_when(when, sizeof(when), not_after, now);
	log_warnx("link %s: the certificate of node %s %s%s: renew it where "
	    "the CA is (vnet-ca renew CADIR %s), copy the new %s.crt to %s, "
	    "then vnetctl reload there", link_name(l), node, when,
	    level == TLSEXP_LEVELS ? "; this connection goes on, the next "
	    "one will be refused" : "", node, node, node);
}

/*
 * This node's certificate and each connected peer's, at now: one warning
 * per certificate as it crosses each threshold (tlsexp.h), saying what to
 * do and where.
 */
void
vnetd_tls_expiry(struct vnetd *d, long long now)
{
	struct link	*l;
	long long	 not_after;
	int		 level;
	char		 when[96];

	if (d->tls != NULL &&
	    tls_cert_not_after(tls_ctx_cert(d->tls), &not_after) == 0 &&
	    (level = tlsexp_step(&d->tls_exp, not_after, now)) > 0) {
		tlsexp_when(when, sizeof(when), not_after, now);
		log_warnx("TLS: this node's certificate %s (node %s) %s%s: "
		    "renew it where the CA is (vnet-ca renew CADIR %s), copy "
		    "the new %s.crt to %s, then vnetctl reload", d->tls_cert,
		    d->node, when, level == TLSEXP_LEVELS ? "; peers refuse "
		    "new connections with it" : "", d->node, d->node,
		    d->tls_cert);
	}
	LINKS_FOREACH(l, &d->links)
		tls_exp_link(d, l, now);
}

/*
 * Every TLS_WATCH_S seconds, the files' hashes: files that changed, and
 * then held the same for one more look (not caught half written), are
 * read again as a reload would.  Content that failed is not tried again
 * until it changes.
 */
static void
tls_watch(struct vnetd *d)
{
	struct tls_files	 f;
	struct tls_digest	 dg;
	char			 err[STMT_PATH_MAX + 256];

	if (d->tls == NULL || d->reload != NULL ||
	    ++d->tls_watch_ticks < TLS_WATCH_S)
		return;
	d->tls_watch_ticks = 0;
	vnetd_tls_expiry(d, (long long)time(NULL));
	tls_files_of(d, &f);
	tls_files_digest(&f, &dg);
	if (memcmp(dg.sum, d->tls_sum, sizeof(dg.sum)) == 0) {
		d->tls_seen_valid = 0;
		return;
	}
	if (!d->tls_seen_valid ||
	    memcmp(dg.sum, d->tls_seen, sizeof(dg.sum)) != 0) {
		memcpy(d->tls_seen, dg.sum, sizeof(dg.sum));
		d->tls_seen_valid = 1;
		return;
	}
	if (d->tls_failed_valid &&
	    memcmp(dg.sum, d->tls_failed, sizeof(dg.sum)) == 0)
		return;
	log_info("TLS: the files changed: reading them again");
	if (vnetd_tls_reload(d, tls_watch_emit, NULL, err, sizeof(err)) ==
	    -1) {
		log_warnx("TLS: files not read again: %s; the running "
		    "certificate, key, CA and CRL stay in use", err);
		memcpy(d->tls_failed, dg.sum, sizeof(dg.sum));
		d->tls_failed_valid = 1;
		return;
	}
	d->tls_seen_valid = 0;
	d->tls_failed_valid = 0;
}

int
vnetd_tls_left(struct vnetd *d, long long *not_after, long long *left)
{
	if (d->tls == NULL ||
	    tls_cert_not_after(tls_ctx_cert(d->tls), not_after) == -1)
		return -1;
	*left = *not_after - (long long)time(NULL);
	return 0;
}

int
vnetd_link_tls_left(const struct link *l, long long *not_after,
    long long *left)
{
	if (link_conn(l) == NULL ||
	    tls_cert_not_after(conn_tls_peer_cert(link_conn(l)),
	    not_after) == -1)
		return -1;
	*left = *not_after - (long long)time(NULL);
	return 0;
}

/*
 * The families of /metrics: each module renders its own (a family's
 * samples together), the refusals' family from the connections and the
 * listeners.
 */
void
vnetd_metrics(struct vnetd *d, struct evbuffer *b)
{
	const struct metric_out	 mo = { b, d->node };
	const struct sw_stats	*ss = sw_stats(d->sw);
	struct vnetd_module	*m;
	struct link		*l;
	long long		 not_after, left;

	link_metrics(&d->links, &mo);
	metric_family(&mo, "vnet_tls_cert_expiry_seconds", METRIC_GAUGE,
	    "Seconds until the certificate's notAfter (negative: past): this "
	    "node's, and with a link label, the peer's on that link.");
	if (vnetd_tls_left(d, &not_after, &left) == 0)
		metric_sample_signed(&mo, "vnet_tls_cert_expiry_seconds", NULL,
		    NULL, NULL, NULL, left);
	LINKS_FOREACH(l, &d->links)
		if (vnetd_link_tls_left(l, &not_after, &left) == 0)
			metric_sample_signed(&mo,
			    "vnet_tls_cert_expiry_seconds", "link", link_name(l),
			    NULL, NULL, left);
	metric_family(&mo, "vnet_refused_total", METRIC_COUNTER, "Connections "
	    "refused, by reason: the counter's name in show stats (show "
	    "refused lists the latest).");
	conns_metrics_refused(&d->links.conns, &mo);
	listen_metrics_refused(&d->listeners, &mo);
	conns_metrics(&d->links.conns, &mo);
	iface_metrics(&d->ifaces, &mo);
	metric_family(&mo, "vnet_frames_total", METRIC_COUNTER,
	    "Frames the node forwarded, by direction.");
	metric_sample(&mo, "vnet_frames_total", "dir", "in", NULL, NULL,
	    ss->frames_in);
	metric_sample(&mo, "vnet_frames_total", "dir", "out", NULL, NULL,
	    ss->frames_out);
	fwd_metrics(d->fwd, &mo);
	MODULES(d, m)
		if (m->metrics != NULL)
			m->metrics(m->arg, &mo);
}

static int
route_apply(struct vnetd *d, const struct stmt *st, char *err, size_t errlen)
{
	char	 s[24], t[24];

	stmt_match_format(&st->src, s);
	stmt_match_format(&st->dst, t);
	if (st->op == STMT_OP_DEL) {
		if (fwd_route_del(d->fwd, &st->src, &st->dst,
		    (enum fwd_kind)st->target, st->name) == -1) {
			snprintf(err, errlen, "no route %s %s %s %s", s, t,
			    st->target == TARGET_LINK ? "link" : "interface",
			    st->name);
			return -1;
		}
		return 0;
	}
	if (st->target == TARGET_INTERFACE && iface_find(&d->ifaces, st->name) == NULL) {
		snprintf(err, errlen, "route: no interface %s", st->name);
		return -1;
	}
	if (fwd_route_add(d->fwd, &st->src, &st->dst, (enum fwd_kind)st->target,
	    st->name) == -1) {
		if (errno == EEXIST)
			snprintf(err, errlen, "route %s %s %s %s: exists already",
			    s, t, st->target == TARGET_LINK ? "link" :
			    "interface", st->name);
		else
			snprintf(err, errlen, "route: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int
vnetd_reloadable(enum stmt_kind kind)
{
	/* A reload reads the tls-* files again (vnetd_tls_reload()). */
	return stmt_reloadable(kind);
}

int
vnetd_startup_only(enum stmt_kind kind)
{
	switch (kind) {
	case STMT_NODE:
	case STMT_NETWORK:
	case STMT_CONTROL:
	/* Files read (reload reads them again), sockets made and privileges
	 * dropped at start only. */
	case STMT_TLS_CERT:
	case STMT_TLS_KEY:
	case STMT_TLS_CA:
	case STMT_TLS_CRL:
	case STMT_CONTROL_GROUP:
	case STMT_USER:
	/* TAP devices are opened, and peers told, with it. */
	case STMT_OFFLOAD:
	/* TAP devices are opened with their threads or without. */
	case STMT_THREADS:
	/* Peers are told in the hello; our record says where we are. */
	case STMT_ROUTING:
	case STMT_ADVERTISE:
	/* Its socket is bound before privileges are dropped. */
	case STMT_HTTP:
		return 1;
	default:
		return 0;
	}
}

/* Names are looked up when read, so that a typo stops the start. */
static int
account_apply(struct vnetd *d, const struct stmt *st, char *err,
    size_t errlen)
{
	struct passwd	*pw;
	struct group	*gr;

	errno = 0;
	if (st->kind == STMT_USER) {
		if ((pw = getpwnam(st->account)) == NULL) {
			snprintf(err, errlen, "user %s: %s", st->account,
			    errno != 0 ? strerror(errno) : "no such user");
			return -1;
		}
		if (pw->pw_uid == 0) {
			snprintf(err, errlen, "user %s: has uid 0, so "
			    "nothing would be dropped", st->account);
			return -1;
		}
		snprintf(d->user, sizeof(d->user), "%s", st->account);
		d->user_uid = pw->pw_uid;
		d->user_gid = pw->pw_gid;
		return 0;
	}
	if ((gr = getgrnam(st->account)) == NULL) {
		snprintf(err, errlen, "control-group %s: %s", st->account,
		    errno != 0 ? strerror(errno) : "no such group");
		return -1;
	}
	snprintf(d->control_group, sizeof(d->control_group), "%s",
	    st->account);
	d->control_gid = gr->gr_gid;
	return 0;
}

/* A statement of a layer above: the module that takes its kind applies it. */
static int
module_apply(struct vnetd *d, const struct stmt *st, char *err,
    size_t errlen)
{
	struct vnetd_module	*m;
	size_t			 i;

	MODULES(d, m)
		for (i = 0; i < m->nkinds; i++)
			if (m->kinds[i] == st->kind && m->apply != NULL)
				return m->apply(m->arg, st, err, errlen);
	snprintf(err, errlen, "%s: not available in this program",
	    stmt_keyword(st->kind, st->op));
	return -1;
}

int
vnetd_apply(struct vnetd *d, const struct stmt *st, int runtime, char *err,
    size_t errlen)
{
	/* Links and the control socket are made with these: restart. */
	if (runtime && vnetd_startup_only(st->kind)) {
		snprintf(err, errlen, "%s: can only be set in the "
		    "configuration file (%s)", stmt_keyword(st->kind, st->op),
		    vnetd_reloadable(st->kind) ? "change it there and run "
		    "vnetctl reload" : "restart vnetd to change it");
		return -1;
	}
	if ((st->kind == STMT_LISTEN || (st->kind == STMT_LINK &&
	    st->op == STMT_OP_SET)) && st->tls && vnetd_tls(d, err,
	    errlen) == NULL)
		return -1;
	switch (st->kind) {
	case STMT_NODE:
		snprintf(d->node, sizeof(d->node), "%s", st->name);
		return 0;
	case STMT_NETWORK:
		snprintf(d->network, sizeof(d->network), "%s", st->name);
		return 0;
	case STMT_LISTEN:
		if (st->op == STMT_OP_DEL) {
			if (listen_del(&d->listeners, &st->addr, err,
			    errlen) == -1)
				return -1;
			links_udp_unlisten(&d->links, &st->addr);
			return 0;
		}
		if (listen_add(&d->listeners, st, err, errlen) == -1)
			return -1;
		links_udp_listen(&d->links, &st->addr);
		return 0;
	case STMT_CONTROL:
		snprintf(d->control_path, sizeof(d->control_path), "%s",
		    st->path);
		return 0;
	case STMT_KEEPALIVE:
		d->keepalive = st->num;
		return 0;
	case STMT_LEARN:
		fwd_set_learn(d->fwd, st->flag);
		return 0;
	case STMT_OFFLOAD:
		d->ifenv.offload = st->flag;
		return 0;
	case STMT_THREADS:
		d->ifenv.threads = st->flag;
		return 0;
	case STMT_INTERFACE:
		if (st->op == STMT_OP_DEL)
			return iface_del(&d->ifaces, st->name, err, errlen);
		/*
		 * A node on a LAN segment must know at once that the other
		 * forwarder died, idle link or not (liveness.h).
		 */
		if (st->segment[0] != '\0')
			links_set_idle_slow(&d->links, 0);
		return iface_add(&d->ifaces, &d->ifenv, st, err, errlen);
	case STMT_LINK:
		if (st->op == STMT_OP_DEL)
			return link_del(&d->links, st->name, err, errlen);
		return link_add(&d->links, st, err, errlen);
	case STMT_ROUTE:
		return route_apply(d, st, err, errlen);
	case STMT_TLS_CERT:
		snprintf(d->tls_cert, sizeof(d->tls_cert), "%s", st->path);
		return 0;
	case STMT_TLS_KEY:
		snprintf(d->tls_key, sizeof(d->tls_key), "%s", st->path);
		return 0;
	case STMT_TLS_CA:
		snprintf(d->tls_ca, sizeof(d->tls_ca), "%s", st->path);
		return 0;
	case STMT_TLS_CRL:
		snprintf(d->tls_crl, sizeof(d->tls_crl), "%s", st->path);
		return 0;
	case STMT_CONTROL_GROUP:
	case STMT_USER:
		return account_apply(d, st, err, errlen);
	case STMT_VCC:
		return vcc_apply(d->vcc, st, err, errlen);
	case STMT_SHOW:
	case STMT_RELOAD:
	case STMT_SAVE:
		break;
	case STMT_SET_LINK:
		return link_set_options(&d->links, st, err, errlen);
	case STMT_LIVENESS:
		links_set_liveness(&d->links, st->live_interval, st->live_mult);
		return 0;
	case STMT_ROUTING:
	case STMT_ADVERTISE:
	case STMT_ADAPT:
	case STMT_HTTP:
	case STMT_RELAY:
		return module_apply(d, st, err, errlen);
	}
	snprintf(err, errlen, "not a statement that changes anything");
	return -1;
}

/* show */

static void
show_columns(struct evbuffer *out, const char *cols)
{
	evbuffer_add_printf(out, "%%columns %s\n", cols);
}

static void
show_stats(struct vnetd *d, struct evbuffer *out)
{
	const struct sw_stats *ss = sw_stats(d->sw);
	const struct reseq_stats *rs;
	struct fwd_stats fs;
	struct vcc_stats vs;
	struct link	*l;
	struct iface	*ifc;
	size_t		 links = 0, up = 0, ifaces = 0;
	uint64_t	 looped = 0;

	fwd_stats(d->fwd, &fs);
	LINKS_FOREACH(l, &d->links) {
		links++;
		up += link_is_up(l);
	}
	IFACES_FOREACH(ifc, &d->ifaces) {
		ifaces++;
		looped += iface_counters(ifc)->looped;
	}
	show_columns(out, "name\tvalue");
#define ROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
	ROW("frames_in", ss->frames_in);
	ROW("frames_out", ss->frames_out);
#undef ROW
	fwd_show_stats(d->fwd, out);
#define ROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
	ROW("duplicates", ss->duplicates + fs.duplicates);
	ROW("seen_conflicts", fs.seen_conflicts);
	ROW("hop_limit", ss->hop_limit);
	ROW("dgram_unknown", links_udp_unknown(&d->links));
	ROW("gso_cut", ss->gso_cut);
	ROW("gso_segments", ss->gso_segments);
	ROW("gso_bad", ss->gso_bad);
	ROW("offload_bad", ss->offload_bad);
	rs = sw_reseq_stats(d->sw);
	ROW("reseq_holds", rs->holds);
	ROW("reseq_held", rs->held);
	ROW("reseq_old_after_new", rs->old_after_new);
	ROW("reseq_released_quiet", rs->released_quiet);
	ROW("reseq_released_max", rs->released_max);
	ROW("reseq_released_full", rs->released_full);
	ROW("reseq_released_other", rs->released_other);
	ROW("reseq_held_bytes", rs->held_bytes);
	ROW("reseq_lost", ss->reseq_lost);
	ROW("reseq_off_path", rs->off_path);
#undef ROW
	conns_show_stats(&d->links.conns, out);
	listen_show_stats(&d->listeners, out);
#define ROW(n, v) evbuffer_add_printf(out, "%s\t%llu\n", n, (unsigned long long)(v))
	ROW("pending", d->links.conns.npending);
	ROW("macs", fwd_mac_count(d->fwd));
	ROW("mac_table_full", fs.mac_table_full);
	ROW("macs_replaced", fs.macs_replaced);
	ROW("macs_evicted", fs.macs_evicted);
	ROW("links", links);
	ROW("links_up", up);
	ROW("interfaces", ifaces);
	ROW("routes", fwd_route_count(d->fwd));
	ROW("looped", looped);
	ROW("auto_hits", fs.auto_hits);
	vcc_get_stats(d->vcc, &vs);
	ROW("tcp_flows", vcc_flow_count(d->vcc));
	ROW("tcp_segments", vs.tcp);
	ROW("tcp_untracked", vs.untracked);
	ROW("tcp_truncated", vs.truncated);
	ROW("tcp_malformed", vs.malformed);
	ROW("tcp_bad_options", vs.bad_options);
	ROW("flows_created", vs.flows_created);
	ROW("flows_closed", vs.flows_closed);
	ROW("flows_expired", vs.expired);
	ROW("flows_evicted", vs.evictions);
	ROW("flows_over_share", vs.over_share);
	ROW("flows_picked_up", vs.picked_up);
	ROW("vcc_rewritten", vs.rewritten);
	ROW("vcc_win_lowered", vs.win_lowered);
	ROW("vcc_syn_ecn", vs.syn_ecn);
	ROW("vcc_ect_set", vs.ect_set);
	ROW("vcc_cwr_set", vs.cwr_set);
	ROW("vcc_ece_cleared", vs.ece_cleared);
	ROW("vcc_ece_set", vs.ece_set);
	ROW("vcc_ce_seen", vs.ce_seen);
	ROW("vcc_ecn_cleared", vs.ecn_cleared);
	ROW("vcc_cuts", vs.cuts);
#undef ROW
}

/* One certificate's row of show tls. */
static void
show_tls_row(struct evbuffer *out, const char *who, const char *name,
    const char *node, X509 *cert)
{
	long long	 not_after;
	struct tm	 tm;
	char		 when[32], subject[256], serial[80];
	ASN1_INTEGER	*sn;
	BIGNUM		*bn;
	char		*hex;
	size_t		 i;

	if (tls_cert_not_after(cert, &not_after) == -1)
		return;
	gmtime_r(&(time_t){ (time_t)not_after }, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (X509_NAME_oneline(X509_get_subject_name(cert), subject,
	    sizeof(subject)) == NULL)
		snprintf(subject, sizeof(subject), "?");
	for (i = 0; subject[i] != '\0'; i++)
		if ((unsigned char)subject[i] < 0x20 || subject[i] == '\t' ||
		    (unsigned char)subject[i] >= 0x7f)
			subject[i] = '?';
	snprintf(serial, sizeof(serial), "?");
	if ((sn = X509_get_serialNumber(cert)) != NULL &&
	    (bn = ASN1_INTEGER_to_BN(sn, NULL)) != NULL) {
		if ((hex = BN_bn2hex(bn)) != NULL) {
			snprintf(serial, sizeof(serial), "%s", hex);
			OPENSSL_free(hex);
		}
		BN_free(bn);
	}
	evbuffer_add_printf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%lld\n", who, name,
	    node, subject, serial, when, not_after - (long long)time(NULL));
}

/*
 * show tls: our certificate, then the peer's of each link up over TLS,
 * each with its notAfter and the seconds left until then.
 */
static void
show_tls(struct vnetd *d, struct evbuffer *out)
{
	struct link	*l;
	struct conn	*c;
	X509		*cert;

	show_columns(out, "who\tname\tnode\tsubject\tserial\tnot_after\t"
	    "seconds_left");
	if (d->tls != NULL)
		show_tls_row(out, "self", "-", d->node, tls_ctx_cert(d->tls));
	LINKS_FOREACH(l, &d->links)
		if ((c = link_conn(l)) != NULL &&
		    (cert = conn_tls_peer_cert(c)) != NULL)
			show_tls_row(out, "peer", link_name(l),
			    c->hello.node[0] != '\0' ? c->hello.node : "-",
			    cert);
}

/* save: the running state as a list. */
struct save_walk {
	struct stmt_vec	 run;
	int		 oom;
};

struct config_walk {
	void		(*cb)(const struct stmt *, void *);
	void		 *arg;
	struct stmt	  st;		/* zeroed once: routes write their part */
};

static void
config_route_cb(const struct stmt_match *src, const struct stmt_match *dst,
    const struct fwd_port *port, void *arg)
{
	struct config_walk	*w = arg;

	stmt_route_fill(&w->st, src, dst,
	    (enum stmt_target)fwd_port_kind(port), fwd_port_name(port));
	w->cb(&w->st, w->arg);
}

static int
module_link_made(struct vnetd *d, const struct link *l)
{
	struct vnetd_module	*m;

	MODULES(d, m)
		if (m->link_made != NULL && m->link_made(m->arg, l))
			return 1;
	return 0;
}

/* The running state up to the routes. */
static void
config_head(struct vnetd *d, void (*cb)(const struct stmt *, void *),
    void *arg)
{
	struct stmt		 st;
	struct iface		*ifc;
	struct link		*l;
	struct sched_optent	*e;
	struct sched_opts	 o;
	struct vnetd_module	*m;

#define START(k) do { memset(&st, 0, sizeof(st)); st.kind = (k); } while (0)
#define SHOW_PATH(k, p) do {						\
	if ((p)[0] != '\0') {						\
		START(k);						\
		snprintf(st.path, sizeof(st.path), "%s", (p));		\
		cb(&st, arg);						\
	}								\
} while (0)
	START(STMT_NODE);
	snprintf(st.name, sizeof(st.name), "%s", d->node);
	cb(&st, arg);
	START(STMT_NETWORK);
	snprintf(st.name, sizeof(st.name), "%s", d->network);
	cb(&st, arg);
	if (d->control_path[0] != '\0') {
		START(STMT_CONTROL);
		snprintf(st.path, sizeof(st.path), "%s", d->control_path);
		cb(&st, arg);
	}
	if (d->control_group[0] != '\0') {
		START(STMT_CONTROL_GROUP);
		snprintf(st.account, sizeof(st.account), "%s",
		    d->control_group);
		cb(&st, arg);
	}
	if (d->user[0] != '\0') {
		START(STMT_USER);
		snprintf(st.account, sizeof(st.account), "%s", d->user);
		cb(&st, arg);
	}
	SHOW_PATH(STMT_TLS_CERT, d->tls_cert);
	SHOW_PATH(STMT_TLS_KEY, d->tls_key);
	SHOW_PATH(STMT_TLS_CA, d->tls_ca);
	SHOW_PATH(STMT_TLS_CRL, d->tls_crl);
	START(STMT_KEEPALIVE);
	st.num = d->keepalive;
	cb(&st, arg);
	START(STMT_LIVENESS);
	st.live_interval = d->links.live_interval;
	st.live_mult = d->links.live_mult;
	cb(&st, arg);
	START(STMT_LEARN);
	st.flag = fwd_get_learn(d->fwd);
	cb(&st, arg);
	START(STMT_OFFLOAD);
	st.flag = d->ifenv.offload;
	cb(&st, arg);
	START(STMT_THREADS);
	st.flag = d->ifenv.threads;
	cb(&st, arg);
	MODULES(d, m)
		if (m->config != NULL)
			m->config(m->arg, cb, arg);
	listen_config(&d->listeners, cb, arg);
	IFACES_FOREACH(ifc, &d->ifaces)
		cb(iface_conf(ifc), arg);
	LINKS_FOREACH(l, &d->links) {
		if (!link_configured(l) || module_link_made(d, l))
			continue;
		START(STMT_LINK);
		link_to_stmt(l, &st);
		link_options(&d->links, link_name(l), &o);
		sched_opts_to_stmt(&o, &st);
		cb(&st, arg);
	}
	/* Options for links that only the peers open. */
	TAILQ_FOREACH(e, &d->links.opts, entry) {
		if ((l = link_find(&d->links, e->name)) != NULL &&
		    link_configured(l))
			continue;
		START(STMT_SET_LINK);
		snprintf(st.name, sizeof(st.name), "%s", e->name);
		sched_opts_to_stmt(&e->opts, &st);
		if (st.lopts != 0)
			cb(&st, arg);
	}
#undef SHOW_PATH
#undef START
}

void
vnetd_config(struct vnetd *d, void (*cb)(const struct stmt *, void *),
    void *arg)
{
	struct config_walk	 w;

	config_head(d, cb, arg);
	memset(&w, 0, sizeof(w));
	w.cb = cb;
	w.arg = arg;
	fwd_route_foreach(d->fwd, config_route_cb, &w);
	vcc_config_foreach(d->vcc, cb, arg);
}

void
vnetd_config_but_routes(struct vnetd *d,
    void (*cb)(const struct stmt *, void *), void *arg)
{
	config_head(d, cb, arg);
	vcc_config_foreach(d->vcc, cb, arg);
}

static void
print_stmt(const struct stmt *st, void *arg)
{
	struct evbuffer	*out = arg;
	char		 buf[STMT_LINE_MAX];

	stmt_print(st, buf, sizeof(buf));
	evbuffer_add_printf(out, "%s\n", buf);
}

static void
collect_stmt(const struct stmt *st, void *arg)
{
	struct save_walk	*w = arg;

	if (stmt_vec_add(&w->run, st, 0) == -1)
		w->oom = 1;
}

/* A statement that says what a daemon does without it: save leaves it out. */
static int
save_default(const struct stmt *st, void *arg)
{
	struct vnetd	*d = arg;
	char		 node[STMT_NAME_MAX + 1];

	switch (st->kind) {
	case STMT_NODE:
		vnetd_default_node(node, sizeof(node));
		return strcmp(st->name, node) == 0;
	case STMT_NETWORK:
		return strcmp(st->name, VNETD_NETWORK_DEFAULT) == 0;
	case STMT_CONTROL:
		/* -s's socket is the command line's, not the file's. */
		return d->control_fixed || strcmp(st->path, VNETD_SOCKET) == 0;
	case STMT_KEEPALIVE:
		return st->num == VNETD_KEEPALIVE_DEFAULT;
	case STMT_LIVENESS:
		return st->live_interval == LIVENESS_INTERVAL_DEFAULT &&
		    st->live_mult == 0;
	case STMT_LEARN:
	case STMT_THREADS:
		return !st->flag;
	case STMT_OFFLOAD:
	case STMT_RELAY:
		return st->flag;
	case STMT_ROUTING:
		return !st->flag && st->num == 0;
	default:
		return 0;
	}
}

int
vnetd_save(struct vnetd *d, const char *path, uid_t uid, char *err,
    size_t errlen)
{
	struct save_walk w;
	struct save_stats ss;
	char		*base, *text = NULL, *head = NULL, real[PATH_MAX];
	size_t		 blen = 0, tlen = 0;
	int		 r = -1, own;

	if (path[0] == '\0')
		path = d->config_file;
	else if (config_save_allowed(d->config_file, path, uid, err,
	    errlen) == -1)
		return -1;
	memset(&w, 0, sizeof(w));
	vnetd_config(d, collect_stmt, &w);
	/* The file there now, or else the one the daemon started with. */
	own = strcmp(path, d->config_file) == 0 ||
	    (realpath(path, real) != NULL && strcmp(real, d->config_file) == 0);
	if ((base = save_read(path, &blen)) == NULL && errno == ENOENT &&
	    !own) {
		base = save_read(d->config_file, &blen);
		own = 1;
	}
	if (!w.oom)
		text = save_merge(base, blen, base != NULL && own, &w.run,
		    save_default, d, &tlen, &ss);
	if (text == NULL && !w.oom && errno == EINVAL) {
		log_info("save %s: %s is no configuration (a line does not "
		    "parse): writing the running state alone", path,
		    own ? d->config_file : path);
		free(base);
		base = NULL;
		text = save_merge(NULL, 0, 0, &w.run, save_default, d, &tlen,
		    &ss);
	}
	if (text == NULL) {
		snprintf(err, errlen, "save: out of memory");
		goto out;
	}
	if (base == NULL && asprintf(&head, "# The running state of vnetd "
	    "node %s, written by save.\n%s", d->node, text) == -1) {
		snprintf(err, errlen, "save: out of memory");
		goto out;
	}
	if (head != NULL)
		r = config_write(path, head, strlen(head), err, errlen);
	else
		r = config_write(path, text, tlen, err, errlen);
	if (r == 0)
		log_info("running state saved to %s: %zu statements kept, %zu "
		    "changed, %zu removed, %zu added", path, ss.kept,
		    ss.replaced, ss.dropped, ss.added);
 out:
	free(head);
	free(text);
	free(base);
	stmt_vec_clear(&w.run);
	return r;
}

int
vnetd_show_link(struct vnetd *d, const char *name, struct evbuffer *out,
    char *err, size_t errlen)
{
	return link_show(&d->links, name, out, err, errlen);
}

const char *
vnetd_route_warning(struct vnetd *d, const struct stmt *st, char *buf,
    size_t len)
{
	if (st->kind != STMT_ROUTE || st->op != STMT_OP_SET ||
	    st->target != TARGET_LINK)
		return NULL;
	if (strcmp(st->name, d->node) == 0)
		snprintf(buf, len, "link %s is this node's own name: no peer "
		    "can bring it, the route is never used", st->name);
	else if (link_find(&d->links, st->name) == NULL &&
	    listen_empty(&d->listeners))
		snprintf(buf, len, "there is no link %s, and without a "
		    "listener no peer can bring one: the route is unused "
		    "until add-link %s", st->name, st->name);
	else
		return NULL;
	return buf;
}

static void
append(char *buf, size_t len, const char *s)
{
	size_t	 n = strlen(buf);

	snprintf(buf + n, len - n, "%s", s);
}

/* show interfaces: the modules' columns (rates) follow the device's own. */
static void
show_interfaces(struct vnetd *d, struct evbuffer *out)
{
	struct vnetd_module	*m;
	struct iface		*ifc;
	char			 cols[256], more[512], buf[256];
	const char		*p;

	cols[0] = '\0';
	MODULES(d, m)
		if (m->columns != NULL &&
		    (p = m->columns(m->arg, STMT_SHOW_INTERFACES)) != NULL)
			append(cols, sizeof(cols), p);
	iface_show_columns(cols, out);
	IFACES_FOREACH(ifc, &d->ifaces) {
		more[0] = '\0';
		MODULES(d, m)
			if (m->fields != NULL && (p = m->fields(m->arg,
			    STMT_SHOW_INTERFACES, iface_name(ifc), buf,
			    sizeof(buf))) != NULL)
				append(more, sizeof(more), p);
		iface_show(ifc, more, out);
	}
}

void
vnetd_show_what(struct vnetd *d, enum stmt_show what, struct evbuffer *out)
{
	struct stmt	 st;

	memset(&st, 0, sizeof(st));
	st.kind = STMT_SHOW;
	st.show = what;
	st.num = STMT_THRESHOLD_DEFAULT;
	vnetd_show(d, &st, out);
}

void
vnetd_show(struct vnetd *d, const struct stmt *st, struct evbuffer *out)
{
	struct vnetd_module	*m;
	enum stmt_show		 what = st->show;

	switch (what) {
	case STMT_SHOW_LINKS:
	case STMT_SHOW_LINKS_ALL:
		link_show_links(&d->links, what == STMT_SHOW_LINKS_ALL, out);
		break;
	case STMT_SHOW_REFUSED:
		link_show_refused(&d->links, out);
		break;
	case STMT_SHOW_ROUTES:
		fwd_show_routes(d->fwd, st->win, out);
		break;
	case STMT_SHOW_INTERFACES:
		show_interfaces(d, out);
		break;
	case STMT_SHOW_MACS:
		fwd_show_macs(d->fwd, vnetd_now_ms(), st->win, out);
		break;
	case STMT_SHOW_STATS:
		show_stats(d, out);
		break;
	case STMT_SHOW_CONFIG:
		vnetd_config(d, print_stmt, out);
		break;
	case STMT_SHOW_LINK:
		break;		/* vnetd_show_link(): it needs the name */
	case STMT_SHOW_FLOWS:
		vcc_show_flows(d->vcc, vnetd_now_us(), st->win, out);
		break;
	case STMT_SHOW_VCC:
		vcc_show_interfaces(d->vcc, vnetd_now_us(), out);
		break;
	case STMT_SHOW_NODES:
	case STMT_SHOW_TOPOLOGY:
	case STMT_SHOW_TRAFFIC:
	case STMT_SHOW_TRAFFIC_NODES:
	case STMT_SHOW_TRAFFIC_TOPOLOGY:
	case STMT_SHOW_TRAFFIC_MATRIX:
	case STMT_SHOW_ADAPT:
		break;		/* the control plane's alone */
	case STMT_SHOW_TLS:
		show_tls(d, out);
		break;
	}
	MODULES(d, m)
		if (m->show != NULL)
			m->show(m->arg, st, out);
}
