#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "buf.h"
#include "conn.h"
#include "gro.h"
#include "log.h"
#include "udp.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif
#ifndef UDP_GRO
#define UDP_GRO		104
#endif

#define UDP_RX_SLOT		65536
#define UDP_PROBE_LEN		DGRAM_PROBE_LEN
#define UDP_LABEL		"EXPORTER-vnet-datagram"
#define UDP_GSO_MAX		64	/* datagrams in one train */
#define UDP_GSO_BYTES		65000	/* bytes in one train, at most */

struct udp_sock {
	TAILQ_ENTRY(udp_sock)	 entry;
	struct udp		*u;
	int			 fd;
	int			 family;
	uint16_t		 port;
	int			 own;		/* a dialler's, not a listener's */
	struct stmt_hostport	 addr;		/* the listener's */
	struct event		*ev;
	uint32_t		 ovfl;		/* SO_RXQ_OVFL: drops so far */
};

TAILQ_HEAD(udp_sock_list, udp_sock);

struct udp_tx {
	struct udp_path		*p;		/* NULL: gone */
	struct udp_sock		*s;
	struct sockaddr_storage	 to;
	socklen_t		 tolen;
	uint8_t			*data;
	size_t			 len;
};

struct udp {
	struct event_base	*base;
	uint64_t		 (*now_ms)(void);
	struct udp_sock_list	 socks;
	struct udp_path		*idx[UDP_INDEX_BUCKETS];
	TAILQ_HEAD(, udp_path)	 gro_pending;	/* paths holding a segment */
	uint8_t			*rxbuf;		/* UDP_RX_BATCH slots */
	uint8_t			*txbuf;		/* UDP_TX_BUFFER */
	size_t			 txoff;
	struct udp_tx		 tx[UDP_TX_BATCH];
	size_t			 ntx;
	struct event		*ev_flush;
	uint64_t		 unknown;
	uint64_t		 rx_overflow;	/* dropped by our own sockets */
	uint64_t		 probe_ms;
	uint64_t		 rekey_ms, rekey_packets;
	int			 gso;		/* UDP_SEGMENT works */
};

/* The frames sent lately, kept to send again if the path fails. */
struct udp_recent_ent {
	uint64_t	 at;		/* ms */
	uint32_t	 off, len;
};

struct udp_recent {
	uint8_t			*buf;		/* UDP_RECENT_BYTES, or NULL */
	struct udp_recent_ent	 e[UDP_RECENT_MAX];
	size_t			 first, n;	/* the oldest, how many */
	uint32_t		 pos;		/* where the next goes */
};

struct udp_path {
	struct udp		*u;
	struct udp_path		*inext;		/* in its index bucket */
	struct conn		*c;
	char			 name[STMT_NAME_MAX + 1];
	enum udp_state		 state;
	enum stmt_transport	 transport;
	enum udp_mode		 mode;		/* as last told */
	struct udp_path_cbs	 cbs;
	void			*arg;
	uint32_t		 local;
	uint8_t			 secret[WIRE_DGRAM_SECRET];	/* plain: ours */
	struct wire_dgram	 theirs;
	int			 keyed;		/* dg is made */
	struct dgram		 dg;
	struct dfrag		 frag;
	struct pmtu		 pmtu;
	struct sockaddr_storage	 peer;
	socklen_t		 peerlen;	/* 0: no endpoint yet */
	struct udp_sock		*sock;
	uint64_t		 since, last_reply, next_probe, backoff;
	uint64_t		 srtt;		/* ms */
	uint64_t		 ok_until;	/* ms: what was sent before arrived */
	uint64_t		 doubted;	/* ms: the link's word; 0: none */
	int			 idle;		/* no frames: probes slow down */
	uint64_t		 woke;		/* ms, it last stopped being idle */
	uint64_t		 lossy_until;	/* ms: cut super-frames until then */
	uint64_t		 overflow0;	/* u->rx_overflow when keyed */
	uint32_t		 peer_lost;	/* as its last reply said */
	uint64_t		 unanswered;	/* probes - replies, then */
	struct udp_recent	 recent;
	struct gro		*gro;		/* NULL: none (no offload here) */
	int			 gro_pending;
	TAILQ_ENTRY(udp_path)	 gro_entry;
	uint32_t		 probe_id;
	struct event		*ev;
	struct udp_path_stats	 st;
};

static void	udp_path_tick(struct udp_path *, uint64_t now);
static uint32_t	udp_route_max(const struct sockaddr_storage *, socklen_t);

static uint64_t
env_u64(const char *name, uint64_t def)
{
	const char	*s = getenv(name);
	char		*end;
	unsigned long long v;

	if (s == NULL || *s == '\0')
		return def;
	v = strtoull(s, &end, 10);
	return *end == '\0' && v > 0 ? (uint64_t)v : def;
}

const char *
udp_state_name(enum udp_state s)
{
	switch (s) {
	case UDP_OFFERED:
		return "offered";
	case UDP_PROBING:
		return "probing";
	case UDP_UP:
		return "up";
	case UDP_FALLBACK:
		return "fallback";
	}
	return "?";
}

static const char *
udp_mode_name(enum udp_mode m)
{
	return m == UDP_MODE_UDP ? "datagrams" : m == UDP_MODE_BOTH ?
	    "datagrams and the connection" : "the connection";
}

/* The sockets. */

static void	udp_sock_readcb(evutil_socket_t, short, void *);

