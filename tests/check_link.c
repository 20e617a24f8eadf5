/*
 * Two daemons' link layers in one process (src/link.c, src/conn.c): each
 * side is a switch with a fake guest port and a link table, both on one
 * event base, joined by a socketpair handed to each side as an accepted
 * connection.  The hello exchange makes a link on each side named after
 * the other's node; frames a guest sends come out of the other side's
 * guest, both ways; what a peer's hello offers decides the link port's
 * features; a side that goes away takes the other's link down, which
 * stays listed with its reason for a while (and at most so many such),
 * and takes the side's next connection.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "fwd.h"
/* The link's state and counters are looked at directly: link_impl.h. */
#include "link.h"
#include "link_impl.h"
#include "sw.h"
#include "wire.h"

#define FRAMES_MAX	16
#define FRAME_LEN	120

struct side {
	const char	*node;
	uint32_t	 caps;		/* what its hello offers */
	struct sw	*sw;
	struct links	 links;
	struct port	 guest;
	int		 ups, downs;
	int		 n;		/* frames its guest was given */
	size_t		 len[FRAMES_MAX];
	uint8_t		 frame[FRAMES_MAX][FRAME_LEN];
};

static struct event_base	*base;
static struct event		*ev_tick;
static struct side		 a, b, c;

static void
guest_transmit(struct port *p, const struct sw_frame *f)
{
	struct side	*s = p->owner;

	ck_assert_int_lt(s->n, FRAMES_MAX);
	ck_assert_uint_eq(f->len, FRAME_LEN);
	ck_assert_ptr_null(f->vh);
	memcpy(s->frame[s->n], f->eth, f->len);
	s->len[s->n++] = f->len;
}

static unsigned int
guest_features(const struct port *p)
{
	return 0;
}

static const char *
guest_name(const struct port *p)
{
	return "guest";
}

static const struct port_ops guest_ops = {
	"interface", 1, guest_transmit, guest_features, guest_name
};

static void
side_hello(void *arg, struct wire_hello *h)
{
	struct side	*s = arg;

	h->version = WIRE_VERSION;
	h->caps = s->caps;
	h->keepalive = 10;
	snprintf(h->node, sizeof(h->node), "%s", s->node);
	snprintf(h->network, sizeof(h->network), "test");
}

static struct ssl_ctx_st *
side_tls(void *arg)
{
	return NULL;
}

static int
side_node(void *arg, struct link *l, const uint8_t *p, size_t n,
    const char **why)
{
	*why = "no control plane here";
	return -1;
}

static void
side_up(void *arg, struct link *l)
{
	((struct side *)arg)->ups++;
}

static void
side_down(void *arg, struct link *l)
{
	((struct side *)arg)->downs++;
}

static const char *
side_origin(void *arg, const struct link *l, char *trigger, size_t len,
    const char **reason)
{
	snprintf(trigger, len, "-");
	*reason = "-";
	return "-";
}

static const char *
side_history(void *arg, const char *name, char *buf, size_t len)
{
	buf[0] = '\0';
	return buf;
}

static void
side_make(struct side *s, const char *node, uint32_t caps)
{
	struct links_hooks hooks = {
		.hello = side_hello,
		.tls = side_tls,
		.node = side_node,
		.up = side_up,
		.down = side_down,
		.origin = side_origin,
		.history = side_history,
		.history_columns = "",
	};
	char		 err[128];

	memset(s, 0, sizeof(*s));
	s->node = node;
	s->caps = caps;
	hooks.arg = s;
	ck_assert_msg((s->sw = sw_new(clock_now_us, err, sizeof(err))) !=
	    NULL, "%s", err);
	ck_assert_msg(sw_port_add(s->sw, &s->guest, &guest_ops, s, "guest",
	    err, sizeof(err)) == 0, "%s", err);
	sw_port_up(&s->guest);
	/* Broadcasts flood and answers find their way, as with `learn yes`. */
	fwd_set_learn(sw_fwd(s->sw), 1);
	links_init(&s->links, s->sw, &hooks);
	links_start(&s->links, base, NULL);
}

static void
side_free(struct side *s)
{
	if (s->sw == NULL)
		return;
	links_free(&s->links);
	sw_port_del(s->sw, &s->guest);
	sw_free(s->sw);
	s->sw = NULL;
}

/* Keeps the loop turning, so that a turn never waits long. */
static void
tick_cb(evutil_socket_t fd, short ev, void *arg)
{
}

/* Runs the loop until cond() holds; 0 if it did not within 5 s. */
static int
run_until(int (*cond)(void))
{
	uint64_t	 deadline = clock_now_ms() + 5000;

	while (!cond()) {
		if (clock_now_ms() > deadline)
			return 0;
		event_base_loop(base, EVLOOP_ONCE);
	}
	return 1;
}

