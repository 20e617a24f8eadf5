/* The TAP backend: a kernel TAP device, one frame per read and write. */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/if.h>
#include <linux/if_tun.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "iface.h"

/* Brings the device up in the namespace vnetd runs in. */
static int
tap_ifup(const char *dev, char *err, size_t errlen)
{
	struct ifreq	 ifr;
	int		 s;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1 ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) == -1)) {
		snprintf(err, errlen, "%s: cannot bring up: %s", dev,
		    strerror(errno));
		close(s);
		return -1;
	}
	close(s);
	return 0;
}

static int
tap_open(struct iface *ifc, char *err, size_t errlen)
{
	struct ifreq	 ifr;
	const char	*dev = iface_devname(ifc);
	int		 fd;

	if ((fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "/dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, TUNSETIFF, &ifr) == -1) {
		snprintf(err, errlen, "%s: cannot create or attach TAP device: %s",
		    dev, errno == EBUSY ? "device busy (used by another "
		    "program, or not a TAP device)" : strerror(errno));
		close(fd);
		return -1;
	}
	if (tap_ifup(dev, err, errlen) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static ssize_t
tap_read(struct iface *ifc, uint8_t *buf, size_t len)
{
	ssize_t	 n;

	do {
		n = read(ifc->fd, buf, len);
	} while (n == -1 && errno == EINTR);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	return n;
}

static int
tap_write(struct iface *ifc, const uint8_t *buf, size_t len)
{
	ssize_t	 n;

	/*
	 * EIO while the device is down (moved to a namespace and not yet
	 * up), EAGAIN when its queue is full: either way the frame is lost,
	 * as on a real wire, and counted by the caller.
	 */
	do {
		n = write(ifc->fd, buf, len);
	} while (n == -1 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

static void
tap_close(struct iface *ifc)
{
	if (ifc->fd != -1)
		close(ifc->fd);
	ifc->fd = -1;
}

const struct iface_ops tap_ops = {
	.type = "tap",
	.open = tap_open,
	.read = tap_read,
	.write = tap_write,
	.close = tap_close,
};
