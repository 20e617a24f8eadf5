/*
 * Whole daemons in one process: three struct vnetd (a, b, c), each with
 * the control plane (routing_daemon.h) and a qemu interface whose "VM" is
 * this test on the other end of its Unix socket, joined a - b - c by
 * socketpairs handed to each side as accepted connections.  Their event
 * loops take turns.  Frames a VM writes come out of the VM they are for,
 * through the relay, and out of no other; the routes are the control
 * plane's, installed in each daemon's forwarding table.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "buf.h"
#include "clock.h"
#include "daemon.h"
#include "fwd.h"
#include "link.h"
#include "log.h"
#include "routing_daemon.h"
#include "stmt.h"

#define DAEMONS		3
#define FRAME_LEN	64

struct vm {
	int		 fd;
	uint8_t		 rx[65536];
	size_t		 rxlen;
	unsigned int	 got;		/* frames with the marker */
};

static struct vnetd	 d[DAEMONS];
static struct vm	 vm[DAEMONS];
static char		 dir[64];
static const char	*names[DAEMONS] = { "a", "b", "c" };

static void
apply(struct vnetd *v, const char *line)
{
	struct stmt		 st;
	struct stmt_error	 perr;
	char			 err[256];

	ck_assert_msg(stmt_parse(line, &st, &perr) == 1, "%s: %s", line,
	    perr.msg);
	ck_assert_msg(vnetd_apply(v, &st, 0, err, sizeof(err)) == 0, "%s: %s",
	    line, err);
}

/* One turn of every daemon's loop, then what the VMs have. */
static void
turn(void)
{
	uint8_t		*p;
	uint32_t	 len;
	ssize_t		 n;
	size_t		 off;
	int		 i;

	for (i = 0; i < DAEMONS; i++)
		event_base_loop(d[i].base, EVLOOP_NONBLOCK);
	for (i = 0; i < DAEMONS; i++) {
		if (vm[i].fd == -1)
			continue;
		while ((n = read(vm[i].fd, vm[i].rx + vm[i].rxlen,
		    sizeof(vm[i].rx) - vm[i].rxlen)) > 0)
			vm[i].rxlen += (size_t)n;
		for (off = 0; vm[i].rxlen - off >= 4; off += 4 + len) {
			p = vm[i].rx + off;
			len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
			    (uint32_t)p[2] << 8 | p[3];
			if (vm[i].rxlen - off - 4 < len)
				break;
			if (len >= 20 && memcmp(p + 4 + 14, "vnet", 4) == 0)
				vm[i].got++;
		}
		memmove(vm[i].rx, vm[i].rx + off, vm[i].rxlen - off);
		vm[i].rxlen -= off;
	}
}

static int
run_until(int (*cond)(void), unsigned int ms)
{
	uint64_t	 end = clock_now_ms() + ms;

	while (clock_now_ms() < end) {
		turn();
		if (cond())
			return 1;
		poll(NULL, 0, 1);
	}
	return 0;
}

static void
mac_of(int i, uint8_t *mac)
{
	static const uint8_t base[6] = { 2, 0, 0, 0, 0xd0, 0 };

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)(i + 1);
}

/* VM i sends a frame to dst (marked so that the others can tell it). */
static void
vm_send(int i, const uint8_t *dst)
{
	uint8_t		 f[4 + FRAME_LEN];

	memset(f, 0, sizeof(f));
	put_u32(f, FRAME_LEN);
	memcpy(f + 4, dst, 6);
	mac_of(i, f + 4 + 6);
	f[4 + 12] = 0x88;
	f[4 + 13] = 0xb5;
	memcpy(f + 4 + 14, "vnet", 4);
	ck_assert_int_eq(write(vm[i].fd, f, sizeof(f)), (ssize_t)sizeof(f));
}

static int
vms_connected(void)
{
	int	 i;

	for (i = 0; i < DAEMONS; i++)
		if (vm[i].fd == -1) {
			struct sockaddr_un sun;

			memset(&sun, 0, sizeof(sun));
			sun.sun_family = AF_UNIX;
			snprintf(sun.sun_path, sizeof(sun.sun_path),
			    "%s/%s.sock", dir, names[i]);
			vm[i].fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK,
			    0);
			ck_assert_int_ge(vm[i].fd, 0);
			if (connect(vm[i].fd, (struct sockaddr *)&sun,
			    sizeof(sun)) == -1) {
				close(vm[i].fd);
				vm[i].fd = -1;
				return 0;
			}
		}
	return 1;
}

/* Joins daemons x and y: each takes one end as a connection accepted. */
static void
join(int x, int y)
{
	struct sockaddr_un	 sun;
	int			 fds[2];

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, fds), 0);
	links_accept(&d[x].links, fds[0], (struct sockaddr *)&sun,
	    (int)sizeof(sun), 0, 0);
	links_accept(&d[y].links, fds[1], (struct sockaddr *)&sun,
	    (int)sizeof(sun), 0, 0);
}

