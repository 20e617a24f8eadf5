/*
 * bench/hop: the least a user-space TAP-over-TCP hop can do, as a reference
 * for bench/compare's ping figures.  It is not vnet: no routing, no queue,
 * no offload, no framing checks beyond the length; one frame per system call.
 *
 *   hop TAPNAME listen ADDR PORT	accept one connection on ADDR:PORT
 *   hop TAPNAME connect ADDR PORT	connect to ADDR:PORT (retried for 10 s)
 *
 * Two threads, each blocked in read(2) until a frame comes: one reads a
 * frame from the TAP device and writes it, after a 2-byte length, to the TCP
 * connection (TCP_NODELAY); the other reads what the connection has and
 * writes every complete frame to the TAP device.  There is no event loop
 * and nothing to wake but the thread that has work, so the round trip it
 * adds to a ping is what any user-space hop pays on this machine: two
 * daemons' wake-ups and the system calls that carry the frame.
 *
 * Build with `make bench/hop`; bench/compare runs it (system "hop").
 * It exits, with a message, when the connection or the TAP device fails.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HOP_FRAME_MAX	65535
#define HOP_RXBUF	(4 * (HOP_FRAME_MAX + 2))

struct hop {
	int	 tap;
	int	 sock;
};

static void
hop_die(const char *what)
{
	fprintf(stderr, "hop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
hop_fail(const char *what)
{
	fprintf(stderr, "hop: %s\n", what);
	exit(1);
}

static int
hop_tap_open(const char *name)
{
	struct ifreq	 ifr;
	int		 fd;

	if ((fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC)) == -1)
		hop_die("/dev/net/tun");
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (strlen(name) >= sizeof(ifr.ifr_name))
		hop_fail("TAP device name too long");
	memcpy(ifr.ifr_name, name, strlen(name));
	if (ioctl(fd, TUNSETIFF, &ifr) == -1)
		hop_die(name);
	return fd;
}

static int
hop_connect(const char *mode, const char *addr, const char *port)
{
	struct sockaddr_in	 sin;
	struct timespec		 pause = { 0, 50 * 1000 * 1000 };
	char			*end;
	unsigned long		 p;
	int			 s, ls, one = 1, i;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		hop_fail("ADDR must be an IPv4 address");
	p = strtoul(port, &end, 10);
	if (*port == '\0' || *end != '\0' || p == 0 || p > 65535)
		hop_fail("PORT must be a number from 1 to 65535");
	sin.sin_port = htons((uint16_t)p);

	if (strcmp(mode, "listen") == 0) {
		if ((ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			hop_die("socket");
		if (setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one,
		    sizeof(one)) == -1)
			hop_die("SO_REUSEADDR");
		if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			hop_die("bind");
		if (listen(ls, 1) == -1)
			hop_die("listen");
		if ((s = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) == -1)
			hop_die("accept");
		close(ls);
	} else if (strcmp(mode, "connect") == 0) {
		for (i = 0;; i++) {
			if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC,
			    0)) == -1)
				hop_die("socket");
			if (connect(s, (struct sockaddr *)&sin,
			    sizeof(sin)) == 0)
				break;
			if (i == 200)
				hop_die("connect");
			close(s);
			nanosleep(&pause, NULL);
		}
	} else
		hop_fail("the mode is listen or connect");
	if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		hop_die("TCP_NODELAY");
	return s;
}

/* All of buf to fd, however many writes it takes. */
static void
hop_write_all(int fd, const uint8_t *buf, size_t len, const char *what)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			hop_die(what);
		}
		buf += n;
		len -= (size_t)n;
	}
}

/* TAP -> connection: one frame per read, one write per frame. */
static void *
hop_tap_to_sock(void *arg)
{
	struct hop	*h = arg;
	static uint8_t	 buf[2 + HOP_FRAME_MAX];
	ssize_t		 n;

	for (;;) {
		if ((n = read(h->tap, buf + 2, HOP_FRAME_MAX)) == -1) {
			if (errno == EINTR)
				continue;
			hop_die("TAP read");
		}
		buf[0] = (uint8_t)(n >> 8);
		buf[1] = (uint8_t)n;
		hop_write_all(h->sock, buf, 2 + (size_t)n, "connection write");
	}
	return NULL;
}

/* Connection -> TAP: every complete frame the read brought, one write each. */
static void *
hop_sock_to_tap(void *arg)
{
	struct hop	*h = arg;
	static uint8_t	 buf[HOP_RXBUF];
	size_t		 have = 0, off, len;
	ssize_t		 n;

	for (;;) {
		if ((n = read(h->sock, buf + have, sizeof(buf) - have)) == -1) {
			if (errno == EINTR)
				continue;
			hop_die("connection read");
		}
		if (n == 0)
			hop_fail("the peer closed the connection");
		have += (size_t)n;
		for (off = 0; have - off >= 2; off += 2 + len) {
			len = (size_t)buf[off] << 8 | buf[off + 1];
			if (have - off < 2 + len)
				break;
			/* A frame the TAP device refuses is lost, as on a wire. */
			if (write(h->tap, buf + off + 2, len) == -1 &&
			    errno != EINVAL && errno != EIO)
				hop_die("TAP write");
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	return NULL;
}

int
main(int argc, char *argv[])
{
	struct hop	 h;
	pthread_t	 t;

	if (argc != 5) {
		fprintf(stderr, "usage: hop TAPNAME listen|connect ADDR PORT\n");
		return 2;
	}
	h.tap = hop_tap_open(argv[1]);
	h.sock = hop_connect(argv[2], argv[3], argv[4]);
	if ((errno = pthread_create(&t, NULL, hop_tap_to_sock, &h)) != 0)
		hop_die("pthread_create");
	hop_sock_to_tap(&h);
	return 0;
}