static struct udp_sock *
udp_sock_open(struct udp *u, const struct sockaddr *sa, socklen_t salen,
    int own, char *err, size_t errlen)
{
	struct udp_sock		*s;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	int			 fd, one = 1, size = UDP_SOCKBUF;
	int			 pmtud;

	if ((fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return NULL;
	}
	if (sa->sa_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
	    sizeof(size)) == -1)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size,
		    sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size,
	    sizeof(size)) == -1)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size,
		    sizeof(size));
	/*
	 * DF on everything, and the kernel's word on the route's MTU
	 * (ICMP fragmentation-needed from the underlay) as EMSGSIZE.
	 */
	pmtud = IP_PMTUDISC_DO;
	if (sa->sa_family == AF_INET)
		(void)setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtud,
		    sizeof(pmtud));
	else {
		pmtud = IPV6_PMTUDISC_DO;
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtud,
		    sizeof(pmtud));
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, &one,
		    sizeof(one));
	}
	/* Datagrams of one peer coalesced by the kernel, cut here. */
	(void)setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
	/* What the socket dropped, full: our loss, not the path's. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (bind(fd, sa, salen) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sslen) == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return NULL;
	}
	s->u = u;
	s->fd = fd;
	s->family = sa->sa_family;
	s->own = own;
	s->port = ntohs(ss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	if ((s->ev = event_new(u->base, fd, EV_READ | EV_PERSIST,
	    udp_sock_readcb, s)) == NULL || event_add(s->ev, NULL) == -1) {
		if (s->ev != NULL)
			event_free(s->ev);
		snprintf(err, errlen, "out of memory");
		close(fd);
		free(s);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&u->socks, s, entry);
	return s;
}

static void
udp_sock_close(struct udp_sock *s)
{
	struct udp	*u = s->u;
	struct udp_path	*p;
	size_t		 i;

	udp_flush(u);
	for (i = 0; i < UDP_INDEX_BUCKETS; i++)
		for (p = u->idx[i]; p != NULL; p = p->inext)
			if (p->sock == s) {
				p->sock = NULL;
				p->peerlen = 0;
			}
	TAILQ_REMOVE(&u->socks, s, entry);
	event_free(s->ev);
	close(s->fd);
	free(s);
}

static void
udp_flush_cb(evutil_socket_t fd, short ev, void *arg)
{
	udp_flush(arg);
}

struct udp *
udp_new(struct event_base *base, uint64_t (*now_ms)(void))
{
	struct udp	*u;

	if ((u = calloc(1, sizeof(*u))) == NULL)
		return NULL;
	u->base = base;
	u->now_ms = now_ms;
	TAILQ_INIT(&u->socks);
	TAILQ_INIT(&u->gro_pending);
	u->gso = 1;
	u->probe_ms = env_u64("VNET_UDP_PROBE_MS", UDP_PROBE_MS);
	u->rekey_ms = env_u64("VNET_UDP_REKEY_MS", DGRAM_REKEY_MS);
	u->rekey_packets = env_u64("VNET_UDP_REKEY_PACKETS",
	    DGRAM_REKEY_PACKETS);
	if ((u->ev_flush = event_new(base, -1, 0, udp_flush_cb, u)) == NULL) {
		free(u);
		return NULL;
	}
	return u;
}

void
udp_free(struct udp *u)
{
	struct udp_sock	*s;

	if (u == NULL)
		return;
	udp_flush(u);
	while ((s = TAILQ_FIRST(&u->socks)) != NULL)
		udp_sock_close(s);
	event_free(u->ev_flush);
	free(u->rxbuf);
	free(u->txbuf);
	free(u);
}

void
udp_listen(struct udp *u, const struct stmt_hostport *hp)
{
	struct addrinfo		 hints, *res, *ai;
	struct udp_sock		*s;
	char			 port[8], what[STMT_HOST_MAX + 10], err[128];
	int			 any = strcmp(hp->host, "*") == 0, gai;

	stmt_hostport_format(hp, what, sizeof(what));
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(port, sizeof(port), "%u", hp->port);
	if ((gai = getaddrinfo(any ? NULL : hp->host, port, &hints, &res))) {
		log_warnx("udp %s: %s: no datagrams there", what,
		    gai_strerror(gai));
		return;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((s = udp_sock_open(u, ai->ai_addr, ai->ai_addrlen, 0, err,
		    sizeof(err))) == NULL) {
			if (!(any && ai->ai_family == AF_INET6))
				log_warnx("udp %s: %s: no datagrams there",
				    what, err);
			continue;
		}
		s->addr = *hp;
		if (!any)
			break;
	}
	freeaddrinfo(res);
}

void
udp_unlisten(struct udp *u, const struct stmt_hostport *hp)
{
	struct udp_sock	*s, *next;

	for (s = TAILQ_FIRST(&u->socks); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (!s->own && strcmp(s->addr.host, hp->host) == 0 &&
		    s->addr.port == hp->port)
			udp_sock_close(s);
	}
}

uint64_t
udp_unknown(const struct udp *u)
{
	return u->unknown;
}

/* A socket to send to family from: a listener's, or one of our own. */
static struct udp_sock *
udp_sock_for(struct udp *u, int family)
{
	struct udp_sock		*s;
	struct sockaddr_storage	 ss;
	char			 err[128];

	TAILQ_FOREACH(s, &u->socks, entry)
		if (s->family == family && !s->own)
			return s;
	TAILQ_FOREACH(s, &u->socks, entry)
		if (s->family == family)
			return s;
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if ((s = udp_sock_open(u, (struct sockaddr *)&ss, family == AF_INET ?
	    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6), 1, err,
	    sizeof(err))) == NULL)
		log_warnx("udp: a socket to send from: %s", err);
	return s;
}

/* The index table. */

static struct udp_path **
udp_bucket(struct udp *u, uint32_t idx)
{
	return &u->idx[(idx * 2654435761u) >> 24];
}

static struct udp_path *
udp_lookup(struct udp *u, uint32_t idx)
{
	struct udp_path	*p;

	for (p = *udp_bucket(u, idx); p != NULL; p = p->inext)
		if (p->local == idx)
			return p;
	return NULL;
}

/* Sending: datagrams gather in txbuf and go in batches. */

static uint8_t *
udp_tx_slot(struct udp_path *p, size_t len)
{
	struct udp	*u = p->u;
	struct udp_tx	*t;

	if (u->txbuf == NULL && (u->txbuf = malloc(UDP_TX_BUFFER)) == NULL)
		return NULL;
	if (u->ntx == UDP_TX_BATCH || u->txoff + len > UDP_TX_BUFFER)
		udp_flush(u);
	if (u->ntx == 0)
		event_active(u->ev_flush, EV_TIMEOUT, 0);
	t = &u->tx[u->ntx++];
	t->p = p;
	t->s = p->sock;
	memcpy(&t->to, &p->peer, p->peerlen);
	t->tolen = p->peerlen;
	t->data = u->txbuf + u->txoff;
	t->len = 0;
	u->txoff += len;
	return t->data;
}

/* The last slot taken holds len bytes (its datagram, sealed). */
static void
udp_tx_done(struct udp *u, size_t len, size_t room)
{
	struct udp_tx	*t = &u->tx[u->ntx - 1];

	t->len = len;
	u->txoff -= room - len;
	if (len == 0)
		u->ntx--;
}

static void	udp_arm(struct udp_path *, uint64_t now, uint64_t at);

/* EMSGSIZE is the MTU search's answer (or the route's MTU shrank). */
static void
udp_tx_failed(struct udp_tx *t, int err, uint64_t now)
{
	if (t->p == NULL)
		return;
	if (err != EMSGSIZE) {
		t->p->st.send_errors++;
		return;
	}
	pmtu_emsgsize(&t->p->pmtu, (uint32_t)t->len, now);
	udp_arm(t->p, now, now);
}

static int
udp_same_peer(const struct udp_tx *a, const struct udp_tx *b)
{
	return a->s == b->s && a->tolen == b->tolen &&
	    memcmp(&a->to, &b->to, a->tolen) == 0;
}

/*
 * Sends tx[i..j) (one socket): runs of equal-sized datagrams to one peer as
 * UDP_SEGMENT trains, where the kernel takes them, in one sendmmsg.
 */