static int
links_up(void)
{
	struct link	*l;

	return (l = link_find(&d[0].links, "b")) != NULL &&
	    link_is_up(l) &&
	    (l = link_find(&d[2].links, "b")) != NULL &&
	    link_is_up(l) &&
	    link_find(&d[1].links, "a") != NULL &&
	    link_find(&d[1].links, "c") != NULL;
}

/* Every daemon has an automatic route for the MACs of the others' VMs. */
static int
routes_in(void)
{
	uint8_t		 mac[6];
	int		 i, k;

	for (i = 0; i < DAEMONS; i++)
		for (k = 0; k < DAEMONS; k++) {
			mac_of(k, mac);
			if (fwd_auto_get(d[i].fwd, mac) == NULL)
				return 0;
		}
	return 1;
}

/* Nothing to wait for: the loops run on (for copies that should not come). */
static int
never(void)
{
	return 0;
}

static int
all_got_two(void)
{
	int	 i;

	for (i = 0; i < DAEMONS; i++)
		if (vm[i].got < DAEMONS - 1)
			return 0;
	return 1;
}

static int
c_got_one(void)
{
	return vm[2].got >= 1;
}

static void
setup(void)
{
	char	 line[256];
	int	 i;

	snprintf(dir, sizeof(dir), "/tmp/check_daemon.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (i = 0; i < DAEMONS; i++) {
		vm[i].fd = -1;
		ck_assert_int_eq(vnetd_init(&d[i]), 0);
		ck_assert_int_eq(routing_daemon_add(&d[i]), 0);
		snprintf(line, sizeof(line), "node %s", names[i]);
		apply(&d[i], line);
		apply(&d[i], "routing auto");
		snprintf(line, sizeof(line), "interface guest qemu %s/%s.sock",
		    dir, names[i]);
		apply(&d[i], line);
		ck_assert_int_eq(vnetd_start(&d[i]), 0);
	}
}

static void
teardown(void)
{
	char	 path[128];
	int	 i;

	for (i = 0; i < DAEMONS; i++) {
		if (vm[i].fd != -1)
			close(vm[i].fd);
		vnetd_free(&d[i]);
		snprintf(path, sizeof(path), "%s/%s.sock", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

START_TEST(frames_through_a_relay)
{
	uint8_t		 mac[6];
	struct fwd_port	*p;
	int		 i;

	ck_assert_msg(run_until(vms_connected, 5000), "the VMs cannot connect");
	join(0, 1);
	join(1, 2);
	ck_assert_msg(run_until(links_up, 5000), "the links did not come up");
	/* Each VM speaks once (a broadcast): the daemons learn of it. */
	for (i = 0; i < DAEMONS; i++) {
		memset(mac, 0xff, 6);
		vm_send(i, mac);
	}
	ck_assert_msg(run_until(routes_in, 5000), "no automatic routes");
	/* a's route to c's VM goes by the link to b; b's by the link to c. */
	mac_of(2, mac);
	p = fwd_auto_get(d[0].fwd, mac);
	ck_assert_int_eq(fwd_port_kind(p), FWD_LINK);
	ck_assert_str_eq(fwd_port_name(p), "b");
	ck_assert_str_eq(fwd_port_name(fwd_auto_get(d[1].fwd, mac)), "c");
	ck_assert_int_eq(fwd_port_kind(fwd_auto_get(d[2].fwd, mac)),
	    FWD_IFACE);
	/*
	 * Along the broadcast tree (the first went before it was known), a
	 * broadcast reaches every other VM exactly once.
	 */
	for (i = 0; i < DAEMONS; i++)
		vm[i].got = 0;
	for (i = 0; i < DAEMONS; i++) {
		memset(mac, 0xff, 6);
		vm_send(i, mac);
	}
	run_until(all_got_two, 2000);
	run_until(never, 200);
	for (i = 0; i < DAEMONS; i++)
		ck_assert_uint_eq(vm[i].got, DAEMONS - 1);
	mac_of(2, mac);
	/* A unicast from a's VM to c's: there, and only there. */
	for (i = 0; i < DAEMONS; i++)
		vm[i].got = 0;
	vm_send(0, mac);
	ck_assert_msg(run_until(c_got_one, 5000), "c's VM got nothing");
	run_until(never, 200);
	ck_assert_uint_eq(vm[2].got, 1);
	ck_assert_uint_eq(vm[1].got, 0);
	ck_assert_uint_eq(vm[0].got, 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("daemon");
	TCase	*tc = tcase_create("daemon");
	SRunner	*sr;
	int	 failed;

	log_init("check_daemon", 1, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, frames_through_a_relay);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