static int
link_up(struct side *s, const char *name)
{
	struct link	*l = link_find(&s->links, name);

	return l != NULL && l->state == LINK_UP;
}

static int
both_up(void)
{
	return link_up(&a, "b") && link_up(&b, "a");
}

static int
b_got_one(void)
{
	return b.n >= 1;
}

static int
a_got_one(void)
{
	return a.n >= 1;
}

static int
a_lost_b(void)
{
	return link_find(&a.links, "b") == NULL;
}

static int
a_b_down(void)
{
	struct link	*l = link_find(&a.links, "b");

	return l != NULL && l->state == LINK_IDLE;
}

static int
a_c_up(void)
{
	return link_up(&a, "c") && link_up(&c, "a");
}

static int
a_c_down(void)
{
	struct link	*l = link_find(&a.links, "c");

	return l != NULL && l->state == LINK_IDLE;
}

/* Joins x and y: each takes one end as a connection accepted. */
static void
join_sides(struct side *x, struct side *y, int (*up)(void))
{
	struct sockaddr_un	 sun;
	int			 fds[2];

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, fds), 0);
	links_accept(&x->links, fds[0], (struct sockaddr *)&sun,
	    (int)sizeof(sun), 0, 0);
	links_accept(&y->links, fds[1], (struct sockaddr *)&sun,
	    (int)sizeof(sun), 0, 0);
	ck_assert_msg(run_until(up), "the links did not come up");
}

static void
join(void)
{
	join_sides(&a, &b, both_up);
}

static void
setup(void)
{
	struct timeval	 tv = { 0, 10000 };

	/* As the daemon: a write to a side that went away is an error. */
	signal(SIGPIPE, SIG_IGN);
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(ev_tick = event_new(base, -1, EV_PERSIST,
	    tick_cb, NULL));
	event_add(ev_tick, &tv);
	side_make(&a, "a", 0);
	side_make(&b, "b", WIRE_CAP_GSO);
}

static void
teardown(void)
{
	side_free(&a);
	side_free(&b);
	side_free(&c);
	event_free(ev_tick);
	event_base_free(base);
}

static void
frame_make(uint8_t *f, const uint8_t dst[6], const uint8_t src[6],
    uint8_t fill)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88;		/* local experimental ethertype */
	f[13] = 0xb5;
	memset(f + 14, fill, FRAME_LEN - 14);
}

static void
guest_send(struct side *s, const uint8_t *f)
{
	struct sw_frame	 sf;

	memset(&sf, 0, sizeof(sf));
	sf.eth = f;
	sf.len = FRAME_LEN;
	sw_input(s->sw, &s->guest, &sf);
}

START_TEST(test_hello_makes_links)
{
	join();
	ck_assert_int_eq(a.ups, 1);
	ck_assert_int_eq(b.ups, 1);
	/* No control plane was offered: no node records either way. */
	ck_assert_ptr_null(link_node_peer(link_find(&a.links, "b")));
	ck_assert_uint_eq(a.links.conns.npending, 0);
	ck_assert_uint_eq(b.links.conns.npending, 0);
}
END_TEST

START_TEST(test_frames_both_ways)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t ma[6] = { 0x02, 0, 0, 0, 0, 0x0a };
	static const uint8_t mb[6] = { 0x02, 0, 0, 0, 0, 0x0b };
	uint8_t		 f[FRAME_LEN], g[FRAME_LEN];
	struct link	*la, *lb;

	join();
	/* a's guest broadcasts: b's guest gets it, a's not (no hairpin). */
	frame_make(f, bcast, ma, 0x5a);
	guest_send(&a, f);
	ck_assert_msg(run_until(b_got_one), "the broadcast did not arrive");
	ck_assert_int_eq(b.n, 1);
	ck_assert_int_eq(a.n, 0);
	ck_assert_mem_eq(b.frame[0], f, FRAME_LEN);
	/* b's guest answers to the address b learned behind its link. */
	frame_make(g, ma, mb, 0xa5);
	guest_send(&b, g);
	ck_assert_msg(run_until(a_got_one), "the answer did not arrive");
	ck_assert_int_eq(a.n, 1);
	ck_assert_int_eq(b.n, 1);
	ck_assert_mem_eq(a.frame[0], g, FRAME_LEN);
	la = link_find(&a.links, "b");
	lb = link_find(&b.links, "a");
	ck_assert_uint_eq(la->c.frames_out, 1);
	ck_assert_uint_eq(la->c.frames_in, 1);
	ck_assert_uint_eq(lb->c.frames_out, 1);
	ck_assert_uint_eq(lb->c.frames_in, 1);
	ck_assert_uint_eq(la->c.bytes_out, FRAME_LEN);
	ck_assert_uint_eq(lb->c.bytes_in, FRAME_LEN);
}
END_TEST

