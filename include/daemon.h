/*
 * struct vnetd: one daemon's whole state.  Nothing in the daemon lives in a
 * global; a test can make two of these in one process.
 */
#ifndef VNET_DAEMON_H
#define VNET_DAEMON_H

#include <sys/queue.h>
#include <limits.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "iface.h"
#include "link.h"
#include "listen.h"
#include "sched.h"
#include "stmt.h"
#include "tlsexp.h"

struct event_base;
struct evdns_base;
struct event;
struct evbuffer;
struct evconnlistener;
struct fwd;
struct fwd_port;
struct metric_out;
struct control;
struct ssl_ctx_st;
struct vcc;

#define VNETD_KEEPALIVE_DEFAULT	10
#define VNETD_NETWORK_DEFAULT	"vnet"


/*
 * The layers above the daemon (the control plane, the status server, the
 * history, the control socket, reload) are not known to it: whoever makes
 * the daemon registers them here (vnetd.c does), and the daemon calls up
 * through these hooks, in the order the modules were added.  Every hook
 * may be NULL; each gets the module's arg.
 */
#define VNETD_MODULES_MAX	8
#define VNETD_MODULE_KINDS	4

struct vnetd_module {
	const char	*name;
	void		*arg;
	/* The statements it applies (vnetd_apply() hands them over). */
	enum stmt_kind	 kinds[VNETD_MODULE_KINDS];
	size_t		 nkinds;
	int		(*apply)(void *, const struct stmt *, char *err,
			    size_t errlen);
	/* The capabilities it adds to this node's hello (wire.h). */
	uint16_t	(*caps)(void *);
	/* From vnetd_start(), after the daemon's own timers and signals. */
	int		(*start)(void *);
	/* Every second, after the daemon's own ageing. */
	void		(*tick)(void *);
	/* Its part of a show (st->show, and its options), after the daemon's. */
	void		(*show)(void *, const struct stmt *st, struct evbuffer *);
	/* Columns added to every row of a show table: "\tname...". */
	const char	*(*columns)(void *, enum stmt_show);
	const char	*(*fields)(void *, enum stmt_show, const char *row,
			    char *buf, size_t len);
	/* Its families of /metrics (metric.h), after the daemon's. */
	void		(*metrics)(void *, const struct metric_out *);
	/* Its statements of the running state, after the settings. */
	void		(*config)(void *, void (*cb)(const struct stmt *, void *),
			    void *cbarg);
	/* 1 if it made the link itself: not part of the configuration. */
	int		(*link_made)(void *, const struct link *);
	/*
	 * The links' events (link.h's hooks) go to the modules that take
	 * them: a node record (the first module with link_input answers; -1
	 * closes the link), a link up or down, who made a link (the first
	 * answer other than NULL or "-").
	 */
	int		(*link_input)(void *, struct link *, const uint8_t *,
			    size_t, const char **why);
	void		(*link_up)(void *, struct link *);
	void		(*link_down)(void *, struct link *);
	const char	*(*link_origin)(void *, const struct link *,
			    char *trigger, size_t, const char **reason);
	/* vnetd_free(): stop before the links and interfaces go ... */
	void		(*stop)(void *);
	/* ... and free after them, as they may still call up. */
	void		(*free)(void *);
};

struct vnetd {
	struct event_base	*base;
	struct evdns_base	*dns;
	struct sw		*sw;		/* the frame path */
	struct fwd		*fwd;		/* the switch's (sw_fwd()) */
	struct control		*control;

	char			 node[STMT_NAME_MAX + 1];
	char			 network[STMT_NAME_MAX + 1];
	char			 control_path[STMT_PATH_MAX + 1];
	unsigned int		 keepalive;	/* seconds */

	struct listeners	 listeners;
	struct links		 links;		/* and their connections */
	struct iface_list	 ifaces;
	struct iface_env	 ifenv;		/* what interfaces are given */

	struct event		*ev_tick;
	struct event		*ev_reseq;	/* sw_poll() */
	struct event		*ev_sig[2];
	int			 exit_code;

	/* Read again by reload; absolute, as the daemon changes directory. */
	char			 config_file[PATH_MAX];
	int			 control_fixed;	/* -s given: control is ignored */
	struct reload		*reload;	/* under way, or NULL (reload.h) */
	/* TLS: the files, and the context made from them on first use. */
	char			 tls_cert[STMT_PATH_MAX + 1];
	char			 tls_key[STMT_PATH_MAX + 1];
	char			 tls_ca[STMT_PATH_MAX + 1];
	char			 tls_crl[STMT_PATH_MAX + 1];
	struct ssl_ctx_st	*tls;
	char			 tls_warning[STMT_PATH_MAX + 256];
	/* What tls was made from: the files' names and a hash of each. */
	char			 tls_loaded[4][STMT_PATH_MAX + 1];
	unsigned char		 tls_sum[4][32];
	/* The watch: what the files held at its last look, and last failed. */
	unsigned int		 tls_watch_ticks;
	int			 tls_seen_valid, tls_failed_valid;
	unsigned char		 tls_seen[4][32];
	unsigned char		 tls_failed[4][32];
	/* Expiry warned of as it runs: this node's certificate, the peers'. */
	struct tlsexp		 tls_exp;
	struct tlsexp_book	 tls_exp_peers;

	char			 control_group[STMT_ACCOUNT_MAX + 1];
	gid_t			 control_gid;
	char			 user[STMT_ACCOUNT_MAX + 1];
	uid_t			 user_uid;
	gid_t			 user_gid;