static void
udp_send_group(struct udp *u, size_t i, size_t j, uint64_t now)
{
	struct mmsghdr	 mm[UDP_TX_BATCH];
	struct iovec	 iov[UDP_TX_BATCH];
	char		 cbuf[UDP_TX_BATCH][CMSG_SPACE(sizeof(uint16_t))];
	size_t		 first[UDP_TX_BATCH], count[UDP_TX_BATCH];
	size_t		 n = 0, k, m, r;
	struct cmsghdr	*cm;
	int		 sent, fd = u->tx[i].s->fd;

	for (k = i; k < j; k = m) {
		/* A train: same peer, same size, the last may be shorter. */
		m = k + 1;
		if (u->gso)
			while (m < j && m - k < UDP_GSO_MAX &&
			    (size_t)(u->tx[m].data + u->tx[m].len -
			    u->tx[k].data) <= UDP_GSO_BYTES &&
			    udp_same_peer(&u->tx[k], &u->tx[m]) &&
			    u->tx[m].len <= u->tx[k].len &&
			    u->tx[m - 1].len == u->tx[k].len &&
			    u->tx[m].data == u->tx[m - 1].data +
			    u->tx[m - 1].len)
				m++;
		memset(&mm[n], 0, sizeof(mm[n]));
		iov[n].iov_base = u->tx[k].data;
		iov[n].iov_len = (size_t)(u->tx[m - 1].data +
		    u->tx[m - 1].len - u->tx[k].data);
		mm[n].msg_hdr.msg_name = &u->tx[k].to;
		mm[n].msg_hdr.msg_namelen = u->tx[k].tolen;
		mm[n].msg_hdr.msg_iov = &iov[n];
		mm[n].msg_hdr.msg_iovlen = 1;
		if (m - k > 1) {
			mm[n].msg_hdr.msg_control = cbuf[n];
			mm[n].msg_hdr.msg_controllen = sizeof(cbuf[n]);
			cm = CMSG_FIRSTHDR(&mm[n].msg_hdr);
			cm->cmsg_level = SOL_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
			*(uint16_t *)(void *)CMSG_DATA(cm) =
			    (uint16_t)u->tx[k].len;
		}
		first[n] = k;
		count[n++] = m - k;
	}
	for (r = 0; r < n; ) {
		sent = sendmmsg(fd, mm + r, (unsigned int)(n - r), 0);
		if (sent > 0) {
			r += (size_t)sent;
			continue;
		}
		if (sent == -1 && errno == EINTR)
			continue;
		if (sent == -1 && (errno == EIO || errno == EINVAL) &&
		    count[r] > 1 && u->gso) {
			/* No segmentation offload here: one by one. */
			log_info("udp: no UDP_SEGMENT (%s), sending datagrams "
			    "one by one", strerror(errno));
			u->gso = 0;
			udp_send_group(u, first[r], j, now);
			return;
		}
		for (k = first[r]; k < first[r] + count[r]; k++)
			udp_tx_failed(&u->tx[k], errno, now);
		r++;
	}
}

void
udp_flush(struct udp *u)
{
	uint64_t	 now;
	size_t		 i, j;

	if (u->ntx == 0)
		return;
	now = u->now_ms();
	for (i = 0; i < u->ntx; i = j) {
		for (j = i + 1; j < u->ntx && u->tx[j].s == u->tx[i].s; j++)
			;
		if (u->tx[i].s != NULL)
			udp_send_group(u, i, j, now);
	}
	u->ntx = 0;
	u->txoff = 0;
}

/*
 * The parts of bytes [off, off + n) of a message that is pre then eth:
 * one or two, into parts (after those already there): how many now.
 */
static size_t
udp_range(struct dgram_part *parts, size_t k, const uint8_t *pre,
    size_t prelen, const uint8_t *eth, size_t off, size_t n)
{
	size_t	 a;

	if (off < prelen) {
		a = prelen - off < n ? prelen - off : n;
		parts[k].p = pre + off;
		parts[k++].len = a;
		n -= a;
		off = prelen;
	}
	if (n > 0) {
		parts[k].p = eth + (off - prelen);
		parts[k++].len = n;
	}
	return k;
}

static void
copy_range(uint8_t *dst, const uint8_t *a, size_t alen, const uint8_t *b,
    size_t off, size_t n)
{
	struct dgram_part	 parts[2];
	size_t			 i, k = udp_range(parts, 0, a, alen, b, off, n);

	for (i = 0; i < k; i++) {
		memcpy(dst, parts[i].p, parts[i].len);
		dst += parts[i].len;
	}
}

/* Keeps a copy of a message sent, dropping the oldest to make room. */
static void
udp_recent_add(struct udp_recent *r, uint64_t now, const uint8_t *pre,
    size_t prelen, const uint8_t *eth, size_t len)
{
	struct udp_recent_ent	*e, *old;
	size_t			 total = prelen + len;

	if (total > UDP_RECENT_ONE)
		return;
	if (r->buf == NULL && (r->buf = malloc(UDP_RECENT_BYTES)) == NULL)
		return;
	if (r->pos + total > UDP_RECENT_BYTES)
		r->pos = 0;
	/* Writes go round the buffer: the oldest are the ones overwritten. */
	while (r->n > 0) {
		old = &r->e[r->first];
		if (r->n < UDP_RECENT_MAX && (old->off >= r->pos + total ||
		    old->off + old->len <= r->pos))
			break;
		r->first = (r->first + 1) % UDP_RECENT_MAX;
		r->n--;
	}
	e = &r->e[(r->first + r->n) % UDP_RECENT_MAX];
	e->at = now;
	e->off = r->pos;
	e->len = (uint32_t)total;
	copy_range(r->buf + r->pos, pre, prelen, eth, 0, total);
	r->pos += (uint32_t)total;
	r->n++;
}

/* The answers are late: what was sent since the last answered probe again. */
static void
udp_recent_resend(struct udp_path *p)
{
	struct udp_recent	*r = &p->recent;
	struct udp_recent_ent	*e;
	size_t			 i;

	for (i = 0; i < r->n; i++) {
		e = &r->e[(r->first + i) % UDP_RECENT_MAX];
		if (e->at < p->ok_until)
			continue;
		p->cbs.resend(p->arg, r->buf + e->off, e->len);
		p->st.resent++;
	}
	r->n = 0;
}

