/*
 * The TAP backend: a kernel TAP device, one frame per read and write.
 *
 * Every frame crosses the device behind a 12-byte virtio-net header
 * (IFF_VNET_HDR).  With offload on, the device is also told that we take
 * TCP segmentation and checksum offload (TUNSETOFFLOAD), so that a guest
 * hands over 64 KiB super-frames with their checksums left to finish: a
 * twentieth of the frames, and of the system calls, for the same bytes.
 * Written frames carry their header as received; a plain frame gets a
 * zero header.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/if.h>
#include <linux/if_tun.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "gso.h"
#include "iface.h"

static int
tap_open(struct iface *ifc, char *err, size_t errlen)
{
	struct ifreq	 ifr;
	const char	*dev = iface_devname(ifc);
	int		 fd, hdrsz = GSO_VNET_HDR_LEN, le = 1;

	if ((fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "/dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, TUNSETIFF, &ifr) == -1) {
		snprintf(err, errlen, "%s: cannot create or attach TAP device: %s",
		    dev, errno == EBUSY ? "device busy (used by another "
		    "program, or not a TAP device)" : strerror(errno));
		close(fd);
		return -1;
	}
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdrsz) == -1) {
		snprintf(err, errlen, "%s: cannot set the offload header size: %s",
		    dev, strerror(errno));
		close(fd);
		return -1;
	}
	/* The header is little-endian whatever the host (gso.c reads it so). */
	(void)ioctl(fd, TUNSETVNETLE, &le);
	if (ifc->d->offload && ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM |
	    TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN) == -1) {
		snprintf(err, errlen, "%s: cannot enable offload: %s "
		    "(offload no turns it off)", dev, strerror(errno));
		close(fd);
		return -1;
	}
	if (iface_dev_up(dev, err, errlen) == -1) {
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
tap_write_vh(struct iface *ifc, const uint8_t *vh, const uint8_t *eth,
    size_t len)
{
	static const uint8_t	 zero[GSO_VNET_HDR_LEN];
	struct iovec		 iov[2];
	ssize_t			 n;

	/*
	 * EIO while the device is down (moved to a namespace and not yet
	 * up), EAGAIN when its queue is full: either way the frame is lost,
	 * as on a real wire, and counted by the caller.
	 */
	iov[0].iov_base = (void *)(vh != NULL ? vh : zero);
	iov[0].iov_len = GSO_VNET_HDR_LEN;
	iov[1].iov_base = (void *)eth;
	iov[1].iov_len = len;
	do {
		n = writev(ifc->fd, iov, 2);
	} while (n == -1 && errno == EINTR);
	return n == (ssize_t)(GSO_VNET_HDR_LEN + len) ? 0 : -1;
}

static int
tap_write(struct iface *ifc, const uint8_t *buf, size_t len)
{
	return tap_write_vh(ifc, NULL, buf, len);
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
	.write_vh = tap_write_vh,
	.vnet_hdr = 1,
	.close = tap_close,
};