/* A link port takes offload frames whole only if its peer said it can. */
START_TEST(test_features_follow_the_peer)
{
	struct link	*la, *lb;

	join();
	la = link_find(&a.links, "b");
	lb = link_find(&b.links, "a");
	ck_assert_uint_eq(la->port.ops->features(&la->port), SW_F_OFFLOAD);
	ck_assert_uint_eq(lb->port.ops->features(&lb->port), 0);
}
END_TEST

/*
 * A peer gone takes its incoming link down, and the control plane hears;
 * the link stays, with the reason, until its time is up.
 */
START_TEST(test_peer_gone)
{
	struct link	*l;
	uint64_t	 t0;

	a.links.gone_keep_ms = 300;
	join();
	side_free(&b);
	ck_assert_msg(run_until(a_b_down), "a's link to b did not go down");
	ck_assert_int_eq(a.downs, 1);
	t0 = clock_now_ms();
	l = link_find(&a.links, "b");
	ck_assert_str_eq(l->last_error, "connection closed by peer");
	ck_assert_msg(run_until(a_lost_b), "a kept its link to b");
	ck_assert_uint_ge(clock_now_ms() - t0, 250);
	ck_assert_int_eq(a.downs, 1);
}
END_TEST

/* The peer back: its kept link takes the connection, counters and all. */
START_TEST(test_peer_back)
{
	struct link	*l;

	join();
	l = link_find(&a.links, "b");
	side_free(&b);
	ck_assert_msg(run_until(a_b_down), "a's link to b did not go down");
	side_make(&b, "b", WIRE_CAP_GSO);
	join();
	ck_assert_ptr_eq(link_find(&a.links, "b"), l);
	ck_assert_uint_eq(l->c.connects, 2);
	ck_assert_int_eq(a.ups, 2);
}
END_TEST

/* At most gone_max down incoming links: the oldest is forgotten first. */
START_TEST(test_gone_max)
{
	a.links.gone_max = 1;
	side_make(&c, "c", 0);
	join();
	join_sides(&a, &c, a_c_up);
	side_free(&b);
	ck_assert_msg(run_until(a_b_down), "a's link to b did not go down");
	side_free(&c);
	ck_assert_msg(run_until(a_c_down), "a's link to c did not go down");
	ck_assert_ptr_null(link_find(&a.links, "b"));
}
END_TEST

static void
apply(struct side *s, const char *line)
{
	struct stmt		 st;
	struct stmt_error	 perr;
	char			 err[128];

	ck_assert_int_eq(stmt_parse(line, &st, &perr), 1);
	ck_assert_msg((st.kind == STMT_LINK ? link_add(&s->links, &st, err,
	    sizeof(err)) : link_set_options(&s->links, &st, err,
	    sizeof(err))) == 0, "%s: %s", line, err);
}

/*
 * A shortcut's transport: its name's own statement, else auto if a link
 * this node dials asks for datagrams (a peer's incoming link does not
 * count), else tcp.
 */
START_TEST(test_shortcut_transport)
{
	join();
	ck_assert_int_eq(links_shortcut_transport(&b.links, "q"),
	    STMT_TRANSPORT_TCP);
	apply(&b, "set-link a transport auto");
	ck_assert_int_eq(links_shortcut_transport(&b.links, "q"),
	    STMT_TRANSPORT_TCP);
	apply(&b, "link p 127.0.0.1:1 transport auto");
	ck_assert_int_eq(links_shortcut_transport(&b.links, "q"),
	    STMT_TRANSPORT_AUTO);
	apply(&b, "set-link q rate 10mbit");
	ck_assert_int_eq(links_shortcut_transport(&b.links, "q"),
	    STMT_TRANSPORT_TCP);
	apply(&b, "set-link r transport udp");
	ck_assert_int_eq(links_shortcut_transport(&b.links, "r"),
	    STMT_TRANSPORT_UDP);
}
END_TEST

static Suite *
link_suite(void)
{
	Suite	*s = suite_create("link");
	TCase	*tc = tcase_create("pair");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_hello_makes_links);
	tcase_add_test(tc, test_frames_both_ways);
	tcase_add_test(tc, test_features_follow_the_peer);
	tcase_add_test(tc, test_peer_gone);
	tcase_add_test(tc, test_peer_back);
	tcase_add_test(tc, test_gone_max);
	tcase_add_test(tc, test_shortcut_transport);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(link_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