int
udp_path_send(struct udp_path *p, const uint8_t *pre, size_t prelen,
    const uint8_t *eth, size_t len)
{
	uint64_t		 now = p->u->now_ms();
	size_t			 total, room, piece, off, n, k, hl, sealed;
	uint32_t		 mtu = pmtu_get(&p->pmtu), id;
	uint8_t			*d, fh[DFRAG_HDR_LEN];
	uint8_t			 mh[DGRAM_FRAME_HDR + DGRAM_FRAME_VH];
	struct dgram_part	 parts[3];
	struct wire_hdr		 wh;
	struct wire_frame	 wf;
	struct rbuf		 b;
	const uint8_t		*vh;
	const char		*why;
	uint32_t		 origin, seq;

	if (!p->keyed || p->peerlen == 0 || p->sock == NULL)
		return -1;
	/*
	 * The link's wire message (its own, not the peer's): the whole of it
	 * in pre, or its header and frame prefix with the frame in eth.
	 */
	if (eth == NULL) {
		if (prelen < WIRE_HDR_LEN || wire_hdr_decode(pre, prelen, &wh,
		    &why) == -1 || wh.type != WIRE_FRAME ||
		    wire_frame_decode(pre + WIRE_HDR_LEN, prelen - WIRE_HDR_LEN,
		    &wf, &why) == -1)
			return -1;
		eth = wf.eth;
		len = wf.len;
		prelen = WIRE_HDR_LEN + WIRE_FRAME_PREFIX;
	} else if (prelen != WIRE_HDR_LEN + WIRE_FRAME_PREFIX ||
	    wire_hdr_decode(pre, prelen, &wh, &why) == -1 ||
	    wh.type != WIRE_FRAME)
		return -1;
	if (p->mode == UDP_MODE_UDP && p->transport != STMT_TRANSPORT_UDP &&
	    p->cbs.resend != NULL)
		udp_recent_add(&p->recent, now, pre, prelen, eth, len);
	/* Said again in the datagrams' short form. */
	rbuf_init(&b, pre + WIRE_HDR_LEN, WIRE_FRAME_PREFIX);
	if (rbuf_get_u32(&b, &origin) == -1 || rbuf_get_u32(&b, &seq) == -1 ||
	    rbuf_get_ptr(&b, WIRE_VNET_HDR_LEN, &vh) == -1)
		return -1;
	hl = dgram_frame_encode_hdr(mh, wh.hops, origin, seq, vh);
	total = hl + len;
	if (total + DGRAM_OVERHEAD <= mtu) {
		room = total + DGRAM_OVERHEAD;
		if ((d = udp_tx_slot(p, room)) == NULL)
			return -1;
		k = udp_range(parts, 0, mh, hl, eth, 0, total);
		sealed = dgram_seal_parts(&p->dg, now, DGRAM_DATA, d, parts, k);
		udp_tx_done(p->u, sealed, room);
		return sealed == 0 ? -1 : 0;
	}
	piece = mtu - DGRAM_OVERHEAD - DFRAG_HDR_LEN;
	id = dfrag_id(&p->frag);
	for (off = 0; off < total; off += n) {
		n = total - off < piece ? total - off : piece;
		room = DGRAM_OVERHEAD + DFRAG_HDR_LEN + n;
		if ((d = udp_tx_slot(p, room)) == NULL)
			return -1;
		dfrag_hdr_encode(fh, id, (uint32_t)off, (uint32_t)total);
		parts[0].p = fh;
		parts[0].len = sizeof(fh);
		k = udp_range(parts, 1, mh, hl, eth, off, n);
		sealed = dgram_seal_parts(&p->dg, now, DGRAM_FRAG, d, parts, k);
		udp_tx_done(p->u, sealed, room);
		if (sealed == 0)
			return -1;
	}
	return 0;
}

/* Seals payload [DGRAM_HDR_LEN, + len) of a slot of room bytes in place. */
static int
udp_seal(struct udp_path *p, uint64_t now, uint8_t type, uint8_t *d,
    size_t len, size_t room)
{
	size_t	 n = dgram_seal(&p->dg, now, type, d, len);

	udp_tx_done(p->u, n, room);
	return n == 0 ? -1 : 0;
}

/*
 * What the path lost, as a reply tells the peer: gaps in the counters, less
 * what this daemon's own sockets dropped meanwhile (a daemon too busy to
 * read is no reason to cut super-frames).
 */
static uint64_t
udp_path_lost(const struct udp_path *p)
{
	uint64_t	 own = p->u->rx_overflow - p->overflow0;

	return p->dg.st.lost > own ? p->dg.st.lost - own : 0;
}

/* A probe of size bytes in all (small: a liveness probe), or its reply. */
static void
udp_send_probe(struct udp_path *p, uint64_t now, uint8_t type, uint32_t id,
    uint32_t size, uint64_t stamp, uint32_t epoch)
{
	size_t		 len = size > DGRAM_OVERHEAD + UDP_PROBE_LEN ?
			    size - DGRAM_OVERHEAD : UDP_PROBE_LEN;
	size_t		 room = len + DGRAM_OVERHEAD;
	struct dgram_probe pr = { id, size, stamp, epoch,
			    (uint32_t)udp_path_lost(p) };
	uint8_t		*d;

	if (p->sock == NULL || p->peerlen == 0 ||
	    (d = udp_tx_slot(p, room)) == NULL)
		return;
	memset(d + DGRAM_HDR_LEN, 0, len);
	dgram_probe_encode(d + DGRAM_HDR_LEN, &pr);
	(void)udp_seal(p, now, type, d, len, room);
	if (type == DGRAM_PROBE)
		p->st.probes++;
}

void
udp_path_doubt(struct udp_path *p)
{
	uint64_t	 now = p->u->now_ms();

	if (p->state != UDP_UP || p->doubted > p->last_reply)
		return;
	p->doubted = now;
	p->st.doubted++;
	/* A probe now: its reply ends the doubt. */
	p->next_probe = now;
	udp_path_tick(p, now);
}

void
udp_path_idle(struct udp_path *p, int idle)
{
	uint64_t	 now = p->u->now_ms();

	if (idle == p->idle)
		return;
	p->idle = idle;
	if (idle || p->state != UDP_UP)
		return;
	/*
	 * Frames again: the path was last heard up to an idle probe
	 * interval ago.  They go both ways until a probe sent now is
	 * answered, and the path is judged from now, not from that reply.
	 */
	p->woke = now;
	if (p->doubted <= p->last_reply)
		p->doubted = now;
	p->next_probe = now;
	udp_path_tick(p, now);
}

int
udp_path_send_live(struct udp_path *p, const struct wire_probe *pr)
{
	uint8_t	 w[WIRE_HDR_LEN + WIRE_PROBE_LEN], *d;
	size_t	 room = DGRAM_OVERHEAD + WIRE_PROBE_LEN;

	if (!p->keyed || p->sock == NULL || p->peerlen == 0 ||
	    (d = udp_tx_slot(p, room)) == NULL)
		return -1;
	/* The PROBE message's body, without its header. */
	wire_probe_encode(w, pr);
	memcpy(d + DGRAM_HDR_LEN, w + WIRE_HDR_LEN, WIRE_PROBE_LEN);
	if (udp_seal(p, p->u->now_ms(), DGRAM_LIVE, d, WIRE_PROBE_LEN,
	    room) == -1)
		return -1;
	p->st.live_out++;
	return 0;
}