	struct vcc		*vcc;		/* the switch's (sw_vcc()) */
	/* Made by whoever adds the modules above (vnetd.c), else NULL. */
	struct history		*history;	/* 1 s samples, for rates */

	struct vnetd_module	 modules[VNETD_MODULES_MAX];
	size_t			 nmodules;
};

/* Set defaults; 0 or -1. */
int	 vnetd_init(struct vnetd *);
/* Adds a module (a copy of m) above the daemon; 0, or -1 if full. */
int	 vnetd_module_add(struct vnetd *, const struct vnetd_module *m);
/* Starts the event machinery (base, dns, timers); after the config is in. */
int	 vnetd_start(struct vnetd *);
void	 vnetd_free(struct vnetd *);

/*
 * Applies one statement.  runtime says whether it comes from the control
 * socket (some statements only make sense at start-up).  Returns 0, or -1
 * with a message in err; on -1 nothing changed.
 */
int	 vnetd_apply(struct vnetd *, const struct stmt *, int runtime,
	    char *err, size_t errlen);

/*
 * Answers a show request (a STMT_SHOW statement) into out, in the control
 * protocol's format (see ctl.h) without the final %end line.
 */
void	 vnetd_show(struct vnetd *, const struct stmt *, struct evbuffer *out);
/* The same for a show without options. */
void	 vnetd_show_what(struct vnetd *, enum stmt_show, struct evbuffer *out);

/* `show link NAME`, the same way; -1 with err if there is no such link. */
int	 vnetd_show_link(struct vnetd *, const char *name, struct evbuffer *out,
	    char *err, size_t errlen);

uint64_t vnetd_now_ms(void);

/* listen_accept_timer() and listen_accept_pause() (listen.h), by their old names. */
struct event *vnetd_accept_timer(struct evconnlistener *);
void	 vnetd_accept_pause(struct evconnlistener *, struct event *resume);
uint64_t vnetd_now_us(void);

/* The node name used when the configuration has no node statement. */
void	 vnetd_default_node(char *buf, size_t len);
/*
 * A route to a link that nothing can make (no such link, no listener for
 * one to come in on, or this node's own name) is taken, with a warning:
 * into buf, returned; NULL when there is nothing to say.
 */
const char *vnetd_route_warning(struct vnetd *, const struct stmt *,
	    char *buf, size_t len);

/*
 * Calls cb with every statement of the running state, in the order a
 * configuration file lists them: node, network, control, keepalive, learn,
 * listeners, interfaces, configured links, routes, vcc policies.  What
 * `show config` prints and what reload compares a new configuration with.
 */
void	 vnetd_config(struct vnetd *,
	    void (*cb)(const struct stmt *, void *), void *arg);
/* The same without the routes, which can be many: fwd_route_walk() them. */
void	 vnetd_config_but_routes(struct vnetd *,
	    void (*cb)(const struct stmt *, void *), void *arg);

/*
 * Writes the running state as a configuration file, atomically (a new file
 * renamed over the old one).  path "" means the file the daemon was started
 * with; another path is checked against config_save_allowed() for the
 * client of uid.  Never through a symbolic link, never over anything but a
 * regular file.  0, or -1 with a message in err.
 */
int	 vnetd_save(struct vnetd *, const char *path, uid_t uid, char *err,
	    size_t errlen);

/*
 * The TLS context, made from the tls-* files the first time it is needed
 * (and before privileges are dropped).  NULL with a message in err when the
 * files are missing or bad.
 */
struct ssl_ctx_st *vnetd_tls(struct vnetd *, char *err, size_t errlen);

/* How often the TLS files are looked at for changes (seconds). */
#define TLS_WATCH_S	10

/* Statements only the configuration file may give (not vnetctl). */
int	 vnetd_startup_only(enum stmt_kind);
/* Of those, the ones a reload may change all the same (the tls-* files). */
int	 vnetd_reloadable(enum stmt_kind);

/*
 * Reload's part for TLS, after the statements: if a tls-* file changed (in
 * name, or in what it holds), a new context is made from the files, and
 * from then on new connections use it; every established TLS connection
 * whose peer no longer verifies under it is closed.  If it cannot be made,
 * the running one stays, and the tls-* names with it.  emit (or NULL) is
 * told each file whose content changed under the same name.  The number of
 * those changes, or -1 with the reason in err.  vnetd_tls_changes() says
 * the same for reload -n, and changes nothing.
 */
int	 vnetd_tls_reload(struct vnetd *, void (*emit)(int, const char *,
	    void *), void *arg, char *err, size_t errlen);
size_t	 vnetd_tls_changes(struct vnetd *, void (*emit)(int, const char *,
	    void *), void *arg);

/*
 * Seconds until a certificate's notAfter (negative: past), of our own or
 * of the peer on link l's connection: 0, or -1 if there is none (no TLS).
 */
int	 vnetd_tls_left(struct vnetd *, long long *not_after, long long *left);
/*
 * The expiry of this node's certificate and each connected peer's, at now
 * (a Unix time; the watch gives it every TLS_WATCH_S s): logged once per
 * certificate at 30, 7 and 1 days left and once expired.
 */
void	 vnetd_tls_expiry(struct vnetd *, long long now);
/* /metrics in the Prometheus text format: the daemon's, then the modules'. */
void	 vnetd_metrics(struct vnetd *, struct evbuffer *);
int	 vnetd_link_tls_left(const struct link *, long long *not_after,
	    long long *left);

#endif