/* The path's state, and what it means for the frames. */

/* Between two probes of ours: slower on an idle path (udp_path_idle). */
static uint64_t
udp_every(const struct udp_path *p)
{
	return p->idle ? UDP_IDLE_PROBES * p->u->probe_ms : p->u->probe_ms;
}

/* Since when the path counts as heard: its last reply, or its waking. */
static uint64_t
udp_heard(const struct udp_path *p)
{
	return p->last_reply > p->woke ? p->last_reply : p->woke;
}

static uint64_t
udp_suspect_ms(const struct udp_path *p)
{
	return udp_every(p) + udp_every(p) / 4 + 2 * p->srtt;
}

static uint64_t
udp_dead_ms(const struct udp_path *p)
{
	return 3 * udp_every(p) + 2 * p->srtt;
}

static enum udp_mode
udp_mode_at(const struct udp_path *p, uint64_t now)
{
	if (!p->keyed || p->peerlen == 0 || p->sock == NULL)
		return UDP_MODE_TCP;
	if (p->transport == STMT_TRANSPORT_UDP)
		return UDP_MODE_UDP;
	if (p->state != UDP_UP)
		return UDP_MODE_TCP;
	return now - udp_heard(p) > udp_suspect_ms(p) ||
	    p->doubted > p->last_reply ? UDP_MODE_BOTH : UDP_MODE_UDP;
}

enum udp_mode
udp_path_mode(const struct udp_path *p)
{
	return udp_mode_at(p, p->u->now_ms());
}

static void
udp_mode_check(struct udp_path *p, uint64_t now)
{
	enum udp_mode	 m = udp_mode_at(p, now);

	if (m == p->mode)
		return;
	log_info("link %s: frames go by %s", p->name, udp_mode_name(m));
	if (p->mode == UDP_MODE_UDP && p->cbs.resend != NULL)
		udp_recent_resend(p);
	p->mode = m;
	if (p->cbs.changed != NULL)
		p->cbs.changed(p->arg);
}

static void
udp_set_state(struct udp_path *p, enum udp_state s, uint64_t now,
    const char *why)
{
	if (s == p->state)
		return;
	log_info("link %s: datagram path %s -> %s%s%s", p->name,
	    udp_state_name(p->state), udp_state_name(s), why ? ": " : "",
	    why ? why : "");
	p->state = s;
	p->since = now;
	if (s == UDP_FALLBACK) {
		p->st.fallbacks++;
		p->backoff = p->u->probe_ms;
	}
	if (s == UDP_UP) {
		p->backoff = p->u->probe_ms;
		pmtu_init(&p->pmtu, now);
		p->pmtu.timeout_ms = p->u->probe_ms;
		pmtu_set_max(&p->pmtu, udp_route_max(&p->peer, p->peerlen));
	}
	udp_mode_check(p, now);
}

static void
udp_path_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct udp_path	*p = arg;

	udp_path_tick(p, p->u->now_ms());
}

static void
udp_arm(struct udp_path *p, uint64_t now, uint64_t at)
{
	struct timeval	 tv;
	uint64_t	 ms = at > now ? at - now : 0;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(p->ev, &tv);
}

static void
udp_path_tick(struct udp_path *p, uint64_t now)
{
	uint64_t	 at;
	uint32_t	 size;

	if (!p->keyed)
		return;
	if (p->peerlen != 0 && now >= p->next_probe) {
		udp_send_probe(p, now, DGRAM_PROBE, ++p->probe_id, 0, now, 0);
		if (p->state == UDP_FALLBACK) {
			p->next_probe = now + p->backoff;
			p->backoff = p->backoff * 2 > UDP_BACKOFF_MAX ?
			    UDP_BACKOFF_MAX : p->backoff * 2;
		} else if (p->state == UDP_PROBING ||
		    p->doubted > p->last_reply ||
		    now - udp_heard(p) >= udp_every(p))
			/*
			 * The first may beat the offer; or the path is in
			 * doubt (waking, the peer's word, a reply overdue) and
			 * frames go both ways until one is answered, and a
			 * flood that fills the peer's socket loses probes too:
			 * soon again, not a whole interval later.
			 */
			p->next_probe = now + p->u->probe_ms / 8 + 1;
		else
			p->next_probe = now + udp_every(p);
	}
	if (p->state == UDP_UP && (size = pmtu_probe(&p->pmtu, now)) != 0)
		udp_send_probe(p, now, DGRAM_PROBE, ++p->probe_id, size, now,
		    0);
	if (p->state == UDP_UP && now - udp_heard(p) > udp_dead_ms(p))
		udp_set_state(p, UDP_FALLBACK, now, "probes unanswered");
	else if (p->state == UDP_PROBING && now - p->since > udp_dead_ms(p))
		udp_set_state(p, UDP_FALLBACK, now, "no answer");
	udp_mode_check(p, now);
	at = p->next_probe;
	if (p->state == UDP_UP) {
		if (pmtu_wake(&p->pmtu) < at)
			at = pmtu_wake(&p->pmtu);
		if (udp_heard(p) + udp_suspect_ms(p) + 1 > now &&
		    udp_heard(p) + udp_suspect_ms(p) + 1 < at)
			at = udp_heard(p) + udp_suspect_ms(p) + 1;
		if (udp_heard(p) + udp_dead_ms(p) + 1 < at)
			at = udp_heard(p) + udp_dead_ms(p) + 1;
	} else if (p->state == UDP_PROBING &&
	    p->since + udp_dead_ms(p) + 1 < at)
		at = p->since + udp_dead_ms(p) + 1;
	if (p->peerlen == 0 && p->state != UDP_PROBING)
		return;		/* the peer's first datagram wakes us */
	udp_arm(p, now, at);
}

/* Receiving. */

static int
udp_addr_eq(const struct sockaddr_storage *a, socklen_t alen,
    const struct sockaddr_storage *b, socklen_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

static const char *
udp_addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char	 host[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else
		snprintf(buf, len, "-");
	return buf;
}

/*
 * The largest datagram the route to the peer takes here (the device's MTU,
 * or what ICMP taught the kernel): the MTU search looks no higher.
 */
static uint32_t
udp_route_max(const struct sockaddr_storage *ss, socklen_t len)
{
	int		 fd, mtu = 0;
	socklen_t	 ml = sizeof(mtu);
	uint32_t	 hdr = ss->ss_family == AF_INET ? 28 : 48;

	if ((fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return PMTU_CEIL;
	if (connect(fd, (const struct sockaddr *)ss, len) == -1 ||
	    getsockopt(fd, ss->ss_family == AF_INET ? IPPROTO_IP :
	    IPPROTO_IPV6, ss->ss_family == AF_INET ? IP_MTU : IPV6_MTU, &mtu,
	    &ml) == -1 || mtu <= (int)hdr)
		mtu = PMTU_CEIL + (int)hdr;
	close(fd);
	return (uint32_t)mtu - hdr > PMTU_CEIL ? PMTU_CEIL :
	    (uint32_t)mtu - hdr;
}

/*
 * A reply says how many datagrams the peer counted lost: more than our
 * probes that went unanswered since the last reply (the path MTU search's
 * are meant to be lost) makes the path lossy for a while.
 */
static void
udp_loss_check(struct udp_path *p, const struct dgram_probe *pr, uint64_t now)
{
	uint64_t	 unanswered = p->st.probes > p->st.replies ?
			    p->st.probes - p->st.replies : 0;
	uint32_t	 lost = pr->lost - p->peer_lost;
	uint64_t	 probes = unanswered > p->unanswered ?
			    unanswered - p->unanswered : 0;

	if (lost > probes) {
		if (now >= p->lossy_until)
			log_info("link %s: the peer lost %llu datagrams: TCP "
			    "super-frames go cut", p->name,
			    (unsigned long long)(lost - probes));
		p->lossy_until = now + UDP_LOSSY_MS;
	}
	p->peer_lost = pr->lost;
	p->unanswered = unanswered;
}

int
udp_path_whole(const struct udp_path *p)
{
	return p->u->now_ms() >= p->lossy_until;
}

/* A frame, coalesced or as it came, goes up to the link. */
static void
udp_gro_out(void *arg, const struct gro_frame *gf)
{
	static const uint8_t	 plain[WIRE_VNET_HDR_LEN];
	struct udp_path		*p = arg;
	struct wire_frame	 f;

	f.origin = gf->origin;
	f.seq = gf->seq;
	f.vh = gf->vh != NULL ? gf->vh : plain;
	f.eth = gf->eth;
	f.len = gf->len;
	p->cbs.frame(p->arg, gf->hops, &f);
}

/* The end of a read: the segments held go up. */
static void
udp_gro_flush(struct udp *u)
{
	struct udp_path	*p;

	while ((p = TAILQ_FIRST(&u->gro_pending)) != NULL) {
		TAILQ_REMOVE(&u->gro_pending, p, gro_entry);
		p->gro_pending = 0;
		gro_flush(p->gro, udp_gro_out, p);
	}
}

/* A whole frame message (dgram.h) arrived by datagrams. */
static void
udp_message(struct udp_path *p, const uint8_t *m, size_t n)
{
	static const uint8_t	 plain[WIRE_VNET_HDR_LEN];
	struct dgram_frame	 df;
	struct wire_frame	 f;
	struct gro_frame	 gf;

	if (dgram_frame_decode(m, n, &df) == -1) {
		p->st.malformed++;
		return;
	}
	if (p->gro == NULL) {
		f.origin = df.origin;
		f.seq = df.seq;
		f.vh = df.vh != NULL ? df.vh : plain;
		f.eth = df.eth;
		f.len = df.len;
		p->cbs.frame(p->arg, df.hops, &f);
		return;
	}
	gf.vh = df.vh;
	gf.eth = df.eth;
	gf.len = df.len;
	gf.hops = df.hops;
	gf.origin = df.origin;
	gf.seq = df.seq;
	gro_input(p->gro, &gf, udp_gro_out, p);
	if (gro_holding(p->gro) && !p->gro_pending) {
		p->gro_pending = 1;
		TAILQ_INSERT_TAIL(&p->u->gro_pending, p, gro_entry);
	}
}

static void
udp_input(struct udp *u, struct udp_sock *s, uint8_t *buf, size_t n,
    const struct sockaddr_storage *from, socklen_t fromlen, uint64_t now)
{
	struct udp_path	*p;
	struct dgram_rx	 rx;
	struct dgram_probe pr;
	struct wire_probe lp;
	const uint8_t	*msg;
	const char	*why;
	size_t		 mlen;
	char		 a[INET6_ADDRSTRLEN + 8], o[INET6_ADDRSTRLEN + 8];

	if ((p = udp_lookup(u, dgram_receiver(buf, n))) == NULL ||
	    !p->keyed) {
		u->unknown++;
		return;
	}
	/* Authentication first: nothing else happens for a forgery. */
	if (dgram_open(&p->dg, now, buf, n, &rx) == -1)
		return;
	if (!udp_addr_eq(&p->peer, p->peerlen, from, fromlen) ||
	    p->sock != s) {
		if (p->peerlen != 0) {
			p->st.moved++;
			log_info("link %s: the peer's datagrams come from %s, "
			    "not %s: following", p->name,
			    udp_addr_text(from, a, sizeof(a)),
			    udp_addr_text(&p->peer, o, sizeof(o)));
		}
		memcpy(&p->peer, from, fromlen);
		p->peerlen = fromlen;
		p->sock = s;
		if (p->cbs.endpoint != NULL)
			p->cbs.endpoint(p->arg, conn_addr_text(
			    (const struct sockaddr *)from, a, sizeof(a)));
		if (p->state != UDP_UP)
			p->next_probe = now;
		udp_path_tick(p, now);
	}
	switch (rx.type) {
	case DGRAM_DATA:
		udp_message(p, rx.payload, rx.len);
		break;
	case DGRAM_FRAG:
		switch (dfrag_input(&p->frag, now, rx.payload, rx.len, &msg,
		    &mlen)) {
		case 1:
			udp_message(p, msg, mlen);
			break;
		case -1:
			p->st.malformed++;
			break;
		}
		break;
	case DGRAM_PROBE:
		if (dgram_probe_decode(rx.payload, rx.len, &pr) == -1) {
			p->st.malformed++;
			break;
		}
		/* The answer: smaller than the probe, never larger. */
		udp_send_probe(p, now, DGRAM_REPLY, pr.id, (uint32_t)n,
		    pr.stamp, rx.epoch);
		break;
	case DGRAM_LIVE:
		if (wire_probe_decode(rx.payload, rx.len, &lp, &why) == -1) {
			p->st.malformed++;
			break;
		}
		p->st.live_in++;
		if (p->cbs.live != NULL)
			p->cbs.live(p->arg, &lp);
		break;
	case DGRAM_REPLY:
		if (dgram_probe_decode(rx.payload, rx.len, &pr) == -1) {
			p->st.malformed++;
			break;
		}
		p->st.replies++;
		p->last_reply = now;
		dgram_tx_confirm(&p->dg, pr.epoch);
		udp_loss_check(p, &pr, now);
		if (pr.stamp <= now && pr.stamp > p->ok_until)
			p->ok_until = pr.stamp;
		if (pr.stamp <= now) {
			uint64_t rtt = now - pr.stamp;

			p->srtt = p->srtt == 0 ? rtt : (7 * p->srtt + rtt) / 8;
		}
		if (p->state != UDP_UP)
			udp_set_state(p, UDP_UP, now, "a probe answered");
		if (pr.size > DGRAM_OVERHEAD + UDP_PROBE_LEN)
			pmtu_ack(&p->pmtu, pr.size, now);
		udp_mode_check(p, now);
		udp_path_tick(p, now);
		break;
	}
}

/* The socket's count of datagrams it dropped for want of room. */
static void
udp_overflow(struct udp_sock *s, const unsigned char *data)
{
	uint32_t	 n;

	memcpy(&n, data, sizeof(n));
	s->u->rx_overflow += (uint32_t)(n - s->ovfl);
	s->ovfl = n;
}

static void
udp_sock_readcb(evutil_socket_t fd, short ev, void *arg)
{
	struct udp_sock		*s = arg;
	struct udp		*u = s->u;
	struct mmsghdr		 mm[UDP_RX_BATCH];
	struct iovec		 iov[UDP_RX_BATCH];
	struct sockaddr_storage	 from[UDP_RX_BATCH];
	char			 cbuf[UDP_RX_BATCH][CMSG_SPACE(sizeof(int)) +
				    CMSG_SPACE(sizeof(uint32_t))];
	struct cmsghdr		*cm;
	uint8_t			*d;
	uint64_t		 now;
	size_t			 len, seg, off, one;
	int			 n, i, round, gro;

	if (u->rxbuf == NULL &&
	    (u->rxbuf = malloc((size_t)UDP_RX_BATCH * UDP_RX_SLOT)) == NULL)
		return;
	for (round = 0; round < 8; round++) {
		memset(mm, 0, sizeof(mm));
		for (i = 0; i < UDP_RX_BATCH; i++) {
			iov[i].iov_base = u->rxbuf + (size_t)i * UDP_RX_SLOT;
			iov[i].iov_len = UDP_RX_SLOT;
			mm[i].msg_hdr.msg_name = &from[i];
			mm[i].msg_hdr.msg_namelen = sizeof(from[i]);
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			mm[i].msg_hdr.msg_control = cbuf[i];
			mm[i].msg_hdr.msg_controllen = sizeof(cbuf[i]);
		}
		if ((n = recvmmsg(fd, mm, UDP_RX_BATCH, MSG_DONTWAIT,
		    NULL)) <= 0)
			break;
		now = u->now_ms();
		for (i = 0; i < n; i++) {
			d = iov[i].iov_base;
			len = mm[i].msg_len;
			gro = 0;
			for (cm = CMSG_FIRSTHDR(&mm[i].msg_hdr); cm != NULL;
			    cm = CMSG_NXTHDR(&mm[i].msg_hdr, cm))
				if (cm->cmsg_level == SOL_UDP &&
				    cm->cmsg_type == UDP_GRO &&
				    cm->cmsg_len >= CMSG_LEN(sizeof(int)))
					memcpy(&gro, CMSG_DATA(cm), sizeof(gro));
				else if (cm->cmsg_level == SOL_SOCKET &&
				    cm->cmsg_type == SO_RXQ_OVFL &&
				    cm->cmsg_len >= CMSG_LEN(sizeof(uint32_t)))
					udp_overflow(s, CMSG_DATA(cm));
			seg = gro > 0 ? (size_t)gro : len;
			/* Each datagram of a coalesced run, in turn. */
			for (off = 0; off < len; off += one) {
				one = len - off < seg ? len - off : seg;
				udp_input(u, s, d + off, one, &from[i],
				    mm[i].msg_hdr.msg_namelen, now);
			}
		}
		udp_gro_flush(u);
		if (n < UDP_RX_BATCH)
			break;
	}
	udp_flush(u);
}

/* Paths. */

static int
udp_path_secret(void *arg, uint32_t epoch, int tx, uint8_t out[DGRAM_SECRET_LEN])
{
	struct udp_path	*p = arg;
	uint8_t		 ctx[13];
	int		 outgoing = p->c->outgoing;

	if (p->dg.aead == DGRAM_PLAIN && p->theirs.aead == DGRAM_PLAIN) {
		memset(out, 0, DGRAM_SECRET_LEN);
		memcpy(out, tx ? p->theirs.secret : p->secret,
		    WIRE_DGRAM_SECRET);
		return 0;
	}
	/* 0: from the side that dialled to the other, 1: back. */
	ctx[0] = tx == outgoing ? 0 : 1;
	put_u32(ctx + 1, epoch);
	put_u32(ctx + 5, outgoing ? p->local : p->theirs.receiver);
	put_u32(ctx + 9, outgoing ? p->theirs.receiver : p->local);
	return p->c->io->exporter(p->c, UDP_LABEL, ctx, sizeof(ctx), out,
	    DGRAM_SECRET_LEN);
}

static int
udp_local_port(struct udp *u, struct conn *c, int *family)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	struct udp_sock		*s;
	uint16_t		 port;

	if (getsockname(conn_fd(c), (struct sockaddr *)&ss, &len) == -1)
		return 0;
	*family = ss.ss_family;
	port = ntohs(ss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	TAILQ_FOREACH(s, &u->socks, entry)
		if (!s->own && s->family == ss.ss_family && s->port == port)
			return port;
	return 0;
}

/*
 * A punched pair's socket: the listener's on the connection's own port,
 * the one whose binding the peer knows.  NULL: none.
 */
static struct udp_sock *
udp_sock_punched(struct udp *u, struct conn *c)
{
	struct udp_sock	*s;
	uint16_t	 port;
	int		 family;

	if ((port = (uint16_t)udp_local_port(u, c, &family)) == 0)
		return NULL;
	TAILQ_FOREACH(s, &u->socks, entry)
		if (!s->own && s->family == family && s->port == port)
			return s;
	return NULL;
}

struct udp_path *
udp_path_new(struct udp *u, struct conn *c, enum stmt_transport t,
    const struct udp_path_cbs *cbs, void *arg)
{
	struct udp_path		*p;
	struct udp_path		**b;
	struct wire_dgram	 d;
	struct udp_sock		*s;
	int			 family = AF_INET, aead;

	if (!(c->hello.caps & WIRE_CAP_DGRAM) ||
	    (aead = c->io->aead(c)) < 0 || (p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->u = u;
	p->c = c;
	p->cbs = *cbs;
	p->arg = arg;
	p->transport = t;
	p->since = u->now_ms();
	snprintf(p->name, sizeof(p->name), "%s",
	    c->outgoing ? c->name : c->hello.node);
	dfrag_init(&p->frag);
	pmtu_init(&p->pmtu, p->since);
	/* Segments coalesced again where this daemon's devices take them. */
	if ((c->caps & WIRE_CAP_GSO) &&
	    (p->gro = calloc(1, sizeof(*p->gro))) != NULL &&
	    gro_init(p->gro) == -1) {
		free(p->gro);
		p->gro = NULL;
	}
	if ((p->ev = evtimer_new(u->base, udp_path_timer_cb, p)) == NULL) {
		if (p->gro != NULL) {
			gro_free(p->gro);
			free(p->gro);
		}
		free(p);
		return NULL;
	}
	do
		p->local = arc4random();
	while (p->local == 0 || udp_lookup(u, p->local) != NULL);
	arc4random_buf(p->secret, sizeof(p->secret));
	b = udp_bucket(u, p->local);
	p->inext = *b;
	*b = p;

	memset(&d, 0, sizeof(d));
	d.kind = 1;
	d.aead = (uint8_t)aead;
	d.receiver = p->local;
	if (aead == DGRAM_PLAIN)
		memcpy(d.secret, p->secret, sizeof(d.secret));
	if (c->outgoing) {
		(void)udp_local_port(u, c, &family);
		if ((s = udp_sock_for(u, family)) != NULL)
			d.port = s->port;
	} else
		d.port = (uint16_t)udp_local_port(u, c, &family);
	if (conn_send_dgram(c, &d) == -1) {
		udp_path_free(p, 0);
		return NULL;
	}
	(void)conn_push(c);
	log_debug("link %s: datagram offer sent (index %08x, port %u)",
	    p->name, p->local, d.port);
	return p;
}

void
udp_path_free(struct udp_path *p, int withdraw)
{
	struct udp_path		**b;
	struct wire_dgram	 d;
	size_t			 i;

	if (p == NULL)
		return;
	for (i = 0; i < p->u->ntx; i++)
		if (p->u->tx[i].p == p)
			p->u->tx[i].p = NULL;
	if (withdraw) {
		memset(&d, 0, sizeof(d));
		(void)conn_send_dgram(p->c, &d);
	}
	for (b = udp_bucket(p->u, p->local); *b != NULL; b = &(*b)->inext)
		if (*b == p) {
			*b = p->inext;
			break;
		}
	if (p->gro_pending)
		TAILQ_REMOVE(&p->u->gro_pending, p, gro_entry);
	if (p->gro != NULL) {
		gro_free(p->gro);
		free(p->gro);
	}
	event_free(p->ev);
	if (p->keyed)
		dgram_free(&p->dg);
	dfrag_free(&p->frag);
	free(p->recent.buf);
	free(p);
}

void
udp_path_set_transport(struct udp_path *p, enum stmt_transport t)
{
	p->transport = t;
	udp_mode_check(p, p->u->now_ms());
}

int
udp_path_offer(struct udp_path *p, const struct wire_dgram *d,
    const char **why)
{
	struct dgram_keysrc	 src = { udp_path_secret, p };
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	uint64_t		 now = p->u->now_ms();
	int			 aead = p->c->io->aead(p->c);
	char			 a[INET6_ADDRSTRLEN + 8];

	if (d->kind == 0) {
		log_info("link %s: the peer withdrew its datagram offer",
		    p->name);
		if (p->keyed)
			dgram_free(&p->dg);
		p->keyed = 0;
		p->peerlen = 0;
		evtimer_del(p->ev);
		udp_set_state(p, UDP_OFFERED, now, "withdrawn");
		udp_mode_check(p, now);
		return 0;
	}
	if (d->aead != aead) {
		*why = "datagram offer with another cipher than the session's";
		return -1;
	}
	if (p->keyed)
		dgram_free(&p->dg);
	p->keyed = 0;
	p->theirs = *d;
	if (dgram_init(&p->dg, (enum dgram_aead)aead, p->local, d->receiver,
	    &src, now) == -1) {
		log_warnx("link %s: no keys for datagrams", p->name);
		return 0;
	}
	p->dg.rekey_ms = p->u->rekey_ms;
	p->dg.rekey_packets = p->u->rekey_packets;
	p->overflow0 = p->u->rx_overflow;
	p->keyed = 1;
	p->peerlen = 0;
	p->sock = NULL;
	/*
	 * The side that dialled sends first, to the address it dialled at
	 * the port offered.  Over a punched pair both sides send at once, to
	 * the connection's far end as it is (the peer's NAT binding, which
	 * the pair was punched on) from the socket on the connection's own
	 * port: each side's first datagrams open its NAT for the other's.
	 */
	if ((p->c->outgoing || p->c->punched) && d->port != 0 &&
	    getpeername(conn_fd(p->c), (struct sockaddr *)&ss, &len) == 0 &&
	    (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) &&
	    (p->sock = p->c->punched ? udp_sock_punched(p->u, p->c) :
	    udp_sock_for(p->u, ss.ss_family)) != NULL) {
		if (p->c->punched)
			log_info("link %s: a punched pair: datagrams to the "
			    "peer's NAT binding %s from port %u, as the peer "
			    "sends to ours", p->name, conn_addr_text(
			    (const struct sockaddr *)&ss, a, sizeof(a)),
			    p->sock->port);
		else if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = htons(d->port);
		else
			((struct sockaddr_in6 *)&ss)->sin6_port =
			    htons(d->port);
		memcpy(&p->peer, &ss, len);
		p->peerlen = len;
	}
	log_info("link %s: datagram keys made (%s), receiver index %08x, "
	    "the peer's %08x", p->name, dgram_aead_name(p->dg.aead), p->local,
	    d->receiver);
	p->next_probe = now;
	p->state = UDP_OFFERED;
	udp_set_state(p, UDP_PROBING, now, NULL);
	udp_path_tick(p, now);
	return 0;
}

enum udp_state
udp_path_state(const struct udp_path *p)
{
	return p->state;
}

uint32_t
udp_path_mtu(const struct udp_path *p)
{
	return pmtu_get(&p->pmtu);
}

const char *
udp_path_endpoint(const struct udp_path *p, char *buf, size_t len)
{
	if (p->peerlen == 0)
		return "-";
	return udp_addr_text(&p->peer, buf, len);
}

const char *
udp_path_cipher(const struct udp_path *p)
{
	return p->keyed ? dgram_aead_name(p->dg.aead) : "-";
}

const struct dgram_stats *
udp_path_dgram_stats(const struct udp_path *p)
{
	static const struct dgram_stats none;

	return p->keyed ? &p->dg.st : &none;
}

const struct udp_path_stats *
udp_path_stats(const struct udp_path *p)
{
	return &p->st;
}

const struct dfrag_stats *
udp_path_frag_stats(const struct udp_path *p)
{
	return &p->frag.st;
}

const struct gro_stats *
udp_path_gro_stats(const struct udp_path *p)
{
	static const struct gro_stats none;

	return p->gro != NULL ? &p->gro->st : &none;
}
